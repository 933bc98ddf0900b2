//! The spread of a serving headline over workload samples: the same configuration priced on
//! other request samples (the scenario with other seeds, so other lengths and arrival times),
//! through the stage objective the study calls.
//!
//! Why: a serving result is a simulation of a finite request sample, and the sample alone moves
//! it (DeepSeek-V3 on 2 A3 nodes at 8 req/s: 95.25 tokens/s/chip at seed 22, 88.88 at seed 5).
//! A change smaller than that spread is not a gain; the report says so (`Report::with_spread`).
//! Inside one study every configuration sees the same sample (common random numbers), so the
//! ranking is not moved by the sample; the spread says how far the headline itself may move.

use crate::spec::scenario::{Scenario, Stage};
use serde::{Deserialize, Serialize};
use tunelab_search::{Config, Outcome};

/// Request samples the spread is taken over (the scenario's seed and the next four).
pub const SAMPLES: u64 = 5;

/// The headline metric of one configuration over several request samples.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub metric: String,
    pub unit: String,
    /// (seed, value; None when infeasible on that sample).
    pub samples: Vec<(u64, Option<f64>)>,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// Half the range over the mean, in percent: a change within +- this is not a gain.
    pub half_range_pct: f64,
    /// Requests per sample.
    pub requests: usize,
}

impl Spread {
    /// One line for the report and the CLI.
    pub fn describe(&self) -> String {
        let f = crate::spec::metrics::fmt4;
        let feasible = self.samples.iter().filter(|s| s.1.is_some()).count();
        format!(
            "workload spread: {} {} {} +- {:.2}% over {} request samples of {} requests (seeds {}..{}; {}..{}{}){}",
            self.metric,
            f(self.mean),
            self.unit,
            self.half_range_pct,
            self.samples.len(),
            self.requests,
            self.samples.first().map_or(0, |s| s.0),
            self.samples.last().map_or(0, |s| s.0),
            f(self.min),
            f(self.max),
            if feasible < self.samples.len() { format!("; infeasible on {} of them", self.samples.len() - feasible) } else { String::new() },
            if self.half_range_pct < 1.0 { "; under 1%" } else { "; a change within it is not a gain" }
        )
    }
}

/// True when a scenario's results depend on its request sample (a deployment served by the
/// scheduler).
pub fn applies(s: &Scenario) -> bool {
    s.stage == Stage::Deployment && !s.deployment.serving.is_static()
}

/// The spread of the study's primary metric for `config` (parameters in `names` order) over
/// `SAMPLES` request samples; None when the stage does not sample requests.
pub fn headline(s: &Scenario, names: &[String], config: &Config) -> Result<Option<Spread>, String> {
    if !applies(s) {
        return Ok(None);
    }
    let mut samples = Vec::new();
    let mut meta = None;
    for i in 0..SAMPLES {
        let mut s2 = s.clone();
        s2.seed = s.seed.wrapping_add(i);
        let mut st = crate::stages::setup(&s2)?;
        if st.space.names() != names {
            return Err("workload spread: the configuration's parameters are not the stage's".into());
        }
        let m = st.metrics.first().cloned().ok_or("workload spread: the stage reports no metric")?;
        meta.get_or_insert((m.name, m.unit));
        let v = match st.space.check(config) {
            Err(e) => return Err(format!("workload spread: {e}")),
            Ok(()) => match st.objective.evaluate(config) {
                Outcome::Ok(v) => v.first().copied(),
                _ => None,
            },
        };
        samples.push((s2.seed, v));
    }
    let (metric, unit) = meta.unwrap_or_default();
    let vals: Vec<f64> = samples.iter().filter_map(|s| s.1).collect();
    if vals.is_empty() {
        return Ok(Some(Spread { metric, unit, samples, mean: f64::NAN, min: f64::NAN, max: f64::NAN, half_range_pct: f64::NAN, requests: s.deployment.serving.requests }));
    }
    let mean = vals.iter().sum::<f64>() / vals.len() as f64;
    let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let half_range_pct = if mean.abs() > 0.0 { (max - min) / 2.0 / mean.abs() * 100.0 } else { 0.0 };
    let requests = if s.deployment.serving.arrival == "trace" { s.deployment.serving.trace.len() } else { s.deployment.serving.requests };
    Ok(Some(Spread { metric, unit, samples, mean, min, max, half_range_pct, requests }))
}

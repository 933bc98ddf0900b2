//! The deployment objective served at a given Poisson request rate (split from `mod.rs`, no
//! change): what the runtime stage replays a changing load with.

use super::{knobs_named, setup_raw, DeploymentObjective};
use crate::spec::scenario::Scenario;
use crate::stages::scheduler::{requests, ServingStats};
use std::collections::HashMap;
use tunelab_search::Config;

/// The deployment objective serving configurations at a given Poisson request rate (what the
/// runtime stage replays a changing load with). The requests are drawn once at unit rate, so
/// every rate sees the same lengths and the same arrival pattern, stretched.
pub struct Server {
    obj: DeploymentObjective,
    unit_arrivals: Vec<f64>,
    cache: HashMap<(Config, u64), Result<ServingStats, String>>,
}

impl Server {
    pub fn new(s: &Scenario) -> Result<Server, String> {
        let mut obj = setup_raw(s)?;
        obj.spec.arrival = "poisson".into();
        obj.spec.request_rate = Some(1.0);
        obj.spec.concurrency = None;
        let extra = obj.model.media_tokens();
        obj.reqs = requests(&obj.spec, obj.input, obj.output, extra, s.seed);
        let unit_arrivals = obj.reqs.iter().map(|r| r.arrival_s).collect();
        Ok(Server { obj, unit_arrivals, cache: HashMap::new() })
    }

    /// Serves configuration `c` (in the stage's parameter order) at `rate` requests/s; an
    /// infeasible configuration is an error with the reason.
    pub fn at_rate(&mut self, c: &Config, rate: f64) -> Result<ServingStats, String> {
        let key = (c.clone(), rate.to_bits());
        if let Some(r) = self.cache.get(&key) {
            return r.clone();
        }
        let r = self.run(c, rate);
        self.cache.insert(key, r.clone());
        r
    }

    fn run(&mut self, c: &Config, rate: f64) -> Result<ServingStats, String> {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(format!("request rate {rate} must be positive"));
        }
        for (r, t) in self.obj.reqs.iter_mut().zip(&self.unit_arrivals) {
            r.arrival_s = t / rate;
        }
        let k = knobs_named(&self.obj.names, c)?;
        self.obj.serve_knobs(&k)?.map(|s| s.stats)
    }
}

//! What the over-optimisation guards (`analyses::guards`) need from the diffusion stage, priced
//! by the stage's own pricer (the function the study calls), so a guard's figures are the ones
//! `tunelab eval` prints for the same configuration:
//! - each knob a configuration sets that changes the output (fewer steps, W8A8, token merging,
//!   step caching), with the guard that covers it: W8A8 the protected layers and the delta
//!   check; the others the delta check (validation mode: compare outputs before and after);
//! - the protected layers: the configuration quantised (W8A8) with the protected layers kept in
//!   16-bit and with every layer quantised, both end to end.

use super::price::Knobs;
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};
use tunelab_search::Config;

/// One output-changing knob of a configuration and the guard that covers it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputKnob {
    /// The stage parameter ("steps", "precision", "tome", "step_cache").
    pub knob: String,
    /// What the configuration sets, in words.
    pub setting: String,
    /// "protected layers + delta check" or "delta check".
    pub guard: String,
    /// Whether the delta check's data-type estimate (`rel_error`) sees this change at all.
    pub in_rel_error: bool,
}

/// The guard name of a quantisation knob, and of a knob that changes what is computed.
pub const GUARD_QUANT: &str = "protected layers + delta check";
pub const GUARD_DELTA: &str = "delta check";

/// The output-changing knobs `k` sets against the exact pipeline of `baseline_steps` steps.
pub fn output_knobs(k: &Knobs, baseline_steps: u64) -> Vec<OutputKnob> {
    let mut v = Vec::new();
    let mut add = |knob: &str, setting: String, guard: &str, in_rel: bool| v.push(OutputKnob { knob: knob.into(), setting, guard: guard.into(), in_rel_error: in_rel });
    if k.steps < baseline_steps {
        add("steps", format!("{} steps instead of {baseline_steps}", k.steps), GUARD_DELTA, false);
    }
    if k.int8 {
        add("precision", "W8A8 quantisation (protected layers kept in 16-bit)".into(), GUARD_QUANT, true);
    }
    if k.tome > 0.0 {
        add("tome", format!("token merging {}", k.tome), GUARD_DELTA, false);
    }
    if k.step_cache > 1.0 {
        add("step_cache", format!("step caching ratio {}", k.step_cache), GUARD_DELTA, false);
    }
    v
}

/// The protected-layers figures of one configuration, quantised.
#[derive(Clone, Debug, PartialEq)]
pub struct Protection {
    /// Operator name prefixes kept in 16-bit.
    pub patterns: Vec<String>,
    /// Denoiser operators the patterns matched.
    pub protected_ops: Vec<String>,
    /// Mean denoising step (the stage's `step_ms`) and the whole call (`latency_ms`), ms.
    pub step_ms_all: f64,
    pub step_ms_protected: f64,
    pub latency_ms_all: f64,
    pub latency_ms_protected: f64,
    /// The stage's `rel_error` either way.
    pub rel_error_all: f64,
    pub rel_error_protected: f64,
    /// True when the configuration itself is 16-bit and W8A8 was priced to show the cost.
    pub quantised_for_the_check: bool,
}

/// Prices `config` (parameter `names`) at W8A8 with the layers matching `patterns` (None: the
/// stage's own list, `workload.protected_layers`) kept in 16-bit, and with none kept.
pub fn protection(s: &Scenario, names: &[String], config: &Config, patterns: Option<&[String]>) -> Result<Protection, String> {
    let mut k = super::decode(names, config)?;
    let quantised_for_the_check = !k.int8;
    k.int8 = true;
    let mut with = super::pricer(s)?;
    if let Some(p) = patterns {
        with.c.protected = p.iter().filter(|x| !x.trim().is_empty()).map(|x| x.trim().to_string()).collect();
    }
    let patterns = with.c.protected.clone();
    let protected_ops = with.protected_ops(&k)?;
    let p = with.price(&k)?;
    let mut without = super::pricer(s)?;
    without.c.protected.clear();
    let a = without.price(&k)?;
    Ok(Protection {
        patterns,
        protected_ops,
        step_ms_all: a.step_ms(),
        step_ms_protected: p.step_ms(),
        latency_ms_all: a.total_ms,
        latency_ms_protected: p.total_ms,
        rel_error_all: a.rel_error,
        rel_error_protected: p.rel_error,
        quantised_for_the_check,
    })
}

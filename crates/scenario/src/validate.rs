//! Validation of a parsed Scenario, and locating the field at fault when parsing fails.
//!
//! Why separate from the type: the checks are long and change often; the type is the contract
//! other modules read.

use crate::scenario::{clip, Scenario, MAX_BUDGET, MAX_STRATEGIES};
use serde_json::Value as Json;

impl Scenario {
    /// Checks values serde cannot: ranges, signs, names. Messages name the field.
    pub fn validate(&self) -> Result<(), String> {
        let w = &self.workload;
        for (f, v) in [("input_len", w.input_len), ("output_len", w.output_len), ("micro_batch", w.micro_batch), ("seq_len", w.seq_len), ("global_batch", w.global_batch)] {
            positive(&format!("workload.{f}"), v, 10_000_000)?;
        }
        if w.batch != -1 {
            positive("workload.batch", w.batch, 1_000_000).map_err(|e| format!("{e} (or -1 for dynamic batch)"))?;
        }
        if w.batch == -1 && w.dynamic_batches.is_empty() {
            return Err("workload.dynamic_batches: a dynamic batch (-1) needs at least one batch size to tune for".into());
        }
        for b in &w.dynamic_batches {
            positive("workload.dynamic_batches", *b, 1_000_000)?;
        }
        let d = &self.deployment;
        for b in &d.batches {
            positive("deployment.batches", *b, 1_000_000)?;
        }
        for t in &d.tensor_parallel {
            positive("deployment.tensor_parallel", *t, 1024)?;
        }
        for f in &d.kv_cache_fractions {
            if !(f.is_finite() && *f > 0.0 && *f <= 1.0) {
                return Err(format!("deployment.kv_cache_fractions: each fraction must be in (0, 1], got {f}"));
            }
        }
        let i = self.operator.search_intensity;
        if !(i.is_finite() && (0.0..=1.0).contains(&i)) {
            return Err(format!("operator.search_intensity: must be between 0 and 1, got {i}"));
        }
        if !["prefill", "decode", "both"].contains(&self.operator.phase.as_str()) {
            return Err(format!("operator.phase: expected prefill, decode or both, got '{}'", clip(&self.operator.phase)));
        }
        if self.budget == 0 || self.budget > MAX_BUDGET {
            return Err(format!("budget: must be between 1 and {MAX_BUDGET} evaluations, got {}", self.budget));
        }
        if self.patience == Some(0) {
            return Err("patience: must be at least 1 evaluation (omit it to never stop early)".into());
        }
        if self.compare.len() + 1 > MAX_STRATEGIES {
            return Err(format!("compare: at most {} extra strategies, got {}", MAX_STRATEGIES - 1, self.compare.len()));
        }
        for (k, s) in self.strategies().iter().enumerate() {
            let field = if k == 0 { "strategy.name".to_string() } else { format!("compare[{}].name", k - 1) };
            tunelab_search::strategies::by_name(&s.name, &s.options).map_err(|e| format!("{field}: {}", clip_msg(&e)))?;
        }
        for o in &self.objectives {
            if o.metric.trim().is_empty() {
                return Err("objectives: every objective needs a 'metric' name".into());
            }
            if !o.priority.is_finite() {
                return Err(format!("objectives: priority of '{}' must be a finite number", clip(&o.metric)));
            }
            if let Some(d) = &o.direction {
                if d != "minimize" && d != "maximize" {
                    return Err(format!("objectives: direction of '{}' must be minimize or maximize, got '{}'", clip(&o.metric), clip(d)));
                }
            }
        }
        let c = &self.constraints;
        for (f, v) in [("max_memory_gib", c.max_memory_gib), ("max_ttft_ms", c.max_ttft_ms), ("max_tpot_ms", c.max_tpot_ms), ("max_rel_error", c.max_rel_error), ("min_tokens_per_s", c.min_tokens_per_s), ("max_power_w", c.max_power_w)] {
            if let Some(x) = v {
                if !(x.is_finite() && x > 0.0) {
                    return Err(format!("constraints.{f}: must be a positive number, got {x}"));
                }
            }
        }
        for (op, x) in &c.op_memory_mib {
            if !(x.is_finite() && *x > 0.0) {
                return Err(format!("constraints.op_memory_mib['{}']: must be a positive number, got {x}", clip(op)));
            }
        }
        Ok(())
    }
}

fn positive(field: &str, v: i64, max: i64) -> Result<(), String> {
    if v <= 0 {
        return Err(format!("{field}: must be a positive integer, got {v}"));
    }
    if v > max {
        return Err(format!("{field}: {v} is absurdly large (at most {max})"));
    }
    Ok(())
}

fn clip_msg(s: &str) -> String {
    s.chars().take(300).collect()
}

/// Deserializes, and on failure finds the innermost object field that fails on its own, so the
/// message says e.g. "field 'workload.batch': invalid type: string, expected i64".
pub(crate) fn deserialize_blaming(v: &Json) -> Result<Scenario, String> {
    match serde_json::from_value::<Scenario>(v.clone()) {
        Ok(s) => Ok(s),
        Err(e) => {
            let path = blame(v, &mut Vec::new());
            let msg = e.to_string();
            Err(match path {
                Some(p) => format!("field '{p}': {msg}"),
                None => format!("the scenario does not parse: {msg}"),
            })
        }
    }
}

/// Path of the deepest field that alone makes the scenario fail, trying `{a: {b: value}}`.
fn blame(full: &Json, prefix: &mut Vec<String>) -> Option<String> {
    let mut node = full;
    for k in prefix.iter() {
        node = node.get(k)?;
    }
    let obj = node.as_object()?;
    for (k, sub) in obj {
        let mut probe = sub.clone();
        for key in std::iter::once(k).chain(prefix.iter().rev()) {
            let mut m = serde_json::Map::new();
            m.insert(key.clone(), probe);
            probe = Json::Object(m);
        }
        if serde_json::from_value::<Scenario>(probe).is_err() {
            prefix.push(k.clone());
            let deeper = if sub.is_object() && prefix.len() < 4 { blame(full, prefix) } else { None };
            return Some(deeper.unwrap_or_else(|| prefix.join(".")));
        }
    }
    None
}

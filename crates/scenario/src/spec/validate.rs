//! Validation of a parsed Scenario, and locating the field at fault when parsing fails.
//!
//! Why separate from the type: the checks are long and change often; the type is the contract
//! other modules read.

use crate::spec::scenario::{clip, Scenario, MAX_BUDGET, MAX_STRATEGIES};
use serde_json::Value as Json;

impl Scenario {
    /// Checks values serde cannot: ranges, signs, names. Messages name the field.
    pub fn validate(&self) -> Result<(), String> {
        self.check_free_form()?;
        crate::spec::options::landscape::validate(self)?;
        if let Some(d) = &self.diffusion {
            d.validate()?;
        }
        let w = &self.workload;
        // One limit per quantity, the simulator's own (a sequence the workload would refuse
        // must be refused here, not reported later as "no feasible configuration").
        use tunelab_sim::workload::{MAX_BATCH, MAX_SEQ};
        let (seq, mb) = (MAX_SEQ as i64, MAX_BATCH as i64);
        for (f, v, hi) in [("input_len", w.input_len, seq), ("output_len", w.output_len, seq), ("micro_batch", w.micro_batch, mb), ("seq_len", w.seq_len, seq), ("global_batch", w.global_batch, 10_000_000)] {
            positive(&format!("workload.{f}"), v, hi)?;
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
        self.operator.timing()?;
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
            tunelab_search::strategies::check(&s.name, &s.options).map_err(|e| format!("{field}: {}", clip_msg(&e)))?;
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
pub(crate) fn deserialize_blaming(v: &Json) -> Result<(Scenario, crate::spec::strict::Report), String> {
    check_free_form_raw(v)?;
    // Deserialise from the parsed tree by reference: the tree is not copied (parse once). The
    // strict reader records every key no field reads (`spec::strict`).
    match crate::spec::strict::from_value::<Scenario>(v, RETIRED_SCENARIO_KEYS) {
        Ok(s) => Ok(s),
        Err(e) => {
            let path = blame(v, &mut Vec::new());
            let msg = crate::spec::strict::clip_error(&e.to_string());
            Err(match path {
                Some(p) => format!("field '{p}': {msg}"),
                None => format!("the scenario does not parse: {msg}"),
            })
        }
    }
}

/// Scenario keys removed on purpose, with what replaced them: (a key known beside it, the old
/// key, the note). A link made before the change keeps opening; the user is told where the
/// setting went. The scenario format has removed no key so far (version 1; its history was read
/// for this table); a key retired later goes here, never silently.
pub const RETIRED_SCENARIO_KEYS: crate::spec::strict::Retired = &[];

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
        // Through the strict reader, as deserialize_blaming does: one copy of the scenario
        // decoder in a module (the first-load page's size).
        if crate::spec::strict::from_value::<Scenario>(&probe, RETIRED_SCENARIO_KEYS).is_err() {
            prefix.push(k.clone());
            let deeper = if sub.is_object() && prefix.len() < 4 { blame(full, prefix) } else { None };
            return Some(deeper.unwrap_or_else(|| prefix.join(".")));
        }
    }
    None
}

/// Deepest nesting accepted in a free-form JSON field (a Hugging Face config or an operator graph
/// is 2 to 5 levels deep). Pretty-printing indents every level, so depth multiplies size.
pub const MAX_FREE_DEPTH: usize = 24;
/// Largest pretty-printed size of the app's free-form view state (`view`).
pub const MAX_VIEW_BYTES: usize = 64 * 1024;
/// Largest pretty-printed size of stage and strategy option objects and of space overrides.
pub const MAX_OPTIONS_BYTES: usize = 256 * 1024;
/// Largest pretty-printed size of an inline device profile.
pub const MAX_DEVICE_BYTES: usize = 256 * 1024;
/// Largest pretty-printed size of an inline model (Hugging Face config or operator graph).
pub const MAX_MODEL_BYTES: usize = 4 * 1024 * 1024;

/// Issue 13 #5: a short link could inflate, through deep nesting in a free-form field, into
/// hundreds of MB once re-serialised (the app shows the scenario as pretty JSON, the CLI prints
/// it). Every free-form field is bounded by depth and by the size its pretty form WOULD have,
/// computed without building it; the message names the field.
pub fn check_free_form_field(field: &str, v: &Json, max_bytes: usize) -> Result<(), String> {
    let mut budget = max_bytes;
    measure(v, 0, &mut budget).map_err(|over_depth| {
        if over_depth {
            format!("field '{field}': nested more than {MAX_FREE_DEPTH} levels deep; refused")
        } else {
            format!("field '{field}': larger than {} KiB as JSON; refused", max_bytes / 1024)
        }
    })
}

/// Subtracts the pretty-printed size of `v` (at nesting `depth`) from `left`; Err(true) when too
/// deep, Err(false) when the size runs out. Stops at the first excess (bounded work).
fn measure(v: &Json, depth: usize, left: &mut usize) -> Result<(), bool> {
    if depth > MAX_FREE_DEPTH {
        return Err(true);
    }
    let mut take = |n: usize| -> Result<(), bool> {
        if n > *left {
            return Err(false);
        }
        *left -= n;
        Ok(())
    };
    // Newline and indentation before the value, as serde_json's pretty printer writes it.
    take(1 + 2 * depth)?;
    match v {
        Json::Null | Json::Bool(_) => take(5),
        Json::Number(_) => take(24),
        Json::String(s) => take(string_len(s)),
        Json::Array(a) => {
            take(2)?;
            for x in a {
                measure(x, depth + 1, left)?;
            }
            Ok(())
        }
        Json::Object(m) => {
            take(2)?;
            for (k, x) in m {
                let n = string_len(k) + 2;
                if n > *left {
                    return Err(false);
                }
                *left -= n;
                measure(x, depth + 1, left)?;
            }
            Ok(())
        }
    }
}

/// Length of a JSON string literal (quotes and escapes included).
fn string_len(s: &str) -> usize {
    2 + s.bytes().map(|b| match b {
        b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
        0..=0x1f => 6,
        _ => 1,
    }).sum::<usize>()
}

/// Bounds every free-form field of a raw scenario object (before it is deserialised, so an
/// oversized field is never copied).
fn check_free_form_raw(v: &Json) -> Result<(), String> {
    let Some(o) = v.as_object() else { return Ok(()) };
    let plain = |k: &str, max: usize| o.get(k).map_or(Ok(()), |x| check_free_form_field(k, x, max));
    plain("view", MAX_VIEW_BYTES)?;
    plain("model", MAX_MODEL_BYTES)?;
    plain("device", MAX_DEVICE_BYTES)?;
    plain("training", MAX_OPTIONS_BYTES)?;
    plain("runtime", MAX_OPTIONS_BYTES)?;
    plain("space", MAX_OPTIONS_BYTES)?;
    plain("strategy", MAX_OPTIONS_BYTES)?;
    plain("compare", MAX_OPTIONS_BYTES)?;
    // A serving trace is bounded by its own count (`deployment.serving.trace`: MAX_REQUESTS
    // arrivals, one number each), not by the options' size: 100,000 arrivals print to about
    // 3 MB, and the options' 256 KiB stopped near 8,500 with a message naming `deployment`.
    match o.get("deployment").and_then(|d| d.get("serving")).and_then(|s| s.get("trace")) {
        Some(trace) => {
            let max = crate::spec::options::serving::MAX_REQUESTS;
            match trace.as_array() {
                Some(a) if a.len() > max => return Err(format!("field 'deployment.serving.trace': {} arrivals; at most {max}", a.len())),
                Some(a) if a.iter().any(|x| !x.is_number()) => return Err("field 'deployment.serving.trace': arrival times are numbers (seconds)".into()),
                _ => {}
            }
            let mut d = o.get("deployment").cloned().unwrap_or(Json::Null);
            if let Some(s) = d.get_mut("serving").and_then(Json::as_object_mut) {
                s.remove("trace");
            }
            check_free_form_field("deployment", &d, MAX_OPTIONS_BYTES)?;
        }
        None => plain("deployment", MAX_OPTIONS_BYTES)?,
    }
    plain("operator", MAX_OPTIONS_BYTES)?;
    plain("constraints", MAX_OPTIONS_BYTES)?;
    plain("objectives", MAX_OPTIONS_BYTES)?;
    plain("landscape", MAX_OPTIONS_BYTES)?;
    Ok(())
}

impl Scenario {
    /// The same bounds on a built scenario (the operator auto-tune format and scenarios made in
    /// code do not pass through `check_free_form_raw`).
    fn check_free_form(&self) -> Result<(), String> {
        use crate::spec::scenario::{DeviceRef, ModelRef};
        check_free_form_field("view", &self.view, MAX_VIEW_BYTES)?;
        self.training.validate()?;
        self.runtime.validate()?;
        self.deployment.serving.validate()?;
        if let Some(c) = &self.deployment.cluster {
            c.validate()?;
        }
        for (k, s) in self.strategies().iter().enumerate() {
            let field = if k == 0 { "strategy.options".to_string() } else { format!("compare[{}].options", k - 1) };
            check_free_form_field(&field, &s.options, MAX_OPTIONS_BYTES)?;
        }
        for (name, o) in &self.space {
            for c in o.choices.iter().flatten().chain(o.fixed.iter()) {
                check_free_form_field(&format!("space.{}", clip(name)), c, MAX_OPTIONS_BYTES)?;
            }
        }
        match &self.model {
            ModelRef::Inline(j) => check_free_form_field("model", j, MAX_MODEL_BYTES)?,
            ModelRef::Id(text) if text.len() > MAX_MODEL_BYTES => {
                return Err(format!("field 'model': larger than {} KiB; refused", MAX_MODEL_BYTES / 1024));
            }
            ModelRef::Id(_) => {}
        }
        if let DeviceRef::Inline(j) = &self.device {
            check_free_form_field("device", j, MAX_DEVICE_BYTES)?;
        }
        Ok(())
    }
}

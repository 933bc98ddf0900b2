//! The operator schedule auto-tune configuration of MISSION.md, mapped into a Scenario.
//!
//! Why a mapping rather than a second engine: the auto-tune tool is the operator stage with a
//! different vocabulary, so both formats run through one pipeline and one report. Recognised:
//!
//! ```json
//! { "auto_tune_mode": "operator", "task_type": "inference", "model": "qwen2.5-7b",
//!   "device": "910B2", "input_shape": [-1, 512], "num_runs": 300, "seed": 1,
//!   "optimization_options": { "algorithm": "genetic", "tiling": true, "operator_fusion": true,
//!       "loop_unroll": true, "memory_reuse": true, "early_stop": true },
//!   "mixed_precision": { "enabled": true, "op_list": ["attn.qkv"] },
//!   "precision_constraints": { "max_relative_error": 0.01 },
//!   "memory_constraints": { "max_memory_gb": 32, "per_operator_mb": { "mlp.down": 64 } },
//!   "local_search": { "op_names": ["mlp.down"], "search_intensity": 0.5 } }
//! ```
//! `input_shape` is [batch, sequence] (a leading -1 is a dynamic batch); `search_intensity` is a
//! number in 0..=1 or "low" / "medium" / "high" (0.25 / 0.5 / 1).

use crate::spec::scenario::{clip, DeviceRef, ModelRef, Scenario, Stage, StrategySpec};
use serde_json::Value as Json;

/// True when the object looks like an auto-tune configuration rather than a scenario.
pub fn is_autotune_config(v: &Json) -> bool {
    v.get("auto_tune_mode").is_some()
}

/// Maps an auto-tune configuration to a scenario (validation happens in `Scenario::from_value`).
pub fn to_scenario(v: &Json) -> Result<Scenario, String> {
    let mut s = Scenario { stage: Stage::Operator, ..Scenario::default() };
    s.name = "operator auto-tune".into();
    let mode = v.get("auto_tune_mode").and_then(Json::as_str).ok_or("auto_tune_mode: expected a string such as \"operator\"")?;
    s.stage = match mode.to_ascii_lowercase().as_str() {
        "operator" | "op" | "kernel" | "schedule" => Stage::Operator,
        "deployment" | "inference" => Stage::Deployment,
        "training" => Stage::Training,
        "runtime" => Stage::Runtime,
        other => return Err(format!("auto_tune_mode: expected operator, deployment, training or runtime, got '{}'", clip(other))),
    };
    if let Some(t) = v.get("task_type") {
        let t = t.as_str().ok_or("task_type: expected a string (inference or training)")?;
        match t.to_ascii_lowercase().as_str() {
            "inference" | "prefill" => s.operator.phase = "prefill".into(),
            "decode" => s.operator.phase = "decode".into(),
            "training" if s.stage == Stage::Operator => s.operator.phase = "prefill".into(),
            "training" => {}
            other => return Err(format!("task_type: expected inference, decode or training, got '{}'", clip(other))),
        }
    }
    match v.get("model") {
        None => {}
        Some(Json::String(m)) => s.model = ModelRef::Id(m.clone()),
        Some(m @ Json::Object(_)) => s.model = ModelRef::Inline(m.clone()),
        Some(_) => return Err("model: expected a bundled model id or a model description object".into()),
    }
    match v.get("device") {
        None => {}
        Some(Json::String(d)) => s.device = DeviceRef::Name(d.clone()),
        Some(d @ Json::Object(_)) => s.device = DeviceRef::Inline(d.clone()),
        Some(_) => return Err("device: expected a chip name or a device profile object".into()),
    }
    if let Some(shape) = v.get("input_shape") {
        let dims = shape.as_array().ok_or("input_shape: expected a list such as [-1, 512]")?;
        let ints: Vec<i64> = dims.iter().map(|d| d.as_i64().ok_or_else(|| format!("input_shape: every dimension must be an integer, got {d}"))).collect::<Result<_, _>>()?;
        match ints.as_slice() {
            [b, l, ..] => {
                s.workload.batch = *b;
                s.workload.input_len = *l;
                s.workload.seq_len = *l;
            }
            [b] => s.workload.batch = *b,
            [] => return Err("input_shape: expected [batch, sequence length]".into()),
        }
        if s.workload.batch < -1 || s.workload.batch == 0 {
            return Err(format!("input_shape: the batch dimension must be positive or -1 (dynamic), got {}", s.workload.batch));
        }
    }
    if let Some(n) = v.get("num_runs") {
        let n = n.as_u64().filter(|n| *n > 0).ok_or_else(|| format!("num_runs: expected a positive integer, got {n}"))?;
        s.budget = n.min(usize::MAX as u64) as usize;
    }
    if let Some(seed) = v.get("seed") {
        s.seed = seed.as_u64().ok_or_else(|| format!("seed: expected a non-negative integer, got {seed}"))?;
    }
    s.strategy = StrategySpec { name: "genetic".into(), options: Json::Object(Default::default()) };
    if let Some(o) = v.get("optimization_options") {
        let o = o.as_object().ok_or("optimization_options: expected an object")?;
        let flag = |k: &str, d: bool| -> Result<bool, String> {
            match o.get(k) {
                None => Ok(d),
                Some(b) => b.as_bool().ok_or_else(|| format!("optimization_options.{k}: expected true or false")),
            }
        };
        s.operator.tiling = flag("tiling", true)?;
        s.operator.fusion = flag("operator_fusion", true)?;
        s.operator.epilogue_fusion = s.operator.fusion;
        s.operator.loop_unroll = flag("loop_unroll", true)?;
        s.operator.memory_reuse = flag("memory_reuse", true)?;
        s.early_stop = flag("early_stop", true)?;
        if let Some(a) = o.get("algorithm").or_else(|| o.get("strategy")) {
            let a = a.as_str().ok_or("optimization_options.algorithm: expected a strategy name")?;
            s.strategy.name = match a.to_ascii_lowercase().as_str() {
                "ga" | "genetic_algorithm" => "genetic".into(),
                "reinforcement_learning" | "reinforce" => "rl".into(),
                other => other.to_string(),
            };
        }
    } else {
        s.early_stop = true;
    }
    if let Some(mp) = v.get("mixed_precision") {
        let enabled = mp.get("enabled").and_then(Json::as_bool).unwrap_or(true);
        if enabled {
            s.operator.mixed_precision_ops = string_list(mp.get("op_list"), "mixed_precision.op_list")?;
        }
    }
    if let Some(pc) = v.get("precision_constraints") {
        if let Some(e) = pc.get("max_relative_error").or_else(|| pc.get("max_rel_error")) {
            s.constraints.max_rel_error = Some(e.as_f64().ok_or("precision_constraints.max_relative_error: expected a number")?);
        }
    }
    if let Some(mc) = v.get("memory_constraints") {
        if let Some(g) = mc.get("max_memory_gb") {
            s.constraints.max_memory_gib = Some(g.as_f64().ok_or("memory_constraints.max_memory_gb: expected a number")?);
        }
        if let Some(m) = mc.get("max_memory_mb") {
            s.constraints.max_memory_gib = Some(m.as_f64().ok_or("memory_constraints.max_memory_mb: expected a number")? / 1024.0);
        }
        if let Some(per) = mc.get("per_operator_mb") {
            let per = per.as_object().ok_or("memory_constraints.per_operator_mb: expected an object of operator name -> MiB")?;
            for (k, x) in per {
                let x = x.as_f64().ok_or_else(|| format!("memory_constraints.per_operator_mb['{}']: expected a number", clip(k)))?;
                s.constraints.op_memory_mib.insert(k.clone(), x);
            }
        }
    }
    if let Some(ls) = v.get("local_search") {
        s.operator.local_search_ops = string_list(ls.get("op_names"), "local_search.op_names")?;
        s.operator.search_intensity = match ls.get("search_intensity") {
            None => 0.5,
            Some(Json::String(w)) => match w.to_ascii_lowercase().as_str() {
                "low" => 0.25,
                "medium" => 0.5,
                "high" => 1.0,
                other => return Err(format!("local_search.search_intensity: expected low, medium, high or 0..1, got '{}'", clip(other))),
            },
            Some(x) => x.as_f64().ok_or("local_search.search_intensity: expected a number between 0 and 1")?,
        };
    }
    Ok(s)
}

fn string_list(v: Option<&Json>, field: &str) -> Result<Vec<String>, String> {
    match v {
        None => Ok(Vec::new()),
        Some(Json::Array(a)) => a.iter().map(|x| x.as_str().map(str::to_string).ok_or_else(|| format!("{field}: every entry must be a string"))).collect(),
        Some(_) => Err(format!("{field}: expected a list of operator names")),
    }
}

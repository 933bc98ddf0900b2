//! One configuration of the deployment stage, decoded: the stage's own parameters in `ORDER`
//! and the cluster's by name (`knobs_named`).

use crate::spec::scenario::clip;
use tunelab_search::{Config, Value};
use tunelab_sim::memory::MemoryStrategy;
use tunelab_sim::Precision;

pub(super) fn memory_strategy(m: &str) -> Result<MemoryStrategy, String> {
    match m {
        "static" => Ok(MemoryStrategy::Static),
        "dynamic_pool" | "dynamic" => Ok(MemoryStrategy::DynamicPool),
        "predictive" => Ok(MemoryStrategy::Predictive),
        other => Err(format!("deployment.memory_strategies: expected static, dynamic_pool or predictive, got '{}'", clip(other))),
    }
}

/// One decoded configuration.
pub(super) struct Knobs {
    pub(super) expert_parallel: bool,
    pub(super) batch: u64,
    pub(super) precision: Precision,
    pub(super) tp: u64,
    pub(super) kv_fraction: f64,
    pub(super) memory: MemoryStrategy,
    pub(super) graph_launch: bool,
    pub(super) max_tokens: u64,
    pub(super) chunked: bool,
    /// The cluster's knobs (dp, redundant experts, disaggregation; defaults without one).
    pub(super) scale: crate::stages::scale::ScaleKnobs,
    /// Draft tokens per verify step (0: speculative decoding off).
    pub(super) spec_k: u64,
}

/// Decodes a configuration in `ORDER` (see `reorder`).
fn knobs(c: &Config) -> Result<Knobs, String> {
    let g = |i: usize| c.0.get(i).ok_or_else(|| "configuration is missing a value".to_string());
    let batch = g(0)?.as_i64().filter(|b| *b > 0).ok_or("batch must be a positive integer")? as u64;
    let precision = Precision::parse(g(1)?.as_str().unwrap_or(""))?;
    let tp = g(2)?.as_i64().filter(|t| *t > 0).ok_or("tp must be a positive integer")? as u64;
    let kv_fraction = g(3)?.as_f64().filter(|f| *f > 0.0 && *f <= 1.0).ok_or("kv_cache_fraction must be in (0, 1]")?;
    let memory = memory_strategy(g(4)?.as_str().unwrap_or(""))?;
    let graph_launch = g(5)?.as_str() == Some("graph");
    let max_tokens = match c.0.get(6) {
        Some(v) => v.as_i64().filter(|b| *b > 0).ok_or("max_num_batched_tokens must be a positive integer")? as u64,
        None => 8192,
    };
    let chunked = c.0.get(7).is_none_or(|v| v.as_str() != Some("off"));
    let expert_parallel = match c.0.get(8).and_then(|v| v.as_str()) {
        None | Some("off") => false,
        Some("on") => true,
        Some(o) => return Err(format!("expert_parallel: expected off or on, got '{}'", clip(o))),
    };
    let spec_k = match c.0.get(9) {
        None => 0,
        Some(v) => v.as_i64().filter(|k| *k >= 0).ok_or("num_speculative_tokens must be a non-negative integer")? as u64,
    };
    Ok(Knobs { batch, precision, tp, kv_fraction, memory, graph_launch, max_tokens, chunked, expert_parallel, scale: Default::default(), spec_k })
}

/// Decodes a configuration given in the stage's parameter order `names`.
pub(super) fn knobs_named(names: &[String], c: &Config) -> Result<Knobs, String> {
    let mut k = knobs(&reorder(names, c))?;
    let get = |n: &str| names.iter().position(|x| x == n).and_then(|i| c.0.get(i));
    let int = |n: &str, d: u64| -> Result<u64, String> {
        match get(n) {
            None => Ok(d),
            Some(v) => v.as_i64().filter(|x| *x >= 0).map(|x| x as u64).ok_or_else(|| format!("{n} must be a whole number >= 0")),
        }
    };
    k.scale.dp = int("dp", 1)?.max(1);
    k.scale.redundant = int("redundant_experts", 0)?;
    k.scale.prefill_tp = int("prefill_tp", k.tp)?.max(1);
    k.scale.prefill_pp = int("prefill_pp", 1)?.max(1);
    k.scale.prefill_cp = int("prefill_cp", 1)?.max(1);
    k.scale.decode_cp = int("decode_cp", 1)?.max(1);
    k.scale.pp = int("pp", 1)?.max(1);
    k.scale.lmhead_tp = int("lmhead_tp", 1)?.max(1);
    k.scale.embed_tp = int("embedding_tp", 1)?.max(1);
    k.scale.prefill_dcp = int("prefill_dcp", 1)?.max(1);
    k.scale.dynamic_chunks = match get("prefill_chunking").and_then(|v| v.as_str()) {
        None | Some("static") => false,
        Some("dynamic") => true,
        Some(o) => return Err(format!("prefill_chunking: expected dynamic or static, got '{}'", clip(o))),
    };
    if let Some(v) = get("pd") {
        k.scale.pd = crate::spec::cluster::parse_layout(v.as_str().unwrap_or(""))?;
    }
    Ok(k)
}

/// Every parameter the stage knows, in the order `knobs` decodes.
pub(super) const ORDER: [&str; 10] = ["batch", "precision", "tp", "kv_cache_fraction", "memory_strategy", "launch", "max_num_batched_tokens", "chunked_prefill", "expert_parallel", "num_speculative_tokens"];

/// A configuration given by parameter name, in `ORDER`; names not given take the defaults.
fn reorder(names: &[String], c: &Config) -> Config {
    let get = |n: &str| names.iter().position(|x| x == n).and_then(|i| c.0.get(i).cloned());
    let defaults = [Value::Int(8), Value::Str("fp16".into()), Value::Int(1), Value::Float(0.9), Value::Str("dynamic_pool".into()), Value::Str("graph".into()), Value::Int(8192), Value::Str("on".into()), Value::Str("off".into()), Value::Int(0)];
    Config(ORDER.iter().zip(defaults).map(|(n, d)| get(n).unwrap_or(d)).collect())
}

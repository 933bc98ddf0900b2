//! The training space: its parameters (parallel degrees, micro-batch, recomputation, sharding,
//! sequence parallelism, precision), their domain checks after the scenario's overrides, and the
//! decoding of a configuration into a `TrainPoint` with the graph options it is priced with.

use crate::spec::options::training::{TrainingOptions, MAX_TRAIN_LEVELS, ON_OFF, PRECISIONS, RECOMPUTE, SHARDING};
use super::TrainPoint;
use tunelab_search::{Config, Domain, Param, Value};
use tunelab_sim::model::ModelDesc;
use tunelab_sim::workload::{training_constants, GraphOptions, ParallelPlan, Recompute, TrainOptions, MAX_BATCH};
use tunelab_sim::Precision;

/// The names of the training space's parameters, in config order.
pub const PARAMS: [&str; 11] = ["tp", "pp", "dp", "micro_batch", "recompute", "optimizer_sharding", "sequence_parallel", "precision", "ep", "cp", "vpp"];

fn divisors(n: u64) -> Vec<i64> {
    (1..=n as i64).filter(|d| n as i64 % d == 0).collect()
}

/// The training space for `chips` chips: each parallel degree ranges over the divisors of the
/// chip count (tensor parallel at most 16, within a node's reach); expert parallelism over the
/// divisors that also divide the expert count.
pub fn space_params(o: &TrainingOptions) -> Vec<Param> {
    space_params_for(o, None)
}

/// `space_params` for a model (its expert count bounds EP).
pub fn space_params_for(o: &TrainingOptions, model: Option<&ModelDesc>) -> Vec<Param> {
    let div: Vec<Value> = divisors(o.chips).into_iter().map(Value::Int).collect();
    let tp: Vec<Value> = div.iter().filter(|d| d.as_i64().unwrap_or(0) <= 16).cloned().collect();
    let strs = |v: &[String]| -> Vec<Value> { v.iter().map(|x| Value::Str(x.clone())).collect() };
    let ints = |v: &[i64]| -> Vec<Value> { v.iter().map(|x| Value::Int(*x)).collect() };
    let experts = model.and_then(|m| m.llm.as_ref()).and_then(|t| t.moe.as_ref()).map(|m| m.experts);
    let ep: Vec<Value> = if !o.expert_parallel.is_empty() {
        ints(&o.expert_parallel)
    } else {
        match experts {
            Some(e) => divisors(o.chips).into_iter().filter(|d| e % *d as u64 == 0).map(Value::Int).collect(),
            None => vec![Value::Int(1)],
        }
    };
    vec![
        Param::categorical("tp", tp),
        Param::categorical("pp", div.clone()),
        Param::categorical("dp", div),
        Param::categorical("micro_batch", ints(&o.micro_batches)),
        Param::categorical("recompute", strs(&o.recompute)),
        Param::categorical("optimizer_sharding", strs(&o.optimizer_sharding)),
        Param::categorical("sequence_parallel", strs(&o.sequence_parallel)),
        Param::categorical("precision", strs(&o.precisions)),
        Param::categorical("ep", ep),
        Param::categorical("cp", ints(&o.context_parallel)),
        Param::categorical("vpp", ints(&o.virtual_stages)),
    ]
}

/// Checks every parameter's values against its domain after the scenario's overrides: degrees,
/// micro-batch and virtual stages are positive integers within range, strings are known choices,
/// and no parameter has more than `MAX_TRAIN_LEVELS` levels. Errors name `space.<param>`.
pub fn check_domains(params: &[Param]) -> Result<(), String> {
    for p in params {
        let field = format!("space.{}", crate::spec::scenario::clip(&p.name));
        let levels = p.levels().unwrap_or(usize::MAX);
        let too_many = || format!("{field}: {levels} levels is too many for the training stage (at most {MAX_TRAIN_LEVELS}); give a shorter range or a list of choices");
        let (lo, hi): (i64, i64) = match p.name.as_str() {
            "micro_batch" => (1, MAX_BATCH as i64),
            "tp" | "pp" | "dp" | "ep" | "cp" => (1, 4096),
            "vpp" => (1, 1024),
            _ => {
                let known: &[&str] = match p.name.as_str() {
                    "recompute" => &RECOMPUTE,
                    "optimizer_sharding" => &SHARDING,
                    "sequence_parallel" => &ON_OFF,
                    "precision" => &PRECISIONS,
                    _ => continue,
                };
                if levels > MAX_TRAIN_LEVELS {
                    return Err(too_many());
                }
                for i in 0..levels {
                    let v = p.level_value(i);
                    if !v.as_str().is_some_and(|x| known.contains(&x)) {
                        return Err(format!("{field}: {v:?} is not a choice (known: {})", known.join(", ")));
                    }
                }
                continue;
            }
        };
        match &p.domain {
            Domain::Int { low, high, .. } | Domain::Pow2 { low, high } => {
                if *low < lo || *high > hi {
                    return Err(format!("{field}: values must be integers in {lo}..={hi}, got {low}..={high}"));
                }
                if levels > MAX_TRAIN_LEVELS {
                    return Err(too_many());
                }
            }
            Domain::Float { .. } => return Err(format!("{field}: must be integers in {lo}..={hi}, not a float range")),
            Domain::Categorical { choices } => {
                if levels > MAX_TRAIN_LEVELS {
                    return Err(too_many());
                }
                for v in choices {
                    match v.as_i64() {
                        Some(x) if (lo..=hi).contains(&x) => {}
                        _ => return Err(format!("{field}: each value must be an integer in {lo}..={hi}, got {v:?}")),
                    }
                }
            }
        }
    }
    Ok(())
}

/// The training space's parameters are categorical, so a `low`/`high` override arrives as a float
/// range; for the integer parameters an integral range is read as the integer range it means.
pub(super) fn integral_ranges(params: &mut [Param]) {
    for p in params.iter_mut() {
        if !matches!(p.name.as_str(), "micro_batch" | "tp" | "pp" | "dp" | "ep" | "cp" | "vpp") {
            continue;
        }
        if let Domain::Float { low, high, log: false, step } = p.domain {
            let st = step.unwrap_or(1.0);
            let whole = |x: f64| x.is_finite() && x.fract() == 0.0 && x.abs() < 9e15;
            if whole(low) && whole(high) && whole(st) && st >= 1.0 {
                p.domain = Domain::Int { low: low as i64, high: high as i64, step: st as i64 };
            }
        }
    }
}

/// Decodes a configuration (by the names in `names`). Errors name the bad value; a missing
/// parameter takes its default (1, "none", "zero0", "off", "bf16").
pub fn decode(names: &[String], c: &Config, global_batch: u64) -> Result<TrainPoint, String> {
    let get = |n: &str| names.iter().position(|x| x == n).and_then(|i| c.0.get(i));
    let int = |n: &str, d: i64| -> Result<u64, String> {
        let v = match get(n) {
            None => d,
            Some(v) => v.as_i64().ok_or_else(|| format!("{n}: must be an integer, got {v:?}"))?,
        };
        if v < 1 {
            return Err(format!("{n}: must be at least 1, got {v}"));
        }
        Ok(v as u64)
    };
    let st = |n: &str, d: &str| get(n).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_else(|| d.to_string());
    let plan = ParallelPlan {
        tp: int("tp", 1)?,
        pp: int("pp", 1)?,
        dp: int("dp", 1)?,
        ep: int("ep", 1)?,
        cp: int("cp", 1)?,
        vpp: int("vpp", 1)?,
        sequence_parallel: st("sequence_parallel", "off") == "on",
        ..ParallelPlan::default()
    };
    let micro_batch = int("micro_batch", 1)?;
    if micro_batch > MAX_BATCH {
        return Err(format!("micro_batch: {micro_batch} is over the largest micro-batch {MAX_BATCH}"));
    }
    let recompute = match st("recompute", "none").as_str() {
        "none" => Recompute::None,
        "selective" => Recompute::Selective,
        "full" => Recompute::Full,
        o => return Err(format!("recompute: unknown choice '{o}' (none, selective, full)")),
    };
    let (zero_stage, distributed_optimizer) = match st("optimizer_sharding", "zero0").as_str() {
        "zero0" | "none" => (0, false),
        "zero1" => (1, false),
        "zero2" => (2, false),
        "zero3" => (3, false),
        "distributed_optimizer" => (0, true),
        o => return Err(format!("optimizer_sharding: unknown choice '{o}' (zero0..zero3, distributed_optimizer)")),
    };
    let precision = match st("precision", "bf16").as_str() {
        "bf16" => Precision::Bf16,
        "fp16" => Precision::Fp16,
        "fp32" => Precision::Fp32,
        o => return Err(format!("precision: training supports bf16, fp16 or fp32, got '{o}'")),
    };
    let per_step = micro_batch.saturating_mul(plan.dp);
    let grad_accum = if per_step > 0 && global_batch.is_multiple_of(per_step) { global_batch / per_step } else { 0 };
    let train = TrainOptions {
        recompute,
        zero_stage,
        distributed_optimizer,
        mixed_precision: precision != Precision::Fp32,
        grad_accum,
        // Megatron's DDP (with or without its distributed optimizer) forces fp32 gradient
        // accumulation and reduction for bf16 (megatron/training/arguments.py); the ZeRO
        // choices model DeepSpeed, which reduces in the training type.
        fp32_grads: precision == Precision::Bf16 && zero_stage == 0,
        ..TrainOptions::default()
    };
    Ok(TrainPoint { plan, micro_batch, train, precision, moe_imbalance: training_constants().moe_imbalance.value })
}

/// The graph options a training point is priced with (the stage, explore and diagnosis all use
/// this): Megatron / MindSpeed run each matmul as its own kernel followed by fused vector kernels
/// (npu_swiglu, fused RMSNorm, bias-dropout-add), so no activation or residual rides on a matmul
/// epilogue; flash attention is on (every MindSpeed-LLM pretraining script passes
/// --use-flash-attn).
pub fn graph_options(p: &TrainPoint) -> GraphOptions {
    GraphOptions {
        precision: p.precision,
        train: p.train,
        moe_imbalance: p.moe_imbalance,
        fuse_epilogues: false,
        flash_attention: true,
        ..GraphOptions::default()
    }
}

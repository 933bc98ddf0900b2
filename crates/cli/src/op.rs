//! `tunelab op`: estimate one operator on one device, optionally tuning its tiling, and print
//! the estimate with its breakdown by engine.

use std::time::Instant;
use tunelab_search::{strategies, Metric, Objective, Outcome, Param, Rng, Space, Study, StudyOptions, Value};
use tunelab_sim::{
    bundled_device, estimate, tiling_axes, tiling_from_assignment, tuning, AttentionKind, CommAlgorithm, CommKind, DType, Device,
    Epilogue, Estimate, Link, Op, Precision, Tiling, VectorKind,
};

const HELP: &str = "KIND and --shape:
  matmul                          MxNxK or BATCHxMxNxK (--epilogue none|bias|bias_gelu|swiglu|residual_add)
  elementwise activation swiglu softmax layernorm rmsnorm rotary reduce cast scale quantize gather
                                  ROWSxROW_LEN (row_len is the reduced axis)
  attention (unfused) flash decode exported (an ONNX export's kernels, fp32 softmax)
                                  BATCHxHEADSxKV_HEADSxQ_LENxKV_LENxHEAD_DIM (--causal)
  conv2d                          BATCHxIN_CHxHxWxOUT_CHxKHxKW[xSTRIDE[xPAD]]
  allreduce allgather reducescatter alltoall
                                  BYTESxRANKS (--link hccs|internode|pcie, --algorithm ring|tree)
--dtype: fp32 fp16 bf16 int8, or for matmul w8a16 / w8a8 (default fp16).
--tiling: matmul fields singleCoreM singleCoreN baseM baseN baseK depthA1 depthB1 stepM stepN
  stepKa stepKb iterateOrder dbL0A dbL0B dbL0C (unset fields keep the default tiling); vector
  tileLen doubleBuffer; flash/decode blockQ blockKv.
--tune exhaustive (or auto): every valid tiling; any other name runs that search strategy
  (see `tunelab strategies`) for --budget evaluations (default 200) from --seed (default 0).";

/// Arguments of `tunelab op`.
#[derive(clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// The chip, e.g. 910B2 (see `tunelab devices`).
    #[arg(long, value_name = "CHIP")]
    device: String,
    /// The operator kind (listed below).
    #[arg(long = "op", value_name = "KIND")]
    kind: String,
    /// The operator's shape (per kind, below).
    #[arg(long, value_name = "S")]
    shape: String,
    /// Data type: fp32 fp16 bf16 int8, or for matmul w8a16 / w8a8.
    #[arg(long, value_name = "T", default_value = "fp16")]
    dtype: String,
    /// Tiling fields to set, key=value,... (unset ones keep the default tiling).
    #[arg(long, value_name = "k=v,...")]
    tiling: Option<String>,
    /// Tune the tiling: exhaustive, auto, or a strategy name.
    #[arg(long, value_name = "exhaustive|auto|STRATEGY", conflicts_with = "tiling")]
    tune: Option<String>,
    /// Evaluations for a strategy search.
    #[arg(long, value_name = "N", default_value = "200")]
    budget: String,
    /// Seed of a strategy search.
    #[arg(long, value_name = "N", default_value = "0")]
    seed: String,
    /// Matmul epilogue: none bias bias_gelu swiglu residual_add.
    #[arg(long, value_name = "E", default_value = "none")]
    epilogue: String,
    /// Collective link: hccs internode pcie.
    #[arg(long, value_name = "L", default_value = "hccs")]
    link: String,
    /// Collective algorithm: ring tree.
    #[arg(long, value_name = "A", default_value = "ring")]
    algorithm: String,
    /// Causal attention mask.
    #[arg(long)]
    causal: bool,
    /// Print the estimate as JSON.
    #[arg(long)]
    json: bool,
}

fn dims(shape: &str, min: usize, max: usize, what: &str) -> Result<Vec<u64>, String> {
    let v: Result<Vec<u64>, _> = shape.split(['x', 'X']).map(|p| p.trim().parse::<u64>()).collect();
    let v = v.map_err(|_| format!("bad --shape '{shape}': expected {what} (positive integers joined by x)"))?;
    if v.len() < min || v.len() > max {
        return Err(format!("bad --shape '{shape}': expected {what}"));
    }
    if v.contains(&0) {
        return Err(format!("bad --shape '{shape}': every dimension must be at least 1"));
    }
    Ok(v)
}

fn build_op(a: &Args) -> Result<Op, String> {
    let kind = a.kind.to_ascii_lowercase();
    let shape = a.shape.as_str();
    let dt = a.dtype.as_str();
    let plain = || DType::parse(dt);
    let vector = |k: VectorKind| -> Result<Op, String> {
        let d = dims(shape, 2, 2, "ROWSxROW_LEN")?;
        Ok(Op::Vector { kind: k, rows: d[0], row_len: d[1], dtype: plain()? })
    };
    let comm = |k: CommKind| -> Result<Op, String> {
        let d = dims(shape, 2, 2, "BYTESxRANKS")?;
        let link = match a.link.as_str() {
            "hccs" => Link::Hccs,
            "internode" | "inter-node" => Link::InterNode,
            "pcie" => Link::Pcie,
            "die" | "die-to-die" | "sio" => Link::DieToDie,
            "superpod" => Link::SuperPod,
            o => return Err(format!("unknown --link '{o}' (hccs, internode, pcie, die-to-die, superpod)")),
        };
        let algorithm = match a.algorithm.as_str() {
            "ring" => CommAlgorithm::Ring,
            "tree" => CommAlgorithm::Tree,
            o => return Err(format!("unknown --algorithm '{o}' (ring, tree)")),
        };
        Ok(Op::Comm { kind: k, bytes: d[0], ranks: d[1], link, algorithm })
    };
    let attention = |k: AttentionKind| -> Result<Op, String> {
        let d = dims(shape, 6, 6, "BATCHxHEADSxKV_HEADSxQ_LENxKV_LENxHEAD_DIM")?;
        Ok(Op::Attention { kind: k, batch: d[0], heads: d[1], kv_heads: d[2], q_len: d[3], kv_len: d[4], head_dim: d[5], causal: a.causal, dtype: plain()? })
    };
    match kind.as_str() {
        "matmul" | "bmm" => {
            let d = dims(shape, 3, 4, "MxNxK or BATCHxMxNxK")?;
            let (batch, m, n, k) = if d.len() == 4 { (d[0], d[1], d[2], d[3]) } else { (1, d[0], d[1], d[2]) };
            let (dtype, weight_dtype) = match DType::parse(dt) {
                Ok(t) => (t, None),
                Err(_) => {
                    let p = Precision::parse(dt).map_err(|_| format!("unknown --dtype '{dt}' (fp32, fp16, bf16, int8, w8a16, w8a8)"))?;
                    (p.activation(), Some(p.weight()))
                }
            };
            let epilogue = match a.epilogue.as_str() {
                "none" => Epilogue::None,
                "bias" => Epilogue::Bias,
                "bias_gelu" => Epilogue::BiasGelu,
                "swiglu" => Epilogue::SwiGlu,
                "residual_add" => Epilogue::ResidualAdd,
                o => return Err(format!("unknown --epilogue '{o}'")),
            };
            Ok(Op::Matmul { batch, m, n, k, dtype, weight_dtype, epilogue })
        }
        "elementwise" | "add" | "mul" => vector(VectorKind::Elementwise),
        "activation" | "gelu" | "silu" => vector(VectorKind::Activation),
        "swiglu" => vector(VectorKind::SwiGlu),
        "softmax" => vector(VectorKind::Softmax),
        "layernorm" => vector(VectorKind::LayerNorm),
        "rmsnorm" => vector(VectorKind::RmsNorm),
        "rotary" | "rope" => vector(VectorKind::Rotary),
        "reduce" => vector(VectorKind::Reduce),
        "cast" => vector(VectorKind::Cast),
        "scale" => vector(VectorKind::Scale),
        "quantize" => vector(VectorKind::Quantize),
        "gather" | "embedding" => vector(VectorKind::Gather),
        "attention" | "unfused" => attention(AttentionKind::Unfused),
        "flash" | "flash_attention" => attention(AttentionKind::Flash),
        "exported" | "onnx" => attention(AttentionKind::Exported),
        "decode" | "decode_attention" => attention(AttentionKind::Decode),
        "conv2d" | "conv" => {
            let d = dims(shape, 7, 9, "BATCHxIN_CHxHxWxOUT_CHxKHxKW[xSTRIDE[xPAD]]")?;
            let stride = d.get(7).copied().unwrap_or(1);
            let pad = d.get(8).copied().unwrap_or(0);
            Ok(Op::Conv2d { batch: d[0], in_ch: d[1], h: d[2], w: d[3], out_ch: d[4], kh: d[5], kw: d[6], stride, pad, dtype: plain()? })
        }
        "allreduce" | "all_reduce" => comm(CommKind::AllReduce),
        "allgather" | "all_gather" => comm(CommKind::AllGather),
        "reducescatter" | "reduce_scatter" => comm(CommKind::ReduceScatter),
        "alltoall" | "all_to_all" => comm(CommKind::AllToAll),
        other => Err(format!("unknown --op '{other}'\n\n{HELP}")),
    }
}

/// `--tiling k=v,...` on top of the default tiling (matmul) or the axis defaults (others).
fn parse_tiling(op: &Op, d: &Device, spec: &str) -> Result<Tiling, String> {
    let mut pairs = Vec::new();
    for kv in spec.split(',').filter(|s| !s.trim().is_empty()) {
        let (k, v) = kv.split_once('=').ok_or_else(|| format!("bad --tiling entry '{kv}' (expected key=value)"))?;
        let v: i64 = v.trim().parse().map_err(|_| format!("bad --tiling value in '{kv}' (expected an integer)"))?;
        pairs.push((k.trim().to_string(), v));
    }
    if let Tiling::Matmul(mut t) = tuning::default_tiling(op, d) {
        for (k, v) in &pairs {
            t.set(k, *v)?;
        }
        return Ok(Tiling::Matmul(t));
    }
    tiling_from_assignment(op, &pairs)
}

/// Most evaluations `--tune STRATEGY` may spend (issue 13 #9: a budget of 10^6 took 48 s and
/// 968 MB). Larger searches are what `--tune exhaustive` is for: it covers every valid tiling.
pub const MAX_OP_BUDGET: usize = 20_000;

fn check_budget(budget: usize) -> Result<(), String> {
    match budget {
        0 => Err("--budget must be at least 1 evaluation, got 0".into()),
        b if b > MAX_OP_BUDGET => Err(format!("--budget {b} is above the limit of {MAX_OP_BUDGET} evaluations; use --tune exhaustive to cover every valid tiling")),
        _ => Ok(()),
    }
}

/// The simulator as a search objective over the tiling axes (metric: time in us).
struct TilingObjective<'a> {
    op: &'a Op,
    device: &'a Device,
    names: Vec<String>,
}

impl Objective for TilingObjective<'_> {
    fn metrics(&self) -> Vec<Metric> {
        vec![Metric::minimize("time_us", "us")]
    }
    fn evaluate(&mut self, config: &tunelab_search::Config) -> Outcome {
        let pairs: Vec<(String, i64)> = self.names.iter().zip(config.0.iter()).map(|(n, v)| (n.clone(), v.as_i64().unwrap_or(0))).collect();
        match tiling_from_assignment(self.op, &pairs) {
            Err(e) => Outcome::Infeasible(e),
            Ok(t) => match estimate(self.op, &t, self.device) {
                Ok(e) => Outcome::Ok(vec![e.time_us]),
                Err(i) => Outcome::Infeasible(i.reason),
            },
        }
    }
}

struct Tuned {
    how: String,
    valid: usize,
    /// Costed evaluations (None for the exhaustive search, which covers every valid tiling
    /// but skips costing those a lower bound already rules out).
    evaluated: Option<usize>,
    seconds: f64,
}

fn tune(op: &Op, d: &Device, strategy: &str, a: &Args) -> Result<(Tiling, Tuned), String> {
    let t0 = Instant::now();
    if strategy == "exhaustive" || strategy == "auto" {
        let (t, _, valid) = tuning::best_tiling(op, d).ok_or("no valid tiling for this operator on this device")?;
        return Ok((t, Tuned { how: "exhaustive".into(), valid, evaluated: None, seconds: t0.elapsed().as_secs_f64() }));
    }
    let axes = tiling_axes(op, d);
    if axes.is_empty() {
        return Err("this operator has nothing to tune".into());
    }
    let budget: usize = a.budget.trim().parse().map_err(|_| format!("--budget must be a positive integer, got '{}'", a.budget))?;
    check_budget(budget)?;
    let seed: u64 = a.seed.trim().parse().map_err(|_| format!("--seed must be a non-negative integer, got '{}'", a.seed))?;
    let params: Vec<Param> = axes.iter().map(|ax| Param::categorical(&ax.name, ax.values.iter().map(|&v| Value::Int(v)).collect())).collect();
    let space = Space::new(params, &[])?;
    let mut obj = TilingObjective { op, device: d, names: axes.iter().map(|x| x.name.clone()).collect() };
    let mut study = Study::new(space, obj.metrics(), StudyOptions::budget(budget))?;
    let mut strat = strategies::by_name(strategy, &serde_json::json!({}))?;
    let mut rng = Rng::seed_from_u64(seed);
    study.run(strat.as_mut(), &mut obj, &mut rng);
    let best = study.best().ok_or_else(|| format!("{strategy} found no valid tiling in {budget} evaluations"))?;
    let pairs: Vec<(String, i64)> = obj.names.iter().zip(best.config.0.iter()).map(|(n, v)| (n.clone(), v.as_i64().unwrap_or(0))).collect();
    let t = tiling_from_assignment(op, &pairs)?;
    let valid = study.trials().iter().filter(|t| t.is_ok()).count();
    Ok((t, Tuned { how: strategy.to_string(), valid, evaluated: Some(study.evaluations()), seconds: t0.elapsed().as_secs_f64() }))
}

pub fn main(a: Args) -> Result<(), String> {
    let d = bundled_device(&a.device)?;
    let op = build_op(&a)?;
    let (tiling, tuned) = match (a.tune.as_deref(), a.tiling.as_deref()) {
        (Some(_), Some(_)) => return Err("give --tiling or --tune, not both".into()),
        (Some(s), None) => {
            let (t, info) = tune(&op, &d, s, &a)?;
            (t, Some(info))
        }
        (None, Some(spec)) => (parse_tiling(&op, &d, spec)?, None),
        (None, None) => (tuning::default_tiling(&op, &d), None),
    };
    let e = estimate(&op, &tiling, &d).map_err(|i| format!("infeasible: {}", i.reason))?;
    if a.json {
        let mut v = serde_json::json!({ "device": d.name, "op": op, "tiling": tiling, "estimate": e, "time_us": e.time_us,
            "tflops": e.attained_tflops, "bound": e.bound.name() });
        if let Some(t) = &tuned {
            v["tune"] = serde_json::json!({ "strategy": t.how, "valid": t.valid, "evaluated": t.evaluated, "seconds": t.seconds });
        }
        println!("{}", serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?);
        return Ok(());
    }
    print_text(&d, &op, &tiling, &e, tuned.as_ref());
    Ok(())
}

fn print_text(d: &Device, op: &Op, tiling: &Tiling, e: &Estimate, tuned: Option<&Tuned>) {
    println!("device   {}  op {}", d.name, serde_json::to_string(op).unwrap_or_default());
    println!("time_us  {:.3}", e.time_us);
    let peak = match op {
        Op::Matmul { dtype: DType::Int8, weight_dtype: None | Some(DType::Int8), .. } => d.derived.peak_tops_int8,
        Op::Matmul { dtype: DType::Fp32, .. } => d.derived.peak_tflops_fp32,
        _ => d.derived.peak_tflops_fp16,
    };
    println!("tflops   {:.2}  ({:.1}% of {:.1} cube peak)", e.attained_tflops, 100.0 * e.attained_tflops / peak, peak);
    println!("bound    {}", e.bound.name());
    println!("hbm      {:.0} bytes, intensity {:.1} flop/byte, energy {:.1} uJ (estimate), rel. error {:.2e}", e.hbm_bytes, e.arithmetic_intensity, e.energy_uj, e.relative_error);
    println!("cores    {} used, {} wave(s)", e.breakdown.cores_used, e.breakdown.waves);
    println!("breakdown (us)   exposed      busy");
    let ex = e.breakdown.exposed.to_array();
    let busy = e.breakdown.busy.to_array();
    for (i, b) in tunelab_sim::estimate::ALL_BOUNDS.iter().enumerate() {
        if ex[i] > 0.0 || busy[i] > 0.0 {
            println!("  {:<13} {:>10.3} {:>10.3}", b.name(), ex[i], busy[i]);
        }
    }
    println!("  {:<13} {:>10.3}  (sum of exposed; hidden by overlap {:.3})", "total", e.time_us, e.breakdown.overlapped_us);
    println!("tiling   {}", tiling.describe());
    if let Some(t) = tuned {
        match t.evaluated {
            None => println!("tuned    exhaustive: best of all {} valid tilings (exact search), {:.3} s", t.valid, t.seconds),
            Some(n) => println!("tuned    {}: {} valid of {} evaluated tilings, {:.3} s", t.how, t.valid, n, t.seconds),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_budget_is_capped_with_a_clear_message() {
        let run = |s: &str| crate::args::parse::<Args>(s).and_then(main);
        let e = run("--device 910B2 --op matmul --shape 4096x4096x4096 --tune random --budget 1000000").unwrap_err();
        assert!(e.contains("--budget 1000000") && e.contains("20000") && e.contains("exhaustive"), "{e}");
        assert!(run("--device 910B2 --op matmul --shape 64x64x64 --tune random --budget 0").unwrap_err().contains("at least 1"));
        assert!(run("--device 910B2 --op matmul --shape 64x64x64 --tune random --budget 20").is_ok());
    }
}

//! The training stage: parallel degrees, micro-batch, recomputation, ZeRO or the distributed
//! optimiser, sequence parallelism and precision, for a fixed global batch on a fixed number of
//! chips. The device model costs the per-chip training graph; this file adds the schedule.
//!
//! Step time = pipeline time + exposed data-parallel communication + optimizer:
//! - pipeline: the 1F1B schedule runs m micro-batches through pp stages in (m + pp - 1) slots, so
//!   the bubble is (pp - 1) / (m + pp - 1) (Narayanan et al. 2021, "Efficient Large-Scale Language
//!   Model Training on GPU Clusters Using Megatron-LM", section 2.2.1; GPipe, Huang et al. 2019);
//! - data-parallel gradient communication overlaps the backward pass of the last micro-batch
//!   (bucketed all-reduce: Li et al. 2020, "PyTorch Distributed", VLDB); only what exceeds that
//!   window is exposed. ZeRO-3 parameter gathers are prefetched under the whole compute.
//! MFU uses the PaLM definition (Chowdhery et al. 2022, appendix B): model FLOPs 6N + 12 L H Q T
//! per token, recomputation excluded, over chips x peak (as optimistic as the device model's
//! kernels, whose large matmuls reach ~95% of peak). Learning rate and batch advice is not
//! simulated; it comes from `crate::empirical`, a labelled published fit.
//!
//! Gradient accumulation is derived, not searched: global batch = micro-batch x accumulation x dp,
//! so every configuration trains the same tokens per step and step times compare fairly.

use crate::stages::StageSetup;
use crate::scenario::Scenario;
use serde::Deserialize;
use tunelab_search::{Config, Metric, Objective, Outcome, Param, Space, Value};
use tunelab_sim::device::Device;
use tunelab_sim::memory::memory_per_chip;
use tunelab_sim::model::ModelDesc;
use tunelab_sim::tiling::Tiling;
use tunelab_sim::workload::{build_graph, GraphOptions, ParallelPlan, Recompute, TrainOptions, Workload};
use tunelab_sim::{Op, Precision};

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// `scenario.training` options (all optional).
#[derive(Clone, Debug, Deserialize)]
#[serde(default)]
pub struct TrainingOptions {
    /// Chips in the job (tp x pp x dp).
    pub chips: u64,
    /// Tokens the whole run trains on, for the learning-rate fit (None: 20 per parameter).
    pub train_tokens: Option<f64>,
    pub micro_batches: Vec<i64>,
    pub recompute: Vec<String>,
    /// "zero0".."zero3", "distributed_optimizer".
    pub optimizer_sharding: Vec<String>,
    pub precisions: Vec<String>,
    pub sequence_parallel: Vec<String>,
}

impl Default for TrainingOptions {
    fn default() -> Self {
        TrainingOptions {
            chips: 8,
            train_tokens: None,
            micro_batches: vec![1, 2, 4, 8],
            recompute: vec!["none".into(), "selective".into(), "full".into()],
            optimizer_sharding: vec!["zero0".into(), "zero1".into(), "zero2".into(), "zero3".into(), "distributed_optimizer".into()],
            precisions: vec!["bf16".into(), "fp16".into(), "fp32".into()],
            sequence_parallel: vec!["off".into(), "on".into()],
        }
    }
}

impl TrainingOptions {
    /// Reads `scenario.training`; a wrong field is named.
    pub fn from_scenario(s: &Scenario) -> Result<TrainingOptions, String> {
        let o: TrainingOptions = serde_json::from_value(s.training.clone()).map_err(|e| format!("training: {e}"))?;
        if o.chips == 0 || o.chips > 4096 {
            return Err(format!("training.chips: must be 1..=4096, got {}", o.chips));
        }
        Ok(o)
    }
}

/// One point of the training space, decoded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrainPoint {
    pub plan: ParallelPlan,
    pub micro_batch: u64,
    pub train: TrainOptions,
    pub precision: Precision,
}

/// Everything the stage reports for one point (metrics plus the explanation).
#[derive(Clone, Debug, PartialEq)]
pub struct TrainResult {
    pub step_time_ms: f64,
    pub mfu: f64,
    pub memory_gib: f64,
    pub tokens_per_s: f64,
    pub bubble_fraction: f64,
    pub dp_comm_exposed_ms: f64,
    pub grad_accum: u64,
}

/// The names of the training space's parameters, in config order.
pub const PARAMS: [&str; 8] = ["tp", "pp", "dp", "micro_batch", "recompute", "optimizer_sharding", "sequence_parallel", "precision"];

/// The training space for `chips` chips: each parallel degree ranges over the divisors of the
/// chip count (tensor parallel at most 16, within a node's reach).
pub fn space_params(o: &TrainingOptions) -> Vec<Param> {
    let div: Vec<Value> = (1..=o.chips as i64).filter(|d| o.chips as i64 % d == 0).map(Value::Int).collect();
    let tp: Vec<Value> = div.iter().filter(|d| d.as_i64().unwrap_or(0) <= 16).cloned().collect();
    let strs = |v: &[String]| -> Vec<Value> { v.iter().map(|x| Value::Str(x.clone())).collect() };
    vec![
        Param::categorical("tp", tp),
        Param::categorical("pp", div.clone()),
        Param::categorical("dp", div),
        Param::categorical("micro_batch", o.micro_batches.iter().map(|b| Value::Int(*b)).collect()),
        Param::categorical("recompute", strs(&o.recompute)),
        Param::categorical("optimizer_sharding", strs(&o.optimizer_sharding)),
        Param::categorical("sequence_parallel", strs(&o.sequence_parallel)),
        Param::categorical("precision", strs(&o.precisions)),
    ]
}

/// Decodes a configuration (by the names in `names`). Errors name the bad value.
pub fn decode(names: &[String], c: &Config, global_batch: u64) -> Result<TrainPoint, String> {
    let get = |n: &str| names.iter().position(|x| x == n).and_then(|i| c.0.get(i));
    let int = |n: &str, d: i64| get(n).and_then(|v| v.as_i64()).unwrap_or(d).max(1) as u64;
    let st = |n: &str, d: &str| get(n).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_else(|| d.to_string());
    let plan = ParallelPlan { tp: int("tp", 1), pp: int("pp", 1), dp: int("dp", 1), ep: 1, sequence_parallel: st("sequence_parallel", "off") == "on" };
    let micro_batch = int("micro_batch", 1);
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
    let grad_accum = if per_step > 0 && global_batch % per_step == 0 { global_batch / per_step } else { 0 };
    let train = TrainOptions { recompute, zero_stage, distributed_optimizer, mixed_precision: precision != Precision::Fp32, grad_accum };
    Ok(TrainPoint { plan, micro_batch, train, precision })
}

/// Simulates one training step. `Err` is an infeasible point with its reason.
pub fn simulate(model: &ModelDesc, device: &Device, p: &TrainPoint, seq_len: u64, global_batch: u64, chips: u64) -> Result<TrainResult, String> {
    if p.plan.chips() != chips {
        return Err(format!("tp x pp x dp = {} but the job has {chips} chips", p.plan.chips()));
    }
    if p.train.grad_accum == 0 {
        return Err(format!("global batch {global_batch} is not a multiple of micro_batch x dp = {}", p.micro_batch * p.plan.dp));
    }
    if p.plan.sequence_parallel && p.plan.tp == 1 {
        return Err("sequence parallelism needs tp > 1".into());
    }
    let w = Workload::TrainStep { micro_batch: p.micro_batch, seq_len };
    let opts = GraphOptions { precision: p.precision, train: p.train, ..GraphOptions::default() };
    let mem = memory_per_chip(model, &w, &p.plan, &opts, Some(&p.train))?;
    let mem_gib = mem.total as f64 / GIB;
    let cap_gib = device.memory_bytes as f64 / GIB;
    if mem_gib > cap_gib {
        return Err(format!(
            "out of memory: {mem_gib:.1} GiB per chip (weights {:.1}, gradients {:.1}, optimizer {:.1}, activations {:.1}) > {cap_gib:.0} GiB",
            mem.weights as f64 / GIB, mem.gradients as f64 / GIB, mem.optimizer as f64 / GIB, mem.activations as f64 / GIB
        ));
    }
    let graph = build_graph(model, &w, &p.plan, &opts)?;
    let (mut compute, mut optimizer, mut dp_comm, mut zero3, mut last_bwd) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for o in &graph.ops {
        let e = tunelab_sim::cost::estimate(&o.op, &Tiling::Default, device).map_err(|e| format!("{}: {e}", o.name))?;
        let t = e.time_us * o.repeat as f64;
        if o.name.starts_with("dp.zero3") {
            zero3 += t;
        } else if o.name.starts_with("dp.") {
            dp_comm += t;
        } else if o.name.starts_with("optimizer.") {
            optimizer += t;
        } else {
            compute += t;
            if o.name.contains("bwd") && !matches!(o.op, Op::Comm { .. }) {
                last_bwd += t / p.train.grad_accum as f64;
            }
        }
    }
    let (m, pp) = (p.train.grad_accum as f64, p.plan.pp as f64);
    let bubble = (pp - 1.0) / (m + pp - 1.0);
    let pipeline = compute * (m + pp - 1.0) / m;
    // ZeRO-3 gathers hide under compute; reduce-scatters and all-reduces under the last backward.
    let exposed = (dp_comm - last_bwd).max(0.0) + (zero3 - compute).max(0.0);
    let step_us = pipeline + exposed + optimizer;
    let tokens = global_batch as f64 * seq_len as f64;
    let peak = match p.precision {
        Precision::Fp32 => device.derived.peak_tflops_fp32,
        _ => device.derived.peak_tflops_fp16,
    } * 1e12;
    let mfu = model_flops_per_token(model, seq_len) * tokens / (step_us * 1e-6) / (chips as f64 * peak);
    Ok(TrainResult {
        step_time_ms: step_us / 1e3,
        mfu,
        memory_gib: mem_gib,
        tokens_per_s: tokens / (step_us * 1e-6),
        bubble_fraction: bubble,
        dp_comm_exposed_ms: exposed / 1e3,
        grad_accum: p.train.grad_accum,
    })
}

/// PaLM's model FLOPs per token: 6 N (active parameters) + 12 L H Q T (attention).
pub fn model_flops_per_token(model: &ModelDesc, seq_len: u64) -> f64 {
    let n = model.params().active as f64;
    let attn = model.llm.as_ref().map_or(0.0, |t| 12.0 * t.layers as f64 * (t.heads * t.head_dim) as f64 * seq_len as f64);
    6.0 * n + attn
}

/// The metrics, in `TrainResult` order.
pub fn metrics() -> Vec<Metric> {
    vec![
        Metric::minimize("step_time_ms", "ms"),
        Metric::maximize("mfu", ""),
        Metric::minimize("memory_gib", "GiB"),
        Metric::maximize("tokens_per_s", "tok/s"),
        Metric::minimize("bubble_fraction", ""),
        Metric::minimize("dp_comm_exposed_ms", "ms"),
        Metric::minimize("grad_accum", ""),
    ]
}

/// The training objective over a resolved model and chip.
pub struct TrainingObjective {
    pub model: ModelDesc,
    pub device: Device,
    pub names: Vec<String>,
    pub seq_len: u64,
    pub global_batch: u64,
    pub chips: u64,
}

impl TrainingObjective {
    /// Decodes and simulates one configuration.
    pub fn result(&self, c: &Config) -> Result<TrainResult, String> {
        let p = decode(&self.names, c, self.global_batch)?;
        simulate(&self.model, &self.device, &p, self.seq_len, self.global_batch, self.chips)
    }
}

impl Objective for TrainingObjective {
    fn metrics(&self) -> Vec<Metric> {
        metrics()
    }
    fn evaluate(&mut self, c: &Config) -> Outcome {
        match self.result(c) {
            Ok(r) => Outcome::Ok(vec![r.step_time_ms, r.mfu, r.memory_gib, r.tokens_per_s, r.bubble_fraction, r.dp_comm_exposed_ms, r.grad_accum as f64]),
            Err(e) => Outcome::Infeasible(e),
        }
    }
}

/// Learning-rate and batch advice for the scenario's model, sequence length and global batch:
/// a labelled published empirical fit (`crate::empirical`), not a simulation.
pub fn advice(s: &Scenario) -> Result<crate::empirical::HparamAdvice, String> {
    let o = TrainingOptions::from_scenario(s)?;
    let (model, _, _) = crate::context::resolve(s)?;
    let llm = model.llm.as_ref().ok_or("learning-rate advice needs a transformer description")?;
    let (seq_len, global_batch) = (s.workload.seq_len.max(1) as u64, s.workload.global_batch.max(1) as u64);
    crate::empirical::advise(llm.layers, llm.hidden, model.params().total as f64, seq_len, global_batch, o.train_tokens)
}

/// Builds the training stage for a scenario.
pub fn setup(s: &Scenario) -> Result<StageSetup, String> {
    let o = TrainingOptions::from_scenario(s)?;
    let (model, device, mut notes) = crate::context::resolve(s)?;
    if model.llm.is_none() {
        return Err(format!("'{}' is an operator graph: the training stage needs a transformer description", model.name));
    }
    let (seq_len, global_batch) = (s.workload.seq_len.max(1) as u64, s.workload.global_batch.max(1) as u64);
    let params = crate::stages::apply_overrides(s, space_params(&o))?;
    let chips = o.chips;
    // Degrees multiply to the chip count; the global batch splits evenly into micro-batches.
    let mut constraints = vec![format!("tp * pp * dp == {chips}"), format!("{global_batch} % (micro_batch * dp) == 0")];
    // Sequence parallelism shards inside the tensor-parallel group, so it needs tp > 1.
    if params.iter().any(|p| p.name == "sequence_parallel") {
        constraints.push("sequence_parallel != \"on\" || tp > 1".into());
    }
    let space = Space::new(params, &constraints)?;
    let names = space.names().to_vec();
    match advice(s) {
        Ok(a) => notes.push(a.summary),
        Err(e) => notes.push(format!("no learning-rate advice: {e}")),
    }
    let objective = TrainingObjective { model, device, names, seq_len, global_batch, chips };
    let baseline = baseline_config(&space, &objective);
    Ok(StageSetup { space, objective: Box::new(objective), metrics: metrics(), baseline, focus: Vec::new(), focus_budget: 0, notes })
}

/// The "before" point: pure data parallelism at micro-batch 1 (the plain PyTorch DDP starting
/// point), with the least memory saving that fits: no sharding, then ZeRO-1, then full
/// recomputation, then ZeRO-3. The first member of the space if none of them is allowed.
fn baseline_config(space: &Space, obj: &TrainingObjective) -> Config {
    let steps = [("none", "zero0"), ("none", "zero1"), ("full", "zero1"), ("full", "zero3")];
    let mut first_valid = None;
    for (rc, zero) in steps {
        let want = [Value::Int(1), Value::Int(1), Value::Int(obj.chips as i64), Value::Int(1), rc.into(), zero.into(), "off".into(), "bf16".into()];
        let c = Config(space.params().iter().zip(want).map(|(p, v)| if p.contains(&v) { v } else { p.level_value(0) }).collect());
        if !space.contains(&c) {
            continue;
        }
        if obj.result(&c).is_ok() {
            return c;
        }
        first_valid.get_or_insert(c);
    }
    first_valid.or_else(|| space.enumerate().next()).unwrap_or_else(|| Config(space.params().iter().map(|p| p.level_value(0)).collect()))
}

//! The deployment stage: batch size, precision (FP16, BF16, W8A16, W8A8), tensor-parallel
//! degree, KV-cache memory budget, memory allocation strategy and graph vs. eager launch for
//! serving a model, every distinct operator tiled by the device model.
//!
//! Model of a request batch: TTFT is one prefill of `batch` prompts; TPOT is one decode step at
//! the midpoint context (prompt + half the output); the instance generates `batch x output_len`
//! tokens in TTFT + output_len x TPOT. Memory is `memory::footprint` under the chosen allocator
//! and must fit in `kv_cache_fraction` of the chip (the share the engine may reserve, as vLLM's
//! `gpu_memory_utilization`); static and pool allocators reserve that whole share up front, the
//! predictive planner only what it needs. Graph launch replays a captured graph, so the
//! per-operator launch costs (S2: 5 us matmul, 2 us vector, 10 us communication) are paid once
//! per step instead of once per operator. Not modelled: the dynamic pool's defragmentation
//! pauses (their size is known, `Footprint::defrag_bytes`, their frequency is not) and graph
//! capture time (a one-off at start-up).

use super::StageSetup;
use crate::graphcost::{GraphCost, Memo, TileMode};
use crate::scenario::{clip, Scenario};
use tunelab_search::{Config, Metric, Objective, Outcome, Param, Space, Value};
use tunelab_sim::device::Device;
use tunelab_sim::memory::{footprint, MemoryStrategy};
use tunelab_sim::model::ModelDesc;
use tunelab_sim::workload::{build_graph, validate_plan, Graph, GraphOptions, ParallelPlan, Workload};
use tunelab_sim::{DType, Precision};

const GIB: f64 = (1u64 << 30) as f64;

fn metrics() -> Vec<Metric> {
    vec![
        Metric::maximize("tokens_per_s", "tokens/s"),
        Metric::minimize("ttft_ms", "ms"),
        Metric::minimize("tpot_ms", "ms"),
        Metric::maximize("tokens_per_s_per_chip", "tokens/s"),
        Metric::minimize("memory_gib", "GiB"),
        Metric::minimize("energy_j_per_token", "J"),
        Metric::minimize("rel_error", ""),
        Metric::minimize("power_w", "W"),
        Metric::maximize("utilisation", ""),
    ]
}

struct DeploymentObjective {
    model: ModelDesc,
    device: Device,
    input: u64,
    output: u64,
    mode: TileMode,
    memo: Memo,
}

/// Builds the deployment stage for a scenario.
pub fn setup(s: &Scenario) -> Result<StageSetup, String> {
    let (model, device, notes) = crate::context::resolve(s)?;
    let d = &s.deployment;
    let w = &s.workload;
    if w.batch == -1 {
        return Err("workload.batch: the deployment stage tunes the batch itself; give a starting batch, not -1".into());
    }
    let base_precision = match model.dtype {
        DType::Bf16 => "bf16",
        _ => "fp16",
    };
    let ints = |v: &[i64], d: &[i64]| if v.is_empty() { d.to_vec() } else { v.to_vec() };
    let strs = |v: &[String], d: &[&str]| if v.is_empty() { d.iter().map(|x| x.to_string()).collect() } else { v.to_vec() };
    let mut batches = ints(&d.batches, &[1, 2, 4, 8, 16, 32, 64, 128, 256]);
    let precisions = strs(&d.precisions, &[base_precision, if base_precision == "fp16" { "bf16" } else { "fp16" }, "w8a16", "w8a8"]);
    for p in &precisions {
        let ok = Precision::parse(p).map_err(|e| format!("deployment.precisions: {e}"))?;
        if ok == Precision::Fp32 {
            return Err("deployment.precisions: fp32 serving is not modelled; use fp16, bf16, w8a16 or w8a8".into());
        }
    }
    let tps: Vec<i64> = ints(&d.tensor_parallel, &[1, 2, 4, 8])
        .into_iter()
        .filter(|&t| validate_plan(&model, &ParallelPlan { tp: t as u64, ..Default::default() }).is_ok())
        .collect();
    if tps.is_empty() {
        return Err(format!("deployment.tensor_parallel: no listed degree divides the heads of '{}'", model.name));
    }
    let kv: Vec<f64> = if d.kv_cache_fractions.is_empty() { vec![0.9, 0.5, 0.7, 0.8, 0.95] } else { d.kv_cache_fractions.clone() };
    let mems = strs(&d.memory_strategies, &["dynamic_pool", "static", "predictive"]);
    for m in &mems {
        memory_strategy(m)?;
    }
    let launches = strs(&d.launch_modes, &["eager", "graph"]);
    if let Some(bad) = launches.iter().find(|l| *l != "eager" && *l != "graph") {
        return Err(format!("deployment.launch_modes: expected eager or graph, got '{}'", clip(bad)));
    }
    // The scenario's batch is the baseline, so it goes first.
    batches.retain(|b| *b != w.batch);
    batches.insert(0, w.batch);
    let cat_i = |name: &str, v: &[i64]| Param::categorical(name, v.iter().map(|&x| Value::Int(x)).collect());
    let cat_s = |name: &str, v: &[String]| Param::categorical(name, v.iter().map(|x| Value::Str(x.clone())).collect());
    let params = vec![
        cat_i("batch", &batches),
        cat_s("precision", &precisions),
        cat_i("tp", &tps),
        Param::categorical("kv_cache_fraction", kv.iter().map(|&x| Value::Float(x)).collect()),
        cat_s("memory_strategy", &mems),
        cat_s("launch", &launches),
    ];
    let space = Space::new(super::apply_overrides(s, params)?, &[])?;
    let baseline = Config(space.params().iter().map(|p| p.level_value(0)).collect());
    let mode = if d.tile_operators { TileMode::Best } else { TileMode::Default };
    let obj = DeploymentObjective { model, device, input: w.input_len as u64, output: w.output_len as u64, mode, memo: Memo::default() };
    obj.check_fits_somewhere(&tps, &precisions)?;
    Ok(StageSetup { space, objective: Box::new(obj), metrics: metrics(), baseline, focus: Vec::new(), focus_budget: 0, notes })
}

fn memory_strategy(m: &str) -> Result<MemoryStrategy, String> {
    match m {
        "static" => Ok(MemoryStrategy::Static),
        "dynamic_pool" | "dynamic" => Ok(MemoryStrategy::DynamicPool),
        "predictive" => Ok(MemoryStrategy::Predictive),
        other => Err(format!("deployment.memory_strategies: expected static, dynamic_pool or predictive, got '{}'", clip(other))),
    }
}

/// One decoded configuration.
struct Knobs {
    batch: u64,
    precision: Precision,
    tp: u64,
    kv_fraction: f64,
    memory: MemoryStrategy,
    graph_launch: bool,
}

fn knobs(c: &Config) -> Result<Knobs, String> {
    let g = |i: usize| c.0.get(i).ok_or_else(|| "configuration is missing a value".to_string());
    let batch = g(0)?.as_i64().filter(|b| *b > 0).ok_or("batch must be a positive integer")? as u64;
    let precision = Precision::parse(g(1)?.as_str().unwrap_or(""))?;
    let tp = g(2)?.as_i64().filter(|t| *t > 0).ok_or("tp must be a positive integer")? as u64;
    let kv_fraction = g(3)?.as_f64().filter(|f| *f > 0.0 && *f <= 1.0).ok_or("kv_cache_fraction must be in (0, 1]")?;
    let memory = memory_strategy(g(4)?.as_str().unwrap_or(""))?;
    let graph_launch = g(5)?.as_str() == Some("graph");
    Ok(Knobs { batch, precision, tp, kv_fraction, memory, graph_launch })
}

impl DeploymentObjective {
    fn workloads(&self, batch: u64) -> (Workload, Workload) {
        let done = self.output / 2;
        (
            Workload::Prefill { batch, input_len: self.input },
            Workload::Decode { batch, context_len: self.input + done, output_len: self.output - done },
        )
    }

    /// A clear error when not even the smallest footprint on the widest split fits the chip.
    fn check_fits_somewhere(&self, tps: &[i64], precisions: &[String]) -> Result<(), String> {
        let tp = tps.iter().copied().max().unwrap_or(1) as u64;
        let smallest = precisions.iter().filter_map(|p| Precision::parse(p).ok()).min_by_key(|p| p.weight().bytes()).unwrap_or(Precision::Fp16);
        let plan = ParallelPlan { tp, ..Default::default() };
        let opts = GraphOptions { precision: smallest, ..GraphOptions::default() };
        let (_, dec) = self.workloads(1);
        let need = footprint(&self.model, &dec, &plan, &opts, None, MemoryStrategy::Predictive)?.memory.total as f64;
        let have = self.device.memory_bytes as f64;
        if need > have {
            return Err(format!(
                "'{}' cannot fit on {}: even at batch 1, with {} weights and tp = {tp}, it needs {:.2} GiB per chip, {:.2} GiB more than the chip's {:.0} GiB",
                self.model.name, self.device.name, format!("{smallest:?}").to_lowercase(), need / GIB, (need - have) / GIB, have / GIB
            ));
        }
        Ok(())
    }

    fn graph_time(&mut self, g: &Graph, graph_launch: bool) -> Result<GraphCost, String> {
        let mut c = GraphCost::default();
        let mut launch_us = 0.0;
        for op in &g.ops {
            let e = self.memo.op(&op.op, &self.device, self.mode).map_err(|r| format!("operator {} cannot run: {r}", op.name))?;
            c.add(&e, op.repeat as f64);
            launch_us += e.breakdown.exposed.launch * op.repeat as f64;
        }
        if graph_launch {
            // One captured-graph launch replaces the per-operator launches.
            c.time_us = c.time_us - launch_us + self.device.launch_matmul_us;
        }
        Ok(c)
    }

    fn eval(&mut self, c: &Config) -> Result<Result<Vec<f64>, String>, String> {
        let k = knobs(c)?;
        let plan = ParallelPlan { tp: k.tp, ..Default::default() };
        let opts = GraphOptions { precision: k.precision, ..GraphOptions::default() };
        let (pre, dec) = self.workloads(k.batch);
        let fp = |w: &Workload| footprint(&self.model, w, &plan, &opts, None, k.memory).map(|f| f.memory.total as f64);
        let need = fp(&pre)?.max(fp(&dec)?);
        let chip = self.device.memory_bytes as f64;
        let budget = k.kv_fraction * chip;
        if need > budget {
            return Ok(Err(format!(
                "out of memory by {:.2} GiB: needs {:.2} GiB per chip, the engine may use {:.2} GiB ({} of {:.0} GiB)",
                (need - budget) / GIB, need / GIB, budget / GIB, k.kv_fraction, chip / GIB
            )));
        }
        let reserved = if k.memory == MemoryStrategy::Predictive { need } else { budget };
        let pg = build_graph(&self.model, &pre, &plan, &opts)?;
        let dg = build_graph(&self.model, &dec, &plan, &opts)?;
        let p = self.graph_time(&pg, k.graph_launch)?;
        let d = self.graph_time(&dg, k.graph_launch)?;
        let out = self.output.max(1) as f64;
        let total_s = (p.time_us + out * d.time_us) / 1e6;
        let tokens = k.batch as f64 * out;
        let per_chip_j = (p.energy_uj + out * d.energy_uj) / 1e6;
        let tps = tokens / total_s.max(1e-12);
        Ok(Ok(vec![
            tps,
            p.time_us / 1e3,
            d.time_us / 1e3,
            tps / k.tp as f64,
            reserved / GIB,
            per_chip_j * k.tp as f64 / tokens,
            p.rel_error.max(d.rel_error),
            per_chip_j / total_s.max(1e-12),
            // Cube utilisation: useful FLOPs over the chip's FP16 peak for the whole request.
            (p.flops + out * d.flops) / total_s.max(1e-12) / (self.device.derived.peak_tflops_fp16 * 1e12).max(1.0),
        ]))
    }
}

impl Objective for DeploymentObjective {
    fn metrics(&self) -> Vec<Metric> {
        metrics()
    }

    fn evaluate(&mut self, c: &Config) -> Outcome {
        match self.eval(c) {
            Ok(Ok(v)) => Outcome::Ok(v),
            Ok(Err(why)) => Outcome::Infeasible(why),
            // Plan or workload errors (tp not dividing heads, ...) are infeasible points too.
            Err(why) => Outcome::Infeasible(why),
        }
    }
}

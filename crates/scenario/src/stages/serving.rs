//! Operator-level simulation of one inference or training point, shared by diagnosis, impact and
//! explore: build the per-chip graph, cost every distinct operator with the device model, and
//! keep each operator's estimate so a hot spot can be explained engine by engine.
//!
//! Why separate from the stage objectives: the objectives return a few numbers per configuration
//! (fast, for search); diagnosis needs every operator's breakdown for one configuration, and its
//! suggestions must be re-simulated through exactly the same function so that a predicted effect
//! is a simulation result, not a guess.

use serde::{Deserialize, Serialize};
use tunelab_search::{Config, Value};
use tunelab_sim::device::Device;
use tunelab_sim::estimate::Estimate;
use tunelab_sim::memory::{memory_per_chip, MemoryBreakdown};
use tunelab_sim::model::{ModelDesc, OpClass};
use tunelab_sim::workload::{build_graph, GraphOptions, ParallelPlan, Workload};
use tunelab_sim::{Op, Precision};

/// An inference deployment point (what the deployment stage's configuration means).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServingPoint {
    pub batch: u64,
    pub precision: Precision,
    pub tp: u64,
    pub flash_attention: bool,
    pub fuse_epilogues: bool,
    /// vLLM's `--enable-expert-parallel` (MoE models): experts spread whole over the TP ranks.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expert_parallel: bool,
    /// Multi-node serving (`deployment.cluster`, `stages::scale`): data-parallel attention
    /// ranks (ep = tp x dp with expert parallelism), redundant experts (EPLB), the busiest
    /// expert's load over the mean, and where the ranks sit.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub dp: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub redundant_experts: u64,
    #[serde(default = "one_f", skip_serializing_if = "is_one_f")]
    pub moe_imbalance: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<tunelab_sim::topology::Placement>,
}

fn one() -> u64 {
    1
}
fn is_one(x: &u64) -> bool {
    *x == 1
}
fn is_zero(x: &u64) -> bool {
    *x == 0
}
fn one_f() -> f64 {
    1.0
}
fn is_one_f(x: &f64) -> bool {
    *x == 1.0
}

impl Default for ServingPoint {
    fn default() -> Self {
        ServingPoint { batch: 8, precision: Precision::Fp16, tp: 1, flash_attention: true, fuse_epilogues: true, expert_parallel: false, dp: 1, redundant_experts: 0, moe_imbalance: 1.0, placement: None }
    }
}

impl ServingPoint {
    /// The parallel plan this point serves with.
    pub fn plan(&self) -> ParallelPlan {
        crate::stages::scale::plan(self.tp, self.dp, self.expert_parallel, self.redundant_experts, self.placement)
    }
}

/// The serving parallel plan: tensor parallelism of degree `tp` and, with `expert_parallel`
/// (vLLM's `--enable-expert-parallel`), expert parallelism over the same ranks: ep = tp, every
/// routed expert whole on one rank (not TP-sharded), tokens dispatched and combined by
/// all-to-all; attention stays TP. Without it the plan is plain TP.
pub fn plan(tp: u64, expert_parallel: bool) -> ParallelPlan {
    let tp = tp.max(1);
    if expert_parallel {
        ParallelPlan { tp, ep: tp, expert_tp: Some(1), ..ParallelPlan::default() }
    } else {
        ParallelPlan { tp, ..ParallelPlan::default() }
    }
}

/// Which inference phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Prefill,
    Decode,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Prefill => "prefill",
            Phase::Decode => "decode",
        }
    }
}

/// One operator of the graph with its cost (time over all repeats).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpCost {
    pub name: String,
    pub class: OpClass,
    pub repeat: u64,
    pub op: Op,
    pub time_us: f64,
    pub estimate: Estimate,
}

/// A phase costed operator by operator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseCost {
    pub phase: Phase,
    pub ops: Vec<OpCost>,
    pub total_us: f64,
    pub energy_uj: f64,
    pub memory: MemoryBreakdown,
    /// Sequences processed by one step (the batch).
    pub batch: u64,
}

impl PhaseCost {
    /// Generated tokens per second of a decode step (batch / step time), or prompt tokens per
    /// second of a prefill (batch x input / time) when `tokens_per_seq` is the input length.
    pub fn tokens_per_s(&self, tokens_per_seq: u64) -> f64 {
        if self.total_us > 0.0 { (self.batch * tokens_per_seq) as f64 / (self.total_us * 1e-6) } else { 0.0 }
    }
}

/// The workload of a phase: decode is costed at the mean context (prompt plus half the output).
pub fn workload(phase: Phase, batch: u64, input_len: u64, output_len: u64) -> Workload {
    match phase {
        Phase::Prefill => Workload::Prefill { batch, input_len },
        Phase::Decode => Workload::Decode { batch, context_len: input_len + output_len / 2, output_len: output_len - output_len / 2 },
    }
}

/// Graph options of a serving point.
pub fn graph_options(p: &ServingPoint) -> GraphOptions {
    GraphOptions { precision: p.precision, flash_attention: p.flash_attention, fuse_epilogues: p.fuse_epilogues, moe_imbalance: p.moe_imbalance, ..GraphOptions::default() }
}

pub use crate::stages::graphcost::{Memo, TileMode};

/// How operators are tiled for a scenario: tuned (the deployment stage's coordinate descent) when
/// its deployment or runtime stage tiles operators, else the device model's default tiling.
pub fn tile_mode(s: &crate::spec::scenario::Scenario) -> TileMode {
    use crate::spec::scenario::Stage;
    if matches!(s.stage, Stage::Deployment | Stage::Runtime) && s.deployment.tile_operators {
        TileMode::Best
    } else {
        TileMode::Default
    }
}

/// Costs any workload under a plan and options at default tilings; out-of-memory and infeasible
/// operators are errors with the reason.
pub fn cost(model: &ModelDesc, device: &Device, w: &Workload, plan: &ParallelPlan, opts: &GraphOptions) -> Result<(Vec<OpCost>, MemoryBreakdown), String> {
    cost_with(model, device, w, plan, opts, &mut Memo::default(), TileMode::Default)
}

/// Like `cost`, with a tile mode and a memo shared across calls (eager launch: every operator
/// pays its own launch).
pub fn cost_with(model: &ModelDesc, device: &Device, w: &Workload, plan: &ParallelPlan, opts: &GraphOptions, memo: &mut Memo, mode: TileMode) -> Result<(Vec<OpCost>, MemoryBreakdown), String> {
    let memory = memory_per_chip(model, w, plan, opts, None)?;
    if memory.total > device.memory_bytes {
        let g = |b: u64| b as f64 / (1u64 << 30) as f64;
        return Err(format!(
            "out of memory: {:.1} GiB per chip (weights {:.1}, KV cache {:.1}, activations {:.1}) > {:.0} GiB",
            g(memory.total), g(memory.weights), g(memory.kv_cache), g(memory.activations), g(device.memory_bytes)
        ));
    }
    let graph = build_graph(model, w, plan, opts)?;
    let mut ops = Vec::with_capacity(graph.ops.len());
    for o in graph.ops {
        let e = memo.op(&o.op, device, mode).map_err(|e| format!("{}: {e}", o.name))?;
        ops.push(OpCost { time_us: e.time_us * o.repeat as f64, name: o.name, class: o.class, repeat: o.repeat, op: o.op, estimate: e });
    }
    Ok((ops, memory))
}

/// Costs one inference phase of a serving point at default tilings.
pub fn cost_phase(model: &ModelDesc, device: &Device, phase: Phase, p: &ServingPoint, input_len: u64, output_len: u64) -> Result<PhaseCost, String> {
    cost_phase_with(model, device, phase, p, input_len, output_len, &mut Memo::default(), TileMode::Default)
}

/// Costs one inference phase of a serving point with a tile mode and a shared memo.
#[allow(clippy::too_many_arguments)]
pub fn cost_phase_with(model: &ModelDesc, device: &Device, phase: Phase, p: &ServingPoint, input_len: u64, output_len: u64, memo: &mut Memo, mode: TileMode) -> Result<PhaseCost, String> {
    let w = workload(phase, p.batch.max(1), input_len.max(1), output_len.max(1));
    let (ops, memory) = cost_with(model, device, &w, &p.plan(), &graph_options(p), memo, mode)?;
    let total_us = ops.iter().map(|o| o.time_us).sum();
    let energy_uj = ops.iter().map(|o| o.estimate.energy_uj * o.repeat as f64).sum();
    Ok(PhaseCost { phase, ops, total_us, energy_uj, memory, batch: p.batch.max(1) })
}

/// Reads a serving point from a configuration by parameter name; names it does not know keep
/// the scenario's defaults (batch from the workload, precision from the model).
pub fn point_from_config(names: &[String], c: &Config, default: ServingPoint) -> ServingPoint {
    let mut p = default;
    for (n, v) in names.iter().zip(&c.0) {
        match (n.as_str(), v) {
            ("batch" | "batch_size", v) => p.batch = v.as_i64().unwrap_or(p.batch as i64).max(1) as u64,
            ("tp" | "tensor_parallel", v) => p.tp = v.as_i64().unwrap_or(p.tp as i64).max(1) as u64,
            ("precision", Value::Str(s)) => p.precision = Precision::parse(s).unwrap_or(p.precision),
            ("attention" | "flash_attention", v) => p.flash_attention = flag(v, "flash").unwrap_or(p.flash_attention),
            ("fuse_epilogues" | "epilogue_fusion" | "epilogues", v) => p.fuse_epilogues = flag(v, "fused").unwrap_or(p.fuse_epilogues),
            ("expert_parallel", v) => p.expert_parallel = flag(v, "on").unwrap_or(p.expert_parallel),
            ("dp", v) => p.dp = v.as_i64().unwrap_or(p.dp as i64).max(1) as u64,
            ("redundant_experts", v) => p.redundant_experts = v.as_i64().unwrap_or(p.redundant_experts as i64).max(0) as u64,
            _ => {}
        }
    }
    p
}

fn flag(v: &Value, on: &str) -> Option<bool> {
    match v {
        Value::Str(s) => Some(s == on || s == "on" || s == "true" || s == "fused" || s == "flash"),
        v => v.as_i64().map(|x| x != 0),
    }
}

/// The scenario's default serving point for a model: workload batch, model precision.
pub fn default_point(s: &crate::spec::scenario::Scenario, model: &ModelDesc) -> ServingPoint {
    let precision = crate::stages::context::native_precision(model.dtype, true);
    let batch = if s.workload.batch > 0 { s.workload.batch as u64 } else { s.workload.dynamic_batches.first().copied().unwrap_or(1).max(1) as u64 };
    let mut p = ServingPoint { batch, precision, ..ServingPoint::default() };
    // A multi-node deployment: its placement and expert imbalance (`stages::scale`).
    if let Some(c) = &s.deployment.cluster {
        if let Ok((_, d, _)) = crate::context::resolve(s) {
            p.placement = tunelab_sim::topology::Placement::of(&d, c.superpod).ok();
        }
        p.moe_imbalance = c.moe_imbalance.unwrap_or(crate::stages::scale::constants().moe_imbalance);
    }
    p
}

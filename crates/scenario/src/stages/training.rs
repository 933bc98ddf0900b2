//! The training stage: parallel degrees (TP, PP with virtual stages, DP, CP, EP), micro-batch,
//! recomputation, ZeRO or the distributed optimiser, sequence parallelism and precision, for a
//! fixed global batch on a fixed number of chips, as Megatron-LM / MindSpeed-LLM run it. The
//! device model costs the per-chip training graph (`workload::build_graph`); this file adds the
//! schedule.
//!
//! Step time = pipeline + exposed data-parallel communication + optimizer + framework overhead:
//! - a micro-batch takes the longer of its device time and its eager launch time: torch_npu
//!   launches every operator from the host (the kernel library's dispatch cost `eager_host_us_per_launch`,
//!   `cost::dispatch`), and the launch queue hides whichever is shorter;
//! - pipeline: interleaved 1F1B runs m micro-batches through pp stages of v virtual chunks in
//!   m + (pp - 1) / v micro-batch slots (Narayanan et al. 2021, "Efficient Large-Scale Language
//!   Model Training on GPU Clusters Using Megatron-LM", sections 2.2.1-2.2.2); point-to-point
//!   activation transfers happen 2 v times per micro-batch and are not overlapped;
//! - data-parallel gradient communication is accounted per micro-batch where it happens per
//!   micro-batch (ZeRO-2/3), else once per step; with --overlap-grad-reduce (default on) the
//!   step's one reduction hides under the last micro-batch's backward, the ZeRO-2 per-micro-batch
//!   reduce-scatter under its own micro-batch's backward; ZeRO-3 parameter gathers are prefetched
//!   one layer ahead, so each pass's first layer's gather is always exposed and the rest only
//!   where it outlasts the pass's compute; the distributed optimiser's parameter all-gather is
//!   exposed unless --overlap-param-gather;
//! - framework overhead per step and per micro-batch, and the kernels the framework's model code
//!   runs for a norm, rotary embedding or gated activation (`training.framework`: Megatron /
//!   MindSpeed, MindFormers in graph mode, DeepSpeed on Hugging Face code; constants with
//!   sources in assets/constants/training.json).
//!
//! MFU uses the published tables' basis (Chowdhery et al. 2022, PaLM appendix B; Megatron's
//! model-FLOPs): 6 N + 12 L H Q T per token, N active parameters, recomputation excluded, over
//! chips x peak. Learning rate and batch advice is not simulated; it comes from
//! `crate::empirical`, a labelled published fit.
//!
//! Gradient accumulation is derived, not searched: global batch = micro-batch x accumulation x dp,
//! so every configuration trains the same tokens per step and step times compare fairly.

pub mod empirical;
mod inputs;
pub mod layouts;
mod memory;
mod operators;
mod space;

pub use inputs::advice;
pub(crate) use inputs::{inputs, Inputs};
pub use memory::memory_gib;
pub use operators::{step_operators, TrainStepOps};
// The options are specification data; re-exported for existing paths.
pub use crate::spec::options::training::{TrainingOptions, MAX_TRAIN_LEVELS};

impl TrainingOptions {
    /// Sets the scenario-wide switches (overlap, MoE imbalance) on a decoded point.
    pub fn apply(&self, p: &mut TrainPoint) {
        p.train.overlap_grad_reduce = self.overlap_grad_reduce;
        p.train.overlap_param_gather = self.overlap_param_gather;
        if let Some(x) = self.moe_imbalance {
            p.moe_imbalance = x;
        }
        p.train.moe_dispatcher = if self.moe_token_dispatcher == "allgather" { MoeDispatcher::AllGather } else { MoeDispatcher::AllToAll };
        p.train.moe_grouped_gemm = self.moe_grouped_gemm;
        p.train.grad_accum_fusion = self.gradient_accumulation_fusion;
        p.train.cp_algo = if self.context_parallel_algo == "ulysses" { CpAlgo::Ulysses } else { CpAlgo::Ring };
        p.train.general_mask = self.attention_mask_type == "general";
        p.train.moe_permutation_async_comm = self.moe_permutation_async_comm;
        p.train.frozen_vision = self.frozen.iter().any(|f| f == "vision");
        p.train.frozen_llm = self.frozen.iter().any(|f| f == "llm");
        p.train.lora_rank = self.lora_rank;
        p.train.lora_mlp = self.lora_targets == "attention_mlp";
        p.train.framework = TrainFramework::parse(&self.framework).unwrap_or_default();
        p.train.unfused = self.unfused();
        p.train.dualpipev = self.pipeline_schedule == "dualpipev";
        p.train.document_len = self.document_len.unwrap_or(0);
    }

    /// The fused kernels `unfused_kernels` turns off.
    pub fn unfused(&self) -> Unfused {
        let off = |k: &str| self.unfused_kernels.iter().any(|x| x == k);
        Unfused { rms_norm: off("rms_norm"), rotary: off("rotary"), swiglu: off("swiglu") }
    }
}
pub use space::{check_domains, decode, graph_options, space_params, space_params_for, PARAMS};

use crate::spec::scenario::Scenario;
use crate::stages::StageSetup;
use memory::GIB;
use space::integral_ranges;
use tunelab_search::{Config, Metric, Objective, Outcome, Space, Value};
use tunelab_sim::cost::dispatch::{self, LaunchMode};
use tunelab_sim::device::Device;
use tunelab_sim::model::ModelDesc;
use tunelab_sim::op::Link;
use tunelab_sim::tiling::Tiling;
use tunelab_sim::workload::{build_graph, training_constants, CpAlgo, FrameworkConstants, MoeDispatcher, ParallelPlan, PipelineStage, Recompute, TrainFramework, TrainOptions, Unfused, Workload};
use tunelab_sim::{Op, Precision};
use crate::stages::serving::OpCost;

/// Chips per server (Atlas 800T / 900 A2 nodes hold 8 NPUs on one HCCS mesh): groups larger
/// than this cross nodes over RoCE.
pub const CHIPS_PER_NODE: u64 = 8;

/// One point of the training space, decoded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrainPoint {
    pub plan: ParallelPlan,
    pub micro_batch: u64,
    pub train: TrainOptions,
    pub precision: Precision,
    /// Busiest expert over the mean (MoE models).
    pub moe_imbalance: f64,
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
    /// Tokens per second per chip (the published tables' unit).
    pub tokens_per_s_per_chip: f64,
    /// Where the step goes, ms: compute (incl. TP/EP/CP collectives inside layers), pipeline
    /// bubble, P2P, exposed DP, optimizer, framework.
    pub breakdown: Vec<(String, f64)>,
    /// Which gradient/parameter communication overlaps and which is exposed, in words.
    pub overlap_note: String,
    /// The stage that set the pace under an uneven layer split (`pipeline_layers`); None for
    /// the even split.
    pub busiest_stage: Option<PipelineStage>,
    /// Model TFLOP/s per chip (`layouts::model_tflops_per_chip`).
    pub model_tflops_per_chip: f64,
}

/// Which link a parallel group's collectives cross, with Megatron's rank order (TP fastest, then
/// CP, EP/DP, PP outermost) and `CHIPS_PER_NODE` chips per node.
fn group_link(inner: u64, degree: u64) -> Link {
    if inner.saturating_mul(degree) > CHIPS_PER_NODE {
        Link::InterNode
    } else {
        Link::Hccs
    }
}

/// Simulates one training step with layers split evenly over the pipeline stages. `Err` is an
/// infeasible point with its reason.
pub fn simulate(model: &ModelDesc, device: &Device, p: &TrainPoint, seq_len: u64, global_batch: u64, chips: u64) -> Result<TrainResult, String> {
    simulate_split(model, device, p, &[], seq_len, global_batch, chips)
}

/// One pipeline stage's share of a step, per micro-batch unless named otherwise, us.
#[derive(Clone, Copy, Default)]
struct StageCosts {
    /// Forward (with the launch time the device waits for and the MoE host waits).
    fwd: f64,
    /// Backward and recomputation.
    bwd: f64,
    /// The weight-gradient matmuls inside `bwd` (DualPipe-V's W).
    wgrad: f64,
    p2p: f64,
    /// MoE layers' host synchronisation inside fwd + bwd.
    sync: f64,
    optimizer: f64,
    dp_once: f64,
    dp_per_mb: f64,
    zero3_per_mb: f64,
    param_gather: f64,
    graph_model_flops: f64,
    layers: f64,
    mem_gib: f64,
}

/// Simulates one training step; `stage_layers` is an uneven split of the layers over the
/// pipeline stages, first to last (MindSpeed-LLM's --num-layer-list; empty: the even split).
/// Each stage is priced and sized on its own: the slowest sets the pipeline's pace (1F1B runs
/// every stage at the slowest one's rate), the largest memory decides whether the point fits.
pub fn simulate_split(model: &ModelDesc, device: &Device, p: &TrainPoint, stage_layers: &[u64], seq_len: u64, global_batch: u64, chips: u64) -> Result<TrainResult, String> {
    simulate_listed(model, device, p, (stage_layers, &[]), seq_len, global_batch, chips, None)
}

/// Simulates one training step under the scenario's layout options (`pipeline_layers`,
/// `recompute_layers`, `chips`): the one path the stage, its operator list and the diagnosis
/// share.
pub fn simulate_options(model: &ModelDesc, device: &Device, p: &TrainPoint, o: &TrainingOptions, seq_len: u64, global_batch: u64) -> Result<TrainResult, String> {
    simulate_listed(model, device, p, (&o.pipeline_layers, &o.recompute_layers), seq_len, global_batch, o.chips, None)
}

/// `simulate_split`, handing the busiest stage's priced operators to `listed` when given (the
/// step's operator breakdown, `step_operators`: the same pricing, done once).
#[allow(clippy::too_many_arguments)]
fn simulate_listed(model: &ModelDesc, device: &Device, p: &TrainPoint, (stage_layers, recompute_layers): (&[u64], &[u64]), seq_len: u64, global_batch: u64, chips: u64, listed: Option<&mut Vec<OpCost>>) -> Result<TrainResult, String> {
    let plan = &p.plan;
    if plan.chips() != chips {
        return Err(format!("tp x pp x cp x dp = {} but the job has {chips} chips", plan.chips()));
    }
    if p.train.grad_accum == 0 {
        return Err(format!("global batch {global_batch} is not a multiple of micro_batch x dp = {}", p.micro_batch * plan.dp));
    }
    if plan.sequence_parallel && plan.tp == 1 {
        return Err("sequence parallelism shards activations inside the tensor-parallel group, so it needs tp > 1 (at tp = 1 it would change nothing)".into());
    }
    if plan.ep > 1 && !(plan.dp.saturating_mul(plan.cp)).is_multiple_of(plan.ep) {
        return Err(format!("ep = {} must divide dp x cp = {} (experts are spread over the data- and context-parallel ranks)", plan.ep, plan.dp * plan.cp));
    }
    if plan.cp > 1 && !seq_len.is_multiple_of(2 * plan.cp) {
        return Err(format!("cp = {}: the sequence length {seq_len} must split into 2 x cp equal chunks (load-balanced causal context parallelism)", plan.cp));
    }
    let accum = p.train.grad_accum;
    if plan.vpp > 1 && !accum.is_multiple_of(plan.pp) {
        return Err(format!("vpp = {}: the interleaved schedule needs the {accum} micro-batches to be a multiple of pp = {}", plan.vpp, plan.pp));
    }
    let k = training_constants();
    let fw = k.framework(p.train.framework);
    let m = accum as f64;
    let (costs, busiest_stage, mem_gib) = busiest_stage(model, device, p, (stage_layers, recompute_layers), seq_len, fw, m, listed)?;
    let StageCosts { fwd, bwd, p2p, sync: sync_mb, optimizer, dp_once, dp_per_mb, zero3_per_mb, param_gather, graph_model_flops, layers: layers_here, .. } = costs;
    let per_mb = fwd + bwd;
    // The schedule's idle time and activation transfers (1F1B, interleaved or DualPipe-V).
    let pipe = layouts::pipeline(p, m, fwd, bwd, costs.wgrad, p2p)?;
    let (bubble_us, p2p_us) = (pipe.bubble_us, pipe.p2p_us);
    let mb_overhead_us = fw.micro_batch_overhead_ms.value * 1e3 * m;
    // Data-parallel exposure (see the module notes).
    let overlap = p.train.overlap_grad_reduce;
    let once_exposed = if overlap { (dp_once - bwd).max(0.0) } else { dp_once };
    let per_mb_exposed = m * if overlap { (dp_per_mb - bwd).max(0.0) } else { dp_per_mb };
    // ZeRO-3: half the gathers precede forward passes, half backward passes; prefetching one
    // layer ahead hides all but the first layer's gather of each pass.
    let z_half = zero3_per_mb / 2.0;
    let zero3_exposed = m * ((z_half - fwd).max(0.0) + (z_half - bwd).max(0.0) + 2.0 * z_half / layers_here).min(zero3_per_mb);
    let gather_exposed = if p.train.overlap_param_gather { (param_gather - fwd).max(0.0) } else { param_gather };
    let exposed = once_exposed + per_mb_exposed + zero3_exposed + gather_exposed;
    let framework_us = fw.step_ms.value * 1e3;
    let compute_us = per_mb * m;
    let step_us = compute_us + bubble_us + p2p_us + mb_overhead_us + exposed + optimizer + framework_us;
    let tokens = global_batch as f64 * seq_len as f64;
    let peak = match p.precision {
        Precision::Fp32 => device.derived.peak_tflops_fp32,
        _ => device.derived.peak_tflops_fp16,
    } * 1e12;
    let mfu = if model.llm.is_some() {
        model_flops_per_token(model, seq_len) * tokens / (step_us * 1e-6) / (chips as f64 * peak)
    } else {
        graph_model_flops / (step_us * 1e-6) / peak
    };
    let mut notes = Vec::new();
    let sharding = match (p.train.zero_stage, p.train.distributed_optimizer) {
        (3, _) => "ZeRO-3: parameter gathers prefetched one layer ahead (first layer of each pass exposed); gradient reduce-scatter per micro-batch under its backward",
        (2, _) => "ZeRO-2: gradient reduce-scatter every micro-batch, overlapped with that micro-batch's backward",
        (_, true) | (1, _) => "gradients reduce-scattered once per step",
        _ => "gradients all-reduced once per step",
    };
    notes.push(sharding.to_string());
    if p.train.zero_stage < 3 {
        notes.push(if overlap { "the step's reduction overlaps the last micro-batch's backward (--overlap-grad-reduce)".into() } else { "the step's reduction is exposed (no --overlap-grad-reduce)".to_string() });
    }
    if param_gather > 0.0 {
        notes.push(if p.train.overlap_param_gather { "updated-parameter all-gather overlaps the next forward".into() } else { "updated-parameter all-gather exposed after the optimizer".to_string() });
    }
    let ms = |x: f64| x / 1e3;
    let breakdown = vec![
        ("compute (incl. TP/EP/CP collectives)".to_string(), ms(compute_us - sync_mb * m)),
        (MOE_SYNC.to_string(), ms(sync_mb * m)),
        ("bubble (pipeline fill and drain)".to_string(), ms(bubble_us)),
        ("p2p (pipeline activation transfers)".to_string(), ms(p2p_us)),
        ("exposed DP communication".to_string(), ms(exposed)),
        ("optimizer".to_string(), ms(optimizer)),
        ("framework overhead".to_string(), ms(framework_us + mb_overhead_us)),
    ];
    Ok(TrainResult {
        step_time_ms: step_us / 1e3,
        mfu,
        memory_gib: mem_gib,
        tokens_per_s: tokens / (step_us * 1e-6),
        bubble_fraction: pipe.bubble_fraction,
        dp_comm_exposed_ms: exposed / 1e3,
        grad_accum: accum,
        tokens_per_s_per_chip: tokens / (step_us * 1e-6) / chips as f64,
        breakdown,
        overlap_note: notes.join("; "),
        busiest_stage,
        model_tflops_per_chip: layouts::model_tflops_per_chip(mfu, peak / 1e12),
    })
}

/// The pipeline stage that sets the step's pace (the even split's one stage, or the busiest of
/// an uneven `stage_layers` split: 1F1B runs every stage at the slowest one's rate), its costs,
/// and the largest memory of any stage (which decides whether the point fits). `listed`, when
/// given, receives the busiest stage's priced operators.
#[allow(clippy::too_many_arguments)]
fn busiest_stage(model: &ModelDesc, device: &Device, p: &TrainPoint, (stage_layers, recompute_layers): (&[u64], &[u64]), seq_len: u64, fw: &FrameworkConstants, m: f64, listed: Option<&mut Vec<OpCost>>) -> Result<(StageCosts, Option<PipelineStage>, f64), String> {
    let plan = &p.plan;
    let mut stages = vec![*plan];
    let stage_layers = &layouts::stages_for(model, p, stage_layers, recompute_layers)?;
    if !stage_layers.is_empty() {
        let total = model.llm.as_ref().map(|t| t.layers).ok_or("training.pipeline_layers: an uneven layer split needs a transformer description")?;
        let sum = stage_layers.iter().fold(0u64, |a, l| a.saturating_add(*l));
        if stage_layers.len() as u64 != plan.pp || sum != total || stage_layers.contains(&0) || plan.vpp > 1 {
            return Err(format!(
                "training.pipeline_layers lists {} stages holding {sum} layers, but pp = {}{} and the model has {total} layers (one positive count per stage, summing to the layers, without virtual stages)",
                stage_layers.len(), plan.pp, if plan.vpp > 1 { format!(", vpp = {}", plan.vpp) } else { String::new() }
            ));
        }
        stages = stage_layers.iter().enumerate().map(|(i, &layers)| ParallelPlan { stage: Some(PipelineStage { index: i as u64, layers }), ..*plan }).collect();
    }
    let mut busiest: Option<(StageCosts, Option<PipelineStage>, Vec<OpCost>)> = None;
    let mut mem_gib: f64 = 0.0;
    let want = listed.is_some();
    for (i, stage) in stages.iter().enumerate() {
        let mut q = TrainPoint { plan: *stage, ..*p };
        if let Some(&k) = recompute_layers.get(i) {
            q.train.recompute_layers = Some(k);
        }
        let mut ops = Vec::new();
        let c = stage_costs(model, device, &q, seq_len, fw, m, want.then_some(&mut ops)).map_err(|e| match stage.stage {
            Some(s) => format!("pipeline stage {i} ({} layers): {e}", s.layers),
            None => e,
        })?;
        mem_gib = mem_gib.max(c.mem_gib);
        if busiest.as_ref().is_none_or(|(b, _, _)| c.fwd + c.bwd > b.fwd + b.bwd) {
            busiest = Some((c, stage.stage, ops));
        }
    }
    let (costs, stage, ops) = busiest.unwrap_or_default();
    if let Some(out) = listed {
        *out = ops;
    }
    Ok((costs, stage, mem_gib))
}

/// One stage's costs (`StageCosts`) and memory: its per-chip training graph priced op by op.
/// `listed`, when given, receives every operator it prices, at the time it adds (the step's
/// operator breakdown, `step_operators`).
fn stage_costs(model: &ModelDesc, device: &Device, p: &TrainPoint, seq_len: u64, fw: &FrameworkConstants, m: f64, mut listed: Option<&mut Vec<OpCost>>) -> Result<StageCosts, String> {
    let plan = &p.plan;
    let w = Workload::TrainStep { micro_batch: p.micro_batch, seq_len };
    let opts = graph_options(p);
    let mem_gib = memory::memory_gib(model, device, p, &w, &opts)?;
    let mut graph = build_graph(model, &w, plan, &opts)?;
    // Links: TP inside a node; the others by their place in the rank order.
    let (tp, cp, dp, ep) = (plan.tp, plan.cp, plan.dp, plan.ep);
    for o in &mut graph.ops {
        if let Op::Comm { link, .. } = &mut o.op {
            *link = if o.name.starts_with("dp.expert_") {
                group_link(tp.saturating_mul(ep), dp.saturating_mul(cp) / ep.max(1))
            } else if o.name.starts_with("dp.") {
                group_link(tp, cp.saturating_mul(dp))
            } else if o.name.contains(".ep.") {
                group_link(tp, ep)
            } else if o.name.contains(".cp.") {
                group_link(tp, cp)
            } else if o.name.starts_with("pp.") {
                group_link(tp.saturating_mul(cp).saturating_mul(dp), 2)
            } else {
                Link::Hccs
            };
        }
    }
    // Host time to launch one micro-batch's layer operators in eager mode (the chip profile's
    // per-launch cost, cost::dispatch); the queue hides it unless it outlasts the device time.
    let mut host_mb = 0.0;
    let mut c = StageCosts { mem_gib, layers: model.llm.as_ref().map_or(1, |t| plan.layers_here(t.layers)).max(1) as f64, ..Default::default() };
    for o in graph.ops {
        // A model without a transformer description (a diffusion denoiser's operator graph)
        // has no closed-form FLOPs per token: its model FLOPs are the step graph's forward and
        // backward arithmetic on this chip, recomputation excluded (as PaLM's MFU excludes it).
        if !(o.name.starts_with("dp.") || o.name.starts_with("optimizer.") || o.name.contains("recompute")) {
            c.graph_model_flops += tunelab_sim::workload::op_flops(&o.op) * o.repeat as f64;
        }
        let e = tunelab_sim::cost::estimate(&o.op, &Tiling::Default, device).map_err(|e| format!("{}: {e}", o.name))?;
        let t = e.time_us * o.repeat as f64;
        if !fw.graph_launch() && !o.name.starts_with("dp.") && !o.name.starts_with("optimizer.") {
            host_mb += dispatch::host_us(device, &o.op, LaunchMode::Eager) * o.repeat as f64 / m;
        }
        if o.name.starts_with("dp.") {
            if o.name.contains("zero3_param_allgather") {
                c.zero3_per_mb += t / m;
            } else if o.name.contains("per_micro_batch") {
                c.dp_per_mb += t / m;
            } else if o.name.contains("param_allgather") {
                c.param_gather += t;
            } else {
                c.dp_once += t;
            }
        } else if o.name.starts_with("optimizer.") {
            c.optimizer += t;
        } else if o.name.starts_with("pp.") {
            c.p2p += t / m;
        } else if o.name.contains("bwd") || o.name.contains("recompute") {
            c.bwd += t / m;
            if o.name.ends_with(".bwd_weight") {
                c.wgrad += t / m;
            }
        } else {
            c.fwd += t / m;
        }
        if let Some(out) = listed.as_deref_mut() {
            out.push(OpCost { name: o.name, class: o.class, repeat: o.repeat, op: o.op, time_us: t, estimate: e });
        }
    }
    // A graph-mode framework (MindFormers) launches the micro-batch's compiled graph once.
    if fw.graph_launch() {
        host_mb = device.graph_launch_us;
    }
    // Eager mode: the host runs ahead through the launch queue, so a micro-batch takes the
    // longer of its device time and its launch time (cost::dispatch::step_us).
    c.fwd += (host_mb - (c.fwd + c.bwd)).max(0.0);
    // MoE layers: every pass through a MoE block (forward, its recomputation, backward) waits
    // on the host at the dispatcher's data-dependent shapes, and the device idles meanwhile
    // (`moe_layer_sync_ms`, the framework's block of assets/constants/training.json).
    let sync = moe_sync_us(model, p, fw.moe_layer_sync_ms.value);
    c.fwd += sync.0;
    c.bwd += sync.1;
    c.sync = sync.0 + sync.1;
    Ok(c)
}

/// The breakdown's name for the MoE layers' host synchronisation.
pub const MOE_SYNC: &str = "MoE dispatch host synchronisation (device idle)";

/// Device idle time per micro-batch on the busiest stage from the MoE blocks' host
/// synchronisation, us, (forward incl. recomputation, backward): `sync_ms` per MoE layer of the
/// stage per pass; nothing for a dense model.
pub fn moe_sync_us(model: &ModelDesc, p: &TrainPoint, sync_ms: f64) -> (f64, f64) {
    let Some(t) = model.llm.as_ref().filter(|t| t.moe.is_some()) else { return (0.0, 0.0) };
    let here = p.plan.share_here(t.moe_and_dense_layers().0, t.layers) as f64;
    let forward_passes = if p.train.recompute == Recompute::Full { 2.0 } else { 1.0 };
    let per_pass = here * sync_ms * 1e3;
    (per_pass * forward_passes, per_pass)
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
        Metric::maximize("tokens_per_s", "tokens/s"),
        Metric::minimize("bubble_fraction", ""),
        Metric::minimize("dp_comm_exposed_ms", "ms"),
        Metric::minimize("grad_accum", "steps"),
        Metric::maximize("tokens_per_s_per_chip", "tokens/s"),
        Metric::maximize("samples_per_s", "samples/s"),
        Metric::maximize("model_tflops_per_chip", "TFLOP/s"),
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
    pub options: TrainingOptions,
}

impl TrainingObjective {
    /// Decodes and simulates one configuration.
    pub fn result(&self, c: &Config) -> Result<TrainResult, String> {
        let mut p = decode(&self.names, c, self.global_batch)?;
        self.options.apply(&mut p);
        let mut r = simulate_options(&self.model, &self.device, &p, &self.options, self.seq_len, self.global_batch)?;
        if let Some(mean) = self.options.mean_seq_len {
            // tokens/s counts every token of the mean sample (image tokens included).
            let k = mean as f64 / self.seq_len.max(1) as f64;
            r.tokens_per_s *= k;
            r.tokens_per_s_per_chip *= k;
        }
        Ok(r)
    }
}

impl Objective for TrainingObjective {
    fn metrics(&self) -> Vec<Metric> {
        metrics()
    }
    fn evaluate(&mut self, c: &Config) -> Outcome {
        match self.result(c) {
            Ok(r) => Outcome::Ok(vec![r.step_time_ms, r.mfu, r.memory_gib, r.tokens_per_s, r.bubble_fraction, r.dp_comm_exposed_ms, r.grad_accum as f64, r.tokens_per_s_per_chip, self.global_batch as f64 * 1e3 / r.step_time_ms, r.model_tflops_per_chip]),
            Err(e) => Outcome::Infeasible(e),
        }
    }
}

/// Builds the training stage for a scenario.
pub fn setup(s: &Scenario) -> Result<StageSetup, String> {
    let Inputs { options: o, model, device, mut notes, seq_len, global_batch } = inputs(s)?;
    let mut params = crate::stages::apply_overrides(s, space_params_for(&o, Some(&model)))?;
    integral_ranges(&mut params);
    check_domains(&params)?;
    let chips = o.chips;
    // Degrees multiply to the chip count; the global batch splits evenly into micro-batches.
    let mut constraints = vec![format!("tp * pp * cp * dp == {chips}"), format!("{global_batch} % (micro_batch * dp) == 0")];
    // Sequence parallelism shards inside the tensor-parallel group, so it needs tp > 1.
    if params.iter().any(|p| p.name == "sequence_parallel") {
        constraints.push("sequence_parallel != \"on\" || tp > 1".into());
    }
    let space = Space::new(params, &constraints)?;
    let names = space.names().to_vec();
    if let Some(line) = layouts::describe(&o) {
        notes.push(line);
    }
    if o.document_len.is_some_and(|d| d > seq_len) {
        return Err(format!("training.document_len: {} tokens is longer than the sequence ({seq_len}): packed documents are at most one sequence long", o.document_len.unwrap_or(0)));
    }
    match advice(s) {
        Ok(a) => notes.push(a.summary),
        Err(e) => notes.push(format!("no learning-rate advice: {e}")),
    }
    let k = training_constants();
    let framework = TrainFramework::parse(&o.framework).unwrap_or_default();
    let fw = k.framework(framework);
    let launch = if fw.graph_launch() { format!("one graph launch per micro-batch ({} us)", device.graph_launch_us) } else { format!("eager launches at the kernel library's {} us each", device.eager_host_us_per_launch) };
    // The language-model kernels (norm, rotary, SwiGLU, cross-entropy, MoE) are named only for
    // a model that has them.
    // A kernel the run turns off (training.unfused_kernels) runs as the model code's own ops.
    let [norm, rotary, swiglu] = k.norm_rotary_swiglu_kernels(framework, o.unfused());
    let llm_kernels = match &model.llm {
        Some(_) => format!(
            ", RMSNorm / rotary / SwiGLU as {norm} / {rotary} / {swiglu} kernels{}, cross-entropy as {} passes over the logits",
            if o.unfused_kernels.is_empty() { String::new() } else { format!(" ({} unfused: training.unfused_kernels)", o.unfused_kernels.join(", ")) },
            fw.cross_entropy_passes.value
        ),
        None => String::new(),
    };
    let moe = if model.llm.as_ref().is_some_and(|t| t.moe.is_some()) { format!(", MoE imbalance {}", o.moe_imbalance.unwrap_or(k.moe_imbalance.value)) } else { String::new() };
    notes.push(format!(
        "training step under {}: {launch}, {} ms/step + {} ms/micro-batch{llm_kernels}, allocator fragmentation {} of activations+gradients + {:.1} GiB reserved{moe} (training.framework; constants with sources in assets/constants/training.json)",
        o.framework, fw.step_ms.value, fw.micro_batch_overhead_ms.value, k.allocator_fragmentation.value, k.allocator_reserve_bytes.value / GIB
    ));
    if model.llm.as_ref().is_some_and(|t| t.moe.is_some()) {
        notes.push(format!(
            "MoE: {} token dispatcher, {}, gradient-accumulation fusion {} (training.moe_token_dispatcher, moe_grouped_gemm, gradient_accumulation_fusion); {} ms of host synchronisation per MoE layer per pass (the dispatcher's data-dependent shapes; moe_layer_sync_ms)",
            o.moe_token_dispatcher,
            if o.moe_grouped_gemm { "grouped matmul over the local experts" } else { "one matmul per local expert (no --moe-grouped-gemm)" },
            if o.gradient_accumulation_fusion { "on" } else { "off: a separate pass adds each micro-batch's weight gradients into the main gradients" },
            fw.moe_layer_sync_ms.value
        ));
    }
    let objective = TrainingObjective { model, device, names, seq_len, global_batch, chips, options: o };
    let baseline = baseline_config(&space, &objective)?;
    Ok(StageSetup { space, objective: Box::new(objective), metrics: metrics(), baseline, focus: Vec::new(), focus_budget: 0, notes })
}

/// The "before" point: pure data parallelism at micro-batch 1 (the plain PyTorch DDP starting
/// point; with `pipeline_layers`, its pipeline stages and data parallelism over the rest), with
/// the least memory saving that fits: no sharding, then ZeRO-1, then full
/// recomputation, then ZeRO-3. If none of them is in the space, a bounded number of the space's
/// first levels along each axis are tried (never a walk over the whole, user-sized, space), and
/// if none satisfies the constraints the setup says so.
fn baseline_config(space: &Space, obj: &TrainingObjective) -> Result<Config, String> {
    let steps = [("none", "zero0"), ("none", "zero1"), ("full", "zero1"), ("full", "zero3")];
    // An uneven layer split (pipeline_layers) fixes the pipeline depth: data parallelism over
    // what the stages leave.
    let stages = obj.options.pipeline_layers.len() as u64;
    let pp = if stages > 0 && obj.chips.is_multiple_of(stages) { stages } else { 1 };
    let mut first_valid = None;
    for (rc, zero) in steps {
        let want = [Value::Int(1), Value::Int(pp as i64), Value::Int((obj.chips / pp) as i64), Value::Int(1), rc.into(), zero.into(), "off".into(), "bf16".into(), Value::Int(1), Value::Int(1), Value::Int(1)];
        let c = Config(space.params().iter().zip(want).map(|(p, v)| if p.contains(&v) { v } else { p.level_value(0) }).collect());
        if !space.contains(&c) {
            continue;
        }
        if obj.result(&c).is_ok() {
            return Ok(c);
        }
        first_valid.get_or_insert(c);
    }
    if let Some(c) = first_valid {
        return Ok(c);
    }
    // Bounded fallback: a seeded sample (a bounded number of draws; enumeration only for a
    // small space), never a walk over the whole, user-sized, space.
    if let Some(c) = space.sample(&mut tunelab_search::rng::Rng::seed_from_u64(0)) {
        return Ok(c);
    }
    Err(format!(
        "training: no configuration found that satisfies the space's constraints (tp * pp * cp * dp == {} and global batch {} divisible by micro_batch * dp); check the space overrides, workload.global_batch and training.chips",
        obj.chips, obj.global_batch
    ))
}

//! Memory per chip: weights, KV cache, activations, gradients, optimizer state and workspace, in
//! bytes, for inference and training; `strategy` adds the allocator's overhead and finds the
//! largest batch that fits.
//!
//! Sources: training activations follow Korthikanti et al. 2022, "Reducing Activation
//! Recomputation in Large Transformer Models" (arXiv:2205.05198), section 4, generalised to
//! grouped-query attention and gated MLPs; weights/gradients/optimizer states follow ZeRO
//! (Rajbhandari et al. 2020, arXiv:1910.02054), section 3: mixed-precision Adam keeps 2 + 2 + 12
//! bytes per parameter.

mod activations;
pub mod strategy;

pub use activations::{layer_activation_bytes, transient_profile, TransientProfile};
pub use strategy::{defrag_pause_s, footprint, max_batch, max_batch_or_reason, Footprint, MemoryStrategy};

use crate::model::ModelDesc;
use crate::workload::{validate_plan, GraphOptions, ParallelPlan, Recompute, TrainOptions, Workload};
use serde::{Deserialize, Serialize};

/// Bytes per chip by purpose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryBreakdown {
    pub weights: u64,
    pub kv_cache: u64,
    pub activations: u64,
    pub gradients: u64,
    pub optimizer: u64,
    /// Runtime, operator workspace and collective buffers.
    pub workspace: u64,
    /// Allocator waste (block rounding, fragmentation); 0 for the exact accounting.
    pub fragmentation: u64,
    pub total: u64,
}

impl MemoryBreakdown {
    /// Recomputes `total` from the parts.
    pub fn summed(mut self) -> Self {
        self.total = [
            self.weights,
            self.kv_cache,
            self.activations,
            self.gradients,
            self.optimizer,
            self.workspace,
            self.fragmentation,
        ]
        .iter()
        .fold(0u64, |a, &b| a.saturating_add(b));
        self
    }
}

/// Parameters held by one chip, split by the type they are stored in at inference.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChipParams {
    /// Linear-layer weights (stored in the deployment weight type, e.g. INT8).
    pub linear: u64,
    /// Embeddings, LM head, norms, biases, router (kept in 16-bit).
    pub other: u64,
}

impl ChipParams {
    pub fn total(&self) -> u64 {
        self.linear.saturating_add(self.other)
    }
}

fn ceil_div(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { a.div_ceil(b) }
}

/// Parameters on the busiest chip (the larger of the first and last pipeline stage) under the
/// plan: attention and MLP widths split tp-way, experts ep-way (their width `experts_tp`-way),
/// layers pp-way, vocabulary tp-way
/// (vocab-parallel embedding and LM head).
pub fn chip_params(model: &ModelDesc, plan: &ParallelPlan) -> ChipParams {
    let Some(t) = &model.llm else {
        let linear = model.graph.iter().fold(0u64, |a, o| a.saturating_add(o.weight_params().saturating_mul(o.repeat)));
        return ChipParams { linear, other: 0 };
    };
    let (tp, pp, ep) = (plan.tp.max(1), plan.pp.max(1), plan.ep.max(1));
    // The stack's runs on this stage, each priced by the same per-block formulas as the
    // parameter count (`TransformerDesc::mixer_chip_params`, `ffn_chip_params`).
    let (mut linear, mut other) = (0u64, 0u64);
    for r in t.runs_here(plan.layers_here(t.layers)) {
        let (ml, mo) = t.mixer_chip_params(&r.mixer, tp);
        let (fl, fo) = ffn_chip_params(t, &r.ffn, plan, ep);
        linear = linear.saturating_add(r.count.saturating_mul(ml.saturating_add(fl)));
        other = other.saturating_add(r.count.saturating_mul(mo.saturating_add(fo).saturating_add(t.run_norm_params(&r))));
    }
    let vocab_slice = ceil_div(t.vocab, tp) * t.hidden;
    let vision = model.active_vision().map_or(0, |v| {
        let e = &v.encoder;
        let patch = v.channels * v.patch_size * v.patch_size * e.hidden;
        let proj = if v.projector_hidden > 0 {
            e.hidden * v.projector_hidden + v.projector_hidden * t.hidden
        } else {
            e.hidden * t.hidden
        };
        e.layers * (e.attention_params() + e.mlp_params(e.intermediate)) / tp + patch + proj * v.mergers()
    });
    // An audio tower (`model::audio`): its blocks split tp-way like the vision tower's, the
    // rest (stem, positions, projector, norms) whole.
    let vision = vision + t.audio.as_ref().map_or(0, |a| {
        let e = &a.encoder;
        let blocks = e.layers * (e.attention_params() + e.mlp_params(e.intermediate));
        a.params() - blocks + blocks / tp
    });
    // First stage: embedding (+ vision encoder); last stage: LM head (a second copy when tied
    // and pp > 1, as Megatron keeps it) and the final norm.
    // Fine-grained TP (serving): the embedding table and the LM head split further over their
    // own groups of DP ranks; a tied head split apart from its table is a copy of its own.
    let (etp, htp) = (plan.embed_tp.max(1), plan.lmhead_tp.max(1));
    let vocab_slice = if etp > 1 { ceil_div(t.vocab, tp * etp) * t.hidden } else { vocab_slice };
    let head_slice = ceil_div(t.vocab, tp * htp) * t.hidden;
    let head = if t.tied_embeddings && pp == 1 && etp == htp { 0 } else { head_slice };
    if plan.stage.is_some() && pp > 1 {
        // One stage of an uneven split: its own ends only.
        let (first, last) = plan.stage_ends();
        let linear = if first { linear + vision } else { linear };
        let other = other + if first { vocab_slice } else { 0 } + if last { head + t.hidden } else { 0 };
        return ChipParams { linear, other };
    }
    if pp == 1 {
        return ChipParams { linear: linear + vision, other: other + vocab_slice + head + t.hidden };
    }
    let first = ChipParams { linear: linear + vision, other: other + vocab_slice };
    let last = ChipParams { linear, other: other + head + t.hidden };
    if first.total() >= last.total() { first } else { last }
}

/// A feed-forward block's parameters on one chip, as (split linear weights, replicated small
/// tensors): dense widths split tp-way; experts ep-way with their width `experts_tp`-way; the
/// router and a shared expert's gate replicated.
fn ffn_chip_params(t: &crate::model::TransformerDesc, f: &crate::model::Ffn, plan: &ParallelPlan, ep: u64) -> (u64, u64) {
    use crate::model::Ffn;
    match *f {
        Ffn::Dense { intermediate } => (t.mlp_params(ceil_div(intermediate, plan.tp.max(1))), 0),
        Ffn::Moe => match &t.moe {
            Some(m) => {
                let etp = plan.experts_tp();
                let experts = (plan.expert_slots(m.experts) / ep).saturating_mul(t.expert_params(m, ceil_div(m.expert_intermediate, etp)));
                let shared = if m.shared_intermediate > 0 { t.mlp_params(ceil_div(m.shared_intermediate, etp)) } else { 0 };
                // The shared expert's sigmoid gate exists only with a shared expert (a config may
                // name a zero-wide one, as Qwen3-MoE's do).
                let gate = if m.shared_gate && m.shared_intermediate > 0 { t.hidden } else { 0 };
                // A latent MoE's projections into and out of the latent width (replicated).
                (experts.saturating_add(shared), t.hidden * m.experts + gate + 2 * t.hidden * m.latent)
            }
            None => (0, 0),
        },
        Ffn::None => (0, 0),
    }
}

/// Routed-expert parameters on one chip (their gradients synchronise over dp x cp / ep ranks,
/// the rest over dp x cp).
pub fn expert_params_per_chip(model: &ModelDesc, plan: &ParallelPlan) -> u64 {
    let Some(t) = &model.llm else { return 0 };
    let Some(m) = &t.moe else { return 0 };
    let ep = plan.ep.max(1);
    let layers = plan.layers_here(t.layers);
    let (moe_layers, _) = t.moe_and_dense_layers();
    let moe_here = ceil_div(moe_layers.saturating_mul(layers), t.layers.max(1)).min(layers);
    (plan.expert_slots(m.experts) / ep).saturating_mul(t.expert_params(m, ceil_div(m.expert_intermediate, plan.experts_tp()))).saturating_mul(moe_here)
}

/// Parameters on the busiest chip.
pub fn params_per_chip(model: &ModelDesc, plan: &ParallelPlan) -> u64 {
    chip_params(model, plan).total()
}

/// Runtime context and operator workspace, plus collective buffers: CANN's HCCL_BUFFSIZE
/// (default 200 MB) sizes the input and output buffers each communication domain allocates.
pub fn workspace_bytes(plan: &ParallelPlan, train: bool) -> u64 {
    const RUNTIME: u64 = 512 << 20;
    const HCCL: u64 = 2 * 200_000_000;
    let domains = [plan.tp > 1, plan.pp > 1, plan.ep > 1, train && plan.dp > 1]
        .iter()
        .filter(|&&b| b)
        .count() as u64;
    RUNTIME + domains * HCCL
}

/// KV-cache bytes on one chip for `batch` sequences of `tokens` tokens (keys and values, every
/// local layer, local KV heads: 2 x layers x kv_heads x head_dim x tokens x batch x bytes / tp).
pub fn kv_cache_bytes(model: &ModelDesc, plan: &ParallelPlan, opts: &GraphOptions, batch: u64, tokens: u64) -> u64 {
    let Some(t) = &model.llm else { return 0 };
    if t.encoder {
        return 0;
    }
    // MLA caches one latent + rotary key per token, replicated on every TP rank; GQA splits its
    // KV heads over TP (replicated when tp > kv_heads).
    let per_layer = match &t.mla {
        Some(m) => m.cached_elems(),
        None => t.kv_factor() * (t.kv_heads / plan.tp.max(1)).max(1) * t.head_dim,
    };
    // Each attention run of the stage keeps its own span: sliding-window and chunked layers only
    // their window or chunk (a rolling buffer, as Mistral's reference code and vLLM's
    // sliding-window and chunked-local managers do); linear, Mamba-2 and short-conv layers hold
    // a fixed state instead (`recurrent_state_bytes`).
    let layer_tokens = t.runs_here(plan.layers_here(t.layers)).iter().map(|r| r.count.saturating_mul(r.mixer.cached_tokens(tokens))).fold(0u64, u64::saturating_add);
    // Global layers with widths of their own (Gemma 4) hold their own row per token.
    let elems = if t.has_global_widths() {
        t.runs_here(plan.layers_here(t.layers)).iter().map(|r| r.count.saturating_mul(r.mixer.cached_tokens(tokens)).saturating_mul(t.kv_elems_for(&r.mixer, plan.tp))).fold(0u64, u64::saturating_add)
    } else {
        layer_tokens.saturating_mul(per_layer)
    };
    // DeepSeek-V4's indexer keys (`model::compressor`): one row per 4 tokens on its layers.
    let elems = elems.saturating_add(t.indexer_cache_elems_here(tokens, plan.layers_here(t.layers)));
    // Decode context parallel shards every sequence's cache over dcp ranks of the TP group.
    let elems = elems.div_ceil(plan.dcp.max(1));
    elems.saturating_mul(opts.kv_dtype().bytes()).saturating_mul(batch)
}

/// Recurrent-state bytes on one chip for `batch` sequences of a model with linear-attention
/// layers (0 otherwise): the delta-rule state in FP32 (the Gated DeltaNet kernels keep it in
/// FP32) and the convolution inputs in the vector type, value heads split over TP. It does not
/// grow with the context: this is what replaces the KV cache in those layers.
pub fn recurrent_state_bytes(model: &ModelDesc, plan: &ParallelPlan, opts: &GraphOptions, batch: u64) -> u64 {
    use crate::model::Mixer;
    let Some(t) = model.llm.as_ref() else { return 0 };
    let tp = plan.tp.max(1);
    let vb = opts.vector_dtype().bytes();
    let mut per_seq = 0u64;
    for r in t.runs_here(plan.layers_here(t.layers)) {
        // (state elements kept in FP32, convolution inputs kept in the vector type)
        let (state, conv) = match r.mixer {
            Mixer::Linear => t.linear_attention.map_or((0, 0), |l| l.state_elems()),
            // Mamba-2's SSM state is kept in FP32 (`mamba_ssm_cache_dtype` float32 in vLLM's
            // Nemotron-H recipes), its conv state in the model's type.
            Mixer::Mamba2 => t.mamba.map_or((0, 0), |m| m.state_elems()),
            // LFM2's conv cache: the last kernel - 1 inputs of its hidden-wide convolution.
            Mixer::ShortConv { kernel } => (0, t.hidden.saturating_mul(kernel.saturating_sub(1))),
            _ => (0, 0),
        };
        let bytes = ceil_div(state, tp).saturating_mul(4).saturating_add(ceil_div(conv, tp).saturating_mul(vb));
        per_seq = per_seq.saturating_add(r.count.saturating_mul(bytes));
    }
    per_seq.saturating_mul(batch)
}

/// Tokens per sequence the KV cache holds (image tokens of a multimodal model included).
pub fn kv_tokens(model: &ModelDesc, w: &Workload) -> u64 {
    let image = model.media_tokens();
    match w {
        Workload::TrainStep { .. } => 0,
        _ => w.kv_tokens().saturating_add(image),
    }
}

/// The exact memory need on one chip: no allocator overhead (that is `strategy::footprint`).
/// `train` overrides `opts.train` for a training step. Errors on an invalid workload or plan.
pub fn memory_per_chip(
    model: &ModelDesc,
    w: &Workload,
    plan: &ParallelPlan,
    opts: &GraphOptions,
    train: Option<&TrainOptions>,
) -> Result<MemoryBreakdown, String> {
    crate::model::validate(model)?;
    w.validate()?;
    validate_plan(model, plan)?;
    let params = chip_params(model, plan);
    let workspace = workspace_bytes(plan, w.is_train());
    if !w.is_train() {
        // Routed experts quantised apart (`GraphOptions::expert_precision`) at their own width.
        let experts = opts.expert_precision.map_or(0, |_| expert_params_per_chip(model, plan).min(params.linear));
        let expert_bits = opts.expert_precision.map_or(0, |p| p.weight().bits());
        let weights = (params.linear - experts)
            .saturating_mul(opts.precision.weight().bits())
            .saturating_add(experts.saturating_mul(expert_bits))
            .div_ceil(8)
            .saturating_add(params.other.saturating_mul(opts.vector_dtype().bytes()));
        let kv_cache = kv_cache_bytes(model, plan, opts, w.batch(), kv_tokens(model, w)).saturating_add(recurrent_state_bytes(model, plan, opts, w.batch()));
        let activations = transient_profile(model, w, plan, opts)?.peak;
        return Ok(MemoryBreakdown { weights, kv_cache, activations, workspace, ..Default::default() }.summed());
    }
    let t = train.copied().unwrap_or(opts.train);
    if t.zero_stage > 3 {
        return Err(format!("training field 'zero_stage' = {} must be 0..=3", t.zero_stage));
    }
    let psi = params.total();
    // Fine-tuning: gradients and optimizer state only for what trains (frozen parts, LoRA).
    let trained = if t.frozen_vision || t.frozen_llm || t.lora_rank > 0 || model.graph.iter().any(|o| o.name.starts_with("frozen.")) {
        let mut o2 = *opts;
        o2.train = t;
        let fwd = crate::workload::forward_graph(model, w, plan, &o2)?.ops;
        crate::workload::trainable_per_chip(model, plan, &fwd, &t)
    } else {
        psi
    };
    // The sharded states split over the data-parallel ranks and, with context parallelism, the
    // context-parallel ranks too: every rank of a CP group holds the same weights, so Megatron's
    // distributed optimizer shards over dp x cp (megatron/core: the DistributedOptimizer's
    // group is get_data_parallel_group(with_context_parallel=True)), as DeepSpeed's ZeRO shards
    // over its sequence-data-parallel group.
    let dp = plan.dp.max(1).saturating_mul(plan.cp.max(1));
    let shard = |bytes: u64, on: bool| if on { ceil_div(bytes, dp) } else { bytes };
    let (w_bytes, mut g_bytes, o_bytes) = if t.mixed_precision { (2, 2, 12) } else { (4, 4, 8) };
    if t.fp32_grads {
        // Megatron with bf16: gradients accumulate in an fp32 main_grad buffer (6 + 12/d bytes
        // per parameter with the distributed optimizer; Megatron-LM docs, distrib_optimizer.md).
        g_bytes = 4;
    }
    let weights = shard(psi.saturating_mul(w_bytes), t.zero_stage >= 3);
    let gradients = shard(trained.saturating_mul(g_bytes), t.zero_stage >= 2);
    let optimizer = shard(trained.saturating_mul(o_bytes), t.zero_stage >= 1 || t.distributed_optimizer);
    let activations = training_activations(model, w, plan, opts, &t)?;
    Ok(MemoryBreakdown { weights, gradients, optimizer, activations, workspace, ..Default::default() }.summed())
}

/// Saved activations of a training step plus the largest transient working set.
fn training_activations(model: &ModelDesc, w: &Workload, plan: &ParallelPlan, opts: &GraphOptions, t: &TrainOptions) -> Result<u64, String> {
    let Workload::TrainStep { micro_batch: b, seq_len } = *w else { return Ok(0) };
    let transient = transient_profile(model, w, plan, opts)?.peak;
    let bytes = if t.mixed_precision { 2 } else { 4 };
    let Some(llm) = &model.llm else {
        // Operator graphs: every op's output is saved for backward; under full recomputation
        // (gradient checkpointing of each block) only the blocks' outputs (their residual adds)
        // are kept and one block is rebuilt at a time. Frozen components keep nothing.
        let elems = |f: &dyn Fn(&crate::model::GraphOpDesc) -> bool| -> u64 {
            model.graph.iter().filter(|o| !o.name.starts_with("frozen.") && f(o)).map(|o| o.output_elems().saturating_mul(o.repeat)).fold(0u64, u64::saturating_add).saturating_mul(b).saturating_mul(bytes)
        };
        let saved = if t.recompute == Recompute::Full {
            let kept = elems(&|o| o.name.contains("residual_add") || o.name.ends_with("proj_out") || matches!(o.op, crate::op::Op::Matmul { epilogue: crate::op::Epilogue::ResidualAdd, .. }));
            let largest_block = model.graph.iter().map(|o| o.output_elems()).max().unwrap_or(0).saturating_mul(b).saturating_mul(bytes).saturating_mul(8);
            kept.saturating_add(largest_block)
        } else {
            elems(&|_| true)
        };
        return Ok(saved.saturating_add(transient));
    };
    let image = model.media_tokens();
    // Context parallelism keeps s / cp tokens of each sequence per chip.
    let s = ceil_div(seq_len.saturating_add(image), plan.cp.max(1));
    let per_layer = layer_activation_bytes(llm, s, b, plan, t.recompute, opts.flash_attention, bytes);
    // Under full recomputation one layer's activations are rebuilt at a time during backward.
    let rebuilt = if t.recompute == Recompute::Full {
        layer_activation_bytes(llm, s, b, plan, Recompute::None, opts.flash_attention, bytes)
    } else {
        0
    };
    let layers = plan.layers_here(llm.layers);
    // 1F1B keeps min(pp, micro-batches) micro-batches in flight on the first stage, which
    // therefore stores L layers' worth when there are at least pp micro-batches (Korthikanti
    // et al. 2022, section 4.2.3); stage i of pp holds pp - i.
    let position = plan.stage.map_or(0, |s| s.index);
    let in_flight = plan.pp.max(1).saturating_sub(position).max(1).min(t.grad_accum.max(1));
    let mut first = per_layer.saturating_mul(layers).saturating_mul(in_flight);
    if plan.vpp > 1 && plan.pp > 1 {
        // The interleaved schedule warms up with more micro-batch chunks in flight: the first
        // stage holds 1 + (pp - 1) / (pp x v) times as much (Narayanan et al. 2021, section
        // 2.2.2; Korthikanti et al. 2022, section 4.2.3).
        let (p, v) = (u128::from(plan.pp), u128::from(plan.vpp));
        first = u64::try_from(u128::from(first) * (p * v + p - 1) / (p * v)).unwrap_or(u64::MAX);
    }
    let vision = model.active_vision().filter(|_| !t.frozen_vision).map_or(0, |v| {
        let seq = v.encoder_seq();
        layer_activation_bytes(&v.encoder, seq, b.saturating_mul(v.images), plan, t.recompute, opts.flash_attention, bytes)
            .saturating_mul(v.encoder.layers)
    });
    // Output layer: fp32 logits for the cross-entropy, 4 s b v / t bytes (section 4.3).
    let logits = 4u64.saturating_mul(s).saturating_mul(b).saturating_mul(ceil_div(llm.vocab, plan.tp.max(1)));
    let last = per_layer.saturating_mul(layers).saturating_add(logits);
    let stored = if plan.pp <= 1 {
        first.saturating_add(vision).saturating_add(logits)
    } else if plan.stage.is_some() {
        // One stage of an uneven split: its layers' micro-batches in flight, and its ends.
        let (is_first, is_last) = plan.stage_ends();
        first.saturating_add(if is_first { vision } else { 0 }).saturating_add(if is_last { logits } else { 0 })
    } else {
        first.saturating_add(vision).max(last)
    };
    Ok(stored.saturating_add(rebuilt).saturating_add(transient))
}

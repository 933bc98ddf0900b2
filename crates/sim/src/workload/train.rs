//! A training step from a forward graph: recomputation, backward, gradient accumulation, the
//! data-parallel gradient synchronisation and the optimizer update.
//!
//! Backward costs follow the usual accounting (Narayanan et al. 2021, "Efficient Large-Scale
//! Language Model Training on GPU Clusters Using Megatron-LM", section 5.1: backward = 2x forward
//! matmul FLOPs): each matmul C = A x B becomes dA = dC x B^T and dB = A^T x dC. Flash attention's
//! backward does 5 matmuls to the forward's 2 (Dao 2023, FlashAttention-2), so it runs as 2.5
//! forward attention ops.

use super::{GraphOp, GraphOptions, ParallelPlan, Recompute};
use crate::dtype::DType;
use crate::memory::{expert_params_per_chip, params_per_chip};
use crate::model::{ModelDesc, OpClass};
use crate::op::{CommKind, Epilogue, Op, VectorKind};

/// Ops inside the repeated transformer layers (what full recomputation re-runs); in an
/// operator-graph model (a diffusion denoiser under gradient checkpointing) every trainable op.
fn in_layer(o: &GraphOp, graph_model: bool) -> bool {
    if graph_model {
        return !is_frozen_component(o);
    }
    o.name.starts_with("layer") || o.name.starts_with("vision.layer")
}

/// Ops of a frozen component that only runs forward (a diffusion model's text encoders and VAE
/// encoder while the denoiser trains): named `frozen.*` by the graph that includes them.
pub fn is_frozen_component(o: &GraphOp) -> bool {
    o.name.starts_with("frozen.")
}

/// Which part of a multimodal model an op belongs to, for freezing.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Vision,
    Projector,
    Main,
    Frozen,
}

fn part(o: &GraphOp) -> Part {
    if is_frozen_component(o) {
        Part::Frozen
    } else if o.name.starts_with("vision.projector") {
        Part::Projector
    } else if o.name.starts_with("vision.") {
        Part::Vision
    } else {
        Part::Main
    }
}

/// A weight matmul (a linear layer with its own weights: batch-1 matmuls that are not the
/// attention core or a similarity product).
fn is_linear(o: &GraphOp) -> bool {
    matches!(o.op, Op::Matmul { batch: 1, .. }) && !o.name.ends_with(".core") && !o.name.contains("similarity")
}

/// Whether LoRA adapts this linear layer.
fn lora_target(o: &GraphOp, t: &super::TrainOptions) -> bool {
    t.lora_rank > 0 && !o.name.ends_with(".lora_a") && !o.name.ends_with(".lora_b") && part(o) == Part::Main && is_linear(o) && (o.class == OpClass::Attention || (t.lora_mlp && matches!(o.class, OpClass::Mlp | OpClass::Moe)))
}

/// Whether the op's own weights get gradients.
fn trains_weights(o: &GraphOp, t: &super::TrainOptions) -> bool {
    match part(o) {
        Part::Frozen => false,
        Part::Vision => !t.frozen_vision,
        Part::Projector => true,
        Part::Main => !t.frozen_llm && t.lora_rank == 0,
    }
}

/// Whether the gradient must flow back through the op's input: something before it trains.
fn needs_data_grad(o: &GraphOp, t: &super::TrainOptions) -> bool {
    match part(o) {
        Part::Frozen => false,
        Part::Vision => !t.frozen_vision,
        Part::Projector => !t.frozen_vision,
        Part::Main => true,
    }
}

/// Trainable parameters of one forward op (per instance): its weights when they train, its LoRA
/// pair when adapted.
pub fn trainable_params(o: &GraphOp, t: &super::TrainOptions) -> u64 {
    let Op::Matmul { n, k, .. } = o.op else {
        return if matches!(o.op, Op::Conv2d { .. }) && trains_weights(o, t) { conv_params(&o.op) } else { 0 };
    };
    if !is_linear(o) {
        return 0;
    }
    if lora_target(o, t) {
        return t.lora_rank.saturating_mul(k.saturating_add(n));
    }
    if trains_weights(o, t) { k.saturating_mul(n) } else { 0 }
}

fn conv_params(op: &Op) -> u64 {
    match *op {
        Op::Conv2d { in_ch, out_ch, kh, kw, .. } => in_ch.saturating_mul(out_ch).saturating_mul(kh * kw),
        _ => 0,
    }
}

/// The forward ops of the LoRA pairs beside the adapted linear layers: x A (m x r) then (x A) B.
fn lora_forward(fwd: &[GraphOp], t: &super::TrainOptions) -> Vec<GraphOp> {
    let mut out = Vec::new();
    for o in fwd.iter().filter(|o| lora_target(o, t)) {
        if let Op::Matmul { batch, m, n, k, dtype, .. } = o.op {
            let r = t.lora_rank;
            out.push(renamed(o, "lora_a", Op::Matmul { batch, m, n: r, k, dtype, weight_dtype: None, epilogue: Epilogue::None }, o.repeat));
            out.push(renamed(o, "lora_b", Op::Matmul { batch, m, n, k: r, dtype, weight_dtype: None, epilogue: Epilogue::ResidualAdd }, o.repeat));
        }
    }
    out
}

fn renamed(o: &GraphOp, suffix: &str, op: Op, repeat: u64) -> GraphOp {
    GraphOp { name: format!("{}.{suffix}", o.name), op, repeat, class: o.class }
}

/// The backward ops of one forward op; `weights`: its weight gradient is needed; `data`: the
/// gradient of its input is (frozen parts skip one or both).
fn backward(o: &GraphOp, out: &mut Vec<GraphOp>, weights: bool, data: bool) {
    let r = o.repeat;
    if !weights && !data {
        return;
    }
    // The all-gather dispatcher's fp32 combine (llm::fp32_scatter_add) is one autograd Function
    // whose backward is a row gather of the 16-bit gradient: its staging ops have none, and the
    // scatter-add's is that gather.
    if o.name.contains(".moe.combine_fp32_") {
        return;
    }
    if let (true, Op::Vector { rows, row_len, .. }) = (o.name.ends_with(".moe.combine_scatter_add_fp32"), &o.op) {
        // The gradient is in the 16-bit activation type (the staging only runs in 16-bit training).
        let op = Op::Vector { kind: VectorKind::Gather, rows: *rows, row_len: *row_len, dtype: DType::Bf16 };
        out.push(renamed(o, "bwd", op, r));
        return;
    }
    match o.op {
        Op::Matmul { batch, m, n, k, dtype, weight_dtype, epilogue } => {
            if !matches!(epilogue, Epilogue::None | Epilogue::Bias) {
                // The fused activation's derivative runs on the vector unit over the output.
                let op = Op::Vector { kind: VectorKind::Elementwise, rows: batch.saturating_mul(m), row_len: n, dtype };
                out.push(renamed(o, "epilogue_bwd", op, r));
            }
            let d = Op::Matmul { batch, m, n: k, k: n, dtype, weight_dtype, epilogue: Epilogue::None };
            // A frozen linear layer still passes the gradient to its input; an attention
            // score product has no weights, so both of its gradients are data gradients.
            if data || !is_linear(o) {
                out.push(renamed(o, "bwd_data", d, r));
            }
            if weights || !is_linear(o) {
                let weight = Op::Matmul { batch, m: k, n, k: m, dtype, weight_dtype: None, epilogue: Epilogue::None };
                out.push(renamed(o, "bwd_weight", weight, r));
            }
        }
        Op::Attention { .. } => {
            let rep = r.saturating_mul(5).div_ceil(2);
            out.push(renamed(o, "bwd", o.op.clone(), rep));
        }
        Op::Vector { kind, rows, row_len, dtype } => {
            // Embedding backward is a scatter-add into the gradient table.
            let kind = if kind == VectorKind::Gather { VectorKind::Elementwise } else { kind };
            out.push(renamed(o, "bwd", Op::Vector { kind, rows, row_len, dtype }, r));
        }
        Op::Conv2d { .. } => {
            // Data gradient plus weight gradient, each about one forward convolution.
            let n = u64::from(weights) + u64::from(data);
            out.push(renamed(o, "bwd", o.op.clone(), r.saturating_mul(n)));
        }
        Op::Comm { kind, bytes, ranks, link, algorithm } => {
            // Conjugate collectives (Korthikanti et al. 2022, fig. 5): all-gather <-> reduce-scatter.
            let kind = match kind {
                CommKind::AllGather => CommKind::ReduceScatter,
                CommKind::ReduceScatter => CommKind::AllGather,
                k => k,
            };
            out.push(renamed(o, "bwd", Op::Comm { kind, bytes, ranks, link, algorithm }, r));
        }
        Op::GroupedMatmul { .. } => {
            // Data and weight gradients, each one grouped matmul of the forward's size.
            let n = u64::from(weights) + u64::from(data);
            out.push(renamed(o, "bwd", o.op.clone(), r.saturating_mul(n)));
        }
        Op::MoeComm { phase, form, tokens, hidden, top_k, ranks, dtype, link } => {
            // A dispatch's gradient goes back as a combine and a combine's as a dispatch.
            let phase = match phase {
                crate::op::MoePhase::Dispatch => crate::op::MoePhase::Combine,
                crate::op::MoePhase::Combine => crate::op::MoePhase::Dispatch,
            };
            out.push(renamed(o, "bwd", Op::MoeComm { phase, form, tokens, hidden, top_k, ranks, dtype, link }, r));
        }
    }
}

fn comm(name: &str, kind: CommKind, bytes: u64, ranks: u64, repeat: u64) -> GraphOp {
    let op = Op::Comm { kind, bytes, ranks, link: Default::default(), algorithm: Default::default() };
    GraphOp { name: name.to_string(), op, repeat, class: OpClass::Comm }
}

/// Parameters with gradients and optimizer state on one chip: all of them for a full
/// fine-tune, else those the forward graph's trainable ops hold (frozen parts and LoRA).
pub fn trainable_per_chip(model: &ModelDesc, plan: &ParallelPlan, fwd: &[GraphOp], t: &super::TrainOptions) -> u64 {
    let all = params_per_chip(model, plan);
    let partial = t.frozen_vision || t.frozen_llm || t.lora_rank > 0 || fwd.iter().any(is_frozen_component);
    if !partial {
        return all;
    }
    let total: u64 = fwd.iter().filter(|o| is_linear(o) || matches!(o.op, Op::Conv2d { .. })).map(|o| {
        let full = match o.op { Op::Matmul { n, k, .. } => n.saturating_mul(k), ref c => conv_params(c) };
        full.saturating_mul(o.repeat)
    }).fold(0u64, u64::saturating_add);
    let trainable: u64 = fwd.iter().map(|o| trainable_params(o, t).saturating_mul(o.repeat)).fold(0u64, u64::saturating_add);
    // Scale the model's own count (norms and biases included) by the trainable share of the
    // linear weights the graph shows, plus LoRA's adapters, which the model count lacks.
    let lora: u64 = fwd.iter().filter(|o| lora_target(o, t)).map(|o| trainable_params(o, t).saturating_mul(o.repeat)).fold(0u64, u64::saturating_add);
    let dense = trainable.saturating_sub(lora);
    let share = if total == 0 { 0.0 } else { dense as f64 / total as f64 };
    ((all as f64 * share) as u64).saturating_add(lora)
}

/// The framework's model code: an RMSNorm, rotary embedding or SwiGLU that one fused kernel
/// covers in Megatron/MindSpeed runs as several aten kernels in Hugging Face model code, and the
/// cross-entropy loss runs as several fp32 passes over the logits in both
/// (`*_kernels` in the framework's block of assets/constants/training.json), each a pass over
/// the same activations. The op repeats that many times, so its forward, recomputation and
/// backward, and its eager launches, all count every kernel.
/// A run that turns a fused kernel off (`TrainOptions::unfused`) runs the model code's own ops
/// instead (`TrainingConstants::norm_rotary_swiglu_kernels`).
fn unfused(mut fwd: Vec<GraphOp>, framework: super::TrainFramework, off: super::Unfused) -> Vec<GraphOp> {
    let k = super::training_constants();
    let f = k.framework(framework);
    let [norm, rotary, swiglu] = k.norm_rotary_swiglu_kernels(framework, off);
    for o in &mut fwd {
        let n = match o.op {
            Op::Vector { kind: VectorKind::RmsNorm, .. } => norm,
            Op::Vector { kind: VectorKind::Rotary, .. } => rotary,
            Op::Vector { kind: VectorKind::SwiGlu, .. } => swiglu,
            // The loss over the logits (llm.rs prices one fused 16-bit softmax pass); the
            // framework's loss code makes several fp32 passes (cross_entropy_passes).
            Op::Vector { kind: VectorKind::Softmax, .. } if o.name == "lm_head.cross_entropy" => f.cross_entropy_passes.value,
            _ => 1.0,
        };
        let n = libm::round(n).max(1.0) as u64;
        o.repeat = o.repeat.saturating_mul(n);
    }
    fwd
}

/// Packed documents with reset attention masks (`TrainOptions::document_len`): the language
/// model's attention core runs within each document, so a core over `q_len` queries (a context-
/// parallel rank's share, or the whole sequence) against `kv_len` keys becomes one causal core
/// per document of `document_len` tokens (MindSpeed-LLM passes the documents' actual_seq_len to
/// the flash-attention kernel in TND layout). Every other op, and the memory, are unchanged.
pub fn packed_attention(op: &Op, document_len: u64) -> Option<Op> {
    match *op {
        Op::Attention { kind, batch, heads, kv_heads, q_len, kv_len, head_dim, dtype, .. } if document_len > 0 && document_len < kv_len => {
            let q = document_len.min(q_len).max(1);
            Some(Op::Attention { kind, batch: batch.saturating_mul(q_len.div_ceil(q)), heads, kv_heads, q_len: q, kv_len: document_len, head_dim, causal: true, dtype })
        }
        _ => None,
    }
}

/// One optimizer step: `grad_accum` x (forward [+ recompute] + backward), then DP sync and Adam.
pub(super) fn step(model: &ModelDesc, fwd: Vec<GraphOp>, plan: &ParallelPlan, opts: &GraphOptions) -> Vec<GraphOp> {
    let t = opts.train;
    let accum = t.grad_accum.max(1);
    let graph_model = model.llm.is_none();
    let mut fwd = fwd;
    if t.document_len > 0 && !graph_model {
        for o in fwd.iter_mut().filter(|o| o.name.starts_with("layer")) {
            if let Some(op) = packed_attention(&o.op, t.document_len) {
                o.op = op;
            }
        }
    }
    // LoRA's adapter pairs run beside the layers they adapt.
    let base = fwd.clone();
    let mut fwd = unfused(fwd, t.framework, t.unfused);
    let lora = lora_forward(&fwd, &t);
    fwd.extend(lora);
    let mut ops: Vec<GraphOp> = fwd.clone();
    match t.recompute {
        Recompute::None => {}
        Recompute::Selective => {
            for o in fwd.iter().filter(|o| matches!(o.op, Op::Attention { .. })) {
                ops.push(renamed(o, "recompute", o.op.clone(), o.repeat));
            }
        }
        Recompute::Full => {
            // Partial (block) recomputation reruns k of the stage's L layers: each layer op's
            // recompute repeats k / L as often (its repeat counts the stage's layers).
            let here = model.llm.as_ref().map_or(1, |m| plan.layers_here(m.layers)).max(1);
            let share = |r: u64| match t.recompute_layers {
                Some(k) if !graph_model => (r.saturating_mul(k.min(here)) + here / 2) / here,
                _ => r,
            };
            // A frozen part that no gradient crosses (LLaVA's CLIP tower, run under no_grad) keeps
            // no activations for a backward, so nothing of it is recomputed.
            for o in fwd.iter().filter(|o| in_layer(o, graph_model) && (needs_data_grad(o, &t) || trains_weights(o, &t))) {
                let r = if o.name.starts_with("layer") { share(o.repeat) } else { o.repeat };
                if r > 0 {
                    ops.push(renamed(o, "recompute", o.op.clone(), r));
                }
            }
        }
    }
    for o in fwd.iter().rev() {
        let adapter = o.name.ends_with(".lora_a") || o.name.ends_with(".lora_b");
        let w = adapter || (trains_weights(o, &t) && !lora_target(o, &t));
        backward(o, &mut ops, w, needs_data_grad(o, &t));
    }
    // Without gradient-accumulation fusion each micro-batch's weight gradients are added into
    // the main gradient buffer by a separate elementwise pass (Megatron DDP's backward hook,
    // `param.main_grad.add_(param.grad)`): read main_grad and grad, write main_grad. A two-input
    // elementwise op moves 3 passes of its type per element (12 bytes in fp32), so the pass is
    // one such op over (main + main + grad bytes) / 12 elements per parameter.
    if !t.grad_accum_fusion {
        let params = params_per_chip(model, plan);
        let main = if t.fp32_grads || !t.mixed_precision { 4 } else { 2 };
        let grad = if t.mixed_precision { 2 } else { 4 };
        const ROW: u64 = 4096;
        let rows = params.saturating_mul(2 * main + grad).div_ceil(12 * ROW);
        if rows > 0 {
            let op = Op::Vector { kind: VectorKind::Elementwise, rows, row_len: ROW, dtype: DType::Fp32 };
            ops.push(GraphOp { name: "grad.main_grad_add.bwd".into(), op, repeat: 1, class: OpClass::Other });
        }
    }
    for o in &mut ops {
        o.repeat = o.repeat.saturating_mul(accum);
    }

    // Gradients synchronise over the data- and context-parallel ranks (Megatron reduces over
    // dp x cp); routed experts' over dp x cp / ep, since each expert lives on one EP rank.
    let params = trainable_per_chip(model, plan, &base, &t);
    let expert = if params < params_per_chip(model, plan) { 0 } else { expert_params_per_chip(model, plan).min(params) };
    // fp32 main gradients (Megatron's bf16 default) are reduced in fp32.
    let grad_bytes = if t.mixed_precision && !t.fp32_grads { 2 } else { 4 };
    let dense_ranks = plan.dp.saturating_mul(plan.cp.max(1));
    let expert_ranks = (dense_ranks / plan.ep.max(1)).max(1);
    let sharded = t.zero_stage >= 1 || t.distributed_optimizer;
    // Parameters are gathered in the model's type (Megatron's distributed optimizer all-gathers
    // its bf16 parameter buffer; ZeRO gathers the 16-bit weights), whatever the gradients' type.
    let param_bytes = if t.mixed_precision { 2 } else { 4 };
    for (tag, n, ranks) in [("", params - expert, dense_ranks), ("expert_", expert, expert_ranks)] {
        let bytes = n.saturating_mul(grad_bytes);
        let pbytes = n.saturating_mul(param_bytes);
        if ranks <= 1 || bytes == 0 {
            continue;
        }
        let name = |what: &str| format!("dp.{tag}{what}");
        match t.zero_stage {
            // ZeRO-3 gathers each layer's parameters before its forward and its backward, and
            // reduce-scatters gradients every micro-batch (Rajbhandari et al. 2020, section 7).
            3 => {
                ops.push(comm(&name("zero3_param_allgather"), CommKind::AllGather, pbytes, ranks, accum.saturating_mul(2)));
                ops.push(comm(&name("grad_reduce_scatter_per_micro_batch"), CommKind::ReduceScatter, bytes, ranks, accum));
            }
            // ZeRO-2 (DeepSpeed) reduce-scatters each micro-batch's gradients into the shard.
            2 => {
                ops.push(comm(&name("grad_reduce_scatter_per_micro_batch"), CommKind::ReduceScatter, bytes, ranks, accum));
                ops.push(comm(&name("param_allgather"), CommKind::AllGather, pbytes, ranks, 1));
            }
            // ZeRO-1 and Megatron's distributed optimizer accumulate locally and reduce-scatter
            // once per step, then all-gather the updated parameters.
            _ if sharded => {
                ops.push(comm(&name("grad_reduce_scatter"), CommKind::ReduceScatter, bytes, ranks, 1));
                ops.push(comm(&name("param_allgather"), CommKind::AllGather, pbytes, ranks, 1));
            }
            _ => ops.push(comm(&name("grad_allreduce"), CommKind::AllReduce, bytes, ranks, 1)),
        }
    }
    let dp = dense_ranks;
    // Adam reads weights, gradients and two moments and writes weights and moments: 7 fp32
    // tensor passes per parameter. A two-input elementwise op moves 3 passes per element, so
    // the update is one such op over 7/3 x the (possibly sharded) parameter count.
    let shard = if sharded && dp > 1 { params.div_ceil(dp) } else { params };
    const ROW: u64 = 4096;
    if shard > 0 {
        let rows = shard.saturating_mul(7).div_ceil(3 * ROW);
        let op = Op::Vector { kind: VectorKind::Elementwise, rows, row_len: ROW, dtype: DType::Fp32 };
        ops.push(GraphOp { name: "optimizer.adam".into(), op, repeat: 1, class: OpClass::Other });
    }
    ops
}

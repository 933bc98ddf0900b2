//! State-space and convolution token mixers: Mamba-2 (Dao and Gu 2024, "Transformers are SSMs:
//! Generalized Models and Efficient Algorithms Through Structured State Space Duality",
//! arXiv:2405.21060; Nemotron-H interleaves it with a few attention layers) and LFM2's gated
//! short convolution (Liquid AI's Lfm2ShortConv in transformers).
//!
//! Why these operators: a Mamba-2 layer keeps one head_dim x state matrix per head instead of a
//! KV cache. Decoding a token reads and rewrites it (fixed traffic, whatever the context); a
//! prompt runs the chunked SSD algorithm (section 6 of the paper, what mamba_ssm's
//! `mamba_chunk_scan_combined` and vLLM's kernels run): per chunk of C tokens and head,
//! C B^T (C x C x N), the masked intra-chunk output (C x C x P), the chunk state B^T X
//! (N x C x P) and the inter-chunk output C S (C x N x P). The recurrent core is named with
//! `LINEAR_CORE`, so step pricers treat it per sequence like the other recurrent mixers.

use super::{Ctx, GraphOp};
use crate::dtype::DType;
use crate::model::{Mamba2Desc, OpClass};
use crate::op::{Epilogue, Op, VectorKind};
use crate::workload::linear_attention::LINEAR_CORE;

/// A Mamba-2 layer's mixer ops (repeat 1) for `batch` sequences of `q_len` new tokens, per chip
/// (heads split over TP). The TP reduction after out_proj is the layer's own.
pub(super) fn mamba2_ops(ctx: &Ctx, m: &Mamba2Desc, p: &str, batch: u64, q_len: u64) -> Vec<GraphOp> {
    let tp = ctx.plan.tp.max(1);
    let heads = m.heads.div_ceil(tp);
    let (pd, n) = (m.head_dim, m.state);
    let groups = m.groups.div_ceil(tp).max(1);
    let inner = heads * pd;
    let tokens = batch.saturating_mul(q_len);
    let cls = OpClass::Attention;
    let h = ctx.t.hidden;
    let mm = |name: &str, rows: u64, nn: u64, k: u64| GraphOp {
        name: format!("{p}.mamba.{name}"),
        op: Op::Matmul { batch: 1, m: rows, n: nn, k, dtype: ctx.mm, weight_dtype: ctx.weight, epilogue: Epilogue::None },
        repeat: 1,
        class: cls,
    };
    let vector = |name: &str, kind: VectorKind, rows: u64, row_len: u64, dtype: DType| GraphOp { name: format!("{p}.mamba.{name}"), op: Op::Vector { kind, rows, row_len, dtype }, repeat: 1, class: cls };
    let bmm = |name: &str, b: u64, mm_: u64, nn: u64, k: u64| GraphOp {
        name: format!("{p}.mamba.{LINEAR_CORE}.{name}"),
        op: Op::Matmul { batch: b, m: mm_, n: nn, k, dtype: ctx.vec, weight_dtype: None, epilogue: Epilogue::None },
        repeat: 1,
        class: cls,
    };
    let conv_dim = inner + 2 * groups * n;
    let mut ops = vec![
        // z, x, B, C and dt in one projection.
        mm("in_proj", tokens, 2 * inner + 2 * groups * n + heads, h),
        // Depthwise causal convolution over x, B, C, then SiLU; dt softplus.
        vector("conv1d", VectorKind::Activation, tokens, conv_dim, ctx.vec),
        vector("dt", VectorKind::Activation, tokens, heads, ctx.vec),
    ];
    if q_len <= 1 {
        // One recurrence step per sequence and head: h <- exp(dt A) h + dt B x, y = C h + D x,
        // the FP32 state read and written once.
        ops.push(GraphOp {
            name: format!("{p}.mamba.{LINEAR_CORE}.recurrent"),
            op: Op::Vector { kind: VectorKind::Elementwise, rows: batch.saturating_mul(heads), row_len: pd * n, dtype: DType::Fp32 },
            repeat: 1,
            class: cls,
        });
    } else {
        let c = m.chunk.max(1).min(q_len);
        let b = batch.saturating_mul(heads).saturating_mul(q_len.div_ceil(c));
        ops.push(bmm("intra_scores", b, c, c, n));
        ops.push(bmm("intra_values", b, c, pd, c));
        ops.push(bmm("chunk_state", b, n, pd, c));
        ops.push(bmm("inter_state", b, c, pd, n));
        ops.push(GraphOp {
            name: format!("{p}.mamba.{LINEAR_CORE}.decay_mask"),
            op: Op::Vector { kind: VectorKind::Elementwise, rows: b.saturating_mul(c), row_len: c, dtype: ctx.vec },
            repeat: 1,
            class: cls,
        });
    }
    // Gated RMSNorm of y by SiLU(z), then out_proj (row-parallel).
    ops.extend(gated_norm_ops(p, m.groups, groups, tokens, inner, ctx.vec));
    if ctx.quant {
        ops.push(vector("o_quant", VectorKind::Quantize, tokens, inner, ctx.vec));
    }
    ops.push(mm("out_proj", tokens, h, inner));
    ops
}

/// The Mamba-2 gated RMSNorm (y x SiLU(z), normalised per B/C group) over `inner` channels of
/// `tokens` rows per chip (`groups` the model's, `local_groups` one chip's). With one group it is one fused kernel (vLLM's `rms_norm_gated`
/// Triton kernel). With several groups (Nemotron-H has 8), vLLM's `Mixer2RMSNormGated` takes
/// `forward_native` whenever `n_groups != 1` (vllm/model_executor/layers/mamba/mamba2/
/// mamba_mixer2.py, `forward_cuda`), as transformers' `MambaRMSNormGated` always does: ten
/// framework ops, each its own kernel, the middle ones on FP32 tensors: gate.to(float32),
/// SiLU, x * gate, pow(2), mean over the group, + eps, rsqrt, x * rsqrt, .to(bf16), weight * x.
/// Each pays its own launch (eager dispatch, or the device-side launch inside a graph).
fn gated_norm_ops(p: &str, groups: u64, local_groups: u64, tokens: u64, inner: u64, vec: DType) -> Vec<GraphOp> {
    let op = |name: &str, kind: VectorKind, rows: u64, row_len: u64, dtype: DType| GraphOp { name: format!("{p}.mamba.gated_norm{name}"), op: Op::Vector { kind, rows, row_len, dtype }, repeat: 1, class: OpClass::Attention };
    if groups <= 1 {
        return vec![op("", VectorKind::SwiGlu, tokens, inner, vec)];
    }
    let f32 = DType::Fp32;
    vec![
        op(".gate_cast", VectorKind::Cast, tokens, inner, f32),
        op(".silu", VectorKind::Activation, tokens, inner, f32),
        op(".gate_mul", VectorKind::Elementwise, tokens, inner, f32),
        op(".square", VectorKind::Elementwise, tokens, inner, f32),
        op(".mean", VectorKind::Reduce, tokens, inner, f32),
        op(".add_eps", VectorKind::Elementwise, tokens, local_groups, f32),
        op(".rsqrt", VectorKind::Elementwise, tokens, local_groups, f32),
        op(".scale", VectorKind::Elementwise, tokens, inner, f32),
        op(".cast", VectorKind::Cast, tokens, inner, vec),
        op(".weight", VectorKind::Elementwise, tokens, inner, vec),
    ]
}

/// An LFM2 short-conv layer's mixer ops (repeat 1): in_proj to B, C and x (3 h), B x, the
/// depthwise causal convolution of `kernel` taps (a decode step reads its kernel - 1 cached
/// inputs), C times the result, out_proj. Channels split over TP.
pub(super) fn short_conv_ops(ctx: &Ctx, kernel: u64, p: &str, batch: u64, q_len: u64) -> Vec<GraphOp> {
    let tp = ctx.plan.tp.max(1);
    let h = ctx.t.hidden;
    let local = h.div_ceil(tp);
    let tokens = batch.saturating_mul(q_len);
    let cls = OpClass::Attention;
    let mm = |name: &str, nn: u64, k: u64| GraphOp {
        name: format!("{p}.conv.{name}"),
        op: Op::Matmul { batch: 1, m: tokens, n: nn, k, dtype: ctx.mm, weight_dtype: ctx.weight, epilogue: Epilogue::None },
        repeat: 1,
        class: cls,
    };
    let vector = |name: &str, kind: VectorKind, row_len: u64| GraphOp { name: format!("{p}.conv.{name}"), op: Op::Vector { kind, rows: tokens, row_len, dtype: ctx.vec }, repeat: 1, class: cls };
    let mut ops = vec![mm("in_proj", 3 * local, h), vector("bx_gate", VectorKind::Elementwise, local)];
    // The convolution: kernel multiply-adds per channel and token.
    ops.push(vector("conv1d", VectorKind::Elementwise, local.saturating_mul(kernel.max(1))));
    ops.push(vector("cy_gate", VectorKind::Elementwise, local));
    if ctx.quant {
        ops.push(vector("o_quant", VectorKind::Quantize, local));
    }
    ops.push(mm("out_proj", h, local));
    ops
}

/// How an engine that runs a Mamba-2 mixer through Triton kernels launches it
/// (vLLM's `MambaMixer2.conv_ssm_forward` as vLLM-Ascend patches it,
/// `vllm_ascend/patch/worker/patch_triton.py` at vllm-ascend 58be23f5, the v0.24 base the
/// Nemotron-3-Super tutorial measured). Counts come from the structure of that code, not from
/// measurements:
/// - decode: `causal_conv1d_update_npu` (Triton, `vllm_ascend/ops/triton/mamba/causal_conv1d.py`)
///   and `selective_state_update` (vLLM's Triton kernel, with a 910B3 FP32-state block config in
///   `vllm_ascend/ops/triton/mamba/selective_state_update.py`; dt's softplus is inside it);
/// - a step with prompt tokens: the five Triton kernels of vLLM's
///   `mamba_chunk_scan_combined_varlen` (`_chunk_cumsum_fwd`, `_chunk_state_fwd`,
///   `_state_passing_fwd`, `_bmm_chunk_fwd`, and `_chunk_scan_fwd` replaced by vLLM-Ascend's
///   `_chunk_scan_fwd_npu`), after the prompt's causal convolution, which vLLM-Ascend runs
///   torch-native, sequence by sequence (`causal_conv1d_fn`: `seqlens.tolist()`, then per
///   sequence two `.item()` reads of its slot and its has-initial-state flag, `torch.cat` of the
///   cached inputs, `F.conv1d`, `F.pad` and `copy_` into the conv state, `F.silu`; a final
///   `torch.cat`). Each `.tolist()` / `.item()` waits for the device to drain, so everything
///   the layer launches after the first of them cannot run ahead of the device: it adds to the
///   step instead of hiding under it.
pub const MAMBA2_TRITON_LAUNCHES_DECODE: u64 = 2;
/// aclnn launches of a decode step's Mamba-2 mixer beyond its modelled operators, per layer:
/// `causal_conv1d_update_npu` copies the convolution weight into a transposed contiguous
/// tensor on every call (`weight = weight.transpose(0, 1).contiguous()`, vllm-ascend 58be23f5
/// `vllm_ascend/ops/triton/mamba/causal_conv1d.py`); its `conv_state.transpose(1, 2)
/// .contiguous()` is a view back to the cache's own contiguous layout (vLLM passes the state
/// transposed), so it copies nothing, and `x.to(conv_state.dtype)` is a no-op at the
/// model's dtype. The A / dt / dt_bias / D `expand`s and the splits before
/// `selective_state_update` are views (no kernel).
pub const MAMBA2_ACLNN_LAUNCHES_DECODE: u64 = 1;
/// The SSD scan's Triton kernels in a step with prompt tokens (after the convolution's sync).
pub const MAMBA2_TRITON_LAUNCHES_PREFILL: u64 = 5;
/// aclnn launches of the torch-native prompt convolution per prompt sequence in the step
/// (`torch.cat`, `F.conv1d`, `F.pad`, `copy_`, `F.silu`), after the sync.
pub const MAMBA2_CONV_LAUNCHES_PER_PROMPT: u64 = 5;
/// aclnn launches per layer around them, after the sync: the final `torch.cat`, the initial
/// states' gather and `torch.where` (a continued prompt starts from its cached state), the
/// final states' gather (`states[last_chunk_indices]`) and their scatter into the cache.
pub const MAMBA2_PREFILL_LAUNCHES_PER_LAYER: u64 = 5;

/// Host time of one step's Mamba-2 mixers under an engine that launches them as Triton
/// kernels, us: (racing the device, serial with it). `triton_us` is one Triton launch's host
/// time (the engine's `triton_launch_host_us`), `aclnn_us` one framework launch's (the chip
/// profile's `eager_host_us_per_launch`). A step with prompt tokens pays, per Mamba-2 layer,
/// the torch-native convolution of each of its `prefill_seqs` prompts and the SSD scan's
/// launches, all after the convolution's host sync (serial); when it also decodes, the decode
/// slice's launches come before the sync. A decode-only step pays the decode launches (two
/// Triton, `MAMBA2_ACLNN_LAUNCHES_DECODE` aclnn) per layer when launched eagerly or piecewise (the `mamba_mixer2` custom op runs between the
/// captured pieces), none inside a fully captured graph (FULL_DECODE_ONLY).
pub fn mamba2_host_us(triton_us: f64, aclnn_us: f64, layers: u64, prefill_seqs: u64, decode_seqs: u64, graph: bool, piecewise: bool) -> (f64, f64) {
    if triton_us <= 0.0 || layers == 0 || prefill_seqs + decode_seqs == 0 {
        return (0.0, 0.0);
    }
    let l = layers as f64;
    let decode = (MAMBA2_TRITON_LAUNCHES_DECODE as f64 * triton_us + MAMBA2_ACLNN_LAUNCHES_DECODE as f64 * aclnn_us) * l;
    if prefill_seqs > 0 {
        let serial = MAMBA2_TRITON_LAUNCHES_PREFILL as f64 * triton_us + (MAMBA2_PREFILL_LAUNCHES_PER_LAYER + MAMBA2_CONV_LAUNCHES_PER_PROMPT * prefill_seqs) as f64 * aclnn_us;
        return (if decode_seqs > 0 { decode } else { 0.0 }, serial * l);
    }
    match (graph, piecewise) {
        (true, false) => (0.0, 0.0),
        _ => (decode, 0.0),
    }
}

/// Whether the Mamba-2 mixer operator `name` is one such an engine runs inside its Triton
/// kernels or its torch-native convolution (priced per step by `mamba2_host_us`), so it pays
/// no per-operator framework dispatch of its own: the convolution, dt's softplus and the
/// recurrent core. The projections, the gated norm and the output quantisation stay aclnn.
pub fn runs_in_mamba2_kernels(name: &str) -> bool {
    name.contains(".mamba.linear_attn.core.") || name.ends_with(".mamba.conv1d") || name.ends_with(".mamba.dt")
}

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
    ops.push(vector("gated_norm", VectorKind::SwiGlu, tokens, inner, ctx.vec));
    if ctx.quant {
        ops.push(vector("o_quant", VectorKind::Quantize, tokens, inner, ctx.vec));
    }
    ops.push(mm("out_proj", tokens, h, inner));
    ops
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

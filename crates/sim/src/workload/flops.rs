//! Model FLOPs: the useful arithmetic of a workload by formula, independent of how the chips
//! execute it, for model FLOPs utilisation (MFU).
//!
//! Convention of Chowdhery et al. 2022 (PaLM, appendix B): a training token costs 6 N + 12 L H Q T
//! FLOPs (N non-embedding parameters, L layers, H heads, Q head size, T sequence length); a
//! forward token a third of that. Recomputation is not useful work and is not counted.

use super::Workload;
use crate::model::{ModelDesc, TransformerDesc};
use crate::op::Op;

/// Arithmetic of one operator instance (multiply-add = 2 FLOPs; vector ops and collectives 0).
pub fn op_flops(op: &Op) -> f64 {
    match *op {
        Op::Matmul { batch, m, n, k, .. } => 2.0 * batch as f64 * m as f64 * n as f64 * k as f64,
        Op::Attention { batch, heads, q_len, kv_len, head_dim, causal, .. } => {
            // QK^T and PV; a causal mask skips about half the scores when q_len = kv_len.
            let full = 4.0 * batch as f64 * heads as f64 * q_len as f64 * kv_len as f64 * head_dim as f64;
            if causal && q_len == kv_len { full / 2.0 } else { full }
        }
        Op::Conv2d { batch, in_ch, out_ch, h, w, kh, kw, stride, .. } => {
            let s = stride.max(1);
            2.0 * batch as f64 * out_ch as f64 * (h / s) as f64 * (w / s) as f64 * (in_ch * kh * kw) as f64
        }
        Op::GroupedMatmul { m, n, k, .. } => 2.0 * m as f64 * n as f64 * k as f64,
        Op::Vector { .. } | Op::Comm { .. } | Op::MoeComm { .. } => 0.0,
    }
}

/// Forward FLOPs per token of a transformer with `ctx` keys attended (non-embedding weights
/// active per token, plus attention over the context).
fn per_token(t: &TransformerDesc, ctx: u64, with_head: bool) -> f64 {
    let p = t.params();
    let embed = (t.vocab * t.hidden) as f64;
    // Non-embedding active weights; the LM head is a matmul and counts when logits are computed.
    let mut n = p.active as f64 - embed;
    if !t.tied_embeddings {
        n -= embed;
    }
    if with_head {
        n += embed;
    }
    2.0 * n + 4.0 * (t.layers * t.heads * t.head_dim) as f64 * ctx as f64
}

/// Useful FLOPs of the whole workload (all chips together): one prefill, one decode step, or
/// one optimizer step's micro-batch (multiply by gradient accumulation and data parallelism for
/// the global batch).
pub fn model_flops(model: &ModelDesc, w: &Workload) -> f64 {
    let b = w.batch() as f64;
    let Some(t) = &model.llm else {
        let fwd: f64 = model.graph.iter().map(|o| op_flops(&o.op) * o.repeat as f64).sum::<f64>() * b;
        return if w.is_train() { 3.0 * fwd } else { fwd };
    };
    let image = model.media_tokens();
    let vision = |b: f64| -> f64 {
        model.active_vision().map_or(0.0, |v| {
            let seq = v.encoder_seq();
            let e = v.encoder.hidden * v.merge.max(1) * v.merge.max(1);
            let ph = v.projector_hidden;
            let projector = if ph > 0 { e * ph + ph * t.hidden } else { e * t.hidden };
            b * v.images as f64 * seq as f64 * per_token(&v.encoder, seq, false)
                + b * v.image_tokens() as f64 * 2.0 * (projector * v.mergers()) as f64
        })
    };
    match *w {
        Workload::Prefill { input_len, .. } => {
            let s = input_len.saturating_add(image);
            // Logits only for the last token of each sequence.
            // A request's audio windows: stem, blocks and projector (`workload::llm::audio`).
            let audio = model.active_audio().map_or(0.0, |a| {
                let (f, h) = (a.frames as f64, a.encoder.hidden as f64);
                let stem = 2.0 * (2.0 * f * (a.mel_bins * 3) as f64 * h + f * 3.0 * h * h);
                let proj = if a.projector_hidden > 0 { a.projector_in * a.projector_hidden + a.projector_hidden * a.projector_out } else { a.projector_in * a.projector_out };
                b * a.windows as f64 * (stem + f * per_token(&a.encoder, a.frames, false) + a.tokens_each() as f64 * 2.0 * proj as f64)
            });
            b * s as f64 * per_token(t, s, false) + b * 2.0 * (t.vocab * t.hidden) as f64 + vision(b) + audio
        }
        Workload::Decode { context_len, .. } => b * per_token(t, context_len.saturating_add(image), true),
        Workload::TrainStep { seq_len, .. } => {
            let s = seq_len.saturating_add(image);
            3.0 * (b * s as f64 * per_token(t, s, true) + vision(b))
        }
    }
}

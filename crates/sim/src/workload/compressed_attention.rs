//! DeepSeek-V4's compressed attention, priced where it runs (the attention core of the layers
//! whose mixer has `compress > 0`).
//!
//! Each such layer keeps the last `window` tokens' raw KV rows (128 in the V4 configs) and one
//! pooled row per `compress` tokens of the history (`compress_ratios`: 4 for compressed sparse
//! attention, 128 for heavily compressed attention; DeepSeek-V4 model card, and the layer
//! table in antirez/ds4 `MODEL_CARD.md`). A query attends to the raw window and to the
//! compressed rows: all of them on ratio-128 layers, the `topk` an indexer selects on ratio-4
//! layers (`index_topk`: 512 in V4-Flash, 1024 in V4-Pro). The KV cache this holds is
//! `Mixer::cached_tokens` (memory, by the same mixer).
//!
//! The core is priced as an attention over that many keys per query, non-causal for a prompt
//! longer than the window (the mean keys per query, as `windowed` prices a sliding window); a
//! decoding query sees the window plus the selected rows of its whole context.
//!
//! Beside the core, each compressed layer runs (`model::compressor` names the sources: Ascend
//! msmodeling `tensor_cast/layers/deepseek_v4.py` @ c2913fb7, mirroring deepseek-ai's
//! `inference/model.py`):
//! - its compressor: `wkv` and `wgate` over every token (hidden -> coff x head_dim, coff 2 on
//!   ratio-4 layers), and the softmax-gated pooling of each window (one vector pass);
//! - on ratio-4 layers, the lightning indexer: `wq_b` on the low-rank query, `weights_proj`,
//!   its own ratio-4 compressor of index_head_dim rows, and its scores: every query against the
//!   compressed keys of its context (one per 4 tokens), ReLU, a head-weighted sum and the top-k,
//!   priced as DeepSeek-V3.2's indexer is (`sparse_attention`): an attention of index_n_heads
//!   query heads over one key head of index_head_dim / 2 (the same QK^T arithmetic and key
//!   reads), the per-score vector work standing for the ReLU, weighting and top-k. The indexer
//!   heads are split over tensor parallel (column-parallel in msmodeling's plan), the
//!   compressors replicated.
//!
//! Every layer runs two hyper-connections (`hyper_connections`): per block, the (2 + hc) x hc
//! mixing weights from the hc x hidden streams (an FP32 matmul), the Sinkhorn iterations on the
//! hc x hc combination, the weighted sum of the streams into the block's input and the write of
//! the hc updated streams (vector passes over hc x hidden per token).

use super::sparse_attention::Types;
use super::GraphOp;
use crate::dtype::DType;
use crate::model::{OpClass, TransformerDesc};
use crate::op::{AttentionKind, Epilogue, Op, VectorKind};

/// Keys one query of a `kv_len`-token context attends to on a compressed layer.
pub fn keys_per_query(kv_len: u64, window: u64, compress: u64, topk: u64) -> u64 {
    let raw = kv_len.min(window.max(1));
    let rows = kv_len.saturating_sub(raw) / compress.max(1);
    let sel = if topk > 0 { rows.min(topk) } else { rows };
    raw.saturating_add(sel).max(1)
}

/// `here` of the attention layers whose core is `name` are compressed layers: their core is
/// split off with the keys each query attends to, and their compressor and indexer operators
/// are added (for a model with `TransformerDesc::compressor`).
#[allow(clippy::too_many_arguments)]
pub fn apply(ops: &mut Vec<GraphOp>, start: usize, name: &str, window: u64, compress: u64, topk: u64, here: u64, t: &TransformerDesc, ty: Types) {
    let Some(i) = ops[start..].iter().position(|o| o.name == name).map(|i| i + start) else { return };
    let Op::Attention { kind, batch, heads, kv_heads, q_len, kv_len, head_dim, causal, dtype } = ops[i].op else { return };
    if here == 0 {
        return;
    }
    let (kv, causal) = if kind == AttentionKind::Decode || !causal || q_len != kv_len {
        (keys_per_query(kv_len, window, compress, topk), causal)
    } else {
        // A causal prompt: query j sees keys_per_query(j) keys; their mean over the prompt
        // (taken at 64 evenly spaced positions, exact for each regime's linear or flat part up
        // to a fraction of a percent), priced as a non-causal attention of that many keys.
        let n = 64u64.min(kv_len.max(1));
        let mut sum = 0f64;
        for s in 0..n {
            let j = (s * kv_len) / n + 1;
            sum += keys_per_query(j, window, compress, topk) as f64;
        }
        let mean = (sum / n as f64).ceil() as u64;
        if mean >= kv_len {
            (kv_len, true)
        } else {
            (mean.max(1), false)
        }
    };
    let op = Op::Attention { kind, batch, heads, kv_heads, q_len, kv_len: kv, head_dim, causal, dtype };
    let suffix = if compress == 1 { "_sparse".to_string() } else { format!("_compressed{compress}") };
    let win = GraphOp { name: format!("{name}{suffix}"), op, repeat: here, class: ops[i].class };
    let class = ops[i].class;
    if here >= ops[i].repeat {
        ops[i] = win;
    } else {
        ops[i].repeat -= here;
        ops.insert(i + 1, win);
    }
    let base = name.strip_suffix(".core").unwrap_or(name);
    let tp = (t.heads / heads.max(1)).max(1);
    let tokens = batch.saturating_mul(q_len);
    let rows = if kind == AttentionKind::Decode || q_len == 1 {
        kv_len / compress.max(1)
    } else {
        // The compressed keys a query of the chunk sees, on average.
        (super::sparse_attention::mean_keys(q_len, kv_len, u64::MAX).0 / compress.max(1) as f64).ceil() as u64
    };
    let extra = compressor_ops(t, base, compress, topk, tp, Geometry { kind, batch, q_len, rows, class }, tokens, ty);
    ops.extend(extra.into_iter().map(|mut o| {
        o.repeat = o.repeat.saturating_mul(here);
        o
    }));
}

/// The shape of one compressed layer's indexer scores: `rows` compressed keys per query.
struct Geometry {
    kind: AttentionKind,
    batch: u64,
    q_len: u64,
    rows: u64,
    class: OpClass,
}

/// One compressed layer's compressor (and, with an indexer, the indexer's) operators for
/// `tokens` rows, named under `base` ("layer.attn"); empty for a model without compressors.
#[allow(clippy::too_many_arguments)]
fn compressor_ops(t: &TransformerDesc, base: &str, compress: u64, topk: u64, tp: u64, g: Geometry, tokens: u64, ty: Types) -> Vec<GraphOp> {
    let Some(c) = t.compressor else { return Vec::new() };
    let mm = |name: String, n: u64, k: u64| GraphOp {
        name,
        op: Op::Matmul { batch: 1, m: tokens, n, k, dtype: ty.mm, weight_dtype: ty.weight, epilogue: Epilogue::None },
        repeat: 1,
        class: g.class,
    };
    let pool = |name: String, width: u64| GraphOp { name, op: Op::Vector { kind: VectorKind::Softmax, rows: tokens, row_len: width, dtype: ty.vec }, repeat: 1, class: g.class };
    let dtype = if g.kind == AttentionKind::Decode { ty.kv } else { ty.vec };
    if compress == 1 {
        // MiniMax-M3's block index: its projections, norms and rotary, and every cached index
        // key scored per query (the top blocks are then selected).
        if topk == 0 || c.index_heads == 0 {
            return Vec::new();
        }
        let (ih, id) = (c.index_heads.div_ceil(tp), c.index_head_dim);
        let vector = |name: String, kind: VectorKind, rows: u64| GraphOp { name, op: Op::Vector { kind, rows, row_len: id, dtype: ty.vec }, repeat: 1, class: g.class };
        let core = Op::Attention { kind: g.kind, batch: g.batch, heads: ih, kv_heads: 1, q_len: g.q_len, kv_len: g.rows.max(1), head_dim: id.div_ceil(2), causal: false, dtype };
        return vec![
            mm(format!("{base}.index.q_proj"), ih * id, t.hidden),
            mm(format!("{base}.index.k_proj"), id, t.hidden),
            vector(format!("{base}.index.qk_norm"), VectorKind::RmsNorm, tokens.saturating_mul(ih + 1)),
            vector(format!("{base}.index.rotary"), VectorKind::Rotary, tokens.saturating_mul(ih + 1)),
            GraphOp { name: format!("{base}.index.core"), op: core, repeat: 1, class: g.class },
        ];
    }
    let coff = if compress == 4 { 2 } else { 1 };
    let w = coff * t.head_dim;
    let mut ops = vec![mm(format!("{base}.compressor{compress}.wkv_wgate"), 2 * w, t.hidden), pool(format!("{base}.compressor{compress}.pool"), w)];
    if topk > 0 && c.index_heads > 0 {
        let ih = c.index_heads.div_ceil(tp);
        let id = c.index_head_dim;
        let q_in = if t.q_bottleneck > 0 { t.q_bottleneck } else { t.hidden };
        ops.push(mm(format!("{base}.indexer.wq_b"), ih * id, q_in));
        ops.push(mm(format!("{base}.indexer.weights_proj"), ih, t.hidden));
        ops.push(mm(format!("{base}.indexer.compressor.wkv_wgate"), 2 * 2 * id, t.hidden));
        ops.push(pool(format!("{base}.indexer.compressor.pool"), 2 * id));
        let core = Op::Attention { kind: g.kind, batch: g.batch, heads: ih, kv_heads: 1, q_len: g.q_len, kv_len: g.rows.max(1), head_dim: id.div_ceil(2), causal: false, dtype };
        ops.push(GraphOp { name: format!("{base}.indexer.core"), op: core, repeat: 1, class: g.class });
    }
    ops
}

/// DeepSeek-V4's hyper-connections around both blocks of `layers` layers for `tokens` rows
/// (empty for a model without them): per block the FP32 mixing matmul, the Sinkhorn
/// iterations, the weighted sum of the streams and the streams' update.
pub fn hyper_connections(t: &TransformerDesc, prefix: &str, tokens: u64, layers: u64, ty: Types) -> Vec<GraphOp> {
    let Some(c) = t.compressor.filter(|c| c.hc_mult > 1) else { return Vec::new() };
    let hc = c.hc_mult;
    let blocks = 2 * layers;
    let streams = hc.saturating_mul(t.hidden);
    let vector = |name: &str, kind: VectorKind, len: u64, dtype: DType| GraphOp { name: format!("{prefix}.hc.{name}"), op: Op::Vector { kind, rows: tokens, row_len: len, dtype }, repeat: blocks, class: OpClass::Norm };
    vec![
        GraphOp { name: format!("{prefix}.hc.mix"), op: Op::Matmul { batch: 1, m: tokens, n: c.mix(), k: streams, dtype: DType::Fp32, weight_dtype: Some(DType::Fp32), epilogue: Epilogue::None }, repeat: blocks, class: OpClass::Norm },
        // The Sinkhorn iterations (hc_sinkhorn_iters), a row and a column normalisation of the
        // hc x hc matrix each.
        vector("sinkhorn", VectorKind::Elementwise, (2 * c.hc_sinkhorn_iters * hc * hc).max(1), DType::Fp32),
        vector("pre", VectorKind::Elementwise, streams, ty.vec),
        vector("post", VectorKind::Elementwise, streams, ty.vec),
    ]
}

#[cfg(test)]
mod tests {
    use super::keys_per_query;

    #[test]
    fn keys_are_the_window_plus_the_selected_rows() {
        // Inside the window: every token.
        assert_eq!(keys_per_query(100, 128, 4, 512), 100);
        // Ratio 128 at 1M: the window and every pooled row.
        assert_eq!(keys_per_query(1 << 20, 128, 128, 0), 128 + ((1 << 20) - 128) / 128);
        // Ratio 4 at 1M: the window and the indexer's 512 rows.
        assert_eq!(keys_per_query(1 << 20, 128, 4, 512), 128 + 512);
    }
}

/// The mean of `f(j)` over the positions `kv - q + 1 ..= kv` of a prompt chunk (64 evenly
/// spaced samples, as `apply` takes them over a whole prompt).
fn chunk_mean(q: u64, kv: u64, f: impl Fn(u64) -> u64) -> u64 {
    let q = q.clamp(1, kv.max(1));
    let first = kv - q + 1;
    let n = 64u64.min(q);
    let mut sum = 0f64;
    for s in 0..n {
        sum += f(first + (s * q) / n) as f64;
    }
    ((sum / n as f64).ceil() as u64).max(1)
}

/// The scheduler's prefill-chunk table for a model with compressed, block-sparse or windowed
/// layers beside them (DeepSeek-V4, MiniMax-M3; None for any other model, which keeps the
/// scheduler's own reshaping): the attention cores of `seqs` chunks of `q` prompt tokens over
/// `kv` keys, each at the keys its queries attend to: the raw window and selected or pooled rows
/// of a compressed layer, the window of a sliding layer, the compressed keys an indexer scores.
pub fn chunk_cores(model: &crate::model::ModelDesc, plan: &super::ParallelPlan, opts: &super::GraphOptions, seqs: u64, q: u64, kv: u64) -> Option<Vec<GraphOp>> {
    use crate::model::Mixer;
    let t = model.llm.as_ref()?;
    let mixers: Vec<Mixer> = t.runs().iter().map(|r| r.mixer).collect();
    if !mixers.iter().any(|m| matches!(m, Mixer::Attention { compress, .. } if *compress > 0)) {
        return None;
    }
    let kv = kv.max(q).max(1);
    let g = super::forward_graph(model, &super::Workload::Prefill { batch: seqs, input_len: q }, plan, opts).ok()?;
    let find = |want: &dyn Fn(u64, u64, u64) -> bool| -> Option<(u64, u64, u64)> {
        mixers.iter().find_map(|m| match *m {
            Mixer::Attention { window, compress, topk, .. } if want(window, compress, topk) => Some((window, compress, topk)),
            _ => None,
        })
    };
    let mut out = Vec::new();
    for o in g.ops.into_iter().filter(|o| !o.name.starts_with("vision.") && !o.name.starts_with("audio.")) {
        let Op::Attention { kind, batch, heads, kv_heads, head_dim, dtype, .. } = o.op else { continue };
        let name = o.name.as_str();
        let (keys, causal) = if name.ends_with(".indexer.core") || name.ends_with(".index.core") {
            // The compressed (or, for MSA, every) key an indexer scores.
            let r = if name.ends_with(".index.core") { 1 } else { find(&|_, c, k| c > 1 && k > 0).map_or(4, |m| m.1) };
            (chunk_mean(q, kv, |j| j / r), false)
        } else if let Some(r) = name.rsplit_once("_compressed").and_then(|(_, r)| r.parse::<u64>().ok()) {
            let (w, c, k) = find(&|_, c, _| c == r)?;
            (chunk_mean(q, kv, |j| keys_per_query(j, w, c, k)), false)
        } else if name.ends_with("_sparse") {
            let (w, c, k) = find(&|_, c, _| c == 1)?;
            (chunk_mean(q, kv, |j| keys_per_query(j, w, c, k)), false)
        } else if name.ends_with("_window") {
            let (w, _, _) = find(&|w, c, _| c == 0 && w > 0)?;
            (chunk_mean(q, kv, |j| j.min(w)), false)
        } else {
            (kv, true)
        };
        let op = Op::Attention { kind, batch, heads, kv_heads, q_len: q, kv_len: keys, head_dim, causal: causal && q > 1, dtype };
        out.push(GraphOp { op, ..o });
    }
    Some(out)
}

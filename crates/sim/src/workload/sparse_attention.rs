//! DeepSeek sparse attention (DSA; DeepSeek-V3.2-Exp technical report, section 2; GLM-5 uses
//! the same indexer): a lightning indexer scores every earlier token for each query and the MLA
//! attention runs over only the `index_topk` best.
//!
//! What each DSA layer adds or changes, per chip (the config's `index_n_heads`,
//! `index_head_dim`, `index_topk`):
//! - Indexer projections (vLLM's `Indexer`, "no tensor parallel, just replicated": every TP rank
//!   runs all index heads): wq_b (q_lora_rank -> heads x head_dim), wk (hidden -> head_dim),
//!   k LayerNorm, weights_proj (hidden -> heads), rotary on q and k. Body operators.
//! - The indexer's scores: every query against every visible key, ReLU, a head-weighted sum
//!   and the top-k, which the NPU LightningIndexer kernel fuses (CANN recipes, DeepSeek-V3.2-Exp
//!   Ascend C operator guide). Priced as an attention operator of `index_n_heads` query heads
//!   over one key head of `index_head_dim / 2`, whose QK^T + PV arithmetic and K + V reads equal
//!   the indexer's one QK^T over `index_head_dim`-wide keys; the per-score vector work of the
//!   flash loop stands for the ReLU, weighting and top-k. O(L^2), cheap per pair.
//! - The main attention over the selected keys: absorbed MLA ("MQA mode", the decode form: all
//!   heads share the 576-wide latent) with each query gathering its own k keys from the cache,
//!   the Sparse Flash Attention kernel. The CANN recipe's prefill runs it the same way
//!   (BMM1 batch = tokens, M = heads, K = 576, N = 2048). O(L k).
//! - Prefill below the crossover: the report's "masked MHA mode" for short prompts and the CANN
//!   recipe's "4~8K sequences inherit DeepSeek-V3.1's path" — the dense MLA prefill attention
//!   (per-head 192/128-wide keys/values) with the indexer's mask, cheaper than the absorbed form
//!   while every query sees few keys. The engine takes the form with fewer attention FLOPs
//!   (`sparse_wins`): about 6.3 k = 12.8K tokens for DeepSeek-V3.2's shapes.
//! - The KV cache also holds the indexer key per token and layer (`MlaDesc::cached_elems`), in
//!   the cache's type (the CANN recipe's BF16 "Indexer Key Cache", INT8 with C8).
//!
//! Not modelled: training with DSA (training steps price dense attention), the indexer's
//! Hadamard rotation and FP8 scales (CUDA kernels; the Ascend path is BF16 or INT8), and a
//! speculative verify step's per-position selections (priced as one selection per sequence).

use super::{GraphOp, GraphOptions, ParallelPlan};
use crate::dtype::DType;
use crate::model::{MlaDesc, ModelDesc, OpClass, TransformerDesc};
use crate::op::{AttentionKind, Epilogue, Op, VectorKind};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The lightning indexer of a DSA model (config.json's `index_*` fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DsaDesc {
    /// Indexer query heads (64 in DeepSeek-V3.2).
    pub index_n_heads: u64,
    /// Width of an indexer query head and of the one cached indexer key (128).
    pub index_head_dim: u64,
    /// Keys each query attends to (2048).
    pub index_topk: u64,
}

impl DsaDesc {
    /// The indexer of a config object (`prefix` names its nesting in messages): None when it
    /// has no `index_topk`. A malformed or out-of-range field is an error naming it.
    pub fn from_hf_object(obj: &Map<String, Value>, prefix: &str, max_position: u64) -> Result<Option<DsaDesc>, String> {
        let field = |k: &str| -> Result<Option<u64>, String> {
            match obj.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v.as_u64().map(Some).ok_or_else(|| format!("field '{prefix}{k}' must be a whole number, got {v}")),
            }
        };
        let Some(index_topk) = field("index_topk")? else {
            for k in ["index_n_heads", "index_head_dim"] {
                if obj.contains_key(k) {
                    return Err(format!("field '{prefix}{k}' is given without 'index_topk' (sparse attention needs all three index_* fields)"));
                }
            }
            return Ok(None);
        };
        let need = |k: &str| -> Result<u64, String> { field(k)?.ok_or_else(|| format!("missing field '{prefix}{k}' (sparse attention with 'index_topk')")) };
        let d = DsaDesc { index_n_heads: need("index_n_heads")?, index_head_dim: need("index_head_dim")?, index_topk };
        d.validate(prefix, max_position)?;
        Ok(Some(d))
    }

    /// Every size positive and bounded; the top-k at most the model's context.
    pub fn validate(&self, prefix: &str, max_position: u64) -> Result<(), String> {
        for (k, v, hi) in [("index_n_heads", self.index_n_heads, 1 << 12), ("index_head_dim", self.index_head_dim, 4096), ("index_topk", self.index_topk, max_position.max(1))] {
            if v == 0 || v > hi {
                return Err(format!("field '{prefix}{k}' = {v} is out of range (1..={hi}{})", if k == "index_topk" { ", at most max_position_embeddings" } else { "" }));
            }
        }
        Ok(())
    }

    /// Indexer parameters of one layer: wq_b, wk, its LayerNorm, weights_proj.
    pub fn params(&self, hidden: u64, q_lora_rank: u64) -> u64 {
        let q_in = if q_lora_rank > 0 { q_lora_rank } else { hidden };
        let qd = self.index_n_heads.saturating_mul(self.index_head_dim);
        q_in.saturating_mul(qd).saturating_add(hidden.saturating_mul(self.index_head_dim + self.index_n_heads)).saturating_add(2 * self.index_head_dim)
    }
}

/// Mean keys a query of a causal chunk sees, and of those the ones it attends to under top-k,
/// for the `q` queries at positions kv - q + 1 ..= kv (each sees its position's keys).
pub fn mean_keys(q: u64, kv: u64, topk: u64) -> (f64, f64) {
    let q = q.clamp(1, kv.max(1));
    let first = kv - q + 1;
    let visible = (first + kv) as f64 / 2.0;
    // Positions up to topk keep all their keys; beyond it each keeps topk.
    let selected = if kv <= topk {
        visible
    } else if first > topk {
        topk as f64
    } else {
        let below = (first + topk) as f64 * (topk - first + 1) as f64 / 2.0;
        (below + (kv - topk) as f64 * topk as f64) / q as f64
    };
    (visible, selected)
}

/// Whether the sparse (absorbed, top-k) form costs fewer attention FLOPs than the dense MLA
/// prefill form (per-head nope + rope keys, v values) for a query seeing `visible` keys of which
/// it would keep `selected`.
pub fn sparse_wins(m: &MlaDesc, visible: f64, selected: f64) -> bool {
    let dense = visible * (m.qk_dim() + m.v_head_dim) as f64;
    let sparse = selected * (m.cache_dim() + m.kv_lora_rank) as f64;
    sparse < dense
}

/// Widest latent slice the prefill form of the sparse attention is written in (see `cores`).
pub(crate) const SLICE: u64 = 128;

/// Element types of the layer's operators: matmul activation / weight, vector, KV cache.
#[derive(Clone, Copy)]
pub struct Types {
    pub mm: DType,
    pub weight: Option<DType>,
    pub vec: DType,
    pub kv: DType,
}

/// The two attention cores of a DSA layer for `batch` chunks of `q` queries over `kv` keys
/// (`kind` Decode: one query per sequence over its cache), `hq` query heads on this chip:
/// the main attention (dense or sparse, whichever the engine runs) and the indexer's scores.
/// `dense` is the layer's dense core as the graph builds it (prefill only).
#[allow(clippy::too_many_arguments)]
fn cores(m: &MlaDesc, s: &DsaDesc, p: &str, hq: u64, batch: u64, q: u64, kv: u64, kind: AttentionKind, dense: Op, ty: Types) -> [GraphOp; 2] {
    let absorbed = (m.cache_dim() + m.kv_lora_rank).div_ceil(2);
    let (visible, selected) = if kind == AttentionKind::Decode { (kv as f64, kv.min(s.index_topk) as f64) } else { mean_keys(q, kv, s.index_topk) };
    let keys = (selected.ceil() as u64).max(1);
    let main = if kind == AttentionKind::Decode {
        // The absorbed decode kernel over the selected latents, gathered from the cache in HBM,
        // written as the dense absorbed decode core is (llm::layer): `SLICE`-wide latent
        // slices, each its own KV head, every query head meeting every slice.
        let slices = absorbed.div_ceil(SLICE);
        Op::Attention { kind, batch, heads: hq.saturating_mul(slices), kv_heads: slices, q_len: q, kv_len: keys, head_dim: absorbed.div_ceil(slices), causal: false, dtype: ty.kv }
    } else if sparse_wins(m, visible, selected) {
        // Sparse Flash Attention in prefill: one work item per query token, all its heads the
        // rows of the matmuls against the token's own gathered latents (the CANN recipe's BMM
        // shapes: batch = tokens, M = heads, K = 576, N = k). The kernel takes the 576-wide
        // latent through L0 in slices; the device's flash tiling holds 128 rows of at most about
        // 128 elements, so it is written as `SLICE`-wide slices, each its own KV head (the same
        // FLOPs and gathered bytes; the softmax's vector work is counted once per slice).
        let slices = absorbed.div_ceil(SLICE);
        Op::Attention { kind: AttentionKind::Decode, batch: batch.saturating_mul(q), heads: hq.saturating_mul(slices), kv_heads: slices, q_len: 1, kv_len: keys, head_dim: absorbed.div_ceil(slices), causal: false, dtype: ty.kv }
    } else {
        dense
    };
    let dtype = if kind == AttentionKind::Decode { ty.kv } else { ty.vec };
    let causal = kind != AttentionKind::Decode && q > 1;
    let indexer = Op::Attention { kind, batch, heads: s.index_n_heads, kv_heads: 1, q_len: q, kv_len: kv, head_dim: s.index_head_dim.div_ceil(2), causal, dtype };
    [
        GraphOp { name: format!("{p}.attn.core"), op: main, repeat: 1, class: OpClass::Attention },
        GraphOp { name: format!("{p}.attn.indexer.core"), op: indexer, repeat: 1, class: OpClass::Attention },
    ]
}

/// The indexer's projections for `tokens` rows (replicated on every TP rank).
fn projections(t: &TransformerDesc, m: &MlaDesc, s: &DsaDesc, p: &str, tokens: u64, ty: Types) -> Vec<GraphOp> {
    let mm = |name: &str, n: u64, k: u64| GraphOp {
        name: format!("{p}.attn.indexer.{name}"),
        op: Op::Matmul { batch: 1, m: tokens, n, k, dtype: ty.mm, weight_dtype: ty.weight, epilogue: Epilogue::None },
        repeat: 1,
        class: OpClass::Attention,
    };
    let vector = |name: &str, kind: VectorKind, rows: u64, len: u64| GraphOp { name: format!("{p}.attn.indexer.{name}"), op: Op::Vector { kind, rows, row_len: len, dtype: ty.vec }, repeat: 1, class: OpClass::Attention };
    let q_in = if m.q_lora_rank > 0 { m.q_lora_rank } else { t.hidden };
    vec![
        mm("wq_b", s.index_n_heads.saturating_mul(s.index_head_dim), q_in),
        mm("wk", s.index_head_dim, t.hidden),
        vector("k_norm", VectorKind::LayerNorm, tokens, s.index_head_dim),
        mm("weights_proj", s.index_n_heads, t.hidden),
        vector("rotary", VectorKind::Rotary, tokens.saturating_mul(s.index_n_heads + 1), m.qk_rope_head_dim.min(s.index_head_dim)),
    ]
}

/// The graph builder's hook (`llm::stack`): turns the layer group starting at `start` (named
/// `p`) into its DSA form, keeping the group's repeat. Training steps are left dense.
pub(super) fn apply(ops: &mut Vec<GraphOp>, start: usize, p: &str, t: &TransformerDesc, ty: Types) {
    let Some(m) = t.mla else { return };
    let Some(s) = m.sparse else { return };
    let name = format!("{p}.attn.core");
    let Some(i) = ops[start..].iter().position(|o| o.name == name).map(|i| i + start) else { return };
    let Op::Attention { kind, batch, heads, kv_heads, q_len, kv_len, .. } = ops[i].op else { return };
    let repeat = ops[i].repeat;
    // The dense absorbed decode core counts every query head once per latent slice (its KV
    // heads); `cores` takes the query heads themselves.
    let hq = if kind == AttentionKind::Decode { heads / kv_heads.max(1) } else { heads };
    let [main, idx] = cores(&m, &s, p, hq, batch, q_len, kv_len, kind, ops[i].op.clone(), ty);
    let mut new = projections(t, &m, &s, p, batch.saturating_mul(q_len), ty);
    new.push(idx);
    new.push(main);
    for o in &mut new {
        o.repeat = repeat;
    }
    ops.splice(i..=i, new);
}

/// The scheduler's prefill-chunk table (`StepPricer::prefill_attention`): a DSA model's
/// attention cores for `seqs` chunks of `q` prompt tokens over `kv` keys, on this plan's chip
/// (None: not a DSA model). The same `cores` as the graph builder's.
pub fn chunk_cores(model: &ModelDesc, plan: &ParallelPlan, opts: &GraphOptions, seqs: u64, q: u64, kv: u64) -> Option<Vec<GraphOp>> {
    let t = model.llm.as_ref()?;
    let m = t.mla?;
    let s = m.sparse?;
    let tp = plan.tp.max(1);
    let (hq, hkv) = (t.heads / tp, (t.kv_heads / tp).max(1));
    let kind = opts.prefill_attention();
    let ty = Types { mm: opts.vector_dtype(), weight: None, vec: opts.vector_dtype(), kv: opts.kv_dtype() };
    let dense = Op::Attention { kind, batch: seqs, heads: hq, kv_heads: hkv, q_len: q, kv_len: kv.max(q), head_dim: t.head_dim, causal: true, dtype: ty.vec };
    let layers = plan.layers_here(t.layers);
    let mut out = cores(&m, &s, "layer", hq, seqs, q, kv.max(q), kind, dense, ty).to_vec();
    for o in &mut out {
        o.repeat = layers;
    }
    Some(out)
}

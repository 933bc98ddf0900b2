//! Fine-grained tensor parallelism under attention DP (issue 42): vLLM-Ascend's
//! `finegrained_tp_config` (docs/source/user_guide/feature_guide/Fine_grained_TP.md;
//! vllm_ascend/ops/vocab_parallel_embedding.py at vllm-project/vllm-ascend@182b75ea). With
//! `tensor_parallel_size` 1 every DP rank would hold the whole embedding table and LM head; the
//! option splits each over a group of DP ranks (`ParallelPlan::embed_tp`, `lmhead_tp`), whose
//! ranks then run the module together for all of the group's tokens:
//!
//! - LM head (`_get_logits_lmheadtp`): all-gather the group's hidden states, multiply them by
//!   the rank's 1 / k of the vocabulary, and return each rank its own rows' logits by an
//!   all-to-all (`lmhead_all_to_all`).
//! - Embedding: all-gather the group's token ids (a few bytes, not priced), look up the rank's
//!   vocabulary slice for all of them, and reduce-scatter the rows back to their ranks.
//!
//! The weights each rank holds fall k-fold (`memory::chip_params`); the head's weight read, the
//! part that dominates a decode step's head, falls with them.

use super::Ctx;
use crate::model::OpClass;
use crate::op::{CommKind, Epilogue, Op, VectorKind};
use crate::workload::GraphOp;

/// The embedding lookup of `tokens` rows on one rank of an `embed_tp` group (None: off).
pub(super) fn embedding(ctx: &Ctx, tokens: u64, hidden: u64) -> Option<Vec<GraphOp>> {
    let k = ctx.plan.embed_tp;
    if k <= 1 || ctx.plan.tp > 1 {
        return None;
    }
    let rows = tokens.saturating_mul(k);
    let bytes = rows.saturating_mul(hidden).saturating_mul(ctx.vec.bytes());
    Some(vec![
        ctx.vector("embed.tokens".into(), OpClass::Embedding, VectorKind::Gather, rows, hidden),
        ctx.comm("ftp.embed.reduce_scatter".into(), CommKind::ReduceScatter, bytes, k),
    ])
}

/// The LM head over `rows` logits rows on one rank of an `lmhead_tp` group (None: off).
pub(super) fn lm_head(ctx: &Ctx, rows: u64, hidden: u64, vocab: u64) -> Option<Vec<GraphOp>> {
    let k = ctx.plan.lmhead_tp;
    if k <= 1 || ctx.plan.tp > 1 {
        return None;
    }
    let gathered = rows.saturating_mul(k);
    let b = ctx.vec.bytes();
    let slice = vocab.div_ceil(k);
    let head = Op::Matmul { batch: 1, m: gathered, n: slice, k: hidden, dtype: ctx.vec, weight_dtype: None, epilogue: Epilogue::None };
    Some(vec![
        ctx.comm("ftp.lmhead.hidden_allgather".into(), CommKind::AllGather, gathered.saturating_mul(hidden).saturating_mul(b), k),
        GraphOp { name: "lm_head".into(), op: head, repeat: 1, class: OpClass::LmHead },
        // Each rank sends every peer that peer's rows of its vocabulary slice: its whole
        // gathered-rows x slice buffer.
        ctx.comm("ftp.lmhead.logits_alltoall".into(), CommKind::AllToAll, gathered.saturating_mul(slice).saturating_mul(b), k),
    ])
}

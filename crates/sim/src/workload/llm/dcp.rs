//! Decode context parallel on a prefill step (issue 42, "DCP in the prefill instance"): vLLM's
//! `--decode-context-parallel-size` on a prefill instance, as vLLM-Ascend's 1M-context PD layout
//! runs it (docs/source/tutorials/models/GLM5.2.md, "1M Context Deployment": prefill DP4 TP8 PCP1
//! DCP8 beside a DCP8 decode instance). Every sequence's cache is sharded over dcp ranks of the
//! TP group (`memory::kv_cache_bytes`), so the instance holds dcp times the tokens; a prefill
//! chunk's own keys and values are local, but the context cached before the chunk sits in
//! shards, and each rank gathers the group's shards of it before attending it (vLLM's MLA
//! context-parallel prefill gathers the cache in chunks): an all-gather of the context's cache
//! per layer, in the cache's data type. The attention core is unchanged. A whole prompt in one
//! step has no earlier context and pays nothing.

use crate::model::{ModelDesc, OpClass};
use crate::op::{CommKind, Op};
use crate::workload::{AttentionKind, GraphOp, GraphOptions, ParallelPlan};

/// The name of the gather (the step pricer prices it with a prompt chunk's attention).
pub const CONTEXT_GATHER: &str = "layer.tp.dcp_context_allgather";

/// The per-layer all-gather of the cached context of a prefill chunk of `batch` sequences of
/// `q_len` new tokens over `kv_len` (None: no DCP, a decode or training step, or no context).
pub fn context_gather(model: &ModelDesc, plan: &ParallelPlan, opts: &GraphOptions, batch: u64, q_len: u64, kv_len: u64, kind: AttentionKind, train: bool) -> Option<GraphOp> {
    let t = model.llm.as_ref()?;
    let context = kv_len.saturating_sub(q_len);
    if plan.dcp <= 1 || train || kind == AttentionKind::Decode || context == 0 {
        return None;
    }
    let whole = ParallelPlan { dcp: 1, ..*plan };
    let layers = plan.layers_here(t.layers).max(1);
    let bytes = crate::memory::kv_cache_bytes(model, &whole, opts, batch, context).div_ceil(layers);
    let op = Op::Comm { kind: CommKind::AllGather, bytes, ranks: plan.dcp, link: Default::default(), algorithm: Default::default() };
    Some(GraphOp { name: CONTEXT_GATHER.into(), op, repeat: layers, class: OpClass::Comm })
}

//! An offline OM model: the graph ATC compiles from an ONNX export (`atc --framework=5
//! --precision_mode_v2=mixed_float16 --modify_mixlist=ops_info.json`), as MindIE-LLM's BGE
//! example runs its "offline" version (examples/atb_models/examples/models/bge/large-zh-v1.5,
//! README: 离线版本). What differs from an engine's fused graph is which kernels run:
//!
//! - Attention as the ONNX exporter writes a BertSelfAttention: MatMul(Q, K^T), Div by
//!   sqrt(head_dim), Add of the broadcast attention mask, Softmax, MatMul(P, V). Each is its own
//!   kernel, so the [batch, heads, S, S] scores go through device memory between every step
//!   (the fused flash kernel keeps them on chip): `AttentionKind::Exported`, priced by
//!   `cost::attention::exported`.
//! - Mixed precision with a blocklist: `mixed_float16` lowers MatMul / BatchMatMul to fp16 and
//!   keeps blocklisted ops in fp32, inserting Casts around them. The lists are published at the
//!   rows' commit (Ascend/MindIE-LLM@8b4871ad, examples/atb_models/examples/models/embedding/
//!   {bert,xlm_roberta}/ops_info.json): BERT's black-lists Add, Sub, Mul and SoftmaxV2;
//!   XLM-R's black-lists nothing and white-lists Cast, FlattenV2, LayerNorm, GatherShapes and
//!   GatherV2 (so LayerNorm is not fp16 by default). Priced here for every encoder: the mask Add
//!   and the Softmax over the scores in fp32 (BERT's list; HF's extended mask is
//!   finfo(float32).min, outside the fp16 range) and LayerNorm in fp32 (the default the XLM-R
//!   list overrides). Not priced (decided in issue 43, left for evidence): BERT's residual Adds
//!   in fp32 (a few per cent) and XLM-R's all-fp16 attention and LayerNorm, which would make the
//!   bge-reranker OM model about 1.7x faster than bge-large's on both chips (36 -> 16 bytes of
//!   device traffic per score, no LayerNorm casts; at 20 x 512 on a 910B4), while the 300I Duo
//!   rows of the two models measure within 11% of each other (800I A2: 1.41x).
//! - Epilogues: ATC fuses a MatMul's bias Add into the MatMul; GELU and the residual Adds stay
//!   separate kernels (the graph options' `fuse_epilogues: false`, set by the caller).
//! - On a chip whose cube reads only FRACTAL_NZ (`GraphOptions::om_nz_transdata`: the coupled
//!   910 and 310P parts, the Atlas 300I Duo's; MindIE-LLM@8b4871ad atb_llm/utils/initial.py
//!   `NPUSocInfo.need_nz` is true for soc versions 100-105 and 200-205, and its encoder casts
//!   even the attention mask to format 29, FRACTAL_NZ, there: atb_llm/models/embedding/
//!   modeling_embedding_utils.py `KVAttentionManager.trans_data`), ATC inserts TransData
//!   kernels (ND <-> NZ, a read and a write of the tensor each) where a matmul's operand comes
//!   from an operator that runs in ND. Priced around the attention's two batch matmuls: Q, K
//!   and V after the Reshape/Transpose that splits the heads go ND -> NZ and the context
//!   comes back NZ -> ND before the heads are merged (the `layer.attn.heads.*` operators
//!   here), and the scores go NZ -> ND for the Div, Cast, mask Add and Softmax and the
//!   probabilities back ND -> NZ for P V (`cost::attention::exported`, which shapes them).
//!   The linear layers' MatMuls are left without: their weights are NZ constants converted at
//!   compile time, and the Add, LayerNorm, GELU and Cast kernels between them accept NZ, so
//!   format propagation can keep that chain in NZ. Chosen after looking at the 300I Duo rows
//!   (issue 43): a TransData around every linear MatMul too priced the seq-100 shape 31% slow
//!   (bs8-seq100, device 22.7 -> 41.5 ms per batch), while these alone leave it within 5%.
//!   The A2 parts' cubes read ND directly (MTE2 converts on the way in), so nothing is added.

use super::GraphOp;
use crate::dtype::DType;
use crate::op::{Op, VectorKind};

/// Rewrites a forward graph's LayerNorms as the OM model runs them: in fp32 between Casts. The
/// attention keeps its operator, of kind `Exported` (`GraphOptions::prefill_attention`), so the
/// serving scheduler still finds and re-shapes it; `cost::attention` prices its kernels.
pub(super) fn apply(ops: &mut Vec<GraphOp>, nz_transdata: bool) {
    let old = std::mem::take(ops);
    for o in old {
        match o.op {
            // The heads' layout changes around the exported attention on an NZ-only cube:
            // Q, K, V in and the context out, one row per query token (the scores' own
            // TransData is in the attention's cost, which knows its lengths).
            Op::Attention { batch, heads, kv_heads, q_len, head_dim, dtype, .. } if nz_transdata => {
                let rows = batch.saturating_mul(q_len);
                let td = |suffix: &str, row_len| GraphOp { name: format!("{}{suffix}", o.name.trim_end_matches(".core")), op: Op::Vector { kind: VectorKind::Gather, rows, row_len, dtype }, repeat: o.repeat, class: o.class };
                let qkv = td(".heads.nd_to_nz", (heads + 2 * kv_heads) * head_dim);
                let ctx = td(".heads.nz_to_nd", heads * head_dim);
                ops.push(qkv);
                ops.push(o);
                ops.push(ctx);
            }
            Op::Vector { kind: VectorKind::LayerNorm, rows, row_len, dtype } if dtype != DType::Fp32 && o.name != "final_norm" => {
                let op = |suffix: &str, kind, t| GraphOp { name: format!("{}{suffix}", o.name), op: Op::Vector { kind, rows, row_len, dtype: t }, repeat: o.repeat, class: o.class };
                ops.push(op(".to_fp32", VectorKind::Cast, dtype));
                ops.push(op("", VectorKind::LayerNorm, DType::Fp32));
                ops.push(op(".to_fp16", VectorKind::Cast, DType::Fp32));
            }
            _ => ops.push(o),
        }
    }
}

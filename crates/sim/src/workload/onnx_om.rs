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

use super::GraphOp;
use crate::dtype::DType;
use crate::op::{Op, VectorKind};

/// Rewrites a forward graph's LayerNorms as the OM model runs them: in fp32 between Casts. The
/// attention keeps its operator, of kind `Exported` (`GraphOptions::prefill_attention`), so the
/// serving scheduler still finds and re-shapes it; `cost::attention` prices its kernels.
pub(super) fn apply(ops: &mut Vec<GraphOp>) {
    let old = std::mem::take(ops);
    for o in old {
        match o.op {
            // The final norm is left whole: it runs over one row per sequence (the pooler's
            // input) and the serving scheduler prices it by its name with the head.
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

//! An unmerged LoRA adapter at inference: diffusers' `load_lora_weights` without `fuse_lora`
//! leaves PEFT's `lora.Linear` beside each adapted layer, whose forward is
//! `result = base_layer(x); result = result + lora_B(lora_A(dropout(x))) * scaling`
//! (peft/tuners/lora/layer.py, `Linear.forward`, dropout an identity at inference): per adapted
//! linear of m tokens, k inputs and n outputs, an x A matmul (m x r), an (x A) B matmul (m x n),
//! the scaling (a pass over m x n) and the addition (another), in the activation type, each its
//! own kernel in an eager run.
//!
//! Adapted layers: the blocks' attention projections (q, k, v, output; the fused q/k/v and k/v
//! of the graphs are three and two adapters) and their feed-forward linears, the default
//! `target_modules` of diffusers' DreamBooth-LoRA scripts for the DiTs
//! (examples/dreambooth/train_dreambooth_lora_flux_kontext.py: attn.to_q/k/v, to_out.0, the
//! add_* text-stream projections, ff.net.0.proj, ff.net.2, ff_context.*, proj_mlp). Not adapted:
//! the single blocks' fused output projection (`proj_out`), modulations, embedders, MoE routers,
//! the attention cores and score products.

use crate::dtype::DType;
use crate::model::OpClass;
use crate::op::{Epilogue, Op, VectorKind};
use crate::workload::GraphOp;

/// Largest adapter rank accepted.
pub const MAX_LORA_RANK: u64 = 1024;

/// Whether an operator is a linear layer LoRA adapts, and as how many adapters (a fused q/k/v
/// projection is three).
pub fn adapters(o: &GraphOp) -> u64 {
    let Op::Matmul { batch: 1, .. } = o.op else { return 0 };
    if !matches!(o.class, OpClass::Attention | OpClass::Mlp) {
        return 0;
    }
    let n = o.name.as_str();
    if n.contains(".core") || n.contains("similarity") || n.ends_with("proj_out") || n.ends_with(".gate") || n.ends_with(".lora_a") || n.ends_with(".lora_b") {
        return 0;
    }
    if n.ends_with("to_qkv") {
        3
    } else if n.ends_with("to_kv") {
        2
    } else {
        1
    }
}

/// The adapter operators beside `ops` at rank `r` in `dtype`, and the adapters' parameters.
pub fn unmerged(ops: &[GraphOp], r: u64, dtype: DType) -> (Vec<GraphOp>, u64) {
    let mut out = Vec::new();
    let mut params = 0u64;
    if r == 0 {
        return (out, 0);
    }
    for o in ops {
        let pieces = adapters(o);
        let Op::Matmul { m, n, k, .. } = o.op else { continue };
        if pieces == 0 {
            continue;
        }
        let each = (n / pieces).max(1);
        let rep = o.repeat.saturating_mul(pieces);
        let name = |s: &str| format!("{}.{s}", o.name);
        out.push(GraphOp { name: name("lora_a"), op: Op::Matmul { batch: 1, m, n: r, k, dtype, weight_dtype: None, epilogue: Epilogue::None }, repeat: rep, class: o.class });
        out.push(GraphOp { name: name("lora_b"), op: Op::Matmul { batch: 1, m, n: each, k: r, dtype, weight_dtype: None, epilogue: Epilogue::None }, repeat: rep, class: o.class });
        out.push(GraphOp { name: name("lora_scale"), op: Op::Vector { kind: VectorKind::Scale, rows: m, row_len: each, dtype }, repeat: rep, class: o.class });
        out.push(GraphOp { name: name("lora_add"), op: Op::Vector { kind: VectorKind::Elementwise, rows: m, row_len: each, dtype }, repeat: rep, class: o.class });
        params = params.saturating_add(rep.saturating_mul(r.saturating_mul(k.saturating_add(each))));
    }
    (out, params)
}

//! A training step from a forward graph: recomputation, backward, gradient accumulation, the
//! data-parallel gradient synchronisation and the optimizer update.
//!
//! Backward costs follow the usual accounting (Narayanan et al. 2021, "Efficient Large-Scale
//! Language Model Training on GPU Clusters Using Megatron-LM", section 5.1: backward = 2x forward
//! matmul FLOPs): each matmul C = A x B becomes dA = dC x B^T and dB = A^T x dC. Flash attention's
//! backward does 5 matmuls to the forward's 2 (Dao 2023, FlashAttention-2), so it runs as 2.5
//! forward attention ops.

use super::{GraphOp, GraphOptions, ParallelPlan, Recompute};
use crate::dtype::DType;
use crate::memory::{expert_params_per_chip, params_per_chip};
use crate::model::{ModelDesc, OpClass};
use crate::op::{CommKind, Epilogue, Op, VectorKind};

/// Ops inside the repeated transformer layers (what full recomputation re-runs).
fn in_layer(o: &GraphOp) -> bool {
    o.name.starts_with("layer") || o.name.starts_with("vision.layer")
}

fn renamed(o: &GraphOp, suffix: &str, op: Op, repeat: u64) -> GraphOp {
    GraphOp { name: format!("{}.{suffix}", o.name), op, repeat, class: o.class }
}

/// The backward ops of one forward op.
fn backward(o: &GraphOp, out: &mut Vec<GraphOp>) {
    let r = o.repeat;
    // The all-gather dispatcher's fp32 combine (llm::fp32_scatter_add) is one autograd Function
    // whose backward is a row gather of the 16-bit gradient: its staging ops have none, and the
    // scatter-add's is that gather.
    if o.name.contains(".moe.combine_fp32_") {
        return;
    }
    if let (true, Op::Vector { rows, row_len, .. }) = (o.name.ends_with(".moe.combine_scatter_add_fp32"), &o.op) {
        // The gradient is in the 16-bit activation type (the staging only runs in 16-bit training).
        let op = Op::Vector { kind: VectorKind::Gather, rows: *rows, row_len: *row_len, dtype: DType::Bf16 };
        out.push(renamed(o, "bwd", op, r));
        return;
    }
    match o.op {
        Op::Matmul { batch, m, n, k, dtype, weight_dtype, epilogue } => {
            if !matches!(epilogue, Epilogue::None | Epilogue::Bias) {
                // The fused activation's derivative runs on the vector unit over the output.
                let op = Op::Vector { kind: VectorKind::Elementwise, rows: batch.saturating_mul(m), row_len: n, dtype };
                out.push(renamed(o, "epilogue_bwd", op, r));
            }
            let data = Op::Matmul { batch, m, n: k, k: n, dtype, weight_dtype, epilogue: Epilogue::None };
            out.push(renamed(o, "bwd_data", data, r));
            let weight = Op::Matmul { batch, m: k, n, k: m, dtype, weight_dtype: None, epilogue: Epilogue::None };
            out.push(renamed(o, "bwd_weight", weight, r));
        }
        Op::Attention { .. } => {
            let rep = r.saturating_mul(5).div_ceil(2);
            out.push(renamed(o, "bwd", o.op.clone(), rep));
        }
        Op::Vector { kind, rows, row_len, dtype } => {
            // Embedding backward is a scatter-add into the gradient table.
            let kind = if kind == VectorKind::Gather { VectorKind::Elementwise } else { kind };
            out.push(renamed(o, "bwd", Op::Vector { kind, rows, row_len, dtype }, r));
        }
        Op::Conv2d { .. } => {
            // Data gradient plus weight gradient, each about one forward convolution.
            out.push(renamed(o, "bwd", o.op.clone(), r.saturating_mul(2)));
        }
        Op::Comm { kind, bytes, ranks, link, algorithm } => {
            // Conjugate collectives (Korthikanti et al. 2022, fig. 5): all-gather <-> reduce-scatter.
            let kind = match kind {
                CommKind::AllGather => CommKind::ReduceScatter,
                CommKind::ReduceScatter => CommKind::AllGather,
                k => k,
            };
            out.push(renamed(o, "bwd", Op::Comm { kind, bytes, ranks, link, algorithm }, r));
        }
    }
}

fn comm(name: &str, kind: CommKind, bytes: u64, ranks: u64, repeat: u64) -> GraphOp {
    let op = Op::Comm { kind, bytes, ranks, link: Default::default(), algorithm: Default::default() };
    GraphOp { name: name.to_string(), op, repeat, class: OpClass::Comm }
}

/// One optimizer step: `grad_accum` x (forward [+ recompute] + backward), then DP sync and Adam.
pub(super) fn step(model: &ModelDesc, fwd: Vec<GraphOp>, plan: &ParallelPlan, opts: &GraphOptions) -> Vec<GraphOp> {
    let t = opts.train;
    let accum = t.grad_accum.max(1);
    let mut ops: Vec<GraphOp> = fwd.clone();
    match t.recompute {
        Recompute::None => {}
        Recompute::Selective => {
            for o in fwd.iter().filter(|o| matches!(o.op, Op::Attention { .. })) {
                ops.push(renamed(o, "recompute", o.op.clone(), o.repeat));
            }
        }
        Recompute::Full => {
            for o in fwd.iter().filter(|o| in_layer(o)) {
                ops.push(renamed(o, "recompute", o.op.clone(), o.repeat));
            }
        }
    }
    for o in fwd.iter().rev() {
        backward(o, &mut ops);
    }
    // Without gradient-accumulation fusion each micro-batch's weight gradients are added into
    // the main gradient buffer by a separate elementwise pass (Megatron DDP's backward hook,
    // `param.main_grad.add_(param.grad)`): read main_grad and grad, write main_grad. A two-input
    // elementwise op moves 3 passes of its type per element (12 bytes in fp32), so the pass is
    // one such op over (main + main + grad bytes) / 12 elements per parameter.
    if !t.grad_accum_fusion {
        let params = params_per_chip(model, plan);
        let main = if t.fp32_grads || !t.mixed_precision { 4 } else { 2 };
        let grad = if t.mixed_precision { 2 } else { 4 };
        const ROW: u64 = 4096;
        let rows = params.saturating_mul(2 * main + grad).div_ceil(12 * ROW);
        if rows > 0 {
            let op = Op::Vector { kind: VectorKind::Elementwise, rows, row_len: ROW, dtype: DType::Fp32 };
            ops.push(GraphOp { name: "grad.main_grad_add.bwd".into(), op, repeat: 1, class: OpClass::Other });
        }
    }
    for o in &mut ops {
        o.repeat = o.repeat.saturating_mul(accum);
    }

    // Gradients synchronise over the data- and context-parallel ranks (Megatron reduces over
    // dp x cp); routed experts' over dp x cp / ep, since each expert lives on one EP rank.
    let params = params_per_chip(model, plan);
    let expert = expert_params_per_chip(model, plan).min(params);
    // fp32 main gradients (Megatron's bf16 default) are reduced in fp32.
    let grad_bytes = if t.mixed_precision && !t.fp32_grads { 2 } else { 4 };
    let dense_ranks = plan.dp.saturating_mul(plan.cp.max(1));
    let expert_ranks = (dense_ranks / plan.ep.max(1)).max(1);
    let sharded = t.zero_stage >= 1 || t.distributed_optimizer;
    // Parameters are gathered in the model's type (Megatron's distributed optimizer all-gathers
    // its bf16 parameter buffer; ZeRO gathers the 16-bit weights), whatever the gradients' type.
    let param_bytes = if t.mixed_precision { 2 } else { 4 };
    for (tag, n, ranks) in [("", params - expert, dense_ranks), ("expert_", expert, expert_ranks)] {
        let bytes = n.saturating_mul(grad_bytes);
        let pbytes = n.saturating_mul(param_bytes);
        if ranks <= 1 || bytes == 0 {
            continue;
        }
        let name = |what: &str| format!("dp.{tag}{what}");
        match t.zero_stage {
            // ZeRO-3 gathers each layer's parameters before its forward and its backward, and
            // reduce-scatters gradients every micro-batch (Rajbhandari et al. 2020, section 7).
            3 => {
                ops.push(comm(&name("zero3_param_allgather"), CommKind::AllGather, pbytes, ranks, accum.saturating_mul(2)));
                ops.push(comm(&name("grad_reduce_scatter_per_micro_batch"), CommKind::ReduceScatter, bytes, ranks, accum));
            }
            // ZeRO-2 (DeepSpeed) reduce-scatters each micro-batch's gradients into the shard.
            2 => {
                ops.push(comm(&name("grad_reduce_scatter_per_micro_batch"), CommKind::ReduceScatter, bytes, ranks, accum));
                ops.push(comm(&name("param_allgather"), CommKind::AllGather, pbytes, ranks, 1));
            }
            // ZeRO-1 and Megatron's distributed optimizer accumulate locally and reduce-scatter
            // once per step, then all-gather the updated parameters.
            _ if sharded => {
                ops.push(comm(&name("grad_reduce_scatter"), CommKind::ReduceScatter, bytes, ranks, 1));
                ops.push(comm(&name("param_allgather"), CommKind::AllGather, pbytes, ranks, 1));
            }
            _ => ops.push(comm(&name("grad_allreduce"), CommKind::AllReduce, bytes, ranks, 1)),
        }
    }
    let dp = dense_ranks;
    // Adam reads weights, gradients and two moments and writes weights and moments: 7 fp32
    // tensor passes per parameter. A two-input elementwise op moves 3 passes per element, so
    // the update is one such op over 7/3 x the (possibly sharded) parameter count.
    let shard = if sharded && dp > 1 { params.div_ceil(dp) } else { params };
    const ROW: u64 = 4096;
    if shard > 0 {
        let rows = shard.saturating_mul(7).div_ceil(3 * ROW);
        let op = Op::Vector { kind: VectorKind::Elementwise, rows, row_len: ROW, dtype: DType::Fp32 };
        ops.push(GraphOp { name: "optimizer.adam".into(), op, repeat: 1, class: OpClass::Other });
    }
    ops
}

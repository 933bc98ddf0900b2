//! The routed-expert (MoE) block of a transformer layer: top-k routing, expert parallelism's
//! dispatch and combine (all-to-all or the all-gather dispatcher), expert load imbalance after
//! EPLB, and the experts' matmuls.

use super::{ceil_div, mlp, Ctx};
use crate::dtype::DType;
use crate::model::OpClass;
use crate::op::{CommKind, Epilogue, MoeCommForm, MoePhase, Op, VectorKind};
use crate::workload::{experts_touched, GraphOp, GraphOptions, MoeDispatcher};

/// Routed experts with top-k routing. With N = tokens x top_k x ep routed token-copies over E
/// experts (uniform routing), E (1 - (1 - 1/E)^N) distinct experts are hit in expectation; each
/// hit expert sees N / hit tokens, times the imbalance (busiest expert over the mean: the EP
/// ranks meet at the dispatch and combine collectives, so the busiest sets the pace). Experts
/// are split ep-way and their width `experts_tp`-way (tp unless expert parallelism spans TP).
///
/// Training follows the step's Megatron settings (`TrainOptions`): the local experts run as one
/// grouped matmul or, without --moe-grouped-gemm, one matmul per expert (SequentialMLP); tokens
/// move by all-to-all (each routed copy to its expert's rank) or by the all-gather dispatcher
/// (the whole EP group's hidden states gathered, the local copies selected, and the combined
/// output scattered into a group-wide buffer that is reduce-scattered back).
///
/// `group_tokens` is the number of distinct tokens the whole EP group routes in this block (the
/// rows of `tokens` on every rank that holds other tokens): `tokens x ep` when each EP rank has
/// its own tokens, the TP group's real tokens times the DP ranks when the TP ranks split one
/// group's tokens (a split rounded up to whole rows pads, and padding rows add no experts).
pub(super) fn moe_block(ctx: &Ctx, ops: &mut Vec<GraphOp>, p: &str, tokens: u64, group_tokens: u64, m: &crate::model::MoeDesc, opts: &GraphOptions) {
    let (hidden, tp, ep) = (ctx.t.hidden, ctx.plan.experts_tp(), ctx.plan.ep);
    // A latent MoE (Nemotron 3 Super) routes latent rows: the experts and the token movement
    // work at the latent width, between a down- and an up-projection at the hidden width.
    let h = if m.latent > 0 { m.latent } else { hidden };
    let e = m.experts;
    let vb = ctx.vec.bytes();
    let t = opts.train;
    // The router runs in the vector type: it is tiny and kept in high precision in practice.
    let router = Op::Matmul { batch: 1, m: tokens, n: e, k: hidden, dtype: ctx.vec, weight_dtype: None, epilogue: Epilogue::None };
    ops.push(GraphOp { name: format!("{p}.moe.router"), op: router, repeat: 1, class: OpClass::Moe });
    if m.latent > 0 {
        ops.push(ctx.mm(format!("{p}.moe.latent_down"), OpClass::Moe, tokens, m.latent, hidden, Epilogue::None));
    }
    ops.push(ctx.vector(format!("{p}.moe.topk"), OpClass::Moe, VectorKind::Softmax, tokens, e));
    let routed = group_tokens.max(1).saturating_mul(m.top_k);
    // Experts touched (`workload::experts_touched`): each token picks top_k distinct experts,
    // and the busiest rank's hit experts set the pace (the ranks meet at the combine).
    let hit_total = experts_touched::distinct_hit(m.top_k, e, group_tokens);
    let slots = ctx.plan.expert_slots(e);
    let per_rank = (slots / ep).max(1);
    let hit_local = experts_touched::busiest_rank_experts(m.top_k, e, group_tokens, per_rank, ep);
    let mean = routed as f64 / hit_total as f64;
    let per_expert = (mean * balanced_imbalance(opts.moe_imbalance, ctx.plan.redundant_experts, ep)).ceil().clamp(1.0, routed.max(1) as f64) as u64;
    let copies = tokens.saturating_mul(m.top_k);
    let copy_bytes = copies.saturating_mul(h).saturating_mul(vb);
    // The copies this rank's experts process (the busiest rank's).
    let local_rows = hit_local.saturating_mul(per_expert);
    // A serving engine picks the exchange per step (`GraphOptions::moe_comm`): MC2 or
    // all-to-all as a dispatch/combine pair, or the all-gather dispatcher.
    let exchange = serving_exchange(ctx, opts, tokens);
    let all_gather = ep > 1 && (t.moe_dispatcher == MoeDispatcher::AllGather || matches!(exchange, Some(None)));
    let exchange = exchange.flatten();
    // A dispatch carries the INT8 activations (and their per-token scales) of a quantised
    // model, the combine the outputs in the vector type.
    let moe_comm = |phase: MoePhase, form: MoeCommForm, dtype: DType| {
        let op = Op::MoeComm { phase, form, tokens, hidden: h, top_k: m.top_k, ranks: ep, dtype, link: Default::default() };
        let what = if phase == MoePhase::Dispatch { "dispatch" } else { "combine" };
        GraphOp { name: format!("{p}.ep.{what}_{}", form.name()), op, repeat: 1, class: OpClass::Comm }
    };
    // Everything the EP group holds, gathered onto every rank by the all-gather dispatcher.
    let group_bytes = tokens.saturating_mul(ep).saturating_mul(h).saturating_mul(vb);
    if all_gather {
        ops.push(ctx.comm(format!("{p}.ep.dispatch_allgather"), CommKind::AllGather, group_bytes, ep));
        // Routing indices (int64) and weights (fp32) of every token, gathered likewise.
        let idx = tokens.saturating_mul(ep).saturating_mul(m.top_k).saturating_mul(12);
        ops.push(ctx.comm(format!("{p}.ep.routing_allgather"), CommKind::AllGather, idx, ep));
        // The copies routed to local experts are picked out of the gathered tokens.
        ops.push(ctx.vector(format!("{p}.moe.select_local"), OpClass::Moe, VectorKind::Gather, local_rows, h));
    }
    // Token permutation: each routed copy is gathered into its expert's contiguous block
    // (npu_moe_token_permute / Megatron's permute); `moe.combine` below is the unpermute.
    let permute_rows = if all_gather { local_rows } else { copies };
    ops.push(ctx.vector(format!("{p}.moe.permute"), OpClass::Moe, VectorKind::Gather, permute_rows, h));
    if ep > 1 && !all_gather {
        match exchange {
            Some(form) => ops.push(moe_comm(MoePhase::Dispatch, form, if ctx.quant { DType::Int8 } else { ctx.vec })),
            None => ops.push(ctx.comm(format!("{p}.ep.dispatch_alltoall"), CommKind::AllToAll, copy_bytes, ep)),
        }
    }
    let inter = ceil_div(m.expert_intermediate, tp);
    // One grouped matmul over the local experts, or (SequentialMLP) one matmul per expert.
    let (batch, repeat) = if t.moe_grouped_gemm { (hit_local, 1) } else { (1, hit_local) };
    // The experts' own precision when the checkpoint quantises them apart (inference).
    let (e_mm, e_weight, e_quant) = match opts.expert_precision {
        Some(p) => {
            let (a, w) = (p.activation(), p.weight());
            (a, if w != a { Some(w) } else { None }, a.is_int())
        }
        None => (ctx.mm, ctx.weight, ctx.quant),
    };
    // Packed integer weights under 16-bit activations through the library's workspace path
    // (`GraphOptions::expert_dequant_workspace`): the vector cores dequantise each touched
    // expert's weights into a 16-bit workspace (`moe.experts.<proj>.antiquant`, the kernel's
    // vector phase) and the cube reads them from there at 16 bits; empty groups are skipped.
    let workspace = opts.expert_dequant_workspace && e_weight.is_some_and(|w| w.is_int()) && !e_mm.is_int();
    let w_dtype = if workspace { None } else { e_weight };
    let grouped = |ops: &mut Vec<GraphOp>, name: &str, n: u64, k: u64, epi: Epilogue| {
        if let (true, Some(w)) = (workspace, e_weight) {
            let deq = Op::Vector { kind: VectorKind::Antiquant, rows: hit_local.saturating_mul(k), row_len: n, dtype: w };
            ops.push(GraphOp { name: format!("{p}.moe.experts.{name}.antiquant"), op: deq, repeat: 1, class: OpClass::Moe });
        }
        let op = Op::Matmul { batch, m: per_expert, n, k, dtype: e_mm, weight_dtype: w_dtype, epilogue: epi };
        ops.push(GraphOp { name: format!("{p}.moe.experts.{name}"), op, repeat, class: OpClass::Moe });
    };
    let rows = local_rows;
    if e_quant && !ctx.quant {
        // INT8-activation experts under a 16-bit model: the routed rows are quantised first.
        ops.push(ctx.vector(format!("{p}.moe.experts.quant"), OpClass::Moe, VectorKind::Quantize, rows, h));
    }
    if ctx.t.mlp == crate::model::MlpKind::Relu2 {
        // Squared-ReLU experts (Nemotron 3): up, relu^2, down.
        grouped(ops, "up_proj", inter, h, Epilogue::None);
        ops.push(ctx.vector(format!("{p}.moe.experts.act"), OpClass::Moe, VectorKind::Activation, rows, inter));
    } else {
        let epi = if ctx.fuse { Epilogue::SwiGlu } else { Epilogue::None };
        grouped(ops, "gate_up_proj", 2 * inter, h, epi);
        if !ctx.fuse {
            ops.push(ctx.vector(format!("{p}.moe.experts.act"), OpClass::Moe, VectorKind::SwiGlu, rows, inter));
        }
    }
    if e_quant {
        ops.push(ctx.vector(format!("{p}.moe.experts.down_quant"), OpClass::Moe, VectorKind::Quantize, rows, inter));
    }
    grouped(ops, "down_proj", h, inter, Epilogue::None);
    if ep > 1 && !all_gather {
        match exchange {
            Some(form) => ops.push(moe_comm(MoePhase::Combine, form, ctx.vec)),
            None => ops.push(ctx.comm(format!("{p}.ep.combine_alltoall"), CommKind::AllToAll, copy_bytes, ep)),
        }
    }
    if m.latent > 0 {
        ops.push(ctx.mm(format!("{p}.moe.latent_up"), OpClass::Moe, tokens, hidden, m.latent, Epilogue::None));
    }
    if m.shared_intermediate > 0 {
        mlp(ctx, ops, &format!("{p}.moe.shared"), OpClass::Moe, tokens, ceil_div(m.shared_intermediate, tp));
        if m.shared_gate {
            let gate = Op::Matmul { batch: 1, m: tokens, n: 1, k: hidden, dtype: ctx.vec, weight_dtype: None, epilogue: Epilogue::None };
            ops.push(GraphOp { name: format!("{p}.moe.shared.gate"), op: gate, repeat: 1, class: OpClass::Moe });
        }
    }
    if all_gather {
        // Unpermute and weight the local copies, scatter-add them into a zeroed buffer the size
        // of the group's tokens, and reduce-scatter that buffer back to the tokens' ranks.
        ops.push(ctx.vector(format!("{p}.moe.combine"), OpClass::Moe, VectorKind::Elementwise, local_rows, h));
        let group_rows = tokens.saturating_mul(ep);
        if t.moe_permutation_async_comm {
            fp32_scatter_add(ctx, ops, p, local_rows, group_rows);
        } else {
            ops.push(ctx.vector(format!("{p}.moe.combine_scatter_add"), OpClass::Moe, VectorKind::Elementwise, group_rows, h));
        }
        ops.push(ctx.comm(format!("{p}.ep.combine_reduce_scatter"), CommKind::ReduceScatter, group_bytes, ep));
    } else {
        ops.push(ctx.vector(format!("{p}.moe.combine"), OpClass::Moe, VectorKind::Elementwise, copies, h));
        if t.moe_permutation_async_comm && t.moe_dispatcher == MoeDispatcher::AllGather && ctx.plan.sequence_parallel && ctx.plan.tp > 1 {
            // The all-gather dispatcher's path under sequence parallelism without EP: the TP
            // group's tokens were gathered (`enter_tp`), every copy is local, and the combined
            // output goes through the same fp32 buffer before the TP reduce-scatter (`leave_tp`).
            fp32_scatter_add(ctx, ops, p, copies, tokens);
        }
    }
}

/// The busiest expert's load over the mean after EPLB: `redundant` extra copies over `ep` ranks
/// go to the hottest experts, and a hot expert with a copy on another rank has its tokens split
/// between the two. With at least one redundant slot per rank (DeepSeek's deployment: 32
/// redundant on 320 slots) the hottest expert's excess is halved; fewer slots halve it for
/// that share of the ranks. No redundancy (or ep = 1): the imbalance as given.
fn balanced_imbalance(imbalance: f64, redundant: u64, ep: u64) -> f64 {
    if redundant == 0 || ep <= 1 {
        return imbalance;
    }
    let covered = (redundant as f64 / ep as f64).min(1.0);
    (1.0 + (imbalance - 1.0) * (1.0 - 0.5 * covered)).max(1.0)
}

/// The all-gather dispatcher's combine as MindSpeed runs it (mindspeed/core/transformer/moe/
/// token_dispatcher.py, `allgather_token_unpermutation` with `NewIndePut`, the path
/// --moe-permutation-async-comm takes: `TrainOptions::moe_permutation_async_comm`): the weighted
/// local copies are cast to fp32 and index_put-accumulated into a zeroed fp32 buffer of the
/// group's tokens, which is cast back to the activation type for the reduce-scatter. Bytes per element: the copies' cast 2 + 4, the
/// accumulate 4 + 4 read and 4 written; the buffer's zero fill 4 written and cast back 4 + 2.
/// All of it is one autograd Function whose backward is a row gather of the 16-bit gradient
/// (`index_select`): the staging ops (`combine_fp32_*`) have no backward, and the scatter-add's
/// backward is that gather (`workload::train`). fp32 training has no casts: one scatter-add into
/// the group-sized buffer.
fn fp32_scatter_add(ctx: &Ctx, ops: &mut Vec<GraphOp>, p: &str, local_rows: u64, group_rows: u64) {
    let h = ctx.t.hidden;
    let f32 = DType::Fp32;
    if ctx.vec == f32 {
        // fp32 training: no casts; the copies are scatter-added into the group-sized buffer.
        ops.push(ctx.vector(format!("{p}.moe.combine_scatter_add"), OpClass::Moe, VectorKind::Elementwise, group_rows, h));
        return;
    }
    let v = |name: &str, kind, rows, row_len, dtype| GraphOp { name: format!("{p}.moe.{name}"), op: Op::Vector { kind, rows, row_len, dtype }, repeat: 1, class: OpClass::Moe };
    // The zero fill writes 4 bytes per element: priced as a copy (read + write) of half as many
    // fp32 elements, the same bytes.
    ops.push(v("combine_fp32_zero", VectorKind::Gather, group_rows, h.div_ceil(2), f32));
    ops.push(v("combine_fp32_cast", VectorKind::Cast, local_rows, h, ctx.vec));
    ops.push(v("combine_scatter_add_fp32", VectorKind::Elementwise, local_rows, h, f32));
    ops.push(v("combine_fp32_to_bf16", VectorKind::Cast, group_rows, h, f32));
}

/// A serving engine's exchange for this block (`GraphOptions::moe_comm`): None without a
/// policy or expert parallelism; Some(Some(form)) a dispatch/combine pair; Some(None) the
/// all-gather dispatcher. The engine decides on its data-parallel rank's tokens (`tokens` is a
/// TP rank's share when expert parallelism spans the TP ranks).
pub(super) fn serving_exchange(ctx: &Ctx, opts: &GraphOptions, tokens: u64) -> Option<Option<MoeCommForm>> {
    let ep = ctx.plan.ep;
    let policy = opts.moe_comm.filter(|_| ep > 1)?;
    let experts = ctx.t.moe.as_ref().map_or(0, |m| m.experts);
    Some(crate::workload::serving_moe_form(&policy, tokens.saturating_mul(ctx.plan.moe_token_split()), ep, experts))
}

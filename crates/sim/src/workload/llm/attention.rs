//! A transformer layer's full-attention block (split from `llm.rs`, no change): the input norm
//! and TP entry, the projections (plain, low-rank query, or MLA's latent), context parallelism
//! (ring all-gather or Ulysses all-to-all), decode context parallelism, the attention core, and
//! o_proj with the TP exit.

use super::{local_heads, Ctx, Geom};
use crate::model::OpClass;
use crate::op::{AttentionKind, CommKind, Epilogue, Op, VectorKind};
use crate::workload::{CpAlgo, GraphOp, GraphOptions};

/// Appends the attention block of one layer (repeat 1) for the geometry `g`.
pub(super) fn attention_block(ctx: &Ctx, ops: &mut Vec<GraphOp>, p: &str, g: &Geom, opts: &GraphOptions) {
    let t = ctx.t;
    let tp = ctx.plan.tp;
    let tokens = g.batch.saturating_mul(g.q_len);
    let (hq, hkv) = local_heads(t, tp);
    let d = t.head_dim;
    let norm = ctx.norm_kind();

    ops.push(ctx.vector(format!("{p}.input_norm"), OpClass::Norm, norm, ctx.norm_rows(tokens), t.hidden));
    ctx.enter_tp(ops, p, "attn", OpClass::Attention, tokens, t.hidden);
    // Width of the attention output per chip (o_proj's input).
    let attn_out = match &t.mla {
        Some(m) => {
            mla_projections(ctx, ops, p, g, tokens, hq, m);
            hq * m.v_head_dim
        }
        None => {
            let qkv_epi = if t.qkv_bias { Epilogue::Bias } else { Epilogue::None };
            // An output gate rides on q_proj (queries and gate side by side).
            let gate = if t.attn_output_gate { hq * d } else { 0 };
            let qkv_n = (hq + t.kv_factor() * hkv) * d + gate;
            if t.q_bottleneck > 0 {
                // Step-3's low-rank query: q_down with k and v, the query's norm, then wq.
                let r = t.q_bottleneck;
                ops.push(ctx.mm(format!("{p}.attn.qkv_proj"), OpClass::Attention, tokens, r + t.kv_factor() * hkv * d + gate, t.hidden, qkv_epi));
                ops.push(ctx.vector(format!("{p}.attn.q_norm"), OpClass::Attention, VectorKind::RmsNorm, tokens, r));
                ops.push(ctx.mm(format!("{p}.attn.wq"), OpClass::Attention, tokens, hq * d, r, Epilogue::None));
            } else if opts.split_qkv && gate == 0 {
                for (name, n) in [("q_proj", hq * d), ("k_proj", hkv * d), ("v_proj", hkv * d)] {
                    ops.push(ctx.mm(format!("{p}.attn.{name}"), OpClass::Attention, tokens, n, t.hidden, qkv_epi));
                }
            } else {
                ops.push(ctx.mm(format!("{p}.attn.qkv_proj"), OpClass::Attention, tokens, qkv_n, t.hidden, qkv_epi));
            }
            if t.qk_norm {
                // Qwen3: an RMSNorm over every query and key head.
                let rows = tokens.saturating_mul(hq + hkv);
                ops.push(ctx.vector(format!("{p}.attn.qk_norm"), OpClass::Attention, VectorKind::RmsNorm, rows, d));
            }
            if g.rotary {
                let rows = tokens.saturating_mul(hq + hkv);
                ops.push(ctx.vector(format!("{p}.attn.rotary"), OpClass::Attention, VectorKind::Rotary, rows, d));
            }
            hq * d
        }
    };
    let cp = ctx.plan.cp;
    let ulysses = g.cp_split && cp > 1 && opts.train.cp_algo == CpAlgo::Ulysses;
    if ulysses {
        // Ulysses: each rank trades its s / cp tokens of every query, key and value head for the
        // whole sequence of 1 / cp of the heads (an all-to-all of its q, k and v).
        let elems = match &t.mla {
            Some(m) => hq * (2 * m.qk_dim() + m.v_head_dim),
            None => (hq + 2 * hkv) * d,
        };
        let bytes = tokens.saturating_mul(elems).saturating_mul(ctx.vec.bytes());
        ops.push(ctx.comm(format!("{p}.cp.qkv_alltoall"), CommKind::AllToAll, bytes, cp));
    } else if ctx.plan.cp > 1 && g.kind != AttentionKind::Decode {
        // Context parallelism (ring attention): every chip sees every other chip's keys and
        // values once per layer; Megatron overlaps the ring steps with attention, but the bytes
        // are counted here as a collective over the CP group.
        let kv_elems = match &t.mla {
            Some(m) => hq * (m.qk_dim() + m.v_head_dim),
            None => 2 * hkv * d,
        };
        let bytes = g.batch.saturating_mul(g.q_len).saturating_mul(ctx.plan.cp).saturating_mul(kv_elems).saturating_mul(ctx.vec.bytes());
        ops.push(ctx.comm(format!("{p}.cp.kv_allgather"), CommKind::AllGather, bytes, ctx.plan.cp));
    }
    // MLA in training: the fused attention kernel takes one head dimension for queries, keys and
    // values, so the values are zero-padded from v_head_dim to the query/key dimension
    // (Megatron-Core MLASelfAttention "pad value to q_head_dim", MindSpeed-LLM padding_v_head_dim)
    // and the output sliced back: PV runs on qk_dim, not v_head_dim.
    let mla_v_pad = match &t.mla {
        Some(m) if g.train && g.kind != AttentionKind::Decode && m.v_head_dim < m.qk_dim() => Some(m.qk_dim()),
        _ => None,
    };
    let (kv_heads_core, head_dim_core) = match (&t.mla, g.kind, mla_v_pad) {
        // Absorbed MLA decode (DeepSeek-V2 appendix): every query head attends to the one cached
        // latent (+ rotary key); QK^T on latent + rope, PV on the latent. The kernel takes the
        // 544-wide (mean of 576 and 512) latent through L0 in slices, all its query heads the
        // rows against one KV block; written, as the sparse form's decode core is, as
        // `SLICE`-wide slices, each its own KV head (the same FLOPs and cache bytes). As one
        // 544-wide head the device's flash tiling fits only 16 query rows a block, and every
        // 16-row block would stream the whole cache again (DeepSeek-V3.1 2P1D decode at TP1
        // was priced at 14.7 TFLOP/s, 4.5x its measured TPOT).
        (Some(m), AttentionKind::Decode, _) => {
            let absorbed = (m.cache_dim() + m.kv_lora_rank).div_ceil(2);
            let slices = absorbed.div_ceil(crate::workload::sparse_attention::SLICE);
            (slices, absorbed.div_ceil(slices))
        }
        (_, _, Some(qk)) => (hkv, qk),
        _ => (hkv, d),
    };
    // The latent decode's slices multiply the core's query heads (every head meets every slice).
    let latent_slices = if t.mla.is_some() && g.kind == AttentionKind::Decode { kv_heads_core } else { 1 };
    // Ulysses runs causal attention over the whole sequence on 1 / cp of the heads (key/value
    // heads fewer than cp are replicated).
    let (heads_core, kv_heads_core, q_core, kv_core, causal_core) = if ulysses {
        let s_full = g.q_len.saturating_mul(cp);
        (hq / cp, (kv_heads_core / cp).max(1), s_full, s_full, true)
    } else {
        (hq, kv_heads_core, g.q_len, g.kv_len, g.causal)
    };
    // Decode context parallel (vLLM `--decode-context-parallel-size`): each of the dcp ranks
    // holds 1 / dcp of every cache; it gathers the query heads of its group, attends its shard
    // with them all, and the partial outputs are merged by their log-sum-exp (an all-gather of
    // the LSE, a reduce-scatter of the outputs back to each rank's own heads).
    let dcp = if g.kind == AttentionKind::Decode { ctx.plan.dcp.max(1) } else { 1 };
    let (heads_core, kv_core) = if dcp > 1 {
        let q_dim = t.mla.as_ref().map_or(d, |m| m.cache_dim());
        let bytes = tokens.saturating_mul(heads_core).saturating_mul(dcp).saturating_mul(q_dim).saturating_mul(ctx.vec.bytes());
        ops.push(ctx.comm(format!("{p}.tp.dcp_q_allgather"), CommKind::AllGather, bytes, dcp));
        (heads_core.saturating_mul(dcp), kv_core.div_ceil(dcp))
    } else {
        (heads_core, kv_core)
    };
    if let Some(qk) = mla_v_pad {
        // F.pad materialises the padded values (a row copy at the padded width).
        ops.push(ctx.vector(format!("{p}.attn.v_pad"), OpClass::Attention, VectorKind::Gather, tokens.saturating_mul(hq), qk));
    }
    let op = Op::Attention {
        kind: g.kind,
        batch: g.batch,
        heads: heads_core.saturating_mul(latent_slices),
        kv_heads: kv_heads_core,
        q_len: q_core,
        kv_len: kv_core,
        head_dim: head_dim_core,
        causal: causal_core,
        // Decode reads the cache in its own type (an INT8 KV cache, C8, halves those bytes).
        dtype: if g.kind == AttentionKind::Decode { opts.kv_dtype() } else { ctx.vec },
    };
    ops.push(GraphOp { name: format!("{p}.attn.core"), op, repeat: 1, class: OpClass::Attention });
    if dcp > 1 {
        let v_dim = t.mla.as_ref().map_or(d, |m| m.kv_lora_rank);
        let rows = tokens.saturating_mul(heads_core);
        ops.push(ctx.comm(format!("{p}.tp.dcp_lse_allgather"), CommKind::AllGather, rows.saturating_mul(4), dcp));
        ops.push(ctx.comm(format!("{p}.tp.dcp_out_reduce_scatter"), CommKind::ReduceScatter, rows.saturating_mul(v_dim).saturating_mul(ctx.vec.bytes()), dcp));
    }
    if mla_v_pad.is_some() {
        // The output is sliced back to v_head_dim and made contiguous for o_proj.
        ops.push(ctx.vector(format!("{p}.attn.out_slice"), OpClass::Attention, VectorKind::Gather, tokens.saturating_mul(hq), attn_out / hq.max(1)));
    }
    if ulysses {
        // The attention output goes back to the sequence split.
        let v_dim = t.mla.as_ref().map_or(d, |m| m.v_head_dim);
        let bytes = tokens.saturating_mul(hq).saturating_mul(v_dim).saturating_mul(ctx.vec.bytes());
        ops.push(ctx.comm(format!("{p}.cp.out_alltoall"), CommKind::AllToAll, bytes, cp));
    }
    if let (Some(m), AttentionKind::Decode) = (&t.mla, g.kind) {
        // Absorbed value up-projection: latent -> v per head.
        let op = Op::Matmul { batch: hq, m: tokens, n: m.v_head_dim, k: m.kv_lora_rank, dtype: ctx.mm, weight_dtype: ctx.weight, epilogue: Epilogue::None };
        ops.push(GraphOp { name: format!("{p}.attn.mla_v_up"), op, repeat: 1, class: OpClass::Attention });
    }
    if t.attn_output_gate {
        // sigmoid(gate) * attention output, before o_proj.
        ops.push(ctx.vector(format!("{p}.attn.output_gate"), OpClass::Attention, VectorKind::SwiGlu, tokens, attn_out));
    }
    if ctx.quant {
        ops.push(ctx.vector(format!("{p}.attn.o_quant"), OpClass::Attention, VectorKind::Quantize, tokens, attn_out));
    }
    if t.o_groups > 0 && t.o_lora_rank > 0 && t.mla.is_none() {
        // DeepSeek-V4's grouped low-rank output: each of this chip's groups projects its heads
        // to o_lora_rank (wo_a, one matmul of the groups side by side: the same FLOPs and
        // weights), then all groups to the hidden width (wo_b, row-parallel like o_proj).
        let g_here = t.o_groups.div_ceil(tp.max(1));
        let rank_here = g_here.saturating_mul(t.o_lora_rank);
        ops.push(ctx.mm(format!("{p}.attn.o_a_proj"), OpClass::Attention, tokens, rank_here, attn_out.div_ceil(g_here), Epilogue::None));
        ops.push(ctx.mm(format!("{p}.attn.o_proj"), OpClass::Attention, tokens, t.hidden, rank_here, ctx.down_epilogue()));
    } else {
        ops.push(ctx.mm(format!("{p}.attn.o_proj"), OpClass::Attention, tokens, t.hidden, attn_out, ctx.down_epilogue()));
    }
    ctx.leave_tp(ops, p, "attn", OpClass::Attention, tokens);
}

/// MLA's projections (DeepSeek-V2, section 2.1.2): queries directly or through a low-rank
/// bottleneck, one shared down-projection to the latent plus rotary key (replicated across TP),
/// and the latent's up-projection to per-head keys and values. Decode absorbs the key
/// up-projection into the query (the cache holds only the latent).
fn mla_projections(ctx: &Ctx, ops: &mut Vec<GraphOp>, p: &str, g: &Geom, tokens: u64, hq: u64, m: &crate::model::MlaDesc) {
    let h = ctx.t.hidden;
    let cls = OpClass::Attention;
    let qk = m.qk_dim();
    if m.q_lora_rank > 0 {
        ops.push(ctx.mm(format!("{p}.attn.q_down"), cls, tokens, m.q_lora_rank, h, Epilogue::None));
        ops.push(ctx.vector(format!("{p}.attn.q_norm"), cls, VectorKind::RmsNorm, tokens, m.q_lora_rank));
        ops.push(ctx.mm(format!("{p}.attn.q_up"), cls, tokens, hq * qk, m.q_lora_rank, Epilogue::None));
    } else {
        ops.push(ctx.mm(format!("{p}.attn.q_proj"), cls, tokens, hq * qk, h, Epilogue::None));
    }
    ops.push(ctx.mm(format!("{p}.attn.kv_down"), cls, tokens, m.cache_dim(), h, Epilogue::None));
    ops.push(ctx.vector(format!("{p}.attn.kv_norm"), cls, VectorKind::RmsNorm, tokens, m.kv_lora_rank));
    if g.kind == AttentionKind::Decode {
        let op = Op::Matmul { batch: hq, m: tokens, n: m.kv_lora_rank, k: m.qk_nope_head_dim, dtype: ctx.mm, weight_dtype: ctx.weight, epilogue: Epilogue::None };
        ops.push(GraphOp { name: format!("{p}.attn.mla_q_absorb"), op, repeat: 1, class: cls });
    } else {
        let n = hq * (m.qk_nope_head_dim + m.v_head_dim);
        ops.push(ctx.mm(format!("{p}.attn.kv_up"), cls, tokens, n, m.kv_lora_rank, Epilogue::None));
    }
    if g.rotary {
        let rows = tokens.saturating_mul(hq + 1);
        ops.push(ctx.vector(format!("{p}.attn.rotary"), cls, VectorKind::Rotary, rows, m.qk_rope_head_dim));
    }
}


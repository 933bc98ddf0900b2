//! Transformer forward graphs (decoder LLMs, MoE, and the ViT encoder of multimodal models) with
//! Megatron-style tensor parallelism (Shoeybi et al. 2019): q/k/v and MLP-up are column-split,
//! o_proj and MLP-down row-split, so each block ends in one all-reduce; with sequence parallelism
//! (Korthikanti et al. 2022) that all-reduce becomes reduce-scatter + all-gather around the norms.

use super::{CpAlgo, GraphOp, GraphOptions, ParallelPlan, Workload};
use crate::dtype::DType;
use crate::model::{Ffn, Mixer as LayerMixer, MlpKind, ModelDesc, NormKind, OpClass, TransformerDesc};
use crate::op::{AttentionKind, CommKind, Epilogue, Op, VectorKind};
use super::linear_attention::{mixer_ops, split_group, Mixer};

mod moe;
mod ssm;
use moe::moe_block;

/// Fixed shape facts shared by the ops of one transformer stack.
struct Ctx<'a> {
    t: &'a TransformerDesc,
    plan: &'a ParallelPlan,
    /// Matmul activation type, weight type (None = same) and vector/attention type.
    mm: DType,
    weight: Option<DType>,
    vec: DType,
    fuse: bool,
    /// W8A8: activations are quantised before each linear layer.
    quant: bool,
}

fn ceil_div(a: u64, b: u64) -> u64 {
    a.checked_div(b).map_or(a, |_| a.div_ceil(b))
}

/// The query, KV heads and width held by one chip under TP (KV heads are replicated when
/// tp > kv_heads, as vLLM and MindIE do).
fn local_heads(t: &TransformerDesc, tp: u64) -> (u64, u64) {
    (t.heads / tp, (t.kv_heads / tp).max(1))
}

/// Where in the sequence a stack runs: tokens per sequence now, keys attended, and how.
struct Geom {
    batch: u64,
    q_len: u64,
    kv_len: u64,
    kind: AttentionKind,
    causal: bool,
    rotary: bool,
    /// The sequence is split over the context-parallel ranks (a training step's LLM layers).
    cp_split: bool,
    /// A training step's layers (Megatron / MindSpeed kernels).
    train: bool,
}

impl Ctx<'_> {
    fn mm(&self, name: String, class: OpClass, m: u64, n: u64, k: u64, epi: Epilogue) -> GraphOp {
        let op = Op::Matmul { batch: 1, m, n, k, dtype: self.mm, weight_dtype: self.weight, epilogue: epi };
        GraphOp { name, op, repeat: 1, class }
    }
    fn vector(&self, name: String, class: OpClass, kind: VectorKind, rows: u64, row_len: u64) -> GraphOp {
        GraphOp { name, op: Op::Vector { kind, rows, row_len, dtype: self.vec }, repeat: 1, class }
    }
    fn comm(&self, name: String, kind: CommKind, bytes: u64, ranks: u64) -> GraphOp {
        let op = Op::Comm { kind, bytes, ranks, link: Default::default(), algorithm: Default::default() };
        GraphOp { name, op, repeat: 1, class: OpClass::Comm }
    }
    fn norm_kind(&self) -> VectorKind {
        match self.t.norm {
            NormKind::RmsNorm => VectorKind::RmsNorm,
            NormKind::LayerNorm => VectorKind::LayerNorm,
        }
    }
    /// Rows a norm or residual add sees: the sequence is split over TP under sequence parallel.
    fn norm_rows(&self, tokens: u64) -> u64 {
        if self.plan.sequence_parallel && self.plan.tp > 1 {
            ceil_div(tokens, self.plan.tp)
        } else {
            tokens
        }
    }
    /// The all-gather that enters a TP region under sequence parallelism, plus W8A8 quantisation.
    fn enter_tp(&self, ops: &mut Vec<GraphOp>, p: &str, block: &str, class: OpClass, tokens: u64, width: u64) {
        let tp = self.plan.tp;
        if tp > 1 && self.plan.sequence_parallel {
            let bytes = tokens.saturating_mul(width).saturating_mul(self.vec.bytes());
            ops.push(self.comm(format!("{p}.tp.{block}_allgather"), CommKind::AllGather, bytes, tp));
        }
        if self.quant {
            ops.push(self.vector(format!("{p}.{block}.quant"), class, VectorKind::Quantize, tokens, width));
        }
    }
    /// The TP reduction that leaves a block, and the residual add if it was not fused.
    fn leave_tp(&self, ops: &mut Vec<GraphOp>, p: &str, block: &str, class: OpClass, tokens: u64) {
        let (tp, h) = (self.plan.tp, self.t.hidden);
        if tp > 1 {
            let bytes = tokens.saturating_mul(h).saturating_mul(self.vec.bytes());
            let (kind, what) = if self.plan.sequence_parallel {
                (CommKind::ReduceScatter, "reduce_scatter")
            } else {
                (CommKind::AllReduce, "allreduce")
            };
            ops.push(self.comm(format!("{p}.tp.{block}_{what}"), kind, bytes, tp));
        }
        if !self.residual_fused() {
            let rows = self.norm_rows(tokens);
            ops.push(self.vector(format!("{p}.{block}.residual_add"), class, VectorKind::Elementwise, rows, h));
        }
    }
    /// A residual add can ride on the row-parallel matmul only when no reduction follows it.
    fn residual_fused(&self) -> bool {
        self.fuse && self.plan.tp == 1
    }
    fn down_epilogue(&self) -> Epilogue {
        if self.residual_fused() { Epilogue::ResidualAdd } else { Epilogue::None }
    }
}

/// Appends one transformer layer's ops (repeat 1): full attention as its mixer (the group's
/// other mixers are split off by `stack`) and the feed-forward block `ffn`.
fn layer(ctx: &Ctx, ops: &mut Vec<GraphOp>, p: &str, g: &Geom, ffn: &Ffn, opts: &GraphOptions) {
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
            let slices = absorbed.div_ceil(super::sparse_attention::SLICE);
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

    if *ffn == Ffn::None {
        // A mixer-only layer of a hybrid pattern (Nemotron-H's Mamba and attention layers).
        return;
    }
    ops.push(ctx.vector(format!("{p}.post_norm"), OpClass::Norm, norm, ctx.norm_rows(tokens), t.hidden));
    let moe_layer = *ffn == Ffn::Moe;
    match (&t.moe, moe_layer) {
        (Some(m), true) if ctx.plan.moe_token_split() > 1 => {
            // Expert parallelism over the TP ranks (vLLM's --enable-expert-parallel, as
            // vLLM-Ascend runs it): the TP group's tokens are split, each rank routes its share
            // to the experts' ranks by all-to-all, and the MoE outputs, complete per token (no
            // partial sums with whole experts), are all-gathered back over TP. Under sequence
            // parallelism the tokens are already split that way: no collective in or out.
            let local = ceil_div(tokens, ctx.plan.moe_token_split());
            if ctx.quant {
                ops.push(ctx.vector(format!("{p}.moe.quant"), OpClass::Moe, VectorKind::Quantize, local, t.hidden));
            }
            // The group's real tokens: this TP group's (not the split rounded up) on each DP rank.
            let group = tokens.saturating_mul((ctx.plan.ep / ctx.plan.tp.max(1)).max(1));
            moe_block(ctx, ops, p, local, group, m, opts);
            if !ctx.plan.sequence_parallel {
                let bytes = tokens.saturating_mul(t.hidden).saturating_mul(ctx.vec.bytes());
                ops.push(ctx.comm(format!("{p}.tp.moe_allgather"), CommKind::AllGather, bytes, tp));
            }
            if !ctx.residual_fused() {
                ops.push(ctx.vector(format!("{p}.moe.residual_add"), OpClass::Moe, VectorKind::Elementwise, ctx.norm_rows(tokens), t.hidden));
            }
        }
        (Some(m), true) => {
            ctx.enter_tp(ops, p, "moe", OpClass::Moe, tokens, t.hidden);
            moe_block(ctx, ops, p, tokens, tokens.saturating_mul(ctx.plan.ep.max(1)), m, opts);
            ctx.leave_tp(ops, p, "moe", OpClass::Moe, tokens);
        }
        _ => {
            ctx.enter_tp(ops, p, "mlp", OpClass::Mlp, tokens, t.hidden);
            let inter = match *ffn {
                Ffn::Dense { intermediate } => intermediate,
                _ => t.intermediate,
            };
            mlp(ctx, ops, &format!("{p}.mlp"), OpClass::Mlp, tokens, ceil_div(inter, tp));
            ctx.leave_tp(ops, p, "mlp", OpClass::Mlp, tokens);
        }
    }
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

/// A dense MLP of local width `inter` over `tokens` rows.
fn mlp(ctx: &Ctx, ops: &mut Vec<GraphOp>, p: &str, class: OpClass, tokens: u64, inter: u64) {
    let h = ctx.t.hidden;
    match ctx.t.mlp {
        MlpKind::SwiGlu => {
            let epi = if ctx.fuse { Epilogue::SwiGlu } else { Epilogue::None };
            ops.push(ctx.mm(format!("{p}.gate_up_proj"), class, tokens, 2 * inter, h, epi));
            if !ctx.fuse {
                ops.push(ctx.vector(format!("{p}.act"), class, VectorKind::SwiGlu, tokens, inter));
            }
        }
        MlpKind::Relu2 => {
            // up, relu^2, down (no gate, no biases).
            ops.push(ctx.mm(format!("{p}.up_proj"), class, tokens, inter, h, Epilogue::None));
            ops.push(ctx.vector(format!("{p}.act"), class, VectorKind::Activation, tokens, inter));
        }
        MlpKind::Gelu => {
            let epi = if ctx.fuse { Epilogue::BiasGelu } else { Epilogue::Bias };
            ops.push(ctx.mm(format!("{p}.up_proj"), class, tokens, inter, h, epi));
            if !ctx.fuse {
                ops.push(ctx.vector(format!("{p}.act"), class, VectorKind::Activation, tokens, inter));
            }
        }
    }
    if ctx.quant {
        ops.push(ctx.vector(format!("{p}.down_quant"), class, VectorKind::Quantize, tokens, inter));
    }
    ops.push(ctx.mm(format!("{p}.down_proj"), class, tokens, h, inter, ctx.down_epilogue()));
}

/// Appends the stack's layers on this stage (`layers` of them): its runs grouped by MLP kind
/// (dense, MoE, none), each group one layer's operators times its count, with the group's other
/// token mixers split off the full-attention block (`split_group`: linear attention, Mamba-2,
/// short conv, none) and its windowed or chunked attention split off the attention core.
fn stack(ctx: &Ctx, ops: &mut Vec<GraphOp>, p: &str, g: &Geom, layers: u64, opts: &GraphOptions) {
    let mut groups: Vec<(Ffn, Vec<(LayerMixer, u64)>)> = Vec::new();
    for r in ctx.t.runs_here(layers) {
        let i = match groups.iter().position(|(f, _)| *f == r.ffn) {
            Some(i) => i,
            None => {
                groups.push((r.ffn, Vec::new()));
                groups.len() - 1
            }
        };
        match groups[i].1.iter_mut().find(|(m, _)| *m == r.mixer) {
            Some(e) => e.1 += r.count,
            None => groups[i].1.push((r.mixer, r.count)),
        }
    }
    groups.sort_by_key(|(f, _)| f.group());
    let multi = groups.len() > 1;
    let mut dense_seen = 0;
    for (ffn, mixers) in groups {
        let count: u64 = mixers.iter().map(|(_, n)| n).sum();
        if count == 0 {
            continue;
        }
        let prefix = match ffn {
            Ffn::Moe if multi => format!("{p}_moe"),
            Ffn::None if multi => format!("{p}_mixer"),
            Ffn::Dense { .. } => {
                dense_seen += 1;
                if dense_seen > 1 { format!("{p}_dense{dense_seen}") } else { p.to_string() }
            }
            _ => p.to_string(),
        };
        let start = ops.len();
        layer(ctx, ops, &prefix, g, &ffn, opts);
        for o in &mut ops[start..] {
            o.repeat = o.repeat.saturating_mul(count);
        }
        // Other token mixers replace the attention block in their share of the group.
        let mut others = Vec::new();
        let mut none_here = 0;
        for &(m, n) in &mixers {
            let mixer_ops = match m {
                LayerMixer::Linear => ctx.t.linear_attention.as_ref().map(|la| {
                    let mx = Mixer { la, hidden: ctx.t.hidden, tp: ctx.plan.tp, mm: ctx.mm, weight: ctx.weight, vec: ctx.vec, quant: ctx.quant };
                    mixer_ops(&mx, &prefix, g.batch, g.q_len)
                }),
                LayerMixer::Mamba2 => ctx.t.mamba.as_ref().map(|mb| ssm::mamba2_ops(ctx, mb, &prefix, g.batch, g.q_len)),
                LayerMixer::ShortConv { kernel } => Some(ssm::short_conv_ops(ctx, kernel, &prefix, g.batch, g.q_len)),
                LayerMixer::None => {
                    none_here += n;
                    Some(Vec::new())
                }
                LayerMixer::Attention { .. } => None,
            };
            if let Some(mo) = mixer_ops {
                others.push((n, mo));
            }
        }
        if !others.is_empty() {
            split_group(ops, start, &prefix, count, others, none_here);
        }
        for &(m, n) in &mixers {
            if let LayerMixer::Attention { window, compress, topk, .. } = m {
                if compress > 0 {
                    // DeepSeek-V4's compressed attention (`compressed_attention`).
                    super::compressed_attention::apply(ops, start, &format!("{prefix}.attn.core"), window, compress, topk, n);
                    continue;
                }
            }
            if let LayerMixer::Attention { window, chunk, .. } = m {
                if window > 0 || chunk > 0 {
                    windowed(ops, start, &format!("{prefix}.attn.core"), window, chunk, n);
                }
            }
        }
        if ctx.t.has_global_widths() {
            // Gemma 4: the global layers' core (what is left of the group's core after the
            // windows are split off) attends at their own KV heads and head width.
            if let Some(g) = ctx.t.attention_view(&LayerMixer::FULL) {
                let name = format!("{prefix}.attn.core");
                if let Some(o) = ops[start..].iter_mut().find(|o| o.name == name) {
                    if let Op::Attention { ref mut kv_heads, ref mut head_dim, .. } = o.op {
                        *kv_heads = (g.kv_heads / ctx.plan.tp.max(1)).max(1);
                        *head_dim = g.head_dim;
                    }
                }
            }
        }
        // Attention sinks (gpt-oss, MiMo-V2-Flash; vLLM `gpt_oss.py` `sinks`): a learned logit
        // per head joins every query row's softmax: one more score per row and head (its
        // exponential and its share of the denominator), priced as an elementwise pass over
        // the rows' sink scores in the layers that have them.
        let sink_layers: u64 = mixers.iter().filter(|(m, _)| matches!(m, LayerMixer::Attention { sinks: true, .. })).map(|(_, n)| n).sum();
        if sink_layers > 0 {
            let heads = ceil_div(ctx.t.heads, ctx.plan.tp.max(1));
            let mut op = ctx.vector(format!("{prefix}.attn.sinks"), OpClass::Attention, VectorKind::Elementwise, g.batch.saturating_mul(g.q_len), heads);
            op.repeat = sink_layers;
            ops.push(op);
        }
        if !g.train {
            // DeepSeek sparse attention: the indexer and the top-k attention (dense MLA without `index_topk`).
            super::sparse_attention::apply(ops, start, &prefix, ctx.t, super::sparse_attention::Types { mm: ctx.mm, weight: ctx.weight, vec: ctx.vec, kv: opts.kv_dtype() });
        }
    }
}

/// `here` of the attention layers whose core is `name` attend within a sliding `window` or an
/// aligned `chunk`: their core is split off with that geometry. A causal window w over s > w
/// tokens averages w - w^2 / 2s keys per query; chunks of c over s tokens average c / 2 keys
/// per query (each query sees its chunk's earlier tokens), and a decoding query sees the
/// context modulo c.
fn windowed(ops: &mut Vec<GraphOp>, start: usize, name: &str, window: u64, chunk: u64, here: u64) {
    let Some(i) = ops[start..].iter().position(|o| o.name == name).map(|i| i + start) else { return };
    let Op::Attention { kind, batch, heads, kv_heads, q_len, kv_len, head_dim, causal, dtype } = ops[i].op else { return };
    let (kv, causal) = if window > 0 {
        let w = window;
        if kind == AttentionKind::Decode || !causal || q_len != kv_len {
            (kv_len.min(w), causal)
        } else if kv_len <= w {
            (kv_len, causal)
        } else {
            let (wf, sf) = (w as f64, kv_len as f64);
            ((wf - wf * wf / (2.0 * sf)).ceil() as u64, false)
        }
    } else if kind == AttentionKind::Decode {
        ((kv_len % chunk).max(1), causal)
    } else if !causal || q_len != kv_len || kv_len <= chunk {
        (kv_len.min(chunk), causal)
    } else {
        // Whole chunks attend causally within themselves: c / 2 keys per query on average,
        // priced as a non-causal attention over c / 2 keys (the same work).
        let full = kv_len / chunk;
        let rest = kv_len % chunk;
        let pairs = full as f64 * (chunk as f64) * (chunk as f64 + 1.0) / 2.0 + (rest as f64) * (rest as f64 + 1.0) / 2.0;
        ((pairs / kv_len as f64).ceil() as u64, false)
    };
    if here == 0 || (kv == kv_len && causal) {
        return;
    }
    let op = Op::Attention { kind, batch, heads, kv_heads, q_len, kv_len: kv.max(1), head_dim, causal, dtype };
    let suffix = if window > 0 { "_window" } else { "_chunk" };
    let win = GraphOp { name: format!("{name}{suffix}"), op, repeat: here, class: ops[i].class };
    if here >= ops[i].repeat {
        ops[i] = win;
    } else {
        ops[i].repeat -= here;
        ops.insert(i + 1, win);
    }
}

/// The forward graph of a transformer LLM (with its vision encoder, if any).
pub(super) fn forward(model: &ModelDesc, w: &Workload, plan: &ParallelPlan, opts: &GraphOptions) -> Result<Vec<GraphOp>, String> {
    let t = model.llm.as_ref().ok_or("not a transformer model")?;
    let train = w.is_train();
    let (mm, weight) = if train {
        (opts.vector_dtype(), None)
    } else {
        let (a, wt) = (opts.precision.activation(), opts.precision.weight());
        (a, if wt != a { Some(wt) } else { None })
    };
    let vec = opts.vector_dtype();
    let quant = mm.is_int();
    let ctx = Ctx { t, plan, mm, weight, vec, fuse: opts.fuse_epilogues, quant };
    let mut ops = Vec::new();
    let image_tokens = model.media_tokens();
    let prefill_kind = opts.prefill_attention();
    let (batch, q_len, kv_len, kind, logits_rows) = match *w {
        Workload::Prefill { batch, input_len } => {
            let s = input_len.saturating_add(image_tokens);
            (batch, s, s, prefill_kind, batch)
        }
        Workload::Decode { batch, context_len, .. } => {
            (batch, 1, context_len.saturating_add(image_tokens), AttentionKind::Decode, batch)
        }
        Workload::TrainStep { micro_batch, seq_len } => {
            let s = seq_len.saturating_add(image_tokens);
            let local = ceil_div(s, plan.cp.max(1));
            (micro_batch, local, s, prefill_kind, micro_batch.saturating_mul(local))
        }
    };
    let tokens = batch.saturating_mul(q_len);
    let (first_stage, last_stage) = plan.stage_ends();
    if let (Some(v), true, false) = (model.active_vision(), first_stage, matches!(w, Workload::Decode { .. })) {
        vision(&ctx, &mut ops, v, batch, opts)?;
    }
    if let (Some(a), true, true) = (model.active_audio(), first_stage, matches!(w, Workload::Prefill { .. })) {
        audio(&ctx, &mut ops, a, batch, opts);
    }
    if first_stage {
        ops.push(ctx.vector("embed.tokens".into(), OpClass::Embedding, VectorKind::Gather, tokens, t.hidden));
        if plan.tp > 1 {
            // Vocab-parallel embedding: each rank looks up its slice, an all-reduce sums them.
            let bytes = tokens.saturating_mul(t.hidden).saturating_mul(vec.bytes());
            ops.push(ctx.comm("tp.embed_allreduce".into(), CommKind::AllReduce, bytes, plan.tp));
        }
    }
    if plan.pp > 1 {
        // Point-to-point exchange with the neighbouring stage (activations forward, their
        // gradients back), modelled as a two-rank all-to-all whose per-rank contribution is the
        // activation tensor; the first stage of an uneven split sends what the others receive.
        let mut bytes = tokens.saturating_mul(t.hidden).saturating_mul(vec.bytes());
        if train {
            // Megatron's scatter/gather optimisation (Narayanan et al. 2021, section 4.1; the
            // activations are already sequence-sharded under SP): each TP rank sends 1/tp.
            bytes = ceil_div(bytes, plan.tp);
        }
        ops.push(ctx.comm("pp.recv_activations".into(), CommKind::AllToAll, bytes.saturating_mul(2), 2));
    }
    // Under context parallelism each chip holds s / cp queries of every sequence and, with the
    // load-balanced causal split Megatron uses, attends to half the keys on average.
    let (kv_len, causal) = if q_len < kv_len && kind != AttentionKind::Decode {
        (kv_len.div_ceil(2), false)
    } else {
        // An encoder attends both ways.
        (kv_len, !t.encoder)
    };
    // A BERT-style encoder adds learned absolute position embeddings to its input and has no
    // rotary embedding in its layers (BertSelfAttention); decoder LLMs rotate q and k.
    let g = Geom { batch, q_len, kv_len, kind, causal, rotary: !t.encoder, cp_split: train && plan.cp > 1, train };
    stack(&ctx, &mut ops, "layer", &g, plan.layers_here(t.layers), opts);
    // The final norm and the LM head are the last stage's (a stage before it of an uneven
    // split, MindSpeed's --num-layer-list, ends at its layers).
    if last_stage {
        ops.push(ctx.vector("final_norm".into(), OpClass::Norm, ctx.norm_kind(), logits_rows, t.hidden));
        // An encoder ends in a pooler (first token, hidden -> hidden, tanh) instead of an LM head.
        let vocab_local = if t.encoder { t.hidden } else { ceil_div(t.vocab, plan.tp) };
        let head = Op::Matmul { batch: 1, m: logits_rows, n: vocab_local, k: t.hidden, dtype: vec, weight_dtype: None, epilogue: Epilogue::None };
        ops.push(GraphOp { name: "lm_head".into(), op: head, repeat: 1, class: OpClass::LmHead });
        if train {
            ops.push(ctx.vector("lm_head.cross_entropy".into(), OpClass::LmHead, VectorKind::Softmax, logits_rows, vocab_local));
        } else if plan.tp > 1 && !t.encoder {
            let bytes = logits_rows.saturating_mul(t.vocab).saturating_mul(vec.bytes());
            ops.push(ctx.comm("tp.logits_allgather".into(), CommKind::AllGather, bytes, plan.tp));
        }
    }
    if opts.om_model && !train {
        super::onnx_om::apply(&mut ops);
    }
    Ok(ops)
}

/// The audio encoder (`model::audio`) over each request's 30 s windows, each encoded on its own:
/// the two-convolution stem (3 taps over the log-mel channels at twice the frame rate, then 3
/// taps of stride 2), the bidirectional blocks over the window's frames, and the projector
/// into the LLM (one row per audio token).
fn audio(outer: &Ctx, ops: &mut Vec<GraphOp>, a: &crate::model::audio::AudioDesc, batch: u64, opts: &GraphOptions) {
    let e = &a.encoder;
    let ctx = Ctx { t: e, ..*outer };
    let n = batch.saturating_mul(a.windows);
    let frames = a.frames;
    ops.push(outer.mm("audio.conv1".into(), OpClass::Embedding, n.saturating_mul(2 * frames), e.hidden, a.mel_bins * 3, Epilogue::BiasGelu));
    ops.push(outer.mm("audio.conv2".into(), OpClass::Embedding, n.saturating_mul(frames), e.hidden, e.hidden * 3, Epilogue::BiasGelu));
    let g = Geom { batch: n, q_len: frames, kv_len: frames, kind: opts.prefill_attention(), causal: false, rotary: false, cp_split: false, train: false };
    stack(&ctx, ops, "audio.layer", &g, e.layers, opts);
    let rows = n.saturating_mul(a.tokens_each());
    let epi = |last: bool| match (a.projector_bias, last) {
        (true, true) => Epilogue::Bias,
        (true, false) => Epilogue::BiasGelu,
        _ => Epilogue::None,
    };
    if a.projector_hidden > 0 {
        ops.push(outer.mm("audio.projector.fc1".into(), OpClass::Mlp, rows, a.projector_hidden, a.projector_in, epi(false)));
        ops.push(outer.mm("audio.projector.fc2".into(), OpClass::Mlp, rows, a.projector_out, a.projector_hidden, epi(true)));
    } else {
        ops.push(outer.mm("audio.projector".into(), OpClass::Mlp, rows, a.projector_out, a.projector_in, epi(true)));
    }
}

/// The ViT image encoder (`images` per sequence, each encoded on its own) and the projector
/// into the LLM.
fn vision(outer: &Ctx, ops: &mut Vec<GraphOp>, v: &crate::model::VisionDesc, batch: u64, opts: &GraphOptions) -> Result<(), String> {
    let batch = batch.saturating_mul(v.images.max(1));
    let e = &v.encoder;
    let ctx = Ctx { t: e, ..*outer };
    let conv = Op::Conv2d {
        batch,
        in_ch: v.channels,
        out_ch: e.hidden,
        h: v.image_size,
        w: v.image_size,
        kh: v.patch_size,
        kw: v.patch_size,
        stride: v.patch_size,
        pad: 0,
        dtype: ctx.vec,
    };
    ops.push(GraphOp { name: "vision.patch_embed".into(), op: conv, repeat: 1, class: OpClass::Embedding });
    let seq = v.encoder_seq(); // patches (+ CLIP's class token)
    let tokens = batch.saturating_mul(seq);
    ops.push(ctx.vector("vision.pre_norm".into(), OpClass::Norm, VectorKind::LayerNorm, tokens, e.hidden));
    let kind = opts.prefill_attention();
    let g = Geom { batch, q_len: seq, kv_len: seq, kind, causal: false, rotary: false, cp_split: false, train: false };
    stack(&ctx, ops, "vision.layer", &g, e.layers, opts);
    let llm_hidden = outer.t.hidden;
    // The projector sees one row per LLM image token: merge x merge patches concatenated
    // (Qwen2.5-VL's PatchMerger: Linear(4h, 4h), GELU, Linear(4h, text hidden)).
    let rows = batch.saturating_mul(v.image_tokens_each());
    let merged = e.hidden.saturating_mul(v.merge.max(1) * v.merge.max(1));
    if v.projector_hidden > 0 {
        ops.push(outer.mm("vision.projector.fc1".into(), OpClass::Mlp, rows, v.projector_hidden, merged, Epilogue::BiasGelu));
        ops.push(outer.mm("vision.projector.fc2".into(), OpClass::Mlp, rows, llm_hidden, v.projector_hidden, Epilogue::Bias));
    } else {
        ops.push(outer.mm("vision.projector".into(), OpClass::Mlp, rows, llm_hidden, merged, Epilogue::Bias));
    }
    // Qwen3-VL's DeepStack mergers: the projector's shape again, once each.
    ops.iter_mut().filter(|o| o.name.starts_with("vision.projector")).for_each(|o| o.repeat = v.mergers());
    Ok(())
}

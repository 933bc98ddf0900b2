//! Transformer forward graphs (decoder LLMs, MoE, and the ViT encoder of multimodal models) with
//! Megatron-style tensor parallelism (Shoeybi et al. 2019): q/k/v and MLP-up are column-split,
//! o_proj and MLP-down row-split, so each block ends in one all-reduce; with sequence parallelism
//! (Korthikanti et al. 2022) that all-reduce becomes reduce-scatter + all-gather around the norms.

use super::{GraphOp, GraphOptions, ParallelPlan, Workload};
use crate::dtype::DType;
use crate::model::{Ffn, Mixer as LayerMixer, MlpKind, ModelDesc, NormKind, OpClass, TransformerDesc};
use crate::op::{AttentionKind, CommKind, Epilogue, Op, VectorKind};
use super::linear_attention::{mixer_ops, split_group, Mixer};

mod attention;
pub(super) mod dcp;
mod finegrained;
mod moe;
pub mod ssm;
mod towers;
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
    let norm = ctx.norm_kind();
    attention::attention_block(ctx, ops, p, g, opts);

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
                    let ty = super::sparse_attention::Types { mm: ctx.mm, weight: ctx.weight, vec: ctx.vec, kv: opts.kv_dtype() };
                    super::compressed_attention::apply(ops, start, &format!("{prefix}.attn.core"), window, compress, topk, n, ctx.t, ty);
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
            // Gemma 4: the global layers' projections (q, k, v at their KV heads and head
            // width, o from their wider output) are split off the group's and priced at their
            // own widths (`global_projections`).
            let n_global: u64 = mixers.iter().filter(|(m, _)| ctx.t.is_global_layer(m)).map(|(_, n)| n).sum();
            if let Some(view) = ctx.t.attention_view(&LayerMixer::FULL).filter(|_| n_global > 0) {
                let gctx = Ctx { t: &view, plan: ctx.plan, mm: ctx.mm, weight: ctx.weight, vec: ctx.vec, fuse: ctx.fuse, quant: ctx.quant };
                let mut gops = Vec::new();
                attention::attention_block(&gctx, &mut gops, &prefix, g, opts);
                global_projections(ops, start, gops, n_global);
            }
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
        // DeepSeek-V4's hyper-connections (`compressed_attention`; none for other models).
        ops.extend(super::compressed_attention::hyper_connections(ctx.t, &prefix, g.batch.saturating_mul(g.q_len), count, super::sparse_attention::Types { mm: ctx.mm, weight: ctx.weight, vec: ctx.vec, kv: opts.kv_dtype() }));
        if !g.train {
            // DeepSeek sparse attention: the indexer and the top-k attention (dense MLA without `index_topk`).
            super::sparse_attention::apply(ops, start, &prefix, ctx.t, super::sparse_attention::Types { mm: ctx.mm, weight: ctx.weight, vec: ctx.vec, kv: opts.kv_dtype() });
        }
    }
}

/// The global layers' attention-block operators (`global`, built at their own widths) that
/// differ from the group's (projections, norms, rotary; not the core, which `stack` re-shapes):
/// `n` of each such operator's repeats move to a `_global` copy at the global widths.
fn global_projections(ops: &mut Vec<GraphOp>, start: usize, global: Vec<GraphOp>, n: u64) {
    for go in global {
        if matches!(go.op, Op::Attention { .. }) {
            continue;
        }
        let Some(i) = ops[start..].iter().position(|o| o.name == go.name).map(|i| i + start) else { continue };
        if ops[i].op == go.op || ops[i].repeat < n {
            continue;
        }
        let copy = GraphOp { name: format!("{}_global", go.name), op: go.op, repeat: n, class: ops[i].class };
        if ops[i].repeat == n {
            ops[i] = copy;
        } else {
            ops[i].repeat -= n;
            ops.insert(i + 1, copy);
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
    // DCP on a prefill step: the cached context gathered from its shards (`dcp`).
    let dcp_gather = dcp::context_gather(model, plan, opts, batch, q_len, kv_len, kind, train);
    if let (Some(v), true, false) = (model.active_vision(), first_stage, matches!(w, Workload::Decode { .. })) {
        towers::vision(&ctx, &mut ops, v, batch, opts)?;
    }
    if let (Some(a), true, true) = (model.active_audio(), first_stage, matches!(w, Workload::Prefill { .. })) {
        towers::audio(&ctx, &mut ops, a, batch, opts);
    }
    if let (true, Some(e)) = (first_stage && !train, finegrained::embedding(&ctx, tokens, t.hidden)) {
        ops.extend(e);
    } else if first_stage {
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
    let (kv_len, causal) = if train && plan.cp > 1 && opts.train.general_mask && opts.train.cp_algo == crate::workload::CpAlgo::Ring {
        // A general (data-built) mask under ring CP: MindSpeed's GeneralAttentionStrategy runs
        // every step's q x kv block whole with the mask applied (sparse_mode 1), no block
        // skipped, so each rank computes all its queries against every key.
        (kv_len, false)
    } else if q_len < kv_len && kind != AttentionKind::Decode {
        (kv_len.div_ceil(2), false)
    } else {
        // An encoder attends both ways.
        (kv_len, !t.encoder)
    };
    // A BERT-style encoder adds learned absolute position embeddings to its input and has no
    // rotary embedding in its layers (BertSelfAttention); decoder LLMs rotate q and k.
    let g = Geom { batch, q_len, kv_len, kind, causal, rotary: !t.encoder, cp_split: train && plan.cp > 1, train };
    ops.extend(dcp_gather);
    stack(&ctx, &mut ops, "layer", &g, plan.layers_here(t.layers), opts);
    // The final norm and the LM head are the last stage's (a stage before it of an uneven
    // split, MindSpeed's --num-layer-list, ends at its layers).
    if last_stage {
        ops.push(ctx.vector("final_norm".into(), OpClass::Norm, ctx.norm_kind(), logits_rows, t.hidden));
        // An encoder ends in a pooler (first token, hidden -> hidden, tanh) instead of an LM head.
        let fine = if train || t.encoder { None } else { finegrained::lm_head(&ctx, logits_rows, t.hidden, t.vocab) };
        let vocab_local = if t.encoder { t.hidden } else { ceil_div(t.vocab, plan.tp) };
        let head = Op::Matmul { batch: 1, m: logits_rows, n: vocab_local, k: t.hidden, dtype: vec, weight_dtype: None, epilogue: Epilogue::None };
        if let Some(f) = fine {
            ops.extend(f);
        } else {
            ops.push(GraphOp { name: "lm_head".into(), op: head, repeat: 1, class: OpClass::LmHead });
        }
        if train {
            ops.push(ctx.vector("lm_head.cross_entropy".into(), OpClass::LmHead, VectorKind::Softmax, logits_rows, vocab_local));
        } else if plan.tp > 1 && !t.encoder {
            let bytes = logits_rows.saturating_mul(t.vocab).saturating_mul(vec.bytes());
            ops.push(ctx.comm("tp.logits_allgather".into(), CommKind::AllGather, bytes, plan.tp));
        }
    }
    if opts.om_model && !train {
        super::onnx_om::apply(&mut ops, opts.om_nz_transdata);
    }
    Ok(ops)
}

//! Activation memory: what training saves for backward (Korthikanti et al. 2022), and the
//! transient working set of executing the operator list (what inference needs, and what the
//! allocator strategies differ on).

use crate::model::{MlpKind, ModelDesc, TransformerDesc};
use crate::op::{AttentionKind, Op, VectorKind};
use crate::workload::{forward_graph, GraphOptions, ParallelPlan, Recompute, Workload};

fn clamp(v: u128) -> u64 {
    u64::try_from(v).unwrap_or(u64::MAX)
}

/// Bytes one transformer layer saves for backward for a micro-batch of `b` sequences of `s`
/// tokens, with `bytes`-wide activations.
///
/// Korthikanti et al. 2022 (arXiv:2205.05198), section 4.1, count per layer for GPT (16-bit,
/// with dropout): 34 s b h + 5 a s^2 b bytes, of which 10 s b h (norm inputs, the inputs of the
/// QKV and MLP blocks, dropout masks) lie outside the tensor-parallel region and 24 s b h + 5 a s^2 b
/// inside it: sbh (10 + 24/t + 5as/(ht)) under TP (eq. 2), sbh/t (34 + 5as/h) with sequence
/// parallelism (eq. 4), 34 sbh / t with selective recomputation of the attention core (eq. 6),
/// and 2 sbh (the layer input) with full recomputation. Here the same terms are taken per tensor
/// so they follow grouped-query attention and gated MLPs: Q, K, V and the attention output
/// (4 sbh for GPT), the MLP intermediates (2 x 4h for GELU, 3 x intermediate for SwiGLU), no
/// dropout (LLaMA-family pretraining runs without it), and softmax probabilities a s^2 b
/// when attention is unfused; flash attention keeps only the fp32 log-sum-exp (4 a s b bytes).
pub fn layer_activation_bytes(
    t: &TransformerDesc,
    s: u64,
    b: u64,
    plan: &ParallelPlan,
    recompute: Recompute,
    flash: bool,
    bytes: u64,
) -> u64 {
    let tp = u128::from(plan.tp.max(1));
    let sp = plan.sequence_parallel && tp > 1;
    let outside_div = if sp { tp } else { 1 };
    let (sb, h, by) = (u128::from(s) * u128::from(b), u128::from(t.hidden), u128::from(bytes));
    if recompute == Recompute::Full {
        return clamp(sb * h * by / outside_div);
    }
    // Outside the TP region: two norm inputs, the attention and MLP block inputs.
    let outside = 4 * sb * h;
    let (heads, kv, d) = (u128::from(t.heads), u128::from(t.kv_heads), u128::from(t.head_dim));
    let attn = sb * (heads + 2 * kv) * d + sb * heads * d;
    let mlp = |inter: u64| -> u128 {
        let i = u128::from(inter);
        match t.mlp {
            MlpKind::SwiGlu => 3 * sb * i,
            MlpKind::Gelu | MlpKind::Relu2 => 2 * sb * i,
        }
    };
    let (moe_layers, dense_layers) = t.moe_and_dense_layers();
    let ffn = match &t.moe {
        Some(m) => {
            // Each routed copy keeps its dispatched input and the expert's intermediates; the
            // router keeps its logits; a shared expert keeps its own intermediates.
            let routed = u128::from(m.top_k) * (sb * h + mlp(m.expert_intermediate));
            let moe = routed + sb * u128::from(m.experts) + if m.shared_intermediate > 0 { mlp(m.shared_intermediate) } else { 0 };
            let dense = if dense_layers > 0 { mlp(t.intermediate) } else { 0 };
            (moe * u128::from(moe_layers) + dense * u128::from(dense_layers)) / u128::from(t.layers.max(1))
        }
        None => mlp(t.intermediate),
    };
    let inside = attn + ffn;
    let a = heads;
    let scores = if flash {
        4 * a * sb
    } else if recompute == Recompute::Selective {
        0
    } else {
        a * u128::from(s) * sb * by
    };
    clamp((outside / outside_div + inside / tp) * by + scores / tp)
}

/// The transient working set of running the forward operator list once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransientProfile {
    /// Exact peak of live tensors with lifetime-based reuse: the residual stream plus the
    /// largest op's inputs, outputs and scratch.
    pub peak: u64,
    /// The same peak with every tensor rounded up to the caching allocator's block.
    pub peak_rounded: u64,
    /// No reuse: every op's output (and scratch) in its own buffer, plus the residual stream.
    pub sum_outputs: u64,
}

/// Tensors above 1 MiB are carved in 2 MiB granules, smaller ones in 512-byte units: the block
/// sizes of PyTorch's CUDA caching allocator, which torch_npu's NPU allocator mirrors.
pub fn round_block(bytes: u64) -> u64 {
    let unit = if bytes > 1 << 20 { 2 << 20 } else { 512 };
    bytes.div_ceil(unit).saturating_mul(unit)
}

/// (inputs, outputs, scratch) bytes of one op instance; weights and the KV cache are not
/// activations.
fn op_io(op: &Op) -> (u64, u64, u64) {
    let m = |a: u64, b: u64| a.saturating_mul(b);
    match *op {
        Op::Matmul { batch, m: rows, n, k, dtype, .. } => {
            let out_bytes = dtype.bytes().max(2); // INT8 matmuls write fp16
            (m(m(batch, rows), m(k, dtype.bytes())), m(m(batch, rows), m(n, out_bytes)), 0)
        }
        Op::Vector { kind, rows, row_len, dtype } => {
            let n = m(m(rows, row_len), dtype.bytes());
            let inputs = if matches!(kind, VectorKind::Elementwise | VectorKind::SwiGlu) { m(n, 2) } else { n };
            (inputs, n, 0)
        }
        Op::Attention { kind, batch, heads, kv_heads, q_len, kv_len, head_dim, dtype, .. } => {
            let by = dtype.bytes();
            let q = m(m(m(batch, heads), m(q_len, head_dim)), by);
            let kv = if kind == AttentionKind::Decode { 0 } else { m(m(m(2, batch), m(kv_heads, kv_len)), m(head_dim, by)) };
            let scores = if matches!(kind, AttentionKind::Unfused | AttentionKind::Exported) { m(m(m(2, batch), m(heads, q_len)), m(kv_len, by)) } else { 0 };
            (q.saturating_add(kv), q, scores)
        }
        Op::Conv2d { batch, in_ch, out_ch, h, w, stride, dtype, .. } => {
            let s = stride.max(1);
            let by = dtype.bytes();
            (m(m(m(batch, in_ch), m(h, w)), by), m(m(m(batch, out_ch), m(h / s, w / s)), by), 0)
        }
        Op::Comm { .. } => (0, 0, 0),
        Op::GroupedMatmul { m: rows, n, k, dtype, .. } => (m(rows, m(k, dtype.bytes())), m(rows, m(n, dtype.bytes().max(2))), 0),
        // The receive buffer: a copy per routed expert (dispatch) or a token (combine).
        Op::MoeComm { phase, tokens, hidden, top_k, dtype, .. } => {
            let rows = if phase == crate::op::MoePhase::Dispatch { m(tokens, top_k) } else { tokens };
            (m(m(tokens, hidden), dtype.bytes()), m(m(rows, hidden), dtype.bytes()), 0)
        }
    }
}

/// The transient profile of the workload's forward pass on one chip.
pub fn transient_profile(model: &ModelDesc, w: &Workload, plan: &ParallelPlan, opts: &GraphOptions) -> Result<TransientProfile, String> {
    let graph = forward_graph(model, w, plan, opts)?;
    let (mut peak, mut peak_rounded, mut sum, mut max_in) = (0u64, 0u64, 0u64, 0u64);
    for o in &graph.ops {
        // A linear-attention layer updates its recurrent state in place: that state is held
        // for the whole request (`recurrent_state_bytes`), not a transient of the step.
        if o.name.ends_with(".recurrent") && o.name.contains(crate::workload::linear_attention::LINEAR_CORE) {
            continue;
        }
        let (i, out, scratch) = op_io(&o.op);
        peak = peak.max(i.saturating_add(out).saturating_add(scratch));
        let r = round_block(i).saturating_add(round_block(out)).saturating_add(round_block(scratch));
        peak_rounded = peak_rounded.max(r);
        sum = sum.saturating_add(out).saturating_add(scratch);
        max_in = max_in.max(i);
    }
    // The residual stream lives across every op of a transformer; a UNet's skip connections
    // are held across blocks, counted here as a quarter of the largest op's working set.
    let resid = match &model.llm {
        Some(t) => {
            let image = model.media_tokens();
            let q = match *w {
                Workload::Prefill { input_len, .. } => input_len.saturating_add(image),
                Workload::Decode { .. } => 1,
                Workload::TrainStep { seq_len, .. } => seq_len.saturating_add(image),
            };
            w.batch().saturating_mul(q).saturating_mul(t.hidden).saturating_mul(opts.vector_dtype().bytes())
        }
        None => peak / 4,
    };
    Ok(TransientProfile {
        peak: peak.saturating_add(resid),
        peak_rounded: peak_rounded.saturating_add(round_block(resid)),
        sum_outputs: sum.saturating_add(max_in).saturating_add(resid),
    })
}

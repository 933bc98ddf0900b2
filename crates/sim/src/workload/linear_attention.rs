//! The token mixer of a linear-attention layer: Gated DeltaNet (Yang, Kautz and Hatamizadeh,
//! "Gated Delta Networks", arXiv:2412.06464), as Qwen3-Next and Qwen3.5 interleave it with full
//! attention (`layer_types`; three linear layers to one full one).
//!
//! Why its own operators: a linear layer keeps one dk x dv state per value head instead of a
//! KV cache. Decoding a token reads and rewrites that state (a fixed amount of memory traffic,
//! whatever the context), so decode cost does not grow with the context; a prompt is processed
//! in chunks of `CHUNK` tokens (the chunkwise-parallel form of the delta rule, section 3.3 of
//! the paper, what the fla / vLLM `chunk_gated_delta_rule` kernels run): small batched matmuls
//! inside each chunk plus a state update per chunk.
//!
//! Ops are named `<layer>.linear_attn.*`; the ones that depend on the sequence (the recurrent
//! core) carry `LINEAR_CORE` in their name, so a step pricer can treat them like attention
//! cores (per sequence, not per token row).

use super::GraphOp;
use crate::dtype::DType;
use crate::model::{LinearAttention, OpClass};
use crate::op::{Epilogue, Op, VectorKind};

/// The name part of the sequence-dependent core operators.
pub const LINEAR_CORE: &str = "linear_attn.core";

/// Chunk length of the chunkwise delta rule (the fla kernels' and vLLM's default, 64).
pub const CHUNK: u64 = 64;

/// Kernel launches of one linear layer's token mixer where an engine runs it as Triton kernels
/// (vLLM-Ascend's `vllm_ascend/ops/triton/fla` and `ops/triton/mamba` around v0.17), counted
/// from the structure of that code, not from measurements. A step with prompt tokens runs the
/// chunked path: causal_conv1d_fn, fused_gdn_gating, l2norm of q and of k, then
/// chunk_gated_delta_rule's chunk_local_cumsum, chunk_scaled_dot_kkt_fwd, solve_tril,
/// recompute_w_u_fwd, chunk_gated_delta_rule_fwd_h and chunk_fwd_o, and the gated RMSNorm
/// (layernorm_guard): 11.
pub const TRITON_LAUNCHES_PREFILL: u64 = 11;
/// Of those, the chunk_gated_delta_rule pipeline (cumsum, kkt, solve_tril, w/u, fwd_h, fwd_o):
/// its wrapper copies the sequence boundaries to the host (`cu_seqlens.tolist()`, fla's
/// `prepare_chunk_indices`), which waits for the device to drain, so these launches cannot run
/// ahead of the device: their host time adds to the step instead of hiding under it.
pub const TRITON_LAUNCHES_PREFILL_AFTER_SYNC: u64 = 6;
/// A mixed step also runs the decoding sequences' slice through the recurrent kernel, with its
/// own l2norm of q and k (vllm_ascend/ops/gdn.py: "two l2norm launches on the decode slice"),
/// from vLLM-Ascend v0.19.1 on; the step pricer takes the count per release from the engine's
/// `gdn_mixed_decode_launches` (assets/constants/serving-host.json, assets/engines/releases.json).
pub const TRITON_LAUNCHES_MIXED_DECODE: u64 = 3;
/// A decode-only step launched op by op: causal_conv1d_update, fused_gdn_gating,
/// fused_recurrent_gated_delta_rule (q/k l2norm inside) and the gated RMSNorm. (Qwen3-Next's
/// interleaved q/k/v/z projection adds a Triton split kernel; Qwen3.5's separate projections
/// do not, and are what is counted.)
pub const TRITON_LAUNCHES_DECODE: u64 = 4;
/// Of those, the ones inside the attention custom op (`qwen_gdn_attention_core`), which a
/// piecewise-captured step runs eagerly between its captured pieces: conv1d update, gating and
/// the recurrent kernel.
pub const TRITON_LAUNCHES_DECODE_CORE: u64 = 3;

/// Whether the mixer operator `name` is one an engine with Triton linear-attention kernels
/// launches through Triton (everything but the projections and the output quantisation, which
/// stay aclnn matmuls / quant ops).
pub fn runs_as_triton(name: &str) -> bool {
    name.contains(".linear_attn.") && !["in_proj_qkvz", "in_proj_ba", "out_proj", "o_quant"].iter().any(|p| name.ends_with(&format!(".linear_attn.{p}")))
}

/// Device time, us, of the chunked delta rule over `tokens` prompt tokens on every linear layer
/// of the model, per chip, where the engine runs it as Triton (fla) kernels: the measured cost
/// per token and value head of those kernels (`gdn_chunk_ns_per_token_head` in
/// assets/kernels/triton-fla.json, measured on a 910B2), scaled to the chip by its cube
/// cores x clock and to the head size by dk x dv against the measured 128 x 128. None when the
/// library file has no such figure. The cube model prices the same matmuls (`mixer_ops`) several
/// times faster than Triton-Ascend's kernels run them; a step pricer takes the larger.
pub fn triton_chunk_us(la: &LinearAttention, tp: u64, tokens: u64, device: &crate::device::Device) -> Option<f64> {
    let ns = crate::kernels::triton_fla_field("gdn_chunk_ns_per_token_head")?;
    // The 910B2 the figure was measured on: 24 AI cores at 1800 MHz.
    let measured_on = 24.0 * 1800.0;
    let chip = (device.cube_cores as f64 * device.cube_clock_mhz).max(1.0);
    let heads = la.value_heads.div_ceil(tp.max(1)) as f64;
    let head_size = (la.key_head_dim * la.value_head_dim) as f64 / (128.0 * 128.0);
    Some(ns * 1e-3 * tokens as f64 * heads * head_size * la.layers as f64 * measured_on / chip)
}

/// `triton_chunk_us` for a step whose prompt tokens are `seqs` sequences of `q` new tokens each.
/// Why the sequences matter: two of the six stages, chunk_gated_delta_rule_fwd_h and
/// chunk_fwd_o (vLLM-Ascend v0.17.0rc1 `ops/triton/fla/chunk_delta_h.py`, `chunk_o.py`), launch
/// one program per sequence and value head (grid N x H) that walks its sequence's chunks one
/// after another (the state recurrence). With fewer such programs than the chip's cores, cores
/// idle and those stages take a program's whole walk, `ceil(N x H / cores)` waves of
/// `ceil(q / 64)` chunks, instead of their share of the per-token figure; a long prompt alone
/// on a TP-split model (few heads per rank) is the case. Each stage takes the larger of the two.
/// Also returns the extra time over `triton_chunk_us`, us (0 when the grid fills the chip).
pub fn triton_chunk_us_seqs(la: &LinearAttention, tp: u64, seqs: u64, q: u64, device: &crate::device::Device) -> Option<(f64, f64)> {
    let flat = triton_chunk_us(la, tp, seqs.saturating_mul(q), device)?;
    let field = crate::kernels::triton_fla_field;
    let (Some(h_us), Some(o_us), Some(h_share), Some(o_share)) = (field("gdn_chunk_h_us_per_chunk"), field("gdn_chunk_o_us_per_chunk"), field("gdn_chunk_h_share"), field("gdn_chunk_o_share")) else {
        return Some((flat, 0.0));
    };
    let heads = la.value_heads.div_ceil(tp.max(1));
    let cores = u64::from(device.cube_cores.max(1));
    let waves = seqs.saturating_mul(heads).div_ceil(cores) as f64;
    let chunks = q.div_ceil(CHUNK) as f64;
    // One program runs on one core: the 1800 MHz 910B2 figure scales by the clock alone.
    let clock = 1800.0 / device.cube_clock_mhz.max(1.0);
    let head_size = (la.key_head_dim * la.value_head_dim) as f64 / (128.0 * 128.0);
    let per_layer = flat / la.layers.max(1) as f64;
    let walk = |us: f64, share: f64| (waves * chunks * us * clock * head_size - share * per_layer).max(0.0);
    let extra = (walk(h_us, h_share) + walk(o_us, o_share)) * la.layers as f64;
    Some((flat + extra, extra))
}

/// What the mixer needs to know about the stack around it.
pub(super) struct Mixer<'a> {
    pub la: &'a LinearAttention,
    pub hidden: u64,
    pub tp: u64,
    /// Matmul activation and weight types (weight None: same), vector type.
    pub mm: DType,
    pub weight: Option<DType>,
    pub vec: DType,
    /// Activations are quantised before each linear layer (W8A8, W4A4).
    pub quant: bool,
}

/// The mixer's ops for `batch` sequences of `q_len` new tokens each (q_len 1: decode), repeat 1,
/// per chip: heads split over the TP ranks. The TP reduction after out_proj and the input
/// quantisation are the layer's own (shared with the full-attention layers).
pub(super) fn mixer_ops(m: &Mixer, p: &str, batch: u64, q_len: u64) -> Vec<GraphOp> {
    let la = m.la;
    let tp = m.tp.max(1);
    let (kh, vh) = (la.key_heads.div_ceil(tp), la.value_heads.div_ceil(tp));
    let (dk, dv) = (la.key_head_dim, la.value_head_dim);
    let tokens = batch.saturating_mul(q_len);
    let cls = OpClass::Attention;
    let mm = |name: &str, rows: u64, n: u64, k: u64| GraphOp {
        name: format!("{p}.linear_attn.{name}"),
        op: Op::Matmul { batch: 1, m: rows, n, k, dtype: m.mm, weight_dtype: m.weight, epilogue: Epilogue::None },
        repeat: 1,
        class: cls,
    };
    let vector = |name: &str, kind: VectorKind, rows: u64, row_len: u64, dtype: DType| GraphOp {
        name: format!("{p}.linear_attn.{name}"),
        op: Op::Vector { kind, rows, row_len, dtype },
        repeat: 1,
        class: cls,
    };
    // Activation-by-activation matmuls inside the recurrence run in the vector type.
    let bmm = |name: &str, b: u64, mm_: u64, n: u64, k: u64, repeat: u64| GraphOp {
        name: format!("{p}.{LINEAR_CORE}.{name}"),
        op: Op::Matmul { batch: b, m: mm_, n, k, dtype: m.vec, weight_dtype: None, epilogue: Epilogue::None },
        repeat,
        class: cls,
    };
    let conv_dim = 2 * kh * dk + vh * dv;
    let mut ops = vec![
        // q, k, v and the output gate z in one projection; beta and the decay gate a in another.
        mm("in_proj_qkvz", tokens, 2 * kh * dk + 2 * vh * dv, m.hidden),
        mm("in_proj_ba", tokens, 2 * vh, m.hidden),
        // Depthwise causal convolution over q, k, v, then SiLU; softplus / sigmoid gates.
        vector("conv1d", VectorKind::Activation, tokens, conv_dim, m.vec),
        vector("gates", VectorKind::Activation, tokens, 2 * vh, m.vec),
        // L2 norms of q and k per head.
        vector("qk_l2norm", VectorKind::RmsNorm, tokens.saturating_mul(2 * kh), dk, m.vec),
    ];
    if q_len <= 1 {
        // One step of the recurrence per sequence and value head: S <- a S + beta k (v - S^T k)^T
        // and o = S^T q, the FP32 state read and written once.
        ops.push(GraphOp {
            name: format!("{p}.{LINEAR_CORE}.recurrent"),
            op: Op::Vector { kind: VectorKind::Elementwise, rows: batch.saturating_mul(vh), row_len: dk * dv, dtype: DType::Fp32 },
            repeat: 1,
            class: cls,
        });
    } else {
        // Chunkwise form: per chunk of C tokens and value head, K K^T and Q K^T (C x C x dk),
        // the WY transform T [K, V] (C x C x dk, C x C x dv), the inter-chunk terms W S and
        // Q S (C x dk x dv), the intra-chunk output A U (C x C x dv) and the state update
        // K^T U (dk x C x dv).
        let c = CHUNK.min(q_len);
        let b = batch.saturating_mul(vh).saturating_mul(q_len.div_ceil(c));
        ops.push(bmm("intra_scores", b, c, c, dk, 3));
        ops.push(bmm("inter_state", b, c, dv, dk, 2));
        ops.push(bmm("intra_values", b, c, dv, c, 2));
        ops.push(bmm("state_update", b, dk, dv, c, 1));
        ops.push(GraphOp {
            name: format!("{p}.{LINEAR_CORE}.decay_mask"),
            op: Op::Vector { kind: VectorKind::Elementwise, rows: b.saturating_mul(c), row_len: c, dtype: m.vec },
            repeat: 1,
            class: cls,
        });
    }
    // Gated RMSNorm of the output by SiLU(z), then out_proj (row-parallel).
    ops.push(vector("gated_norm", VectorKind::SwiGlu, tokens.saturating_mul(vh), dv, m.vec));
    if m.quant {
        ops.push(vector("o_quant", VectorKind::Quantize, tokens, vh * dv, m.vec));
    }
    ops.push(mm("out_proj", tokens, m.hidden, vh * dv));
    ops
}

/// Splits a stack group of `count` layers (ops from `start`, already multiplied by `count`)
/// into its attention layers and its other mixers' layers: the full-attention block's own
/// operators keep the attention layers' share, and each other mixer's operators (`others`: its
/// layer count and its ops, repeat 1) are appended for its share. `none_here` of those layers
/// have no mixer at all: they also skip the input norm, the attention block's TP reduction and
/// residual add (their layer is its MLP alone, with one norm).
pub(super) fn split_group(ops: &mut Vec<GraphOp>, start: usize, prefix: &str, count: u64, others: Vec<(u64, Vec<GraphOp>)>, none_here: u64) {
    let other_here: u64 = others.iter().map(|(n, _)| n).sum();
    let full_here = count.saturating_sub(other_here);
    let own = format!("{prefix}.attn.");
    let shared = [format!("{prefix}.attn.quant"), format!("{prefix}.attn.residual_add")];
    let mixer_shared = |name: &str| shared.iter().any(|s| s == name) || name == format!("{prefix}.input_norm") || name.starts_with(&format!("{prefix}.tp.attn_"));
    for o in &mut ops[start..] {
        if o.name.starts_with(&own) && !shared.contains(&o.name) {
            o.repeat = o.repeat / count.max(1) * full_here;
        } else if none_here > 0 && mixer_shared(&o.name) {
            o.repeat = o.repeat / count.max(1) * count.saturating_sub(none_here);
        }
    }
    // The input norm stays once per layer: a mixer-less layer's one norm is its MLP's.
    if none_here > 0 {
        if let Some(o) = ops[start..].iter_mut().find(|o| o.name == format!("{prefix}.input_norm")) {
            o.repeat = count;
        }
    }
    ops.retain(|o| o.repeat > 0);
    // After the input norm (and any quantisation), where the attention block starts.
    let mut at = ops.iter().position(|o| o.name.starts_with(&own) && !shared.contains(&o.name)).unwrap_or(ops.len()).max(start.min(ops.len()));
    for (n, mixer) in others {
        if n == 0 {
            continue;
        }
        for mut o in mixer {
            o.repeat = o.repeat.saturating_mul(n);
            ops.insert(at.min(ops.len()), o);
            at += 1;
        }
    }
}

//! The diffusion transformers of 2025-2026 from their diffusers configs, beside the SD3 / Flux /
//! Wan builders of `dit` (which keep their own code so their numbers stay as they were):
//! - Qwen-Image / Qwen-Image-Edit (`QwenImageTransformer2DModel`): 60 MMDiT blocks, each with
//!   its own image and text modulation, q/k/v, output projection and GELU feed-forward, joint
//!   attention with rotary positions over image (+ reference) and text tokens;
//! - FLUX.2 (`Flux2Transformer2DModel`): double-stream then single-stream blocks as FLUX.1, but
//!   SwiGLU feed-forwards of `mlp_ratio` x width, no biases, and one modulation per block kind
//!   shared by all blocks of that kind; the single block fuses q/k/v and the MLP input;
//! - HiDream-I1 (`HiDreamImageTransformer2DModel`): double and single blocks whose image MLP is
//!   a mixture of experts (a shared SwiGLU expert and the top `num_activated_experts` of
//!   `num_routed_experts` SwiGLU experts), one caption projection per block for the Llama
//!   layer it reads;
//! - Sana (`SanaTransformer2DModel`): linear attention (ReLU kernels: K^T V per head, then Q
//!   against it, linear in the tokens), cross-attention to the text, GLU MBConv feed-forward
//!   (1x1 conv to 2 x hidden, 3x3 depthwise conv, gate, 1x1 conv back);
//! - HunyuanVideo (`HunyuanVideoTransformer3DModel`): a token refiner over the text, then
//!   FLUX.1-style double and single blocks over frame x height x width patches.
//!
//! Weights are counted as the builders count them (every linear's and convolution's weight
//! matrix, biases and norms aside); the model cards' parameter counts are the check
//! (`crates/sim/tests/diffusers_2026.rs`).
//!
//! Where a family is approximated: HiDream's routed experts run as one matmul per expert slot
//! over the tokens routed to it (perfect balance, no capacity padding), and its Llama and T5
//! tokens are split evenly between the caption projections; Sana's depthwise 3x3 convolution
//! is a vector kernel over its nine taps, and sequence parallelism ignores its halo exchange.

use super::cfg::{Cfg, MAX_LAYERS, MAX_WIDTH};
use super::dit::{output, Dit, DitKind, SeqParallel};
use super::emit::Emit;
use crate::model::OpClass;
use crate::op::{CommKind, Epilogue, VectorKind};

/// The classes this file builds.
pub const CLASSES: [&str; 5] = ["QwenImageTransformer2DModel", "Flux2Transformer2DModel", "HiDreamImageTransformer2DModel", "SanaTransformer2DModel", "HunyuanVideoTransformer3DModel"];

/// A float field (`mlp_ratio`) in (0, 64], or `default` when absent.
fn ratio(c: &Cfg, key: &str, default: f64) -> Result<f64, String> {
    match c.v.get(key) {
        None | Some(serde_json::Value::Null) => Ok(default),
        Some(x) => x.as_f64().filter(|r| r.is_finite() && *r > 0.0 && *r <= 64.0).ok_or_else(|| format!("{}.{key}: must be a number in (0, 64], got {x}", c.what)),
    }
}

/// The hidden width of a LLaMA-style SwiGLU feed-forward asked for `x` (HiDream's
/// `HiDreamImageFeedForwardSwiGLU`: two thirds of it, rounded up to a multiple of 256).
fn swiglu_hidden(x: u64) -> u64 {
    (2 * x / 3).div_ceil(256) * 256
}

/// Earlier names of these classes, read as the class they became: HiDream-I1's first
/// transformer config (as diffusers' HiDream conversion script carries it) names
/// `HiImageTransformer2DModel`, which the same script instantiates as
/// `HiDreamImageTransformer2DModel`.
pub const ALIASES: [(&str, &str); 1] = [("HiImageTransformer2DModel", "HiDreamImageTransformer2DModel")];

/// Parses the classes of this file; None for any other class.
pub fn parse(c: &Cfg, class: &str) -> Result<Option<Dit>, String> {
    let class = ALIASES.iter().find(|(old, _)| *old == class).map(|(_, new)| *new).unwrap_or(class);
    if !CLASSES.contains(&class) {
        return Ok(None);
    }
    let heads = c.int("num_attention_heads", MAX_WIDTH)?;
    let head_dim = c.int("attention_head_dim", 1024)?;
    let h = heads * head_dim;
    if h > MAX_WIDTH {
        return Err(format!("{}.num_attention_heads x attention_head_dim: {h} is wider than {MAX_WIDTH}", c.what));
    }
    let layers = c.int("num_layers", MAX_LAYERS)?;
    let d = match class {
        "QwenImageTransformer2DModel" => {
            // in_channels is the packed 2x2 patch of the 16-channel latent (64).
            Dit::base(DitKind::QwenImage, heads, head_dim, layers, c.int("joint_attention_dim", MAX_WIDTH)?, 4 * h, (c.int_or("in_channels", MAX_WIDTH, 64)? / 4).max(1), 2)
        }
        "Flux2Transformer2DModel" => {
            let mlp = (ratio(c, "mlp_ratio", 3.0)? * h as f64) as u64;
            // in_channels is the packed 2x2 patch of the 32-channel latent (128).
            Dit { single_layers: c.int_or("num_single_layers", MAX_LAYERS, 0)?, ..Dit::base(DitKind::Flux2, heads, head_dim, layers, c.int("joint_attention_dim", MAX_WIDTH)?, mlp, (c.int_or("in_channels", MAX_WIDTH, 128)? / 4).max(1), 2) }
        }
        "HiDreamImageTransformer2DModel" => {
            let experts = c.int("num_routed_experts", 256)?;
            let active = c.int("num_activated_experts", 256)?;
            if active > experts {
                return Err(format!("{}.num_activated_experts: {active} is more than num_routed_experts ({experts})", c.what));
            }
            let caption = c.ints("caption_channels", MAX_WIDTH)?;
            Dit {
                single_layers: c.int_or("num_single_layers", MAX_LAYERS, 0)?,
                experts,
                active_experts: active,
                expert_ffn: swiglu_hidden(4 * h),
                shared_ffn: swiglu_hidden(2 * h),
                ..Dit::base(DitKind::HiDream, heads, head_dim, layers, *caption.last().unwrap_or(&4096), swiglu_hidden(4 * h), c.int_or("in_channels", MAX_WIDTH, 16)?, c.int_or("patch_size", 8, 2)?)
            }
        }
        "SanaTransformer2DModel" => {
            let mlp = (ratio(c, "mlp_ratio", 2.5)? * h as f64) as u64;
            let cross_heads = c.int_or("num_cross_attention_heads", MAX_WIDTH, heads)?;
            let cross_head_dim = c.int_or("cross_attention_head_dim", 1024, head_dim)?;
            let cross = c.int_or("cross_attention_dim", MAX_WIDTH, h)?;
            if cross_heads * cross_head_dim != cross || cross != h {
                return Err(format!("{}.cross_attention_dim: {cross} must equal num_cross_attention_heads x cross_attention_head_dim ({}) and the width ({h})", c.what, cross_heads * cross_head_dim));
            }
            Dit { cross_heads, cross_head_dim, ..Dit::base(DitKind::Sana, heads, head_dim, layers, c.int("caption_channels", MAX_WIDTH)?, mlp, c.int_or("in_channels", MAX_WIDTH, 32)?, c.int_or("patch_size", 8, 1)?) }
        }
        _ => {
            // HunyuanVideoTransformer3DModel; patch_size_t must be 1 (one latent frame per token).
            if c.int_or("patch_size_t", 8, 1)? != 1 {
                return Err(format!("{}.patch_size_t: only 1 (a token per latent frame) can be built", c.what));
            }
            let mlp = (ratio(c, "mlp_ratio", 4.0)? * h as f64) as u64;
            Dit {
                single_layers: c.int_or("num_single_layers", MAX_LAYERS, 0)?,
                refiner_layers: c.v.get("num_refiner_layers").map(|_| c.int("num_refiner_layers", MAX_LAYERS)).transpose()?.unwrap_or(2),
                ..Dit::base(DitKind::HunyuanVideo, heads, head_dim, layers, c.int("text_embed_dim", MAX_WIDTH)?, mlp, c.int_or("in_channels", MAX_WIDTH, 16)?, c.int_or("patch_size", 8, 2)?)
            }
        }
    };
    Ok(Some(d))
}

/// Emits one forward of the DiT kinds of this file over `b` latents of `n` output tokens, `r`
/// reference tokens and `t` text tokens.
pub fn build(d: &Dit, e: &mut Emit, b: u64, n: u64, r: u64, t: u64, sp: SeqParallel) -> Result<(), String> {
    let h = d.hidden();
    let spd = sp.degree.max(1);
    let (ol, tl, nl) = (n.div_ceil(spd), t.div_ceil(spd), (n + r).div_ceil(spd));
    let patch_in = d.in_channels * d.patch * d.patch;
    let s = nl + tl;
    match d.kind {
        DitKind::QwenImage => {
            e.linear("img_in", b * nl, h, patch_in, Epilogue::Bias, OpClass::Other, 1);
            e.norm("txt_norm", VectorKind::RmsNorm, b * tl, d.text_dim, 1);
            e.linear("txt_in", b * tl, h, d.text_dim, Epilogue::Bias, OpClass::Other, 1);
            time_embed(e, b, h, 1);
            let l = d.layers;
            // img_mod and txt_mod: 6 x width each.
            e.linear("block.norm1.modulation", b, 12 * h, h, Epilogue::Bias, OpClass::Other, l);
            e.norm("block.norm1", VectorKind::LayerNorm, b * s, h, l);
            d.attention(e, "block.self_attn", b, s, h, sp, l);
            e.norm("block.norm2", VectorKind::LayerNorm, b * s, h, l);
            e.linear("block.ff.up", b * s, d.ffn, h, Epilogue::BiasGelu, OpClass::Mlp, l);
            e.linear("block.ff.down", b * s, h, d.ffn, Epilogue::ResidualAdd, OpClass::Mlp, l);
            // The text stream's own projections and feed-forward (FLOPs counted above).
            e.weights = e.weights.saturating_add(l.saturating_mul(4 * h * h + 2 * d.ffn * h));
            e.linear("norm_out.linear", b, 2 * h, h, Epilogue::Bias, OpClass::Other, 1);
        }
        DitKind::Flux2 => {
            e.linear("x_embedder", b * nl, h, patch_in, Epilogue::None, OpClass::Other, 1);
            e.linear("context_embedder", b * tl, h, d.text_dim, Epilogue::None, OpClass::Other, 1);
            // Timestep and guidance embedders.
            time_embed(e, b, h, 2);
            // The shared modulations: image and text of the double blocks, the single blocks'.
            e.linear("double_modulation", b, 12 * h, h, Epilogue::None, OpClass::Other, 1);
            e.linear("single_modulation", b, 3 * h, h, Epilogue::None, OpClass::Other, 1);
            let l = d.layers;
            e.norm("block.norm1", VectorKind::LayerNorm, b * s, h, l);
            d.attention(e, "block.self_attn", b, s, h, sp, l);
            e.norm("block.norm2", VectorKind::LayerNorm, b * s, h, l);
            swiglu(e, "block.ff", b * s, h, d.ffn, l);
            e.weights = e.weights.saturating_add(l.saturating_mul(4 * h * h + 3 * d.ffn * h));
            let sl = d.single_layers;
            e.norm("single.norm", VectorKind::LayerNorm, b * s, h, sl);
            e.linear("single.to_qkv_mlp", b * s, 3 * h + 2 * d.ffn, h, Epilogue::None, OpClass::Attention, sl);
            d.attention_core(e, "single.self_attn", b, s, h, sp, sl, false);
            e.vector("single.swiglu", VectorKind::SwiGlu, b * s, d.ffn, OpClass::Mlp, sl);
            e.linear("single.proj_out", b * s, h, h + d.ffn, Epilogue::ResidualAdd, OpClass::Mlp, sl);
            e.linear("norm_out.linear", b, 2 * h, h, Epilogue::None, OpClass::Other, 1);
        }
        DitKind::HiDream => {
            e.linear("x_embedder", b * nl, h, patch_in, Epilogue::Bias, OpClass::Other, 1);
            // Timestep and pooled-text (the two CLIPs' 2048) embedders.
            time_embed(e, b, h, 1);
            e.linear("p_embedder.linear_1", b, h, 2048, Epilogue::BiasGelu, OpClass::Other, 1);
            e.linear("p_embedder.linear_2", b, h, h, Epilogue::Bias, OpClass::Other, 1);
            // One caption projection per block (the Llama layer it reads) and one for T5.
            let proj = d.layers + d.single_layers + 1;
            e.linear("caption_projection", b * t.div_ceil(2), h, d.text_dim, Epilogue::None, OpClass::Other, proj);
            let l = d.layers;
            e.linear("block.adaln", b, 12 * h, h, Epilogue::Bias, OpClass::Other, l);
            e.norm("block.norm1", VectorKind::LayerNorm, b * s, h, l);
            d.attention(e, "block.self_attn", b, s, h, sp, l);
            e.weights = e.weights.saturating_add(l.saturating_mul(4 * h * h));
            e.norm("block.norm2", VectorKind::LayerNorm, b * s, h, l);
            moe(d, e, "block.moe", b * nl, h, l);
            swiglu(e, "block.ff_text", b * tl, h, d.ffn, l);
            let sl = d.single_layers;
            e.linear("single.adaln", b, 6 * h, h, Epilogue::Bias, OpClass::Other, sl);
            e.norm("single.norm1", VectorKind::LayerNorm, b * s, h, sl);
            d.attention(e, "single.self_attn", b, s, h, sp, sl);
            e.norm("single.norm2", VectorKind::LayerNorm, b * s, h, sl);
            moe(d, e, "single.moe", b * s, h, sl);
            e.linear("norm_out.linear", b, 2 * h, h, Epilogue::Bias, OpClass::Other, 1);
        }
        DitKind::Sana => {
            e.linear("patch_embed", b * nl, h, patch_in, Epilogue::Bias, OpClass::Other, 1);
            time_embed(e, b, h, 1);
            e.linear("time_block", b, 6 * h, h, Epilogue::Bias, OpClass::Other, 1);
            e.linear("caption_projection.linear_1", b * t, h, d.text_dim, Epilogue::BiasGelu, OpClass::Other, 1);
            e.linear("caption_projection.linear_2", b * t, h, h, Epilogue::Bias, OpClass::Other, 1);
            e.norm("caption_norm", VectorKind::RmsNorm, b * t, h, 1);
            let l = d.layers;
            e.norm("block.norm1", VectorKind::LayerNorm, b * nl, h, l);
            linear_attention(d, e, "block.self_attn", b, nl, h, sp, l);
            e.norm("block.norm2", VectorKind::LayerNorm, b * nl, h, l);
            // Cross-attention: the text is not split over the chips; each chip's queries
            // attend to all of it.
            e.linear("block.cross_attn.to_q", b * nl, h, h, Epilogue::Bias, OpClass::Attention, l);
            e.linear("block.cross_attn.to_kv", b * t, 2 * h, h, Epilogue::Bias, OpClass::Attention, l);
            e.attention("block.cross_attn.core", b, d.cross_heads, nl, t, d.cross_head_dim, false, l);
            e.linear("block.cross_attn.to_out", b * nl, h, h, Epilogue::ResidualAdd, OpClass::Attention, l);
            e.norm("block.norm3", VectorKind::LayerNorm, b * nl, h, l);
            // GLU MBConv: 1x1 to 2 x hidden, depthwise 3x3 (nine passes of a multiply-add over
            // the feature map, which is what one pass holds), SiLU gate, 1x1 back.
            e.linear("block.ff.conv_inverted", b * nl, 2 * d.ffn, h, Epilogue::Bias, OpClass::Mlp, l);
            e.vector("block.ff.conv_depth", VectorKind::Elementwise, b * nl, 2 * d.ffn, OpClass::Conv, l * 9);
            e.weights = e.weights.saturating_add(l.saturating_mul(2 * d.ffn * 9));
            e.vector("block.ff.glu", VectorKind::SwiGlu, b * nl, d.ffn, OpClass::Mlp, l);
            e.linear("block.ff.conv_point", b * nl, h, d.ffn, Epilogue::ResidualAdd, OpClass::Mlp, l);
        }
        _ => {
            // HunyuanVideo: the token refiner over the text, then FLUX.1's blocks (the Flux
            // builder's context_embedder is the refiner's input projection).
            let rl = d.refiner_layers;
            e.linear("refiner.t_embed", b, h, h, Epilogue::Bias, OpClass::Other, 1);
            e.linear("refiner.adaln", b, 2 * h, h, Epilogue::Bias, OpClass::Other, rl);
            e.norm("refiner.norm1", VectorKind::LayerNorm, b * t, h, rl);
            e.linear("refiner.attn.to_qkv", b * t, 3 * h, h, Epilogue::Bias, OpClass::Attention, rl);
            e.attention("refiner.attn.core", b, d.heads, t, t, d.head_dim, false, rl);
            e.linear("refiner.attn.to_out", b * t, h, h, Epilogue::ResidualAdd, OpClass::Attention, rl);
            e.norm("refiner.norm2", VectorKind::LayerNorm, b * t, h, rl);
            e.linear("refiner.mlp.up", b * t, d.ffn, h, Epilogue::BiasGelu, OpClass::Mlp, rl);
            e.linear("refiner.mlp.down", b * t, h, d.ffn, Epilogue::ResidualAdd, OpClass::Mlp, rl);
            // Guidance and pooled CLIP (768) embedders.
            e.linear("guidance_embed", b, h, 256, Epilogue::BiasGelu, OpClass::Other, 1);
            e.linear("text_pooled_embed", b, h, 768, Epilogue::BiasGelu, OpClass::Other, 1);
            let flux = Dit { kind: DitKind::Flux, refiner_layers: 0, ..d.clone() };
            return flux.build(e, b, n, 0, t, sp);
        }
    }
    output(e, b, n, ol, h, patch_in, spd);
    Ok(())
}

/// The sinusoidal timestep projection's MLP (256 -> width -> width), `n` embedders.
fn time_embed(e: &mut Emit, b: u64, h: u64, n: u64) {
    e.linear("time_embed.linear_1", b, h, 256, Epilogue::BiasGelu, OpClass::Other, n);
    e.linear("time_embed.linear_2", b, h, h, Epilogue::Bias, OpClass::Other, n);
}

/// A SwiGLU feed-forward of hidden width `f` over `m` tokens.
fn swiglu(e: &mut Emit, name: &str, m: u64, h: u64, f: u64, l: u64) {
    e.linear(&format!("{name}.up"), m, 2 * f, h, Epilogue::None, OpClass::Mlp, l);
    e.vector(&format!("{name}.swiglu"), VectorKind::SwiGlu, m, f, OpClass::Mlp, l);
    e.linear(&format!("{name}.down"), m, h, f, Epilogue::ResidualAdd, OpClass::Mlp, l);
}

/// HiDream's MoE MLP over `m` tokens: the router, the shared expert, and the routed experts
/// each token runs (`active_experts` slots of m tokens); every routed expert's weights count.
fn moe(d: &Dit, e: &mut Emit, name: &str, m: u64, h: u64, l: u64) {
    e.linear(&format!("{name}.gate"), m, d.experts, h, Epilogue::None, OpClass::Mlp, l);
    e.vector(&format!("{name}.topk"), VectorKind::Reduce, m, d.experts, OpClass::Mlp, l);
    swiglu(e, &format!("{name}.shared"), m, h, d.shared_ffn, l);
    swiglu(e, &format!("{name}.experts"), m * d.active_experts, h, d.expert_ffn, l);
    // The builder counted one routed expert's weights; the others are held too.
    e.weights = e.weights.saturating_add(l.saturating_mul((d.experts - 1) * 3 * h * d.expert_ffn));
    e.vector(&format!("{name}.combine"), VectorKind::Elementwise, m * d.active_experts, h, OpClass::Mlp, l);
}

/// Sana's linear attention over `s` tokens per chip: q/k/v projection, ReLU kernels, K^T V per
/// head (a head_dim x head_dim state), Q against it, normalisation, output projection. Ulysses
/// sequence parallelism exchanges q/k/v and the output as for softmax attention; ring sums the
/// per-chip K^T V states (an all-reduce of heads x head_dim^2).
///
/// The core runs in float32 whatever the pipeline's precision: diffusers'
/// `SanaLinearAttnProcessor2_0` (models/attention_processor.py, at the commit MindSpeed-MM's Sana
/// README pins, cd0a4a82, and since) does `query, key, value = query.float(), key.float(),
/// value.float()`, pads the value with a row of ones (`F.pad(value, (0, 0, 0, 1), value=1.0)`),
/// runs both matmuls and the division in fp32, and casts the result back
/// (`hidden_states.to(original_dtype)`): three up-casts, a pad copy, two fp32 matmuls, an fp32
/// division and a down-cast per layer, each a pass over the tokens.
#[allow(clippy::too_many_arguments)]
fn linear_attention(d: &Dit, e: &mut Emit, name: &str, b: u64, s: u64, h: u64, sp: SeqParallel, l: u64) {
    use crate::dtype::DType;
    let dh = d.head_dim;
    let f32 = DType::Fp32;
    let low = e.o.dtype;
    e.linear(&format!("{name}.to_qkv"), b * s, 3 * h, h, Epilogue::None, OpClass::Attention, l);
    e.vector(&format!("{name}.relu"), VectorKind::Activation, b * s * 2, h, OpClass::Attention, l);
    let spd = sp.degree.max(1);
    let local = b * s * h * e.elem_bytes();
    let (heads, seq) = if spd > 1 && !sp.ring {
        e.comm(&format!("{name}.ulysses_a2a_qkv"), CommKind::AllToAll, 3 * local, spd, l);
        (d.heads / spd, s * spd)
    } else {
        (d.heads, s)
    };
    if low != f32 {
        e.vector_in(low, &format!("{name}.core.to_fp32"), VectorKind::Cast, b * seq * 3, heads * dh, OpClass::Attention, l);
    }
    e.vector_in(f32, &format!("{name}.core.pad_v"), VectorKind::Gather, b * seq, heads * (dh + 1), OpClass::Attention, l);
    e.matmul_in(f32, &format!("{name}.core.kv"), b * heads * dh, dh + 1, seq, OpClass::Attention, l);
    if spd > 1 && sp.ring {
        e.comm(&format!("{name}.ring_kv_state"), CommKind::AllReduce, b * d.heads * dh * (dh + 1) * 4, spd, l);
    }
    e.matmul_in(f32, &format!("{name}.core.q_kv"), b * seq * heads, dh + 1, dh, OpClass::Attention, l);
    e.vector_in(f32, &format!("{name}.core.normalise"), VectorKind::Scale, b * seq, heads * dh, OpClass::Attention, l);
    if low != f32 {
        e.vector_in(f32, &format!("{name}.core.to_low"), VectorKind::Cast, b * seq, heads * dh, OpClass::Attention, l);
    }
    if spd > 1 && !sp.ring {
        e.comm(&format!("{name}.ulysses_a2a_out"), CommKind::AllToAll, local, spd, l);
    }
    e.linear(&format!("{name}.to_out"), b * s, h, h, Epilogue::ResidualAdd, OpClass::Attention, l);
}

//! Diffusion transformers from their diffusers configs: SD3/SD3.5 MMDiT
//! (`SD3Transformer2DModel`: joint attention over image and text tokens, SD3.5-Medium's extra
//! image self-attention in its `dual_attention_layers`), Flux (`FluxTransformer2DModel`: double-
//! stream blocks, then single-stream blocks over the concatenated sequence; FLUX.1-Kontext is
//! this model with the reference image's tokens joining the sequence) and the Wan2.1 / Wan2.2
//! video DiT (`WanTransformer3DModel`: self-attention over frames x height x width patches,
//! cross-attention to the T5 tokens). The families of 2025-2026 are in `dit_more`: Qwen-Image's
//! MMDiT, FLUX.2, HiDream's MoE DiT, Sana's linear-attention DiT and HunyuanVideo.
//!
//! Reference-image conditioning (FLUX.1-Kontext, Qwen-Image-Edit): the reference image's latent
//! is patchified like the output's and its tokens are concatenated to the image tokens, so every
//! block runs over output + reference + text tokens; only the output tokens leave `proj_out`.
//!
//! Sequence parallelism splits the tokens over `sp` chips. Ulysses (DeepSpeed-Ulysses) gives
//! each chip heads / sp of every attention over the whole sequence, with an all-to-all of q, k, v
//! before and of the output after; ring attention keeps each chip's queries and passes keys and
//! values around the ring (modelled as an all-gather of k and v, not overlapped with compute).
//! Self-attention operators are named `*.self_attn.*` so step caching (MindIE-SD
//! AttentionCache) can find them.

use super::cfg::{Cfg, MAX_LAYERS, MAX_WIDTH};
use super::emit::Emit;
use crate::model::OpClass;
use crate::op::{CommKind, Epilogue, VectorKind};

/// Which kind of DiT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DitKind {
    Sd3,
    Flux,
    Wan,
    /// `QwenImageTransformer2DModel`: 60 dual-stream MMDiT blocks with rotary positions.
    QwenImage,
    /// `Flux2TransformerModel`: double- then single-stream blocks, SwiGLU feed-forwards,
    /// modulations shared by all blocks of a kind.
    Flux2,
    /// `HiDreamImageTransformer2DModel`: double- and single-stream blocks whose image MLP is a
    /// mixture of experts (a shared expert and top-k of routed experts).
    HiDream,
    /// `SanaTransformer2DModel`: linear (ReLU-kernel) self-attention, cross-attention to the
    /// text, GLU MBConv feed-forward.
    Sana,
    /// `HunyuanVideoTransformer3DModel`: Flux-style double and single blocks over video
    /// patches, with a token refiner on the text.
    HunyuanVideo,
}

/// A parsed DiT config.
#[derive(Clone, Debug, PartialEq)]
pub struct Dit {
    pub kind: DitKind,
    pub heads: u64,
    pub head_dim: u64,
    /// Joint / double-stream / Wan blocks.
    pub layers: u64,
    /// Flux single-stream blocks.
    pub single_layers: u64,
    /// SD3.5-Medium blocks with a second image self-attention.
    pub dual_layers: u64,
    pub text_dim: u64,
    pub ffn: u64,
    pub in_channels: u64,
    /// Latent pixels per token side (2 for all three: SD3 patch_size, Flux's 2x2 packing, Wan [1,2,2]).
    pub patch: u64,
    /// HiDream: routed experts, experts each token runs, routed and shared expert widths.
    pub experts: u64,
    pub active_experts: u64,
    pub expert_ffn: u64,
    pub shared_ffn: u64,
    /// HunyuanVideo: token-refiner layers over the text.
    pub refiner_layers: u64,
    /// Sana: cross-attention heads and head width.
    pub cross_heads: u64,
    pub cross_head_dim: u64,
}

/// Sequence parallelism.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqParallel {
    pub degree: u64,
    pub ring: bool,
}

impl Dit {
    /// A DiT of `kind` with the shape fields every kind has; the family fields zero.
    pub fn base(kind: DitKind, heads: u64, head_dim: u64, layers: u64, text_dim: u64, ffn: u64, in_channels: u64, patch: u64) -> Dit {
        Dit { kind, heads, head_dim, layers, single_layers: 0, dual_layers: 0, text_dim, ffn, in_channels, patch, experts: 0, active_experts: 0, expert_ffn: 0, shared_ffn: 0, refiner_layers: 0, cross_heads: 0, cross_head_dim: 0 }
    }

    pub fn parse(c: &Cfg) -> Result<Dit, String> {
        let class = c.str("_class_name").unwrap_or("");
        if let Some(d) = super::dit_more::parse(c, class)? {
            return Ok(d);
        }
        let heads = c.int("num_attention_heads", MAX_WIDTH)?;
        let head_dim = c.int("attention_head_dim", 1024)?;
        let hidden = heads * head_dim;
        match class {
            "SD3Transformer2DModel" => Ok(Dit {
                dual_layers: c.v.get("dual_attention_layers").and_then(|d| d.as_array()).map(|d| d.len() as u64).unwrap_or(0),
                ..Dit::base(DitKind::Sd3, heads, head_dim, c.int("num_layers", MAX_LAYERS)?, c.int("joint_attention_dim", MAX_WIDTH)?, 4 * hidden, c.int_or("in_channels", MAX_WIDTH, 16)?, c.int_or("patch_size", 8, 2)?)
            }),
            "FluxTransformer2DModel" => Ok(Dit {
                single_layers: c.int_or("num_single_layers", MAX_LAYERS, 0)?,
                // The pipeline packs 2x2 latent pixels into one token of in_channels = 4 x 16.
                ..Dit::base(DitKind::Flux, heads, head_dim, c.int("num_layers", MAX_LAYERS)?, c.int("joint_attention_dim", MAX_WIDTH)?, 4 * hidden, c.int_or("in_channels", MAX_WIDTH, 64)? / 4, 2)
            }),
            "WanTransformer3DModel" => {
                let p = c.v.get("patch_size").and_then(|p| p.as_array()).and_then(|a| a.last()).and_then(|x| x.as_u64()).unwrap_or(2);
                if !(1..=8).contains(&p) {
                    return Err(format!("{}.patch_size: the spatial patch must be 1..=8", c.what));
                }
                Ok(Dit::base(DitKind::Wan, heads, head_dim, c.int("num_layers", MAX_LAYERS)?, c.int("text_dim", MAX_WIDTH)?, c.int("ffn_dim", MAX_WIDTH)?, c.int_or("in_channels", MAX_WIDTH, 16)?, p))
            }
            other => Err(format!("{}._class_name: '{other}' cannot be built (UNet2DConditionModel, SD3Transformer2DModel, FluxTransformer2DModel, WanTransformer3DModel, {} can)", c.what, super::dit_more::CLASSES.join(", "))),
        }
    }

    pub fn hidden(&self) -> u64 {
        self.heads * self.head_dim
    }

    /// Emits one forward over `b` latents of `n` output image tokens, `r` reference-image tokens
    /// (0 without reference conditioning) and `t` text tokens.
    #[allow(clippy::too_many_arguments)]
    pub fn build(&self, e: &mut Emit, b: u64, n: u64, r: u64, t: u64, sp: SeqParallel) -> Result<(), String> {
        let h = self.hidden();
        let spd = sp.degree.max(1);
        if !sp.ring && self.heads % spd != 0 {
            return Err(format!("Ulysses sequence parallelism over {spd} chips needs the heads ({}) divisible by {spd}", self.heads));
        }
        if r > 0 && !matches!(self.kind, DitKind::Flux | DitKind::QwenImage | DitKind::Flux2) {
            return Err("reference images: only FLUX (Kontext), FLUX.2 and Qwen-Image(-Edit) transformers take reference-image tokens".into());
        }
        let patch_in = self.in_channels * self.patch * self.patch;
        if !matches!(self.kind, DitKind::Sd3 | DitKind::Flux | DitKind::Wan) {
            return super::dit_more::build(self, e, b, n, r, t, sp);
        }
        // Tokens per chip: the output's (what proj_out emits) and the sequence's (output and
        // reference tokens, which every block runs over).
        let (ol, tl) = (n.div_ceil(spd), t.div_ceil(spd));
        let nl = (n + r).div_ceil(spd);
        e.linear("patch_embed", b * nl, h, patch_in, Epilogue::Bias, OpClass::Other, 1);
        e.linear("time_embed.linear_1", b, h, 256, Epilogue::BiasGelu, OpClass::Other, 1);
        e.linear("time_embed.linear_2", b, h, h, Epilogue::Bias, OpClass::Other, 1);
        match self.kind {
            DitKind::Sd3 | DitKind::Flux => {
                e.linear("context_embedder", b * tl, h, self.text_dim, Epilogue::Bias, OpClass::Other, 1);
                let l = self.layers;
                e.linear("block.norm1.modulation", b, 12 * h, h, Epilogue::Bias, OpClass::Other, l);
                e.norm("block.norm1", VectorKind::LayerNorm, b * (nl + tl), h, l);
                self.attention(e, "block.self_attn", b, nl + tl, h, sp, l);
                e.norm("block.norm2", VectorKind::LayerNorm, b * (nl + tl), h, l);
                e.linear("block.ff.up", b * (nl + tl), self.ffn, h, Epilogue::BiasGelu, OpClass::Mlp, l);
                e.linear("block.ff.down", b * (nl + tl), h, self.ffn, Epilogue::ResidualAdd, OpClass::Mlp, l);
                // The text stream has its own projections and feed-forward: the same FLOPs per
                // token (counted above over both streams' tokens), a second set of weights.
                e.weights = e.weights.saturating_add(l.saturating_mul(4 * h * h + 2 * self.ffn * h));
                if self.dual_layers > 0 {
                    self.attention(e, "dual_block.self_attn", b, nl, h, sp, self.dual_layers);
                }
                let s = self.single_layers;
                if s > 0 {
                    e.linear("single.norm.modulation", b, 3 * h, h, Epilogue::Bias, OpClass::Other, s);
                    e.norm("single.norm", VectorKind::LayerNorm, b * (nl + tl), h, s);
                    e.linear("single.proj_mlp", b * (nl + tl), self.ffn, h, Epilogue::BiasGelu, OpClass::Mlp, s);
                    self.attention_core(e, "single.self_attn", b, nl + tl, h, sp, s, true);
                    e.linear("single.proj_out", b * (nl + tl), h, h + self.ffn, Epilogue::ResidualAdd, OpClass::Mlp, s);
                }
            }
            _ => {
                e.linear("text_embedder.linear_1", b * t, h, self.text_dim, Epilogue::BiasGelu, OpClass::Other, 1);
                e.linear("text_embedder.linear_2", b * t, h, h, Epilogue::Bias, OpClass::Other, 1);
                e.linear("time_proj", b, 6 * h, h, Epilogue::Bias, OpClass::Other, 1);
                let l = self.layers;
                e.norm("block.norm1", VectorKind::LayerNorm, b * nl, h, l);
                self.attention(e, "block.self_attn", b, nl, h, sp, l);
                e.norm("block.norm2", VectorKind::LayerNorm, b * nl, h, l);
                e.linear("block.cross_attn.to_q", b * nl, h, h, Epilogue::Bias, OpClass::Attention, l);
                e.linear("block.cross_attn.to_kv", b * t, 2 * h, h, Epilogue::Bias, OpClass::Attention, l);
                e.norm("block.cross_attn.qk_norm", VectorKind::RmsNorm, b * (nl + t), h, l);
                e.attention("block.cross_attn.core", b, self.heads, nl, t, self.head_dim, false, l);
                e.linear("block.cross_attn.to_out", b * nl, h, h, Epilogue::ResidualAdd, OpClass::Attention, l);
                e.norm("block.norm3", VectorKind::LayerNorm, b * nl, h, l);
                e.linear("block.ffn.up", b * nl, self.ffn, h, Epilogue::BiasGelu, OpClass::Mlp, l);
                e.linear("block.ffn.down", b * nl, h, self.ffn, Epilogue::ResidualAdd, OpClass::Mlp, l);
            }
        }
        output(e, b, n, ol, h, patch_in, spd);
        Ok(())
    }

    /// q/k/v projection, the core and the output projection over `s` tokens per chip.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn attention(&self, e: &mut Emit, name: &str, b: u64, s: u64, h: u64, sp: SeqParallel, l: u64) {
        e.linear(&format!("{name}.to_qkv"), b * s, 3 * h, h, Epilogue::Bias, OpClass::Attention, l);
        self.attention_core(e, name, b, s, h, sp, l, false);
        e.linear(&format!("{name}.to_out"), b * s, h, h, Epilogue::ResidualAdd, OpClass::Attention, l);
    }

    /// q/k RMSNorm, rotary (Flux, Wan), the parallel exchange and the core.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn attention_core(&self, e: &mut Emit, name: &str, b: u64, s: u64, h: u64, sp: SeqParallel, l: u64, fused_qkv: bool) {
        if fused_qkv {
            e.linear(&format!("{name}.to_qkv"), b * s, 3 * h, h, Epilogue::Bias, OpClass::Attention, l);
        }
        e.norm(&format!("{name}.qk_norm"), VectorKind::RmsNorm, b * s * 2, h, l);
        if !matches!(self.kind, DitKind::Sd3 | DitKind::Sana) {
            e.vector(&format!("{name}.rotary"), VectorKind::Rotary, b * s * 2, h, OpClass::Attention, l);
        }
        let d = sp.degree.max(1);
        let full = s * d;
        // An all-to-all's bytes are what each rank holds (its s tokens); an all-gather's the
        // gathered whole (every rank's keys and values).
        let local = b * s * h * e.elem_bytes();
        let bytes = b * full * h * e.elem_bytes();
        if d > 1 && !sp.ring {
            e.comm(&format!("{name}.ulysses_a2a_qkv"), CommKind::AllToAll, 3 * local, d, l);
            e.attention(&format!("{name}.core"), b, self.heads / d, full, full, self.head_dim, false, l);
            e.comm(&format!("{name}.ulysses_a2a_out"), CommKind::AllToAll, local, d, l);
        } else if d > 1 {
            e.comm(&format!("{name}.ring_kv"), CommKind::AllGather, 2 * bytes, d, l);
            e.attention(&format!("{name}.core"), b, self.heads, s, full, self.head_dim, false, l);
        } else {
            e.attention(&format!("{name}.core"), b, self.heads, s, s, self.head_dim, false, l);
        }
    }
}

/// The output norm and projection over the `ol` output tokens per chip, and with sequence
/// parallelism the all-gather of the `n` output tokens.
pub(super) fn output(e: &mut Emit, b: u64, n: u64, ol: u64, h: u64, patch_in: u64, spd: u64) {
    e.norm("norm_out", VectorKind::LayerNorm, b * ol, h, 1);
    e.linear("proj_out", b * ol, patch_in, h, Epilogue::Bias, OpClass::Other, 1);
    if spd > 1 {
        e.comm("sp.gather_output", CommKind::AllGather, b * n * patch_in * e.elem_bytes(), spd, 1);
    }
}

/// The operators step caching (AttentionCache) skips on a cached step: the self-attentions.
pub fn in_attention_cache(name: &str) -> bool {
    name.contains("self_attn.")
}

//! Diffusion transformers from their diffusers configs: SD3/SD3.5 MMDiT
//! (`SD3Transformer2DModel`: joint attention over image and text tokens, SD3.5-Medium's extra
//! image self-attention in its `dual_attention_layers`), Flux (`FluxTransformer2DModel`: double-
//! stream blocks, then single-stream blocks over the concatenated sequence) and the Wan2.1 video
//! DiT (`WanTransformer3DModel`: self-attention over frames x height x width patches, cross-
//! attention to the T5 tokens).
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
}

/// Sequence parallelism.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqParallel {
    pub degree: u64,
    pub ring: bool,
}

impl Dit {
    pub fn parse(c: &Cfg) -> Result<Dit, String> {
        let class = c.str("_class_name").unwrap_or("");
        let heads = c.int("num_attention_heads", MAX_WIDTH)?;
        let head_dim = c.int("attention_head_dim", 1024)?;
        let hidden = heads * head_dim;
        match class {
            "SD3Transformer2DModel" => Ok(Dit {
                kind: DitKind::Sd3, heads, head_dim,
                layers: c.int("num_layers", MAX_LAYERS)?, single_layers: 0,
                dual_layers: c.v.get("dual_attention_layers").and_then(|d| d.as_array()).map(|d| d.len() as u64).unwrap_or(0),
                text_dim: c.int("joint_attention_dim", MAX_WIDTH)?, ffn: 4 * hidden,
                in_channels: c.int_or("in_channels", MAX_WIDTH, 16)?, patch: c.int_or("patch_size", 8, 2)?,
            }),
            "FluxTransformer2DModel" => Ok(Dit {
                kind: DitKind::Flux, heads, head_dim,
                layers: c.int("num_layers", MAX_LAYERS)?, single_layers: c.int_or("num_single_layers", MAX_LAYERS, 0)?, dual_layers: 0,
                text_dim: c.int("joint_attention_dim", MAX_WIDTH)?, ffn: 4 * hidden,
                // The pipeline packs 2x2 latent pixels into one token of in_channels = 4 x 16.
                in_channels: c.int_or("in_channels", MAX_WIDTH, 64)? / 4, patch: 2,
            }),
            "WanTransformer3DModel" => {
                let p = c.v.get("patch_size").and_then(|p| p.as_array()).and_then(|a| a.last()).and_then(|x| x.as_u64()).unwrap_or(2);
                if !(1..=8).contains(&p) {
                    return Err(format!("{}.patch_size: the spatial patch must be 1..=8", c.what));
                }
                Ok(Dit {
                    kind: DitKind::Wan, heads, head_dim,
                    layers: c.int("num_layers", MAX_LAYERS)?, single_layers: 0, dual_layers: 0,
                    text_dim: c.int("text_dim", MAX_WIDTH)?, ffn: c.int("ffn_dim", MAX_WIDTH)?,
                    in_channels: c.int_or("in_channels", MAX_WIDTH, 16)?, patch: p,
                })
            }
            other => Err(format!("{}._class_name: '{other}' cannot be built (UNet2DConditionModel, SD3Transformer2DModel, FluxTransformer2DModel, WanTransformer3DModel can)", c.what)),
        }
    }

    pub fn hidden(&self) -> u64 {
        self.heads * self.head_dim
    }

    /// Emits one forward over `b` latents of `n` image tokens and `t` text tokens.
    pub fn build(&self, e: &mut Emit, b: u64, n: u64, t: u64, sp: SeqParallel) -> Result<(), String> {
        let h = self.hidden();
        let spd = sp.degree.max(1);
        if !sp.ring && self.heads % spd != 0 {
            return Err(format!("Ulysses sequence parallelism over {spd} chips needs the heads ({}) divisible by {spd}", self.heads));
        }
        // Tokens per chip.
        let (nl, tl) = (n.div_ceil(spd), t.div_ceil(spd));
        let patch_in = self.in_channels * self.patch * self.patch;
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
            DitKind::Wan => {
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
        e.norm("norm_out", VectorKind::LayerNorm, b * nl, h, 1);
        e.linear("proj_out", b * nl, patch_in, h, Epilogue::Bias, OpClass::Other, 1);
        if spd > 1 {
            e.comm("sp.gather_output", CommKind::AllGather, b * n * patch_in * e.elem_bytes(), spd, 1);
        }
        Ok(())
    }

    /// q/k/v projection, the core and the output projection over `s` tokens per chip.
    #[allow(clippy::too_many_arguments)]
    fn attention(&self, e: &mut Emit, name: &str, b: u64, s: u64, h: u64, sp: SeqParallel, l: u64) {
        e.linear(&format!("{name}.to_qkv"), b * s, 3 * h, h, Epilogue::Bias, OpClass::Attention, l);
        self.attention_core(e, name, b, s, h, sp, l, false);
        e.linear(&format!("{name}.to_out"), b * s, h, h, Epilogue::ResidualAdd, OpClass::Attention, l);
    }

    /// q/k RMSNorm, rotary (Flux, Wan), the parallel exchange and the core.
    #[allow(clippy::too_many_arguments)]
    fn attention_core(&self, e: &mut Emit, name: &str, b: u64, s: u64, h: u64, sp: SeqParallel, l: u64, fused_qkv: bool) {
        if fused_qkv {
            e.linear(&format!("{name}.to_qkv"), b * s, 3 * h, h, Epilogue::Bias, OpClass::Attention, l);
        }
        e.norm(&format!("{name}.qk_norm"), VectorKind::RmsNorm, b * s * 2, h, l);
        if self.kind != DitKind::Sd3 {
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

/// The operators step caching (AttentionCache) skips on a cached step: the self-attentions.
pub fn in_attention_cache(name: &str) -> bool {
    name.contains("self_attn.")
}

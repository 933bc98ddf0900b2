//! UNet2DConditionModel (SD 1.5, SD 2.1, SDXL) from its diffusers config: the down, mid and up
//! blocks exactly as `diffusers.models.unets.unet_2d_condition` wires them (skip channels
//! included), each ResnetBlock2D and Transformer2DModel as operators.
//!
//! `attention_head_dim` in these configs is, by a diffusers legacy, the number of heads
//! (`num_attention_heads` overrides it when present); the head width is channels / heads.

use super::cfg::{Cfg, MAX_LAYERS, MAX_WIDTH};
use super::emit::Emit;
use super::tome::Tome;
use crate::model::OpClass;
use crate::op::{Epilogue, VectorKind};

/// A parsed UNet config.
#[derive(Clone, Debug, PartialEq)]
pub struct Unet {
    pub channels: Vec<u64>,
    pub down_attn: Vec<bool>,
    pub up_attn: Vec<bool>,
    pub heads: Vec<u64>,
    pub layers: Vec<u64>,
    pub layers_per_block: u64,
    pub cross_dim: u64,
    pub in_channels: u64,
    pub out_channels: u64,
    /// SDXL's "text_time" added embedding input width (0: none).
    pub add_embed_in: u64,
}

impl Unet {
    pub fn parse(c: &Cfg) -> Result<Unet, String> {
        let channels = c.ints("block_out_channels", MAX_WIDTH)?;
        let n = channels.len();
        let kind = |key: &str| -> Result<Vec<bool>, String> {
            let t = c.strs(key)?;
            if t.len() != n {
                return Err(format!("{}.{key}: lists {} blocks, block_out_channels lists {n}", c.what, t.len()));
            }
            t.iter().map(|s| match *s {
                "CrossAttnDownBlock2D" | "CrossAttnUpBlock2D" => Ok(true),
                "DownBlock2D" | "UpBlock2D" => Ok(false),
                other => Err(format!("{}.{key}: block type '{other}' cannot be built (CrossAttnDownBlock2D, DownBlock2D, CrossAttnUpBlock2D, UpBlock2D are)", c.what)),
            }).collect()
        };
        let down_attn = kind("down_block_types")?;
        let up_attn = kind("up_block_types")?;
        let heads = match c.v.get("num_attention_heads") {
            Some(v) if !v.is_null() => c.per_block("num_attention_heads", n, MAX_WIDTH, None)?,
            _ => c.per_block("attention_head_dim", n, MAX_WIDTH, Some(8))?,
        };
        for (i, (&ch, &h)) in channels.iter().zip(&heads).enumerate() {
            if ch % h != 0 || ch % 32 != 0 {
                return Err(format!("{}.attention_head_dim: block {i} has {ch} channels, not divisible into {h} heads and 32 groups", c.what));
            }
        }
        let add_embed_in = match c.str("addition_embed_type") {
            None => 0,
            Some("text_time") => c.int("projection_class_embeddings_input_dim", MAX_WIDTH)?,
            Some(other) => return Err(format!("{}.addition_embed_type: '{other}' cannot be built (only 'text_time')", c.what)),
        };
        Ok(Unet {
            layers: c.per_block("transformer_layers_per_block", n, MAX_LAYERS, Some(1))?,
            layers_per_block: c.int_or("layers_per_block", 16, 2)?,
            cross_dim: c.int("cross_attention_dim", MAX_WIDTH)?,
            in_channels: c.int_or("in_channels", MAX_WIDTH, 4)?,
            out_channels: c.int_or("out_channels", MAX_WIDTH, 4)?,
            channels, down_attn, up_attn, heads, add_embed_in,
        })
    }

    /// Downsamplings between the latent and the innermost block (the latent side must divide by 2^this).
    pub fn downsamples(&self) -> u32 {
        (self.channels.len() as u32).saturating_sub(1)
    }

    /// Latent pixels per image at the highest resolution that has attention (where ToMe merges).
    fn tome_level(&self) -> Option<usize> {
        self.down_attn.iter().position(|a| *a)
    }

    /// Emits one UNet forward for `b` latents of h x w with `text` prompt tokens; returns the
    /// bytes of the skip activations held from the down path to the up path.
    pub fn build(&self, e: &mut Emit, b: u64, h: u64, w: u64, text: u64, tome: &Tome) -> u64 {
        let temb = self.channels[0] * 4;
        e.linear("time_embedding.linear_1", b, temb, self.channels[0], Epilogue::BiasGelu, OpClass::Other, 1);
        e.linear("time_embedding.linear_2", b, temb, temb, Epilogue::Bias, OpClass::Other, 1);
        if self.add_embed_in > 0 {
            e.linear("add_embedding.linear_1", b, temb, self.add_embed_in, Epilogue::BiasGelu, OpClass::Other, 1);
            e.linear("add_embedding.linear_2", b, temb, temb, Epilogue::Bias, OpClass::Other, 1);
        }
        e.conv("conv_in", b, self.in_channels, self.channels[0], h, w, 3, 1, 1);
        let n = self.channels.len();
        let (mut rh, mut rw) = (h, w);
        let mut skips: Vec<(u64, u64)> = vec![(self.channels[0], rh * rw)];
        let tome_at = self.tome_level();
        let mut out_ch = self.channels[0];
        for i in 0..n {
            let in_ch = out_ch;
            out_ch = self.channels[i];
            let t = if tome_at == Some(i) { *tome } else { Tome::none() };
            for j in 0..self.layers_per_block {
                let cin = if j == 0 { in_ch } else { out_ch };
                resnet(e, &format!("down{i}.resnet{j}"), b, cin, out_ch, rh, rw, temb);
                if self.down_attn[i] {
                    self.transformer(e, &format!("down{i}.attn{j}"), b, out_ch, self.heads[i], self.layers[i], rh * rw, text, &t);
                }
                skips.push((out_ch, rh * rw));
            }
            if i + 1 < n {
                e.conv(&format!("down{i}.downsample"), b, out_ch, out_ch, rh, rw, 3, 2, 1);
                rh = rh.div_ceil(2);
                rw = rw.div_ceil(2);
                skips.push((out_ch, rh * rw));
            }
        }
        let skip_bytes: u64 = skips.iter().map(|(c, p)| c * p * b * e.elem_bytes()).sum();
        let mid = self.channels[n - 1];
        resnet(e, "mid.resnet0", b, mid, mid, rh, rw, temb);
        self.transformer(e, "mid.attn", b, mid, self.heads[n - 1], self.layers[n - 1], rh * rw, text, &Tome::none());
        resnet(e, "mid.resnet1", b, mid, mid, rh, rw, temb);
        let rev: Vec<u64> = self.channels.iter().rev().copied().collect();
        let (rheads, rlayers): (Vec<u64>, Vec<u64>) = (self.heads.iter().rev().copied().collect(), self.layers.iter().rev().copied().collect());
        let mut out_ch = rev[0];
        for i in 0..n {
            let prev = out_ch;
            out_ch = rev[i];
            let t = if tome_at == Some(n - 1 - i) { *tome } else { Tome::none() };
            for j in 0..=self.layers_per_block {
                let (skip_ch, _) = skips.pop().unwrap_or((out_ch, 0));
                let cin = if j == 0 { prev } else { out_ch };
                resnet(e, &format!("up{i}.resnet{j}"), b, cin + skip_ch, out_ch, rh, rw, temb);
                if self.up_attn[i] {
                    self.transformer(e, &format!("up{i}.attn{j}"), b, out_ch, rheads[i], rlayers[i], rh * rw, text, &t);
                }
            }
            if i + 1 < n {
                rh *= 2;
                rw *= 2;
                e.vector(&format!("up{i}.upsample.nearest"), VectorKind::Elementwise, b * rh * rw, out_ch, OpClass::Conv, 1);
                e.conv(&format!("up{i}.upsample.conv"), b, out_ch, out_ch, rh, rw, 3, 1, 1);
            }
        }
        e.group_norm("conv_norm_out", b, self.channels[0], rh * rw, 1);
        e.vector("conv_act", VectorKind::Activation, b * rh * rw, self.channels[0], OpClass::Conv, 1);
        e.conv("conv_out", b, self.channels[0], self.out_channels, rh, rw, 3, 1, 1);
        skip_bytes
    }

    /// A Transformer2DModel of `layers` BasicTransformerBlocks over `px` pixels of `c` channels.
    #[allow(clippy::too_many_arguments)]
    fn transformer(&self, e: &mut Emit, name: &str, b: u64, c: u64, heads: u64, layers: u64, px: u64, text: u64, tome: &Tome) {
        let tok = b * px;
        let hd = c / heads;
        e.group_norm(&format!("{name}.norm"), b, c, px, 1);
        e.linear(&format!("{name}.proj_in"), tok, c, c, Epilogue::Bias, OpClass::Attention, 1);
        let l = layers;
        e.norm(&format!("{name}.norm1"), VectorKind::LayerNorm, tok, c, l);
        // Token merging shortens the self-attention's sequence (and pays for its matching).
        let kept = tome.kept(px);
        tome.emit_merge(e, &format!("{name}.tome"), b, px, c, l);
        e.linear(&format!("{name}.attn1.to_qkv"), b * kept, 3 * c, c, Epilogue::None, OpClass::Attention, l);
        e.attention(&format!("{name}.attn1.core"), b, heads, kept, kept, hd, false, l);
        e.linear(&format!("{name}.attn1.to_out"), b * kept, c, c, Epilogue::ResidualAdd, OpClass::Attention, l);
        tome.emit_unmerge(e, &format!("{name}.tome"), b, px, c, l);
        e.norm(&format!("{name}.norm2"), VectorKind::LayerNorm, tok, c, l);
        e.linear(&format!("{name}.attn2.to_q"), tok, c, c, Epilogue::None, OpClass::Attention, l);
        e.linear(&format!("{name}.attn2.to_kv"), b * text, 2 * c, self.cross_dim, Epilogue::None, OpClass::Attention, l);
        e.attention(&format!("{name}.attn2.core"), b, heads, px, text, hd, false, l);
        e.linear(&format!("{name}.attn2.to_out"), tok, c, c, Epilogue::ResidualAdd, OpClass::Attention, l);
        e.norm(&format!("{name}.norm3"), VectorKind::LayerNorm, tok, c, l);
        e.linear(&format!("{name}.ff.proj"), tok, 8 * c, c, Epilogue::Bias, OpClass::Mlp, l);
        e.vector(&format!("{name}.ff.geglu"), VectorKind::SwiGlu, tok, 4 * c, OpClass::Mlp, l);
        e.linear(&format!("{name}.ff.out"), tok, c, 4 * c, Epilogue::ResidualAdd, OpClass::Mlp, l);
        e.linear(&format!("{name}.proj_out"), tok, c, c, Epilogue::ResidualAdd, OpClass::Attention, 1);
    }
}

/// DeepCache's shallow branch: on a cached step only the outermost down and up blocks (and the
/// stem and head) run; the deeper features are reused from the last full step.
pub fn in_shallow_branch(name: &str, blocks: usize) -> bool {
    let last_up = format!("up{}.", blocks.saturating_sub(1));
    name.starts_with("down0.") || name.starts_with(&last_up) || name.starts_with("conv_") || name.starts_with("time_embedding") || name.starts_with("add_embedding")
}

/// A ResnetBlock2D from `cin` to `cout` channels at h x w, with the timestep projection.
#[allow(clippy::too_many_arguments)]
pub fn resnet(e: &mut Emit, name: &str, b: u64, cin: u64, cout: u64, h: u64, w: u64, temb: u64) {
    let px = h * w;
    e.group_norm(&format!("{name}.norm1"), b, cin, px, 1);
    e.vector(&format!("{name}.act1"), VectorKind::Activation, b * px, cin, OpClass::Conv, 1);
    e.conv(&format!("{name}.conv1"), b, cin, cout, h, w, 3, 1, 1);
    if temb > 0 {
        e.linear(&format!("{name}.time_emb_proj"), b, cout, temb, Epilogue::Bias, OpClass::Other, 1);
    }
    e.group_norm(&format!("{name}.norm2"), b, cout, px, 1);
    e.vector(&format!("{name}.act2"), VectorKind::Activation, b * px, cout, OpClass::Conv, 1);
    e.conv(&format!("{name}.conv2"), b, cout, cout, h, w, 3, 1, 1);
    if cin != cout {
        e.conv(&format!("{name}.shortcut"), b, cin, cout, h, w, 1, 1, 1);
    }
    e.vector(&format!("{name}.residual_add"), VectorKind::Elementwise, b * px, cout, OpClass::Conv, 1);
}


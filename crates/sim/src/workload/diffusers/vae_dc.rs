//! Sana's deep-compression autoencoder (`AutoencoderDC`, DC-AE: 32x spatial compression, 32
//! latent channels) from its diffusers config, wired as diffusers'
//! `models/autoencoders/autoencoder_dc.py` wires it:
//! - the decoder: `conv_in` (latent -> the deepest width, plus the channel-repeat shortcut), then
//!   from deep to shallow each stage's `DCUpBlock2d` (nearest 2x interpolation and a 3x3
//!   convolution when `upsample_block_type` is "interpolate", else a convolution to 4x channels
//!   and a pixel shuffle; plus the repeat-and-shuffle shortcut) and its `layers_per_block`
//!   blocks; then RMSNorm, ReLU and `conv_out` to RGB;
//! - `ResBlock`: 3x3 conv, activation, 3x3 conv, RMSNorm over channels, residual;
//! - `EfficientViTBlock`: `SanaMultiscaleLinearAttention` (1x1 q/k/v, for each multi-scale kernel
//!   a depthwise k x k and a grouped 1x1 over q/k/v, ReLU kernels, linear attention per head of
//!   `attention_head_dim` over all pixels with K^T V states, 1x1 output over the concatenated
//!   scales, RMSNorm, residual), then `GLUMBConv` (1x1 to 2 x 4 x width, SiLU, depthwise 3x3,
//!   gate, 1x1 back, RMSNorm, residual);
//! - the encoder (training encodes each image): `conv_in`, each stage's blocks then its
//!   `DCDownBlock2d` (a stride-2 3x3 convolution when `downsample_block_type` is "conv" /
//!   "Conv", else a convolution to a quarter of the channels and a pixel unshuffle; plus the
//!   averaging shortcut), then `conv_out` to the latent with its averaging shortcut.
//!
//! 1x1 convolutions are linear layers over the pixels (as diffusers runs them on channels-last
//! tensors); a depthwise k x k convolution is k x k passes of a vector multiply-add over the
//! feature map (the same arithmetic and traffic as one pass over k x k times the channels, but the
//! feature map, not k x k copies of it, is what one pass holds: the memory estimate reads it).

use super::cfg::{Cfg, MAX_WIDTH};
use super::emit::Emit;
use crate::model::OpClass;
use crate::op::{Epilogue, VectorKind};
use serde_json::Value;

/// One stage of the encoder or decoder.
#[derive(Clone, Debug, PartialEq)]
pub struct DcStage {
    pub channels: u64,
    pub layers: u64,
    /// EfficientViTBlock (true) or ResBlock.
    pub vit: bool,
    /// Multi-scale kernel sizes of the stage's attention (`qkv_multiscales`).
    pub scales: Vec<u64>,
}

/// A parsed `AutoencoderDC`.
#[derive(Clone, Debug, PartialEq)]
pub struct DcAe {
    pub latent: u64,
    pub head_dim: u64,
    pub encoder: Vec<DcStage>,
    pub decoder: Vec<DcStage>,
    /// `upsample_block_type` "interpolate" (else pixel shuffle).
    pub interpolate: bool,
    /// `downsample_block_type` "conv" (else pixel unshuffle).
    pub down_conv: bool,
}

fn stages(c: &Cfg, side: &str) -> Result<Vec<DcStage>, String> {
    let ch = c.ints(&format!("{side}_block_out_channels"), MAX_WIDTH)?;
    let n = ch.len();
    if n < 2 || n > 10 {
        return Err(format!("{}.{side}_block_out_channels: 2..=10 stages (got {n})", c.what));
    }
    let layers_key = format!("{side}_layers_per_block");
    let layers: Vec<u64> = match c.v.get(&layers_key) {
        Some(Value::Array(a)) if a.len() == n => a.iter().map(|x| x.as_u64().filter(|l| *l <= 64).ok_or_else(|| format!("{}.{layers_key}: every value must be an integer in 0..=64", c.what))).collect::<Result<_, _>>()?,
        Some(Value::Array(a)) => return Err(format!("{}.{layers_key}: lists {} values for {n} stages", c.what, a.len())),
        _ => return Err(format!("{}.{layers_key}: missing or not a list", c.what)),
    };
    let types_key = format!("{side}_block_types");
    let types: Vec<String> = match c.v.get(&types_key) {
        None | Some(Value::Null) => vec!["ResBlock".into(); n],
        Some(Value::String(s)) => vec![s.clone(); n],
        Some(Value::Array(a)) if a.len() == n => a.iter().map(|x| x.as_str().map(String::from).ok_or_else(|| format!("{}.{types_key}: every entry must be a string", c.what))).collect::<Result<_, _>>()?,
        Some(_) => return Err(format!("{}.{types_key}: a block type or a list of {n}", c.what)),
    };
    let scales_key = format!("{side}_qkv_multiscales");
    let scales: Vec<Vec<u64>> = match c.v.get(&scales_key) {
        None | Some(Value::Null) => vec![vec![]; n],
        Some(Value::Array(a)) if a.len() == n => a
            .iter()
            .map(|s| s.as_array().ok_or(()).and_then(|k| k.iter().map(|x| x.as_u64().filter(|v| *v % 2 == 1 && *v <= 15).ok_or(())).collect::<Result<Vec<u64>, ()>>()).map_err(|_| format!("{}.{scales_key}: each stage lists odd kernel sizes up to 15", c.what)))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(format!("{}.{scales_key}: a list of {n} kernel lists", c.what)),
    };
    let head_dim = c.int_or("attention_head_dim", 1024, 32)?;
    let mut out = Vec::new();
    for i in 0..n {
        let vit = match types[i].as_str() {
            "ResBlock" => false,
            "EfficientViTBlock" => true,
            other => return Err(format!("{}.{types_key}[{i}]: '{other}' (ResBlock or EfficientViTBlock)", c.what)),
        };
        if vit && ch[i] % head_dim != 0 {
            return Err(format!("{}.{side}_block_out_channels[{i}]: {} is not a multiple of attention_head_dim {head_dim}", c.what, ch[i]));
        }
        out.push(DcStage { channels: ch[i], layers: layers[i], vit, scales: scales[i].clone() });
    }
    if out.iter().all(|s| s.layers == 0) {
        return Err(format!("{}.{layers_key}: every stage has 0 layers", c.what));
    }
    Ok(out)
}

impl DcAe {
    pub fn parse(c: &Cfg) -> Result<DcAe, String> {
        let encoder = stages(c, "encoder")?;
        let decoder = stages(c, "decoder")?;
        if encoder.len() != decoder.len() {
            return Err(format!("{}.decoder_block_out_channels: {} stages against the encoder's {}", c.what, decoder.len(), encoder.len()));
        }
        let up = c.str("upsample_block_type").unwrap_or("pixel_shuffle");
        let down = c.str("downsample_block_type").unwrap_or("pixel_unshuffle");
        if !matches!(up, "interpolate" | "pixel_shuffle") {
            return Err(format!("{}.upsample_block_type: '{up}' (interpolate or pixel_shuffle)", c.what));
        }
        if !matches!(down.to_ascii_lowercase().as_str(), "conv" | "pixel_unshuffle") {
            return Err(format!("{}.downsample_block_type: '{down}' (conv or pixel_unshuffle)", c.what));
        }
        Ok(DcAe { latent: c.int_or("latent_channels", 1024, 32)?, head_dim: c.int_or("attention_head_dim", 1024, 32)?, encoder, decoder, interpolate: up == "interpolate", down_conv: down.eq_ignore_ascii_case("conv") })
    }

    /// Pixels per latent pixel (2 ^ (stages - 1): 32 for Sana's six stages).
    pub fn spatial_factor(&self) -> u64 {
        1 << (self.encoder.len() - 1)
    }

    /// Emits the decoder over `b` latents of h x w; returns its largest activation's bytes x 2.
    pub fn build_decoder(&self, e: &mut Emit, b: u64, h: u64, w: u64) -> u64 {
        let st = &self.decoder;
        let n = st.len();
        let deep = st[n - 1].channels;
        e.conv("conv_in", b, self.latent, deep, h, w, 3, 1, 1);
        e.vector("conv_in.shortcut", VectorKind::Elementwise, b * h * w, deep, OpClass::Conv, 1);
        let (mut rh, mut rw) = (h, w);
        let mut largest = b * h * w * deep;
        for i in (0..n).rev() {
            let s = &st[i];
            if i + 1 < n && s.layers > 0 {
                let cin = st[i + 1].channels;
                if self.interpolate {
                    rh *= 2;
                    rw *= 2;
                    e.vector(&format!("up{i}.upsample.nearest"), VectorKind::Elementwise, b * rh * rw, cin, OpClass::Conv, 1);
                    e.conv(&format!("up{i}.upsample.conv"), b, cin, s.channels, rh, rw, 3, 1, 1);
                } else {
                    e.conv(&format!("up{i}.upsample.conv"), b, cin, 4 * s.channels, rh, rw, 3, 1, 1);
                    rh *= 2;
                    rw *= 2;
                    e.vector(&format!("up{i}.upsample.pixel_shuffle"), VectorKind::Elementwise, b * rh * rw, s.channels, OpClass::Conv, 1);
                }
                e.vector(&format!("up{i}.upsample.shortcut"), VectorKind::Elementwise, b * rh * rw, s.channels, OpClass::Conv, 1);
            }
            largest = largest.max(self.block(e, &format!("up{i}"), s, b, rh, rw));
        }
        // layers_per_block[0] == 0: the output convolution is itself a 2x up block.
        let last = if st[0].layers > 0 { st[0].channels } else { st[1].channels };
        e.norm("norm_out", VectorKind::RmsNorm, b * rh * rw, last, 1);
        e.vector("conv_act", VectorKind::Activation, b * rh * rw, last, OpClass::Conv, 1);
        if st[0].layers == 0 {
            rh *= 2;
            rw *= 2;
            e.vector("conv_out.nearest", VectorKind::Elementwise, b * rh * rw, last, OpClass::Conv, 1);
        }
        e.conv("conv_out", b, last, 3, rh, rw, 3, 1, 1);
        largest = largest.max(b * rh * rw * last);
        largest * e.elem_bytes() * 2
    }

    /// Emits the encoder over `b` images of h x w pixels.
    pub fn build_encoder(&self, e: &mut Emit, b: u64, h: u64, w: u64) {
        let st = &self.encoder;
        let n = st.len();
        let (mut rh, mut rw) = (h, w);
        if st[0].layers > 0 {
            e.conv("conv_in", b, 3, st[0].channels, rh, rw, 3, 1, 1);
        } else {
            e.conv("conv_in", b, 3, st[1].channels, rh, rw, 3, 2, 1);
            rh = rh.div_ceil(2);
            rw = rw.div_ceil(2);
        }
        for (i, s) in st.iter().enumerate() {
            self.block(e, &format!("down{i}"), s, b, rh, rw);
            if i + 1 < n && s.layers > 0 {
                let cout = st[i + 1].channels;
                if self.down_conv {
                    e.conv(&format!("down{i}.downsample.conv"), b, s.channels, cout, rh, rw, 3, 2, 1);
                } else {
                    e.conv(&format!("down{i}.downsample.conv"), b, s.channels, (cout / 4).max(1), rh, rw, 3, 1, 1);
                }
                rh = rh.div_ceil(2);
                rw = rw.div_ceil(2);
                e.vector(&format!("down{i}.downsample.shortcut"), VectorKind::Elementwise, b * rh * rw, cout, OpClass::Conv, 1);
            }
        }
        let deep = st[n - 1].channels;
        e.conv("conv_out", b, deep, self.latent, rh, rw, 3, 1, 1);
        e.vector("conv_out.shortcut", VectorKind::Elementwise, b * rh * rw, deep, OpClass::Conv, 1);
    }

    /// A stage's `layers` blocks at h x w; returns the largest activation's elements.
    fn block(&self, e: &mut Emit, p: &str, s: &DcStage, b: u64, h: u64, w: u64) -> u64 {
        let (c, l) = (s.channels, s.layers);
        if l == 0 {
            return 0;
        }
        let px = b * h * w;
        if !s.vit {
            e.conv(&format!("{p}.res.conv1"), b, c, c, h, w, 3, 1, l);
            e.vector(&format!("{p}.res.act"), VectorKind::Activation, px, c, OpClass::Conv, l);
            e.conv(&format!("{p}.res.conv2"), b, c, c, h, w, 3, 1, l);
            e.norm(&format!("{p}.res.norm"), VectorKind::RmsNorm, px, c, l);
            e.vector(&format!("{p}.res.residual_add"), VectorKind::Elementwise, px, c, OpClass::Conv, l);
            return px * c;
        }
        // SanaMultiscaleLinearAttention: heads of head_dim; each multi-scale kernel adds as many
        // heads again (its aggregated q/k/v).
        let d = self.head_dim;
        let heads = c / d;
        let k = s.scales.len() as u64;
        let all_heads = heads * (1 + k);
        e.linear(&format!("{p}.attn.to_qkv"), px, 3 * c, c, Epilogue::None, OpClass::Attention, l);
        for (j, ks) in s.scales.iter().enumerate() {
            e.vector(&format!("{p}.attn.multiscale{j}.depthwise"), VectorKind::Elementwise, px, 3 * c, OpClass::Conv, l * ks * ks);
            e.weights = e.weights.saturating_add(l.saturating_mul(3 * c * ks * ks));
            // Grouped 1x1 (3 x heads groups of head_dim): one head_dim x head_dim matmul per group.
            e.matmul(&format!("{p}.attn.multiscale{j}.grouped"), px * 3 * heads, d, d, Epilogue::None, OpClass::Attention, l);
            e.weights = e.weights.saturating_add(l.saturating_mul(3 * c * d));
        }
        e.vector(&format!("{p}.attn.relu"), VectorKind::Activation, px, 2 * c * (1 + k), OpClass::Attention, l);
        let n = h * w;
        e.matmul(&format!("{p}.attn.core.kv"), b * all_heads * (d + 1), d, n, Epilogue::None, OpClass::Attention, l);
        e.matmul(&format!("{p}.attn.core.q_kv"), b * n * all_heads, d + 1, d, Epilogue::None, OpClass::Attention, l);
        e.vector(&format!("{p}.attn.core.normalise"), VectorKind::Elementwise, px, all_heads * d, OpClass::Attention, l);
        e.linear(&format!("{p}.attn.to_out"), px, c, c * (1 + k), Epilogue::None, OpClass::Attention, l);
        e.norm(&format!("{p}.attn.norm_out"), VectorKind::RmsNorm, px, c, l);
        e.vector(&format!("{p}.attn.residual_add"), VectorKind::Elementwise, px, c, OpClass::Attention, l);
        // GLUMBConv, expand ratio 4.
        let hid = 4 * c;
        e.linear(&format!("{p}.glumbconv.conv_inverted"), px, 2 * hid, c, Epilogue::Bias, OpClass::Mlp, l);
        e.vector(&format!("{p}.glumbconv.silu"), VectorKind::Activation, px, 2 * hid, OpClass::Mlp, l);
        e.vector(&format!("{p}.glumbconv.conv_depth"), VectorKind::Elementwise, px, 2 * hid, OpClass::Conv, l * 9);
        e.weights = e.weights.saturating_add(l.saturating_mul(2 * hid * 9));
        e.vector(&format!("{p}.glumbconv.glu"), VectorKind::SwiGlu, px, hid, OpClass::Mlp, l);
        e.linear(&format!("{p}.glumbconv.conv_point"), px, c, hid, Epilogue::None, OpClass::Mlp, l);
        e.norm(&format!("{p}.glumbconv.norm"), VectorKind::RmsNorm, px, c, l);
        e.vector(&format!("{p}.glumbconv.residual_add"), VectorKind::Elementwise, px, c, OpClass::Mlp, l);
        px * 2 * hid
    }
}

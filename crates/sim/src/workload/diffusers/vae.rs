//! VAE decoders from their configs: `AutoencoderKL` (SD 1.x/2.x, SDXL, SD3, Flux) as
//! `diffusers.models.autoencoders.vae.Decoder` wires it, and the Wan2.1 causal 3-D VAE
//! (`AutoencoderKLWan`). Three of the newer VAEs are built with these two shapes:
//! FLUX.2's `AutoencoderKLFlux2` is an `AutoencoderKL` of 32 latent channels (its 2x2 latent
//! patchify and batch norm are reshapes and a scale); Qwen-Image's `AutoencoderKLQwenImage` is
//! Wan's VAE run on single frames (its temporal convolutions do not run on one frame, so it is
//! built as an image VAE); HunyuanVideo's `AutoencoderKLHunyuanVideo` (causal 3-D convolutions,
//! `block_out_channels` widths, `layers_per_block` resnets, 4x temporal and 8x spatial
//! compression) is built as the Wan decoder of those widths (an approximation: the same
//! convolution shapes and per-latent-frame decoding, Wan's norms). Sana's DC-AE
//! (`AutoencoderDC`, 32x compression) is built in `vae_dc`.
//!
//! The Wan decoder is an approximation: each causal 3x3x3 convolution is a 2-D 3x3 convolution
//! over three frames' channels (the same FLOPs and weight bytes), RMS norms are costed as norms,
//! and the decoder runs one latent frame at a time as diffusers' `AutoencoderKLWan._decode` does
//! (a causal feature cache carries the context), each chunk doubling its frames per temporal
//! upsampling (1 latent frame -> 4 frames); the caller repeats it per latent frame.

use super::cfg::{Cfg, MAX_WIDTH};
use super::emit::Emit;
use super::unet::resnet;
use super::vae_dc::DcAe;
use crate::model::OpClass;
use crate::op::{Epilogue, VectorKind};

/// A parsed VAE.
#[derive(Clone, Debug, PartialEq)]
pub enum Vae {
    Kl { channels: Vec<u64>, layers: u64, latent: u64, post_quant: bool },
    Wan { base: u64, mult: Vec<u64>, res_blocks: u64, latent: u64, temporal_up: Vec<bool> },
    /// Sana's deep-compression autoencoder (`AutoencoderDC`).
    Dc(DcAe),
}

impl Vae {
    pub fn parse(c: &Cfg) -> Result<Vae, String> {
        match c.str("_class_name").unwrap_or("") {
            "AutoencoderKL" | "AutoencoderKLFlux2" => {
                let channels = c.ints("block_out_channels", MAX_WIDTH)?;
                if channels.iter().any(|ch| ch % 32 != 0) {
                    return Err(format!("{}.block_out_channels: every width must divide into 32 groups", c.what));
                }
                Ok(Vae::Kl {
                    channels,
                    layers: c.int_or("layers_per_block", 8, 2)?,
                    latent: c.int_or("latent_channels", 64, 4)?,
                    post_quant: c.v.get("use_post_quant_conv").and_then(|v| v.as_bool()).unwrap_or(true),
                })
            }
            "AutoencoderKLWan" => {
                let mult = c.ints("dim_mult", 16)?;
                let td = c.v.get("temperal_downsample").and_then(|t| t.as_array()).map(|a| a.iter().map(|x| x.as_bool().unwrap_or(false)).collect::<Vec<bool>>()).unwrap_or_default();
                Ok(Vae::Wan {
                    base: c.int_or("base_dim", 4096, 96)?,
                    res_blocks: c.int_or("num_res_blocks", 8, 2)?,
                    latent: c.int_or("z_dim", 64, 16)?,
                    temporal_up: td.into_iter().rev().collect(),
                    mult,
                })
            }
            "AutoencoderKLQwenImage" => {
                let mult = c.ints("dim_mult", 16)?;
                let n = mult.len().saturating_sub(1);
                Ok(Vae::Wan { base: c.int_or("base_dim", 4096, 96)?, res_blocks: c.int_or("num_res_blocks", 8, 2)?, latent: c.int_or("z_dim", 64, 16)?, temporal_up: vec![false; n], mult })
            }
            "AutoencoderKLHunyuanVideo" => {
                let ch = c.ints("block_out_channels", MAX_WIDTH)?;
                let base = ch[0];
                if ch.iter().any(|x| x % base != 0) {
                    return Err(format!("{}.block_out_channels: every width must be a multiple of the first", c.what));
                }
                let tc = c.int_or("temporal_compression_ratio", 16, 4)?;
                if !tc.is_power_of_two() || tc.trailing_zeros() as usize >= ch.len() {
                    return Err(format!("{}.temporal_compression_ratio: {tc} must be a power of two below 2^{}", c.what, ch.len()));
                }
                let ups = tc.trailing_zeros() as usize;
                // Decoder order (deep to shallow): the first `ups` upsamplings are temporal too.
                let temporal_up = (0..ch.len() - 1).map(|i| i < ups).collect();
                Ok(Vae::Wan { base, mult: ch.iter().map(|x| x / base).collect(), res_blocks: c.int_or("layers_per_block", 8, 2)?, latent: c.int_or("latent_channels", 64, 16)?, temporal_up })
            }
            "AutoencoderDC" => Ok(Vae::Dc(DcAe::parse(c)?)),
            other => Err(format!("{}._class_name: '{other}' cannot be built (AutoencoderKL, AutoencoderKLFlux2, AutoencoderKLWan, AutoencoderKLQwenImage, AutoencoderKLHunyuanVideo, AutoencoderDC can)", c.what)),
        }
    }

    /// Latent channels.
    pub fn latent_channels(&self) -> u64 {
        match self {
            Vae::Kl { latent, .. } | Vae::Wan { latent, .. } => *latent,
            Vae::Dc(d) => d.latent,
        }
    }

    /// Pixels per latent pixel: 8 for the AutoencoderKL and Wan families (three 2x
    /// downsamplings), 2 ^ (stages - 1) for a DC-AE (32 for Sana's).
    pub fn spatial_factor(&self) -> u64 {
        match self {
            Vae::Dc(d) => d.spatial_factor(),
            _ => super::VAE_FACTOR,
        }
    }

    /// Temporal compression of a video VAE (1 for an image VAE).
    pub fn temporal_factor(&self) -> u64 {
        match self {
            Vae::Kl { .. } | Vae::Dc(_) => 1,
            Vae::Wan { temporal_up, .. } => 1 << temporal_up.iter().filter(|t| **t).count(),
        }
    }

    /// Emits the decoder for `b` latents of `frames` latent frames of h x w; returns the bytes
    /// of its largest activation (the output-resolution feature map), for the memory estimate.
    pub fn build(&self, e: &mut Emit, b: u64, frames: u64, h: u64, w: u64) -> u64 {
        match self {
            Vae::Dc(d) => d.build_decoder(e, b * frames, h, w),
            Vae::Kl { channels, layers, latent, post_quant } => {
                let rev: Vec<u64> = channels.iter().rev().copied().collect();
                let bf = b * frames;
                if *post_quant {
                    e.conv("post_quant_conv", bf, *latent, *latent, h, w, 1, 1, 1);
                }
                e.conv("conv_in", bf, *latent, rev[0], h, w, 3, 1, 1);
                vae_mid(e, bf, rev[0], h, w);
                let (mut rh, mut rw) = (h, w);
                let mut prev = rev[0];
                for (i, &c) in rev.iter().enumerate() {
                    for j in 0..=*layers {
                        resnet(e, &format!("up{i}.resnet{j}"), bf, if j == 0 { prev } else { c }, c, rh, rw, 0);
                    }
                    prev = c;
                    if i + 1 < rev.len() {
                        rh *= 2;
                        rw *= 2;
                        e.vector(&format!("up{i}.upsample.nearest"), VectorKind::Elementwise, bf * rh * rw, c, OpClass::Conv, 1);
                        e.conv(&format!("up{i}.upsample.conv"), bf, c, c, rh, rw, 3, 1, 1);
                    }
                }
                let last = *rev.last().unwrap_or(&128);
                e.group_norm("conv_norm_out", bf, last, rh * rw, 1);
                e.vector("conv_act", VectorKind::Activation, bf * rh * rw, last, OpClass::Conv, 1);
                e.conv("conv_out", bf, last, 3, rh, rw, 3, 1, 1);
                bf * rh * rw * last * e.elem_bytes() * 2
            }
            Vae::Wan { base, mult, res_blocks, latent, temporal_up } => {
                // Decoder widths: the deepest multiple, then the multiples from deep to shallow.
                let mut dims = vec![base * mult.last().copied().unwrap_or(1)];
                dims.extend(mult.iter().rev().map(|m| base * m));
                let mut f = frames;
                e.conv("conv_in", b * f, *latent * 3, dims[0], h, w, 3, 1, 1);
                vae_mid(e, b * f, dims[0], h, w);
                let (mut rh, mut rw) = (h, w);
                let stages = dims.len() - 1;
                let mut largest = 0;
                for i in 0..stages {
                    let (cin, cout) = (dims[i], dims[i + 1]);
                    for j in 0..=*res_blocks {
                        let ci = if j == 0 { cin } else { cout };
                        wan_res(e, &format!("up{i}.res{j}"), b * f, ci, cout, rh, rw, 1);
                    }
                    largest = largest.max(b * f * rh * rw * cout * e.elem_bytes());
                    if i + 1 < stages {
                        if temporal_up.get(i).copied().unwrap_or(false) {
                            e.conv(&format!("up{i}.time_conv"), b * f, cout * 3, cout * 2, rh, rw, 1, 1, 1);
                            // Decoded one latent frame at a time (diffusers' AutoencoderKLWan keeps a
                            // causal feature cache): each chunk doubles its frames per upsampling.
                            f *= 2;
                        }
                        rh *= 2;
                        rw *= 2;
                        e.conv(&format!("up{i}.resample"), b * f, cout, cout / 2, rh, rw, 3, 1, 1);
                        dims[i + 1] = cout / 2;
                    }
                }
                let last = dims[stages];
                e.norm("head.norm", VectorKind::RmsNorm, b * f * rh * rw, last, 1);
                e.vector("head.act", VectorKind::Activation, b * f * rh * rw, last, OpClass::Conv, 1);
                e.conv("head.conv", b * f, last * 3, 3, rh, rw, 3, 1, 1);
                largest.max(b * f * rh * rw * last * e.elem_bytes()) * 2
            }
        }
    }
}

impl Vae {
    /// Emits the encoder (pixels -> latent) for `b` samples of `frames` frames of h x w pixels
    /// (training encodes its images or videos each step): for an `AutoencoderKL`, conv_in, the
    /// down blocks (resnets, then a stride-2 convolution except after the last), the mid block
    /// and the output convolution to mean and log-variance; for the Wan video VAE, its causal
    /// encoder chunk by chunk (`wan_encoder_chunk`).
    pub fn build_encoder(&self, e: &mut Emit, b: u64, frames: u64, h: u64, w: u64) -> Result<(), String> {
        let (channels, layers, latent, post_quant) = match self {
            Vae::Dc(d) => {
                if frames != 1 {
                    return Err(format!("frames: {frames} given to an image VAE (it encodes 1 frame)"));
                }
                d.build_encoder(e, b, h, w);
                return Ok(());
            }
            Vae::Kl { channels, layers, latent, post_quant } => (channels, layers, latent, post_quant),
            Vae::Wan { base, mult, res_blocks, latent, temporal_up } => {
                // The first frame alone, then chunks of 2^k frames (k temporal downsamplings),
                // each chunk becoming one latent frame.
                let down: Vec<bool> = temporal_up.iter().rev().copied().collect();
                let tf = self.temporal_factor();
                let chunks = (frames.max(1) - 1) / tf;
                wan_encoder_chunk(e, "first.", b, 1, h, w, *base, mult, *res_blocks, *latent, &down, 1);
                if chunks > 0 {
                    wan_encoder_chunk(e, "chunk.", b, tf, h, w, *base, mult, *res_blocks, *latent, &down, chunks);
                }
                return Ok(());
            }
        };
        if frames != 1 {
            return Err(format!("frames: {frames} given to an image VAE (it encodes 1 frame)"));
        }
        e.conv("conv_in", b, 3, channels[0], h, w, 3, 1, 1);
        let (mut rh, mut rw) = (h, w);
        let mut prev = channels[0];
        for (i, &c) in channels.iter().enumerate() {
            for j in 0..*layers {
                resnet(e, &format!("down{i}.resnet{j}"), b, if j == 0 { prev } else { c }, c, rh, rw, 0);
            }
            prev = c;
            if i + 1 < channels.len() {
                e.conv(&format!("down{i}.downsample"), b, c, c, rh, rw, 3, 2, 1);
                rh = rh.div_ceil(2);
                rw = rw.div_ceil(2);
            }
        }
        vae_mid(e, b, prev, rh, rw);
        e.group_norm("conv_norm_out", b, prev, rh * rw, 1);
        e.vector("conv_act", VectorKind::Activation, b * rh * rw, prev, OpClass::Conv, 1);
        e.conv("conv_out", b, prev, 2 * latent, rh, rw, 3, 1, 1);
        if *post_quant {
            e.conv("quant_conv", b, 2 * latent, 2 * latent, rh, rw, 1, 1, 1);
        }
        Ok(())
    }
}

/// The mid block: a resnet, a single-head self-attention over the pixels, a resnet.
fn vae_mid(e: &mut Emit, bf: u64, c: u64, h: u64, w: u64) {
    let px = h * w;
    resnet(e, "mid.resnet0", bf, c, c, h, w, 0);
    e.group_norm("mid.attn.norm", bf, c, px, 1);
    e.linear("mid.attn.to_qkv", bf * px, 3 * c, c, Epilogue::Bias, OpClass::Attention, 1);
    e.attention("mid.attn.core", bf, 1, px, px, c, false, 1);
    e.linear("mid.attn.to_out", bf * px, c, c, Epilogue::ResidualAdd, OpClass::Attention, 1);
    resnet(e, "mid.resnet1", bf, c, c, h, w, 0);
}

/// A Wan residual block: norm, SiLU, causal 3x3x3 conv, twice, and a 1x1x1 shortcut, run
/// `repeat` times (once per chunk of the same size).
#[allow(clippy::too_many_arguments)]
fn wan_res(e: &mut Emit, name: &str, bf: u64, cin: u64, cout: u64, h: u64, w: u64, repeat: u64) {
    let px = h * w;
    e.norm(&format!("{name}.norm1"), VectorKind::RmsNorm, bf * px, cin, repeat);
    e.vector(&format!("{name}.act1"), VectorKind::Activation, bf * px, cin, OpClass::Conv, repeat);
    e.conv(&format!("{name}.conv1"), bf, cin * 3, cout, h, w, 3, 1, repeat);
    e.norm(&format!("{name}.norm2"), VectorKind::RmsNorm, bf * px, cout, repeat);
    e.vector(&format!("{name}.act2"), VectorKind::Activation, bf * px, cout, OpClass::Conv, repeat);
    e.conv(&format!("{name}.conv2"), bf, cout * 3, cout, h, w, 3, 1, repeat);
    if cin != cout {
        e.conv(&format!("{name}.shortcut"), bf, cin, cout, h, w, 1, 1, repeat);
    }
}

/// One chunk of the Wan encoder: `f` pixel frames of h x w (1 for the first chunk, 4 after it,
/// as diffusers' `AutoencoderKLWan._encode` feeds it), run `repeat` times. Widths `base x
/// [1, mult...]`; each stage's residual blocks, then a stride-2 convolution (and, where the
/// config downsamples in time, a causal time convolution of stride 2 that halves the chunk's
/// frames); the mid block; the head to mean and log-variance; the 1x1x1 quant convolution.
#[allow(clippy::too_many_arguments)]
fn wan_encoder_chunk(e: &mut Emit, p: &str, b: u64, f: u64, h: u64, w: u64, base: u64, mult: &[u64], res_blocks: u64, latent: u64, temporal_down: &[bool], repeat: u64) {
    let mut dims = vec![base];
    dims.extend(mult.iter().map(|m| base * m));
    let mut f = f;
    let (mut rh, mut rw) = (h, w);
    e.conv(&format!("{p}conv_in"), b * f, 3 * 3, dims[0], rh, rw, 3, 1, repeat);
    for i in 0..mult.len() {
        let (cin, cout) = (dims[i], dims[i + 1]);
        for j in 0..res_blocks {
            wan_res(e, &format!("{p}down{i}.res{j}"), b * f, if j == 0 { cin } else { cout }, cout, rh, rw, repeat);
        }
        if i + 1 < mult.len() {
            rh = rh.div_ceil(2);
            rw = rw.div_ceil(2);
            e.conv(&format!("{p}down{i}.resample"), b * f, cout, cout, rh * 2, rw * 2, 3, 2, repeat);
            if temporal_down.get(i).copied().unwrap_or(false) && f > 1 {
                e.conv(&format!("{p}down{i}.time_conv"), b * (f / 2), cout * 3, cout, rh, rw, 1, 1, repeat);
                f /= 2;
            }
        }
    }
    let c = *dims.last().unwrap_or(&base);
    let px = rh * rw;
    wan_res(e, &format!("{p}mid.res0"), b * f, c, c, rh, rw, repeat);
    e.norm(&format!("{p}mid.attn.norm"), VectorKind::RmsNorm, b * f * px, c, repeat);
    e.linear(&format!("{p}mid.attn.to_qkv"), b * f * px, 3 * c, c, Epilogue::Bias, OpClass::Attention, repeat);
    e.attention(&format!("{p}mid.attn.core"), b * f, 1, px, px, c, false, repeat);
    e.linear(&format!("{p}mid.attn.proj"), b * f * px, c, c, Epilogue::ResidualAdd, OpClass::Attention, repeat);
    wan_res(e, &format!("{p}mid.res1"), b * f, c, c, rh, rw, repeat);
    e.norm(&format!("{p}head.norm"), VectorKind::RmsNorm, b * f * px, c, repeat);
    e.vector(&format!("{p}head.act"), VectorKind::Activation, b * f * px, c, OpClass::Conv, repeat);
    e.conv(&format!("{p}head.conv"), b * f, c * 3, 2 * latent, rh, rw, 3, 1, repeat);
    e.conv(&format!("{p}quant_conv"), b * f, 2 * latent, 2 * latent, rh, rw, 1, 1, repeat);
}

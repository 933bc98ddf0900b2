//! Diffusion pipelines built in code from diffusers `config.json` files: text encoders (CLIP,
//! OpenCLIP, T5/UMT5, decoder-only LLMs), the denoiser (UNet2DConditionModel or a DiT: SD3
//! MMDiT, Flux / FLUX.1-Kontext, Wan2.1 / Wan2.2, Qwen-Image(-Edit), FLUX.2, HiDream, Sana,
//! HunyuanVideo) and the VAE decoder, each an operator list for a given batch and latent size.
//!
//! Two-expert pipelines (Wan2.2-A14B): `"denoiser_2"` names the low-noise expert and
//! `"boundary_ratio"` the timestep fraction below which it runs (diffusers' `WanPipeline`:
//! `transformer` while t >= boundary_ratio x 1000, then `transformer_2`); both are held in
//! memory for the whole call. Reference-image pipelines (FLUX.1-Kontext, Qwen-Image-Edit)
//! carry `defaults.reference_images`: each reference image is VAE-encoded once and its tokens
//! join the denoiser's sequence.
//!
//! Why from configs and not hand-written graphs: the shapes of every block follow from a
//! handful of config fields, so a new checkpoint (or a pasted config) is one JSON file, and the
//! hand-written SD 1.5 graph becomes a check that the builder wires blocks as diffusers does.
//!
//! A pipeline is `{"format": "tunelab-pipeline", "name", "text_encoders": [{"path" | "config",
//! "max_tokens"}], "denoiser": path | config, "vae": path | config, "defaults": {...}}`; `path`
//! names a bundled component (`assets/models/diffusers/<pipeline>/<component>/config.json`).

mod bundled;
pub mod cfg;
pub mod dit;
pub mod dit_more;
pub mod emit;
pub mod encoders;
pub mod lora;
pub mod tome;
pub mod unet;
pub mod vae;
pub mod vae_dc;

pub use bundled::{bundled_pipeline_ids, bundled_pipeline_info, bundled_pipeline_json, component_config, pipeline_approximations};
pub use dit::{Dit, DitKind, SeqParallel};
pub use emit::{Emit, EmitOptions};
pub use encoders::TextEncoder;
pub use tome::Tome;
pub use unet::Unet;
pub use vae::Vae;

use crate::workload::GraphOp;
use cfg::Cfg;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Largest image side in pixels, and largest frame count, accepted.
pub const MAX_SIDE: u64 = 8192;
pub const MAX_FRAMES: u64 = 1024;
/// Pixels per latent pixel of the AutoencoderKL and Wan VAEs (three 2x downsamplings); a DC-AE
/// has its own (`Vae::spatial_factor`: 32 for Sana's).
pub const VAE_FACTOR: u64 = 8;
/// Most reference images a call conditions on.
pub const MAX_REFERENCE_IMAGES: u64 = 8;

/// The denoising network.
#[derive(Clone, Debug, PartialEq)]
pub enum Denoiser {
    Unet(Unet),
    Dit(Dit),
}

/// A pipeline's defaults (its `__call__` defaults).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Defaults {
    pub height: u64,
    pub width: u64,
    pub frames: u64,
    pub steps: u64,
    pub cfg: bool,
    /// Reference images the call conditions on (FLUX.1-Kontext, Qwen-Image-Edit: 1).
    #[serde(default)]
    pub reference_images: u64,
    /// The flow-matching scheduler's timestep shift (`flow_shift` / `shift`; 1: none), which
    /// decides how many steps fall on each side of a two-expert boundary.
    #[serde(default = "one")]
    pub flow_shift: f64,
    /// The side (pixels) whose square area each reference image is resized to before it is
    /// VAE-encoded, whatever the output's size (diffusers' QwenImageEditPipeline and DiffSynth's
    /// `edit_image_auto_resize`: 1024 x 1024's area; FluxKontextPipeline: its ~1024 x 1024
    /// preferred resolutions). None: the reference is the output's size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_side: Option<u64>,
}

fn one() -> f64 {
    1.0
}

/// One text encoder and the prompt length it runs at.
#[derive(Clone, Debug, PartialEq)]
pub struct EncoderSlot {
    pub name: String,
    pub encoder: TextEncoder,
    pub tokens: u64,
}

/// A parsed pipeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Pipeline {
    pub name: String,
    pub text_encoders: Vec<EncoderSlot>,
    pub denoiser: Denoiser,
    /// The low-noise expert of a two-expert pipeline (Wan2.2-A14B), and the boundary (a
    /// fraction of the 1000 training timesteps) where it takes over.
    pub denoiser_2: Option<Denoiser>,
    pub boundary_ratio: f64,
    pub vae: Vae,
    /// The VAE config's `force_upcast` (SDXL): the diffusers pipeline decodes in fp32.
    pub vae_upcast: bool,
    pub defaults: Defaults,
}

/// The latent a request becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Latent {
    /// Latent frames (1 for an image).
    pub frames: u64,
    pub h: u64,
    pub w: u64,
    /// Denoiser tokens per sample (DiT patches; UNet: latent pixels).
    pub tokens: u64,
    /// Text tokens the denoiser attends to (the concatenated prompts of its encoders).
    pub text_tokens: u64,
    /// Reference-image tokens joining the sequence (reference images x tokens per image).
    #[serde(default)]
    pub ref_tokens: u64,
}

/// The operators of one component for one call, with what the memory estimate needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Component {
    pub ops: Vec<GraphOp>,
    /// Weight parameters.
    pub weights: u64,
    /// Activation bytes held beyond one operator's working set (UNet skips, VAE feature maps).
    pub held_bytes: u64,
}

impl Pipeline {
    /// A bundled pipeline by id, or a pipeline JSON (object text).
    pub fn load(id_or_json: &str) -> Result<Pipeline, String> {
        let t = id_or_json.trim();
        let text = if t.starts_with('{') {
            t.to_string()
        } else {
            bundled_pipeline_json(t).ok_or_else(|| format!("no bundled diffusion pipeline '{}' (have: {})", clip(t), bundled_pipeline_ids().join(", ")))?
        };
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("pipeline JSON does not parse: {e}"))?;
        Pipeline::from_value(&v)
    }

    /// Parses a pipeline object; every error names the field.
    pub fn from_value(v: &Value) -> Result<Pipeline, String> {
        let obj = v.as_object().ok_or("pipeline: must be a JSON object")?;
        let comp = |field: &str, x: Option<&Value>| -> Result<Value, String> {
            match x {
                Some(Value::String(p)) => component_config(p).ok_or_else(|| format!("{field}: no bundled component '{}'", clip(p))),
                Some(o @ Value::Object(m)) if m.contains_key("path") && !m.contains_key("config") => {
                    let p = o.get("path").and_then(|p| p.as_str()).unwrap_or("");
                    component_config(p).ok_or_else(|| format!("{field}.path: no bundled component '{}'", clip(p)))
                }
                Some(Value::Object(m)) if m.contains_key("config") => Ok(m["config"].clone()),
                Some(o @ Value::Object(_)) => Ok(o.clone()),
                _ => Err(format!("{field}: missing (a bundled component path or a diffusers config object)")),
            }
        };
        let parse_den = |field: &str, x: Option<&Value>| -> Result<Denoiser, String> {
            let den_v = comp(field, x)?;
            let den_c = Cfg::new(field, &den_v)?;
            Ok(match den_c.str("_class_name") {
                Some("UNet2DConditionModel") => Denoiser::Unet(Unet::parse(&den_c)?),
                _ => Denoiser::Dit(Dit::parse(&den_c)?),
            })
        };
        let denoiser = parse_den("denoiser", obj.get("denoiser"))?;
        let denoiser_2 = match obj.get("denoiser_2") {
            None | Some(Value::Null) => None,
            x => Some(parse_den("denoiser_2", x)?),
        };
        let boundary_ratio = match (obj.get("boundary_ratio"), &denoiser_2) {
            (None | Some(Value::Null), None) => 0.0,
            (None | Some(Value::Null), Some(_)) => return Err("boundary_ratio: a pipeline with denoiser_2 needs the timestep fraction where it takes over (0 < boundary_ratio < 1)".into()),
            (Some(_), None) => return Err("boundary_ratio: given without denoiser_2 (the second expert)".into()),
            (Some(x), Some(_)) => x.as_f64().filter(|r| *r > 0.0 && *r < 1.0).ok_or_else(|| format!("boundary_ratio: {} is not a fraction in (0, 1)", clip(&x.to_string())))?,
        };
        if let (Denoiser::Dit(a), Some(Denoiser::Dit(b))) = (&denoiser, &denoiser_2) {
            if (a.patch, a.in_channels) != (b.patch, b.in_channels) {
                return Err("denoiser_2: its patch and input channels must equal the denoiser's (both experts denoise the same latent)".into());
            }
        } else if denoiser_2.is_some() {
            return Err("denoiser_2: both experts must be DiTs".into());
        }
        let vae_v = comp("vae", obj.get("vae"))?;
        let vae = Vae::parse(&Cfg::new("vae", &vae_v)?)?;
        let vae_upcast = vae_v.get("force_upcast").and_then(|x| x.as_bool()).unwrap_or(false);
        let tes = obj.get("text_encoders").and_then(|t| t.as_array()).ok_or("text_encoders: missing or not a list")?;
        if tes.is_empty() || tes.len() > 4 {
            return Err("text_encoders: list 1 to 4 encoders".into());
        }
        let mut text_encoders = Vec::new();
        for (i, t) in tes.iter().enumerate() {
            let field = format!("text_encoders[{i}]");
            let cv = comp(&field, Some(t))?;
            let encoder = TextEncoder::parse(&Cfg::new(&field, &cv)?)?;
            let tokens = t.get("max_tokens").map(|x| x.as_u64().filter(|n| (1..=4096).contains(n)).ok_or_else(|| format!("{field}.max_tokens: must be an integer in 1..=4096"))).transpose()?.unwrap_or(77);
            // The pipeline's own component name ("text_encoder_4") when the slot borrows a
            // component bundled under another name.
            let name = t.get("name").and_then(|n| n.as_str()).filter(|n| !n.is_empty() && n.len() <= 40).or_else(|| t.get("path").and_then(|p| p.as_str())).and_then(|p| p.rsplit('/').next()).unwrap_or(if i == 0 { "text_encoder" } else { "text_encoder_n" }).to_string();
            text_encoders.push(EncoderSlot { name, encoder, tokens });
        }
        let d = obj.get("defaults").cloned().unwrap_or(Value::Null);
        let int = |k: &str, def: u64| d.get(k).and_then(|x| x.as_u64()).unwrap_or(def);
        let flow_shift = match d.get("flow_shift") {
            None | Some(Value::Null) => 1.0,
            Some(x) => x.as_f64().filter(|f| f.is_finite() && *f > 0.0 && *f <= 100.0).ok_or_else(|| format!("defaults.flow_shift: {} is not a shift in (0, 100]", clip(&x.to_string())))?,
        };
        let reference_images = match d.get("reference_images") {
            None | Some(Value::Null) => 0,
            Some(x) => x.as_u64().filter(|n| *n <= MAX_REFERENCE_IMAGES).ok_or_else(|| format!("defaults.reference_images: {} is not a count in 0..={MAX_REFERENCE_IMAGES}", clip(&x.to_string())))?,
        };
        let reference_side = match d.get("reference_side") {
            None | Some(Value::Null) => None,
            Some(x) => Some(x.as_u64().filter(|n| (1..=MAX_SIDE).contains(n)).ok_or_else(|| format!("defaults.reference_side: {} is not a side in 1..={MAX_SIDE} pixels", clip(&x.to_string())))?),
        };
        let defaults = Defaults { height: int("height", 512), width: int("width", 512), frames: int("frames", 1), steps: int("steps", 50), cfg: d.get("cfg").and_then(|x| x.as_bool()).unwrap_or(true), reference_images, flow_shift, reference_side };
        let name = obj.get("name").and_then(|n| n.as_str()).unwrap_or("custom pipeline").to_string();
        let p = Pipeline { name, text_encoders, denoiser, denoiser_2, boundary_ratio, vae, vae_upcast, defaults };
        p.latent(defaults.height, defaults.width, defaults.frames).map_err(|e| format!("defaults: {e}"))?;
        Ok(p)
    }

    /// Whether the pipeline makes videos (a temporal VAE).
    pub fn is_video(&self) -> bool {
        self.vae.temporal_factor() > 1
    }

    /// The image side must be a multiple of this (VAE factor x the denoiser's own factor).
    pub fn side_multiple(&self) -> u64 {
        self.vae.spatial_factor() * match &self.denoiser {
            Denoiser::Unet(u) => 1u64 << u.downsamples(),
            Denoiser::Dit(d) => d.patch,
        }
    }

    /// The latent of a request; errors name the field (`height`, `width`, `frames`).
    pub fn latent(&self, height: u64, width: u64, frames: u64) -> Result<Latent, String> {
        let m = self.side_multiple();
        for (field, v) in [("height", height), ("width", width)] {
            if v == 0 || v > MAX_SIDE {
                return Err(format!("{field}: {v} is out of range (1..={MAX_SIDE} pixels)"));
            }
            if v % m != 0 {
                return Err(format!("{field}: {v} is not a multiple of {m} (the VAE's factor {} x the denoiser's {})", self.vae.spatial_factor(), m / self.vae.spatial_factor()));
            }
        }
        let tf = self.vae.temporal_factor();
        let lf = if tf == 1 {
            if frames != 1 {
                return Err(format!("frames: {frames} given to an image pipeline (it makes 1 frame)"));
            }
            1
        } else {
            if frames == 0 || frames > MAX_FRAMES || (frames - 1) % tf != 0 {
                return Err(format!("frames: {frames} must be 1 + a multiple of {tf} (the VAE's temporal factor), at most {MAX_FRAMES}"));
            }
            (frames - 1) / tf + 1
        };
        let (h, w) = (height / self.vae.spatial_factor(), width / self.vae.spatial_factor());
        let tokens = match &self.denoiser {
            Denoiser::Unet(_) => h * w,
            Denoiser::Dit(d) => lf * (h / d.patch) * (w / d.patch),
        };
        let text_tokens = match &self.denoiser {
            // SD3 concatenates CLIP (77, its two CLIPs sharing the positions) and T5 tokens into
            // the joint sequence; Flux, HiDream, HunyuanVideo and the LLM-encoded families attend
            // to their T5 / LLM tokens (CLIP gives a pooled vector); a UNet cross-attends to the
            // CLIP tokens, Wan to its UMT5 tokens.
            Denoiser::Dit(d) if d.kind != DitKind::Wan => {
                let seq: u64 = self.text_encoders.iter().filter(|s| matches!(s.encoder, TextEncoder::T5 { .. } | TextEncoder::Llm { .. })).map(|s| s.tokens).sum();
                if d.kind == DitKind::Sd3 { 77 + seq } else { seq.max(1) }
            }
            _ => self.text_encoders.iter().map(|s| s.tokens).max().unwrap_or(77),
        };
        Ok(Latent { frames: lf, h, w, tokens, text_tokens, ref_tokens: 0 })
    }

    /// `latent` with `refs` reference images of the output's size joining the sequence
    /// (FLUX.1-Kontext, Qwen-Image-Edit); errors name `reference_images`.
    pub fn latent_with_references(&self, height: u64, width: u64, frames: u64, refs: u64) -> Result<Latent, String> {
        let mut l = self.latent(height, width, frames)?;
        if refs > MAX_REFERENCE_IMAGES {
            return Err(format!("reference_images: {refs} is out of range (0..={MAX_REFERENCE_IMAGES})"));
        }
        if refs > 0 {
            match &self.denoiser {
                Denoiser::Dit(d) if matches!(d.kind, DitKind::Flux | DitKind::Flux2 | DitKind::QwenImage) && !self.is_video() => {}
                _ => return Err("reference_images: this pipeline's denoiser takes no reference-image tokens (FLUX.1-Kontext, FLUX.2 and Qwen-Image-Edit do)".into()),
            }
        }
        let (rh, rw) = self.reference_size(height, width);
        l.ref_tokens = refs * self.latent(rh, rw, frames)?.tokens;
        Ok(l)
    }

    /// The pixel size each reference image is encoded at for an output of `height` x `width`:
    /// the output's aspect ratio at `defaults.reference_side` squared of area, each side rounded
    /// to the pipeline's multiple (as diffusers' `calculate_dimensions` rounds to 32), or the
    /// output's own size when the pipeline does not resize its references.
    pub fn reference_size(&self, height: u64, width: u64) -> (u64, u64) {
        let Some(side) = self.defaults.reference_side else { return (height, width) };
        let m = self.side_multiple() as f64;
        let scale = (side as f64 * side as f64 / (height as f64 * width as f64)).sqrt();
        let round = |v: u64| (((v as f64 * scale / m).round()).max(1.0) * m).min(MAX_SIDE as f64) as u64;
        (round(height), round(width))
    }

    /// Text encoder `i` over `b` prompts.
    pub fn text_encoder(&self, i: usize, b: u64, o: EmitOptions) -> Component {
        let mut e = Emit::new(o);
        let slot = &self.text_encoders[i];
        slot.encoder.build(&mut e, b, slot.tokens);
        Component { ops: e.ops, weights: e.weights, held_bytes: 0 }
    }

    /// One denoiser forward over `b` latents.
    pub fn denoiser(&self, b: u64, l: &Latent, o: EmitOptions, tome: Tome, sp: SeqParallel) -> Result<Component, String> {
        self.expert(0, b, l, o, tome, sp)
    }

    /// Experts of the denoiser (1, or 2 for a two-expert pipeline).
    pub fn experts(&self) -> usize {
        1 + self.denoiser_2.is_some() as usize
    }

    /// Of `steps` denoising steps, how many the first (high-noise) expert runs: the steps whose
    /// timestep is at or above the boundary, on the flow-matching schedule the pipeline uses
    /// (sigmas spaced evenly from 1 and shifted by `flow_shift`: s' = shift s / (1 + (shift - 1) s)).
    /// All of them for a one-expert pipeline.
    pub fn high_noise_steps(&self, steps: u64) -> u64 {
        if self.denoiser_2.is_none() {
            return steps;
        }
        let shift = self.defaults.flow_shift;
        (0..steps).filter(|i| {
            let s = 1.0 - *i as f64 / steps as f64;
            shift * s / (1.0 + (shift - 1.0) * s) >= self.boundary_ratio
        }).count() as u64
    }

    /// One forward of expert `i` (0: the denoiser, 1: `denoiser_2`) over `b` latents.
    pub fn expert(&self, i: usize, b: u64, l: &Latent, o: EmitOptions, tome: Tome, sp: SeqParallel) -> Result<Component, String> {
        let mut e = Emit::new(o);
        let den = match (i, &self.denoiser_2) {
            (0, _) => &self.denoiser,
            (1, Some(d)) => d,
            _ => return Err(format!("expert {i}: the pipeline has {} expert(s)", self.experts())),
        };
        let held = match den {
            Denoiser::Unet(u) => {
                if sp.degree > 1 {
                    return Err("sequence parallelism splits a DiT's tokens; a UNet runs on one chip (use CFG parallelism or data parallelism)".into());
                }
                u.build(&mut e, b, l.h, l.w, l.text_tokens, &tome)
            }
            Denoiser::Dit(d) => {
                d.build(&mut e, b, l.tokens, l.ref_tokens, l.text_tokens, sp)?;
                0
            }
        };
        Ok(Component { ops: e.ops, weights: e.weights, held_bytes: held })
    }

    /// The VAE decoder over `b` latents, whole or as square tiles of `tile` latent pixels; the
    /// count is how many times the returned operators run (tiles x latent frames of a video).
    pub fn vae_decoder(&self, b: u64, l: &Latent, o: EmitOptions, tile: Option<u64>) -> (Component, u64) {
        let mut e = Emit::new(o);
        let (th, tw, n) = match tile {
            Some(t) if l.h > t || l.w > t => {
                // diffusers' tiled_decode: tiles of t latent pixels, overlapping by a quarter.
                let stride = (t * 3 / 4).max(1);
                let count = |side: u64| if side <= t { 1 } else { (side - t).div_ceil(stride) + 1 };
                (t.min(l.h), t.min(l.w), count(l.h) * count(l.w))
            }
            _ => (l.h, l.w, 1),
        };
        // A video VAE decodes one latent frame per call (see `vae`), so the calls multiply.
        let (frames, calls) = if self.is_video() { (1, l.frames) } else { (l.frames, 1) };
        let held = self.vae.build(&mut e, b, frames, th, tw);
        (Component { ops: e.ops, weights: e.weights, held_bytes: held }, n * calls)
    }

    /// The VAE encoder over `b` reference images of the output's size (`l.h` x `l.w` latent
    /// pixels), as the edit pipelines encode their input image once per call.
    pub fn reference_encoder(&self, b: u64, l: &Latent, o: EmitOptions) -> Result<Component, String> {
        let mut e = Emit::new(o);
        let (rh, rw) = self.reference_size(l.h * self.vae.spatial_factor(), l.w * self.vae.spatial_factor());
        self.vae.build_encoder(&mut e, b, 1, rh, rw)?;
        Ok(Component { ops: e.ops, weights: e.weights, held_bytes: 0 })
    }

    /// What one training sample runs, as a model description (batch 1, family diffusion): the
    /// text encoders and the VAE encoder (of the target and, for an edit pipeline, its
    /// reference images) forward only (named `frozen.*`, so the training step
    /// gives them no backward, gradients or optimizer state), then the denoiser. Sizes are the
    /// sample's `height` x `width` and `frames` (1 for an image; a video's frames are encoded
    /// by the video VAE's encoder and become the denoiser's latent frames).
    pub fn training_model(&self, height: u64, width: u64, frames: u64) -> Result<crate::model::ModelDesc, String> {
        // An edit pipeline (FLUX.1-Kontext, Qwen-Image-Edit) trains on (reference, target)
        // pairs: both are VAE-encoded and the reference's tokens join the sequence.
        let refs = self.defaults.reference_images;
        let l = self.latent_with_references(height, width, frames, refs)?;
        let o = EmitOptions::default();
        let mut ops: Vec<GraphOp> = Vec::new();
        for i in 0..self.text_encoders.len() {
            let c = self.text_encoder(i, 1, o);
            let n = self.text_encoders[i].name.clone();
            ops.extend(c.ops.into_iter().map(|mut g| { g.name = format!("frozen.{n}.{}", g.name); g }));
        }
        let mut e = Emit::new(o);
        let (rh, rw) = self.reference_size(height, width);
        if refs > 0 && (rh, rw) != (height, width) {
            // The references are encoded at their own size, the target at its own.
            self.vae.build_encoder(&mut e, 1, frames, height, width)?;
            self.vae.build_encoder(&mut e, refs, frames, rh, rw)?;
        } else {
            self.vae.build_encoder(&mut e, 1 + refs, frames, height, width)?;
        }
        ops.extend(e.ops.into_iter().map(|mut g| { g.name = format!("frozen.vae_encoder.{}", g.name); g }));
        ops.extend(self.denoiser(1, &l, o, Tome::none(), SeqParallel { degree: 1, ring: false })?.ops);
        let graph = ops.into_iter().map(|g| crate::model::GraphOpDesc { name: g.name, op: g.op, repeat: g.repeat, class: Some(g.class), weights: None }).collect();
        let mut size = if self.is_video() { format!("{frames} frames of {height}x{width}") } else { format!("{height}x{width}") };
        if refs > 0 {
            size.push_str(&format!(", {refs} reference image{} at {rh}x{rw}", if refs > 1 { "s" } else { "" }));
        }
        if self.denoiser_2.is_some() {
            // Wan2.2's trainers (DiffSynth-Studio, musubi-tuner) fine-tune one expert per run
            // over its own timestep range; this is the high-noise one (the low-noise expert has
            // the same shape, so its run costs the same per step).
            size.push_str(", one expert");
        }
        Ok(crate::model::ModelDesc { name: format!("{} (training at {size})", self.name), family: crate::model::ModelFamily::Diffusion, dtype: crate::dtype::DType::Bf16, llm: None, vision: None, graph })
    }

    /// The denoiser's operators for one sample as a model description (family diffusion), so
    /// code that reads a `ModelDesc` (hot spots, the model panel) sees the network.
    pub fn denoiser_model(&self, l: &Latent) -> Result<crate::model::ModelDesc, String> {
        let c = self.denoiser(1, l, EmitOptions::default(), Tome::none(), SeqParallel { degree: 1, ring: false })?;
        let graph = c.ops.into_iter().map(|g| crate::model::GraphOpDesc { name: g.name, op: g.op, repeat: g.repeat, class: Some(g.class), weights: None }).collect();
        Ok(crate::model::ModelDesc { name: self.name.clone(), family: crate::model::ModelFamily::Diffusion, dtype: crate::dtype::DType::Fp16, llm: None, vision: None, graph })
    }
}

fn clip(s: &str) -> String {
    s.chars().take(60).collect()
}

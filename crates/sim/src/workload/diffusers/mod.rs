//! Diffusion pipelines built in code from diffusers `config.json` files: text encoders (CLIP,
//! OpenCLIP, T5/UMT5), the denoiser (UNet2DConditionModel or a DiT: SD3 MMDiT, Flux, Wan2.1)
//! and the VAE decoder, each an operator list for a given batch and latent size.
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
pub mod emit;
pub mod encoders;
pub mod tome;
pub mod unet;
pub mod vae;

pub use bundled::{bundled_pipeline_ids, bundled_pipeline_info, bundled_pipeline_json, component_config};
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
/// Pixels per latent pixel of every bundled VAE (three 2x downsamplings).
pub const VAE_FACTOR: u64 = 8;

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
        let den_v = comp("denoiser", obj.get("denoiser"))?;
        let den_c = Cfg::new("denoiser", &den_v)?;
        let denoiser = match den_c.str("_class_name") {
            Some("UNet2DConditionModel") => Denoiser::Unet(Unet::parse(&den_c)?),
            _ => Denoiser::Dit(Dit::parse(&den_c)?),
        };
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
            let name = t.get("path").and_then(|p| p.as_str()).and_then(|p| p.rsplit('/').next()).unwrap_or(if i == 0 { "text_encoder" } else { "text_encoder_n" }).to_string();
            text_encoders.push(EncoderSlot { name, encoder, tokens });
        }
        let d = obj.get("defaults").cloned().unwrap_or(Value::Null);
        let int = |k: &str, def: u64| d.get(k).and_then(|x| x.as_u64()).unwrap_or(def);
        let defaults = Defaults { height: int("height", 512), width: int("width", 512), frames: int("frames", 1), steps: int("steps", 50), cfg: d.get("cfg").and_then(|x| x.as_bool()).unwrap_or(true) };
        let name = obj.get("name").and_then(|n| n.as_str()).unwrap_or("custom pipeline").to_string();
        let p = Pipeline { name, text_encoders, denoiser, vae, vae_upcast, defaults };
        p.latent(defaults.height, defaults.width, defaults.frames).map_err(|e| format!("defaults: {e}"))?;
        Ok(p)
    }

    /// Whether the pipeline makes videos (a temporal VAE).
    pub fn is_video(&self) -> bool {
        self.vae.temporal_factor() > 1
    }

    /// The image side must be a multiple of this (VAE factor x the denoiser's own factor).
    pub fn side_multiple(&self) -> u64 {
        VAE_FACTOR * match &self.denoiser {
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
                return Err(format!("{field}: {v} is not a multiple of {m} (the VAE's factor {VAE_FACTOR} x the denoiser's {})", m / VAE_FACTOR));
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
        let (h, w) = (height / VAE_FACTOR, width / VAE_FACTOR);
        let tokens = match &self.denoiser {
            Denoiser::Unet(_) => h * w,
            Denoiser::Dit(d) => lf * (h / d.patch) * (w / d.patch),
        };
        let text_tokens = match &self.denoiser {
            // SD3 and Flux concatenate CLIP (77) and T5 tokens into the joint sequence; SD3's two
            // CLIPs share the 77 positions; a UNet cross-attends to the CLIP tokens.
            Denoiser::Dit(d) if d.kind != DitKind::Wan => {
                let t5: u64 = self.text_encoders.iter().filter(|s| matches!(s.encoder, TextEncoder::T5 { .. })).map(|s| s.tokens).sum();
                if d.kind == DitKind::Flux { t5.max(1) } else { 77 + t5 }
            }
            _ => self.text_encoders.iter().map(|s| s.tokens).max().unwrap_or(77),
        };
        Ok(Latent { frames: lf, h, w, tokens, text_tokens })
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
        let mut e = Emit::new(o);
        let held = match &self.denoiser {
            Denoiser::Unet(u) => {
                if sp.degree > 1 {
                    return Err("sequence parallelism splits a DiT's tokens; a UNet runs on one chip (use CFG parallelism or data parallelism)".into());
                }
                u.build(&mut e, b, l.h, l.w, l.text_tokens, &tome)
            }
            Denoiser::Dit(d) => {
                d.build(&mut e, b, l.tokens, l.text_tokens, sp)?;
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

    /// What one training sample runs, as a model description (batch 1, family diffusion): the
    /// text encoders and the VAE encoder forward only (named `frozen.*`, so the training step
    /// gives them no backward, gradients or optimizer state), then the denoiser. Sizes are the
    /// sample's `height` x `width` and `frames` (1 for an image; a video's frames are encoded
    /// by the video VAE's encoder and become the denoiser's latent frames).
    pub fn training_model(&self, height: u64, width: u64, frames: u64) -> Result<crate::model::ModelDesc, String> {
        let l = self.latent(height, width, frames)?;
        let o = EmitOptions::default();
        let mut ops: Vec<GraphOp> = Vec::new();
        for i in 0..self.text_encoders.len() {
            let c = self.text_encoder(i, 1, o);
            let n = self.text_encoders[i].name.clone();
            ops.extend(c.ops.into_iter().map(|mut g| { g.name = format!("frozen.{n}.{}", g.name); g }));
        }
        let mut e = Emit::new(o);
        self.vae.build_encoder(&mut e, 1, frames, height, width)?;
        ops.extend(e.ops.into_iter().map(|mut g| { g.name = format!("frozen.vae_encoder.{}", g.name); g }));
        ops.extend(self.denoiser(1, &l, o, Tome::none(), SeqParallel { degree: 1, ring: false })?.ops);
        let graph = ops.into_iter().map(|g| crate::model::GraphOpDesc { name: g.name, op: g.op, repeat: g.repeat, class: Some(g.class), weights: None }).collect();
        let size = if self.is_video() { format!("{frames} frames of {height}x{width}") } else { format!("{height}x{width}") };
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

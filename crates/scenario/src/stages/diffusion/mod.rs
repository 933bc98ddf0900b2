//! The diffusion stage: a text-to-image or text-to-video pipeline (text encoders, denoising
//! steps with classifier-free guidance, VAE decoder) priced end to end on the chip, with the
//! pipeline's usual optimisations as the search space: steps, precision, fused attention, token
//! merging, launch mode of the denoiser and of the VAE (eager or compiled graph; the text encoders
//! keep the framework's own), text-encoder caching, step caching
//! (DeepCache / AttentionCache), CFG parallelism, sequence parallelism (Ulysses or ring) and
//! the VAE's mode and precision.
//!
//! Quality is not simulated. Knobs that change the output (fewer steps, W8A8, ToMe, step
//! caching) are counted in the metric `output_changing_knobs`, so `constraints.limits` can ask
//! for exact configurations only; W8A8 keeps the protected layers (first and last layers,
//! timestep embedding) in 16-bit, and `rel_error` is the delta check's expected relative error
//! of the data types used (the device model's estimate, not a measured output difference).

pub mod constants;
pub mod guard;
pub mod price;
pub mod timeline;

use crate::scenario::{ModelRef, Scenario};
use crate::spec::diffusion::DiffusionOptions;
use crate::stages::StageSetup;
use constants::constants;
use price::{Knobs, Pricer, Priced, Request, VaeMode};
use tunelab_search::{Config, Direction, Metric, Objective, Outcome, Param, Space, Value};
use tunelab_sim::cost::dispatch::LaunchMode;
use tunelab_sim::workload::diffusers::{Denoiser, Pipeline};
use tunelab_sim::{AttentionKind, DType};

/// The stage's parameters, in config order.
pub const PARAMS: [&str; 13] = ["steps", "precision", "attention", "tome", "launch", "text_encoder_cache", "step_cache", "cfg_parallel", "sp", "sp_mode", "vae", "vae_precision", "vae_launch"];

/// The stage's metrics, in objective order (the first is the default goal).
pub const METRICS: [(&str, &str, bool); 8] = [
    ("latency_ms", "ms", false),
    ("images_per_s", "images/s", true),
    ("memory_gib", "GiB", false),
    ("step_ms", "ms", false),
    ("text_encoder_ms", "ms", false),
    ("vae_ms", "ms", false),
    ("rel_error", "", false),
    ("output_changing_knobs", "", false),
];

/// The scenario's pipeline.
pub fn pipeline(s: &Scenario) -> Result<Pipeline, String> {
    match &s.model {
        ModelRef::Id(id) => Pipeline::load(id),
        ModelRef::Inline(j) => Pipeline::from_value(j),
    }
    .map_err(|e| format!("model: {e}"))
}

/// The scenario's options (defaults when absent).
pub fn options(s: &Scenario) -> DiffusionOptions {
    s.diffusion.clone().unwrap_or_default()
}

/// The request against the pipeline: sizes default to the pipeline's; errors name the field.
pub fn request(p: &Pipeline, o: &DiffusionOptions) -> Result<Request, String> {
    let d = p.defaults;
    let frames = o.frames.unwrap_or(d.frames);
    let refs = o.reference_images.unwrap_or(d.reference_images);
    let latent = p.latent_with_references(o.height.unwrap_or(d.height), o.width.unwrap_or(d.width), frames, refs).map_err(|e| format!("diffusion.{e}"))?;
    Ok(Request { batch: o.batch, cfg: o.cfg.unwrap_or(d.cfg), chips: o.chips, latent, fsdp: o.fsdp, lora_rank: o.lora_rank.unwrap_or(0) })
}

/// A pricer for the scenario (pipeline, chip, framework, request).
pub fn pricer(s: &Scenario) -> Result<Pricer, String> {
    let o = options(s);
    o.validate()?;
    let p = pipeline(s)?;
    let req = request(&p, &o)?;
    let device = crate::context::device(s)?;
    let c = constants().clone();
    let fw = c.framework(&o.framework)?.clone();
    Ok(Pricer::new(p, device, fw, c, req))
}

/// The denoiser at the scenario's size as a graph model, and the chip (for `context::resolve`).
pub fn denoiser_model(s: &Scenario) -> Result<(tunelab_sim::model::ModelDesc, tunelab_sim::Device), String> {
    let pr = pricer(s)?;
    Ok((pr.pipe.denoiser_model(&pr.req.latent)?, pr.device))
}

fn supports(d: &tunelab_sim::Device, t: DType) -> bool {
    let op = tunelab_sim::Op::Matmul { batch: 1, m: 64, n: 64, k: 64, dtype: t, weight_dtype: None, epilogue: Default::default() };
    tunelab_sim::cost::estimate(&op, &tunelab_sim::Tiling::Default, d).is_ok()
}

/// Each parameter's levels and default value for this scenario.
pub fn params(pr: &Pricer, s: &Scenario) -> Vec<(Param, Value)> {
    let o = options(s);
    let chip = crate::context::chip_label(s);
    let unet = matches!(pr.pipe.denoiser, Denoiser::Unet(_));
    let steps = o.steps.unwrap_or(pr.pipe.defaults.steps);
    let strs = |v: &[&str]| -> Vec<Value> { v.iter().map(|x| Value::Str(x.to_string())).collect() };
    let own = |v: &[String], d: &[&str]| -> Vec<Value> { if v.is_empty() { strs(d) } else { v.iter().map(|x| Value::Str(x.clone())).collect() } };
    let floats = |v: &[f64], d: &[f64]| -> Vec<Value> { (if v.is_empty() { d } else { v }).iter().map(|x| Value::Float(*x)).collect() };
    let mut steps_l: Vec<u64> = if o.steps_choices.is_empty() { vec![steps] } else { o.steps_choices.clone() };
    steps_l.sort_unstable();
    steps_l.dedup();
    let bf16 = supports(&pr.device, DType::Bf16);
    let prec_default: Vec<&str> = if bf16 { vec!["fp16", "bf16", "w8a8"] } else { vec!["fp16", "w8a8"] };
    let native = if bf16 && !unet { "bf16" } else { "fp16" };
    let aclnn = pr.c.aclnn_flash_chips.iter().any(|c| chip.starts_with(c.as_str()));
    let flash_ok = aclnn || pr.fw.flash_plugin;
    let attn_default: Vec<&str> = if flash_ok { vec!["flash", "unfused"] } else { vec!["unfused"] };
    let dit_sp: Vec<Value> = if unet { vec![Value::Int(1)] } else if o.sequence_parallel.is_empty() {
        (0..7).map(|i| 1u64 << i).filter(|d| *d <= o.chips).map(|d| Value::Int(d as i64)).collect()
    } else {
        o.sequence_parallel.iter().map(|d| Value::Int(*d as i64)).collect()
    };
    let cfg_on = o.cfg.unwrap_or(pr.pipe.defaults.cfg);
    let mut vae_modes: Vec<&str> = vec!["full", "tiled", "sliced"];
    if o.chips > 1 {
        vae_modes.push("parallel");
    }
    vec![
        (Param::categorical("steps", steps_l.iter().map(|x| Value::Int(*x as i64)).collect()), Value::Int(steps as i64)),
        (Param::categorical("precision", own(&o.precisions, &prec_default)), Value::Str(native.into())),
        (Param::categorical("attention", own(&o.attention, &attn_default)), Value::Str(if aclnn { "flash" } else { "unfused" }.into())),
        (Param::categorical("tome", if unet { floats(&o.tome_ratios, &[0.0, 0.3, 0.5]) } else { vec![Value::Float(0.0)] }), Value::Float(0.0)),
        (Param::categorical("launch", strs(&["eager", "graph"])), Value::Str(pr.fw.launch.clone())),
        (Param::categorical("text_encoder_cache", strs(if o.repeated_prompt { &["off", "on"] } else { &["off"] })), Value::Str("off".into())),
        (Param::categorical("step_cache", floats(&o.step_cache_ratios, &[1.0, 1.6, 2.0, 2.4])), Value::Float(1.0)),
        (Param::categorical("cfg_parallel", strs(if cfg_on && o.chips >= 2 { &["off", "on"] } else { &["off"] })), Value::Str("off".into())),
        (Param::categorical("sp", dit_sp), Value::Int(1)),
        (Param::categorical("sp_mode", strs(if !unet && o.chips > 1 { &["ulysses", "ring"] } else { &["ulysses"] })), Value::Str("ulysses".into())),
        (Param::categorical("vae", own(&o.vae_modes, &vae_modes)), Value::Str("full".into())),
        (Param::categorical("vae_precision", strs(&["fp32", "fp16"])), Value::Str(if pr.pipe.vae_upcast { "fp32" } else { "fp16" }.into())),
        (Param::categorical("vae_launch", strs(&["eager", "graph"])), Value::Str(pr.fw.launch.clone())),
    ]
}

/// Decodes a configuration (parameter `names`) into knobs.
pub fn decode(names: &[String], c: &Config) -> Result<Knobs, String> {
    let get = |n: &str| names.iter().position(|x| x == n).and_then(|i| c.0.get(i)).ok_or_else(|| format!("diffusion: the configuration has no '{n}'"));
    let s = |n: &str| -> Result<String, String> { Ok(get(n)?.as_str().map(String::from).unwrap_or_else(|| get(n).map(|v| v.to_string()).unwrap_or_default())) };
    let f = |n: &str| -> Result<f64, String> { get(n)?.as_f64().ok_or_else(|| format!("diffusion: '{n}' must be a number")) };
    let on = |n: &str| -> Result<bool, String> { Ok(matches!(s(n)?.as_str(), "on" | "true")) };
    let precision = s("precision")?;
    let steps = f("steps")?;
    if !(1.0..=crate::spec::diffusion::MAX_STEPS as f64).contains(&steps) {
        return Err(format!("steps: {steps} is out of range (1..={})", crate::spec::diffusion::MAX_STEPS));
    }
    let sp = f("sp")?;
    if !(1.0..=64.0).contains(&sp) || !(sp as u64).is_power_of_two() {
        return Err(format!("sp: {sp} must be a power of two in 1..=64"));
    }
    Ok(Knobs {
        steps: steps as u64,
        int8: precision == "w8a8",
        dtype: match precision.as_str() {
            "bf16" => DType::Bf16,
            "fp32" => DType::Fp32,
            _ => DType::Fp16,
        },
        attention: if s("attention")? == "unfused" { AttentionKind::Unfused } else { AttentionKind::Flash },
        tome: {
            let t = f("tome")?;
            crate::spec::diffusion::check_tome("tome", t)?;
            t
        },
        launch: LaunchMode::parse(&s("launch")?).map_err(|e| format!("launch: {e}"))?,
        te_cache: on("text_encoder_cache")?,
        step_cache: {
            let r = f("step_cache")?;
            crate::spec::diffusion::check_step_cache("step_cache", r)?;
            r
        },
        cfg_parallel: on("cfg_parallel")?,
        sp: sp as u64,
        ring: s("sp_mode")? == "ring",
        vae: match s("vae")?.as_str() {
            "tiled" => VaeMode::Tiled,
            "sliced" => VaeMode::Sliced,
            "parallel" => VaeMode::Parallel,
            _ => VaeMode::Full,
        },
        vae_fp32: s("vae_precision")? == "fp32",
        vae_launch: LaunchMode::parse(&s("vae_launch")?).map_err(|e| format!("vae_launch: {e}"))?,
    })
}

/// The output-changing knobs a point sets away from the exact pipeline (fewer steps than the
/// baseline, W8A8, token merging, step caching), in words (`guard::output_knobs` names the
/// guard of each).
pub fn output_changes(k: &Knobs, baseline_steps: u64) -> Vec<String> {
    guard::output_knobs(k, baseline_steps).into_iter().map(|o| o.setting).collect()
}

/// The stage's objective: prices a point with the pricer.
pub struct DiffusionObjective {
    pub pricer: Pricer,
    pub names: Vec<String>,
    pub baseline_steps: u64,
}

impl DiffusionObjective {
    /// The priced pipeline of a configuration (what the metrics summarise).
    pub fn priced(&mut self, c: &Config) -> Result<(Knobs, Priced), String> {
        let k = decode(&self.names, c)?;
        Ok((k, self.pricer.price(&k)?))
    }
}

impl Objective for DiffusionObjective {
    fn metrics(&self) -> Vec<Metric> {
        METRICS.iter().map(|(n, u, hib)| Metric { name: n.to_string(), unit: u.to_string(), direction: if *hib { Direction::Maximize } else { Direction::Minimize } }).collect()
    }
    fn evaluate(&mut self, c: &Config) -> Outcome {
        match self.priced(c) {
            Ok((k, p)) => Outcome::Ok(vec![p.total_ms, p.images_per_s, p.memory_gib, p.step_ms(), p.text_encoder_ms(), p.vae_ms, p.rel_error, output_changes(&k, self.baseline_steps).len() as f64]),
            Err(e) => Outcome::Infeasible(e),
        }
    }
}

/// Sets up the stage: its space with the scenario's overrides, the baseline, the objective.
pub fn setup(s: &Scenario) -> Result<StageSetup, String> {
    let pr = pricer(s)?;
    let ps = params(&pr, s);
    let defaults: Vec<(String, Value)> = ps.iter().map(|(p, v)| (p.name.clone(), v.clone())).collect();
    let params = crate::stages::apply_overrides(s, ps.into_iter().map(|p| p.0).collect())?;
    for p in &params {
        let Some(n) = p.levels().filter(|n| *n <= 4096) else {
            return Err(format!("space.{}: the diffusion stage takes a list of choices (at most 4096)", p.name));
        };
        // A level the pricer cannot price as given is refused here, naming it, rather than
        // clamped (a step cache of 1e308 priced as 8) or treated as off while shown as given.
        for i in 0..n {
            let v = p.level_value(i);
            let x = v.as_f64();
            match p.name.as_str() {
                "tome" => {
                    crate::spec::diffusion::check_tome("space.tome", x.unwrap_or(f64::NAN))?;
                    if x.unwrap_or(0.0) > 0.0 && !matches!(pr.pipe.denoiser, Denoiser::Unet(_)) {
                        return Err(format!("space.tome: {} asks for token merging, which is built for UNet pipelines (tomesd); this pipeline's denoiser is a DiT (use 0)", x.unwrap_or(0.0)));
                    }
                }
                "step_cache" => crate::spec::diffusion::check_step_cache("space.step_cache", x.unwrap_or(f64::NAN))?,
                _ => {}
            }
        }
    }
    // The baseline: each parameter's default where the space still holds it, else its first level.
    let baseline = Config(params.iter().zip(&defaults).map(|(p, (_, d))| if p.contains(d) { d.clone() } else { p.level_value(0) }).collect());
    let space = Space::new(params, &[])?;
    let names = space.names().to_vec();
    let baseline_steps = options(s).steps.unwrap_or(pr.pipe.defaults.steps);
    let mut notes = Vec::new();
    if pr.pipe.is_video() {
        notes.push(format!("{} frames become {} latent frames of {}x{} ({} tokens per sample)", options(s).frames.unwrap_or(pr.pipe.defaults.frames), pr.req.latent.frames, pr.req.latent.h, pr.req.latent.w, pr.req.latent.tokens));
    }
    notes.push("Quality is not simulated: fewer steps, W8A8, token merging and step caching change the output; they are counted in 'output_changing_knobs' (limit it to 0 for exact configurations) and W8A8 keeps the protected layers in 16-bit.".into());
    let objective = DiffusionObjective { pricer: pr, names, baseline_steps };
    Ok(StageSetup { metrics: objective.metrics(), space, objective: Box::new(objective), baseline, focus: Vec::new(), focus_budget: 0, notes })
}

//! Resolving a scenario's model and chip references into the simulator's data, for the analysis
//! modules (training, runtime, diagnosis, impact, explore).
//!
//! Why here: the analysis code needs the model description and the device profile themselves
//! (to cost single operators and read peaks), not only a stage objective.

use crate::spec::scenario::{DeviceRef, ModelRef, Scenario};
use tunelab_sim::device::{bundled_device, Device};
use tunelab_sim::model::{bundled_models, load_model, ModelDesc};

/// The model, the chip, and any warnings from loading them.
pub fn resolve(s: &Scenario) -> Result<(ModelDesc, Device, Vec<String>), String> {
    if s.stage == crate::scenario::Stage::Diffusion {
        // The denoiser of the pipeline at the scenario's size, as a graph model.
        let (model, device) = crate::stages::diffusion::denoiser_model(s)?;
        return Ok((model, device, Vec::new()));
    }
    if s.stage == crate::scenario::Stage::Training {
        if let Some(m) = diffusion_training_model(s)? {
            return Ok((m, device(s)?, vec!["diffusion training: the text encoders and the VAE encoder run forward only (frozen); the denoiser trains".into()]));
        }
    }
    let text = match &s.model {
        ModelRef::Id(id) if id.trim_start().starts_with('{') => id.clone(),
        ModelRef::Id(id) => {
            let want = id.trim().to_ascii_lowercase();
            let models = bundled_models();
            match models.iter().find(|(n, _)| *n == want) {
                Some((_, t)) => t.to_string(),
                None => return Err(format!("model: unknown bundled model '{}' (known: {})", crate::spec::scenario::clip(id), models.iter().map(|m| m.0).collect::<Vec<_>>().join(", "))),
            }
        }
        ModelRef::Inline(j) => serde_json::to_string(j).map_err(|e| format!("model: {e}"))?,
    };
    let loaded = load_model(&text).map_err(|e| format!("model: {e}"))?;
    Ok((loaded.model, device(s)?, loaded.warnings))
}

/// Whether the model names a diffusion pipeline (a bundled pipeline id, or pipeline JSON with
/// `"format": "tunelab-pipeline"`), without building it: the page asks this on a stage change,
/// and its first-load module carries no pipeline builder.
pub fn names_a_pipeline(model: &ModelRef) -> bool {
    use tunelab_sim::workload::diffusers::bundled_pipeline_ids;
    match model {
        ModelRef::Id(id) if !id.trim_start().starts_with('{') => bundled_pipeline_ids().iter().any(|p| p == &id.trim().to_ascii_lowercase()),
        ModelRef::Id(text) => text.contains("tunelab-pipeline"),
        ModelRef::Inline(j) => j.get("format").and_then(|f| f.as_str()) == Some("tunelab-pipeline"),
    }
}

/// A training scenario whose model is a diffusion pipeline (a bundled pipeline id, or pipeline
/// JSON with `"format": "tunelab-pipeline"`): its training graph at `training.resolution`
/// (default: the pipeline's own size). None for any other model.
fn diffusion_training_model(s: &Scenario) -> Result<Option<ModelDesc>, String> {
    if !names_a_pipeline(&s.model) {
        return Ok(None);
    }
    let p = crate::stages::diffusion::pipeline(s)?;
    // A square image of `resolution` pixels, or `resolution` x `width` (a video's 480 x 832);
    // a video pipeline trains on `frames` frames (default: the pipeline's own).
    let h = s.training.resolution.unwrap_or(p.defaults.height);
    let w = s.training.width.or(s.training.resolution).unwrap_or(p.defaults.width);
    let frames = s.training.frames.unwrap_or(p.defaults.frames);
    let mut m = p.training_model(h, w, frames).map_err(|e| {
        let field = if e.starts_with("frames") { "training.frames" } else if e.starts_with("width") { "training.width" } else { "training.resolution" };
        format!("{field}: {}", e.trim_start_matches("height: ").trim_start_matches("width: ").trim_start_matches("frames: "))
    })?;
    // Conditioning computed once before training (diffusers' SDXL script maps the dataset
    // through the text encoders and the VAE up front; DreamBooth with a fixed prompt encodes
    // it once) does not run per step.
    let pre = &s.training.precomputed;
    m.graph.retain(|o| {
        let te = o.name.starts_with("frozen.text_encoder");
        let vae = o.name.starts_with("frozen.vae_encoder");
        !(te && pre.iter().any(|x| x == "text_encoders") || vae && pre.iter().any(|x| x == "vae"))
    });
    Ok(Some(m))
}

/// The scenario's chip alone (a diffusion pipeline is not a `ModelDesc`, so its stage resolves
/// the chip without `resolve`).
pub fn device(s: &Scenario) -> Result<Device, String> {
    match &s.device {
        DeviceRef::Name(n) => bundled_device(n).map_err(|e| format!("device: {e}")),
        DeviceRef::Inline(j) => Device::from_json(&serde_json::to_string(j).unwrap_or_default()).map_err(|e| format!("device: {e}")),
    }
}

/// The chip's memory in GiB.
pub fn memory_gib(d: &Device) -> f64 {
    d.memory_bytes as f64 / (1024.0 * 1024.0 * 1024.0)
}

/// The model's short name as the scenario refers to it: a bundled id, or for a pasted model
/// its `_name_or_path` / `name` / first architecture / `model_type` ("custom model" when none).
pub fn model_label(s: &Scenario) -> String {
    // As the model loader names it: `_name_or_path`, `name`, the first architecture, the type.
    let from_json = |j: &serde_json::Value| -> Option<String> {
        let arch = j.get("architectures").and_then(|a| a.get(0)).and_then(|v| v.as_str());
        ["_name_or_path", "name"].iter().filter_map(|k| j.get(*k).and_then(|v| v.as_str())).chain(arch).chain(j.get("model_type").and_then(|v| v.as_str()))
            .find(|x| !x.trim().is_empty())
            .map(|x| format!("{} (own config)", x.rsplit('/').next().unwrap_or(x)))
    };
    let name = match &s.model {
        ModelRef::Id(id) if id.trim_start().starts_with('{') => serde_json::from_str(id).ok().as_ref().and_then(from_json),
        ModelRef::Id(id) => Some(id.clone()),
        ModelRef::Inline(j) => from_json(j),
    };
    crate::spec::scenario::clip(&name.unwrap_or_else(|| "custom model".into()))
}

/// The chip's name: a bundled name, or an edited profile's `name` ("custom chip").
pub fn chip_label(s: &Scenario) -> String {
    let name = match &s.device {
        DeviceRef::Name(n) => n.clone(),
        DeviceRef::Inline(j) => j.get("name").and_then(|v| v.as_str()).map(|n| format!("{n} (edited)")).unwrap_or_else(|| "custom chip".into()),
    };
    crate::spec::scenario::clip(&name)
}

/// The goal's metric id and whether it is maximised: the top-priority objective, else the
/// stage's primary metric (the first it reports).
pub fn goal(s: &Scenario) -> (String, bool) {
    use crate::spec::scenario::Stage;
    // As `stages::goal_order`: the highest priority, the first written among equals.
    let mut top: Option<&crate::spec::scenario::ObjectiveSpec> = None;
    for o in &s.objectives {
        if top.is_none_or(|t| o.priority > t.priority) {
            top = Some(o);
        }
    }
    if let Some(o) = top {
        let registry = crate::spec::metrics::info(&o.metric);
        let max = match o.direction.as_deref() {
            Some(d) => d == "maximize",
            None => registry.higher_is_better,
        };
        return (o.metric.clone(), max);
    }
    // Each stage's first metric (see the stages' `metrics()`).
    let id = match s.stage {
        Stage::Operator => "model_time_ms",
        Stage::Deployment => "tokens_per_s",
        Stage::Training => "step_time_ms",
        Stage::Runtime => "energy_j_per_token",
        Stage::Landscape => crate::stages::landscape::goal_metric(s),
        Stage::Diffusion => "latency_ms",
    };
    (id.into(), crate::spec::metrics::info(id).higher_is_better)
}

/// The scenario as one line: "Qwen2.5-7B on 910B4: deployment, maximise throughput per chip".
/// The header and the knowledge base's case titles use it, so they always name the scenario
/// as it is now.
pub fn title(s: &Scenario) -> String {
    let (g, max) = goal(s);
    if s.stage == crate::spec::scenario::Stage::Landscape {
        return format!("{}: landscape stage, {} {}", crate::stages::landscape::source_label(s), if max { "maximise" } else { "minimise" }, crate::spec::metrics::label(&g).to_lowercase());
    }
    format!("{} on {}: {} stage, {} {}", model_label(s), chip_label(s), s.stage.name(), if max { "maximise" } else { "minimise" }, crate::spec::metrics::label(&g).to_lowercase())
}

/// The one native-precision rule: the precision a model runs in when nothing is changed, from
/// its checkpoint's data type (INT8 checkpoints as W8A8). With `serving`, FP32 checkpoints are
/// served in FP16, as serving stacks downcast them (FP32 serving is not modelled). The
/// operator, deployment, serving and guard code all use it, so they agree on the baseline.
pub fn native_precision(d: tunelab_sim::DType, serving: bool) -> tunelab_sim::Precision {
    use tunelab_sim::{DType, Precision};
    match d {
        DType::Bf16 => Precision::Bf16,
        DType::Int8 => Precision::W8a8,
        DType::Int4 => Precision::W4a4,
        DType::Fp32 if !serving => Precision::Fp32,
        _ => Precision::Fp16,
    }
}

/// The name a precision has in scenarios and spaces ("fp16", "w8a16", ...).
pub fn precision_name(p: tunelab_sim::Precision) -> &'static str {
    p.name()
}

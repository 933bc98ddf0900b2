//! `scenario.diffusion`: what a text-to-image or text-to-video request is (size, frames, batch,
//! steps, guidance), on how many chips, under which framework, and which levels of each knob
//! the search may try. Plain data, checked here with messages naming the field; the diffusion
//! stage (`stages::diffusion`) interprets it.
//!
//! Absent from other stages' JSON (like `landscape`), so their links and traces are unchanged.

use serde::{Deserialize, Serialize};

/// Largest steps and batch accepted.
pub const MAX_STEPS: u64 = 1000;
pub const MAX_DIFFUSION_BATCH: u64 = 64;
/// Most chips one pipeline instance spreads over (CFG x sequence parallel x replicas).
pub const MAX_DIFFUSION_CHIPS: u64 = 64;

/// `scenario.diffusion` options (all optional; sizes default to the pipeline's own).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiffusionOptions {
    /// Image height and width in pixels (None: the pipeline's default).
    pub height: Option<u64>,
    pub width: Option<u64>,
    /// Video frames (None: the pipeline's default; 1 for an image pipeline).
    pub frames: Option<u64>,
    /// Images (or videos) generated together per call.
    pub batch: u64,
    /// Denoising steps of the baseline (None: the pipeline's default); the search's `steps`
    /// levels are `steps_choices` (empty: the baseline only, since fewer steps change the output).
    pub steps: Option<u64>,
    pub steps_choices: Vec<u64>,
    /// Classifier-free guidance (None: the pipeline's default). On, the denoiser runs on the
    /// conditional and the unconditional input every step.
    pub cfg: Option<bool>,
    /// Reference images the call conditions on (an edit or Kontext request; None: the
    /// pipeline's default, 0 for a text-to-image pipeline). Each is VAE-encoded once and its
    /// tokens join the denoiser's sequence.
    pub reference_images: Option<u64>,
    /// Chips for this pipeline (CFG branches x sequence-parallel degree; the rest are replicas).
    pub chips: u64,
    /// Framework block of assets/constants/diffusion.json ("diffusers", "torch_npu_graph",
    /// "ascendie", "mindie_sd").
    pub framework: String,
    /// The same prompt is sent again (a cache of its text embeddings can serve it).
    pub repeated_prompt: bool,
    /// Knob levels the search may try (precisions: fp16, bf16, w8a8, or fp32 as a script that
    /// loads float32 runs) (empty: the stage's defaults for this pipeline and chip).
    pub precisions: Vec<String>,
    pub attention: Vec<String>,
    pub tome_ratios: Vec<f64>,
    pub step_cache_ratios: Vec<f64>,
    pub vae_modes: Vec<String>,
    pub sequence_parallel: Vec<u64>,
    /// Weights fully sharded over `chips` (PyTorch FSDP FULL_SHARD, as MindSpeed-MM's FLUX.2
    /// inference wraps the transformer and the text encoder): each chip holds 1/chips of them,
    /// and every call of a sharded component all-gathers its weights, overlapped with its compute
    /// (FSDP prefetches the next block's shards). Off: every chip holds every weight.
    #[serde(skip_serializing_if = "is_false")]
    pub fsdp: bool,
    /// An unmerged LoRA adapter of this rank on the denoiser (diffusers' `load_lora_weights`
    /// without `fuse_lora`: PEFT runs x A, (x A) B, the scaling and the addition beside each
    /// adapted attention and feed-forward projection, every step; `workload::diffusers::lora`).
    /// None or 0: no adapter (or one fused into the weights, which costs nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lora_rank: Option<u64>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Default for DiffusionOptions {
    fn default() -> Self {
        DiffusionOptions {
            height: None,
            width: None,
            frames: None,
            batch: 1,
            steps: None,
            steps_choices: Vec::new(),
            cfg: None,
            reference_images: None,
            chips: 1,
            framework: "diffusers".into(),
            repeated_prompt: true,
            precisions: Vec::new(),
            attention: Vec::new(),
            tome_ratios: Vec::new(),
            step_cache_ratios: Vec::new(),
            vae_modes: Vec::new(),
            sequence_parallel: Vec::new(),
            fsdp: false,
            lora_rank: None,
        }
    }
}

/// Known values of the string knobs.
pub const PRECISIONS: [&str; 4] = ["fp16", "bf16", "w8a8", "fp32"];
pub const ATTENTION: [&str; 2] = ["flash", "unfused"];
pub const VAE_MODES: [&str; 4] = ["full", "tiled", "sliced", "parallel"];

impl DiffusionOptions {
    /// Checks what can be checked without the pipeline; every message names the field.
    pub fn validate(&self) -> Result<(), String> {
        let range = |f: &str, v: u64, lo: u64, hi: u64| if v < lo || v > hi { Err(format!("diffusion.{f}: {v} is out of range ({lo}..={hi})")) } else { Ok(()) };
        range("batch", self.batch, 1, MAX_DIFFUSION_BATCH)?;
        range("chips", self.chips, 1, MAX_DIFFUSION_CHIPS)?;
        if self.fsdp && self.chips < 2 {
            return Err("diffusion.fsdp: sharding the weights needs at least 2 chips (diffusion.chips is 1)".into());
        }
        if let Some(s) = self.steps {
            range("steps", s, 1, MAX_STEPS)?;
        }
        for s in &self.steps_choices {
            range("steps_choices", *s, 1, MAX_STEPS)?;
        }
        if let Some(r) = self.lora_rank {
            range("lora_rank", r, 0, tunelab_sim::workload::diffusers::lora::MAX_LORA_RANK)?;
        }
        if let Some(r) = self.reference_images {
            range("reference_images", r, 0, tunelab_sim::workload::diffusers::MAX_REFERENCE_IMAGES)?;
        }
        if let Some(f) = self.frames {
            range("frames", f, 1, tunelab_sim::workload::diffusers::MAX_FRAMES)?;
        }
        for (f, v) in [("height", self.height), ("width", self.width)] {
            if let Some(x) = v {
                range(f, x, 1, tunelab_sim::workload::diffusers::MAX_SIDE)?;
            }
        }
        let known = |f: &str, v: &[String], k: &[&str]| -> Result<(), String> {
            match v.iter().find(|x| !k.contains(&x.as_str())) {
                Some(x) => Err(format!("diffusion.{f}: unknown value '{}' (known: {})", crate::scenario::clip(x), k.join(", "))),
                None => Ok(()),
            }
        };
        known("precisions", &self.precisions, &PRECISIONS)?;
        known("attention", &self.attention, &ATTENTION)?;
        known("vae_modes", &self.vae_modes, &VAE_MODES)?;
        for r in &self.tome_ratios {
            check_tome("diffusion.tome_ratios", *r)?;
        }
        for r in &self.step_cache_ratios {
            check_step_cache("diffusion.step_cache_ratios", *r)?;
        }
        for d in &self.sequence_parallel {
            if !(1..=self.chips).contains(d) || !d.is_power_of_two() {
                return Err(format!("diffusion.sequence_parallel: {d} must be a power of two no larger than diffusion.chips ({})", self.chips));
            }
        }
        let n = self.precisions.len() + self.attention.len() + self.tome_ratios.len() + self.step_cache_ratios.len() + self.vae_modes.len() + self.sequence_parallel.len() + self.steps_choices.len();
        if n > 256 {
            return Err("diffusion: the knob lists hold more than 256 levels in all".into());
        }
        Ok(())
    }
}

/// Token-merging ratios the stage prices: 0 (off) to 0.75 (tomesd merges at most the three
/// quarters of the tokens that are not destinations).
pub const TOME_RANGE: (f64, f64) = (0.0, 0.75);
/// Step-cache ratios: 1 (every step in full) to 8 (one step in eight in full).
pub const STEP_CACHE_RANGE: (f64, f64) = (1.0, 8.0);

/// A value as a message shows it: 1e308 rather than its 309 digits.
fn show(r: f64) -> String {
    if r != 0.0 && r.is_finite() && !(1e-4..1e6).contains(&r.abs()) { format!("{r:e}") } else { format!("{r}") }
}

/// Refuses a token-merging ratio outside `TOME_RANGE` (or not finite), naming `field`.
pub fn check_tome(field: &str, r: f64) -> Result<(), String> {
    if r.is_finite() && (TOME_RANGE.0..=TOME_RANGE.1).contains(&r) {
        Ok(())
    } else {
        Err(format!("{field}: {} is not a merge ratio in {}..={} (0: off)", show(r), TOME_RANGE.0, TOME_RANGE.1))
    }
}

/// Refuses a step-cache ratio outside `STEP_CACHE_RANGE` (or not finite), naming `field`.
pub fn check_step_cache(field: &str, r: f64) -> Result<(), String> {
    if r.is_finite() && (STEP_CACHE_RANGE.0..=STEP_CACHE_RANGE.1).contains(&r) {
        Ok(())
    } else {
        Err(format!("{field}: {} is not a cache ratio in {}..={} (1: every step computed in full)", show(r), STEP_CACHE_RANGE.0, STEP_CACHE_RANGE.1))
    }
}

/// The seed's optimisation levels ("UNet level", "VAE level"): each a set of knob values, data in
/// assets/constants/diffusion.json `levels`. Specification data: a template pins them.
const LEVELS_JSON: &str = tunelab_sim::json_asset!("../../../../../assets/constants/diffusion.json");

/// The space pins of UNet level `u` and VAE level `v` (`None`: that level not pinned), for
/// templates: `{"launch": {"fixed": "graph"}, ...}`.
pub fn level_pins(u: Option<usize>, v: Option<usize>) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let all: serde_json::Value = serde_json::from_str(LEVELS_JSON).map_err(|e| format!("diffusion.json: {e}"))?;
    let mut out = serde_json::Map::new();
    for (which, lv) in [("unet", u), ("vae", v)] {
        let Some(i) = lv else { continue };
        let list = all.get("levels").and_then(|l| l.get(which)).and_then(|l| l.as_array()).map(|a| a.as_slice()).unwrap_or(&[]);
        let level = list.get(i).ok_or_else(|| format!("{which} level {i} does not exist (0..{})", list.len()))?;
        for (k, x) in level.get("pins").and_then(|p| p.as_object()).into_iter().flatten() {
            out.insert(k.clone(), serde_json::json!({ "fixed": x }));
        }
    }
    Ok(out)
}

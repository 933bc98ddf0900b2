//! The diffusion stage's parameters from `assets/constants/diffusion.json`, by layer: kernel
//! library (which chips have fused attention), framework (launch mode, host costs), workload
//! (scheduler kernels, VAE tile, memory reserve, protected layers) and the optimisation levels.

use serde_json::Value;
use std::sync::OnceLock;

/// The file, compiled in.
pub const DIFFUSION_CONSTANTS_JSON: &str = tunelab_sim::json_asset!("../../../../../assets/constants/diffusion.json");

/// One framework block.
#[derive(Clone, Debug, PartialEq)]
pub struct Framework {
    pub name: String,
    pub label: String,
    /// "eager" or "graph": the framework's own launch mode (the baseline).
    pub launch: String,
    /// How the framework's code outside the denoiser (text encoders, the loop's scheduler step
    /// and CFG combine) launches: "eager" or "graph" (default: `launch`).
    pub code_launch: String,
    /// Ships a fused-attention plugin that works where CANN's aclnn one does not (310P FA_soc).
    pub flash_plugin: bool,
    pub pipeline_host_ms: f64,
    pub step_host_ms: f64,
    /// Host work of one encode call beyond the encoders' kernels (tokenising, ids to the device).
    pub encode_prompt_host_ms: f64,
}

/// Everything the stage reads from the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Constants {
    pub frameworks: Vec<Framework>,
    pub aclnn_flash_chips: Vec<String>,
    /// Data types the fused attention takes; at any other (fp32) the attention runs unfused.
    pub flash_dtypes: Vec<String>,
    /// The text encoders' own attention path ("unfused" or "flash"), whatever the knob says.
    pub text_encoder_attention: String,
    pub scheduler_ops: f64,
    pub cfg_combine_ops: f64,
    pub vae_tile_latent: u64,
    pub memory_reserve_gib: f64,
    pub protected: Vec<String>,
}

fn val<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut x = v;
    for p in path {
        x = x.get(p)?;
    }
    x.get("value")
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(|x| x.as_array()).map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect()).unwrap_or_default()
}

/// Parses the constants (a broken bundled file is a build mistake the tests catch).
pub fn parse(text: &str) -> Result<Constants, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("diffusion constants: {e}"))?;
    let num = |path: &[&str]| val(&v, path).and_then(|x| x.as_f64()).ok_or_else(|| format!("diffusion constants: {} missing", path.join(".")));
    let mut frameworks = Vec::new();
    for (name, f) in v.get("frameworks").and_then(|f| f.as_object()).ok_or("diffusion constants: frameworks missing")? {
        frameworks.push(Framework {
            name: name.clone(),
            label: f.get("label").and_then(|x| x.as_str()).unwrap_or(name).to_string(),
            launch: f.get("launch").and_then(|x| x.as_str()).unwrap_or("eager").to_string(),
            code_launch: f.get("code_launch").and_then(|x| x.get("value")).and_then(|x| x.as_str()).or_else(|| f.get("launch").and_then(|x| x.as_str())).unwrap_or("eager").to_string(),
            flash_plugin: f.get("flash_attention_plugin").and_then(|x| x.as_bool()).unwrap_or(false),
            pipeline_host_ms: f.get("pipeline_host_ms").and_then(|x| x.get("value")).and_then(|x| x.as_f64()).unwrap_or(0.0),
            step_host_ms: f.get("step_host_ms").and_then(|x| x.get("value")).and_then(|x| x.as_f64()).unwrap_or(0.0),
            encode_prompt_host_ms: f.get("encode_prompt_host_ms").and_then(|x| x.get("value")).and_then(|x| x.as_f64()).unwrap_or(0.0),
        });
    }
    Ok(Constants {
        frameworks,
        aclnn_flash_chips: strings(val(&v, &["kernel_library", "flash_attention", "aclnn_chips"])),
        flash_dtypes: strings(val(&v, &["kernel_library", "flash_attention", "dtypes"])),
        text_encoder_attention: val(&v, &["workload", "text_encoder_attention"]).and_then(|x| x.as_str()).ok_or("diffusion constants: workload.text_encoder_attention missing")?.to_string(),
        scheduler_ops: num(&["workload", "scheduler_vector_ops"])?,
        cfg_combine_ops: num(&["workload", "cfg_combine_ops"])?,
        vae_tile_latent: num(&["workload", "vae_tile_latent"])? as u64,
        memory_reserve_gib: num(&["workload", "memory_reserve_gib"])?,
        protected: strings(val(&v, &["workload", "protected_layers"])),
    })
}

/// The bundled constants, parsed once.
pub fn constants() -> &'static Constants {
    static C: OnceLock<Constants> = OnceLock::new();
    C.get_or_init(|| parse(DIFFUSION_CONSTANTS_JSON).expect("assets/constants/diffusion.json parses (tested)"))
}

impl Constants {
    /// A framework by name; the error names the field and lists the known ones.
    pub fn framework(&self, name: &str) -> Result<&Framework, String> {
        self.frameworks.iter().find(|f| f.name == name).ok_or_else(|| {
            format!("diffusion.framework: unknown framework '{}' (known: {})", crate::scenario::clip(name), self.frameworks.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", "))
        })
    }

    /// The space pins of UNet level `u` and VAE level `v` (the specification reads the levels:
    /// `spec::diffusion::level_pins`).
    pub fn level_pins(&self, u: Option<usize>, v: Option<usize>) -> Result<serde_json::Map<String, Value>, String> {
        crate::spec::options::diffusion::level_pins(u, v)
    }
}

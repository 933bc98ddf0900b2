//! Framework constants of the training step, each with its source and plausible bounds, read from
//! `assets/constants/training.json` (compiled in, so the browser has them too): the allocator and
//! MoE constants, and one block per training framework (Megatron/MindSpeed, MindFormers,
//! DeepSpeed) with its host costs, launch mode and the kernels its model code runs for
//! operations another framework fuses. Each constant is {value, unit, source, min, max}: min/max
//! are the physically plausible bounds a fit may use, and source 'fit' values are refitted by
//! `tunelab fidelity`'s leave-one-source-out validation (framework layer). The eager per-launch
//! host cost is the kernel library's `eager_host_us_per_launch` (`cost::dispatch`), not
//! repeated here. The file's own `about` stays short: the page carries the file.
//!
//! `with_training_constants` prices with other values for the duration of a closure (the
//! leave-one-source-out refit of the framework layer); everything else reads the bundled file.

use serde::Deserialize;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// One constant: value, unit, bounds and where it comes from.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct Constant {
    pub value: f64,
    pub unit: String,
    pub min: f64,
    pub max: f64,
    pub source: String,
}

/// The training frameworks `training.framework` names, in file order.
pub const TRAIN_FRAMEWORKS: [&str; 3] = ["megatron", "mindformers", "deepspeed"];

/// A training framework (`training.framework`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrainFramework {
    /// Megatron-LM / MindSpeed-LLM (the default: every step priced before the setting existed).
    #[default]
    Megatron,
    /// MindFormers on MindSpore (graph mode).
    Mindformers,
    /// DeepSpeed (ZeRO) on Hugging Face model code.
    Deepspeed,
}

impl TrainFramework {
    /// The name in scenarios and in the constants file.
    pub fn name(self) -> &'static str {
        match self {
            TrainFramework::Megatron => "megatron",
            TrainFramework::Mindformers => "mindformers",
            TrainFramework::Deepspeed => "deepspeed",
        }
    }
    /// Reads a name ("mindspeed" is Megatron's: MindSpeed-LLM runs Megatron's schedule).
    pub fn parse(s: &str) -> Option<TrainFramework> {
        match s {
            "megatron" | "mindspeed" => Some(TrainFramework::Megatron),
            "mindformers" => Some(TrainFramework::Mindformers),
            "deepspeed" => Some(TrainFramework::Deepspeed),
            _ => None,
        }
    }
}

/// One framework's block.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct FrameworkConstants {
    pub about: String,
    /// "eager" (every operator launched from the host) or "graph" (one launch per micro-batch).
    pub launch: String,
    pub step_ms: Constant,
    pub micro_batch_overhead_ms: Constant,
    /// Kernels the model code runs per RMSNorm, rotary embedding and SwiGLU (1: one fused kernel).
    pub rms_norm_kernels: Constant,
    pub rotary_kernels: Constant,
    pub swiglu_kernels: Constant,
    /// Passes over the logits per cross-entropy, forward and backward each, in units of the
    /// graph's one fused 16-bit softmax pass (1: a fused loss kernel).
    pub cross_entropy_passes: Constant,
    /// Time per MoE layer per pass (forward, recomputed forward, backward) in which the device
    /// waits on the host: the MoE block's data-dependent shapes synchronise host and device.
    pub moe_layer_sync_ms: Constant,
}

impl FrameworkConstants {
    /// (name, constant) for every numeric entry.
    pub fn all(&self) -> [(&'static str, &Constant); 7] {
        [
            ("step_ms", &self.step_ms),
            ("micro_batch_overhead_ms", &self.micro_batch_overhead_ms),
            ("rms_norm_kernels", &self.rms_norm_kernels),
            ("rotary_kernels", &self.rotary_kernels),
            ("swiglu_kernels", &self.swiglu_kernels),
            ("cross_entropy_passes", &self.cross_entropy_passes),
            ("moe_layer_sync_ms", &self.moe_layer_sync_ms),
        ]
    }
    fn all_mut(&mut self) -> [(&'static str, &mut Constant); 7] {
        [
            ("step_ms", &mut self.step_ms),
            ("micro_batch_overhead_ms", &mut self.micro_batch_overhead_ms),
            ("rms_norm_kernels", &mut self.rms_norm_kernels),
            ("rotary_kernels", &mut self.rotary_kernels),
            ("swiglu_kernels", &mut self.swiglu_kernels),
            ("cross_entropy_passes", &mut self.cross_entropy_passes),
            ("moe_layer_sync_ms", &mut self.moe_layer_sync_ms),
        ]
    }
    /// Graph launch (one launch per micro-batch) rather than eager.
    pub fn graph_launch(&self) -> bool {
        self.launch == "graph"
    }
}

/// The training constants (see the JSON file for each source).
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct TrainingConstants {
    pub allocator_fragmentation: Constant,
    pub allocator_reserve_bytes: Constant,
    pub moe_imbalance: Constant,
    /// Kernels of the model code's own RMSNorm, rotary embedding and SwiGLU, for a run that
    /// turns its framework's fused kernel off (`TrainOptions::unfused`).
    pub unfused_rms_norm_kernels: Constant,
    pub unfused_rotary_kernels: Constant,
    pub unfused_swiglu_kernels: Constant,
    pub frameworks: BTreeMap<String, FrameworkConstants>,
}

/// The JSON text the constants come from.
pub const TRAINING_CONSTANTS_JSON: &str = crate::json_asset!("../../../../assets/constants/training.json");

impl TrainingConstants {
    /// Parses and bound-checks a constants file; errors name the field.
    pub fn from_json(text: &str) -> Result<TrainingConstants, String> {
        let c: TrainingConstants = serde_json::from_str(text).map_err(|e| format!("training constants: {e}"))?;
        for name in TRAIN_FRAMEWORKS {
            let f = c.frameworks.get(name).ok_or_else(|| format!("training constants: frameworks.{name} is missing"))?;
            if !["eager", "graph"].contains(&f.launch.as_str()) {
                return Err(format!("training constant 'frameworks.{name}.launch' must be eager or graph, got '{}'", f.launch.chars().take(40).collect::<String>()));
            }
        }
        for (name, k) in c.all() {
            if !(k.value.is_finite() && k.min <= k.value && k.value <= k.max) {
                return Err(format!("training constant '{name}' = {} must be within [{}, {}]", k.value, k.min, k.max));
            }
        }
        Ok(c)
    }
    /// (name, constant) for every entry, for reports; a framework's are named
    /// `frameworks.<name>.<field>`.
    pub fn all(&self) -> Vec<(String, &Constant)> {
        let mut v: Vec<(String, &Constant)> = vec![
            ("allocator_fragmentation".into(), &self.allocator_fragmentation),
            ("allocator_reserve_bytes".into(), &self.allocator_reserve_bytes),
            ("moe_imbalance".into(), &self.moe_imbalance),
            ("unfused_rms_norm_kernels".into(), &self.unfused_rms_norm_kernels),
            ("unfused_rotary_kernels".into(), &self.unfused_rotary_kernels),
            ("unfused_swiglu_kernels".into(), &self.unfused_swiglu_kernels),
        ];
        for (f, b) in &self.frameworks {
            v.extend(b.all().into_iter().map(|(k, c)| (format!("frameworks.{f}.{k}"), c)));
        }
        v
    }
    /// The constant named as `all` names it, to change (a refit).
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Constant> {
        match name {
            "allocator_fragmentation" => return Some(&mut self.allocator_fragmentation),
            "allocator_reserve_bytes" => return Some(&mut self.allocator_reserve_bytes),
            "moe_imbalance" => return Some(&mut self.moe_imbalance),
            "unfused_rms_norm_kernels" => return Some(&mut self.unfused_rms_norm_kernels),
            "unfused_rotary_kernels" => return Some(&mut self.unfused_rotary_kernels),
            "unfused_swiglu_kernels" => return Some(&mut self.unfused_swiglu_kernels),
            _ => {}
        }
        let rest = name.strip_prefix("frameworks.")?;
        let (f, k) = rest.split_once('.')?;
        self.frameworks.get_mut(f)?.all_mut().into_iter().find(|(n, _)| *n == k).map(|(_, c)| c)
    }
    /// A framework's block (every framework of `TrainFramework` is checked present at parse).
    pub fn framework(&self, f: TrainFramework) -> &FrameworkConstants {
        &self.frameworks[f.name()]
    }
    /// Kernels per RMSNorm, rotary embedding and SwiGLU a run executes: its framework's, or the
    /// model code's own ops (`unfused_*_kernels`) for one it turns off; a framework whose model
    /// code is already unfused (more than one kernel) keeps its own count.
    pub fn norm_rotary_swiglu_kernels(&self, f: TrainFramework, off: super::Unfused) -> [f64; 3] {
        let b = self.framework(f);
        let count = |framework: &Constant, own: &Constant, off: bool| if off && framework.value <= 1.0 { own.value } else { framework.value };
        [
            count(&b.rms_norm_kernels, &self.unfused_rms_norm_kernels, off.rms_norm),
            count(&b.rotary_kernels, &self.unfused_rotary_kernels, off.rotary),
            count(&b.swiglu_kernels, &self.unfused_swiglu_kernels, off.swiglu),
        ]
    }
}

thread_local! {
    static BUNDLED: Rc<TrainingConstants> = Rc::new(
        TrainingConstants::from_json(TRAINING_CONSTANTS_JSON).unwrap_or_else(|e| panic!("bundled {e}")),
    );
    static OVERRIDE: RefCell<Option<Rc<TrainingConstants>>> = const { RefCell::new(None) };
}

/// The training constants in force: the bundled file (parsed once per thread; a test checks
/// it), or the values `with_training_constants` set for the closure running now.
pub fn training_constants() -> Rc<TrainingConstants> {
    OVERRIDE.with(|o| o.borrow().clone()).unwrap_or_else(|| BUNDLED.with(Rc::clone))
}

/// Runs `f` with `c` as the training constants (restored afterwards, also on a panic unwinding
/// through it).
pub fn with_training_constants<R>(c: TrainingConstants, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Rc<TrainingConstants>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let prev = self.0.take();
            OVERRIDE.with(|o| *o.borrow_mut() = prev);
        }
    }
    let prev = OVERRIDE.with(|o| o.borrow_mut().replace(Rc::new(c)));
    let _restore = Restore(prev);
    f()
}

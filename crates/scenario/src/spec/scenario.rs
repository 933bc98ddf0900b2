//! The versioned Scenario: everything needed to reproduce a tuning run (what the URL carries).
//!
//! Why plain data with defaults everywhere: a link made by an older build must keep opening, so
//! unknown fields are ignored and missing ones take defaults; the stages interpret the data, this
//! file only parses and validates it, with messages that name the field at fault.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// The scenario format this build writes. Older versions are read; newer ones are refused.
pub const SCENARIO_VERSION: u32 = 1;

/// Largest budget one strategy may be given (keeps a hostile link from running for hours).
pub const MAX_BUDGET: usize = 100_000;
/// Largest number of strategies run side by side.
pub const MAX_STRATEGIES: usize = 8;

/// A tuning scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Scenario {
    /// Format version (1).
    pub version: u32,
    /// A short title shown in the app and the report (plain text, never markup).
    pub name: String,
    pub description: String,
    /// The model: a bundled id ("llama-2-7b"), or an inline description (object or JSON text).
    pub model: ModelRef,
    /// The chip: a bundled name ("910B2") or an inline profile object.
    pub device: DeviceRef,
    pub stage: Stage,
    pub workload: WorkloadSpec,
    /// Operator-stage options.
    pub operator: OperatorOptions,
    /// Deployment-stage options.
    pub deployment: DeploymentOptions,
    /// Training-stage options (typed; missing fields take defaults, so old files keep working).
    pub training: crate::spec::options::training::TrainingOptions,
    /// Runtime-stage options (typed; see `stages::runtime::RuntimeOptions`).
    pub runtime: crate::spec::options::runtime::RuntimeOptions,
    /// Landscape-stage source: a Kernel Tuner cache (bundled by name, or a dropped file by name
    /// and digest) or a toy function. Absent from other stages' JSON, so their links are as before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub landscape: Option<crate::spec::options::landscape::LandscapeSource>,
    /// Diffusion-stage options (size, steps, guidance, chips, framework, knob levels). Absent
    /// from other stages' JSON, so their links are as before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diffusion: Option<crate::spec::diffusion::DiffusionOptions>,
    /// Overrides of the stage's search space, by parameter name.
    pub space: BTreeMap<String, SpaceOverride>,
    /// Goals in priority order of `priority` (highest first); the first is the primary metric.
    /// Empty: the stage's default goal.
    pub objectives: Vec<ObjectiveSpec>,
    pub constraints: Constraints,
    pub strategy: StrategySpec,
    /// More strategies run side by side on the same scenario (each with the same budget).
    pub compare: Vec<StrategySpec>,
    /// Distinct evaluations per strategy.
    pub budget: usize,
    /// Stop after this many evaluations without improvement (None: never).
    pub patience: Option<usize>,
    /// Honour a strategy's own stopping rule (GA: three generations under 2%).
    pub early_stop: bool,
    pub seed: u64,
    /// Free-form UI state (selected charts, axes); the engine never reads it.
    pub view: Json,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            version: SCENARIO_VERSION,
            name: String::new(),
            description: String::new(),
            model: ModelRef::default(),
            device: DeviceRef::default(),
            stage: Stage::Deployment,
            workload: WorkloadSpec::default(),
            operator: OperatorOptions::default(),
            deployment: DeploymentOptions::default(),
            training: Default::default(),
            runtime: Default::default(),
            landscape: None,
            diffusion: None,
            space: BTreeMap::new(),
            objectives: Vec::new(),
            constraints: Constraints::default(),
            strategy: StrategySpec::default(),
            compare: Vec::new(),
            budget: 200,
            patience: None,
            early_stop: false,
            seed: 0,
            view: Json::Object(Default::default()),
        }
    }
}

/// Which tuning stage the scenario runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Operator,
    Deployment,
    Training,
    Runtime,
    /// A known landscape: a Kernel Tuner cache replayed, or a 2-D toy function (`stages::landscape`).
    Landscape,
    /// A text-to-image / text-to-video pipeline end to end (`stages::diffusion`).
    Diffusion,
}

impl Stage {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Operator => "operator",
            Stage::Deployment => "deployment",
            Stage::Training => "training",
            Stage::Runtime => "runtime",
            Stage::Landscape => "landscape",
            Stage::Diffusion => "diffusion",
        }
    }
}

/// A model reference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ModelRef {
    /// A bundled model id, or JSON text of a description (a string starting with '{').
    Id(String),
    /// An inline Hugging Face config.json or operator-graph object.
    Inline(Json),
}

impl Default for ModelRef {
    fn default() -> Self {
        ModelRef::Id("llama-2-7b".into())
    }
}

/// A device reference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DeviceRef {
    /// A bundled chip name ("910B2").
    Name(String),
    /// An inline device profile (the same JSON as assets/devices/*.json).
    Inline(Json),
}

impl Default for DeviceRef {
    fn default() -> Self {
        DeviceRef::Name("910B2".into())
    }
}

/// The workload: inference prefill/decode and training-step parameters. Integers are signed so
/// that a negative value gets a message naming the field rather than a parse error; batch -1
/// means "dynamic batch" (tuned for `dynamic_batches`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkloadSpec {
    /// Concurrent sequences (inference) or -1 for dynamic batch.
    pub batch: i64,
    /// Prompt tokens per sequence (prefill).
    pub input_len: i64,
    /// Generated tokens per sequence (decode steps).
    pub output_len: i64,
    /// Batches a dynamic-batch (-1) operator tuning is evaluated at.
    pub dynamic_batches: Vec<i64>,
    /// Training: sequences per micro-batch, sequence length and global batch (sequences).
    pub micro_batch: i64,
    pub seq_len: i64,
    pub global_batch: i64,
}

impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec {
            batch: 8,
            input_len: 1024,
            output_len: 256,
            dynamic_batches: vec![1, 8, 32],
            micro_batch: 1,
            seq_len: 4096,
            global_batch: 256,
        }
    }
}

/// Options of the operator stage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OperatorOptions {
    /// Which phase's graph is tiled: "prefill", "decode" or "both".
    pub phase: String,
    /// Search tiling of every distinct tunable operator.
    pub tiling: bool,
    /// Offer flash attention vs. unfused attention as a choice.
    pub fusion: bool,
    /// Offer fused matmul epilogues vs. separate vector kernels as a choice.
    pub epilogue_fusion: bool,
    /// Search loop-unroll factors (else the tiling's default).
    pub loop_unroll: bool,
    /// Search memory-reuse choices (double buffering, L1 depth; else defaults).
    pub memory_reuse: bool,
    /// Operators (by graph name) run in mixed precision (FP16 activations) when the model runs in
    /// another type; empty: none.
    pub mixed_precision_ops: Vec<String>,
    /// Bottleneck operators (graph names) given a focused local search after the main search.
    pub local_search_ops: Vec<String>,
    /// Share of the budget added for the focused search, 0..=1 (0.5: half the budget again).
    pub search_intensity: f64,
    /// What the workload's time means: "device" (kernel time on the device, as a profiler
    /// reports it), "single_call" (each operator called once from the framework in eager mode
    /// and timed around the call: host dispatch, then the kernel) or "back_to_back" (each
    /// operator called `calls` times in a timed loop; per call the longer of host dispatch and
    /// kernel). The host costs are the chip profile's eager dispatch (sim `cost::dispatch`).
    pub timing: String,
    /// Calls per timed loop when `timing` is "back_to_back" (the benchmark's inner iterations).
    pub calls: u64,
}

impl OperatorOptions {
    /// The timing this scenario asks for; errors name the field.
    pub fn timing(&self) -> Result<tunelab_sim::cost::dispatch::Timing, String> {
        if self.calls == 0 || self.calls > 1_000_000 {
            return Err(format!("operator.calls: must be between 1 and 1000000, got {}", self.calls));
        }
        tunelab_sim::cost::dispatch::Timing::parse(&self.timing, self.calls).map_err(|e| format!("operator.timing: {e}"))
    }
}

impl Default for OperatorOptions {
    fn default() -> Self {
        OperatorOptions {
            phase: "both".into(),
            tiling: true,
            fusion: true,
            epilogue_fusion: true,
            loop_unroll: true,
            memory_reuse: true,
            mixed_precision_ops: Vec::new(),
            local_search_ops: Vec::new(),
            search_intensity: 0.0,
            timing: "device".into(),
            calls: 1,
        }
    }
}

/// Options of the deployment stage. Empty lists take the stage's default choices.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeploymentOptions {
    /// Batch sizes to consider.
    pub batches: Vec<i64>,
    /// "fp16", "bf16", "w8a16", "w8a8".
    pub precisions: Vec<String>,
    pub tensor_parallel: Vec<i64>,
    /// Share of free memory given to the KV cache.
    pub kv_cache_fractions: Vec<f64>,
    /// "static", "dynamic", "predictive".
    pub memory_strategies: Vec<String>,
    /// "graph", "eager".
    pub launch_modes: Vec<String>,
    /// Tile every distinct operator with the device model's best tiling (else default tiling).
    pub tile_operators: bool,
    /// The request stream and the engine's scheduler (continuous batching; `mode: "static"`
    /// is the static-batch simple mode). Older scenarios without it get the defaults.
    pub serving: crate::spec::options::serving::ServingSpec,
    /// A deployment over several nodes: data-parallel attention, wide expert parallelism,
    /// redundant experts and prefill-decode disaggregation (`spec::cluster`). Absent: one node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<crate::spec::cluster::ClusterOptions>,
}

impl Default for DeploymentOptions {
    fn default() -> Self {
        DeploymentOptions {
            batches: Vec::new(),
            precisions: Vec::new(),
            tensor_parallel: Vec::new(),
            kv_cache_fractions: Vec::new(),
            memory_strategies: Vec::new(),
            launch_modes: Vec::new(),
            tile_operators: true,
            serving: crate::spec::options::serving::ServingSpec::default(),
            cluster: None,
        }
    }
}

/// Replaces a parameter's domain: a list of `choices`, or a range `low..=high` (with `step`),
/// or pins it with `fixed`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SpaceOverride {
    pub choices: Option<Vec<Json>>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub step: Option<f64>,
    pub fixed: Option<Json>,
}

/// One goal: a stage metric ("ttft_ms", "tokens_per_s", "memory_gib", ...), its priority
/// (higher first) and optionally its direction ("minimize"/"maximize"; default: the stage's).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ObjectiveSpec {
    pub metric: String,
    pub priority: f64,
    pub direction: Option<String>,
}

/// Limits that make a configuration infeasible, with the reason.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Constraints {
    /// Memory per chip (GiB); the chip's capacity always applies too.
    pub max_memory_gib: Option<f64>,
    pub max_ttft_ms: Option<f64>,
    pub max_tpot_ms: Option<f64>,
    /// Bound on the precision's relative rounding error (see metric "rel_error").
    pub max_rel_error: Option<f64>,
    pub min_tokens_per_s: Option<f64>,
    pub max_power_w: Option<f64>,
    /// Per-operator workspace limits (MiB) by graph name (operator stage).
    pub op_memory_mib: BTreeMap<String, f64>,
    /// Any other metric limit: metric name -> {"max": x} or {"min": x}.
    pub limits: BTreeMap<String, Limit>,
}

/// A bound on one metric.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Limit {
    pub max: Option<f64>,
    pub min: Option<f64>,
}

/// A strategy by registry name with its own options object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StrategySpec {
    pub name: String,
    pub options: Json,
}

impl Default for StrategySpec {
    fn default() -> Self {
        StrategySpec { name: "random".into(), options: Json::Object(Default::default()) }
    }
}

impl Scenario {
    /// Parses scenario JSON text (or an operator auto-tune configuration) and validates it.
    pub fn from_json(text: &str) -> Result<Scenario, String> {
        Scenario::from_json_reporting(text).map(|(s, _)| s)
    }

    /// `from_json`, with every key the scenario does not read (`spec::strict`): the CLI warns
    /// (or refuses with `--strict`), the app lists them in a banner.
    pub fn from_json_reporting(text: &str) -> Result<(Scenario, crate::spec::strict::Report), String> {
        let text = crate::spec::strict::strip_bom(text);
        let v: Json = serde_json::from_str(text).map_err(|e| format!("the scenario is not valid JSON: {}", crate::spec::strict::clip_error(&e.to_string())))?;
        Scenario::from_value_reporting(v)
    }

    /// Builds a scenario from parsed JSON (recognising the operator auto-tune format) and
    /// validates it.
    pub fn from_value(v: Json) -> Result<Scenario, String> {
        Scenario::from_value_reporting(v).map(|(s, _)| s)
    }

    /// `from_value`, with the keys it does not read.
    pub fn from_value_reporting(v: Json) -> Result<(Scenario, crate::spec::strict::Report), String> {
        if !v.is_object() {
            return Err("a scenario must be a JSON object".into());
        }
        let s = if crate::spec::autotune::is_autotune_config(&v) {
            (crate::spec::autotune::to_scenario(&v)?, Default::default())
        } else {
            if let Some(ver) = v.get("version") {
                match ver.as_u64() {
                    Some(n) if n >= 1 && n <= SCENARIO_VERSION as u64 => {}
                    Some(n) => return Err(format!("field 'version': this build reads scenario versions 1..={SCENARIO_VERSION}, got {n}; a newer Tunelab wrote it")),
                    None => return Err(format!("field 'version': expected a positive integer, got {ver}")),
                }
            }
            crate::spec::validate::deserialize_blaming(&v)?
        };
        let mut s = s;
        s.1.extend(crate::spec::strict_inputs::scenario_device_keys(&s.0));
        s.0.validate()?;
        Ok(s)
    }

    /// Pretty JSON of the scenario: `serde_json::to_string_pretty`'s bytes, from the compact
    /// text (`spec::pretty`: one serialiser of the scenario in the page's module).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).map(|t| crate::spec::pretty::pretty(&t)).unwrap_or_else(|_| "{}".into())
    }

    /// Every strategy the run uses: the main one, then `compare`.
    pub fn strategies(&self) -> Vec<&StrategySpec> {
        std::iter::once(&self.strategy).chain(&self.compare).collect()
    }
}

/// A user string cut to a printable length for messages.
pub fn clip(s: &str) -> String {
    let t: String = s.chars().take(60).collect();
    if t.len() < s.len() { format!("{t}...") } else { t }
}

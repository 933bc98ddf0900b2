//! `deployment.serving`: the request stream and scheduler settings a scenario states, and their
//! validation. The scheduler (`stages::scheduler`) draws the requests and serves them.

use serde::{Deserialize, Serialize};

/// The serving engine a scenario gets when it names none (its host costs are the numbers
/// scenarios had before the engine was a setting).
pub const DEFAULT_ENGINE: &str = "generic";

/// The framework layer's host costs per serving engine; the specification reads only the names.
pub(crate) const HOST_JSON: &str = tunelab_sim::json_asset_lean!("../../../../../assets/constants/serving-host.json");

/// The engines a constants file defines, in name order.
pub fn engine_names(text: &str) -> Result<Vec<String>, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("serving-host.json: {e}"))?;
    let engines = v.get("engines").and_then(|e| e.as_object()).ok_or("serving-host.json: no 'engines' object")?;
    let mut names: Vec<String> = engines.keys().cloned().collect();
    names.sort();
    Ok(names)
}

/// The engines `assets/constants/serving-host.json` defines, in name order. Spelled out so that
/// validating a scenario (which the page does on every edit) does not carry the constants file
/// and its sources into the page's first load; a test checks the list against the file.
const ENGINES: [&str; 6] = ["generic", "mindie", "sglang", "torchair", "transformers", "vllm-ascend"];

/// The bundled engines' names (what `deployment.serving.engine` accepts).
pub fn engines() -> Vec<String> {
    ENGINES.iter().map(|e| e.to_string()).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_engine_list_is_the_constants_files() {
        assert_eq!(super::engines(), super::engine_names(super::HOST_JSON).unwrap());
    }
}

/// Largest number of requests one simulation accepts.
pub const MAX_REQUESTS: usize = 100_000;

/// `deployment.serving`: the request stream and the engine's scheduler settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServingSpec {
    /// "scheduler" (continuous batching; the default) or "static" (simple mode: TTFT is one
    /// prefill of the whole batch, TPOT one decode step at the mean context).
    pub mode: String,
    /// "closed" (a fixed number of clients, each sending its next request when the last
    /// finishes), "poisson" (random arrivals at `request_rate`), "burst" (every request at
    /// once, a benchmark's `--request-rate inf`) or "trace" (`trace` times).
    pub arrival: String,
    /// Requests per second for "poisson".
    pub request_rate: Option<f64>,
    /// Clients of a closed loop (default: the configuration's max_num_seqs, a full server).
    pub concurrency: Option<u64>,
    /// Arrival times in seconds for "trace".
    pub trace: Vec<f64>,
    /// Requests simulated.
    pub requests: usize,
    /// "fixed", "uniform" (mean x [1 - spread, 1 + spread]) or "lognormal" (coefficient of
    /// variation `spread`), for both input and output lengths around the workload's means.
    pub length_distribution: String,
    pub length_spread: f64,
    /// KV-cache page size in tokens (vLLM-Ascend and MindIE default to 128 on Ascend).
    pub block_size: u64,
    /// Token budgets per step to consider (the space's `max_num_batched_tokens`).
    pub max_num_batched_tokens: Vec<i64>,
    /// Chunked-prefill settings to consider ("on", "off").
    pub chunked_prefill: Vec<String>,
    /// The serving engine whose host work surrounds each step ("generic", "vllm-ascend",
    /// "mindie", "torchair"; assets/constants/serving-host.json).
    pub engine: String,
    /// Speculative decoding (absent: off; `crate::spec::serving_options::SpeculativeOptions`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speculative: Option<crate::spec::serving_options::SpeculativeOptions>,
    /// KV-cache element type: "auto" (the activation type) or "int8" (C8).
    #[serde(skip_serializing_if = "is_auto")]
    pub kv_cache_dtype: String,
    /// Share of each prompt's tokens already in the prefix cache (0: none).
    #[serde(skip_serializing_if = "is_zero")]
    pub prefix_cache_hit_rate: f64,
    /// Draw lengths from a bundled dataset's statistics ("sharegpt", "alpaca") instead of the
    /// workload's means (empty: the workload's).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub dataset: String,
    /// Most requests in flight for poisson, burst or trace arrivals (a benchmark's
    /// `--max-concurrency`): a request waits for a slot before it is sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u64>,
    /// How attention runs: "flash" (fused kernels, the default) or "unfused" (BatchMatMul,
    /// Softmax, BatchMatMul with the scores in device memory). An offline OM model is
    /// `runtime: "om"`, which prices the ONNX export's own attention kernels whatever this says.
    #[serde(skip_serializing_if = "is_flash")]
    pub attention: String,
    /// Which runtime executes the model: "engine" (the engine's own fused operators, the
    /// default: MindIE's ATB model, vLLM-Ascend's kernels) or "om" (an offline OM model that ATC
    /// compiled from an ONNX export with mixed_float16: attention as separate kernels, blocklisted
    /// ops in fp32, GELU and residual adds unfused; `tunelab_sim::workload::onnx_om`).
    #[serde(skip_serializing_if = "is_engine")]
    pub runtime: String,
    /// How a graph-launched decode step is captured: "auto" (the engine's default, from
    /// serving-host.json: vLLM-Ascend's ACL graph is piecewise), "piecewise" (the graph split at
    /// every attention layer, attention run eagerly between the pieces: vLLM's
    /// cudagraph_mode PIECEWISE) or "full_decode_only" (one graph per decode step:
    /// cudagraph_mode FULL_DECODE_ONLY).
    #[serde(skip_serializing_if = "is_auto")]
    pub graph_mode: String,
    /// Pixels per side of the image each request carries, for a vision tower that takes any
    /// resolution (Qwen2.5-VL, Qwen3-VL); absent: the model's default (`tunelab_sim::model::vl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_size: Option<u64>,
    /// Images each request carries, for a model with a vision tower (0..=64); absent: the
    /// model's default (one for the vision-language models whose tower was always priced, none
    /// for Qwen3.5 / 3.6, whose tower is then not loaded). Each image is encoded on its own in
    /// prefill and adds its tokens to the prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub images_per_request: Option<u64>,
    /// Seconds of audio each request carries, for a model with an audio tower (Voxtral,
    /// Qwen-Omni; 0..=3600); absent or 0: none. Rounded up to 30 s windows, each encoded in
    /// prefill, its tokens added to the prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audio_seconds: Option<f64>,
    /// Where HCCL builds each collective's task list (`HCCL_OP_EXPANSION_MODE`): "auto" (the
    /// default: on the host or AI CPU at every call, one task to each peer in turn; a static
    /// graph the engine compiles has them built at compile time, serving-host.json
    /// `collectives`) or "aiv" (on the vector cores at once, as the A2's full mesh lets the
    /// Mesh algorithm run: two latency steps per all-reduce, `tunelab_sim::cost::comm`).
    #[serde(skip_serializing_if = "is_auto")]
    pub hccl_expansion: String,
    /// The engine's release ("0.11", "0.23"; assets/engines/releases.json): its defaults (graph
    /// capture, async scheduling, chunked prefill, token budget) and host costs. Empty: the
    /// engine's baseline release, the one serving-host.json describes (old links price as before).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub engine_version: String,
    /// Precision of a mixture-of-experts model's routed experts when the checkpoint quantises
    /// them apart from the rest (msModelSlim's mixed description, e.g. W8A8 attention and
    /// shared layers with W4A8 experts; vLLM-Ascend reads it from the checkpoint): "w4a8",
    /// "w8a8", ... The tuned `precision` keeps every other layer. Absent: one precision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expert_precision: Option<String>,
    /// The engine's host costs this scenario sets (µs, by field name of serving-host.json's
    /// engine block: step_host_us, step_host_us_per_seq, ...), as a fit of the user's own
    /// benchmark runs gives them (`spec::options::host_costs`); each within its bound. Empty:
    /// the file's (old links price as before).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub host_costs: std::collections::BTreeMap<String, f64>,
    /// SGLang's DeepEP exchange of a mixture-of-experts model's tokens (`--moe-a2a-backend
    /// deepep --deepep-mode MODE`; engine sglang only): "auto" (low-latency kernels for a
    /// decode batch, normal ones for a batch that prefills), "normal" or "low_latency". Absent:
    /// SGLang's default exchange (no a2a backend: the plain all-to-all collectives).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deepep_mode: Option<String>,
}

fn is_flash(s: &String) -> bool {
    s == "flash"
}

fn is_engine(s: &String) -> bool {
    s == "engine"
}

fn is_auto(s: &String) -> bool {
    s == "auto"
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl Default for ServingSpec {
    fn default() -> Self {
        ServingSpec {
            mode: "scheduler".into(),
            arrival: "closed".into(),
            request_rate: None,
            concurrency: None,
            trace: Vec::new(),
            requests: 200,
            length_distribution: "uniform".into(),
            length_spread: 0.5,
            block_size: 128,
            max_num_batched_tokens: Vec::new(),
            chunked_prefill: Vec::new(),
            engine: DEFAULT_ENGINE.into(),
            speculative: None,
            kv_cache_dtype: "auto".into(),
            prefix_cache_hit_rate: 0.0,
            dataset: String::new(),
            max_concurrency: None,
            attention: "flash".into(),
            runtime: "engine".into(),
            graph_mode: "auto".into(),
            image_size: None,
            images_per_request: None,
            audio_seconds: None,
            hccl_expansion: "auto".into(),
            engine_version: String::new(),
            expert_precision: None,
            host_costs: Default::default(),
            deepep_mode: None,
        }
    }
}

impl ServingSpec {
    /// Whether the static simple mode is asked for.
    pub fn is_static(&self) -> bool {
        self.mode == "static"
    }

    /// Checks every field, naming the one at fault.
    pub fn validate(&self) -> Result<(), String> {
        let f = "deployment.serving";
        if !matches!(self.mode.as_str(), "scheduler" | "static") {
            return Err(format!("{f}.mode: expected scheduler or static, got '{}'", crate::spec::scenario::clip(&self.mode)));
        }
        match self.arrival.as_str() {
            "burst" => {}
            "closed" => {
                if self.concurrency == Some(0) {
                    return Err(format!("{f}.concurrency: must be at least 1"));
                }
            }
            "poisson" => match self.request_rate {
                Some(r) if r.is_finite() && r > 0.0 && r <= 1e6 => {}
                Some(r) => return Err(format!("{f}.request_rate: {r} must be in (0, 1e6] requests/s")),
                None => return Err(format!("{f}.request_rate: poisson arrivals need a rate in requests/s")),
            },
            "trace" => {
                if self.trace.is_empty() || self.trace.len() > MAX_REQUESTS {
                    return Err(format!("{f}.trace: give 1..={MAX_REQUESTS} arrival times in seconds"));
                }
                if let Some(i) = self.trace.iter().position(|t| !(t.is_finite() && *t >= 0.0)) {
                    return Err(format!("{f}.trace[{i}]: arrival times are non-negative seconds"));
                }
            }
            other => return Err(format!("{f}.arrival: expected closed, poisson, burst or trace, got '{}'", crate::spec::scenario::clip(other))),
        }
        if self.requests == 0 || self.requests > MAX_REQUESTS {
            return Err(format!("{f}.requests: {} must be in 1..={MAX_REQUESTS}", self.requests));
        }
        match self.length_distribution.as_str() {
            "fixed" => {}
            "uniform" if (0.0..1.0).contains(&self.length_spread) => {}
            "lognormal" if self.length_spread.is_finite() && self.length_spread >= 0.0 && self.length_spread <= 4.0 => {}
            "uniform" | "lognormal" => return Err(format!("{f}.length_spread: {} is out of range (uniform: [0, 1), lognormal: [0, 4])", self.length_spread)),
            other => return Err(format!("{f}.length_distribution: expected fixed, uniform or lognormal, got '{}'", crate::spec::scenario::clip(other))),
        }
        if self.block_size == 0 || self.block_size > 4096 {
            return Err(format!("{f}.block_size: {} must be in 1..=4096 tokens", self.block_size));
        }
        if let Some(b) = self.max_num_batched_tokens.iter().find(|b| **b < 1 || **b > 1 << 20) {
            return Err(format!("{f}.max_num_batched_tokens: {b} must be in 1..=1048576"));
        }
        if let Some(c) = self.chunked_prefill.iter().find(|c| *c != "on" && *c != "off") {
            return Err(format!("{f}.chunked_prefill: expected on or off, got '{}'", crate::spec::scenario::clip(c)));
        }
        let engines = engines();
        if !engines.iter().any(|e| *e == self.engine) {
            return Err(format!("{f}.engine: unknown engine '{}' (known: {})", crate::spec::scenario::clip(&self.engine), engines.join(", ")));
        }
        if let Some(sp) = &self.speculative {
            sp.validate()?;
        }
        crate::spec::serving_options::validate_features(&self.kv_cache_dtype, self.prefix_cache_hit_rate, &self.dataset, self.max_concurrency)?;
        if !matches!(self.attention.as_str(), "flash" | "unfused") {
            return Err(format!("{f}.attention: expected flash or unfused, got '{}'", crate::spec::scenario::clip(&self.attention)));
        }
        if !matches!(self.runtime.as_str(), "engine" | "om") {
            return Err(format!("{f}.runtime: expected engine or om, got '{}'", crate::spec::scenario::clip(&self.runtime)));
        }
        if let Some(px) = self.image_size {
            if !(28..=4096).contains(&px) {
                return Err(format!("{f}.image_size: {px} must be 28..=4096 pixels per side"));
            }
        }
        if let Some(n) = self.images_per_request {
            if n > 64 {
                return Err(format!("{f}.images_per_request: {n} must be 0..=64 images"));
            }
        }
        if let Some(sec) = self.audio_seconds {
            if !(0.0..=3600.0).contains(&sec) {
                return Err(format!("{f}.audio_seconds: {sec} must be 0..=3600 seconds"));
            }
        }
        if !matches!(self.graph_mode.as_str(), "auto" | "piecewise" | "full_decode_only") {
            return Err(format!("{f}.graph_mode: expected auto, piecewise or full_decode_only, got '{}'", crate::spec::scenario::clip(&self.graph_mode)));
        }
        super::releases::release(&self.engine, &self.engine_version)?;
        super::host_costs::validate(&self.engine, &self.host_costs)?;
        if let Some(p) = &self.expert_precision {
            tunelab_sim::Precision::parse(p).map_err(|e| format!("{f}.expert_precision: {e}"))?;
        }
        if let Some(m) = &self.deepep_mode {
            if !matches!(m.as_str(), "auto" | "normal" | "low_latency") {
                return Err(format!("{f}.deepep_mode: expected auto, normal or low_latency (SGLang --deepep-mode), got '{}'", crate::spec::scenario::clip(m)));
            }
            if self.engine != "sglang" {
                return Err(format!("{f}.deepep_mode: DeepEP is SGLang's MoE exchange (--moe-a2a-backend deepep); set deployment.serving.engine to sglang, or leave deepep_mode out ('{}' picks its own exchange)", crate::spec::scenario::clip(&self.engine)));
            }
        }
        if !matches!(self.hccl_expansion.as_str(), "auto" | "aiv") {
            return Err(format!("{f}.hccl_expansion: expected auto or aiv (HCCL_OP_EXPANSION_MODE=AIV), got '{}'", crate::spec::scenario::clip(&self.hccl_expansion)));
        }
        Ok(())
    }
}

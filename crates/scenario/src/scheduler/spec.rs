//! `deployment.serving` (the request stream and scheduler settings a scenario states) and the
//! requests drawn from it.

use serde::{Deserialize, Serialize};
use tunelab_search::Rng;

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
    /// Speculative decoding (absent: off; `crate::serving_options::SpeculativeOptions`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speculative: Option<crate::serving_options::SpeculativeOptions>,
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
    /// How attention runs: "flash" (fused kernels, the default) or "unfused" (an offline OM
    /// model compiled by ATC from ONNX: BatchMatMul, Softmax, BatchMatMul with the scores in
    /// device memory).
    #[serde(skip_serializing_if = "is_flash")]
    pub attention: String,
}

fn is_flash(s: &String) -> bool {
    s == "flash"
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
            engine: super::price::DEFAULT_ENGINE.into(),
            speculative: None,
            kv_cache_dtype: "auto".into(),
            prefix_cache_hit_rate: 0.0,
            dataset: String::new(),
            max_concurrency: None,
            attention: "flash".into(),
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
            return Err(format!("{f}.mode: expected scheduler or static, got '{}'", crate::scenario::clip(&self.mode)));
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
            other => return Err(format!("{f}.arrival: expected closed, poisson, burst or trace, got '{}'", crate::scenario::clip(other))),
        }
        if self.requests == 0 || self.requests > MAX_REQUESTS {
            return Err(format!("{f}.requests: {} must be in 1..={MAX_REQUESTS}", self.requests));
        }
        match self.length_distribution.as_str() {
            "fixed" => {}
            "uniform" if (0.0..1.0).contains(&self.length_spread) => {}
            "lognormal" if self.length_spread.is_finite() && self.length_spread >= 0.0 && self.length_spread <= 4.0 => {}
            "uniform" | "lognormal" => return Err(format!("{f}.length_spread: {} is out of range (uniform: [0, 1), lognormal: [0, 4])", self.length_spread)),
            other => return Err(format!("{f}.length_distribution: expected fixed, uniform or lognormal, got '{}'", crate::scenario::clip(other))),
        }
        if self.block_size == 0 || self.block_size > 4096 {
            return Err(format!("{f}.block_size: {} must be in 1..=4096 tokens", self.block_size));
        }
        if let Some(b) = self.max_num_batched_tokens.iter().find(|b| **b < 1 || **b > 1 << 20) {
            return Err(format!("{f}.max_num_batched_tokens: {b} must be in 1..=1048576"));
        }
        if let Some(c) = self.chunked_prefill.iter().find(|c| *c != "on" && *c != "off") {
            return Err(format!("{f}.chunked_prefill: expected on or off, got '{}'", crate::scenario::clip(c)));
        }
        self.host()?;
        if let Some(sp) = &self.speculative {
            sp.validate()?;
        }
        crate::serving_options::validate_features(&self.kv_cache_dtype, self.prefix_cache_hit_rate, &self.dataset, self.max_concurrency)?;
        if !matches!(self.attention.as_str(), "flash" | "unfused") {
            return Err(format!("{f}.attention: expected flash or unfused, got '{}'", crate::scenario::clip(&self.attention)));
        }
        Ok(())
    }

    /// The host costs of the named engine (an unknown name is an error naming the field).
    pub fn host(&self) -> Result<super::price::HostCosts, String> {
        super::price::HostCosts::bundled(&self.engine)
    }
}

/// One simulated request: its arrival and lengths (the prompt includes a multimodal model's
/// image tokens).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Request {
    pub arrival_s: f64,
    pub input: u64,
    pub output: u64,
}

/// Draws the requests of a spec (closed-loop arrivals are set by the simulation; here 0).
pub fn requests(spec: &ServingSpec, input_mean: u64, output_mean: u64, extra_prompt: u64, seed: u64) -> Vec<Request> {
    let mut rng = Rng::seed_from_u64(seed ^ 0x5E7F_1A6B_0C2D_3E4F);
    let n = if spec.arrival == "trace" { spec.trace.len() } else { spec.requests };
    let mut t = 0.0;
    let mut out = Vec::with_capacity(n);
    let mut trace: Vec<f64> = spec.trace.clone();
    trace.sort_by(|a, b| a.total_cmp(b));
    for i in 0..n {
        let arrival_s = match spec.arrival.as_str() {
            "poisson" => {
                let rate = spec.request_rate.unwrap_or(1.0);
                t += -libm::log(1.0 - rng.unit()) / rate;
                t
            }
            "trace" => trace[i],
            _ => 0.0,
        };
        let (input, output) = match tunelab_sim::workload::datasets::dataset(&spec.dataset) {
            Ok(d) if !spec.dataset.is_empty() => draw_dataset(&mut rng, &d),
            _ => (draw(&mut rng, spec, input_mean), draw(&mut rng, spec, output_mean)),
        };
        out.push(Request { arrival_s, input: input + extra_prompt, output });
    }
    out
}

/// One (prompt, output) pair from a dataset's statistics: lognormal lengths, resampled until
/// they pass the benchmark's filter (bounded: after 64 tries the last draw is clamped into it).
fn draw_dataset(rng: &mut Rng, d: &tunelab_sim::workload::datasets::DatasetStats) -> (u64, u64) {
    let s2 = libm::log(1.0 + d.cv * d.cv);
    let mut one = |mean: f64| (libm::round(mean * libm::exp(libm::sqrt(s2) * rng.normal() - s2 / 2.0)) as u64).max(1);
    let mut last = (d.min_len, d.min_len);
    for _ in 0..64 {
        let (i, o) = (one(d.input_mean), one(d.output_mean));
        last = (i, o);
        if i >= d.min_len && o >= d.min_len && i <= d.max_input && i + o <= d.max_total {
            return (i, o);
        }
    }
    let i = last.0.clamp(d.min_len, d.max_input);
    (i, last.1.clamp(d.min_len, d.max_total - i))
}

fn draw(rng: &mut Rng, spec: &ServingSpec, mean: u64) -> u64 {
    let m = mean.max(1) as f64;
    let x = match spec.length_distribution.as_str() {
        "uniform" => m * rng.uniform(1.0 - spec.length_spread, 1.0 + spec.length_spread),
        "lognormal" => {
            let s2 = libm::log(1.0 + spec.length_spread * spec.length_spread);
            m * libm::exp(libm::sqrt(s2) * rng.normal() - s2 / 2.0)
        }
        _ => m,
    };
    (libm::round(x) as u64).clamp(1, 1 << 22)
}

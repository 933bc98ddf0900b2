//! The user's own benchmark runs in: the files serving benchmark tools write, read into the
//! workload they served and what they measured, and turned into measurement rows
//! (`fidelity::Row`, docs/measurements.md) over a Tunelab scenario that gives the launch, so
//! the fidelity path predicts them exactly as it predicts every other row.
//!
//! Readers:
//! - `vllm`: `vllm bench serve --save-result` JSON (with `--save-detailed`, per-request input
//!   and output lengths and TTFTs). The fields are those vLLM's vllm/benchmarks/serve.py writes
//!   (`benchmark()`'s result dict and `main()`'s `result_json`: date, model_id, num_prompts,
//!   request_rate ("inf" for a burst), max_concurrency, duration, completed, total_input_tokens,
//!   total_output_tokens, request_throughput, output_throughput, input_lens, output_lens,
//!   ttfts, and `mean_/median_/std_/pNN_` + `ttft|tpot|itl|e2el` + `_ms` per
//!   `--metric-percentiles`).
//!
//! Not yet read: SGLang bench_serving JSONL, AISBench results, MindIE's benchmark output.
//! Inputs are bounded (8 MiB of text, 100 000 requests); every error names the field.

pub mod vllm;

use serde::{Deserialize, Serialize};

/// Largest benchmark file read (bytes).
pub const MAX_BYTES: usize = 8 << 20;

/// What one benchmark run served and measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BenchRun {
    /// The tool ("vllm bench serve").
    pub tool: String,
    /// The model the tool named (its model_id), for the user to match with the scenario.
    pub model_id: String,
    /// Requests sent and completed.
    pub num_prompts: usize,
    pub completed: usize,
    /// Poisson request rate (None: every request at once, the tool's "inf").
    pub request_rate: Option<f64>,
    /// The client's concurrency cap (`--max-concurrency`).
    pub max_concurrency: Option<u64>,
    /// Mean prompt and output tokens of the completed requests.
    pub mean_input: f64,
    pub mean_output: f64,
    /// Per-request lengths when the file has them (`--save-detailed`).
    pub input_lens: Vec<u64>,
    pub output_lens: Vec<u64>,
    /// Measured values: (the tool's name, value, unit, the Tunelab metric compared with).
    pub measured: Vec<(String, f64, String, String)>,
}

impl BenchRun {
    /// The coefficient of variation of the prompt lengths (0 without per-request lengths).
    pub fn input_cv(&self) -> f64 {
        cv(&self.input_lens)
    }

    /// The deployment scenario that replays this run on `launch` (a Tunelab scenario: model,
    /// chip, configuration): the run's request count, arrivals, concurrency cap and lengths.
    pub fn scenario_over(&self, launch: &crate::Scenario) -> Result<crate::Scenario, String> {
        if launch.stage != crate::Stage::Deployment {
            return Err(format!("the launch scenario is a {} scenario; a benchmark run replays on a deployment scenario", launch.stage.name()));
        }
        let mut s = launch.clone();
        s.workload.input_len = libm::round(self.mean_input).max(1.0) as i64;
        s.workload.output_len = libm::round(self.mean_output).max(1.0) as i64;
        let sv = &mut s.deployment.serving;
        sv.mode = "scheduler".into();
        sv.requests = self.completed.clamp(1, crate::stages::scheduler::MAX_REQUESTS);
        match self.request_rate {
            Some(r) => {
                sv.arrival = "poisson".into();
                sv.request_rate = Some(r);
            }
            None => sv.arrival = "burst".into(),
        }
        sv.max_concurrency = self.max_concurrency;
        let c = cv(&self.input_lens).max(cv(&self.output_lens));
        if c > 0.01 {
            sv.length_distribution = "lognormal".into();
            sv.length_spread = (libm::round(c * 100.0) / 100.0).min(3.0);
        } else {
            sv.length_distribution = "fixed".into();
        }
        sv.validate()?;
        Ok(s)
    }

    /// The measurement rows of this run on `launch` (one row; its values compared with the
    /// stage's metrics), in the measurement format the fidelity report reads.
    pub fn rows(&self, launch: &crate::Scenario, name: &str) -> Result<crate::fidelity::MeasurementSet, String> {
        let s = self.scenario_over(launch)?;
        let chip = match &s.device {
            crate::spec::scenario::DeviceRef::Name(n) => n.clone(),
            crate::spec::scenario::DeviceRef::Inline(_) => return Err("the launch scenario's chip must be a bundled profile name for a measurement row".into()),
        };
        let mut partial = serde_json::to_value(&s).map_err(|e| e.to_string())?;
        let model = partial.get("model").cloned().unwrap_or_default();
        if let Some(o) = partial.as_object_mut() {
            for k in ["model", "device", "stage", "name", "description"] {
                o.remove(k);
            }
        }
        let values = self
            .measured
            .iter()
            .map(|(m, v, unit, predict)| crate::fidelity::Measured { metric: m.clone(), value: Some(*v), unit: unit.clone(), predict: Some(predict.clone()), per_chip: false, copies: None, not_compared: None, unit_stated: None })
            .collect();
        let row = crate::fidelity::Row {
            id: format!("{name}: {} on {chip}", self.tool),
            category: "serving".into(),
            chip: chip.clone(),
            chip_stated: chip,
            model,
            stage: "deployment".into(),
            scenario: partial,
            predict_with: "pinned".into(),
            values,
            weight: 1.0,
            framework: Some(s.deployment.serving.engine.clone()),
            ..Default::default()
        };
        Ok(crate::fidelity::MeasurementSet { schema: crate::fidelity::SCHEMA.into(), name: name.into(), converted_from: serde_json::json!({ "tool": self.tool, "file": name }), rows: vec![row] })
    }
}

fn cv(v: &[u64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let n = v.len() as f64;
    let m = v.iter().map(|x| *x as f64).sum::<f64>() / n;
    if m <= 0.0 {
        return 0.0;
    }
    let var = v.iter().map(|x| (*x as f64 - m) * (*x as f64 - m)).sum::<f64>() / (n - 1.0);
    libm::sqrt(var) / m
}

/// Reads a benchmark tool's file, by its content.
pub fn read(text: &str, name: &str) -> Result<BenchRun, String> {
    if text.len() > MAX_BYTES {
        return Err(format!("{name}: {} bytes, over the {} MiB a benchmark file may have", text.len(), MAX_BYTES >> 20));
    }
    let t = text.trim_start();
    if t.starts_with('{') && t.contains("\"output_throughput\"") {
        return vllm::read(text).map_err(|e| format!("{name}: {e}"));
    }
    Err(format!("{name}: not a benchmark result Tunelab reads (vllm bench serve --save-result JSON)"))
}

//! The user's own benchmark runs in: the files serving benchmark tools write, read into the
//! workload they served and what they measured, and turned into measurement rows
//! (`fidelity::Row`, docs/measurements.md) over a Tunelab scenario that gives the launch, so
//! the fidelity path predicts them exactly as it predicts every other row.
//!
//! Readers (each module's doc names the tool's source the format was read from;
//! assets/benchruns/README.md lists them with a sample file of each):
//! - `vllm`: `vllm bench serve --save-result` JSON (with `--save-detailed`, per-request input
//!   and output lengths and TTFTs);
//! - `sglang`: `python -m sglang.bench_serving --output-file` JSONL, one run per line (with
//!   `--output-details`, per-request lengths and TTFTs);
//! - `aisbench`: AISBench's performance results, `<dataset>.json` (common metrics) and
//!   `<dataset>.csv` (per-request statistics) and `<dataset>_details.jsonl` (each request's
//!   lengths), read alone or together;
//! - `mindie`: MindIE Benchmark's `result_common_*.csv`, `result_perf_*.csv` and
//!   `results_per_request_*.json`, read alone or together.
//!
//! Inputs are bounded (8 MiB of text, 100 000 requests, 1 000 runs per file) before any work;
//! every error names the field (and the line of a line-based file); keys a tool writes that
//! Tunelab does not read are reported as warnings, never dropped silently.

pub mod aisbench;
pub mod calibrate;
pub mod common;
pub mod mindie;
pub mod serve;
pub mod sglang;
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
    /// What the reader noticed but did not read (unknown keys, columns, stages).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Whether the file states the arrival rate (AISBench's and MindIE's files do not: the
    /// rate must be given, `with_rate`).
    #[serde(default)]
    pub rate_stated: bool,
    /// Which run of the file this is ("line 3" of a JSONL file; empty for a one-run file).
    #[serde(default)]
    pub label: String,
}

impl BenchRun {
    /// Adds what `other` (another file of the same run: AISBench's CSV beside its JSON,
    /// MindIE's result_perf beside its result_common) knows: measured values of metrics not
    /// yet measured, per-request lengths, the concurrency cap, warnings. The two must describe
    /// the same number of requests.
    pub fn merge(&mut self, other: BenchRun) -> Result<(), String> {
        if self.completed != other.completed && self.completed > 0 && other.completed > 0 {
            return Err(format!("{} {} requests in one file and {} in the other: not the same run", self.tool, self.completed, other.completed));
        }
        if self.completed == 0 {
            self.completed = other.completed;
            self.num_prompts = other.num_prompts;
        }
        for m in other.measured {
            if !self.measured.iter().any(|x| x.3 == m.3) {
                self.measured.push(m);
            }
        }
        if self.input_lens.is_empty() {
            self.input_lens = other.input_lens;
            self.output_lens = other.output_lens;
        }
        if self.mean_input <= 0.0 {
            self.mean_input = other.mean_input;
        }
        if self.mean_output <= 0.0 {
            self.mean_output = other.mean_output;
        }
        self.max_concurrency = self.max_concurrency.or(other.max_concurrency);
        self.warnings.extend(other.warnings);
        Ok(())
    }

    /// The run with its arrival rate given (`None`: all at once, or the tool's closed loop at
    /// its concurrency cap). A file that states its rate keeps it unless `force`.
    pub fn with_rate(mut self, rate: Option<f64>, force: bool) -> Result<BenchRun, String> {
        if let Some(r) = rate {
            if !(r.is_finite() && r > 0.0 && r <= 1e6) {
                return Err(format!("rate: {r} (a positive number of requests per second, or inf)"));
            }
        }
        if !self.rate_stated || force {
            self.request_rate = rate;
            self.rate_stated = true;
        }
        Ok(self)
    }

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
        if !self.rate_stated {
            return Err(format!("{}'s files do not record the request rate: give it (--rate R in req/s, or --rate inf for all at once / the tool's closed loop)", self.tool));
        }
        if self.completed == 0 || self.mean_input <= 0.0 || self.mean_output <= 0.0 {
            return Err(format!("{}: the files read give no request count or lengths (MindIE: read result_perf or results_per_request with result_common; AISBench: the .csv or .json)", self.tool));
        }
        let mut s = launch.clone();
        // A replay prices what the run served: the launch's service levels (TTFT/TPOT limits)
        // are a search's feasibility test, not a fact of the run, and a capacity goal would
        // search the rate the file fixes. The chip's memory still applies (in the device model).
        s.constraints = Default::default();
        s.objectives = vec![crate::spec::scenario::ObjectiveSpec { metric: "tokens_per_s".into(), priority: 1.0, direction: None }];
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

    /// The measurement row of this run on `launch`: its values compared with the stage's
    /// metrics, `source` naming the file (leave-one-source-out leaves a file out whole).
    pub fn row(&self, launch: &crate::Scenario, source: &str) -> Result<crate::fidelity::Row, String> {
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
        let label = if self.label.is_empty() { source.to_string() } else { self.label.clone() };
        Ok(crate::fidelity::Row {
            id: format!("{label}: {} on {chip}", self.tool),
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
            source: source.to_string(),
            ..Default::default()
        })
    }

    /// The measurement rows of this run on `launch` (one row), in the measurement format the
    /// fidelity report reads.
    pub fn rows(&self, launch: &crate::Scenario, name: &str) -> Result<crate::fidelity::MeasurementSet, String> {
        measurement_set(&[self.clone()], launch, name)
    }
}

/// The measurement set of `runs` on `launch` (one row per run; each run's `label` names its
/// file and line; a row's source is its file), named `name`.
pub fn measurement_set(runs: &[BenchRun], launch: &crate::Scenario, name: &str) -> Result<crate::fidelity::MeasurementSet, String> {
    let mut rows = Vec::new();
    for r in runs {
        let label = if r.label.is_empty() { name } else { r.label.as_str() };
        let source = label.split(" line ").next().unwrap_or(label);
        rows.push(r.row(launch, source).map_err(|e| format!("{label}: {e}"))?);
    }
    let tools: Vec<&str> = runs.iter().map(|r| r.tool.as_str()).collect();
    Ok(crate::fidelity::MeasurementSet { schema: crate::fidelity::SCHEMA.into(), name: name.into(), converted_from: serde_json::json!({ "tools": tools, "file": name }), rows })
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

/// A benchmark tool's file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Auto,
    Vllm,
    Sglang,
    Aisbench,
    Mindie,
}

impl Format {
    /// Parses "auto", "vllm", "sglang", "aisbench" or "mindie".
    pub fn parse(s: &str) -> Result<Format, String> {
        Ok(match s {
            "auto" => Format::Auto,
            "vllm" => Format::Vllm,
            "sglang" => Format::Sglang,
            "aisbench" => Format::Aisbench,
            "mindie" => Format::Mindie,
            o => return Err(format!("format '{}': expected auto, vllm, sglang, aisbench or mindie", common::clip(o, 20))),
        })
    }

    /// The name `parse` reads.
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Vllm => "vllm",
            Format::Sglang => "sglang",
            Format::Aisbench => "aisbench",
            Format::Mindie => "mindie",
        }
    }
}

/// What a file is, by its content (and, for the multi-file tools, which of their files).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Vllm,
    Sglang,
    AisJson,
    AisCsv,
    AisDetails,
    MindiePerf,
    MindieCommon,
    MindieRequests,
}

impl Kind {
    fn format(self) -> Format {
        match self {
            Kind::Vllm => Format::Vllm,
            Kind::Sglang => Format::Sglang,
            Kind::AisJson | Kind::AisCsv | Kind::AisDetails => Format::Aisbench,
            _ => Format::Mindie,
        }
    }
}

/// The kind of `text` (None: not a file Tunelab reads).
fn kind_of(text: &str) -> Option<Kind> {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with('{') {
        let first = t.lines().next().unwrap_or("");
        if aisbench::is_details(first) {
            return Some(Kind::AisDetails);
        }
        let several = t.lines().filter(|l| !l.trim().is_empty()).count() > 1 && serde_json::from_str::<serde_json::Value>(&common::python_json(first)).is_ok();
        if several || first.contains("\"dataset_name\"") || first.contains("\"random_input_len\"") {
            return Some(Kind::Sglang);
        }
        if t.contains("\"Benchmark Duration\"") || t.contains("\"Success Requests\"") {
            return Some(Kind::AisJson);
        }
        if t.contains("\"completed\"") {
            return Some(Kind::Vllm);
        }
        if t.contains("\"input_len\"") && t.contains("\"output_len\"") {
            return Some(Kind::MindieRequests);
        }
        return None;
    }
    let head = t.lines().next().unwrap_or("");
    if head.starts_with("Performance Parameters") {
        return Some(Kind::AisCsv);
    }
    if head.contains("FirstTokenTime") {
        return Some(Kind::MindiePerf);
    }
    if head.contains("Returned") {
        return Some(Kind::MindieCommon);
    }
    None
}

fn read_kind(kind: Kind, text: &str) -> Result<Vec<BenchRun>, String> {
    Ok(match kind {
        Kind::Vllm => vec![vllm::read(text)?],
        Kind::Sglang => sglang::read(text)?,
        Kind::AisJson => vec![aisbench::read_json(text)?],
        Kind::AisCsv => vec![aisbench::read_csv(text)?],
        Kind::AisDetails => vec![aisbench::read_details(text)?],
        Kind::MindiePerf => vec![mindie::read_perf(text)?],
        Kind::MindieCommon => vec![mindie::read_common(text)?],
        Kind::MindieRequests => vec![mindie::read_per_request(text)?],
    })
}

/// Reads one file: every run it holds, labelled with `name` (and the line, for JSONL). The
/// size is checked before any parsing.
pub fn read_all(text: &str, name: &str, format: Format) -> Result<Vec<BenchRun>, String> {
    if text.len() > MAX_BYTES {
        return Err(format!("{name}: {} bytes, over the {} MiB a benchmark file may have", text.len(), MAX_BYTES >> 20));
    }
    let kind = kind_of(text).ok_or_else(|| {
        format!("{name}: not a benchmark result Tunelab reads (vllm bench serve --save-result JSON, SGLang bench_serving JSONL, AISBench's <dataset>.json / .csv / _details.jsonl, MindIE Benchmark's result_common / result_perf CSV or results_per_request JSON)")
    })?;
    if format != Format::Auto && kind.format() != format {
        return Err(format!("{name}: --format {} but the file reads as {}", format.name(), kind.format().name()));
    }
    let mut runs = read_kind(kind, text).map_err(|e| format!("{name}: {e}"))?;
    for r in &mut runs {
        r.label = if r.label.is_empty() { name.to_string() } else { format!("{name} {}", r.label) };
    }
    Ok(runs)
}

/// Reads one file holding one run (the first of a JSONL file's runs).
pub fn read(text: &str, name: &str) -> Result<BenchRun, String> {
    read_all(text, name, Format::Auto)?.into_iter().next().ok_or_else(|| format!("{name}: no run"))
}

/// The group a file belongs to: the files of one AISBench or MindIE run share it (AISBench:
/// `<dataset>.json` with `<dataset>.csv` and `<dataset>_details.jsonl` in one folder; MindIE: the `_<time>` suffix of
/// result_common / result_perf / results_per_request in one folder). Other files stand alone.
fn group_key(name: &str, kind: Kind) -> String {
    let stem = name.rsplit_once('.').map(|(a, _)| a).unwrap_or(name);
    match kind {
        Kind::AisJson | Kind::AisCsv => format!("ais:{stem}"),
        Kind::AisDetails => format!("ais:{}", stem.strip_suffix("_details").unwrap_or(stem)),
        Kind::MindiePerf | Kind::MindieCommon | Kind::MindieRequests => {
            let (dir, file) = stem.rsplit_once('/').unwrap_or(("", stem));
            let tail = ["result_common", "result_perf", "results_per_request"].iter().find_map(|p| file.strip_prefix(p)).unwrap_or(file);
            format!("mindie:{dir}/{tail}")
        }
        _ => format!("file:{name}"),
    }
}

/// Reads several files (name, text): the files of one AISBench or MindIE run are merged into
/// one run (labelled by the group's first file); every other file gives its own runs.
pub fn read_files(files: &[(String, String)], format: Format) -> Result<Vec<BenchRun>, String> {
    let total: usize = files.iter().map(|(_, t)| t.len()).sum();
    if total > 4 * MAX_BYTES {
        return Err(format!("{total} bytes of benchmark files, over the {} MiB read at once", (4 * MAX_BYTES) >> 20));
    }
    let mut groups: Vec<(String, Vec<BenchRun>)> = Vec::new();
    for (name, text) in files {
        let runs = read_all(text, name, format)?;
        let key = kind_of(text).map(|k| group_key(name, k)).unwrap_or_else(|| format!("file:{name}"));
        match groups.iter_mut().find(|(k, _)| *k == key && !k.starts_with("file:")) {
            Some((_, g)) => {
                for r in runs {
                    g[0].merge(r).map_err(|e| format!("{name}: {e}"))?;
                }
            }
            None => groups.push((key, runs)),
        }
    }
    Ok(groups.into_iter().flat_map(|(_, g)| g).collect())
}

#[cfg(test)]
mod tests {
    fn sample(path: &str) -> (String, String) {
        let full = format!("{}/../../assets/benchruns/{path}", env!("CARGO_MANIFEST_DIR"));
        (path.to_string(), std::fs::read_to_string(full).unwrap())
    }

    pub const ALL: [&str; 8] = [
        "vllm-bench-serve-sample.json",
        "sglang-bench-serving-sample.jsonl",
        "aisbench/gsm8k.json",
        "aisbench/gsm8k.csv",
        "aisbench/gsm8k_details.jsonl",
        "mindie/result_common_20251120101500.csv",
        "mindie/result_perf_20251120101500.csv",
        "mindie/results_per_request_20251120101500.json",
    ];

    #[test]
    fn every_sample_is_recognised_and_groups_merge() {
        let files: Vec<(String, String)> = ALL.iter().map(|p| sample(p)).collect();
        let runs = super::read_files(&files, super::Format::Auto).unwrap();
        let tools: Vec<&str> = runs.iter().map(|r| r.tool.as_str()).collect();
        assert_eq!(tools, ["vllm bench serve", "sglang bench_serving", "sglang bench_serving", "sglang bench_serving", "AISBench", "MindIE Benchmark"]);
        assert_eq!(runs[2].label, "sglang-bench-serving-sample.jsonl line 2");
        let mindie = &runs[5];
        assert_eq!(mindie.input_lens.len(), 16, "results_per_request merged into the run");
        assert!(mindie.measured.iter().any(|m| m.3 == "ttft_ms") && mindie.measured.iter().any(|m| m.3 == "tokens_per_s"));
        assert!(!runs[4].rate_stated && !mindie.rate_stated);
        assert!(runs[4].measured.iter().any(|m| m.3 == "tpot_p99_ms"), "the AISBench CSV merged into its JSON's run");
        assert_eq!(runs[4].input_lens.len(), 8, "the AISBench per-request details merged into its JSON's run");
    }

    #[test]
    fn a_file_of_another_format_or_size_is_refused_by_name() {
        let (n, t) = sample("aisbench/gsm8k.csv");
        let e = super::read_all(&t, &n, super::Format::Vllm).unwrap_err();
        assert!(e.contains("--format vllm but the file reads as aisbench"), "{e}");
        let big = " ".repeat(super::MAX_BYTES + 1);
        assert!(super::read_all(&big, "big.json", super::Format::Auto).unwrap_err().contains("over the 8 MiB"));
        assert!(super::read_all("hello", "x.txt", super::Format::Auto).unwrap_err().starts_with("x.txt: not a benchmark result"));
        assert!(super::Format::parse("trt").unwrap_err().contains("'trt'"));
    }

    #[test]
    fn a_rate_less_run_needs_its_rate() {
        let (n, t) = sample("aisbench/gsm8k.json");
        let run = super::read(&t, &n).unwrap();
        let launch = crate::Scenario::from_value(serde_json::from_str(include_str!("../../../../../assets/scenarios/llama2-7b-910B2-deployment.json")).unwrap()).unwrap();
        assert!(run.scenario_over(&launch).unwrap_err().contains("--rate"));
        let s = run.with_rate(None, false).unwrap().scenario_over(&launch).unwrap();
        assert_eq!(s.deployment.serving.arrival, "burst");
        assert_eq!(s.deployment.serving.max_concurrency, Some(1));
    }
}

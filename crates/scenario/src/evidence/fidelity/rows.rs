//! The measurement-file reader: the `tunelab-measurements/1` types (docs/measurements.md) and
//! their bounded, strict parsing. The analysis (prediction, summary, bands, leave-one-source-out)
//! lives beside it and reads these types.
//!
//! Why bounded: a file comes from anyone. Its bytes, rows, values per row, variants, sweep points
//! and nesting are checked before any work, and each refusal names the limit
//! (`MAX_MEASUREMENT_BYTES`...). Why strict: a misspelled key (`scenaro`, `perchip`, `predcit`)
//! changed a prediction without a word; every key no field reads is now reported
//! (`spec::strict`), as a warning or, with `--strict`, an error.

use crate::spec::scenario::clip;
use crate::spec::strict::{self, Report};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// Largest measurement file read (bytes of JSON text).
pub const MAX_MEASUREMENT_BYTES: usize = 16 * 1024 * 1024;
/// Most rows in one file.
pub const MAX_ROWS: usize = 20_000;
/// Most measured values in one row (its own and its variants').
pub const MAX_VALUES_PER_ROW: usize = 1_000;
/// Most measured values in one file.
pub const MAX_VALUES: usize = 100_000;
/// Most variants of one row, and sweep points of one row.
pub const MAX_VARIANTS: usize = 256;
pub const MAX_SWEEP: usize = 256;
/// Deepest JSON nesting of a measurement file (a row's inline model is a few levels deep).
pub const MAX_NESTING: usize = 32;

/// The format id this build reads and writes.
pub const SCHEMA: &str = "tunelab-measurements/1";

/// A set of measurements (one file).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MeasurementSet {
    pub schema: String,
    pub name: String,
    /// Where the rows came from (free-form: file, sha256, converter).
    pub converted_from: Json,
    pub rows: Vec<Row>,
}

/// One measured setup: a model on a chip, at a pinned configuration, with its measured values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Row {
    pub id: String,
    /// "op", "serving" or "training" (summary groups).
    pub category: String,
    /// The bundled chip profile the row is compared against ("910B2").
    pub chip: String,
    /// The chip as the source states it, and why `chip` was chosen.
    pub chip_stated: String,
    pub chip_note: String,
    /// A bundled model id, an inline Hugging Face config.json, or an inline operator graph.
    pub model: Json,
    /// "operator", "deployment", "training" or "runtime".
    pub stage: String,
    /// A partial scenario merged over the defaults: workload, stage options, `space` pins.
    pub scenario: Json,
    /// How the configuration is chosen: "pinned" (the space's fixed values, else the stage's
    /// baseline) or "tuned" (the best a tuning run of the row's scenario finds, e.g. for a
    /// hand-tiled kernel).
    pub predict_with: String,
    /// Measured values compared under `scenario` as is.
    pub values: Vec<Measured>,
    /// Further configurations of the same setup (e.g. eager and graph), each with its pins.
    pub variants: Vec<Variant>,
    /// A microbenchmark tool's search (ascend-dmi's peak matmul, a bandwidth sweep over message
    /// sizes): the row's operator stage prices each point's model, and a value with
    /// `predict: "best_rate"` is compared with the best work per second over the points, in the
    /// tool's own definition of work (FLOPs, or the bytes the tool counts).
    pub sweep: Vec<SweepPoint>,
    /// Relative weight in a calibration fit (1 = normal; approximate rows less).
    #[serde(default = "one")]
    pub weight: f64,
    /// Set when the converter knows the row cannot be expressed: the reason.
    pub cannot_express: Option<String>,
    /// The framework or engine that ran the measurement ("vllm-ascend", "mindie", "torchair",
    /// "mindspeed", "deepspeed", "mindformers", "sglang", "torch_npu", ...; docs/measurements.md).
    pub framework: Option<String>,
    /// The kernel library of the measured operators: "aclnn" (CANN's default kernels through a
    /// framework), "hand-written", "vendor-tool" (ascend-dmi, HCCL tests), "atb" (MindIE's ATB).
    pub kernel_library: Option<String>,
    /// The layer whose parameters the row is evidence for: "chip" (a microbenchmark of the
    /// silicon), "kernel" (a kernel library's operators) or "framework" (an engine's steps).
    pub layer: Option<String>,
    pub source: String,
    pub software: Option<String>,
    /// The framework or engine release that ran the row ("0.11", "0.18.0rc1"; None or
    /// "unstated": the source names none). Leave-one-engine-release-out groups by
    /// (framework, release).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release: Option<String>,
    /// The model family ("qwen3", "llama2", "deepseekv3"; for an operator row its operator):
    /// leave-one-model-family-out groups by it. None: derived from the model (`family_of`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    pub notes: Option<String>,
    pub conversion_note: Option<String>,
}

/// One point of a sweep: a model (usually a one-op graph) and the work the tool credits it with.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SweepPoint {
    pub model: Json,
    /// FLOPs, or bytes as the tool counts them (input bytes only, algorithm bytes, ...).
    pub work: f64,
}

/// A pinned configuration of a row.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Variant {
    pub suffix: String,
    /// Space overrides (usually `{"param": {"fixed": v}}`) merged over the row's.
    pub space: Json,
    /// A partial scenario merged over the row's (a stage setting that is not a space parameter,
    /// e.g. `{"deployment": {"serving": {"runtime": "om"}}}`); null: none.
    #[serde(skip_serializing_if = "Json::is_null")]
    pub scenario: Json,
    pub values: Vec<Measured>,
    pub conversion_note: Option<String>,
}

/// One measured value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Measured {
    /// The source's name for it ("median_time", "decode_step_latency").
    pub metric: String,
    pub value: Option<f64>,
    /// "us", "ms", "s", "tokens/s", "tokens/s/NPU", "req/s".
    pub unit: String,
    /// The stage metric it is compared with ("ttft_ms"); None: not compared.
    pub predict: Option<String>,
    /// The measured value is per chip: the prediction is divided by the job's chips.
    pub per_chip: bool,
    /// The value covers this many independent copies of the measured setup (a card of two
    /// chips each serving alone, as the source multiplied): the prediction is multiplied by it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copies: Option<u64>,
    /// Why the value is listed but not compared (derived from another value, ...).
    pub not_compared: Option<String>,
    pub unit_stated: Option<String>,
}

impl MeasurementSet {
    /// Parses a measurement file; errors name the row and field. Unknown keys are dropped here
    /// (use `from_json_reporting` to hear about them).
    pub fn from_json(text: &str) -> Result<MeasurementSet, String> {
        MeasurementSet::from_json_reporting(text).map(|(s, _)| s)
    }

    /// Parses a measurement file and lists every key it does not read, with its path.
    pub fn from_json_reporting(text: &str) -> Result<(MeasurementSet, Report), String> {
        let text = strict::strip_bom(text);
        if text.len() > MAX_MEASUREMENT_BYTES {
            return Err(format!("the measurement file is {} bytes; at most {MAX_MEASUREMENT_BYTES} (MAX_MEASUREMENT_BYTES, docs/measurements.md)", text.len()));
        }
        check_nesting(text)?;
        let v: Json = serde_json::from_str(text).map_err(|e| format!("the measurement file is not valid JSON: {}", strict::clip_error(&e.to_string())))?;
        let schema = v.get("schema").and_then(Json::as_str).unwrap_or("");
        if schema != SCHEMA {
            return Err(format!("field 'schema': expected \"{SCHEMA}\", got \"{}\" (see docs/measurements.md)", clip(schema)));
        }
        let rows = v.get("rows").and_then(Json::as_array).ok_or("field 'rows': missing or not a list")?;
        check_counts(rows)?;
        let mut report = Report::default();
        let mut out = Vec::with_capacity(rows.len());
        for (i, r) in rows.iter().enumerate() {
            let id = r.get("id").and_then(Json::as_str).unwrap_or("");
            let (row, rep) = strict::from_value::<Row>(r, &[]).map_err(|e| format!("rows[{i}] ('{}'): {}", clip(id), strict::clip_error(&e.to_string())))?;
            report.extend(rep.prefixed(&format!("rows[{i}]")));
            report.extend(row_scenario_keys(&row).prefixed(&format!("rows[{i}]")));
            out.push(row);
        }
        // The file's other keys (the rows are read above, one by one, for messages naming them).
        let mut top = v.clone();
        if let Some(o) = top.as_object_mut() {
            o.insert("rows".into(), Json::Array(Vec::new()));
        }
        let (mut set, rep) = strict::from_value::<MeasurementSet>(&top, &[]).map_err(|e| format!("measurement file: {}", strict::clip_error(&e.to_string())))?;
        report.extend(rep);
        set.rows = out;
        for (i, r) in set.rows.iter_mut().enumerate() {
            if r.id.trim().is_empty() {
                return Err(format!("rows[{i}].id: missing"));
            }
            if !(r.weight.is_finite() && r.weight >= 0.0) || r.weight > 100.0 {
                return Err(format!("rows[{i}].weight: must be within [0, 100], got {}", strict::readable(r.weight)));
            }
            for m in r.values.iter().chain(r.variants.iter().flat_map(|v| v.values.iter())) {
                if let Some(x) = m.value {
                    if m.predict.is_some() && !(x.is_finite() && x > 0.0) {
                        return Err(format!("rows[{i}] ('{}').{}: a compared value must be a positive number, got {}", clip(&r.id), clip(&m.metric), strict::readable(x)));
                    }
                }
            }
            super::framework::reconcile(r).map_err(|e| format!("rows[{i}] ('{}'): {e}", clip(&r.id)))?;
        }
        Ok((set, report))
    }

    /// A short digest of the file text (FNV-1a, 64 bits, hex): names the data a fit used.
    pub fn digest_of(text: &str) -> String {
        format!("fnv1a64:{:016x}", crate::evidence::knowledge::fnv1a64(text.as_bytes()))
    }
}

/// Refuses JSON nested deeper than `MAX_NESTING` before parsing (a scan of the bytes; strings
/// are skipped so a bracket inside a name does not count).
fn check_nesting(text: &str) -> Result<(), String> {
    let (mut depth, mut in_str, mut esc, mut line) = (0usize, false, false, 1usize);
    for b in text.bytes() {
        if b == b'\n' {
            line += 1;
        }
        if in_str {
            match (esc, b) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(format!("the measurement file is nested more than {MAX_NESTING} levels deep at line {line} (MAX_NESTING, docs/measurements.md)"));
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Rows, values per row, variants and sweep points against their limits, before the rows are read.
fn check_counts(rows: &[Json]) -> Result<(), String> {
    if rows.len() > MAX_ROWS {
        return Err(format!("field 'rows': {} rows; at most {MAX_ROWS} (MAX_ROWS, docs/measurements.md)", rows.len()));
    }
    let len = |v: Option<&Json>| v.and_then(Json::as_array).map_or(0, Vec::len);
    let mut total = 0usize;
    for (i, r) in rows.iter().enumerate() {
        let variants = r.get("variants").and_then(Json::as_array).map_or(&[][..], Vec::as_slice);
        let sweep = len(r.get("sweep"));
        if variants.len() > MAX_VARIANTS {
            return Err(format!("rows[{i}].variants: {} variants; at most {MAX_VARIANTS} (MAX_VARIANTS)", variants.len()));
        }
        if sweep > MAX_SWEEP {
            return Err(format!("rows[{i}].sweep: {sweep} points; at most {MAX_SWEEP} (MAX_SWEEP)"));
        }
        let n = len(r.get("values")) + variants.iter().map(|v| len(v.get("values"))).sum::<usize>();
        if n > MAX_VALUES_PER_ROW {
            return Err(format!("rows[{i}]: {n} measured values; at most {MAX_VALUES_PER_ROW} per row (MAX_VALUES_PER_ROW, docs/measurements.md)"));
        }
        total += n;
    }
    if total > MAX_VALUES {
        return Err(format!("the file has {total} measured values; at most {MAX_VALUES} (MAX_VALUES, docs/measurements.md)"));
    }
    Ok(())
}

/// Unknown keys inside a row's partial scenario and its variants' scenarios and space pins
/// (read as the scenario reads them, so a misspelled `deployment.serving.graph_mod` is found).
fn row_scenario_keys(r: &Row) -> Report {
    use crate::spec::scenario::Scenario;
    let mut rep = Report::default();
    let one = |rep: &mut Report, v: &Json, at: &str| {
        if v.is_object() {
            if let Ok((_, k)) = strict::from_value::<Scenario>(v, crate::spec::validate::RETIRED_SCENARIO_KEYS) {
                rep.extend(k.prefixed(at));
            }
        }
    };
    one(&mut rep, &r.scenario, "scenario");
    for (k, var) in r.variants.iter().enumerate() {
        one(&mut rep, &var.scenario, &format!("variants[{k}].scenario"));
        if var.space.is_object() {
            if let Ok((_, k2)) = strict::from_value::<std::collections::BTreeMap<String, crate::spec::scenario::SpaceOverride>>(&var.space, &[]) {
                rep.extend(k2.prefixed(&format!("variants[{k}].space")));
            }
        }
    }
    rep
}

fn one() -> f64 {
    1.0
}

/// Reads a measurement file or an msprof op summary (detected by its header). CSV rows are put
/// on `csv_chip`; the operators an op summary has that Tunelab cannot model come back as
/// (operator, reason).
pub fn load_any(text: &str, name: &str, csv_chip: &str) -> Result<(MeasurementSet, Vec<(String, String)>), String> {
    load_any_reporting(text, name, csv_chip).map(|(s, sk, _)| (s, sk))
}

/// `load_any`, with the keys a measurement file has that no field reads.
pub fn load_any_reporting(text: &str, name: &str, csv_chip: &str) -> Result<(MeasurementSet, Vec<(String, String)>, Report), String> {
    let text = strict::strip_bom(text);
    if crate::evidence::calibrate::msprof::looks_like_op_summary(text) {
        tunelab_sim::device::bundled_device(csv_chip)?;
        return crate::evidence::calibrate::msprof::op_summary_to_set(text, csv_chip, name).map(|(s, sk)| (s, sk, Report::default()));
    }
    if text.trim_start().starts_with('{') {
        return MeasurementSet::from_json_reporting(text).map(|(s, r)| (s, Vec::new(), r));
    }
    Err(format!("'{}' is neither a measurement file (JSON, schema {SCHEMA}) nor an msprof op summary (CSV with 'OP Type' and 'Task Duration(us)' columns)", clip(name)))
}

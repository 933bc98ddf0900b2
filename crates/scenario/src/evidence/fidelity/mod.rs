//! Fidelity: Tunelab's predictions next to real measurements.
//!
//! A measurement file (`tunelab-measurements/1`, documented in docs/measurements.md) lists rows;
//! each row names a model, a chip profile, a stage, a pinned configuration and workload (as a
//! partial scenario), and the measured values with the stage metric each is compared with.
//! Prediction is generic: the row becomes a `Scenario`, the stage is set up by `stages::setup`
//! exactly as a tuning run does, and the pinned configuration is priced by the stage's own
//! objective (`predict_case`). There is no code per row, so improvements to the device model or
//! the stages show up here without edits, and held-out files in the same format are predicted
//! the same way. A row the stages cannot express (an unknown parameter, an unloadable model, a
//! metric the stage does not report) is listed with the stage's own error as the reason.

pub mod bands;
pub mod loso;
pub mod plot;
mod predict;
pub mod ranking;
mod render;
pub mod framework;
pub mod rows;
mod summary;

pub use predict::{case_scenario, merge, pinned_config, predict_case, predict_row};
pub use render::num;
pub use summary::{group, grouped, headlines, median, summarise, GroupSummary, Headline, Summary};
pub use rows::{load_any, load_any_reporting, Measured, MeasurementSet, Row, SweepPoint, Variant, SCHEMA};

use crate::spec::scenario::clip;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// Work per second in a measured rate unit, per unit of work: TFLOPS / TOPS (1e12), GB/s (1e9).
fn rate_scale(unit: &str) -> Option<f64> {
    let u = unit.trim().to_ascii_lowercase();
    match u.as_str() {
        "tflops" | "tops" => Some(1e12),
        "gb/s" => Some(1e9),
        "tb/s" => Some(1e12),
        _ => None,
    }
}

/// The best rate over a row's sweep, in `unit` (each point priced through the operator stage).
fn sweep_best(case: &Case, unit: &str, device: Option<&Json>) -> Result<f64, String> {
    let scale = rate_scale(unit).ok_or_else(|| format!("a sweep is compared as a rate (TFLOPS, TOPS, GB/s), not '{}'", clip(unit)))?;
    let mut best: Option<f64> = None;
    for (i, p) in case.row.sweep.iter().enumerate() {
        let mut row = case.row.clone();
        row.model = p.model.clone();
        row.sweep.clear();
        let c = Case { row: &row, variant: case.variant };
        let (m, _) = predict_case(&c, device).map_err(|e| format!("sweep point {i}: {e}"))?;
        let (t, u) = m.get("model_time_ms").ok_or("a sweep needs the operator stage's model_time_ms")?;
        let secs = convert(*t, u, "s")?;
        let r = p.work / secs.max(1e-300) / scale;
        best = Some(best.map_or(r, |b: f64| b.max(r)));
    }
    best.ok_or_else(|| "the sweep has no points".to_string())
}

/// One (row, variant) pair: a single pinned configuration and the values measured under it.
#[derive(Clone, Debug)]
pub struct Case<'a> {
    pub row: &'a Row,
    pub variant: Option<&'a Variant>,
}

impl<'a> Case<'a> {
    pub fn label(&self) -> String {
        match self.variant {
            Some(v) if !v.suffix.is_empty() => format!("{}/{}", self.row.id, v.suffix),
            _ => self.row.id.clone(),
        }
    }
    pub fn values(&self) -> &'a [Measured] {
        match self.variant {
            Some(v) => &v.values,
            None => &self.row.values,
        }
    }
}

/// Every case of a set: a row without variants is one case, else one per variant, and the row's
/// own values (measured under its scenario as is) are a case of their own when it has any (they
/// were once left out: neither compared nor listed).
pub fn cases(set: &MeasurementSet) -> Vec<Case<'_>> {
    let mut out = Vec::new();
    for r in &set.rows {
        if r.variants.is_empty() || !r.values.is_empty() {
            out.push(Case { row: r, variant: None });
        }
        if !r.variants.is_empty() {
            for v in &r.variants {
                out.push(Case { row: r, variant: Some(v) });
            }
        }
    }
    out
}

/// Seconds per unit for a time unit, None for anything else.
fn time_scale(u: &str) -> Option<f64> {
    match u.trim() {
        "us" | "µs" => Some(1e-6),
        "ms" => Some(1e-3),
        "s" => Some(1.0),
        _ => None,
    }
}

/// Whether a unit is a rate (things per second).
fn is_rate(u: &str) -> bool {
    let u = u.trim();
    u.ends_with("/s") || u.contains("/s/") || u == "tok/s"
}

/// Converts a predicted value in `from` (a stage metric's unit) to the measured `to` unit:
/// time to time by scale, rate to rate as is, and time per item to a rate (1 / t).
pub fn convert(x: f64, from: &str, to: &str) -> Result<f64, String> {
    match (time_scale(from), time_scale(to)) {
        (Some(a), Some(b)) => return Ok(x * a / b),
        (Some(a), None) if is_rate(to) => return Ok(1.0 / (x * a).max(1e-300)),
        _ => {}
    }
    if is_rate(from) && is_rate(to) {
        return Ok(x);
    }
    Err(format!("cannot compare a prediction in '{}' with a measurement in '{}'", clip(from), clip(to)))
}

/// One compared value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Compared {
    pub id: String,
    /// "row/variant" when the row has variants, else the row id.
    pub case: String,
    pub category: String,
    pub chip: String,
    pub metric: String,
    pub unit: String,
    pub measured: f64,
    pub predicted: f64,
    /// (predicted - measured) / measured.
    pub error: f64,
    pub predicted_by: String,
    pub weight: f64,
    /// Values of the same model, chip and metric share a group: their order is a decision
    /// (eager vs graph, batch 1 vs 8) that the summary checks.
    pub group: String,
    /// The row's `source` (leave-one-source-out groups by it).
    #[serde(default)]
    pub source: String,
    /// The layer the value is read against, with the library or framework that fills it
    /// ("chip", "kernel:aclnn", "framework:vllm-ascend"; `layer_of`).
    #[serde(default)]
    pub layer: String,
    /// The row's framework ("" when unstated).
    #[serde(default)]
    pub framework: String,
    /// The launch mode the case pins ("eager", "graph"; "" when not pinned).
    #[serde(default)]
    pub launch: String,
    /// The release of the framework that ran the row ("unstated" when the source names none).
    #[serde(default)]
    pub release: String,
    /// The model family (`family_of`).
    #[serde(default)]
    pub family: String,
    /// What Tunelab approximates in the row's model (`ModelDesc::approximations`: "part: how"),
    /// empty for a model it reads exactly (issue 41).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approximations: Vec<String>,
}

/// The release a row was measured on: its `release`, else "unstated".
pub fn release_of(r: &Row) -> String {
    r.release.as_deref().map(str::trim).filter(|s| !s.is_empty()).unwrap_or("unstated").to_string()
}

/// The model family of a row: its `family`, else derived from the model (a bundled id or an
/// operator graph's name; an inline config's `model_type`): the leading letters of the name with
/// the version that follows them, without the size ("qwen3-32b" -> "qwen3", "llama-2-7b" ->
/// "llama2", "mixtral-8x7b" -> "mixtral").
pub fn family_of(r: &Row) -> String {
    if let Some(f) = r.family.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        return f.to_string();
    }
    let name = match &r.model {
        Json::String(s) => s.clone(),
        Json::Object(o) => o.get("name").or_else(|| o.get("model_type")).and_then(Json::as_str).unwrap_or("").to_string(),
        _ => String::new(),
    };
    family_from_name(&name)
}

/// "qwen3-32b" -> "qwen3"; see `family_of`.
pub fn family_from_name(name: &str) -> String {
    let n = name.rsplit('/').next().unwrap_or("").to_ascii_lowercase();
    let c: Vec<char> = n.chars().collect();
    let mut i = 0;
    while i < c.len() && c[i].is_ascii_alphabetic() {
        i += 1;
    }
    let mut fam: String = c[..i].iter().collect();
    if fam.is_empty() {
        return if n.is_empty() { "unstated".into() } else { n };
    }
    let mut j = i;
    if j < c.len() && (c[j] == '-' || c[j] == '_') {
        j += 1;
    }
    let mut k = j;
    if k < c.len() && c[k] == 'v' {
        k += 1;
    }
    let start = k;
    while k < c.len() && (c[k].is_ascii_digit() || c[k] == '.') {
        k += 1;
    }
    // A version, not a size ("7b", "8x7b").
    if k > start && !(k < c.len() && (c[k] == 'b' || c[k] == 'x')) {
        fam.extend(c[j..k].iter().filter(|ch| **ch != '-'));
    }
    fam
}

/// The layer a row is evidence for, with the kernel library or framework that fills it: an
/// operator row of a microbenchmark tool is "chip", one of a kernel library "kernel:<lib>", a
/// serving or training row "framework:<name>" (the converter states `layer`; rows that do not
/// are placed by category).
pub fn layer_of(r: &Row) -> String {
    let layer = r.layer.clone().unwrap_or_else(|| if r.category == "op" { "kernel".into() } else { "framework".into() });
    match layer.as_str() {
        "chip" => "chip".into(),
        "kernel" => format!("kernel:{}", r.kernel_library.as_deref().unwrap_or("aclnn")),
        other => format!("{other}:{}", r.framework.as_deref().unwrap_or("unstated")),
    }
}

/// A value not compared, with the reason.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Unexpressed {
    pub id: String,
    pub metric: String,
    pub reason: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FidelityReport {
    pub name: String,
    pub rows: Vec<Compared>,
    pub unexpressed: Vec<Unexpressed>,
    pub summary: Summary,
}

/// One compared value of a case: the row's identity and layers, the measurement, the
/// prediction and its relative error.
fn compared_value(case: &Case, m: &Measured, predicted: f64, predicted_by: String, group: String, launch: String) -> Compared {
    let r = case.row;
    let measured = m.value.unwrap_or(f64::NAN);
    Compared {
        id: r.id.clone(),
        case: case.label(),
        category: r.category.clone(),
        chip: r.chip.clone(),
        metric: m.metric.clone(),
        unit: m.unit.clone(),
        measured,
        predicted,
        error: (predicted - measured) / measured,
        predicted_by,
        weight: r.weight,
        group,
        source: r.source.clone(),
        layer: layer_of(r),
        framework: r.framework.clone().unwrap_or_default(),
        launch,
        release: release_of(r),
        family: family_of(r),
        approximations: approximations_of(case),
    }
}

thread_local! {
    /// A model's approximation notes by its reference (evaluate runs once per refit).
    static APPROX: std::cell::RefCell<BTreeMap<String, Vec<String>>> = const { std::cell::RefCell::new(BTreeMap::new()) };
}

/// The approximation notes of the model a case is priced with (`ModelDesc::approximations`);
/// empty when the model is read exactly or cannot be resolved (the case then says why).
pub fn approximations_of(case: &Case) -> Vec<String> {
    let key = case.row.model.to_string();
    if let Some(v) = APPROX.with(|m| m.borrow().get(&key).cloned()) {
        return v;
    }
    let v = case_scenario(case, None).ok().and_then(|s| crate::stages::context::resolve(&s).ok()).map(|(m, _, _)| m.approximations()).unwrap_or_default();
    APPROX.with(|m| m.borrow_mut().insert(key, v.clone()));
    v
}

/// Predicts every case. `devices` maps a chip name to an inline profile used instead of the
/// bundled one (calibration); `only_chips` limits the rows to those chips when given.
pub fn evaluate(set: &MeasurementSet, devices: &BTreeMap<String, Json>, only_chips: Option<&[String]>) -> FidelityReport {
    let mut rows = Vec::new();
    let mut unexpressed = Vec::new();
    for case in cases(set) {
        let r = case.row;
        if let Some(chips) = only_chips {
            if !chips.iter().any(|c| c.eq_ignore_ascii_case(&r.chip)) {
                continue;
            }
        }
        let push_all = |reason: &str, vals: &[Measured], unexpressed: &mut Vec<Unexpressed>| {
            for m in vals {
                unexpressed.push(Unexpressed { id: case.label(), metric: m.metric.clone(), reason: m.not_compared.clone().unwrap_or_else(|| reason.to_string()) });
            }
        };
        if let Some(why) = &r.cannot_express {
            push_all(&format!("cannot express: {why}"), case.values(), &mut unexpressed);
            continue;
        }
        let compared: Vec<&Measured> = case.values().iter().filter(|m| m.predict.is_some() && m.not_compared.is_none() && m.value.is_some()).collect();
        let skipped: Vec<Measured> = case.values().iter().filter(|m| !(m.predict.is_some() && m.not_compared.is_none() && m.value.is_some())).cloned().collect();
        for m in &skipped {
            // Why each is left out, not "not compared" twice (issue 44: a misspelt `predict`).
            let why = match (&m.not_compared, &m.predict, &m.value) {
                (Some(w), _, _) => w.clone(),
                (None, None, _) => "not compared: the value has no 'predict' (the metric of the stage to compare it with)".to_string(),
                (None, _, None) => "not compared: the value has no measured 'value'".to_string(),
                _ => "not compared".to_string(),
            };
            unexpressed.push(Unexpressed { id: case.label(), metric: m.metric.clone(), reason: why });
        }
        if compared.is_empty() {
            continue;
        }
        let device = devices.get(&r.chip);
        if !r.sweep.is_empty() {
            for m in compared {
                match sweep_best(&case, &m.unit, device) {
                    Ok(pred) => {
                        let by = format!("operator stage, best rate over {} sweep points", r.sweep.len());
                        rows.push(compared_value(&case, m, pred, by, format!("{}:sweep:{}", r.chip, r.id), String::new()));
                    }
                    Err(why) => unexpressed.push(Unexpressed { id: case.label(), metric: m.metric.clone(), reason: format!("cannot express: {why}") }),
                }
            }
            continue;
        }
        match predict_case(&case, device) {
            Err(why) => {
                for m in compared {
                    unexpressed.push(Unexpressed { id: case.label(), metric: m.metric.clone(), reason: format!("cannot express: {why}") });
                }
            }
            Ok((metrics, chips)) => {
                let launch = case_scenario(&case, None).ok().and_then(|s| s.space.get("launch").and_then(|o| o.fixed.as_ref()).and_then(Json::as_str).map(str::to_string)).unwrap_or_default();
                for m in compared {
                    let want = m.predict.as_deref().unwrap_or("");
                    let Some((p, unit)) = metrics.get(want) else {
                        let known: Vec<&str> = metrics.keys().map(String::as_str).collect();
                        unexpressed.push(Unexpressed { id: case.label(), metric: m.metric.clone(), reason: format!("cannot express: the {} stage reports no metric '{}' (it has {})", r.stage, clip(want), known.join(", ")) });
                        continue;
                    };
                    let raw = if m.per_chip { p / chips.max(1.0) } else { *p };
                    let raw = raw * m.copies.unwrap_or(1).clamp(1, 1024) as f64;
                    match convert(raw, unit, &m.unit) {
                        Ok(pred) if pred.is_finite() && pred > 0.0 => {
                            let group = format!("{}:{want}:{:016x}", r.chip, crate::evidence::knowledge::fnv1a64(group_model(r).to_string().as_bytes()));
                            rows.push(compared_value(&case, m, pred, format!("{} stage, metric {want}", r.stage), group, launch.clone()));
                        }
                        Ok(pred) => unexpressed.push(Unexpressed { id: case.label(), metric: m.metric.clone(), reason: format!("the prediction is not a positive number ({pred})") }),
                        Err(e) => unexpressed.push(Unexpressed { id: case.label(), metric: m.metric.clone(), reason: e }),
                    }
                }
            }
        }
    }
    let total = match only_chips {
        Some(ch) => set.rows.iter().filter(|r| ch.iter().any(|c| c.eq_ignore_ascii_case(&r.chip))).count(),
        None => set.rows.len(),
    };
    let summary = summarise(&rows, unexpressed.len(), total);
    FidelityReport { name: set.name.clone(), rows, unexpressed, summary }
}

/// What identifies a row's "kind" for ranking: the model, or for an operator row its operators
/// with the sizes removed (flash attention at 1k and 8k tokens rank against each other).
fn group_model(r: &Row) -> Json {
    fn strip(v: &Json) -> Json {
        match v {
            Json::Object(o) => Json::Object(o.iter().filter(|(_, x)| !x.is_number()).map(|(k, x)| (k.clone(), strip(x))).collect()),
            Json::Array(a) => Json::Array(a.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    if r.stage == "operator" { strip(&r.model) } else { r.model.clone() }
}


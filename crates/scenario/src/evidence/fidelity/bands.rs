//! Prediction bands: how far predictions of one kind landed from measurements Tunelab had not
//! seen. A band is the spread of the leave-one-source-out errors (`loso`) of the measured rows
//! of the same category, framework and launch mode; `tunelab eval`, the report and the app print
//! it beside a headline number ("TPOT 23 ms (measured rows of this kind: -30% .. +12%, 14
//! values)"), and say so where no comparable row exists.
//!
//! The bands are computed natively by `tunelab fidelity --bands-out` and shipped as a small
//! asset (assets/measurements/bands.json), so the WebAssembly page reads them without fitting.

use super::loso::Loso;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The measurement files the shipped bands and docs/fidelity.md are computed from.
pub const MEASUREMENT_ARGS: &str = "--measurements assets/measurements/ascend-910b.json --measurements assets/measurements/ascend-set2.json --measurements assets/measurements/ascend-set3.json ";

/// The bundled bands file.
pub const BANDS_JSON: &str = tunelab_sim::json_asset!("../../../../../assets/measurements/bands.json");

/// The spread of the held-out errors of one kind of row.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Band {
    pub category: String,
    pub framework: String,
    /// "eager", "graph" or "" (not pinned).
    pub launch: String,
    pub values: usize,
    /// Lowest and highest held-out relative error (10th and 90th percentile from 10 values on).
    pub lo: f64,
    pub hi: f64,
    pub median: f64,
    /// Share of this kind's held-out errors (all three leave-outs) that fell inside the band
    /// computed without their own source, before any widening (None: no such band).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<f64>,
    /// How much the band was widened around its median so that the held-out errors of this kind
    /// fall inside it at least 80% of the time (1: not widened).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub widened: f64,
}

fn one() -> f64 {
    1.0
}

fn is_one(x: &f64) -> bool {
    *x == 1.0
}

/// The framework a band pooled from every framework's rows of its category names.
pub const EVERY_FRAMEWORK: &str = "every framework";

/// The share a band promises: the measured value lies inside it this often.
pub const PROMISE: f64 = 0.8;

/// Band coverage of one group of held-out values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    /// Held-out values (a compared value counts once per leave-out: source, family, release).
    pub values: usize,
    /// Inside the band the product would print for the value's kind, computed without the value's
    /// source: as shipped (widened where needed) and before widening.
    pub inside: usize,
    pub inside_before_widening: usize,
    /// Values whose kind has no band once their own source is left out (the product would say so).
    pub no_band: usize,
}

impl Coverage {
    pub fn share(&self) -> Option<f64> {
        (self.values > 0).then(|| self.inside as f64 / self.values as f64)
    }
    pub fn share_before(&self) -> Option<f64> {
        (self.values > 0).then(|| self.inside_before_widening as f64 / self.values as f64)
    }
}

type Kind = (String, String, String);

/// One held-out error: its kind, its source, the error as a log ratio (`log_ratio`).
struct Entry {
    kind: Kind,
    source: String,
    error: f64,
}

/// Errors are spread and widened as log ratios ln(predicted / measured) = ln(1 + error), so a
/// widened band never reaches a predicted value of zero or below (-100%).
fn log_ratio(e: f64) -> f64 {
    libm::log((1.0 + e).max(1e-9))
}

fn from_log_ratio(l: f64) -> f64 {
    libm::exp(l) - 1.0
}

fn entries(l: &Loso) -> Vec<Entry> {
    let mut out = Vec::new();
    for how in super::loso::LeaveOut::ALL {
        for c in l.held(how) {
            let fw = if c.framework.is_empty() { "unstated".to_string() } else { c.framework.clone() };
            out.push(Entry { kind: (c.category.clone(), fw, c.launch.clone()), source: c.source.clone(), error: log_ratio(c.error) });
        }
    }
    out
}

/// (lo, hi, median) of a list of errors: 10th..90th percentile from 10 values on, else min..max.
fn spread(mut e: Vec<f64>) -> Option<(f64, f64, f64)> {
    if e.is_empty() {
        return None;
    }
    e.sort_by(|a, b| a.total_cmp(b));
    let (lo, hi) = if e.len() >= 10 { (quantile(&e, 0.1), quantile(&e, 0.9)) } else { (e[0], e[e.len() - 1]) };
    Some((lo, hi, quantile(&e, 0.5)))
}

/// The band of `kind` from the entries not of `skip_source`: the exact kind, else the same
/// category and framework over every launch mode, else every framework's rows of the category
/// (as `Bands::lookup`, which falls back the same way and says so).
fn band_without(all: &[Entry], kind: &Kind, skip_source: &str) -> Option<(f64, f64, f64)> {
    let pick = |fw: bool, exact: bool| spread(all.iter().filter(|e| e.source != skip_source && e.kind.0 == kind.0 && (!fw || e.kind.1 == kind.1) && (!exact || e.kind.2 == kind.2)).map(|e| e.error).collect());
    pick(true, true).or_else(|| pick(true, false)).or_else(|| pick(false, false))
}

/// The least half-width a band side is widened from, as a log ratio (5%): a side with no
/// spread (every error on the other side of the median) still grows when widened, so widening
/// always reaches the promise instead of stalling on a zero-width side.
const WIDEN_FLOOR: f64 = 0.05;

/// The most a band is widened (a factor on each side's width): far beyond any shipped band;
/// a kind that would need more keeps this and its coverage says what it holds.
const WIDEN_MAX: f64 = 100.0;

fn widen((lo, hi, med): (f64, f64, f64), w: f64) -> (f64, f64) {
    if w == 1.0 {
        return (lo, hi);
    }
    (med - (med - lo).max(WIDEN_FLOOR) * w, med + (hi - med).max(WIDEN_FLOOR) * w)
}

/// The least widening (steps of 0.1 to 5, then of 0.5) under which `share` reaches the promise.
fn least_widening(share: impl Fn(f64) -> f64) -> f64 {
    let mut w = 1.0;
    while share(w) < PROMISE && w < WIDEN_MAX {
        let step = if w < 5.0 { 0.1 } else { 0.5 };
        w = libm::round((w + step) * 10.0) / 10.0;
    }
    w
}

/// Per kind: (coverage before widening, the widening factor), and the coverage per category.
fn cross_validated(all: &[Entry]) -> (BTreeMap<Kind, (Option<f64>, f64)>, BTreeMap<String, Coverage>) {
    let mut kinds: BTreeMap<Kind, Vec<(&Entry, Option<(f64, f64, f64)>)>> = BTreeMap::new();
    for e in all {
        kinds.entry(e.kind.clone()).or_default().push((e, band_without(all, &e.kind, &e.source)));
    }
    let mut factors = BTreeMap::new();
    let mut cov: BTreeMap<String, Coverage> = BTreeMap::new();
    for (k, list) in &kinds {
        let with: Vec<&(&Entry, Option<(f64, f64, f64)>)> = list.iter().filter(|x| x.1.is_some()).collect();
        let share = |w: f64| with.iter().filter(|(e, b)| { let (lo, hi) = widen(b.unwrap(), w); lo <= e.error && e.error <= hi }).count() as f64 / with.len().max(1) as f64;
        let before = (!with.is_empty()).then(|| share(1.0));
        let w = if with.is_empty() { 1.0 } else { least_widening(share) };
        factors.insert(k.clone(), (before, w));
        for cat in [k.0.clone(), "all".to_string()] {
            let c = cov.entry(cat).or_default();
            for (e, b) in list {
                c.values += 1;
                match b {
                    None => c.no_band += 1,
                    Some(b) => {
                        let inside = |w: f64| { let (lo, hi) = widen(*b, w); lo <= e.error && e.error <= hi };
                        c.inside += inside(w) as usize;
                        c.inside_before_widening += inside(1.0) as usize;
                    }
                }
            }
        }
    }
    (factors, cov)
}

/// Band coverage per category ("all": overall): for every held-out value, whether it lies in
/// the band the product would print for its kind, computed without the value's own source.
pub fn coverage(l: &Loso) -> BTreeMap<String, Coverage> {
    cross_validated(&entries(l)).1
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Bands {
    pub schema: String,
    pub about: String,
    /// Digest of the inputs the bands were computed from (measurement file, kernel libraries,
    /// training and serving-engine constants, chip profiles): a test checks the asset against
    /// the current inputs.
    pub inputs: String,
    pub bands: Vec<Band>,
}

/// The digest of the bundled inputs the shipped bands depend on (with the measurement file's).
pub fn inputs_digest(measurements_digest: &str) -> String {
    let mut text = String::from(measurements_digest);
    text += tunelab_sim::kernels::LIBRARIES_JSON;
    text += tunelab_sim::workload::TRAINING_CONSTANTS_JSON;
    // The serving engines' constants, some fitted (a refit moves the serving rows' residuals).
    text += crate::spec::options::serving::HOST_JSON;
    // The engines' releases (a row priced under its release moves with them).
    text += crate::spec::options::releases::RELEASES_JSON;
    for n in tunelab_sim::device::bundled_names() {
        text += tunelab_sim::device::bundled_profile_text(n).unwrap_or("");
    }
    super::MeasurementSet::digest_of(&text)
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let i = q * (sorted.len() - 1) as f64;
    let (a, b) = (libm::floor(i) as usize, libm::ceil(i) as usize);
    sorted[a] + (sorted[b] - sorted[a]) * (i - a as f64)
}

impl Bands {
    /// Bands from a leave-one-source-out run; `digest` names the measurement file.
    pub fn from_loso(l: &Loso, digest: &str) -> Bands {
        let all = entries(l);
        let (factors, _) = cross_validated(&all);
        let mut groups: BTreeMap<Kind, Vec<f64>> = BTreeMap::new();
        for e in &all {
            groups.entry(e.kind.clone()).or_default().push(e.error);
        }
        let bands = groups
            .into_iter()
            .filter_map(|(kind, e)| {
                let n = e.len();
                let b = spread(e)?;
                let (coverage, w) = factors.get(&kind).cloned().unwrap_or((None, 1.0));
                let (lo, hi) = widen(b, w);
                let (category, framework, launch) = kind;
                Some(Band { category, framework, launch, values: n, lo: r4(from_log_ratio(lo)), hi: r4(from_log_ratio(hi)), median: r4(from_log_ratio(b.2)), coverage: coverage.map(r4), widened: w })
            })
            .collect();
        Bands {
            schema: "tunelab-bands/1".into(),
            about: format!("Generated by `tunelab fidelity {}--bands-out assets/measurements/bands.json`; do not edit. Each band: the held-out relative errors (predicted - measured) / measured of the measured rows of one category, framework and launch mode, pooled over the three leave-outs (one source, one model family, one engine release left out of the refit): min..max, or 10th..90th percentile from 10 values on, taken and widened on ln(predicted / measured). `coverage`: the share of those errors that fell inside the band computed without their own source; where it was under 80% the band is widened around its median by `widened` (each side at least 0.05 in ln) until it covers 80%; a kind left without a band when its own source is out is checked against its category's band over every framework.", MEASUREMENT_ARGS),
            inputs: inputs_digest(digest),
            bands,
        }
    }

    pub fn to_file_text(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// The bundled bands.
    pub fn bundled() -> Bands {
        serde_json::from_str(BANDS_JSON).unwrap_or_default()
    }

    /// The band of rows like (category, framework, launch): the exact kind, else the same
    /// category and framework over every launch mode, else every framework's rows of the
    /// category (its framework reads "every framework"). None: no measured row of the category.
    pub fn lookup(&self, category: &str, framework: &str, launch: &str) -> Option<Band> {
        if let Some(b) = self.bands.iter().find(|b| b.category == category && b.framework == framework && b.launch == launch) {
            return Some(b.clone());
        }
        let mut same: Vec<&Band> = self.bands.iter().filter(|b| b.category == category && b.framework == framework).collect();
        let mut framework = framework;
        if same.is_empty() {
            same = self.bands.iter().filter(|b| b.category == category).collect();
            framework = EVERY_FRAMEWORK;
        }
        if same.is_empty() {
            return None;
        }
        let values: usize = same.iter().map(|b| b.values).sum();
        Some(Band {
            category: category.into(),
            framework: framework.into(),
            launch: String::new(),
            values,
            lo: same.iter().map(|b| b.lo).fold(f64::INFINITY, f64::min),
            hi: same.iter().map(|b| b.hi).fold(f64::NEG_INFINITY, f64::max),
            median: same.iter().map(|b| b.median * b.values as f64).sum::<f64>() / values.max(1) as f64,
            coverage: None,
            widened: same.iter().map(|b| b.widened).fold(1.0, f64::max),
        })
    }
}

impl Band {
    /// "measured rows of this kind: -30% .. +12%, 14 values".
    pub fn describe(&self) -> String {
        let widened = if self.widened > 1.0 {
            format!("; widened x{:.1}: the unwidened band held {} of unseen rows' values, under the 80% it promises", self.widened, self.coverage.map(|c| format!("{:.0}%", c * 100.0)).unwrap_or_else(|| "fewer than 80%".into()))
        } else {
            String::new()
        };
        if self.framework == EVERY_FRAMEWORK {
            return format!("measured {} rows of every framework (none of this one's): {:+.0}% .. {:+.0}%, {} values{widened}", self.category, self.lo * 100.0, self.hi * 100.0, self.values);
        }
        format!("measured {} rows of this kind ({}{}): {:+.0}% .. {:+.0}%, {} values{widened}", self.category, self.framework, if self.launch.is_empty() { String::new() } else { format!(", {}", self.launch) }, self.lo * 100.0, self.hi * 100.0, self.values)
    }
}

/// The band line for a scenario's headline numbers: its category, framework and launch mode.
pub fn describe_for(category: &str, framework: &str, launch: &str) -> String {
    match Bands::bundled().lookup(category, framework, launch) {
        Some(b) => format!("prediction band from {}", b.describe()),
        None => format!("no measured {category} row of this kind ({framework}{}) to give a prediction band", if launch.is_empty() { String::new() } else { format!(", {launch}") }),
    }
}

fn r4(x: f64) -> f64 {
    libm::round(x * 1e4) / 1e4
}

/// The kind of row a scenario's configuration is compared with: (category, framework, launch).
/// Serving stages use the scenario's engine (the generic engine has no framework of its own:
/// every serving framework's rows are pooled), training its framework's rows
/// (`training.framework`; Megatron's are the rows naming MindSpeed), the operator stage framework (torch_npu) operator rows.
pub fn kind_of(s: &crate::scenario::Scenario, names: &[String], c: &tunelab_search::Config) -> Option<(String, String, String)> {
    use crate::Stage;
    let launch = names.iter().position(|n| n == "launch").and_then(|i| c.0.get(i)).map(|v| v.to_string().trim_matches('"').to_string()).unwrap_or_default();
    match s.stage {
        Stage::Deployment | Stage::Runtime => {
            let e = s.deployment.serving.engine.trim();
            let fw = if e.is_empty() || e == crate::scheduler::price::DEFAULT_ENGINE { "" } else { e };
            Some(("serving".into(), fw.into(), launch))
        }
        // The rows name MindSpeed for Megatron's schedule (the converter's framework names).
        Stage::Training => {
            let fw = match s.training.framework.as_str() {
                "megatron" | "mindspeed" => "mindspeed",
                other => other,
            };
            Some(("training".into(), fw.into(), String::new()))
        }
        Stage::Operator => Some(("op".into(), "torch_npu".into(), String::new())),
        Stage::Diffusion => Some(("diffusion".into(), s.diffusion.as_ref().map(|d| d.framework.clone()).unwrap_or_default(), launch)),
        Stage::Landscape => None,
    }
}

/// The band line for a scenario's configuration ("" for a landscape: its values are measured).
pub fn line_for(s: &crate::scenario::Scenario, names: &[String], c: &tunelab_search::Config) -> String {
    let Some((cat, fw, launch)) = kind_of(s, names, c) else { return String::new() };
    let bands = Bands::bundled();
    if fw.is_empty() {
        // Pool every framework's rows of the category (the generic engine names none).
        let all: Vec<&Band> = bands.bands.iter().filter(|b| b.category == cat).collect();
        if all.is_empty() {
            return format!("no measured {cat} row to give a prediction band");
        }
        let n: usize = all.iter().map(|b| b.values).sum();
        let lo = all.iter().map(|b| b.lo).fold(f64::INFINITY, f64::min);
        let hi = all.iter().map(|b| b.hi).fold(f64::NEG_INFINITY, f64::max);
        return format!("prediction band from measured {cat} rows of every framework (the generic engine names none; pick deployment.serving.engine for a narrower band): {:+.0}% .. {:+.0}%, {n} values", lo * 100.0, hi * 100.0);
    }
    describe_for(&cat, &fw, &launch)
}

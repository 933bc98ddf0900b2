//! Leave-one-source-out validation: how far a prediction lands from a measurement the fit has
//! never seen.
//!
//! Rows from one source share a setup (the same machine, software release, timing method), so
//! leaving out one row at a time flatters a fit: its siblings still pull the parameters toward
//! it. Here every source is left out whole: the fitted parameters (those whose value came from
//! the calibration sets: `source` "fit", "M" or "M2", in the chip profiles and the kernel
//! libraries, and the training frameworks' "fit" constants) are refitted to the other sources' rows, and the held-out source's rows are priced
//! again with the full model at the refitted values.
//!
//! The refit goes layer by layer (`layered_fit`): chip and kernel-library parameters to the
//! operator rows, then framework parameters to the framework rows. Each is one Gauss-Newton
//! step on the log-predictions, linearised around the shipped values (one finite difference
//! per parameter, `1 + params` full evaluations), minimising the
//! weighted |ln(predicted / measured)| (iteratively reweighted least squares) plus a weak pull
//! toward the middle of each parameter's bounds, never toward its shipped value (which the
//! held-out source may have set); values stay inside their bounds. The same refit on every row
//! gives the in-sample figure. Only the refit is linearised: every reported prediction comes
//! from the full model.

use super::{evaluate, Compared, MeasurementSet};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;

/// A fitted parameter of a layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LayerParam {
    /// "chip", "kernel:<library>" or "framework:<training framework>".
    pub layer: String,
    pub name: String,
    pub value: f64,
    pub min: f64,
    pub max: f64,
    pub source: String,
    pub note: String,
    /// The value of the in-sample refit (all sources).
    pub refit: f64,
}

impl LayerParam {
    fn log(&self) -> bool {
        self.min > 0.0 && self.max / self.min >= 4.0
    }
    fn to_unit(&self, v: f64) -> f64 {
        if self.log() {
            (libm::log(v.max(self.min)) - libm::log(self.min)) / (libm::log(self.max) - libm::log(self.min))
        } else {
            (v - self.min) / (self.max - self.min)
        }
    }
    fn from_unit(&self, u: f64) -> f64 {
        let u = u.clamp(0.0, 1.0);
        if self.log() {
            libm::exp(libm::log(self.min) + u * (libm::log(self.max) - libm::log(self.min)))
        } else {
            self.min + u * (self.max - self.min)
        }
    }
}

/// Sources whose values came from the calibration data (refitted without each source).
fn is_fitted(source: &str) -> bool {
    matches!(source, "fit" | "M" | "M2")
}

/// The fitted parameters the rows of `set` depend on: chip fields of the set's chips and the
/// kernel libraries' fields, each once (a chip field shared by several chips moves together).
pub fn fitted_params(set: &MeasurementSet) -> Vec<LayerParam> {
    let mut out: Vec<LayerParam> = Vec::new();
    let mut chips: Vec<&str> = set.rows.iter().map(|r| r.chip.as_str()).collect();
    chips.sort();
    chips.dedup();
    for c in chips {
        let Some(t) = tunelab_sim::device::bundled_profile_text(c) else { continue };
        let Ok(p) = serde_json::from_str::<Json>(t) else { continue };
        for (k, f) in p.get("fields").and_then(Json::as_object).into_iter().flatten() {
            push_param(&mut out, "chip", k, f);
        }
    }
    let (libs, _) = tunelab_sim::kernels::names();
    for lib in libs {
        if let Ok((block, _)) = tunelab_sim::kernels::bundled_block(&lib) {
            for (k, f) in block.get("fields").and_then(Json::as_object).into_iter().flatten() {
                push_param(&mut out, &format!("kernel:{lib}"), k, f);
            }
        }
    }
    // The training frameworks' fitted constants (assets/constants/training.json), when the set
    // has training rows: their source text starts with "fit".
    if set.rows.iter().any(|r| r.stage == "training") {
        let k = tunelab_sim::workload::training_constants();
        for (fw, block) in &k.frameworks {
            for (name, c) in block.all() {
                if (c.source == "fit" || c.source.starts_with("fit:")) && c.min < c.max {
                    out.push(LayerParam { layer: format!("framework:{fw}"), name: name.into(), value: c.value, min: c.min, max: c.max, source: "fit".into(), note: c.source.trim_start_matches("fit:").trim().to_string(), refit: c.value });
                }
            }
        }
    }
    // The serving engines' fitted constants (assets/constants/serving-host.json, source "fit"),
    // when the set has serving rows.
    if set.rows.iter().any(|r| r.category == "serving") {
        for f in crate::stages::scheduler::fitted_fields() {
            out.push(LayerParam { layer: format!("framework:{}", f.engine), name: f.name, value: f.value, min: f.min, max: f.max, source: "fit".into(), note: f.note, refit: f.value });
        }
    }
    out
}

/// The serving engines' fitted constants moved by `du`, as (engine, field, value).
fn host_fields_at(params: &[LayerParam], du: &[f64]) -> Vec<(String, String, f64)> {
    let fitted = crate::stages::scheduler::fitted_fields();
    params
        .iter()
        .zip(du)
        .filter_map(|(q, d)| {
            let engine = q.layer.strip_prefix("framework:")?;
            fitted.iter().any(|f| f.engine == engine && f.name == q.name).then(|| (engine.to_string(), q.name.clone(), q.from_unit(q.to_unit(q.value) + d)))
        })
        .collect()
}

/// The training constants with the framework parameters moved by `du` (unit-space steps).
fn constants_at(params: &[LayerParam], du: &[f64]) -> tunelab_sim::workload::TrainingConstants {
    let mut k = (*tunelab_sim::workload::training_constants()).clone();
    for (q, d) in params.iter().zip(du) {
        if let Some(fw) = q.layer.strip_prefix("framework:") {
            if let Some(c) = k.get_mut(&format!("frameworks.{fw}.{}", q.name)) {
                c.value = q.from_unit(q.to_unit(q.value) + d);
            }
        }
    }
    k
}

/// The set priced with every fitted parameter moved by `du`: chip profiles and kernel
/// libraries through the profiles, training frameworks through their constants.
fn evaluate_at(set: &MeasurementSet, all: &MeasurementSet, params: &[LayerParam], du: &[f64]) -> super::FidelityReport {
    let devices = profiles_at(all, params, du);
    let host = host_fields_at(params, du);
    tunelab_sim::workload::with_training_constants(constants_at(params, du), || crate::stages::scheduler::with_fitted_fields(&host, || evaluate(set, &devices, None)))
}

fn push_param(out: &mut Vec<LayerParam>, layer: &str, k: &str, f: &Json) {
    let num = |key: &str| f.get(key).and_then(Json::as_f64);
    let src = f.get("source").and_then(Json::as_str).unwrap_or("");
    if let (Some(v), Some(lo), Some(hi)) = (num("value"), num("min"), num("max")) {
        if is_fitted(src) && lo < hi && !out.iter().any(|p| p.layer == layer && p.name == k) {
            let note = f.get("note").and_then(Json::as_str).unwrap_or("").to_string();
            out.push(LayerParam { layer: layer.into(), name: k.into(), value: v, min: lo, max: hi, source: src.into(), note, refit: v });
        }
    }
}

/// The chip profiles of `set`'s chips with the parameters moved by `du` (unit-space steps from
/// their shipped values; each chip's own value and bounds), kernel-library values in the
/// profile's `kernel_libraries` table.
pub fn profiles_at(set: &MeasurementSet, params: &[LayerParam], du: &[f64]) -> BTreeMap<String, Json> {
    let mut out = BTreeMap::new();
    for r in &set.rows {
        if out.contains_key(&r.chip) {
            continue;
        }
        let Some(t) = tunelab_sim::device::bundled_profile_text(&r.chip) else { continue };
        let Ok(mut p) = serde_json::from_str::<Json>(t) else { continue };
        let mut libs = serde_json::Map::new();
        for (q, d) in params.iter().zip(du) {
            if q.layer == "chip" {
                // Only where the field has bounds on this chip: a chip that gives the field no
                // bounds (a documented value of another core, e.g. launch_vector_us on 310P3)
                // keeps it.
                let bounded = |f: &serde_json::Map<String, Json>| f.contains_key("min") && f.contains_key("max");
                if let Some(f) = p.get_mut("fields").and_then(|f| f.get_mut(&q.name)).and_then(Json::as_object_mut).filter(|f| bounded(f)) {
                    let num = |k: &str, d: f64| f.get(k).and_then(Json::as_f64).unwrap_or(d);
                    let (v, lo, hi) = (num("value", q.value), num("min", q.min), num("max", q.max));
                    let own = LayerParam { min: lo, max: hi, ..q.clone() };
                    f.insert("value".into(), json!(own.from_unit(own.to_unit(v) + d)));
                }
            } else if let Some(lib) = q.layer.strip_prefix("kernel:") {
                let mut f = tunelab_sim::kernels::bundled_block(lib).ok().and_then(|(b, _)| b.get("fields").and_then(|x| x.get(&q.name)).cloned()).unwrap_or_else(|| json!({"source": "fit"}));
                f["value"] = json!(q.from_unit(q.to_unit(q.value) + d));
                libs.entry(lib.to_string()).or_insert_with(|| json!({})).as_object_mut().map(|o| o.insert(q.name.clone(), f));
            }
        }
        if let Some(o) = p.as_object_mut() {
            o.insert("kernel_libraries".into(), Json::Object(libs));
        }
        out.insert(r.chip.clone(), p);
    }
    out
}

/// The three comparisons: as shipped, refitted on every source (in-sample), and each source
/// predicted by a refit without it (leave-one-source-out).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Loso {
    pub params: Vec<LayerParam>,
    pub shipped: Vec<Compared>,
    pub in_sample: Vec<Compared>,
    pub held_out: Vec<Compared>,
    /// Sources left out (each a refit).
    pub sources: usize,
    /// Each model family predicted by a refit without its rows (leave-one-model-family-out).
    #[serde(default)]
    pub held_out_family: Vec<Compared>,
    /// Each engine release (framework and release) predicted by a refit without its rows
    /// (leave-one-engine-release-out).
    #[serde(default)]
    pub held_out_release: Vec<Compared>,
    #[serde(default)]
    pub families: usize,
    #[serde(default)]
    pub releases: usize,
}

/// The key leave-one-engine-release-out groups by: "framework@release". A row that states no
/// release is not pooled with every other such row into one "unstated" release: nothing says
/// two sources ran the same release, and pooling them once left all MindSpeed evidence out
/// together. Its release is its source's own ("framework@unstated: source"), the one setup the
/// row is known to share, so for such rows leaving the release out leaves the source out.
pub fn release_key(c: &Compared) -> String {
    release_group(&c.framework, &c.release, &c.source)
}

fn row_release_key(r: &super::Row) -> String {
    release_group(r.framework.as_deref().unwrap_or(""), &super::release_of(r), &r.source)
}

fn release_group(framework: &str, release: &str, source: &str) -> String {
    let fw = if framework.trim().is_empty() { "unstated" } else { framework.trim() };
    match release.trim() {
        "" | "unstated" => format!("{fw}@unstated: {source}"),
        r => format!("{fw}@{r}"),
    }
}

/// The three ways of leaving rows out: by source, by model family, by engine release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaveOut {
    Source,
    Family,
    Release,
}

impl LeaveOut {
    pub const ALL: [LeaveOut; 3] = [LeaveOut::Source, LeaveOut::Family, LeaveOut::Release];
    pub fn name(self) -> &'static str {
        match self {
            LeaveOut::Source => "source",
            LeaveOut::Family => "model family",
            LeaveOut::Release => "engine release",
        }
    }
    fn key_compared(self, c: &Compared) -> String {
        match self {
            LeaveOut::Source => c.source.clone(),
            LeaveOut::Family => c.family.clone(),
            LeaveOut::Release => release_key(c),
        }
    }
    fn key_row(self, r: &super::Row) -> String {
        match self {
            LeaveOut::Source => r.source.clone(),
            LeaveOut::Family => super::family_of(r),
            LeaveOut::Release => row_release_key(r),
        }
    }
}

impl Loso {
    /// The held-out predictions of one way of leaving out.
    pub fn held(&self, how: LeaveOut) -> &[Compared] {
        match how {
            LeaveOut::Source => &self.held_out,
            LeaveOut::Family => &self.held_out_family,
            LeaveOut::Release => &self.held_out_release,
        }
    }
}

type Key = (String, String);

fn keyed(rows: &[Compared]) -> BTreeMap<Key, &Compared> {
    rows.iter().map(|c| ((c.case.clone(), c.metric.clone()), c)).collect()
}

/// Runs the validation. Cost: `1 + params` evaluations of the whole set, then one of each
/// source's rows.
pub fn leave_one_source_out(set: &MeasurementSet) -> Loso {
    let params = fitted_params(set);
    let zero = vec![0.0; params.len()];
    let base = evaluate_at(set, set, &params, &zero).rows;
    let bk = keyed(&base);
    let h = 0.05;
    // Jacobian of ln(prediction) in unit steps, one column per parameter.
    let mut steps = Vec::new();
    let mut cols: Vec<BTreeMap<Key, f64>> = Vec::new();
    for (j, p) in params.iter().enumerate() {
        let step = if p.to_unit(p.value) + h > 1.0 { -h } else { h };
        let mut du = zero.clone();
        du[j] = step;
        let rep = evaluate_at(set, set, &params, &du).rows;
        let mut col = BTreeMap::new();
        for c in &rep {
            let k = (c.case.clone(), c.metric.clone());
            if let Some(b) = bk.get(&k) {
                col.insert(k, (libm::log(c.predicted) - libm::log(b.predicted)) / step);
            }
        }
        cols.push(col);
        steps.push(step);
    }
    let rows: Vec<FitRow> = base
        .iter()
        .map(|c| {
            let k = (c.case.clone(), c.metric.clone());
            let j: Vec<f64> = cols.iter().map(|col| col.get(&k).copied().unwrap_or(0.0)).collect();
            FitRow { keys: [c.source.clone(), c.family.clone(), release_key(c)], lower: !c.layer.starts_with("framework"), r: libm::log(c.measured / c.predicted), w: c.weight, j }
        })
        .collect();
    let fit = |skip: Option<(usize, &str)>| -> Vec<f64> { layered_fit(&rows, skip, &params) };
    let all = fit(None);
    let mut params_out = params.clone();
    for (p, d) in params_out.iter_mut().zip(&all) {
        p.refit = round6(p.from_unit(p.to_unit(p.value) + d));
    }
    let in_sample = evaluate_at(set, set, &params, &all).rows;
    // Keep the held-out lists in the shipped order.
    let order: BTreeMap<Key, usize> = base.iter().enumerate().map(|(i, c)| ((c.case.clone(), c.metric.clone()), i)).collect();
    let mut lists: Vec<(Vec<Compared>, usize)> = Vec::new();
    for (ki, how) in LeaveOut::ALL.iter().enumerate() {
        let mut keys: Vec<String> = base.iter().map(|c| how.key_compared(c)).collect();
        keys.sort();
        keys.dedup();
        let mut held = Vec::new();
        for k in &keys {
            let du = fit(Some((ki, k.as_str())));
            let mut only = set.clone();
            only.rows.retain(|r| &how.key_row(r) == k);
            held.extend(evaluate_at(&only, set, &params, &du).rows);
        }
        held.sort_by_key(|c| order.get(&(c.case.clone(), c.metric.clone())).copied().unwrap_or(usize::MAX));
        lists.push((held, keys.len()));
    }
    let (held_out_release, releases) = lists.pop().unwrap_or_default();
    let (held_out_family, families) = lists.pop().unwrap_or_default();
    let (held_out, sources) = lists.pop().unwrap_or_default();
    Loso { params: params_out, shipped: base, in_sample, held_out, sources, held_out_family, held_out_release, families, releases }
}

/// One compared value in the linearised refit: its source, whether it is evidence for a lower
/// layer (chip or kernel library) rather than a framework, ln(measured / predicted), its weight
/// and the Jacobian row.
struct FitRow {
    /// Source, model family, engine release (the keys the three leave-outs group by).
    keys: [String; 3],
    lower: bool,
    r: f64,
    w: f64,
    j: Vec<f64>,
}

/// The refit, layer by layer: the chip's and kernel libraries' parameters to the operator rows
/// (the evidence of those layers), then the frameworks' parameters to the serving, training and
/// pipeline rows with the lower layers held at their refitted values. A framework's error (a
/// host cost, a fusion it lacks) then moves that framework's parameters, never the matmul
/// pipeline every framework shares; a layer without its own parameters keeps its error in the
/// table, where a reader sees it. Rows of `skip` (a held-out source) are left out.
fn layered_fit(rows: &[FitRow], skip: Option<(usize, &str)>, params: &[LayerParam]) -> Vec<f64> {
    let n = params.len();
    let mut du = vec![0.0; n];
    for lower in [true, false] {
        let idx: Vec<usize> = (0..n).filter(|&i| params[i].layer.starts_with("framework") != lower).collect();
        if idx.is_empty() {
            continue;
        }
        let sub: Vec<LayerParam> = idx.iter().map(|&i| params[i].clone()).collect();
        let mids: Vec<f64> = sub.iter().map(|p| 0.5 - p.to_unit(p.value)).collect();
        let use_rows: Vec<(f64, f64, Vec<f64>)> = rows
            .iter()
            .filter(|r| r.lower == lower && skip.map_or(true, |(k, key)| r.keys[k] != key))
            .map(|r| {
                // What the layers fitted before explain is taken off the residual.
                let done: f64 = r.j.iter().zip(&du).map(|(a, b)| a * b).sum();
                (r.r - done, r.w, idx.iter().map(|&i| r.j[i]).collect())
            })
            .collect();
        let step = irls(&use_rows.iter().map(|(r, w, j)| (*r, *w, j.as_slice())).collect::<Vec<_>>(), &mids, &sub);
        for (k, &i) in idx.iter().enumerate() {
            du[i] = step[k];
        }
    }
    du
}

fn round6(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let d = libm::floor(libm::log10(x.abs())) as i32;
    let s = libm::pow(10.0, (5 - d) as f64);
    libm::round(x * s) / s
}

/// The unit-space step minimising sum w |r - J du| (by reweighted least squares) plus a weak
/// pull of each parameter toward the middle of its bounds (`mids`: that middle minus the
/// shipped value), kept inside the bounds.
fn irls(rows: &[(f64, f64, &[f64])], mids: &[f64], params: &[LayerParam]) -> Vec<f64> {
    const PULL: f64 = 0.02;
    let n = mids.len();
    let mut du = vec![0.0; n];
    if n == 0 || rows.is_empty() {
        return du;
    }
    let wsum: f64 = rows.iter().map(|r| r.1).sum::<f64>().max(1e-9);
    for _ in 0..25 {
        let mut a = vec![vec![0.0; n]; n];
        let mut b = vec![0.0; n];
        for (r, w, j) in rows {
            let e = r - j.iter().zip(&du).map(|(x, y)| x * y).sum::<f64>();
            let wt = w / wsum / e.abs().max(0.02);
            for p in 0..n {
                b[p] += wt * j[p] * r;
                for q in 0..n {
                    a[p][q] += wt * j[p] * j[q];
                }
            }
        }
        for p in 0..n {
            a[p][p] += PULL;
            b[p] += PULL * mids[p];
        }
        let Some(x) = solve(a, b) else { break };
        // Inside the bounds: the unit position of each parameter stays in [0, 1].
        du = x.iter().zip(params).map(|(d, p)| { let u = p.to_unit(p.value); (u + d).clamp(0.0, 1.0) - u }).collect();
    }
    du
}

/// Gaussian elimination with partial pivoting (n is a dozen).
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for c in 0..n {
        let p = (c..n).max_by(|x, y| a[*x][c].abs().total_cmp(&a[*y][c].abs()))?;
        if a[p][c].abs() < 1e-12 {
            return None;
        }
        a.swap(c, p);
        b.swap(c, p);
        for r in c + 1..n {
            let f = a[r][c] / a[c][c];
            for k in c..n {
                a[r][k] -= f * a[c][k];
            }
            b[r] -= f * b[c];
        }
    }
    let mut x = vec![0.0; n];
    for c in (0..n).rev() {
        x[c] = (b[c] - (c + 1..n).map(|k| a[c][k] * x[k]).sum::<f64>()) / a[c][c];
    }
    Some(x)
}

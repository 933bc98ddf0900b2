//! Calibration: fitting a chip profile's declared efficiency and overhead parameters to
//! measurements, with Tunelab's own search engine (the tuner tunes the simulator).
//!
//! Which parameters: every `fields.<name>` of the profile that declares numeric `min` and `max`
//! (physically plausible bounds, written next to the value by the device model's author). No
//! list lives here, so a parameter added to the profile becomes fittable without code.
//!
//! The loss is the weighted mean of |ln(predicted / measured)| over the compared values
//! (`fidelity::evaluate`, the same path `tunelab fidelity` uses), so a 2x miss counts the same
//! either way and no single large value dominates; a value that was predicted with the starting
//! profile but becomes infeasible costs ln(10). The search space is one float parameter per
//! fittable field within its bounds (log scale when the bounds span 4x or more); the study is
//! warm-started at the profile's own values, so a fit never ends worse than where it started.
//! Leave one source out: for each source of the covered rows, the fit is redone without its rows and they are
//! predicted with that fit; its error is what a new, unseen measurement can expect.

pub mod encoding;
pub mod framework;
pub mod msprof;
mod profile;
mod text;

pub use profile::{compact_profile, fittable, fitted_profile, with_values, FitParam};
use profile::round_sig;

use crate::evidence::fidelity::{evaluate, median, FidelityReport, MeasurementSet};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use tunelab_search::{strategies, Config, FnObjective, Metric, Outcome, Param, Rng, Space, Strategy, Study, StudyOptions, Trial, TrialState, Value};

/// Evaluations of each leave-one-source-out refit by default. A refit starts warm at the
/// profile's values and moves the few parameters the left-out rows pull on; 30 evaluations
/// reach most of the full fit's improvement on the shared sets, and with at most
/// `MAX_LOO_FOLDS` refits a 200-operator op summary finishes in well under a minute (it ran
/// past ten minutes with 60 evaluations and one refit per operator).
pub const DEFAULT_LOO_BUDGET: usize = 30;

/// Most leave-out refits: a set with more sources (or, with one source, more rows) than this
/// deals them, in name order, round-robin into this many folds; each fold's rows are left out
/// together, so no value is ever predicted by a fit that saw its own source.
pub const MAX_LOO_FOLDS: usize = 10;

/// Settings of a fit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    /// A strategy of the search engine ("auto", "tpe", "annealing", "bayes", ...).
    pub strategy: String,
    /// Evaluations of the full fit.
    pub budget: usize,
    /// Evaluations of each leave-one-source-out fit (0: skip leave-one-source-out).
    pub loo_budget: usize,
    pub seed: u64,
    /// Fit on every row of the set (each predicted on its own chip's profile with the fitted
    /// values substituted) instead of only the rows measured on the profile's chip.
    pub family: bool,
    /// Weight of the prior toward the starting values (0: none; 0.2: moving every parameter
    /// across its whole range costs as much as a mean |ln ratio| of 0.2 over the rows).
    pub prior: f64,
    /// Only rows of these categories ("op", "serving", "training"); empty: all.
    pub categories: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options { strategy: "auto".into(), budget: 200, loo_budget: DEFAULT_LOO_BUDGET, seed: 1, family: false, prior: 0.2, categories: Vec::new() }
    }
}

/// One compared value before and after the fit, with its leave-one-source-out error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RowFit {
    pub case: String,
    pub id: String,
    pub metric: String,
    pub unit: String,
    pub measured: f64,
    pub before: f64,
    pub after: Option<f64>,
    pub error_before: f64,
    pub error_after: Option<f64>,
    /// The error when the value's whole source is left out of the fit (leave one source out;
    /// row by row for a single-source set such as an msprof op summary).
    pub error_loo: Option<f64>,
}

/// A fitted parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fitted {
    pub name: String,
    pub before: f64,
    pub after: f64,
    pub min: f64,
    pub max: f64,
    pub source_before: String,
}

/// The result of `calibrate`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub device: String,
    pub measurements: String,
    pub digest: String,
    pub strategy: String,
    pub evaluations: usize,
    pub params: Vec<Fitted>,
    pub rows: Vec<RowFit>,
    /// Weighted mean |ln(pred/meas)| before and after.
    pub loss_before: f64,
    pub loss_after: f64,
    pub median_abs_error_before: Option<f64>,
    pub median_abs_error_after: Option<f64>,
    pub median_abs_error_loo: Option<f64>,
    /// Rows whose values the fit used.
    pub rows_used: usize,
    /// The calibrated profile (file JSON).
    pub profile: Json,
}

/// The chips whose rows a fit uses.
fn chips_for(set: &MeasurementSet, device: &str, family: bool) -> Vec<String> {
    let mut v: Vec<String> = if family { set.rows.iter().map(|r| r.chip.clone()).collect() } else { vec![device.to_string()] };
    v.sort();
    v.dedup();
    v
}

/// The profile file of every chip the fit touches: the given profile for `device`, bundled
/// files for the others (family fits).
fn base_profiles(device: &str, profile: &Json, chips: &[String]) -> BTreeMap<String, Json> {
    let mut m = BTreeMap::new();
    for c in chips {
        if c.eq_ignore_ascii_case(device) {
            m.insert(c.clone(), profile.clone());
        } else if let Some(t) = tunelab_sim::device::bundled_profile_text(c) {
            if let Ok(j) = serde_json::from_str::<Json>(t) {
                m.insert(c.clone(), j);
            }
        }
    }
    m
}

/// Loss of a report: weighted mean |ln(p/m)|, with `baseline` keys missing from it at ln(10).
fn loss(rep: &FidelityReport, expected: &[(String, String)], skip_id: Option<&str>) -> f64 {
    let mut got: BTreeMap<(String, String), (f64, f64)> = BTreeMap::new();
    for c in &rep.rows {
        got.insert((c.case.clone(), c.metric.clone()), (libm::fabs(libm::log(c.predicted / c.measured)), c.weight));
    }
    let (mut s, mut w) = (0.0, 0.0);
    for (case, metric) in expected {
        if skip_id.is_some_and(|id| case == id || case.starts_with(&format!("{id}/"))) {
            continue;
        }
        match got.get(&(case.clone(), metric.clone())) {
            Some((e, wt)) => {
                s += e * wt;
                w += wt;
            }
            None => {
                s += libm::log(10.0);
                w += 1.0;
            }
        }
    }
    if w > 0.0 { s / w } else { 0.0 }
}

/// A profile without the text that does not price anything: `about`, the informational
/// `derived` block, and each field's `note` (values, bounds and sources stay).
fn lean(profile: &Json) -> Json {
    let mut p = compact_profile(profile);
    for table in ["fields", "kernel_libraries"] {
        let Some(t) = p.get_mut(table).and_then(Json::as_object_mut) else { continue };
        for (_, f) in t.iter_mut() {
            if let Some(o) = f.as_object_mut() {
                o.remove("note");
                // A kernel_libraries entry is {library: {field: {...}}}: one level further.
                for (_, g) in o.iter_mut() {
                    if let Some(g) = g.as_object_mut() {
                        g.remove("note");
                    }
                }
            }
        }
    }
    p
}

/// The loss of parameter values `vals` on `set` (profiles of `chips` with the values substituted).
fn loss_at(set: &MeasurementSet, profiles: &BTreeMap<String, Json>, params: &[FitParam], chips: &[String], expected: &[(String, String)], vals: &[f64], prior: f64) -> f64 {
    let devs: BTreeMap<String, Json> = profiles.iter().map(|(c, p)| (c.clone(), with_values(p, params, vals))).collect();
    loss(&framework::scoped(params, vals, || evaluate(set, &devs, Some(chips))), expected, None) + prior * prior_penalty(params, vals)
}

/// Where a value sits in its bounds, 0..=1 (log scale when the bounds span 4x or more).
fn unit(p: &FitParam, v: f64) -> f64 {
    if p.min > 0.0 && p.max / p.min >= 4.0 {
        (libm::log(v.max(p.min)) - libm::log(p.min)) / (libm::log(p.max) - libm::log(p.min))
    } else {
        (v - p.min) / (p.max - p.min)
    }
}

/// Mean squared move of the parameters from their starting (documented) values, in units of
/// their bound ranges: the prior that keeps a fit from spending parameters on rows they do not
/// explain (a move across the whole range costs `prior`).
fn prior_penalty(params: &[FitParam], vals: &[f64]) -> f64 {
    if params.is_empty() {
        return 0.0;
    }
    params.iter().zip(vals).map(|(p, v)| (unit(p, *v) - unit(p, p.value)).powi(2)).sum::<f64>() / params.len() as f64
}

/// The fit's search space: one float per parameter within its bounds.
fn fit_space(params: &[FitParam]) -> Result<Space, String> {
    let space_params: Vec<Param> = params
        .iter()
        .map(|p| {
            let log = p.min > 0.0 && p.max / p.min >= 4.0;
            Param::float(&p.name, p.min, p.max, log, None)
        })
        .collect();
    Space::new(space_params, &[])
}

fn values_of(c: &Config) -> Vec<f64> {
    c.0.iter().map(|v| v.as_f64().unwrap_or(f64::NAN)).collect()
}

/// A fit in progress: a study of the search engine over the fittable parameters, stepped a few
/// evaluations at a time (the browser keeps its page responsive between steps).
pub struct Calibrator {
    set: MeasurementSet,
    digest: String,
    device: String,
    profile: Json,
    params: Vec<FitParam>,
    chips: Vec<String>,
    profiles: BTreeMap<String, Json>,
    opts: Options,
    expected: Vec<(String, String)>,
    before: FidelityReport,
    loss_before: f64,
    study: Study,
    strategy: Box<dyn Strategy>,
    rng: Rng,
}

impl Calibrator {
    /// Checks the inputs and prices the starting profile. `digest` names the measurement file.
    pub fn new(set: &MeasurementSet, digest: &str, device: &str, profile: &Json, opts: &Options) -> Result<Calibrator, String> {
        Self::with_params(set, digest, device, profile, fittable(profile), opts)
    }

    /// `new` fitting `params` instead of the profile's fields (the framework layer:
    /// `framework::params(engine)`; the profile still prices the rows' chip).
    pub fn with_params(set: &MeasurementSet, digest: &str, device: &str, profile: &Json, params: Vec<FitParam>, opts: &Options) -> Result<Calibrator, String> {
        if !(opts.prior.is_finite() && opts.prior >= 0.0) {
            return Err(format!("prior: must be a number >= 0, got {}", opts.prior));
        }
        let mut set = set.clone();
        if !opts.categories.is_empty() {
            set.rows.retain(|r| opts.categories.iter().any(|c| c == &r.category));
        }
        let set = &set;
        tunelab_sim::device::Device::from_json(&profile.to_string()).map_err(|e| format!("--device {device}: {e}"))?;
        if params.is_empty() {
            return Err(format!("the {device} profile declares no fittable parameters (fields with numeric 'min' and 'max' bounds)"));
        }
        if opts.budget > crate::spec::scenario::MAX_BUDGET || opts.loo_budget > crate::spec::scenario::MAX_BUDGET {
            return Err(format!("budget: at most {} evaluations per fit", crate::spec::scenario::MAX_BUDGET));
        }
        let chips = chips_for(set, device, opts.family);
        if !set.rows.iter().any(|r| chips.iter().any(|c| c.eq_ignore_ascii_case(&r.chip))) {
            let mut have: Vec<&str> = set.rows.iter().map(|r| r.chip.as_str()).collect();
            have.sort();
            have.dedup();
            return Err(format!("no measurement row is on {device} (rows are on: {}); pass --family to fit on every row of the set", have.join(", ")));
        }
        // Priced without their prose (`about`, `derived`, each field's `note`): every row's
        // scenario carries the profile inline, and the text was a third of each evaluation.
        let profiles: BTreeMap<String, Json> = base_profiles(device, profile, &chips).into_iter().map(|(c, p)| (c, lean(&p))).collect();
        let before = evaluate(set, &profiles, Some(&chips));
        if before.rows.is_empty() {
            return Err(format!("none of the {device} rows can be predicted, so there is nothing to fit (first reason: {})", before.unexpressed.first().map(|u| u.reason.as_str()).unwrap_or("none")));
        }
        let expected: Vec<(String, String)> = before.rows.iter().map(|c| (c.case.clone(), c.metric.clone())).collect();
        let loss_before = loss(&before, &expected, None);
        let metrics = vec![Metric::minimize("loss", "")];
        let mut study = Study::new(fit_space(&params)?, metrics, StudyOptions::budget(opts.budget.max(1)))?;
        let start: Vec<f64> = params.iter().map(|p| p.value).collect();
        // The starting profile is a free trial: the fit never ends worse than it began.
        let warm = Trial { id: 0, config: Config(start.iter().map(|v| Value::Float(*v)).collect()), state: TrialState::Ok, values: vec![loss_before], reason: None, warm: true, evaluation: 0 };
        study.warm_start(std::slice::from_ref(&warm));
        let strategy = strategies::by_name(&opts.strategy, &json!({}))?;
        Ok(Calibrator {
            set: set.clone(),
            digest: digest.to_string(),
            device: device.to_string(),
            profile: profile.clone(),
            params,
            chips,
            profiles,
            opts: opts.clone(),
            expected,
            before,
            loss_before,
            study,
            strategy,
            rng: Rng::seed_from_u64(opts.seed),
        })
    }

    /// Up to `n` evaluations of the fit; true once it is done.
    pub fn step(&mut self, n: usize) -> bool {
        if self.opts.budget == 0 {
            return true;
        }
        let prior = self.opts.prior;
        let Calibrator { set, params, chips, profiles, expected, study, strategy, rng, .. } = self;
        let mut obj = FnObjective::new(vec![Metric::minimize("loss", "")], |c: &Config| {
            let vals = values_of(c);
            if vals.iter().any(|v| !v.is_finite()) {
                return Outcome::Failed("non-numeric parameter".into());
            }
            Outcome::Ok(vec![loss_at(set, profiles, params, chips, expected, &vals, prior)])
        });
        for _ in 0..n {
            if study.step(&mut **strategy, &mut obj, rng).is_some() {
                return true;
            }
        }
        study.is_done()
    }

    /// (evaluations done, budget).
    pub fn progress(&self) -> (usize, usize) {
        (self.study.evaluations(), self.opts.budget)
    }

    /// The starting profile's comparison.
    pub fn before(&self) -> &FidelityReport {
        &self.before
    }

    /// The best values found so far and their loss.
    fn best(&self) -> (Vec<f64>, f64) {
        match self.study.best() {
            Some(t) => (values_of(&t.config), t.values.first().copied().unwrap_or(self.loss_before)),
            None => (self.params.iter().map(|p| p.value).collect(), self.loss_before),
        }
    }

    /// Finishes: prices the fitted profile, runs the leave-one-source-out fits (`opts.loo_budget`
    /// evaluations each; 0 skips them) and writes the calibrated profile.
    pub fn finish(&self) -> Result<Calibration, String> {
        self.finish_with(&mut |_, _| {})
    }

    /// The leave-out groups of the refits: every source of the compared rows (a single-source
    /// set: every row), dealt into at most `MAX_LOO_FOLDS` folds. Each fold is a list of row ids.
    pub fn loo_folds(&self) -> Vec<Vec<String>> {
        if self.opts.loo_budget == 0 {
            return Vec::new();
        }
        let set = &self.set;
        let used: std::collections::BTreeSet<&str> = self.before.rows.iter().map(|c| c.id.as_str()).collect();
        let mut sources: Vec<&str> = set.rows.iter().filter(|r| used.contains(r.id.as_str())).map(|r| r.source.as_str()).collect();
        sources.sort();
        sources.dedup();
        let by_row = sources.len() < 2;
        let key = |r: &crate::fidelity::Row| if by_row { r.id.clone() } else { r.source.clone() };
        let mut groups: Vec<String> = set.rows.iter().filter(|r| used.contains(r.id.as_str())).map(key).collect();
        groups.sort();
        groups.dedup();
        let n = groups.len().min(MAX_LOO_FOLDS);
        let mut folds: Vec<Vec<String>> = vec![Vec::new(); n];
        for (i, g) in groups.iter().enumerate() {
            folds[i % n].extend(set.rows.iter().filter(|r| key(r) == *g).map(|r| r.id.clone()));
        }
        folds
    }

    /// `finish`, telling `progress` (refits done, refits planned) before each refit and at the end.
    pub fn finish_with(&self, progress: &mut dyn FnMut(usize, usize)) -> Result<Calibration, String> {
        let (vals, _) = self.best();
        let l_after = loss_at(&self.set, &self.profiles, &self.params, &self.chips, &self.expected, &vals, 0.0);
        let (set, params, chips, profiles, opts) = (&self.set, &self.params, &self.chips, &self.profiles, &self.opts);
        let fitted_profiles: BTreeMap<String, Json> = profiles.iter().map(|(c, p)| (c.clone(), with_values(p, params, &vals))).collect();
        let after = framework::scoped(params, &vals, || evaluate(set, &fitted_profiles, Some(chips)));
        // Leave sources out: refit without every row of a source, predict those rows. Rows of
        // one source share a setup, so leaving out single rows would flatter the fit. A set
        // with a single source (an msprof op summary) is left out row by row; more than
        // MAX_LOO_FOLDS groups are dealt into that many folds.
        let mut loo: BTreeMap<(String, String), f64> = BTreeMap::new();
        let folds = self.loo_folds();
        for (k, ids) in folds.iter().enumerate() {
            progress(k, folds.len());
            let out = |case: &str| ids.iter().any(|id| case == id || case.starts_with(&format!("{id}/")));
            let mut rest = set.clone();
            rest.rows.retain(|r| !ids.contains(&r.id));
            let exp_rest: Vec<(String, String)> = self.expected.iter().filter(|(c, _)| !out(c)).cloned().collect();
            if exp_rest.is_empty() {
                continue;
            }
            let v = fit_values(&rest, profiles, params, chips, opts, &exp_rest)?;
            let devs: BTreeMap<String, Json> = profiles.iter().map(|(c, p)| (c.clone(), with_values(p, params, &v))).collect();
            let mut only = set.clone();
            only.rows.retain(|r| ids.contains(&r.id));
            for c in framework::scoped(params, &v, || evaluate(&only, &devs, Some(chips))).rows {
                loo.insert((c.case, c.metric), c.error);
            }
        }
        progress(folds.len(), folds.len());
        let after_map: BTreeMap<(String, String), (f64, f64)> = after.rows.iter().map(|c| ((c.case.clone(), c.metric.clone()), (c.predicted, c.error))).collect();
        let rows: Vec<RowFit> = self
            .before
            .rows
            .iter()
            .map(|c| {
                let key = (c.case.clone(), c.metric.clone());
                let a = after_map.get(&key);
                RowFit {
                    case: c.case.clone(),
                    id: c.id.clone(),
                    metric: c.metric.clone(),
                    unit: c.unit.clone(),
                    measured: c.measured,
                    before: c.predicted,
                    after: a.map(|x| x.0),
                    error_before: c.error,
                    error_after: a.map(|x| x.1),
                    error_loo: loo.get(&key).copied(),
                }
            })
            .collect();
        let abs = |v: Vec<f64>| median(&v.iter().map(|e| e.abs()).collect::<Vec<_>>());
        let fitted: Vec<Fitted> = params
            .iter()
            .zip(&vals)
            .map(|(p, v)| Fitted { name: p.name.clone(), before: p.value, after: round_sig(*v), min: p.min, max: p.max, source_before: p.source.clone() })
            .collect();
        let mut ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        ids.sort();
        ids.dedup();
        let out_profile = fitted_profile(&self.profile, &fitted, &set.name, &self.digest, l_after, rows.len());
        Ok(Calibration {
            device: self.device.clone(),
            measurements: set.name.clone(),
            digest: self.digest.clone(),
            strategy: opts.strategy.clone(),
            evaluations: self.study.evaluations(),
            median_abs_error_before: abs(rows.iter().map(|r| r.error_before).collect()),
            median_abs_error_after: abs(rows.iter().filter_map(|r| r.error_after).collect()),
            median_abs_error_loo: abs(rows.iter().filter_map(|r| r.error_loo).collect()),
            rows_used: ids.len(),
            params: fitted,
            rows,
            loss_before: self.loss_before,
            loss_after: l_after,
            profile: out_profile,
        })
    }
}

/// A whole fit (leave-one-source-out refits use this) with `opts.loo_budget` evaluations.
fn fit_values(set: &MeasurementSet, profiles: &BTreeMap<String, Json>, params: &[FitParam], chips: &[String], opts: &Options, expected: &[(String, String)]) -> Result<Vec<f64>, String> {
    let start: Vec<f64> = params.iter().map(|p| p.value).collect();
    let l0 = loss_at(set, profiles, params, chips, expected, &start, opts.prior);
    let metrics = vec![Metric::minimize("loss", "")];
    let mut study = Study::new(fit_space(params)?, metrics.clone(), StudyOptions::budget(opts.loo_budget.max(1)))?;
    let warm = Trial { id: 0, config: Config(start.iter().map(|v| Value::Float(*v)).collect()), state: TrialState::Ok, values: vec![l0], reason: None, warm: true, evaluation: 0 };
    study.warm_start(std::slice::from_ref(&warm));
    let mut strategy = strategies::by_name(&opts.strategy, &json!({}))?;
    let mut obj = FnObjective::new(metrics, |c: &Config| Outcome::Ok(vec![loss_at(set, profiles, params, chips, expected, &values_of(c), opts.prior)]));
    let mut rng = Rng::seed_from_u64(opts.seed);
    study.run(&mut *strategy, &mut obj, &mut rng);
    Ok(study.best().map(|t| values_of(&t.config)).unwrap_or(start))
}

/// Fits the profile of `device` (file JSON `profile`) to `set` in one call (the CLI).
pub fn calibrate(set: &MeasurementSet, digest: &str, device: &str, profile: &Json, opts: &Options) -> Result<Calibration, String> {
    let mut c = Calibrator::new(set, digest, device, profile, opts)?;
    while !c.step(64) {}
    c.finish()
}

//! The report a run ends in: before (framework defaults) and after (best found) on every metric,
//! the measures taken (each knob that changed), the best configuration, and exports: JSON, a CSV
//! of trials, and for the deployment stage vLLM-Ascend launch arguments and a MindIE-style
//! service configuration.
//!
//! Why computed from the run alone (no clock, no environment): the same scenario must give the
//! same report in the CLI and the browser, byte for byte.

use crate::run::Run;
use crate::spec::scenario::{DeviceRef, ModelRef, Stage};
use serde::Serialize;
use std::collections::BTreeMap;
#[cfg(feature = "report-timeline")]
use crate::stages::diffusion::timeline::timeline;
use crate::stages::diffusion::timeline::{describe, Timeline};
use tunelab_search::{Direction, Outcome, TrialState, Value};

/// A run's report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub name: String,
    pub stage: String,
    pub model: String,
    pub device: String,
    pub seed: u64,
    /// Evaluations per strategy (the focused local search adds to it).
    pub budget: usize,
    /// The primary metric ("best" is in it).
    pub metric: String,
    /// How far predictions of this kind landed from measurements the model had not seen
    /// (leave-one-source-out residuals of comparable rows; `fidelity::bands`), or why there is
    /// no such band. Not the data types' numerical error (`rel_error`).
    pub prediction_band: String,
    pub unit: String,
    pub direction: Direction,
    /// Best primary value over all strategies (serde_json's formatting; see `format_best`).
    pub best: Option<f64>,
    /// The strategy that found it.
    pub best_strategy: Option<String>,
    /// Parameter -> value of the best configuration.
    pub best_config: BTreeMap<String, Value>,
    /// The baseline (framework defaults) and why it is infeasible, if it is.
    pub baseline_config: BTreeMap<String, Value>,
    pub baseline_infeasible: Option<String>,
    /// Every metric before and after.
    pub comparison: Vec<Change>,
    /// Each knob that differs between the baseline and the best configuration.
    pub measures: Vec<Measure>,
    pub strategies: Vec<StrategyResult>,
    /// Distinct evaluations, all strategies together.
    pub evaluations: usize,
    /// `Run::digest`: equal digests mean bit-identical trials (native vs. browser checks).
    pub trace_digest: String,
    /// Warnings (model loading, assumptions) and the simulation caveat.
    pub notes: Vec<String>,
    /// Configurations a warm start transferred from similar cases, with their values on THIS
    /// scenario (re-priced; nothing measured on another scenario is reported).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub transferred: Vec<Transferred>,
    /// Launch settings for serving stacks (deployment stage only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deployment: Option<DeploymentExport>,
    /// The landscape stage's true optimum and each strategy's distance to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub landscape: Option<crate::stages::landscape::LandscapeReport>,
    /// Diffusion stage: the pipeline timeline of the baseline and of the best configuration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<PipelineReport>,
    /// The language model's identity (`ModelDesc::identity_line`), its layer stack, and what
    /// Tunelab approximates in it, one line each (empty for other models).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub model_identity: Vec<String>,
    /// A serving result bound by the offered load, said so (`stages::capacity::load_bound`); in
    /// capacity mode, an answer bound by the rate search's ceiling or by the sample
    /// (`stages::capacity::bound_note`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_bound: Option<String>,
    /// The headline's spread over request samples, when priced (`Report::with_spread`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<crate::stages::capacity::spread::Spread>,
}

/// The pipeline of a diffusion run: per call (text encoders, steps, VAE laid end to end) and per
/// step (denoiser, cached step, scheduler and loop), priced by the stage's objective.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PipelineReport {
    pub baseline: Timeline,
    /// None when nothing feasible was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best: Option<Timeline>,
}

impl PipelineReport {
    /// The timelines of a diffusion run's baseline and best (None for another stage).
    #[cfg(feature = "report-timeline")]
    fn of(run: &Run, best: Option<&tunelab_search::Config>) -> Option<PipelineReport> {
        if run.scenario().stage != Stage::Diffusion {
            return None;
        }
        let s = run.scenario();
        let baseline = timeline(s, Some(run.baseline_config())).ok()?;
        Some(PipelineReport { baseline, best: best.and_then(|c| timeline(s, Some(c)).ok()) })
    }

    /// Built without the pricing (the release page's UI module): no timeline in the report.
    #[cfg(not(feature = "report-timeline"))]
    fn of(_run: &Run, _best: Option<&tunelab_search::Config>) -> Option<PipelineReport> {
        None
    }

    fn to_text(&self) -> String {
        let mut out = String::new();
        for (label, t) in [("baseline", Some(&self.baseline)), ("best", self.best.as_ref())] {
            let Some(t) = t else { continue };
            out.push_str(&format!("\npipeline timeline, {label}:\n"));
            for line in describe(t) {
                out.push_str(&line);
                out.push('\n');
            }
            out.push_str(&format!("  per step: {}\n", t.per_step.iter().map(|p| format!("{} {:.2} ms", p.0, p.1)).collect::<Vec<_>>().join(", ")));
        }
        out
    }
}

/// A configuration transferred by a warm start, priced on this scenario.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Transferred {
    pub config: BTreeMap<String, Value>,
    /// The primary metric on this scenario (None when infeasible here).
    pub value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One metric before and after.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    pub metric: String,
    pub unit: String,
    pub before: Option<f64>,
    pub after: Option<f64>,
    /// (after - before) / before in percent.
    pub change_pct: Option<f64>,
    /// True when the change goes the metric's preferred way.
    pub improved: Option<bool>,
    /// The change is within the headline's spread over request samples: not a gain.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub within_spread: bool,
}

/// One knob changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Measure {
    pub param: String,
    pub before: Value,
    pub after: Value,
}

/// One strategy's outcome.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StrategyResult {
    pub strategy: String,
    pub best: Option<f64>,
    pub best_config: BTreeMap<String, Value>,
    pub evaluations: usize,
    pub infeasible: usize,
    pub failed: usize,
    pub stop_reason: Option<String>,
    /// (evaluations, best) at each improvement.
    pub convergence: Vec<(usize, f64)>,
}


impl Report {
    /// Builds the report of a run (finished or not: it reports what has been found so far).
    pub fn from_run(run: &Run) -> Report {
        let r = Report::from_run_without_model(run);
        let parts = model_parts(run.scenario(), &r.best_config, r.best_strategy.is_some());
        r.with_model_parts(parts)
    }

    /// The parts `from_run` adds from the model (`model_parts`) set in: the page builds its
    /// report with `from_run_without_model` (its first-load module reads no model) and its
    /// engine worker answers the model's parts.
    pub fn with_model_parts(mut self, parts: ModelParts) -> Report {
        self.model_identity = parts.model_identity;
        self.deployment = parts.deployment;
        self
    }

    /// `from_run` without the parts read from the model (its identity lines and a deployment's
    /// export: `model_parts`), which stay empty.
    pub fn from_run_without_model(run: &Run) -> Report {
        let s = run.scenario();
        let names = run.space().names().to_vec();
        let metrics = run.metrics();
        let named = |t: &tunelab_search::Config| -> BTreeMap<String, Value> { names.iter().cloned().zip(t.0.iter().cloned()).collect() };
        let best = run.overall_best();
        let best_config = best.map(|(_, t)| named(&t.config)).unwrap_or_default();
        let baseline_config = named(run.baseline_config());
        let (before, baseline_infeasible) = match run.baseline() {
            Outcome::Ok(v) => (Some(v.clone()), None),
            Outcome::Infeasible(r) | Outcome::Failed(r) => (None, Some(r.clone())),
        };
        let after = best.map(|(_, t)| t.values.clone());
        let comparison = metrics
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let b = before.as_ref().and_then(|v| v.get(i).copied());
                let a = after.as_ref().and_then(|v| v.get(i).copied());
                let (change_pct, improved) = match (b, a) {
                    (Some(b), Some(a)) => (
                        (b != 0.0).then(|| round4((a - b) / b.abs() * 100.0)),
                        (a != b).then(|| m.signed(a) < m.signed(b)),
                    ),
                    _ => (None, None),
                };
                Change { metric: m.name.clone(), unit: m.unit.clone(), before: b, after: a, change_pct, improved, within_spread: false }
            })
            .collect();
        let measures = best
            .map(|(_, t)| {
                names
                    .iter()
                    .zip(run.baseline_config().0.iter().zip(&t.config.0))
                    .filter(|(_, (b, a))| b != a)
                    .map(|(n, (b, a))| Measure { param: n.clone(), before: b.clone(), after: a.clone() })
                    .collect()
            })
            .unwrap_or_default();
        let strategies = run
            .lanes()
            .iter()
            .map(|l| {
                let count = |st: TrialState| l.study.trials().iter().filter(|t| !t.warm && t.state == st).count();
                StrategyResult {
                    strategy: l.spec.name.clone(),
                    best: l.study.best_value(),
                    best_config: l.study.best().map(|t| named(&t.config)).unwrap_or_default(),
                    evaluations: l.study.evaluations(),
                    infeasible: count(TrialState::Infeasible),
                    failed: count(TrialState::Failed),
                    stop_reason: l.study.stop_reason().map(|r| r.message()),
                    convergence: l.study.convergence().to_vec(),
                }
            })
            .collect();
        let mut notes = run.notes().to_vec();
        if best.is_none() && run.evaluations() > 0 {
            notes.push(no_feasible_summary(run));
        }
        let landscape = crate::stages::landscape::LandscapeReport::of(run);
        if landscape.is_none() {
            notes.push("All figures come from Tunelab's analytic device model, not from measurements on hardware.".into());
        }
        let labels = landscape.as_ref().zip(run.landscape()).map(|(l, land)| l.labels(land));
        let m0 = metrics.first();
        let band_config = best.map(|(_, t)| t.config.clone()).unwrap_or_else(|| run.baseline_config().clone());
        let prediction_band = crate::fidelity::bands::line_for(s, &names, &band_config);
        let pipeline = PipelineReport::of(run, best.map(|(_, t)| &t.config));
        let load_bound = best.and_then(|(_, t)| {
            let named = metrics.iter().map(|m| m.name.clone()).zip(t.values.iter().copied()).collect::<Vec<_>>();
            // Capacity mode: what the answer owes to the search's ceiling or the sample.
            crate::stages::capacity::load_bound(s, &named).or_else(|| crate::stages::capacity::bound_note(s, &named))
        });
        Report {
            model_identity: Vec::new(),
            load_bound,
            spread: None,
            pipeline,
            prediction_band,
            name: s.name.clone(),
            stage: s.stage.name().into(),
            model: match (&labels, &s.model) {
                (Some(l), _) => l.0.clone(),
                (None, m) => match m {
                ModelRef::Id(id) if !id.trim_start().starts_with('{') => id.clone(),
                _ => "inline model".into(),
                },
            },
            device: match (&labels, &s.device) {
                (Some(l), _) => l.1.clone(),
                (None, DeviceRef::Name(n)) => n.clone(),
                (None, DeviceRef::Inline(_)) => "inline device".into(),
            },
            seed: s.seed,
            budget: run.lanes().first().map(|l| l.study.options().budget).unwrap_or(s.budget),
            metric: m0.map(|m| m.name.clone()).unwrap_or_default(),
            unit: m0.map(|m| m.unit.clone()).unwrap_or_default(),
            direction: m0.map(|m| m.direction).unwrap_or(Direction::Minimize),
            best: best.and_then(|(_, t)| t.value()),
            best_strategy: best.map(|(i, _)| run.lanes()[i].spec.name.clone()),
            best_config,
            baseline_config,
            baseline_infeasible,
            comparison,
            measures,
            strategies,
            evaluations: run.evaluations(),
            trace_digest: run.digest(),
            notes,
            transferred: run.transferred().iter().map(|t| Transferred { config: named(&t.config), value: t.value(), reason: t.reason.clone() }).collect(),
            deployment: None,
            landscape,
        }
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into())
    }

    /// A plain-text summary for the terminal.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!("{} stage, {} on {}, seed {}\n", self.stage, self.model, self.device, self.seed));
        for l in &self.model_identity {
            out.push_str(&format!("model: {l}\n"));
        }
        match self.best {
            // The exact value (as `--json` writes it) with the registry's label and unit.
            Some(b) => out.push_str(&format!("best {} [{}]: {} {} ({})\n", crate::spec::metrics::label(&self.metric), self.metric, crate::run::format_best(b), crate::spec::metrics::unit(&self.metric, &self.unit), self.best_strategy.as_deref().unwrap_or("-"))),
            None => out.push_str(&format!("best {} [{}]: none (no feasible configuration)\n", crate::spec::metrics::label(&self.metric), self.metric)),
        }
        if !self.prediction_band.is_empty() {
            out.push_str(&format!("{}\n", self.prediction_band));
        }
        if let Some(r) = &self.baseline_infeasible {
            out.push_str(&format!("baseline (defaults) is infeasible: {r}\n"));
        }
        if let Some(sp) = &self.spread {
            out.push_str(&format!("{}\n", sp.describe()));
        }
        if let Some(l) = &self.load_bound {
            out.push_str(&format!("{l}\n"));
        }
        out.push_str(&format!("\n{:<40} {:>12} {:>12} {:>9}\n", "metric", "before", "after", "change"));
        for c in &self.comparison {
            let f = |x: Option<f64>| x.map(|v| crate::spec::metrics::fmt_metric(&c.metric, v)).unwrap_or_else(|| "-".into());
            let pct = c.change_pct.map(|p| format!("{p:+.1}%")).unwrap_or_default() + if c.within_spread { " (within the workload spread: not a gain)" } else { "" };
            out.push_str(&format!("{:<40} {:>12} {:>12} {:>9}\n", crate::spec::metrics::label_unit(&c.metric, &c.unit), f(c.before), f(c.after), pct));
        }
        if !self.measures.is_empty() {
            out.push_str(&format!("\nmeasures taken ({}):\n", self.measures.len()));
            for m in &self.measures {
                out.push_str(&format!("  {}: {} -> {}\n", m.param, m.before, m.after));
            }
        }
        out.push_str("\nstrategies:\n");
        for st in &self.strategies {
            let b = st.best.map(crate::run::format_best).unwrap_or_else(|| "-".into());
            out.push_str(&format!("  {:<10} best {b}, {} evaluations ({} infeasible), stopped: {}\n", st.strategy, st.evaluations, st.infeasible, st.stop_reason.as_deref().unwrap_or("running")));
        }
        if let Some(d) = &self.deployment {
            out.push_str(&format!("\nvLLM-Ascend {}: vllm serve {}\n", d.releases.vllm_ascend, d.vllm_args.join(" ")));
            out.push_str(&format!("\nlaunch, node by node (--max-model-len {} covers the workload's longest request):\n{}", d.launch.max_model_len, d.launch.to_text()));
            if let Some(t) = &d.launch.mindie_rank_table {
                out.push_str(&format!("MindIE rank table (RANKTABLEFILE): {}\n", serde_json::to_string(t).unwrap_or_default()));
            }
            out.push_str(&format!("MindIE config.json fields: {}\n", serde_json::to_string(&d.mindie_config).unwrap_or_default()));
            if !d.sglang.nodes.is_empty() {
                out.push_str(&format!("\nSGLang {} launch, node by node:\n{}", d.releases.sglang, d.sglang.to_text()));
            }
            for n in &d.mindie_notes {
                out.push_str(&format!("  # {n}\n"));
            }
        }
        if !self.transferred.is_empty() {
            out.push_str(&format!("\ntransferred from similar cases ({}; re-priced on this scenario):\n", self.transferred.len()));
            for t in self.transferred.iter().take(10) {
                let v = t.value.map(crate::run::format_best).unwrap_or_else(|| "infeasible".into());
                let c: Vec<String> = t.config.iter().map(|(k, x)| format!("{k}={x}")).collect();
                out.push_str(&format!("  {} -> {v}\n", c.join(", ")));
            }
            if self.transferred.len() > 10 {
                out.push_str(&format!("  ... and {} more\n", self.transferred.len() - 10));
            }
        }
        if let Some(l) = &self.landscape {
            out.push_str(&l.to_text());
        }
        if let Some(p) = &self.pipeline {
            out.push_str(&p.to_text());
        }
        for n in &self.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        out
    }
}

/// Why nothing was feasible: the most frequent kinds of reason (the text before its first
/// number), most common first, each with one full example.
fn no_feasible_summary(run: &Run) -> String {
    let mut counts: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for l in run.lanes() {
        for t in l.study.trials() {
            if let Some(r) = &t.reason {
                let kind: String = r.chars().take_while(|c| !c.is_ascii_digit()).take(60).collect();
                counts.entry(kind.trim().to_string()).or_insert((0, r.clone())).0 += 1;
            }
        }
    }
    let mut v: Vec<(String, (usize, String))> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(&b.0)));
    let top: Vec<String> = v.iter().take(3).map(|(_, (n, ex))| format!("{n}x like \"{ex}\"")).collect();
    format!("No configuration met the constraints; the most common reasons: {}. Relax a limit or widen the space.", top.join("; "))
}

fn round4(x: f64) -> f64 {
    libm::round(x * 1e4) / 1e4
}

pub use super::report_csv::trials_csv;
pub use super::report_export::{export_for, export_with, DeploymentExport, MINDIE_FIELDS, VLLM_FLAGS};

/// What a report reads from the scenario's model: the model's identity lines (a language
/// model's `identity_line`, `stack_summary` and approximations) and, for a deployment run with
/// a best configuration, its export (`export_for`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct ModelParts {
    pub model_identity: Vec<String>,
    pub deployment: Option<DeploymentExport>,
}

/// The report's model parts of scenario `s` whose best configuration (by parameter name) is
/// `best_config` (`has_best`: the run found one).
pub fn model_parts(s: &crate::spec::scenario::Scenario, best_config: &BTreeMap<String, Value>, has_best: bool) -> ModelParts {
    let model_identity = match crate::stages::context::resolve(s) {
        Ok((m, _, _)) if m.llm.is_some() => {
            let mut v = vec![m.identity_line(), m.stack_summary()];
            v.extend(m.approximations().into_iter().map(|a| format!("approximates {a}")));
            v
        }
        _ => Vec::new(),
    };
    let deployment = (s.stage == Stage::Deployment && has_best).then(|| export_for(s, best_config));
    ModelParts { model_identity, deployment }
}


impl Report {
    /// The report with the headline's spread over request samples: a change of the headline
    /// metric within it is marked, not called a gain.
    pub fn with_spread(mut self, spread: Option<crate::stages::capacity::spread::Spread>) -> Report {
        if let Some(sp) = &spread {
            for c in self.comparison.iter_mut().filter(|c| c.metric == sp.metric) {
                c.within_spread = c.change_pct.is_some_and(|p| p.abs() <= sp.half_range_pct);
            }
        }
        self.spread = spread;
        self
    }
}

impl crate::run::Run {
    /// The report: before/after, measures taken, best configuration, exports.
    pub fn report(&self) -> Report {
        Report::from_run(self)
    }
}

use crate::stages::landscape::LandscapeReport;

impl LandscapeReport {
    /// The report of a landscape run (None for another stage).
    pub fn of(run: &Run) -> Option<LandscapeReport> {
        let land = run.landscape()?;
        let names = land.space().names();
        let opt = land.optimum();
        Some(LandscapeReport {
            title: land.title(),
            source: land.source().clone(),
            optimum: opt.as_ref().map(|o| o.1),
            optimum_config: opt.map(|(c, _)| names.iter().cloned().zip(c.0).collect()).unwrap_or_default(),
            ratio_label: land.ratio_label().into(),
            strategies: run.lanes().iter().map(|l| {
                let b = l.study.best_value();
                (l.spec.name.clone(), b, b.and_then(|v| land.ratio(v)))
            }).collect(),
        })
    }
}


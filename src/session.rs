//! A tuning session: the scenario crate's steppable `Run`, stepped in time slices, plus the plain
//! data the views draw (charts, lanes, generation lines). No web APIs here, so it tests natively.
//!
//! Why slices: a tab has one main thread, and a run to the end in one call would freeze the page.
//! Each slice steps the run for a few milliseconds on the caller's clock and hands control back.

use crate::charts::{ConvergenceData, ConvergenceSeries, PointState, ScatterData, ScatterPoint};
use serde_json::Value as Json;
use tunelab_scenario::{format_best, Run, Scenario};
use tunelab_search::{Direction, TrialState};

mod points;
pub use points::{decimate, front_2d};
use points::{axis_categories, axis_coordinate, axis_label, label_of};
#[cfg(all(test, feature = "page-engine"))]
use points::short;

/// Generation lines kept for the log view.
const LOG_LINES: usize = 200;
/// Strategy snapshots kept per lane for the teaching views.
const SNAPSHOTS: usize = 100;
/// Most trials the scatter draws: beyond it, the best, each lane's latest and an even sample of
/// the rest (drawing cost and DOM size stay bounded however long the run).
pub const MAX_SCATTER: usize = 400;
/// Most points the Pareto chart draws: the whole front, then an even sample of the rest.
pub const MAX_PARETO: usize = 300;
/// Longest configuration label kept for tooltips (an operator stage has hundreds of parameters).
const LABEL_CHARS: usize = 160;

/// One strategy's lane, as the views show it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LaneView {
    pub strategy: String,
    pub evaluations: usize,
    pub budget: usize,
    /// Best primary value (`format_best`).
    pub best: Option<String>,
    pub best_config: String,
    /// The best configuration one line per operator, when the space is grouped (operator stage).
    pub best_groups: Vec<(String, String)>,
    pub infeasible: usize,
    pub failed: usize,
    pub stop_reason: Option<String>,
    /// The latest strategy snapshot (key/value) and the history of them, for teaching views.
    pub snapshot: Json,
    pub snapshots: Vec<Json>,
    /// The lane's best configuration itself (the pipeline timeline races them).
    pub best_cfg: Option<tunelab_search::Config>,
}

/// Everything the run views draw, rebuilt after each slice.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunView {
    pub evaluations: usize,
    pub budget: usize,
    pub done: bool,
    /// Best primary value over all lanes, formatted exactly as `tunelab run --json` prints `best`.
    pub best: Option<String>,
    pub best_strategy: Option<String>,
    /// The best configuration over all lanes.
    pub best_config: Option<tunelab_search::Config>,
    pub metric: String,
    pub unit: String,
    pub lanes: Vec<LaneView>,
    pub log: Vec<String>,
    pub convergence: ConvergenceData,
    pub scatter: ScatterData,
    /// Every metric the trials report: (name, unit, minimize), primary first.
    pub objectives: Vec<(String, String, bool)>,
    pub notes: Vec<String>,
    /// "250 tiling parameters over 18 operators" when the space is grouped; empty otherwise.
    pub space_summary: String,
}

/// A run plus what the views need that the run does not keep.
pub struct Session {
    run: Run,
    log: Vec<String>,
    snapshots: Vec<Vec<Json>>,
    seen_batches: Vec<usize>,
    /// Each lane's latest snapshot as its worker sent it (the page's mirror of a lane stepped
    /// in a worker does not run the strategy, so its own snapshot would be stale).
    remote: Vec<Option<Json>>,
    /// Each lane's trials described once (tooltips), in `run.trials(i)` order.
    labels: Vec<Vec<String>>,
}

impl Session {
    /// Builds the run of a scenario to step on the page (validation errors come back as
    /// messages). Only where the page may compute (feature `page-engine`: tests, and builds
    /// that want the workerless fallback); the release page steps in workers.
    #[cfg(feature = "page-engine")]
    pub fn new(s: &Scenario) -> Result<Session, String> {
        match crate::components::landscape::loaded_for(s) {
            // A landscape the page loaded (a cache's bytes are not in the scenario).
            Some(land) => Session::from_run(Run::with_landscape(s, land)?),
            None => Session::from_run(Run::new(s)?),
        }
    }

    /// The page's mirror of a run stepped in workers: the baseline comes priced from a worker.
    /// Its lanes have no strategy objects (`Run::mirror`): the page's module links no strategy.
    /// With the run's `shape` (what the worker's stage looks like, as data) the page builds no
    /// stage at all (`Run::from_shape`): nothing on the page's thread beyond recording.
    pub fn mirror(s: &Scenario, baseline: tunelab_search::Outcome, shape: Option<tunelab_scenario::run::RunShape>) -> Result<Session, String> {
        match (crate::components::landscape::loaded_for(s), shape) {
            // A landscape's baseline is a lookup: the mirror prices it itself (and draws it).
            (Some(land), _) => Session::from_run(Run::mirror_landscape(s, land)?),
            (None, Some(shape)) => Session::from_run(Run::from_shape(s, shape, baseline)?),
            #[cfg(feature = "page-engine")]
            (None, None) => Session::from_run(Run::mirror(s, Some(baseline), None)?),
            #[cfg(not(feature = "page-engine"))]
            (None, None) => {
                let _ = baseline;
                Err("the engine worker sent no shape of its run".into())
            }
        }
    }

    /// The transfer trials the workers priced (a warm start in workers): every lane starts
    /// with them, as the workers' lanes did.
    pub fn adopt_transferred(&mut self, repriced: Vec<tunelab_search::Trial>) -> Result<usize, String> {
        self.run.adopt_transferred(repriced)
    }

    fn from_run(run: Run) -> Result<Session, String> {
        let n = run.lanes().len();
        Ok(Session { run, log: Vec::new(), snapshots: vec![Vec::new(); n], seen_batches: vec![0; n], remote: vec![None; n], labels: vec![Vec::new(); n] })
    }

    /// Transfer: earlier trials (from similar knowledge-base cases) given to every lane before
    /// the first evaluation; returns how many each lane kept.
    pub fn warm_start(&mut self, earlier: &[tunelab_search::Trial]) -> Result<usize, String> {
        self.run.warm_start(earlier)
    }

    /// The underlying run (reports, exports).
    pub fn run(&self) -> &Run {
        &self.run
    }

    /// A configuration's breakdown and roofline from the run's own stage (a tried one keeps
    /// the outcome its trial recorded: nothing is simulated twice on the page's thread).
    pub fn detail(&mut self, c: &tunelab_search::Config) -> Result<tunelab_scenario::explore::PointDetail, String> {
        self.run.detail(c)
    }

    /// True once every lane stopped.
    pub fn done(&self) -> bool {
        self.run.is_done()
    }

    /// At most `n` study steps (round-robin over lanes); returns true once done.
    #[cfg(feature = "page-engine")]
    pub fn step(&mut self, n: usize) -> bool {
        let p = self.run.step(n);
        self.note(&p.generations);
        self.take_snapshots();
        self.refresh_labels();
        p.done
    }

    /// One study step (one evaluation) for every lane still going: Step in the page advances
    /// all strategies together. Returns true once done.
    #[cfg(feature = "page-engine")]
    pub fn step_each(&mut self) -> bool {
        for i in 0..self.run.lanes().len() {
            let p = self.run.step_lane(i, 1);
            self.note(&p.generations);
        }
        self.take_snapshots();
        self.refresh_labels();
        self.run.is_done()
    }

    /// Mirrors what a lane's worker did (its trials, batches, stop, snapshots and log lines).
    pub fn absorb(&mut self, u: &crate::worker::protocol::LaneUpdate) -> Result<(), String> {
        self.run.mirror_lane(u.lane, &u.trials, u.batches, u.stop.clone())?;
        self.log.extend(u.log.iter().cloned());
        self.trim_log();
        if let Some(v) = self.snapshots.get_mut(u.lane) {
            v.extend(u.snapshots.iter().cloned());
            if v.len() > SNAPSHOTS {
                let cut = v.len() - SNAPSHOTS;
                v.drain(..cut);
            }
            self.seen_batches[u.lane] = u.batches;
        }
        if let Some(r) = self.remote.get_mut(u.lane) {
            *r = Some(u.snapshot.clone());
        }
        self.refresh_labels();
        Ok(())
    }

    fn refresh_labels(&mut self) {
        let names = self.run.space().names();
        for (i, l) in self.labels.iter_mut().enumerate() {
            let trials = self.run.trials(i);
            let lane = self.run.lanes().get(i).map(|x| x.spec.name.as_str()).unwrap_or("");
            for t in &trials[l.len().min(trials.len())..] {
                l.push(trial_label(lane, t.id, &label_of(names, &t.config)));
            }
        }
    }

    /// The configuration of trial `id` of the lane named `strategy` (what a click on a chart's
    /// mark pins: its tooltip names the trial, so however long the configuration, the whole
    /// of it is pinned).
    pub fn trial_config(&self, strategy: &str, id: usize) -> Option<tunelab_search::Config> {
        let run = &self.run;
        // Every trial of the lane's study, the free baseline it starts from included (a convergence
        // line starts at it).
        run.lanes().iter().filter(|l| l.spec.name == strategy).find_map(|l| l.study.trials().iter().find(|t| t.id == id).map(|t| t.config.clone()))
    }

    #[cfg(feature = "page-engine")]
    fn note(&mut self, generations: &[tunelab_scenario::run::Generation]) {
        let metric = self.run.metrics()[0].clone();
        for g in generations {
            self.log.push(format!("{}: {}", g.strategy, g.describe(&metric)));
        }
        self.trim_log();
    }

    fn trim_log(&mut self) {
        if self.log.len() > LOG_LINES {
            let cut = self.log.len() - LOG_LINES;
            self.log.drain(..cut);
        }
    }

    #[cfg(feature = "page-engine")]
    fn take_snapshots(&mut self) {
        for i in 0..self.snapshots.len() {
            let batches = self.run.lanes()[i].study.batches();
            if batches != self.seen_batches[i] {
                self.seen_batches[i] = batches;
                let snap = history_entry(serde_json::to_value(self.run.snapshot(i)).unwrap_or(Json::Null));
                let v = &mut self.snapshots[i];
                v.push(snap);
                if v.len() > SNAPSHOTS {
                    v.remove(0);
                }
            }
        }
    }

    /// Steps until done or `slice_ms` has passed on `now`'s clock; returns true once done.
    #[cfg(feature = "page-engine")]
    pub fn run_slice(&mut self, slice_ms: f64, now: &dyn Fn() -> f64) -> bool {
        let start = now();
        loop {
            if self.step(1) {
                return true;
            }
            if now() - start >= slice_ms {
                return false;
            }
        }
    }

    /// The data every run view draws.
    pub fn view(&self) -> RunView {
        let run = &self.run;
        let m = &run.metrics()[0];
        let minimize = m.direction == Direction::Minimize;
        let names = run.space().names();
        let grouped = crate::groups::is_grouped(names);
        let lanes: Vec<LaneView> = run
            .lanes()
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let trials = run.trials(i);
                LaneView {
                    strategy: l.spec.name.clone(),
                    evaluations: l.study.evaluations(),
                    budget: l.study.options().budget,
                    best: run.best_value(i).map(format_best),
                    best_config: if grouped { String::new() } else { run.best_trial(i).map(|t| t.config.describe(names)).unwrap_or_default() },
                    best_groups: if grouped { run.best_trial(i).map(|t| crate::groups::grouped_config(names, &t.config)).unwrap_or_default() } else { Vec::new() },
                    infeasible: trials.iter().filter(|t| t.state == TrialState::Infeasible).count(),
                    failed: trials.iter().filter(|t| t.state == TrialState::Failed).count(),
                    stop_reason: l.study.stop_reason().map(|r| r.message()),
                    snapshot: self.remote[i].clone().unwrap_or_else(|| serde_json::to_value(run.snapshot(i)).unwrap_or(Json::Null)),
                    snapshots: self.snapshots[i].clone(),
                    best_cfg: run.best_trial(i).map(|t| t.config.clone()),
                }
            })
            .collect();
        let best = run.overall_best();
        RunView {
            evaluations: run.evaluations(),
            budget: run.budget(),
            done: run.is_done(),
            best: best.and_then(|(_, t)| t.value()).map(format_best),
            best_strategy: best.map(|(i, _)| run.lanes()[i].spec.name.clone()),
            best_config: best.map(|(_, t)| t.config.clone()),
            metric: m.name.clone(),
            unit: m.unit.clone(),
            convergence: ConvergenceData {
                title: "Best so far".into(),
                y_label: axis_label(&m.name, &m.unit),
                series: (0..lanes.len())
                    .map(|i| {
                        let mut points: Vec<(f64, f64)> = run.convergence(i).iter().map(|&(e, v)| (e as f64, v)).collect();
                        // Carry the best to the lane's latest evaluation, so every line spans its run.
                        if let Some(&(e, v)) = points.last() {
                            let now = lanes[i].evaluations as f64;
                            if now > e {
                                points.push((now, v));
                            }
                        }
                        let labels = convergence_labels(run, i, &points);
                        ConvergenceSeries { name: lanes[i].strategy.clone(), points, labels }
                    })
                    .collect(),
                log_y: false,
            },
            scatter: self.scatter(minimize),
            objectives: run.metrics().iter().map(|m| (m.name.clone(), m.unit.clone(), m.direction == Direction::Minimize)).collect(),
            lanes,
            log: self.log.clone(),
            notes: run.notes().to_vec(),
            space_summary: if grouped { crate::groups::summary(names) } else { String::new() },
        }
    }

    fn scatter(&self, minimize: bool) -> ScatterData {
        let run = &self.run;
        let names = run.space().names();
        let (xi, yi) = (0, if names.len() > 1 { 1 } else { 0 });
        let sign = if minimize { 1.0 } else { -1.0 };
        // Every evaluated trial as (lane, index); the best over all.
        let all: Vec<(usize, usize)> = (0..run.lanes().len()).flat_map(|i| (0..run.trials(i).len()).map(move |k| (i, k))).collect();
        let value = |&(i, k): &(usize, usize)| run.trials(i)[k].value().unwrap_or(f64::NAN);
        let best_at = all.iter().enumerate().filter(|(_, p)| value(p).is_finite()).min_by(|a, b| (sign * value(a.1)).total_cmp(&(sign * value(b.1)))).map(|(n, _)| n);
        let keep = decimate(all.len(), MAX_SCATTER, best_at, &lane_tails(run, MAX_SCATTER / 4));
        let mut points = Vec::with_capacity(keep.len());
        let mut best = None;
        for n in keep {
            let (i, k) = all[n];
            let t = &run.trials(i)[k];
            if Some(n) == best_at {
                best = Some(points.len());
            }
            points.push(ScatterPoint {
                x: axis_coordinate(run.space(), xi, &t.config),
                y: axis_coordinate(run.space(), yi, &t.config),
                value: t.value().unwrap_or(f64::NAN),
                state: match t.state {
                    TrialState::Ok => PointState::Ok,
                    TrialState::Infeasible => PointState::Infeasible,
                    TrialState::Failed => PointState::Failed,
                },
                label: self.labels[i].get(k).cloned().unwrap_or_default(),
            });
        }
        let m = &run.metrics()[0];
        let title = if points.len() < all.len() {
            format!("Trials: {} of {} drawn", points.len(), all.len())
        } else {
            "Trials over the space".into()
        };
        ScatterData {
            title,
            x_label: names.get(xi).cloned().unwrap_or_default(),
            y_label: names.get(yi).cloned().unwrap_or_default(),
            x_categories: axis_categories(run.space(), xi),
            y_categories: axis_categories(run.space(), yi),
            value_label: axis_label(&m.name, &m.unit),
            points,
            best,
            minimize,
            ..ScatterData::default()
        }
    }
}

/// The configuration behind each convergence point of lane `i` (its tooltip, so a click on the
/// point pins it): the trial that reached that best at that evaluation. The carried-forward
/// last point repeats the best's label.
fn convergence_labels(run: &Run, i: usize, points: &[(f64, f64)]) -> Vec<String> {
    let names = run.space().names();
    let all = run.lanes().get(i).map(|l| l.study.trials()).unwrap_or(&[]);
    let mut out: Vec<String> = Vec::with_capacity(points.len());
    for &(e, v) in points {
        let e = e as usize;
        // Trials are recorded in evaluation order: look among those that finished at `e`.
        let from = all.partition_point(|t| t.evaluation < e);
        let to = all.partition_point(|t| t.evaluation <= e);
        let hit = all[from..to].iter().rev().find(|t| t.value() == Some(v));
        out.push(match (hit, out.last()) {
            (Some(t), _) => trial_label(run.lanes().get(i).map(|x| x.spec.name.as_str()).unwrap_or(""), t.id, &label_of(names, &t.config)),
            (None, Some(prev)) => prev.clone(),
            (None, None) => String::new(),
        });
    }
    out
}

/// A mark's tooltip opening: the trial ("genetic #12"), then its configuration as far as
/// `label_of` writes it.
pub fn trial_label(strategy: &str, id: usize, config: &str) -> String {
    format!("{strategy} #{id}: {config}")
}

/// The trial a tooltip names (`trial_label`'s opening, after an optional "best — ").
pub fn parse_trial_label(tip: &str) -> Option<(String, usize)> {
    let tip = tip.strip_prefix("best — ").unwrap_or(tip);
    let (head, _) = tip.split_once(": ")?;
    let (name, id) = head.rsplit_once(" #")?;
    (!name.contains(' ') && !name.is_empty()).then_some(())?;
    Some((name.to_string(), id.parse().ok()?))
}

/// A snapshot as a lane's history keeps it (`tunelab_engine::history_entry`).
pub use tunelab_engine::history_entry;

/// Positions (in the all-lanes order of `Session::scatter`) of each lane's latest `per_run /
/// lanes` trials, so the newest points always show.
fn lane_tails(run: &Run, per_run: usize) -> Vec<usize> {
    let lanes = run.lanes().len().max(1);
    let each = per_run / lanes;
    let mut out = Vec::new();
    let mut offset = 0;
    for i in 0..run.lanes().len() {
        let n = run.trials(i).len();
        out.extend(offset + n.saturating_sub(each)..offset + n);
        offset += n;
    }
    out
}

#[cfg(all(test, feature = "page-engine"))] // they step runs on the page
mod tests {
    use super::*;
    use std::cell::Cell;
    use tunelab_scenario::bundled_scenarios;

    fn small() -> Scenario {
        let mut s = bundled_scenarios().into_iter().next().unwrap().1.unwrap();
        s.budget = 12;
        s
    }

    /// Each convergence point carries the configuration that reached it (a click on it pins
    /// that configuration), and that configuration's value is the point's value.
    #[test]
    fn convergence_points_name_the_trial_that_reached_them() {
        let mut s = tunelab_scenario::bundled_scenario("llama2-7b-910B2-compare").unwrap();
        s.budget = 30;
        let mut a = Session::new(&s).unwrap();
        while !a.step(1000) {}
        let v = a.view();
        let names = a.run().space().names().to_vec();
        let mut checked = 0;
        for (i, series) in v.convergence.series.iter().enumerate() {
            assert_eq!(series.labels.len(), series.points.len(), "{}", series.name);
            for (p, l) in series.points.iter().zip(&series.labels) {
                // The label names its trial, and the session gives back that trial's whole
                // configuration (what a click pins).
                let (strategy, id) = parse_trial_label(l).expect("a trial named by each label");
                assert_eq!(strategy, series.name);
                let t = a.run().lanes()[i].study.trials().iter().find(|t| t.id == id).expect("a trial behind each point");
                assert_eq!(l, &trial_label(&strategy, id, &label_of(&names, &t.config)));
                assert_eq!(a.trial_config(&strategy, id).as_ref(), Some(&t.config));
                assert_eq!(t.value(), Some(p.1), "{}: {l}", series.name);
                checked += 1;
            }
        }
        assert!(checked > 3);
        // The overall best's configuration is one of them.
        let best = label_of(&names, v.best_config.as_ref().unwrap());
        assert!(v.convergence.series.iter().any(|s| s.labels.iter().any(|l| l.ends_with(&format!(": {best}")))));
        assert_eq!(parse_trial_label("best — genetic #12: a=1, b=2 — x: 3"), Some(("genetic".to_string(), 12)));
        assert_eq!(parse_trial_label("a=1, b=2 — x: 3"), None);
    }

    #[test]
    fn slices_resume_and_match_a_straight_run() {
        let s = small();
        let mut a = Session::new(&s).unwrap();
        let t = Cell::new(0.0);
        let now = || {
            t.set(t.get() + 1.0);
            t.get()
        };
        let mut slices = 0;
        while !a.run_slice(3.0, &now) {
            slices += 1;
        }
        assert!(slices > 0);
        let mut b = Session::new(&s).unwrap();
        while !b.step(1000) {}
        assert_eq!(a.view().best, b.view().best);
        assert!(a.view().best.is_some());
        assert_eq!(a.view().evaluations, b.view().evaluations);
    }

    #[test]
    fn labels_are_the_description_cut_short() {
        let names: Vec<String> = (0..300).map(|i| format!("op{i}.baseM")).collect();
        let c = tunelab_search::Config((0..300).map(|i| tunelab_search::Value::Int(i)).collect());
        assert_eq!(label_of(&names, &c), short(&c.describe(&names)));
        assert_eq!(label_of(&names[..2], &tunelab_search::Config(c.0[..2].to_vec())), "op0.baseM=0, op1.baseM=1");
    }

    #[test]
    fn best_matches_the_report() {
        let s = small();
        let mut a = Session::new(&s).unwrap();
        while !a.step(64) {}
        let r = a.run().report();
        assert_eq!(a.view().best, r.best.map(format_best));
    }
}


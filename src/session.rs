//! A tuning session: the scenario crate's steppable `Run`, stepped in time slices, plus the plain
//! data the views draw (charts, lanes, generation lines). No web APIs here, so it tests natively.
//!
//! Why slices: a tab has one main thread, and a run to the end in one call would freeze the page.
//! Each slice steps the run for a few milliseconds on the caller's clock and hands control back.

use crate::charts::{ConvergenceData, ConvergenceSeries, ParetoData, ParetoPoint, PointState, ScatterData, ScatterPoint};
use serde_json::Value as Json;
use tunelab_scenario::{format_best, Run, Scenario};
use tunelab_search::{Direction, TrialState};

/// Generation lines kept for the log view.
const LOG_LINES: usize = 200;
/// Strategy snapshots kept per lane for the teaching views.
const SNAPSHOTS: usize = 100;

/// One strategy's lane, as the views show it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LaneView {
    pub strategy: String,
    pub evaluations: usize,
    pub budget: usize,
    /// Best primary value (`format_best`).
    pub best: Option<String>,
    pub best_config: String,
    pub infeasible: usize,
    pub failed: usize,
    pub stop_reason: Option<String>,
    /// The latest strategy snapshot (key/value) and the history of them, for teaching views.
    pub snapshot: Json,
    pub snapshots: Vec<Json>,
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
    /// Each Ok trial's metric values (aligned with `objectives`) and its configuration.
    pub ok_points: Vec<(Vec<f64>, String)>,
    pub notes: Vec<String>,
}

/// A run plus what the views need that the run does not keep.
pub struct Session {
    run: Run,
    log: Vec<String>,
    snapshots: Vec<Vec<Json>>,
    seen_batches: Vec<usize>,
}

impl Session {
    /// Builds the run of a scenario (validation errors come back as messages).
    pub fn new(s: &Scenario) -> Result<Session, String> {
        let run = Run::new(s)?;
        let n = run.lanes().len();
        Ok(Session { run, log: Vec::new(), snapshots: vec![Vec::new(); n], seen_batches: vec![0; n] })
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

    /// True once every lane stopped.
    pub fn done(&self) -> bool {
        self.run.is_done()
    }

    /// At most `n` study steps (round-robin over lanes); returns true once done.
    pub fn step(&mut self, n: usize) -> bool {
        let p = self.run.step(n);
        let metric = self.run.metrics()[0].clone();
        for g in &p.generations {
            self.log.push(format!("{}: {}", g.strategy, g.describe(&metric)));
        }
        if self.log.len() > LOG_LINES {
            let cut = self.log.len() - LOG_LINES;
            self.log.drain(..cut);
        }
        for i in 0..self.snapshots.len() {
            let batches = self.run.lanes()[i].study.batches();
            if batches != self.seen_batches[i] {
                self.seen_batches[i] = batches;
                let snap = serde_json::to_value(self.run.snapshot(i)).unwrap_or(Json::Null);
                let v = &mut self.snapshots[i];
                v.push(snap);
                if v.len() > SNAPSHOTS {
                    v.remove(0);
                }
            }
        }
        p.done
    }

    /// Steps until done or `slice_ms` has passed on `now`'s clock; returns true once done.
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
                    best_config: run.best_trial(i).map(|t| t.config.describe(names)).unwrap_or_default(),
                    infeasible: trials.iter().filter(|t| t.state == TrialState::Infeasible).count(),
                    failed: trials.iter().filter(|t| t.state == TrialState::Failed).count(),
                    stop_reason: l.study.stop_reason().map(|r| r.message()),
                    snapshot: serde_json::to_value(run.snapshot(i)).unwrap_or(Json::Null),
                    snapshots: self.snapshots[i].clone(),
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
                        ConvergenceSeries { name: lanes[i].strategy.clone(), points }
                    })
                    .collect(),
                log_y: false,
            },
            scatter: self.scatter(minimize),
            objectives: run.metrics().iter().map(|m| (m.name.clone(), m.unit.clone(), m.direction == Direction::Minimize)).collect(),
            ok_points: (0..run.lanes().len())
                .flat_map(|i| run.trials(i).iter())
                .filter(|t| t.is_ok() && t.values.len() == run.metrics().len())
                .map(|t| (t.values.clone(), t.config.describe(names)))
                .collect(),
            lanes,
            log: self.log.clone(),
            notes: run.notes().to_vec(),
        }
    }

    fn scatter(&self, minimize: bool) -> ScatterData {
        let run = &self.run;
        let names = run.space().names();
        let (xi, yi) = (0, if names.len() > 1 { 1 } else { 0 });
        let mut points = Vec::new();
        let mut best = None;
        let mut best_v = f64::INFINITY;
        let sign = if minimize { 1.0 } else { -1.0 };
        for i in 0..run.lanes().len() {
            for t in run.trials(i).iter().filter(|t| !t.warm) {
                let value = t.value().unwrap_or(f64::NAN);
                if value.is_finite() && sign * value < best_v {
                    best_v = sign * value;
                    best = Some(points.len());
                }
                points.push(ScatterPoint {
                    x: axis_coordinate(run.space(), xi, &t.config),
                    y: axis_coordinate(run.space(), yi, &t.config),
                    value,
                    state: match t.state {
                        TrialState::Ok => PointState::Ok,
                        TrialState::Infeasible => PointState::Infeasible,
                        TrialState::Failed => PointState::Failed,
                    },
                    label: t.config.describe(names),
                });
            }
        }
        let m = &run.metrics()[0];
        ScatterData {
            title: "Trials over the space".into(),
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

/// Most values an axis shows as named categories; longer discrete axes are drawn by value.
const MAX_AXIS_CATEGORIES: usize = 40;

/// Category names of parameter `i` in value order, when it is discrete and short enough to
/// label every value (batch 1, 2, 4 ...; precision fp16, w8a8 ...); empty otherwise.
fn axis_categories(space: &tunelab_search::Space, i: usize) -> Vec<String> {
    let Some(p) = space.params().get(i) else { return Vec::new() };
    match p.levels() {
        Some(n) if n <= MAX_AXIS_CATEGORIES => (0..n).map(|r| p.level_value(p.level_at_rank(r)).to_string()).collect(),
        _ => Vec::new(),
    }
}

/// Where a trial sits on the axis of parameter `i`: its rank among the categories, or its
/// numeric value for long or continuous axes.
fn axis_coordinate(space: &tunelab_search::Space, i: usize, c: &tunelab_search::Config) -> f64 {
    let Some(p) = space.params().get(i) else { return f64::NAN };
    let v = c.0.get(i);
    match p.levels() {
        Some(n) if n <= MAX_AXIS_CATEGORIES => v.and_then(|v| p.level_of(v)).map(|l| p.ordinal_rank(l) as f64).unwrap_or(f64::NAN),
        _ => v.and_then(|v| v.as_f64()).unwrap_or_else(|| v.map(|v| p.to_unit(v)).unwrap_or(f64::NAN)),
    }
}

impl RunView {
    /// The Pareto chart of objectives `a` and `b` (indices into `objectives`), or None when the
    /// trials report fewer than two metrics or an index is out of range.
    pub fn pareto(&self, a: usize, b: usize) -> Option<ParetoData> {
        let (ma, mb) = (self.objectives.get(a)?, self.objectives.get(b)?);
        if a == b {
            return None;
        }
        Some(ParetoData {
            title: "Pareto front".into(),
            x_label: axis_label(&ma.0, &ma.1),
            y_label: axis_label(&mb.0, &mb.1),
            points: self.ok_points.iter().map(|(v, label)| ParetoPoint { a: v[a], b: v[b], feasible: true, label: label.clone() }).collect(),
            minimize_a: ma.2,
            minimize_b: mb.2,
            ..ParetoData::default()
        })
    }
}

fn axis_label(name: &str, unit: &str) -> String {
    if unit.is_empty() { name.to_string() } else { format!("{name} ({unit})") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use tunelab_scenario::bundled_scenarios;

    fn small() -> Scenario {
        let mut s = bundled_scenarios().into_iter().next().unwrap().1.unwrap();
        s.budget = 12;
        s
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
    fn best_matches_the_report() {
        let s = small();
        let mut a = Session::new(&s).unwrap();
        while !a.step(64) {}
        let r = a.run().report();
        assert_eq!(a.view().best, r.best.map(format_best));
    }
}

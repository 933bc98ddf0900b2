//! The Study owns the loop: it asks a strategy, evaluates new configurations against an
//! objective, counts the budget in distinct evaluations, keeps the history, the best and the
//! Pareto front, and stops on budget, exhaustion, convergence or patience.
//!
//! It steps one evaluation at a time (`step`) so that a browser can run it in slices without
//! freezing the page; `run` is the loop for the CLI.

use crate::objective::{Objective, Outcome};
use crate::pareto;
use crate::rng::Rng;
use crate::space::Space;
use crate::strategy::{History, Snapshot, Strategy};
use crate::trial::{Metric, Trial, TrialState};
use crate::value::Config;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};

/// When the study stops besides its budget.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudyOptions {
    /// Distinct evaluations allowed (failed and infeasible ones included).
    pub budget: usize,
    /// Stop when the best has not improved by more than `min_improvement` (relative) over this
    /// many evaluations. None: never.
    #[serde(default)]
    pub patience: Option<usize>,
    #[serde(default = "default_min_improvement")]
    pub min_improvement: f64,
    /// Honour a strategy's own convergence rule (GA's three generations under 2%).
    #[serde(default)]
    pub strategy_stop: bool,
}

fn default_min_improvement() -> f64 {
    0.0
}

impl StudyOptions {
    /// Spend exactly `budget` evaluations unless the space runs out first.
    pub fn budget(budget: usize) -> Self {
        StudyOptions { budget, patience: None, min_improvement: 0.0, strategy_stop: false }
    }
}

/// Why a study stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    Budget,
    /// Every feasible configuration has been evaluated.
    Exhausted,
    /// The strategy's own rule fired.
    Converged,
    /// No improvement within the patience window.
    Patience,
    /// The space is too large to enumerate and random sampling found no (new) feasible
    /// configuration: not "exhausted", which would claim every point was tried.
    NoFeasible,
}

/// Random draws the study makes looking for a new feasible point before it gives up on a space
/// too large to enumerate.
pub const NO_FEASIBLE_SAMPLES: usize = UNSEEN_SAMPLE_CALLS * crate::space::SAMPLE_TRIES;
const UNSEEN_SAMPLE_CALLS: usize = 200;
/// Points of a huge space scanned in order as a last resort (bounded: never a walk of the
/// whole product space).
const UNSEEN_SCAN: usize = 1_000_000;

impl StopReason {
    /// A sentence for reports ("no feasible configuration found in 400000 samples").
    pub fn message(&self) -> String {
        match self {
            StopReason::Budget => "budget".into(),
            StopReason::Exhausted => "exhausted".into(),
            StopReason::Converged => "converged".into(),
            StopReason::Patience => "patience".into(),
            StopReason::NoFeasible => format!("no feasible configuration found in {NO_FEASIBLE_SAMPLES} samples"),
        }
    }
}

/// Something that happened, for observers (progress lines, charts).
#[derive(Clone, Debug)]
pub enum Event<'a> {
    /// A new trial was recorded.
    Trial(&'a Trial),
    /// A batch finished and was told to the strategy (a "generation").
    Batch { index: usize, best: Option<f64>, previous_best: Option<f64> },
    /// The study stopped.
    Finished(&'a StopReason),
}

type Observer = Box<dyn FnMut(&Event)>;

/// A tuning run: history, best, Pareto front, budget accounting.
pub struct Study {
    space: Space,
    metrics: Vec<Metric>,
    options: StudyOptions,
    trials: Vec<Trial>,
    seen: HashMap<Config, usize>,
    evaluations: usize,
    best: Option<usize>,
    /// (evaluations, best primary value) each time the best improved.
    convergence: Vec<(usize, f64)>,
    pending: VecDeque<Config>,
    batch: Vec<usize>,
    batches: usize,
    best_before_batch: Option<f64>,
    stale_asks: usize,
    /// Configurations the study proposed itself because the strategy offered nothing new.
    self_proposed: usize,
    last_improvement_at: usize,
    stop: Option<StopReason>,
    observers: Vec<Observer>,
}

/// Most trials a study reserves room for when it starts (its budget, up to this).
const RESERVE_MAX: usize = 1 << 14;

/// Asks in a row that bring nothing new before the study proposes unseen points itself.
const STALE_ASKS: usize = 3;

impl Study {
    /// A new study. The budget must be at least one evaluation.
    pub fn new(space: Space, metrics: Vec<Metric>, options: StudyOptions) -> Result<Study, String> {
        if options.budget == 0 {
            return Err("the budget must be at least 1 evaluation".into());
        }
        if metrics.is_empty() {
            return Err("a study needs at least one metric".into());
        }
        if !(options.min_improvement.is_finite() && options.min_improvement >= 0.0) {
            return Err("min_improvement must be a non-negative number".into());
        }
        // Room for the whole budget up front: the history never reallocates and the seen-set
        // never rehashes mid-run (a rehash of thousands of large configurations was a pause of
        // tens of ms on the page's thread, where a mirror study records a worker's trials).
        let room = options.budget.min(RESERVE_MAX);
        Ok(Study {
            space, metrics, options,
            trials: Vec::with_capacity(room), seen: HashMap::with_capacity(room), evaluations: 0, best: None,
            convergence: Vec::new(), pending: VecDeque::new(), batch: Vec::new(), batches: 0, best_before_batch: None,
            stale_asks: 0, self_proposed: 0, last_improvement_at: 0, stop: None, observers: Vec::new(),
        })
    }

    /// Adds earlier trials (transfer): strategies see them in the history; they cost no budget.
    /// Trials whose configuration is not in this space are skipped; returns how many were kept.
    pub fn warm_start(&mut self, earlier: &[Trial]) -> usize {
        let mut kept = 0;
        for t in earlier {
            if self.seen.contains_key(&t.config) || self.space.check(&t.config).is_err() {
                continue;
            }
            if t.is_ok() && t.values.len() != self.metrics.len() {
                continue;
            }
            let mut t = t.clone();
            t.id = self.trials.len();
            t.warm = true;
            t.evaluation = 0;
            self.record(t);
            kept += 1;
        }
        kept
    }

    /// Mirrors a copy of this study that runs elsewhere (the browser steps each strategy in a
    /// Web Worker and keeps a mirror on the page for reports): appends that copy's trials as it
    /// recorded them, so best, convergence and counts are exactly the copy's. Trials must follow
    /// on from the ones held here (an id already held is skipped); `batches` and `stop` are the
    /// copy's. Returns an error naming the first trial that does not follow on.
    pub fn mirror(&mut self, trials: &[Trial], batches: usize, stop: Option<StopReason>) -> Result<(), String> {
        for t in trials {
            if t.id < self.trials.len() {
                continue;
            }
            if t.id != self.trials.len() {
                return Err(format!("mirrored trial {} does not follow trial {}", t.id, self.trials.len()));
            }
            self.evaluations = self.evaluations.max(t.evaluation);
            self.record(t.clone());
        }
        self.batches = batches;
        self.stop = stop;
        Ok(())
    }

    /// Registers an observer of events.
    pub fn observe(&mut self, f: impl FnMut(&Event) + 'static) {
        self.observers.push(Box::new(f));
    }

    pub fn space(&self) -> &Space { &self.space }
    pub fn metrics(&self) -> &[Metric] { &self.metrics }
    pub fn options(&self) -> &StudyOptions { &self.options }
    /// Every trial, warm-start ones first.
    pub fn trials(&self) -> &[Trial] { &self.trials }
    /// Distinct evaluations spent.
    pub fn evaluations(&self) -> usize { self.evaluations }
    /// Number of batches told to the strategy so far ("generations").
    pub fn batches(&self) -> usize { self.batches }
    /// The best Ok trial by the primary metric.
    pub fn best(&self) -> Option<&Trial> { self.best.map(|i| &self.trials[i]) }
    /// The best primary value.
    pub fn best_value(&self) -> Option<f64> { self.best().and_then(|t| t.value()) }
    /// (evaluations, best value) at each improvement.
    pub fn convergence(&self) -> &[(usize, f64)] { &self.convergence }
    /// Why the study stopped, once it has.
    pub fn stop_reason(&self) -> Option<&StopReason> { self.stop.as_ref() }
    /// True once stopped.
    pub fn is_done(&self) -> bool { self.stop.is_some() }
    /// Configurations the study proposed itself because the strategy offered nothing new (a
    /// strategy that searches properly needs none before the space is exhausted).
    pub fn self_proposed(&self) -> usize { self.self_proposed }
    /// Failed evaluations (not counting warm-start trials).
    pub fn failed(&self) -> usize {
        self.trials.iter().filter(|t| !t.warm && t.state == TrialState::Failed).count()
    }

    /// Trials on the Pareto front of all metrics (Ok trials only).
    pub fn pareto_front(&self) -> Vec<&Trial> {
        let ok: Vec<&Trial> = self.trials.iter().filter(|t| t.is_ok()).collect();
        let pts: Vec<Vec<f64>> = ok.iter().map(|t| self.signed(t)).collect();
        pareto::front(&pts).into_iter().map(|i| ok[i]).collect()
    }

    fn signed(&self, t: &Trial) -> Vec<f64> {
        self.metrics.iter().zip(&t.values).map(|(m, v)| m.signed(*v)).collect()
    }

    /// The history view strategies see.
    pub fn history(&self) -> History<'_> {
        History::new(&self.space, &self.metrics, &self.trials, &self.seen,
            self.options.budget.saturating_sub(self.evaluations), self.options.budget)
    }

    /// Evaluates at most one new configuration (asking the strategy when its batch is used up).
    /// Returns the stop reason once the study is done.
    pub fn step(&mut self, strategy: &mut dyn Strategy, objective: &mut dyn Objective, rng: &mut Rng) -> Option<StopReason> {
        if self.stop.is_some() {
            return self.stop.clone();
        }
        if self.evaluations >= self.options.budget {
            return self.finish(StopReason::Budget);
        }
        // Guard: a strategy that never yields anything new cannot spin forever.
        for _ in 0..64 {
            if let Some(c) = self.pending.pop_front() {
                if let Some(&i) = self.seen.get(&c) {
                    self.batch.push(i);
                    continue;
                }
                let t = self.evaluate(c, objective);
                self.batch.push(t);
                if self.pending.is_empty() {
                    self.tell(strategy);
                }
                return self.after_evaluation(strategy);
            }
            if !self.batch.is_empty() {
                self.tell(strategy);
            }
            self.best_before_batch = self.best_value();
            let asked = strategy.ask(&self.history(), rng);
            let fresh = asked.iter().filter(|c| !self.seen.contains_key(*c)).count();
            if fresh == 0 {
                self.stale_asks += 1;
            } else {
                self.stale_asks = 0;
            }
            if fresh == 0 && (asked.is_empty() || self.stale_asks >= STALE_ASKS) {
                // The strategy is out of ideas: propose an unseen point ourselves, so the budget
                // is spent as Kernel Tuner's simulation mode would.
                match self.unseen_point(rng) {
                    Some(c) => {
                        self.self_proposed += 1;
                        self.pending.push_back(c);
                    }
                    // Exhausted only when every feasible point is known to have been tried.
                    None if self.space.feasible_points().is_some() => return self.finish(StopReason::Exhausted),
                    None => return self.finish(StopReason::NoFeasible),
                }
            } else {
                self.pending.extend(asked);
            }
        }
        None
    }

    /// Runs until the study stops.
    pub fn run(&mut self, strategy: &mut dyn Strategy, objective: &mut dyn Objective, rng: &mut Rng) -> StopReason {
        loop {
            if let Some(r) = self.step(strategy, objective, rng) {
                return r;
            }
        }
    }

    /// The strategy's snapshot merged with the study's own progress keys.
    pub fn snapshot(&self, strategy: &dyn Strategy) -> Snapshot {
        let mut s = strategy.snapshot();
        s.insert("evaluations".into(), self.evaluations.into());
        s.insert("budget".into(), self.options.budget.into());
        s.insert("batches".into(), self.batches.into());
        if let Some(b) = self.best_value() {
            s.insert("best".into(), b.into());
        }
        s
    }

    fn evaluate(&mut self, c: Config, objective: &mut dyn Objective) -> usize {
        let (state, values, reason, counted) = match self.space.check(&c) {
            Err(why) => (TrialState::Infeasible, vec![], Some(why), false),
            Ok(()) => match objective.evaluate(&c) {
                Outcome::Ok(v) if v.len() == self.metrics.len() && v.iter().all(|x| x.is_finite()) => {
                    (TrialState::Ok, v, None, true)
                }
                Outcome::Ok(v) => (TrialState::Failed, vec![], Some(format!("objective returned {} non-finite or missing values", v.len())), true),
                Outcome::Infeasible(r) => (TrialState::Infeasible, vec![], Some(r), true),
                Outcome::Failed(r) => (TrialState::Failed, vec![], Some(r), true),
            },
        };
        if counted {
            self.evaluations += 1;
        }
        let t = Trial { id: self.trials.len(), config: c, state, values, reason, warm: false, evaluation: self.evaluations };
        self.record(t)
    }

    fn record(&mut self, t: Trial) -> usize {
        let i = t.id;
        self.seen.insert(t.config.clone(), i);
        let improved = match (t.value(), self.best_value()) {
            (Some(v), Some(b)) => self.metrics[0].signed(v) < self.metrics[0].signed(b),
            (Some(_), None) => true,
            _ => false,
        };
        if improved {
            let v = t.value().unwrap_or(f64::NAN);
            let rel = self.best_value().map(|b| ((b - v) / b).abs()).unwrap_or(f64::INFINITY);
            if rel > self.options.min_improvement {
                self.last_improvement_at = self.evaluations;
            }
            self.best = Some(i);
            self.convergence.push((self.evaluations, v));
        }
        self.trials.push(t);
        for o in &mut self.observers {
            o(&Event::Trial(&self.trials[i]));
        }
        i
    }

    fn tell(&mut self, strategy: &mut dyn Strategy) {
        let batch: Vec<Trial> = self.batch.drain(..).map(|i| self.trials[i].clone()).collect();
        let previous_best = self.best_before_batch;
        strategy.tell(&self.history(), &batch);
        self.batches += 1;
        let ev = Event::Batch { index: self.batches, best: self.best_value(), previous_best };
        for o in &mut self.observers {
            o(&ev);
        }
    }

    fn after_evaluation(&mut self, strategy: &dyn Strategy) -> Option<StopReason> {
        if self.evaluations >= self.options.budget {
            return self.finish(StopReason::Budget);
        }
        if self.options.strategy_stop && strategy.converged() {
            return self.finish(StopReason::Converged);
        }
        if let Some(p) = self.options.patience {
            if self.best.is_some() && self.evaluations - self.last_improvement_at >= p {
                return self.finish(StopReason::Patience);
            }
        }
        None
    }

    fn finish(&mut self, r: StopReason) -> Option<StopReason> {
        self.stop = Some(r.clone());
        for o in &mut self.observers {
            o(&Event::Finished(&r));
        }
        Some(r)
    }

    /// A feasible configuration not yet evaluated, or None when the space is used up.
    fn unseen_point(&self, rng: &mut Rng) -> Option<Config> {
        for _ in 0..UNSEEN_SAMPLE_CALLS {
            match self.space.sample(rng) {
                Some(c) if !self.seen.contains_key(&c) => return Some(c),
                Some(_) => {}
                None => return None,
            }
        }
        if let Some(all) = self.space.feasible_points() {
            let unseen: Vec<&Config> = all.iter().filter(|c| !self.seen.contains_key(*c)).collect();
            return rng.choose(&unseen).map(|c| (*c).clone());
        }
        // Huge space and no luck sampling: a bounded scan in order, never the whole space.
        self.space.enumerate().take(UNSEEN_SCAN).find(|c| !self.seen.contains_key(c))
    }
}

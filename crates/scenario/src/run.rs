//! The steppable tuning run the app and the CLI share: one Study per strategy on one stage.
//!
//! Why steppable: the browser must never block, so `step(n)` does at most `n` study steps (each
//! at most one evaluation) and returns; the CLI just calls it in a loop. Every lane's generator is
//! derived from the scenario seed by a fixed rule, so the same scenario gives the same trials,
//! bit for bit, natively and in WebAssembly.

use crate::stages::blocks::Blockwise;
use crate::stages::focus::Focused;
use crate::spec::scenario::{Scenario, StrategySpec};
use crate::stages::{self, StageSetup};
use tunelab_search::{pareto, Config, Metric, Objective, Outcome, Rng, Snapshot, Space, Strategy, Study, StudyOptions, Trial, TrialState};

/// One strategy's study inside a run.
pub struct Lane {
    pub spec: StrategySpec,
    strategy: Box<dyn Strategy>,
    pub study: Study,
    rng: Rng,
    /// Batches already reported as generation lines.
    reported_batches: usize,
    /// Best value at the last reported generation.
    reported_best: Option<f64>,
}

impl Lane {
    /// One study step of this lane (lane `i` of the run), reporting each batch it completes as a
    /// generation line: the one step both `Run::step` and `Run::step_lane` take.
    fn step_once(&mut self, i: usize, objective: &mut dyn Objective, generations: &mut Vec<Generation>) {
        self.study.step(self.strategy.as_mut(), objective, &mut self.rng);
        while self.reported_batches < self.study.batches() {
            self.reported_batches += 1;
            let best = self.study.best_value();
            generations.push(Generation { lane: i, strategy: self.spec.name.clone(), index: self.reported_batches, best, previous: self.reported_best });
            self.reported_best = best;
        }
    }
}

/// What a mirror needs of a run's stage (`Run::shape`, `Run::from_shape`): the parameters, the
/// metrics, the baseline configuration, the notes and the focused-search extent.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunShape {
    pub params: Vec<tunelab_search::Param>,
    pub metrics: Vec<Metric>,
    pub baseline: Config,
    pub notes: Vec<String>,
    pub focus: Vec<usize>,
    pub focus_budget: usize,
}

/// A mirrored lane's strategy: it steps elsewhere, so here it is never asked (and would propose
/// nothing: an empty ask ends a study).
struct Mirrored;

impl Strategy for Mirrored {
    fn name(&self) -> &'static str {
        "mirrored"
    }
    fn ask(&mut self, _: &tunelab_search::History, _: &mut Rng) -> Vec<Config> {
        Vec::new()
    }
}

/// A finished generation (batch told to the strategy): the progress line's data.
#[derive(Clone, Debug, PartialEq)]
pub struct Generation {
    pub lane: usize,
    pub strategy: String,
    pub index: usize,
    pub best: Option<f64>,
    pub previous: Option<f64>,
}

impl Generation {
    /// "Generation 3: best 38.7 ms (+14.4%)": the improvement is relative to the previous
    /// generation's best, positive when it got better.
    pub fn describe(&self, metric: &Metric) -> String {
        let Some(b) = self.best else {
            return format!("Generation {}: no feasible configuration yet", self.index);
        };
        let gain = match self.previous {
            Some(p) if p != 0.0 => format!(" ({:+.1}%)", (metric.signed(p) - metric.signed(b)) / p.abs() * 100.0),
            _ => String::new(),
        };
        format!("Generation {}: best {} {}{}", self.index, show(b), metric.unit, gain)
    }
}

fn show(x: f64) -> String {
    if x.abs() >= 1000.0 { format!("{x:.0}") } else if x.abs() >= 10.0 { format!("{x:.1}") } else { format!("{x:.3}") }
}

/// What one `step` call did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    /// Distinct evaluations spent so far, all lanes together.
    pub evaluations: usize,
    /// The evaluations all lanes may spend in total.
    pub budget: usize,
    pub done: bool,
    /// Generations that finished during this call, in order.
    pub generations: Vec<Generation>,
}

impl Progress {
    /// Fraction done, 0..=1, for a progress bar.
    pub fn fraction(&self) -> f64 {
        if self.done || self.budget == 0 { 1.0 } else { (self.evaluations as f64 / self.budget as f64).min(1.0) }
    }
}

/// A tuning run over one scenario: the stage, its baseline, and a lane per strategy.
pub struct Run {
    pub(crate) scenario: Scenario,
    pub(crate) setup: StageSetup,
    pub(crate) lanes: Vec<Lane>,
    /// The baseline ("before") configuration's outcome.
    baseline: Outcome,
    /// Configurations transferred from similar cases, re-priced on this scenario (`warm_start`).
    transferred: Vec<Trial>,
    /// The landscape stage's landscape (the cache or the toy grid), for drawing and its optimum.
    landscape: Option<std::sync::Arc<crate::stages::landscape::Landscape>>,
}

/// The generator of lane `i`: lane 0 uses the scenario seed itself, later lanes a fork of it.
pub fn lane_rng(seed: u64, i: usize) -> Rng {
    let mut r = Rng::seed_from_u64(seed);
    if i == 0 { r } else { r.fork(i as u64) }
}

impl Run {
    /// Validates the scenario, builds its stage and one study per strategy.
    pub fn new(s: &Scenario) -> Result<Run, String> {
        Run::build(s, None, None)
    }

    /// The same run, with the baseline's outcome priced elsewhere: the browser's page mirrors a
    /// run its Web Workers step, and takes the baseline from a worker instead of pricing it again
    /// on the page's thread (a deployment baseline costs 100+ ms).
    pub fn with_baseline(s: &Scenario, baseline: Outcome) -> Result<Run, String> {
        Run::build(s, Some(baseline), None)
    }

    /// A landscape-stage run on a landscape built by `Landscape::build` (which parses a cache's
    /// bytes once; the app builds it from a fetched or dropped file, the CLI from a file it reads).
    /// `Run::new` builds toy landscapes itself but cannot get a cache's bytes.
    pub fn with_landscape(s: &Scenario, land: std::sync::Arc<crate::stages::landscape::Landscape>) -> Result<Run, String> {
        Run::build(s, None, Some(land))
    }

    /// A mirror of a run that steps elsewhere (the browser's Web Workers): the same stage, lanes
    /// and studies, fed by `mirror_lane`, but no strategy objects (a mirror never asks one; its
    /// lanes' snapshots come from the workers). `baseline`: the baseline's outcome priced
    /// elsewhere (None: priced here); `land`: a landscape built elsewhere. Why: the page's module
    /// then links no strategy (they run in the engine module), a smaller first load.
    pub fn mirror(s: &Scenario, baseline: Option<Outcome>, land: Option<std::sync::Arc<crate::stages::landscape::Landscape>>) -> Result<Run, String> {
        Run::build_with(s, baseline, land, true)
    }

    /// The mirror of a landscape-stage run on a landscape the page built (`Run::mirror` with a
    /// landscape), built with the landscape stage alone: a page that only mirrors links no
    /// other stage.
    pub fn mirror_landscape(s: &Scenario, land: std::sync::Arc<crate::stages::landscape::Landscape>) -> Result<Run, String> {
        s.validate()?;
        let mut setup = stages::setup_with_landscape(s, land.clone())?;
        let baseline = if !setup.space.contains(&setup.baseline) {
            Outcome::Infeasible("the default configuration is outside the tuned space".into())
        } else {
            setup.objective.evaluate(&setup.baseline)
        };
        Run::assemble(s, setup, Vec::new(), baseline, Some(land), true)
    }

    /// Gives a mirror the transferred trials its workers priced (`warm_start` in a worker; the
    /// worker reports them, `transferred()`), so the mirror's lanes start as the workers' did.
    pub fn adopt_transferred(&mut self, repriced: Vec<Trial>) -> Result<usize, String> {
        if self.evaluations() > 0 {
            return Err("warm start must come before the first evaluation".into());
        }
        let mut kept = 0;
        for lane in &mut self.lanes {
            kept = lane.study.warm_start(&repriced);
        }
        self.transferred = repriced;
        Ok(kept)
    }

    fn build(s: &Scenario, known: Option<Outcome>, land: Option<std::sync::Arc<crate::stages::landscape::Landscape>>) -> Result<Run, String> {
        Run::build_with(s, known, land, false)
    }

    fn build_with(s: &Scenario, known: Option<Outcome>, land: Option<std::sync::Arc<crate::stages::landscape::Landscape>>, mirror: bool) -> Result<Run, String> {
        s.validate()?;
        let land = match (s.stage, land) {
            (crate::Stage::Landscape, None) => Some(crate::stages::landscape::Landscape::build(s, None)?),
            (_, l) => l,
        };
        let (mut setup, blocks) = match &land {
            Some(l) => (stages::setup_with_landscape(s, l.clone())?, Vec::new()),
            None => stages::setup_with_blocks(s)?,
        };
        let baseline = if !setup.space.contains(&setup.baseline) {
            Outcome::Infeasible("the default configuration is outside the tuned space".into())
        } else if let Some(b) = known {
            b
        } else {
            setup.objective.evaluate(&setup.baseline)
        };
        Run::assemble(s, setup, blocks, baseline, land, mirror)
    }

    /// What a mirror of this run needs of its stage, as data (`Run::from_shape`).
    pub fn shape(&self) -> RunShape {
        let st = &self.setup;
        RunShape { params: st.space.params().to_vec(), metrics: st.metrics.clone(), baseline: st.baseline.clone(), notes: st.notes.clone(), focus: st.focus.clone(), focus_budget: st.focus_budget }
    }

    /// A mirror built from a run's shape (`Run::shape`, sent by the worker that built the run)
    /// and its baseline's outcome: no stage is built, nothing is priced, no strategy exists.
    /// Why: building a deployment stage costs the page's thread 80+ ms, and the page only
    /// records and draws what its workers send. Its space has the parameters without the
    /// constraints (a mirror never samples; trials arrive checked). Not for landscapes (their
    /// mirror draws the landscape itself: `Run::mirror`).
    pub fn from_shape(s: &Scenario, shape: RunShape, baseline: Outcome) -> Result<Run, String> {
        let setup = StageSetup {
            space: Space::new(shape.params, &[])?,
            objective: Box::new(stages::NoObjective),
            metrics: shape.metrics,
            baseline: shape.baseline,
            focus: shape.focus,
            focus_budget: shape.focus_budget,
            notes: shape.notes,
        };
        Run::assemble(s, setup, Vec::new(), baseline, None, true)
    }

    fn assemble(s: &Scenario, setup: StageSetup, blocks: Vec<crate::stages::blocks::Block>, baseline: Outcome, land: Option<std::sync::Arc<crate::stages::landscape::Landscape>>, mirror: bool) -> Result<Run, String> {
        // Every lane starts from the defaults, as a free (warm) trial: the trace starts at the
        // "before" point and the best found is never worse than it.
        let start = match &baseline {
            Outcome::Ok(v) => Trial { id: 0, config: setup.baseline.clone(), state: TrialState::Ok, values: v.clone(), reason: None, warm: true, evaluation: 0 },
            Outcome::Infeasible(r) | Outcome::Failed(r) => Trial { id: 0, config: setup.baseline.clone(), state: TrialState::Infeasible, values: Vec::new(), reason: Some(r.clone()), warm: true, evaluation: 0 },
        };
        let mut lanes = Vec::new();
        for (i, spec) in s.strategies().into_iter().enumerate() {
            let inner: Box<dyn Strategy> = if mirror {
                Box::new(Mirrored)
            } else if blocks.is_empty() {
                tunelab_search::strategies::by_name(&spec.name, &spec.options)?
            } else {
                Box::new(Blockwise::new(&spec.name, &spec.options, blocks.clone(), setup.baseline.clone(), s.early_stop)?)
            };
            let strategy: Box<dyn Strategy> = if mirror || setup.focus.is_empty() || setup.focus_budget == 0 {
                inner
            } else {
                Box::new(Focused::new(inner, setup.focus.clone(), s.budget))
            };
            let mut opts = StudyOptions::budget(s.budget + if setup.focus.is_empty() { 0 } else { setup.focus_budget });
            opts.patience = s.patience;
            opts.strategy_stop = s.early_stop;
            let mut study = Study::new(setup.space.clone(), setup.metrics.clone(), opts)?;
            // A landscape has no default to start from: its lanes start cold, as Kernel Tuner's
            // simulation mode (and `tunelab replay`) does, so lane 0 replays `kernel_tuner::replay`.
            if land.is_none() {
                study.warm_start(std::slice::from_ref(&start));
            }
            lanes.push(Lane { spec: spec.clone(), strategy, study, rng: lane_rng(s.seed, i), reported_batches: 0, reported_best: None });
        }
        Ok(Run { scenario: s.clone(), setup, lanes, baseline, transferred: Vec::new(), landscape: land })
    }

    /// Transfer: seeds every lane, before it starts, with the CONFIGURATIONS of earlier trials
    /// (e.g. `KnowledgeBase::warm_trials` of similar cases). Each configuration is re-priced on
    /// this scenario with the stage objective (the function the study uses), so a value measured
    /// on another scenario never enters this study or its best (issue 13 #3); the earlier values
    /// are ignored. At most `WARM_LIMIT` configurations; they cost no budget. Refused
    /// once a lane has evaluated anything, since the history must stay a prefix of warm trials.
    /// Returns how many trials each lane kept; `transferred()` lists them.
    pub fn warm_start(&mut self, earlier: &[Trial]) -> Result<usize, String> {
        if self.evaluations() > 0 {
            return Err("warm start must come before the first evaluation".into());
        }
        let mut seen = std::collections::HashSet::new();
        let mut repriced = Vec::new();
        for t in earlier {
            if repriced.len() >= WARM_LIMIT {
                break;
            }
            if self.setup.space.check(&t.config).is_err() || !seen.insert(t.config.clone()) {
                continue;
            }
            let (state, values, reason) = match self.setup.objective.evaluate(&t.config) {
                Outcome::Ok(v) => (TrialState::Ok, v, None),
                Outcome::Infeasible(r) => (TrialState::Infeasible, Vec::new(), Some(r)),
                Outcome::Failed(r) => (TrialState::Failed, Vec::new(), Some(r)),
            };
            repriced.push(Trial { id: 0, config: t.config.clone(), state, values, reason, warm: true, evaluation: 0 });
        }
        let mut kept = 0;
        for lane in &mut self.lanes {
            kept = lane.study.warm_start(&repriced);
        }
        self.transferred = repriced;
        Ok(kept)
    }

    /// The configurations `warm_start` transferred, with their values on THIS scenario.
    pub fn transferred(&self) -> &[Trial] {
        &self.transferred
    }

    /// Does at most `max_steps` study steps (each at most one evaluation), round-robin over the
    /// lanes, and reports the generations that finished.
    pub fn step(&mut self, max_steps: usize) -> Progress {
        let mut generations = Vec::new();
        let mut left = max_steps;
        while left > 0 && !self.is_done() {
            for (i, lane) in self.lanes.iter_mut().enumerate() {
                if left == 0 {
                    break;
                }
                if lane.study.is_done() {
                    continue;
                }
                left -= 1;
                lane.step_once(i, self.setup.objective.as_mut(), &mut generations);
            }
        }
        Progress { evaluations: self.evaluations(), budget: self.budget(), done: self.is_done(), generations }
    }

    /// Steps lane `i` alone, at most `max_steps` study steps. Lanes share nothing that changes
    /// their trials (own strategy, study and generator; a pure objective), so stepping each lane
    /// on its own (the browser gives each a Web Worker) gives the same trials as `step`.
    pub fn step_lane(&mut self, i: usize, max_steps: usize) -> Progress {
        let mut generations = Vec::new();
        if let Some(lane) = self.lanes.get_mut(i) {
            for _ in 0..max_steps {
                if lane.study.is_done() {
                    break;
                }
                lane.step_once(i, self.setup.objective.as_mut(), &mut generations);
            }
        }
        let done = self.lanes.get(i).is_none_or(|l| l.study.is_done());
        Progress { evaluations: self.evaluations(), budget: self.budget(), done, generations }
    }

    /// Mirrors lane `i` of a copy of this run that steps elsewhere (see `Study::mirror`): its
    /// new trials, its batch count and its stop reason.
    pub fn mirror_lane(&mut self, i: usize, trials: &[Trial], batches: usize, stop: Option<tunelab_search::StopReason>) -> Result<(), String> {
        let lane = self.lanes.get_mut(i).ok_or_else(|| format!("no lane {i}"))?;
        lane.study.mirror(trials, batches, stop)?;
        lane.reported_batches = batches;
        lane.reported_best = lane.study.best_value();
        Ok(())
    }

    /// Runs to the end (CLI and tests).
    pub fn run_to_end(&mut self) -> Vec<Generation> {
        let mut all = Vec::new();
        while !self.is_done() {
            all.extend(self.step(256).generations);
        }
        all
    }

    /// True once every lane has stopped.
    pub fn is_done(&self) -> bool {
        self.lanes.iter().all(|l| l.study.is_done())
    }

    /// Distinct evaluations spent, all lanes together.
    pub fn evaluations(&self) -> usize {
        self.lanes.iter().map(|l| l.study.evaluations()).sum()
    }

    /// The total budget of all lanes.
    pub fn budget(&self) -> usize {
        self.lanes.iter().map(|l| l.study.options().budget).sum()
    }

    pub fn scenario(&self) -> &Scenario { &self.scenario }
    /// The landscape of a landscape-stage run: its whole surface (`all_points`) and true optimum.
    pub fn landscape(&self) -> Option<&std::sync::Arc<crate::stages::landscape::Landscape>> { self.landscape.as_ref() }
    pub fn space(&self) -> &Space { &self.setup.space }
    /// The metrics every trial reports, primary (top-priority goal) first.
    pub fn metrics(&self) -> &[Metric] { &self.setup.metrics }
    /// Warnings from loading the model or building the stage.
    pub fn notes(&self) -> &[String] { &self.setup.notes }
    pub fn lanes(&self) -> &[Lane] { &self.lanes }
    /// The baseline configuration ("before").
    pub fn baseline_config(&self) -> &Config { &self.setup.baseline }
    /// The baseline's outcome: its metric values, or why it is infeasible.
    pub fn baseline(&self) -> &Outcome { &self.baseline }

    /// Best primary value of lane `i`.
    pub fn best_value(&self, i: usize) -> Option<f64> {
        self.lanes.get(i).and_then(|l| l.study.best_value())
    }

    /// Best trial of lane `i`.
    pub fn best_trial(&self, i: usize) -> Option<&Trial> {
        self.lanes.get(i).and_then(|l| l.study.best())
    }

    /// Best trial over all lanes (ties: the earlier lane).
    pub fn overall_best(&self) -> Option<(usize, &Trial)> {
        let m = self.setup.metrics.first()?;
        let mut best: Option<(usize, &Trial)> = None;
        for (i, l) in self.lanes.iter().enumerate() {
            if let Some(t) = l.study.best() {
                let v = m.signed(t.value().unwrap_or(f64::INFINITY));
                if best.is_none_or(|(_, b)| v < m.signed(b.value().unwrap_or(f64::INFINITY))) {
                    best = Some((i, t));
                }
            }
        }
        best
    }

    /// (evaluations, best value) at each improvement of lane `i`.
    pub fn convergence(&self, i: usize) -> &[(usize, f64)] {
        self.lanes.get(i).map(|l| l.study.convergence()).unwrap_or(&[])
    }

    /// Trials lane `i` evaluated, in order. The free baseline trial every lane starts from is
    /// not among them (it is `baseline()`; `lanes()[i].study.trials()` has both).
    pub fn trials(&self, i: usize) -> &[Trial] {
        let all = self.lanes.get(i).map(|l| l.study.trials()).unwrap_or(&[]);
        let warm = all.iter().take_while(|t| t.warm).count();
        &all[warm..]
    }

    /// Lane `i`'s strategy state for teaching views (generation, temperature, ...), merged with
    /// the study's progress keys.
    pub fn snapshot(&self, i: usize) -> Snapshot {
        self.lanes.get(i).map(|l| l.study.snapshot(l.strategy.as_ref())).unwrap_or_default()
    }

    /// Lane `i`'s Ok trials that no other Ok trial beats on both metrics `a` and `b` (indices
    /// into `metrics()`), sorted by metric `a`.
    pub fn pareto(&self, i: usize, a: usize, b: usize) -> Vec<&Trial> {
        let (Some(ma), Some(mb)) = (self.setup.metrics.get(a), self.setup.metrics.get(b)) else { return Vec::new() };
        let ok: Vec<&Trial> = self.trials(i).iter().filter(|t| t.is_ok() && t.values.len() > a.max(b)).collect();
        let pts: Vec<Vec<f64>> = ok.iter().map(|t| vec![ma.signed(t.values[a]), mb.signed(t.values[b])]).collect();
        let mut front: Vec<&Trial> = pareto::front(&pts).into_iter().map(|k| ok[k]).collect();
        front.sort_by(|x, y| ma.signed(x.values[a]).total_cmp(&ma.signed(y.values[a])).then(x.id.cmp(&y.id)));
        front
    }

    /// Evaluates any configuration of the space with the stage objective (heat maps, "what if").
    pub fn evaluate(&mut self, c: &Config) -> Outcome {
        match self.setup.space.check(c) {
            Ok(()) => self.setup.objective.evaluate(c),
            Err(why) => Outcome::Infeasible(why),
        }
    }

    /// A fingerprint of every trial of every lane (configurations, states and the exact bits of
    /// every value), as 16 hex digits: equal digests mean bit-identical runs, so a browser test
    /// can compare its run with `tunelab run --json`'s `trace_digest`.
    pub fn digest(&self) -> String {
        // FNV-1a: tiny, portable, and the same on every target.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |bytes: &[u8]| {
            for b in bytes {
                h ^= *b as u64;
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        for l in &self.lanes {
            eat(l.spec.name.as_bytes());
            for t in l.study.trials() {
                eat(&(t.id as u64).to_le_bytes());
                eat(&[t.state as u8]);
                for v in &t.config.0 {
                    eat(v.to_string().as_bytes());
                    eat(b",");
                }
                for x in &t.values {
                    eat(&x.to_bits().to_le_bytes());
                }
            }
        }
        format!("{h:016x}")
    }
}

/// Most earlier configurations a warm start transfers (best cases' trials first), in the app and
/// the CLI alike. Each is re-priced on the new scenario (one objective call), so the bound also
/// bounds the work a warm start adds before the first step.
pub const WARM_LIMIT: usize = 64;

// One number format for `best` everywhere; it lives with the metric registry.
pub use crate::spec::metrics::format_best;

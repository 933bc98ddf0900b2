//! The runtime stage: a load that changes over time, a monitor that detects a service-level
//! breach, and re-tuning of the deployment when it happens, with energy per token as the goal
//! (power versus performance) and the SLO as the constraint.
//!
//! Each load is replayed with the continuous-batching scheduler (`crate::scheduler`): the
//! scenario's requests arrive as a Poisson stream at the step's rate and TTFT / TPOT are the
//! simulated percentiles, queueing included; capacity is the deployment objective's closed loop
//! at max_num_seqs. In the static simple mode (`deployment.serving.mode = "static"`) the
//! per-batch latency goes through `crate::queueing`'s M/G/c approximation instead.
//! Energy at a load adds the idle power of the chips over the idle share of the time to the
//! simulated energy per token of a busy batch, so a small deployment wins at night and a larger
//! one is needed at the peak. Re-tuning is warm-started: every configuration simulated earlier is
//! re-scored at the new load from a cache (no simulator call) and handed to `Study::warm_start`.

use crate::stages::StageSetup;
use crate::stages::queueing::{queue, QueueState};
use crate::spec::scenario::{Constraints, Scenario, Stage};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use tunelab_search::{Config, Metric, Objective, Outcome, Rng, Space, Study, StudyOptions, Trial};

// The options are specification data; re-exported for existing paths.
pub use crate::spec::options::runtime::{RuntimeOptions, TraceSpec};

/// One time step of the simulated service.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RuntimeStep {
    pub step: usize,
    pub minute: f64,
    pub load_rps: f64,
    /// Index into `RuntimeTimeline::configs` of the configuration serving this step.
    pub config: usize,
    /// p-quantile TTFT including the queue (None: the queue grows without bound).
    pub ttft_ms: Option<f64>,
    pub tpot_ms: f64,
    pub utilisation: f64,
    pub energy_j_per_token: f64,
    pub breach: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breach_reason: Option<String>,
}

/// A re-tune the monitor triggered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RetuneEvent {
    pub step: usize,
    /// "breach" or "scale_down".
    pub kind: String,
    pub reason: String,
    pub load_rps: f64,
    pub from: usize,
    pub to: usize,
    /// New simulator evaluations spent, and earlier trials it was warm-started with.
    pub evaluations: usize,
    pub warm_trials: usize,
    /// After the re-tune the step meets the SLO.
    pub fixed: bool,
}

/// What the app charts: load, chosen configuration, latency and breaches over time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RuntimeTimeline {
    pub trace: String,
    pub peak_rps: f64,
    pub slo_ttft_ms: f64,
    pub slo_tpot_ms: f64,
    pub percentile: f64,
    pub param_names: Vec<String>,
    /// Configurations used, described ("batch=16, tp=2, ...").
    pub configs: Vec<String>,
    pub steps: Vec<RuntimeStep>,
    pub events: Vec<RetuneEvent>,
    pub notes: Vec<String>,
}

/// Deployment results by configuration, shared by every study of one runtime simulation.
struct Cache {
    inner: Box<dyn Objective>,
    names: Vec<String>,
    metrics: Vec<Metric>,
    seen: HashMap<Config, Outcome>,
    evaluations: usize,
}

impl Cache {
    fn get(&mut self, c: &Config) -> Outcome {
        if let Some(o) = self.seen.get(c) {
            return o.clone();
        }
        self.evaluations += 1;
        let o = self.inner.evaluate(c);
        self.seen.insert(c.clone(), o.clone());
        o
    }
    fn metric(&self, v: &[f64], name: &str) -> Option<f64> {
        self.metrics.iter().position(|m| m.name == name).and_then(|i| v.get(i).copied())
    }
    fn param(&self, c: &Config, names: &[&str]) -> Option<f64> {
        names.iter().find_map(|n| self.names.iter().position(|x| x == n)).and_then(|i| c.0.get(i)).and_then(|v| v.as_f64())
    }
}

/// The serving model of one configuration at one load.
struct Serving {
    q: QueueState,
    ttft_ms: Option<f64>,
    tpot_ms: f64,
    energy: f64,
    power_w: f64,
    /// Mean TTFT, TPOT, ITL and end-to-end latency (ms) at this load; None: unbounded queue.
    means: Option<[f64; 4]>,
}

struct Env {
    cache: Rc<RefCell<Cache>>,
    /// The scheduler simulation at a request rate (None in the static simple mode, which uses
    /// the M/G/c approximation instead).
    server: Option<RefCell<crate::stages::deployment::Server>>,
    output_len: f64,
    idle_w: f64,
    slo_ttft: f64,
    slo_tpot: f64,
    pct: f64,
}

impl Env {
    fn serve(&self, c: &Config, rate: f64) -> Result<Serving, String> {
        let mut cache = self.cache.borrow_mut();
        let v = match cache.get(c) {
            Outcome::Ok(v) => v,
            Outcome::Infeasible(r) | Outcome::Failed(r) => return Err(r),
        };
        if let Some(server) = &self.server {
            // Capacity: the deployment objective's closed loop at max_num_seqs (a full server).
            let capacity = cache.metric(&v, "requests_per_s").ok_or("the deployment stage reports no requests_per_s")?;
            let chips = cache.param(c, &["tp", "tensor_parallel"]).unwrap_or(1.0).max(1.0);
            let at_rest = ["ttft_mean_ms", "tpot_mean_ms", "itl_mean_ms", "e2e_mean_ms"].map(|n| cache.metric(&v, n).unwrap_or(0.0));
            drop(cache);
            let utilisation = if capacity > 0.0 { rate / capacity } else { f64::INFINITY };
            if rate <= 0.0 {
                let q = QueueState { utilisation: 0.0, wait_probability: 0.0, mean_wait_ms: Some(0.0), wait_pct_ms: Some(0.0), capacity_rps: capacity };
                let tpot = v.get(2).copied().unwrap_or(0.0);
                let means = Some(at_rest);
                return Ok(Serving { q, ttft_ms: v.get(1).copied(), tpot_ms: tpot, energy: v.get(5).copied().unwrap_or(0.0), power_w: 0.0, means });
            }
            let st = server.borrow_mut().at_rate(c, rate)?;
            let pick = |p: &crate::stages::scheduler::Pcts| if self.pct >= 0.95 { p.p99 } else if self.pct >= 0.7 { p.p90 } else { p.p50 };
            let tokens = (st.output_tokens_per_s * st.duration_s).max(1.0);
            let idle_s = st.duration_s * (1.0 - st.busy_fraction).max(0.0);
            let energy = chips * (st.energy_j + self.idle_w * idle_s) / tokens;
            let q = QueueState {
                utilisation,
                wait_probability: 1.0 - st.slo_attained.min(1.0),
                mean_wait_ms: Some(st.queue_ms.mean),
                wait_pct_ms: Some(pick(&st.queue_ms)),
                capacity_rps: capacity,
            };
            let means = Some([st.ttft_ms.mean, st.tpot_ms.mean, st.itl_ms.mean, st.e2e_ms.mean]);
            return Ok(Serving { q, ttft_ms: Some(pick(&st.ttft_ms)), tpot_ms: pick(&st.tpot_ms), energy, power_w: energy * st.output_tokens_per_s, means });
        }
        let ttft = cache.metric(&v, "ttft_ms").ok_or("the deployment stage reports no ttft_ms")?;
        let tpot = cache.metric(&v, "tpot_ms").ok_or("the deployment stage reports no tpot_ms")?;
        let tps = cache.metric(&v, "tokens_per_s").unwrap_or(0.0);
        let e_tok = cache.metric(&v, "energy_j_per_token").unwrap_or(0.0);
        // Concurrent sequences: the batch parameter, else Little's law on the decode rate.
        let slots = cache.param(c, &["batch", "batch_size"]).unwrap_or(tps * tpot / 1e3).max(1.0);
        let chips = cache.param(c, &["tp", "tensor_parallel"]).unwrap_or(1.0).max(1.0);
        let service_s = (ttft + self.output_len * tpot) / 1e3;
        let q = queue(rate, slots as u64, service_s, 0.0, self.pct);
        let tokens_per_s = rate * self.output_len;
        let idle = chips * self.idle_w * (1.0 - q.utilisation).max(0.0);
        let energy = if tokens_per_s > 0.0 { e_tok + idle / tokens_per_s } else { e_tok };
        let ttft_ms = q.wait_pct_ms.map(|w| ttft + w);
        // Means from the queue's mean wait; every token after the first takes one TPOT.
        let means = q.mean_wait_ms.map(|w| [ttft + w, tpot, tpot, ttft + w + (self.output_len - 1.0).max(0.0) * tpot]);
        Ok(Serving { ttft_ms, tpot_ms: tpot, energy, power_w: energy * tokens_per_s, q, means })
    }

    /// Why a serving state breaks the SLO, if it does.
    fn breach(&self, s: &Serving, util_limit: f64) -> Option<String> {
        if s.q.utilisation >= util_limit {
            return Some(format!("utilisation {:.0}% over {:.0}% (capacity {:.2} req/s)", s.q.utilisation * 100.0, util_limit * 100.0, s.q.capacity_rps));
        }
        match s.ttft_ms {
            None => Some("the request queue grows without bound".into()),
            Some(t) if t > self.slo_ttft => Some(format!("p{:.0} TTFT {t:.0} ms over the SLO of {:.0} ms", self.pct * 100.0, self.slo_ttft)),
            _ if s.tpot_ms > self.slo_tpot => Some(format!("TPOT {:.1} ms over the SLO of {:.1} ms", s.tpot_ms, self.slo_tpot)),
            _ => None,
        }
    }
}

/// The objective of tuning for one load: energy per token first, the SLO as the constraint.
struct AtLoad {
    env: Rc<Env>,
    rate: f64,
    headroom: f64,
}

pub fn runtime_metrics() -> Vec<Metric> {
    vec![
        Metric::minimize("energy_j_per_token", "J/token"),
        Metric::minimize("ttft_ms", "ms"),
        Metric::minimize("tpot_ms", "ms"),
        Metric::minimize("utilisation", ""),
        Metric::maximize("capacity_rps", "req/s"),
        Metric::minimize("power_w", "W"),
        Metric::minimize("ttft_mean_ms", "ms"),
        Metric::minimize("tpot_mean_ms", "ms"),
        Metric::minimize("itl_mean_ms", "ms"),
        Metric::minimize("e2e_mean_ms", "ms"),
    ]
}

impl AtLoad {
    fn score(&self, c: &Config) -> Outcome {
        match self.env.serve(c, self.rate) {
            Err(r) => Outcome::Infeasible(r),
            Ok(s) => match self.env.breach(&s, self.headroom) {
                Some(r) => Outcome::Infeasible(format!("at {:.2} req/s: {r}", self.rate)),
                None => {
                    let m = s.means.unwrap_or([f64::MAX; 4]);
                    Outcome::Ok(vec![s.energy, s.ttft_ms.unwrap_or(f64::MAX), s.tpot_ms, s.q.utilisation, s.q.capacity_rps, s.power_w, m[0], m[1], m[2], m[3]])
                }
            },
        }
    }
}

impl Objective for AtLoad {
    fn metrics(&self) -> Vec<Metric> {
        runtime_metrics()
    }
    fn evaluate(&mut self, c: &Config) -> Outcome {
        self.score(c)
    }
}

struct Prepared {
    space: Space,
    baseline: Config,
    env: Rc<Env>,
    opts: RuntimeOptions,
    rel: Vec<f64>,
    trace_name: String,
    notes: Vec<String>,
}

fn prepare(s: &Scenario) -> Result<Prepared, String> {
    let opts = s.runtime.clone();
    let (trace_name, rel) = opts.validate()?;
    let slo_ttft = opts.slo_ttft_ms.or(s.constraints.max_ttft_ms).unwrap_or(2000.0);
    let slo_tpot = opts.slo_tpot_ms.or(s.constraints.max_tpot_ms).unwrap_or(100.0);
    // The deployment stage simulates per-batch latency; the SLO is applied here, after queueing.
    let mut d = s.clone();
    d.stage = Stage::Deployment;
    d.objectives.clear();
    d.constraints = Constraints { max_memory_gib: s.constraints.max_memory_gib, ..Default::default() };
    // With the scheduler, the deployment objective measures capacity (a closed loop as full as
    // max_num_seqs) and the server replays each load as Poisson arrivals at its rate.
    let scheduled = !d.deployment.serving.is_static();
    if scheduled {
        d.deployment.serving.arrival = "closed".into();
        d.deployment.serving.concurrency = None;
    }
    let dep = crate::stages::deployment::setup(&d)?;
    let server = if scheduled { Some(RefCell::new(crate::stages::deployment::Server::new(&d)?)) } else { None };
    let (_, device, _) = crate::stages::context::resolve(s)?;
    let cache = Cache { inner: dep.objective, names: dep.space.names().to_vec(), metrics: dep.metrics, seen: HashMap::new(), evaluations: 0 };
    let env = Env {
        cache: Rc::new(RefCell::new(cache)),
        server,
        output_len: s.workload.output_len.max(1) as f64,
        idle_w: device.power_idle_w.max(0.0),
        slo_ttft,
        slo_tpot,
        pct: opts.percentile,
    };
    Ok(Prepared { space: dep.space, baseline: dep.baseline, env: Rc::new(env), opts, rel, trace_name, notes: dep.notes })
}

/// Builds the runtime stage: the deployment space tuned for energy at the trace's peak load.
pub fn setup(s: &Scenario) -> Result<StageSetup, String> {
    let p = prepare(s)?;
    let peak = match p.opts.peak_rps {
        Some(x) => x,
        None => p.env.serve(&p.baseline, 0.0).map(|x| x.q.capacity_rps).map_err(|e| format!("runtime: the baseline configuration is infeasible ({e}); set runtime.peak_rps"))?,
    };
    let max_rel = p.rel.iter().copied().fold(0.0, f64::max);
    let mut notes = p.notes;
    notes.push(format!("tuned for the trace peak of {:.2} req/s; latency includes an M/G/c queueing approximation", peak * max_rel));
    let objective = AtLoad { env: p.env, rate: peak * max_rel, headroom: p.opts.headroom };
    Ok(StageSetup { space: p.space, objective: Box::new(objective), metrics: runtime_metrics(), baseline: p.baseline, focus: Vec::new(), focus_budget: 0, notes })
}

/// Tunes for one load, warm-started from every configuration simulated so far. Returns the best
/// configuration (the highest-capacity one when none meets the SLO) and the evaluations spent.
fn tune(s: &Scenario, p: &Prepared, rate: f64, budget: usize, salt: u64) -> Result<(Config, usize, usize), String> {
    let mut obj = AtLoad { env: p.env.clone(), rate, headroom: p.opts.headroom };
    let known: Vec<Config> = p.env.cache.borrow().seen.keys().cloned().collect();
    let mut known = known;
    known.sort_by_key(|c| format!("{c:?}")); // HashMap order is not deterministic
    let warm: Vec<Trial> = known.iter().enumerate().map(|(i, c)| {
        let (state, values, reason) = match obj.score(c) {
            Outcome::Ok(v) => (tunelab_search::TrialState::Ok, v, None),
            Outcome::Infeasible(r) => (tunelab_search::TrialState::Infeasible, vec![], Some(r)),
            Outcome::Failed(r) => (tunelab_search::TrialState::Failed, vec![], Some(r)),
        };
        Trial { id: i, config: c.clone(), state, values, reason, warm: true, evaluation: 0 }
    }).collect();
    let mut study = Study::new(p.space.clone(), runtime_metrics(), StudyOptions::budget(budget.max(1)))?;
    let kept = study.warm_start(&warm);
    let mut strategy = tunelab_search::strategies::by_name(&s.strategy.name, &s.strategy.options)?;
    let mut rng = Rng::seed_from_u64(s.seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let before = p.env.cache.borrow().evaluations;
    while study.step(strategy.as_mut(), &mut obj, &mut rng).is_none() {}
    let spent = p.env.cache.borrow().evaluations - before;
    if let Some(b) = study.best() {
        return Ok((b.config.clone(), spent, kept));
    }
    // Nothing meets the SLO: serve with the most capacity seen.
    let mut best: Option<(f64, Config)> = None;
    for t in study.trials() {
        if let Ok(sv) = p.env.serve(&t.config, rate) {
            if best.as_ref().is_none_or(|(c, _)| sv.q.capacity_rps > *c) {
                best = Some((sv.q.capacity_rps, t.config.clone()));
            }
        }
    }
    best.map(|(_, c)| (c, spent, kept)).ok_or_else(|| "runtime: no feasible deployment configuration at all".into())
}

/// Runs the monitor over the trace: serve, detect breaches, re-tune, scale down when idle.
pub fn simulate_runtime(s: &Scenario) -> Result<RuntimeTimeline, String> {
    let p = prepare(s)?;
    let budget = p.opts.retune_budget.unwrap_or((s.budget / 4).max(8)).min(s.budget.max(1));
    let mut notes = p.notes.clone();
    // The first choice is tuned for the first step; without a peak rate it is made relative to it.
    let (peak, first) = match p.opts.peak_rps {
        Some(x) => (x, tune(s, &p, x * p.rel[0], s.budget, 0)?.0),

        None => {
            let base = p.env.serve(&p.baseline, 0.0).map(|x| x.q.capacity_rps).map_err(|e| format!("runtime: baseline infeasible ({e}); set runtime.peak_rps"))?;
            let c = tune(s, &p, base * p.rel[0], s.budget, 0)?.0;
            let cap = p.env.serve(&c, 0.0).map(|x| x.q.capacity_rps).unwrap_or(base);
            notes.push(format!("runtime.peak_rps not set: the peak is {:.2}x the capacity of the first chosen configuration ({cap:.2} req/s)", p.opts.spike_factor));
            (cap * p.opts.spike_factor, c)
        }
    };
    notes.push(format!("first tuning: {} simulator evaluations; each re-tune up to {budget} more", p.env.cache.borrow().evaluations));
    let names = p.space.names().to_vec();
    let mut configs = vec![first];
    // `last_tune`: the step of the last re-tune attempt; scale-down attempts wait 4 steps after it.
    let (mut cur, mut steps, mut events, mut last_tune) = (0usize, Vec::new(), Vec::new(), 0usize);
    for (t, r) in p.rel.iter().enumerate() {
        let rate = r * peak;
        let mut sv = p.env.serve(&configs[cur], rate)?;
        let mut why = p.env.breach(&sv, 1.0);
        let idle = why.is_none() && sv.q.utilisation < p.opts.scale_down_below && t >= last_tune + 4;
        if why.is_some() || idle {
            let (kind, reason) = match &why { Some(r) => ("breach", r.clone()), None => ("scale_down", format!("utilisation {:.0}% under {:.0}%", sv.q.utilisation * 100.0, p.opts.scale_down_below * 100.0)) };
            let (c, spent, warm) = tune(s, &p, rate, budget, t as u64 + 1)?;
            last_tune = t;
            let better = p.env.serve(&c, rate)?;
            let keep_old = c == configs[cur] || (kind == "scale_down" && better.energy >= sv.energy);
            if !keep_old {
                let to = configs.iter().position(|x| *x == c).unwrap_or_else(|| { configs.push(c.clone()); configs.len() - 1 });
                let fixed = p.env.breach(&better, 1.0).is_none();
                events.push(RetuneEvent { step: t, kind: kind.into(), reason, load_rps: rate, from: cur, to, evaluations: spent, warm_trials: warm, fixed });
                cur = to;
                sv = better;
                why = p.env.breach(&sv, 1.0);
            } else if kind == "breach" {
                events.push(RetuneEvent { step: t, kind: kind.into(), reason, load_rps: rate, from: cur, to: cur, evaluations: spent, warm_trials: warm, fixed: false });
            }
        }
        steps.push(RuntimeStep {
            step: t, minute: t as f64 * p.opts.step_minutes, load_rps: rate, config: cur, ttft_ms: sv.ttft_ms, tpot_ms: sv.tpot_ms,
            utilisation: sv.q.utilisation, energy_j_per_token: sv.energy, breach: why.is_some(), breach_reason: why,
        });
    }
    let configs = configs.iter().map(|c| c.describe(&names)).collect();
    Ok(RuntimeTimeline {
        trace: p.trace_name.clone(), peak_rps: peak, slo_ttft_ms: p.env.slo_ttft, slo_tpot_ms: p.env.slo_tpot, percentile: p.opts.percentile,
        param_names: names, configs, steps, events, notes,
    })
}

//! The explore view: a heat map of the stage's primary metric over any two parameters (the others
//! held at a given or the baseline configuration), with infeasible cells carrying their reason,
//! and the detail of one point: its engine breakdown and its place on the roofline.
//!
//! Why through the stage objective: the heat map shows exactly what the tuner would see,
//! constraint violations ("does not fit L0A", "out of memory") included.

use crate::spec::scenario::{Scenario, Stage};
use crate::stages::serving::{tile_mode, OpCost, Phase, TileMode};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tunelab_search::{Config, Outcome, Param, TrialState, Value};
use tunelab_sim::estimate::ALL_BOUNDS;
use tunelab_sim::memory::MemoryBreakdown;

/// Most levels shown per axis (continuous or long axes are sampled evenly).
pub const MAX_AXIS: usize = 32;

/// One cell: a value, or why the point is not feasible.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A heat map of the primary metric over two parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeatMap {
    pub x_param: String,
    pub y_param: String,
    pub x_values: Vec<Value>,
    pub y_values: Vec<Value>,
    pub metric: String,
    pub unit: String,
    pub minimize: bool,
    /// Rows by y, columns by x.
    pub cells: Vec<Vec<Cell>>,
    /// (x index, y index) of the best feasible cell.
    pub best: Option<(usize, usize)>,
}

fn axis(p: &Param) -> Vec<Value> {
    match p.levels() {
        Some(n) if n <= MAX_AXIS => (0..n).map(|i| p.level_value(p.level_at_rank(i))).collect(),
        Some(n) => (0..MAX_AXIS).map(|i| p.level_value(p.level_at_rank(i * (n - 1) / (MAX_AXIS - 1)))).collect(),
        None => (0..16).map(|i| p.from_unit((i as f64 + 0.5) / 16.0)).collect(),
    }
}

/// The heat map of the scenario's stage over `x_param` x `y_param`, other parameters at `base`
/// (None: the stage's baseline).
pub fn heatmap(s: &Scenario, x_param: &str, y_param: &str, base: Option<&Config>) -> Result<HeatMap, String> {
    heatmap_in(s, &mut crate::stages::setup(s)?, x_param, y_param, base)
}

/// `heatmap` on a stage already built (the page draws a landscape it loaded with the landscape
/// stage alone, `stages::setup_with_landscape`, and links no other stage).
pub fn heatmap_in(s: &Scenario, st: &mut crate::stages::StageSetup, x_param: &str, y_param: &str, base: Option<&Config>) -> Result<HeatMap, String> {
    let find = |n: &str| st.space.index_of(n).ok_or_else(|| format!("explore: the {} stage has no parameter '{}' (it has {})", s.stage.name(), crate::spec::scenario::clip(n), st.space.names().join(", ")));
    let (xi, yi) = (find(x_param)?, find(y_param)?);
    if xi == yi {
        return Err("explore: choose two different parameters".into());
    }
    let base = base.cloned().unwrap_or_else(|| st.baseline.clone());
    if base.len() != st.space.names().len() {
        return Err("explore: the base configuration does not match the space".into());
    }
    let (xs, ys) = (axis(&st.space.params()[xi]), axis(&st.space.params()[yi]));
    let metric = st.metrics.first().cloned().ok_or("explore: the stage reports no metric")?;
    let minimize = metric.direction == tunelab_search::Direction::Minimize;
    let mut cells = Vec::with_capacity(ys.len());
    let mut best: Option<(f64, (usize, usize))> = None;
    for (j, y) in ys.iter().enumerate() {
        let mut row = Vec::with_capacity(xs.len());
        for (i, x) in xs.iter().enumerate() {
            let mut c = base.clone();
            c.0[xi] = x.clone();
            c.0[yi] = y.clone();
            let cell = match st.space.check(&c) {
                Err(e) => Cell { value: None, reason: Some(e) },
                Ok(()) => match st.objective.evaluate(&c) {
                    Outcome::Ok(v) => Cell { value: v.first().copied(), reason: None },
                    Outcome::Infeasible(r) | Outcome::Failed(r) => Cell { value: None, reason: Some(r) },
                },
            };
            if let Some(v) = cell.value.filter(|v| v.is_finite()) {
                let sv = metric.signed(v);
                if best.is_none_or(|(b, _)| sv < b) {
                    best = Some((sv, (i, j)));
                }
            }
            row.push(cell);
        }
        cells.push(row);
    }
    Ok(HeatMap {
        x_param: x_param.into(), y_param: y_param.into(), x_values: xs, y_values: ys,
        metric: metric.name, unit: metric.unit, minimize, cells, best: best.map(|b| b.1),
    })
}

/// One operator on the roofline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RooflinePoint {
    pub name: String,
    pub intensity: f64,
    pub attained_tflops: f64,
    pub time_ms: f64,
    pub bound: String,
}

/// The detail of one configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointDetail {
    /// The stage's metrics (name, value, unit), or why the point is infeasible.
    pub metrics: Vec<(String, f64, String)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infeasible: Option<String>,
    /// What the breakdown below simulates ("decode step at default tilings", ...).
    pub simulated: String,
    pub total_ms: f64,
    /// Exposed (critical-path) and busy time per engine, ms.
    pub exposed_ms: BTreeMap<String, f64>,
    pub busy_ms: BTreeMap<String, f64>,
    pub memory: Option<MemoryBreakdown>,
    /// Whole-step roofline coordinates and the chip's roof.
    pub intensity: f64,
    pub attained_tflops: f64,
    pub peak_tflops: f64,
    pub hbm_gbs: f64,
    pub ridge_intensity: f64,
    pub ops: Vec<RooflinePoint>,
    /// A served deployment's time to first token in named parts (front end, queueing, prefill,
    /// host, hand-off: `scheduler::ttft`), from the stage's own simulation; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ttft: Vec<String>,
}

/// A configuration's step operator by operator, priced the way its stage prices it.
#[derive(Clone, Debug, PartialEq)]
pub struct Breakdown {
    /// What is simulated ("one decode step at tuned tilings, graph launch", ...).
    pub label: String,
    pub ops: Vec<OpCost>,
    pub memory: Option<MemoryBreakdown>,
    /// The inference phase shown (None: a training step or the operator stage's whole workload).
    pub phase: Option<Phase>,
    /// Why this phase: its share of the goal ("decode is 97% of a request ...").
    pub why: String,
    /// Time of the simulated step in ms. Operator stage: exactly the stage's `model_time_ms`;
    /// deployment: the device time of the step the stage's pricer prices (its label gives the
    /// wall time with the engine's host work; the stage's TPOT and TTFT are over simulated
    /// requests).
    pub total_ms: f64,
    /// Deployment and runtime: the step's wall time with the engine's host work, ms, as the
    /// stage prices it; training: the stage's step time (with the pipeline bubble, exposed
    /// communication and the framework's overhead); None for the other stages.
    pub wall_ms: Option<f64>,
    /// Deployment and runtime: the sentence the diagnosis says when the engine's launches of a
    /// hybrid model's mixer kernels set or lengthen the step (`StepOperators::host_note`).
    pub host_note: Option<String>,
}

/// Which inference phase dominates the goal, and why, from the stage's metrics of the point:
/// TTFT is set by the prefill and TPOT by a decode step; for throughput, energy or memory
/// goals the phase with the larger share of a request's time (prefill vs. output x TPOT).
pub fn dominant_phase(s: &Scenario, metrics: &[(String, f64, String)]) -> (Phase, String) {
    let get = |n: &str| metrics.iter().find(|m| m.0 == n).map(|m| m.1);
    let goal = s.objectives.first().map(|o| o.metric.clone()).or_else(|| metrics.first().map(|m| m.0.clone())).unwrap_or_default();
    if goal.starts_with("ttft") || goal == "queue_ms" {
        return (Phase::Prefill, "the goal is time to first token, which prefills set".into());
    }
    if goal.starts_with("tpot") || goal.starts_with("itl") {
        return (Phase::Decode, "the goal is time per output token, which decode steps set".into());
    }
    // The serving simulation reports the prefill's share of device time directly.
    if let Some(share) = get("prefill_share") {
        let pct = crate::spec::metrics::fmt4(100.0 * share);
        return if share > 0.5 {
            (Phase::Prefill, format!("prefills take {pct}% of the device time"))
        } else {
            (Phase::Decode, format!("decode steps take {}% of the device time", crate::spec::metrics::fmt4(100.0 - 100.0 * share)))
        };
    }
    let out = s.workload.output_len.max(1) as f64;
    match (get("ttft_ms"), get("tpot_ms")) {
        (Some(p), Some(d)) => {
            let dec = out * d;
            let share = |x: f64| 100.0 * x / (p + dec).max(1e-12);
            if p > dec {
                (Phase::Prefill, format!("the prefill is {}% of a request's time ({} ms against {} decode steps x {} ms)", crate::spec::metrics::fmt4(share(p)), crate::spec::metrics::fmt4(p), out, crate::spec::metrics::fmt4(d)))
            } else {
                (Phase::Decode, format!("decode is {}% of a request's time ({} steps x {} ms against a {} ms prefill)", crate::spec::metrics::fmt4(share(dec)), out, crate::spec::metrics::fmt4(d), crate::spec::metrics::fmt4(p)))
            }
        }
        _ => (Phase::Decode, "decode (the phase that generates every output token)".into()),
    }
}

/// The sequences a scheduler scenario's decode steps carry on average, from the simulation's own
/// results by Little's law: requests per second times the mean time a request spends admitted
/// (end-to-end latency less queueing). A closed loop of 8 clients under a max_num_seqs of 200
/// decodes about 8 sequences a step, not 200. None in the simple mode (its decode step is the
/// whole batch) or without those metrics.
pub fn running_sequences(s: &Scenario, metrics: &[(String, f64, String)]) -> Option<f64> {
    if s.deployment.serving.is_static() {
        return None;
    }
    let get = |n: &str| metrics.iter().find(|m| m.0 == n).map(|m| m.1);
    let admitted_s = (get("e2e_mean_ms")? - get("queue_ms").unwrap_or(0.0)) / 1e3;
    let l = get("requests_per_s")? * admitted_s;
    (l.is_finite() && l > 0.0).then_some(l)
}

/// What a landscape point's detail says instead of an engine breakdown.
pub const LANDSCAPE_HAS_NO_OPS: &str = "no operator breakdown: a landscape's values are measurements or a function";

/// Prices `config` (parameter `names`) operator by operator, the way the scenario's stage
/// prices it: the operator stage through its own objective (the configuration's tilings,
/// fusions and INT8 switches); the deployment and runtime stages one step of the dominant
/// phase, listed by the step pricer the stage serves the configuration with
/// (`deployment::step_operators`; under the scheduler, a step the simulation runs); the
/// training stage the step it prices (`training::step_operators`). `metrics` are the stage's
/// values for the point (for the dominant phase and, under the scheduler, the sequences a
/// decode step carries).
pub fn breakdown(s: &Scenario, names: &[String], config: &Config, metrics: &[(String, f64, String)]) -> Result<Breakdown, String> {
    if s.stage == Stage::Landscape {
        return Err(LANDSCAPE_HAS_NO_OPS.into());
    }
    let (model, _, _) = crate::stages::context::resolve(s)?;
    let out = s.workload.output_len.max(1) as u64;
    match s.stage {
        Stage::Diffusion => {
            let mut pr = crate::stages::diffusion::pricer(s)?;
            let k = crate::stages::diffusion::decode(names, config)?;
            let ops = pr.step_ops(&k)?;
            let total_ms = ops.iter().map(|o| o.time_us).sum::<f64>() / 1e3;
            let label = format!("one denoiser call of the pipeline (one step{}) at default tilings, device time", if pr.req.cfg && !k.cfg_parallel { ", both CFG branches as batch 2" } else { "" });
            Ok(Breakdown { label, ops, memory: None, phase: None, why: String::new(), total_ms, wall_ms: None, host_note: None })
        }
        Stage::Training => {
            // The step the stage prices (`training::step_operators`): the framework's kernels,
            // frozen parts, the mean sample length and the busiest pipeline stage included.
            let t = crate::stages::training::step_operators(s, names, config)?;
            let total_ms = t.ops.iter().map(|o| o.time_us).sum::<f64>() / 1e3;
            let mbs = if t.micro_batches == 1 { "one micro-batch".to_string() } else { format!("{} micro-batches", t.micro_batches) };
            let stage = t.stage.map_or(String::new(), |p| format!(", pipeline stage {} ({} layers, the busiest)", p.index, p.layers));
            let waits: Vec<String> = t.result.breakdown.iter().filter(|(n, ms)| *ms > 0.0 && !n.starts_with("compute")).map(|(n, ms)| format!("{} {} ms", n.split(" (").next().unwrap_or(n), crate::spec::metrics::fmt4(*ms))).collect();
            let samples = match (t.seq_len, t.micro_batch) {
                (0, 1) => "1 sample".to_string(),
                (0, n) => format!("{n} samples"),
                (len, n) => format!("{n} x {len} tokens"),
            };
            let passes = if t.ops.iter().any(|o| o.name.contains("recompute")) { "forward, recomputation, backward" } else { "forward, backward" };
            let label = format!(
                "one training step per chip{stage}: {mbs} of {samples} ({passes}), the gradient and parameter communication and the optimizer; default tilings (device time, communication whole; the step takes {} ms{})",
                crate::spec::metrics::fmt4(t.result.step_time_ms),
                if waits.is_empty() { String::new() } else { format!(", of which {}", waits.join(", ")) }
            );
            Ok(Breakdown { label, ops: t.ops, memory: Some(t.memory), phase: None, why: String::new(), total_ms, wall_ms: Some(t.result.step_time_ms), host_note: None })
        }
        Stage::Operator => {
            let (ops, _) = crate::stages::operator::priced_ops(s, config)?;
            let mut total = 0.0;
            for o in &ops {
                total += o.time_us;
            }
            let what = if model.llm.is_none() { "one forward pass".to_string() } else {
                match s.operator.phase.as_str() {
                    "prefill" => "the prefill".to_string(),
                    "decode" => format!("{out} decode steps"),
                    _ => format!("the prefill and {out} decode steps"),
                }
            };
            let timed = match s.operator.timing.as_str() {
                "single_call" => "each operator as one eager call (host dispatch, then the kernel)".to_string(),
                "back_to_back" => format!("each operator per call in a loop of {} calls", s.operator.calls),
                _ => "kernel time on the device".to_string(),
            };
            Ok(Breakdown { label: format!("{what} at this configuration's tilings and fusions, {timed}"), ops, memory: None, phase: None, why: String::new(), total_ms: total / 1e3, wall_ms: None, host_note: None })
        }
        Stage::Landscape => Err(LANDSCAPE_HAS_NO_OPS.into()),
        Stage::Deployment | Stage::Runtime => {
            let (phase, why) = dominant_phase(s, metrics);
            // The step as the stage's own pricer prices it: the engine's cache handling, a hybrid
            // model's Triton chunk kernels, a speculative step's draft and verification.
            let st = crate::stages::deployment::step_operators(s, names, config, phase, running_sequences(s, metrics))?;
            let mode = tile_mode(s);
            // Each operator's time includes its device-side launch, which a captured graph still
            // pays (`cost::dispatch`); the graph's own launch is host work, in the wall time below.
            let ops = st.ops;
            let total: f64 = ops.iter().map(|o| o.time_us).sum();
            let graph_launch = st.graph_launch;
            // What the device time leaves out: a host-bound step (eager dispatch, Python between
            // captured pieces, per-step scheduling) takes longer than its operators.
            let host = if st.wall_ms > st.device_ms * 1.01 { format!("; with the engine's host work the step takes {} ms", crate::spec::metrics::fmt4(st.wall_ms)) } else { String::new() };
            let spec = match &st.spec {
                Some(sp) => format!(
                    "; the {} draft's {} steps (draft.*) and the target's check of {} positions per sequence yield {} tokens per sequence on average, so TPOT is the step's time over that",
                    sp.method,
                    sp.k,
                    sp.k + 1,
                    crate::spec::metrics::fmt4(sp.tokens_per_step)
                ),
                None => String::new(),
            };
            let host = format!("{host}{}", mixer_host_words(st.mixer_host_ms));
            let label = format!(
                "{}; {} tilings, {} launch, tp {}{}{} (device time{host}){spec}",
                st.what,
                if mode == TileMode::Best { "tuned" } else { "default" },
                if graph_launch { "graph" } else { "eager" },
                st.tp,
                match (st.expert_parallel, st.dp > 1) {
                    (true, true) => format!(", dp {}, expert parallel (ep = tp x dp = {})", st.dp, st.ep),
                    (true, false) => format!(", expert parallel (ep = tp = {})", st.ep),
                    (false, true) => format!(", dp {}", st.dp),
                    (false, false) => String::new(),
                },
                if st.triton_chunks { ", the linear-attention chunk kernels at the engine's Triton speed" } else { "" }
            );
            Ok(Breakdown { label, ops, memory: Some(st.memory), phase: Some(phase), why, total_ms: total / 1e3, wall_ms: Some(st.wall_ms), host_note: st.host_note.clone() })
        }
    }
}

/// The breakdown's words for a hybrid model's mixer kernels launched from Python (Triton
/// kernels, the torch-native Mamba-2 convolution): host time racing the device and host time
/// after their syncs, serial with it (`StepOperators::mixer_host_ms`); empty when there is none.
pub fn mixer_host_words((racing, serial): (f64, f64)) -> String {
    let f = crate::spec::metrics::fmt4;
    match (racing > 0.0, serial > 0.0) {
        (false, false) => String::new(),
        (true, false) => format!("; host: the hybrid mixers' kernel launches from Python {} ms (racing the device)", f(racing)),
        (false, true) => format!("; host: the hybrid mixers' kernels after their host syncs {} ms (serial with the device)", f(serial)),
        (true, true) => format!("; host: the hybrid mixers' kernel launches from Python {} ms (racing the device) and {} ms after their host syncs (serial with the device)", f(racing), f(serial)),
    }
}

/// Metrics of a configuration from the stage objective (the function the study used), plus
/// the engine breakdown and roofline of the step it configures (`breakdown`).
pub fn point_detail(s: &Scenario, config: &Config) -> Result<PointDetail, String> {
    detail_of(s, &mut crate::stages::setup(s)?, config, None)
}

/// `point_detail` with the stage already built (`Run::detail`) and, when the study priced the
/// point already, its `known` outcome (the same objective's answer, not priced again: a step
/// simulation on a cold memo costs tens of ms, too long for the page's thread).
pub fn detail_of(s: &Scenario, st: &mut crate::stages::StageSetup, config: &Config, known: Option<Outcome>) -> Result<PointDetail, String> {
    if s.stage == Stage::Landscape {
        return landscape_detail_of(s, st, config, known);
    }
    let names = st.space.names().to_vec();
    let mut detail = priced_point(s, st, config, known)?;
    if detail.infeasible.is_some() && config.len() != names.len() {
        return Ok(detail);
    }
    let b = match breakdown(s, &names, config, &detail.metrics) {
        Ok(b) => b,
        Err(e) => {
            detail.infeasible.get_or_insert(e);
            return Ok(detail);
        }
    };
    detail.simulated = if b.why.is_empty() { b.label.clone() } else { format!("{} ({})", b.label, b.why) };
    fill(&mut detail, &b.ops);
    detail.total_ms = b.total_ms;
    detail.memory = b.memory;
    detail.ttft = crate::stages::scheduler::ttft::of_point(s, &names, config).map(|t| t.lines()).unwrap_or_default();
    Ok(detail)
}

/// `detail_of` of a landscape's point: its value and the chip's roofline figures, and no
/// operators (a landscape has none). Its own entry because the page answers the points of a
/// landscape it loaded itself (src/components/explore.rs, trials.rs): calling this rather than
/// `detail_of` keeps the stages' breakdown, and with it the device model's operator pricing,
/// out of the page's first-load module (the engine worker details every other stage's points).
pub fn landscape_detail_of(s: &Scenario, st: &mut crate::stages::StageSetup, config: &Config, known: Option<Outcome>) -> Result<PointDetail, String> {
    if s.stage != Stage::Landscape {
        return Err(format!("explore: a {} stage's point is detailed by explore::detail_of, not as a landscape's", s.stage.name()));
    }
    let mut detail = priced_point(s, st, config, known)?;
    // Not an infeasibility: the point has its value, only no operators to break it into.
    if !(detail.infeasible.is_some() && config.len() != st.space.names().len()) {
        detail.simulated = LANDSCAPE_HAS_NO_OPS.into();
    }
    Ok(detail)
}

/// A point's metrics (the stage objective's answer, or the `known` one) and the chip's roofline
/// figures, before any operator breakdown.
fn priced_point(s: &Scenario, st: &mut crate::stages::StageSetup, config: &Config, known: Option<Outcome>) -> Result<PointDetail, String> {
    let priced = match known {
        Some(o) => Ok(o),
        None => st.space.check(config).map(|_| st.objective.evaluate(config)),
    };
    let (metrics, infeasible) = match priced {
        Err(e) => (Vec::new(), Some(e)),
        Ok(Outcome::Ok(v)) => (st.metrics.iter().zip(v).map(|(m, x)| (m.name.clone(), x, m.unit.clone())).collect(), None),
        Ok(Outcome::Infeasible(r) | Outcome::Failed(r)) => (Vec::new(), Some(r)),
    };
    // The chip alone (`resolve` would read the model too: a landscape has none to read).
    let device = crate::stages::context::device(s)?;
    let d = &device.derived;
    let ridge = d.peak_tflops_fp16 * 1e12 / (d.hbm_gbs * 1e9).max(1.0);
    Ok(PointDetail {
        metrics, infeasible, simulated: String::new(), total_ms: 0.0, exposed_ms: BTreeMap::new(), busy_ms: BTreeMap::new(), memory: None,
        intensity: 0.0, attained_tflops: 0.0, peak_tflops: d.peak_tflops_fp16, hbm_gbs: d.hbm_gbs, ridge_intensity: ridge, ops: Vec::new(), ttft: Vec::new(),
    })
}

impl PointDetail {
    /// Whether the detail has something a landscape's own view does not: operators to chart,
    /// or the reason the point is infeasible. A landscape point has neither.
    pub fn worth_showing(&self) -> bool {
        !self.ops.is_empty() || self.infeasible.is_some()
    }
}

fn fill(d: &mut PointDetail, ops: &[OpCost]) {
    let (mut flops, mut bytes, mut total) = (0.0, 0.0, 0.0);
    for o in ops {
        let r = o.repeat as f64;
        for (k, b) in ALL_BOUNDS.iter().enumerate() {
            *d.exposed_ms.entry(b.name().into()).or_insert(0.0) += o.estimate.breakdown.exposed.to_array()[k] * r / 1e3;
            *d.busy_ms.entry(b.name().into()).or_insert(0.0) += o.estimate.breakdown.busy.to_array()[k] * r / 1e3;
        }
        flops += o.estimate.flops * r;
        bytes += o.estimate.hbm_bytes * r;
        total += o.time_us;
        d.ops.push(RooflinePoint { name: o.name.clone(), intensity: o.estimate.arithmetic_intensity, attained_tflops: o.estimate.attained_tflops, time_ms: o.time_us / 1e3, bound: o.estimate.bound.name().into() });
    }
    d.total_ms = total / 1e3;
    d.intensity = if bytes > 0.0 { flops / bytes } else { 0.0 };
    d.attained_tflops = if total > 0.0 { flops / (total * 1e-6) / 1e12 } else { 0.0 };
}

/// Reads a configuration typed as "name=value,name=value" onto `base` (the rest keep it), each
/// value matched against the parameter's own values; unknown names and values outside the space
/// are errors naming them.
pub fn parse_config(space: &tunelab_search::Space, base: &Config, text: &str) -> Result<Config, String> {
    let mut c = base.clone();
    for part in text.split([',', ';', '\n']).map(str::trim).filter(|p| !p.is_empty()) {
        let (name, value) = part.split_once('=').ok_or_else(|| format!("'{}': expected name=value", crate::spec::scenario::clip(part)))?;
        let (name, value) = (name.trim(), value.trim());
        let i = space.index_of(name).ok_or_else(|| format!("'{}' is not a parameter of this stage (some: {})", crate::spec::scenario::clip(name), space.names().iter().take(8).cloned().collect::<Vec<_>>().join(", ")))?;
        let p = &space.params()[i];
        let found = (0..p.levels().unwrap_or(0)).map(|l| p.level_value(l)).find(|v| v.to_string() == value || v.as_f64().zip(value.parse::<f64>().ok()).is_some_and(|(a, b)| a == b));
        let v = match found {
            Some(v) => v,
            None => {
                let candidate = match value.parse::<i64>() {
                    Ok(x) => Value::Int(x),
                    Err(_) => value.parse::<f64>().map(Value::Float).unwrap_or_else(|_| Value::Str(value.to_string())),
                };
                if !p.contains(&candidate) {
                    return Err(format!("{name}={}: not a value of the space", crate::spec::scenario::clip(value)));
                }
                candidate
            }
        };
        c.0[i] = v;
    }
    space.check(&c)?;
    Ok(c)
}

impl crate::run::Run {
    /// The engine breakdown and roofline of any configuration of the space, as
    /// `explore::point_detail` gives it, without building the stage again; a configuration a
    /// lane already tried keeps the outcome the study recorded (the same objective's answer).
    pub fn detail(&mut self, c: &Config) -> Result<PointDetail, String> {
        let known = self.lanes.iter().flat_map(|l| l.study.trials()).find(|t| t.config == *c).map(|t| match t.state {
            TrialState::Ok => Outcome::Ok(t.values.clone()),
            TrialState::Infeasible => Outcome::Infeasible(t.reason.clone().unwrap_or_default()),
            TrialState::Failed => Outcome::Failed(t.reason.clone().unwrap_or_default()),
        });
        detail_of(&self.scenario, &mut self.setup, c, known)
    }

}

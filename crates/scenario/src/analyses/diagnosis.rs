//! Diagnosis of one configuration of any stage: its metrics exactly as the study priced them
//! (the stage objective, so the diagnosed goal equals the report's "best" to the last digit),
//! where the time goes (per-operator hot spots and their bottleneck class, for the phase that
//! dominates the goal), why (a cause chain with the numbers as evidence), and what to change.
//!
//! Suggestions are the configuration's neighbours in the stage's own space (one parameter one
//! level up or down, or another choice), each re-simulated through the stage objective with the
//! scenario's limits, so a suggestion never names a parameter the stage does not have and its
//! predicted effect is a simulation, never a guess. They are ranked by their effect on the goal
//! (the study's primary metric); a change that worsens the goal is not offered as an
//! improvement but listed as a trade-off when it buys something (a better other metric); per
//! parameter only the better direction is offered, so no list says both "double" and "halve".
//! Each carries a score, w_e x effect + w_c x (1 - cost) + w_r x (1 - risk), weights 0.5 / 0.3 /
//! 0.2 by default (editable); cost and risk are stated priors per kind of change, not measured.

use crate::analyses::explore::{breakdown, Breakdown};
use crate::spec::scenario::{Scenario, Stage};
use crate::stages::serving::OpCost;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tunelab_search::{Config, Direction, Outcome, Value};
use tunelab_sim::device::Device;
use tunelab_sim::estimate::Bound;
use tunelab_sim::model::OpClass;
use tunelab_sim::{AttentionKind, Op};

/// Weights of the suggestion score.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    pub effectiveness: f64,
    pub cost: f64,
    pub risk: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights { effectiveness: 0.5, cost: 0.3, risk: 0.2 }
    }
}

impl Weights {
    /// A suggestion's score: effective, cheap and safe changes rank first (cost and risk in 0..1).
    pub fn score(&self, effectiveness: f64, cost: f64, risk: f64) -> f64 {
        self.effectiveness * effectiveness + self.cost * (1.0 - cost) + self.risk * (1.0 - risk)
    }

    /// The score rule in one line, with these weights.
    pub fn explain(&self) -> String {
        format!(
            "score = {} x effect on the goal + {} x (1 - cost) + {} x (1 - risk); effect is the simulated relative gain (0.1 = 10% better), cost and risk are priors in 0..1",
            self.effectiveness, self.cost, self.risk
        )
    }
}

/// One operator's share of the step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HotSpot {
    pub name: String,
    pub class: String,
    pub time_ms: f64,
    pub share: f64,
    /// The engine that bounds it and its bottleneck class ("memory", "compute", ...).
    pub bound: String,
    pub bottleneck: String,
    pub intensity: f64,
    pub attained_tflops: f64,
}

/// One metric of the diagnosed configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricValue {
    pub name: String,
    pub unit: String,
    pub value: f64,
    pub higher_is_better: bool,
}

/// A change to one parameter, re-simulated through the stage objective.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    /// "batch 64 -> 128".
    pub title: String,
    pub param: String,
    pub from: Value,
    pub to: Value,
    /// The whole configuration after the change.
    pub config: Config,
    /// The stage's metrics after the change (the study's order), when feasible.
    pub metrics_after: Vec<f64>,
    /// The goal after the change, and its relative effect (positive: better for the goal).
    pub goal_after: Option<f64>,
    pub effect: f64,
    /// For a trade-off: what it buys ("memory per chip -12%").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buys: Option<String>,
    pub cost: f64,
    pub risk: f64,
    pub score: f64,
    /// Why it cannot be applied (over a limit, out of memory, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infeasible: Option<String>,
}

/// The diagnosis of one configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    pub stage: String,
    /// The stage's parameter names, in the space's order (`Suggestion::config` follows it).
    pub names: Vec<String>,
    /// Parameter -> value of the diagnosed configuration.
    pub config: BTreeMap<String, Value>,
    /// The goal: the study's primary metric, its value (None when infeasible).
    pub goal: String,
    pub goal_unit: String,
    pub goal_higher_is_better: bool,
    pub goal_value: Option<f64>,
    /// Every metric, as the study priced the configuration.
    pub metrics: Vec<MetricValue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infeasible: Option<String>,
    /// What the hot spots simulate, and why that phase.
    pub simulated: String,
    pub phase_why: String,
    /// The simulated step's time (graph launch included), ms.
    pub step_ms: f64,
    /// Share of the step per bottleneck class, and the hot spots, largest first.
    pub bottlenecks: BTreeMap<String, f64>,
    pub hot_spots: Vec<HotSpot>,
    pub cause_chain: Vec<String>,
    /// Changes that improve the goal, best effect first.
    pub suggestions: Vec<Suggestion>,
    /// Changes that worsen the goal but buy something else, smallest loss first.
    pub trade_offs: Vec<Suggestion>,
    /// Neighbouring changes that are not feasible, with the reason (a few).
    pub blocked: Vec<Suggestion>,
    pub weights: Weights,
    pub score_rule: String,
    /// Training stage: its own diagnosis (pipeline bubble, exposed communication, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub training: Option<crate::analyses::train_diagnosis::TrainDiagnosis>,
    pub note: String,
}

/// Most suggestions, trade-offs and blocked changes listed.
pub const MAX_LISTED: usize = 8;

/// Cost and risk priors of changing a parameter (engineering effort or chips added; numerical
/// risk), by the kind of parameter. Priors, stated in the output, not measurements.
pub fn priors(param: &str, to: &Value) -> (f64, f64) {
    let leaf = param.rsplit('.').next().unwrap_or(param);
    match leaf {
        "tp" | "tensor_parallel" | "dp" | "pp" | "ep" | "cp" | "prefill_tp" => (0.6, 0.15),
        // Context parallel in serving: PCP adds chips and a communication group; DCP reuses the
        // TP ranks (extra collectives per decode step, the cache sharded).
        "prefill_cp" => (0.6, 0.15),
        "decode_cp" | "prefill_dcp" => (0.4, 0.1),
        // Fine-grained TP (vLLM-Ascend finegrained_tp_config): one --additional-config key, no
        // chips added; the head's or the embedding's collectives are new.
        "lmhead_tp" | "embedding_tp" => (0.2, 0.05),
        // Multi-node serving: EPLB costs memory and a rebalancing service; disaggregation
        // a second deployment, a proxy and a KV connector.
        "redundant_experts" => (0.3, 0.1),
        "pd" => (0.7, 0.25),
        "precision" => match to.as_str() {
            Some("w8a8") => (0.6, 0.45),
            Some("w8a16") => (0.5, 0.3),
            // 4-bit weights: calibration (msModelSlim) and a larger accuracy risk, most for
            // 4-bit activations.
            Some("w4a16") | Some("w4a8") => (0.6, 0.55),
            Some("w4a4") => (0.7, 0.7),
            _ => (0.2, 0.1),
        },
        // A draft model to train or download; the output distribution is unchanged (lossless).
        "num_speculative_tokens" => (0.3, 0.05),
        "int8" => (0.5, 0.3),
        "batch" | "batch_size" | "micro_batch" => (0.1, 0.15),
        "launch" => (0.2, 0.1),
        "kv_cache_fraction" | "memory_strategy" => (0.1, 0.2),
        "flash_attention" | "fuse_epilogues" => (0.2, 0.05),
        "recompute" | "zero" | "zero_stage" => (0.3, 0.1),
        _ => (0.2, 0.05),
    }
}

/// Diagnoses `config` of the scenario's stage (None: the stage's baseline) with `weights`.
pub fn diagnose(s: &Scenario, config: Option<&Config>, weights: Weights) -> Result<Diagnosis, String> {
    diagnose_in(s, &mut crate::stages::setup(s)?, config, weights)
}

impl crate::run::Run {
    /// `diagnose` with the run's own stage, not built again (a landscape keeps the cache it
    /// replays).
    pub fn diagnose(&mut self, config: Option<&Config>, weights: Weights) -> Result<Diagnosis, String> {
        diagnose_in(&self.scenario, &mut self.setup, config, weights)
    }
}

/// `diagnose` on a stage already built for the scenario.
fn diagnose_in(s: &Scenario, st: &mut crate::stages::StageSetup, config: Option<&Config>, weights: Weights) -> Result<Diagnosis, String> {
    let names = st.space.names().to_vec();
    let config = config.cloned().unwrap_or_else(|| st.baseline.clone());
    if config.len() != names.len() {
        return Err(format!("diagnosis: the configuration has {} values, the {} stage has {} parameters", config.len(), s.stage.name(), names.len()));
    }
    let goal = st.metrics.first().cloned().ok_or("diagnosis: the stage reports no metric")?;
    let hib = |d: Direction| d == Direction::Maximize;
    let evaluate = |st: &mut crate::stages::StageSetup, c: &Config| match st.space.check(c) {
        Err(e) => Outcome::Infeasible(e),
        Ok(()) => st.objective.evaluate(c),
    };
    let (values, infeasible) = match evaluate(st, &config) {
        Outcome::Ok(v) => (Some(v), None),
        Outcome::Infeasible(r) | Outcome::Failed(r) => (None, Some(r)),
    };
    let metrics: Vec<MetricValue> = values
        .as_ref()
        .map(|v| st.metrics.iter().zip(v).map(|(m, x)| MetricValue { name: m.name.clone(), unit: m.unit.clone(), value: *x, higher_is_better: hib(m.direction) }).collect())
        .unwrap_or_default();
    let triples: Vec<(String, f64, String)> = metrics.iter().map(|m| (m.name.clone(), m.value, m.unit.clone())).collect();
    let device = crate::stages::context::resolve(s)?.1;
    let b: Option<Breakdown> = breakdown(s, &names, &config, &triples).ok();
    let (hot, bottlenecks, chain) = match &b {
        Some(b) => {
            let (hot, shares) = hot_spots(&b.ops);
            let label = match b.phase {
                Some(p) => p.name().to_string(),
                None if s.stage == Stage::Training => "the training step".into(),
                None => "the workload".into(),
            };
            let mut chain = causes(&b.ops, &label, b.phase == Some(crate::stages::serving::Phase::Decode), &device, &shares);
            if let Some(host) = host_bound(b, &label) {
                let remedy = values.as_ref().and_then(|v| full_graph_hint(s, &names, &config, &goal, *v.first()?));
                chain.splice(0..0, std::iter::once(host).chain(remedy));
            }
            if matches!(s.stage, Stage::Deployment | Stage::Runtime) {
                chain.extend(crate::stages::scheduler::load::load_sentence(&b.ops, &label));
                chain.extend(b.host_note.clone());
                chain.extend(b.wall_ms.and_then(|w| crate::stages::scheduler::a2a_sync::ep_serial_sentence(&b.label, w, &label)));
                // Waiting, not the request's own prefill, setting TTFT (`scheduler::ttft`).
                chain.extend(crate::stages::scheduler::ttft::of_point(s, &names, &config).and_then(|t| t.queue_sentence()));
                chain.extend(collective_expansion_hint(&b.ops, &device));
            }
            (hot, shares, chain)
        }
        None => (Vec::new(), BTreeMap::new(), Vec::new()),
    };
    // A serving result bound by the offered load says so first (`stages::capacity`).
    let mut chain = chain;
    let named = metrics.iter().map(|m| (m.name.clone(), m.value)).collect::<Vec<_>>();
    if let Some(l) = crate::stages::capacity::load_bound(s, &named).or_else(|| crate::stages::capacity::bound_note(s, &named)) {
        chain.insert(0, l);
    }
    // Suggestions: every neighbour in the space, through the same objective and limits.
    let (mut better, mut worse, mut blocked) = (Vec::new(), Vec::new(), Vec::new());
    if let Some(v0) = values.as_ref() {
        let g0 = v0[0];
        for n in st.space.neighbours(&config) {
            let Some(i) = (0..names.len()).find(|&i| n.0[i] != config.0[i]) else { continue };
            let (from, to) = (config.0[i].clone(), n.0[i].clone());
            let (cost, risk) = priors(&names[i], &to);
            let title = format!("{} {} → {}", names[i], from, to);
            let mut sg = Suggestion { title, param: names[i].clone(), from, to, config: n.clone(), metrics_after: Vec::new(), goal_after: None, effect: 0.0, buys: None, cost, risk, score: 0.0, infeasible: None };
            match evaluate(st, &n) {
                Outcome::Ok(v) => {
                    let g = v[0];
                    let rel = (g - g0) / g0.abs().max(1e-300);
                    sg.effect = if hib(goal.direction) { rel } else { -rel };
                    sg.goal_after = Some(g);
                    sg.score = weights.score(sg.effect.clamp(-1.0, 1.0), cost, risk);
                    sg.metrics_after = v.clone();
                    if sg.effect > 0.0 {
                        better.push(sg);
                    } else {
                        // What it buys: the other metrics it improves, largest gain first.
                        let mut gains: Vec<(f64, String)> = st.metrics.iter().enumerate().skip(1).filter_map(|(k, m)| {
                            let (a, b) = (v0.get(k)?, v.get(k)?);
                            let r = (b - a) / a.abs().max(1e-300);
                            let good = if hib(m.direction) { r } else { -r };
                            (good > 1e-3).then(|| (good, format!("{} {}{}%", crate::spec::metrics::label(&m.name), if r > 0.0 { "+" } else { "" }, crate::spec::metrics::fmt4(r * 100.0))))
                        }).collect();
                        gains.sort_by(|a, b| b.0.total_cmp(&a.0));
                        if !gains.is_empty() {
                            sg.buys = Some(gains.into_iter().take(3).map(|g| g.1).collect::<Vec<_>>().join(", "));
                            worse.push(sg);
                        }
                    }
                }
                Outcome::Infeasible(r) | Outcome::Failed(r) => {
                    sg.infeasible = Some(r);
                    sg.score = f64::NEG_INFINITY.max(-1.0);
                    blocked.push(sg);
                }
            }
        }
    }
    // One direction per parameter: the better one.
    better.sort_by(|a, b| b.effect.total_cmp(&a.effect).then(b.score.total_cmp(&a.score)).then(a.title.cmp(&b.title)));
    let mut seen: Vec<String> = Vec::new();
    better.retain(|x| if seen.contains(&x.param) { false } else { seen.push(x.param.clone()); true });
    better.truncate(MAX_LISTED);
    worse.retain(|x| !seen.contains(&x.param));
    worse.sort_by(|a, b| b.effect.total_cmp(&a.effect).then(a.title.cmp(&b.title)));
    let mut seen_w: Vec<String> = Vec::new();
    worse.retain(|x| if seen_w.contains(&x.param) { false } else { seen_w.push(x.param.clone()); true });
    worse.truncate(MAX_LISTED);
    blocked.truncate(MAX_LISTED);
    let training = if s.stage == Stage::Training && infeasible.is_none() {
        crate::analyses::train_diagnosis::diagnose_training(s, &names, &config, weights).ok()
    } else {
        None
    };
    let tiling = match s.stage {
        Stage::Operator => "this configuration's own tilings",
        _ if crate::stages::serving::tile_mode(s) == crate::stages::serving::TileMode::Best => "tuned tilings",
        _ => "default tilings",
    };
    Ok(Diagnosis {
        stage: s.stage.name().into(),
        names: names.clone(),
        config: names.iter().cloned().zip(config.0.iter().cloned()).collect(),
        goal: goal.name.clone(),
        goal_unit: goal.unit.clone(),
        goal_higher_is_better: hib(goal.direction),
        goal_value: values.as_ref().map(|v| v[0]),
        metrics,
        infeasible,
        simulated: b.as_ref().map(|b| b.label.clone()).unwrap_or_default(),
        phase_why: b.as_ref().map(|b| b.why.clone()).unwrap_or_default(),
        step_ms: b.as_ref().map(|b| b.total_ms).unwrap_or(0.0),
        bottlenecks,
        hot_spots: hot,
        cause_chain: chain,
        suggestions: better,
        trade_offs: worse,
        blocked,
        weights,
        score_rule: weights.explain(),
        training,
        note: format!("Metrics come from the stage objective the study used; hot spots simulate the step at {tiling}. Each suggestion changes one parameter of the stage's space and is re-simulated with the scenario's limits; cost and risk are editable priors."),
    })
}

/// The bottleneck class of an engine bound.
pub fn bottleneck_class(b: Bound) -> &'static str {
    match b {
        Bound::Hbm | Bound::Mte2 | Bound::L2 => "memory",
        Bound::Cube | Bound::Vector => "compute",
        Bound::Mte1 | Bound::Mte3 | Bound::FixPipe => "on-chip data movement",
        Bound::Communication => "communication",
        Bound::Launch => "launch overhead",
    }
}

/// The chip's ridge point: FP16 cube peak over achievable HBM bandwidth, FLOP per byte. The
/// roofline the page draws uses the same two numbers.
pub fn ridge_point(d: &Device) -> f64 {
    d.derived.peak_tflops_fp16 * 1e12 / (d.derived.hbm_gbs * 1e9).max(1.0)
}

/// Where an operator sits on the roofline, said from its own side of the ridge: below it the
/// memory roof is the lower one, above it the compute roof; when the engine that bounds it is
/// not the roof on its side, that is said too, with why (so no "HBM-bound at 419 FLOP/byte
/// against a ridge of 290" without the reason).
pub fn roofline_words(intensity: f64, tflops: f64, bound: Bound, d: &Device) -> String {
    let ridge = ridge_point(d);
    let fmt = crate::spec::metrics::fmt4;
    let memory_side = intensity < ridge;
    let side = if memory_side {
        format!("{} FLOP/byte, below the chip's ridge point of {} (the memory side of the roofline)", fmt(intensity), fmt(ridge))
    } else {
        format!("{} FLOP/byte, above the chip's ridge point of {} (the compute side of the roofline)", fmt(intensity), fmt(ridge))
    };
    let why = match (bottleneck_class(bound), memory_side) {
        ("memory", false) => match bound {
            Bound::Mte2 => "; it is held up by the cores' own copies from memory (MTE2), which move less than the chip's HBM bandwidth, not by the roofline's memory roof".to_string(),
            _ => "; its tiles move more bytes than the ideal count the intensity is taken from, and the cube waits for them".to_string(),
        },
        ("compute", true) => "; its tiles keep the data on chip, so the cube or vector units, not memory, set its pace".to_string(),
        _ => String::new(),
    };
    format!("{side}{why}, attaining {} TFLOP/s of the {} TFLOP/s FP16 peak", fmt(tflops), fmt(d.derived.peak_tflops_fp16))
}

fn bound_words(b: Bound) -> &'static str {
    match b {
        Bound::Hbm | Bound::Mte2 => "HBM-bound",
        Bound::L2 => "L2-bound",
        Bound::Cube => "cube-compute-bound",
        Bound::Vector => "vector-compute-bound",
        Bound::Mte1 | Bound::Mte3 | Bound::FixPipe => "bound by on-chip copies",
        Bound::Communication => "communication-bound",
        Bound::Launch => "launch-bound",
    }
}

/// Hot spots (largest share first) and the share of the step per bottleneck class.
pub fn hot_spots(ops: &[OpCost]) -> (Vec<HotSpot>, BTreeMap<String, f64>) {
    let total = ops.iter().map(|o| o.time_us).sum::<f64>().max(1e-12);
    let mut hot: Vec<HotSpot> = ops.iter().map(|o| HotSpot {
        name: o.name.clone(),
        class: o.class.name().into(),
        time_ms: o.time_us / 1e3,
        share: o.time_us / total,
        bound: o.estimate.bound.name().into(),
        bottleneck: bottleneck_class(o.estimate.bound).into(),
        intensity: o.estimate.arithmetic_intensity,
        attained_tflops: o.estimate.attained_tflops,
    }).collect();
    hot.sort_by(|a, b| b.share.total_cmp(&a.share));
    let mut shares: BTreeMap<String, f64> = BTreeMap::new();
    for o in ops {
        *shares.entry(bottleneck_class(o.estimate.bound).to_string()).or_insert(0.0) += o.time_us / total;
    }
    (hot, shares)
}

/// The chain of evidence, most general first. `label` names the step ("decode", "training
/// step"); `decode` lets KV-cache reads be named.
pub fn causes(ops: &[OpCost], label: &str, decode: bool, d: &Device, shares: &BTreeMap<String, f64>) -> Vec<String> {
    let total = ops.iter().map(|o| o.time_us).sum::<f64>().max(1e-12);
    let mut by_bound: BTreeMap<&str, (f64, Bound)> = BTreeMap::new();
    for o in ops {
        let e = by_bound.entry(bound_words(o.estimate.bound)).or_insert((0.0, o.estimate.bound));
        e.0 += o.time_us;
    }
    let Some((words, (t, _))) = by_bound.iter().max_by(|a, b| a.1 .0.total_cmp(&b.1 .0)) else { return Vec::new() };
    let mut chain = Vec::new();
    let share = |us: f64| 100.0 * us / total;
    // The phrase that names what dominates inside the dominant class.
    let kv: f64 = ops.iter().filter(|o| o.is_kv_read()).map(|o| o.time_us).sum();
    let weights: f64 = ops.iter().filter(|o| o.is_weight_matmul() && matches!(o.estimate.bound, Bound::Hbm | Bound::Mte2)).map(|o| o.time_us).sum();
    let what = if decode && kv >= weights && kv > 0.0 {
        let copies = ops.iter().any(|o| o.is_kv_read() && !matches!(o.op, Op::Attention { .. }));
        format!("KV-cache reads{} take {:.0}% of the step", if copies { " and the engine's copies of the cache" } else { "" }, share(kv))
    } else if weights > 0.0 && words.contains("HBM") {
        format!("weight reads by the matmuls take {:.0}% of the step", share(weights))
    } else {
        format!("operators that are {words} take {:.0}% of the step", share(*t))
    };
    chain.push(format!("{label} is {words}: {what}"));
    if let Some(top) = ops.iter().max_by(|a, b| a.time_us.total_cmp(&b.time_us)) {
        chain.push(format!(
            "the largest operator, {} ({}), takes {:.0}% of the step and is {}: {}",
            top.name,
            top.class.name(),
            share(top.time_us),
            bound_words(top.estimate.bound),
            roofline_words(top.estimate.arithmetic_intensity, top.estimate.attained_tflops, top.estimate.bound, d)
        ));
    }
    for (class, s) in shares {
        if class != "memory" && class != "compute" && *s >= 0.1 {
            chain.push(format!("{class} is {:.0}% of the step", s * 100.0));
        }
    }
    chain
}

/// A serving step the host holds up: the stage prices its wall time as the device time plus
/// the host work the device waits for (per-step scheduling and sampling, eager dispatch beyond
/// the device time, the Python between captured graph pieces), and no operator accounts for
/// that wait. Said first, when it is at least a fifth of the step.
fn host_bound(b: &Breakdown, label: &str) -> Option<String> {
    let wall = b.wall_ms?;
    let idle = wall - b.total_ms;
    // An engine's offline encoder benchmark (MindIE's BGE test.py) runs no scheduler or sampler:
    // its host work is the timed model call's own (`stages::deployment::offline`).
    let work = if b.label.contains(crate::stages::scheduler::OFFLINE_CALL_WORDS) {
        "the offline benchmark's model call: its Python wrapper, the mask, the normalize and the output copy in series, and the launches racing the device"
    } else {
        "scheduling and sampling each step, and launching it: eager dispatch, or the Python between captured graph pieces"
    };
    (wall > 0.0 && idle >= 0.2 * wall).then(|| {
        format!(
            "the {label} step is host-bound: the device works {} of its {} ms, and waits {} ms ({:.0}%) for the engine's host work ({work}), which no operator below accounts for",
            crate::spec::metrics::fmt4(b.total_ms),
            crate::spec::metrics::fmt4(wall),
            crate::spec::metrics::fmt4(idle),
            100.0 * idle / wall
        )
    })
}

/// The remedy for a host-bound step whose engine captures decode steps piecewise (vLLM's
/// PIECEWISE cudagraph mode: each layer's attention and the Python around it run eagerly
/// between the captured pieces): the same configuration priced by the stage with the whole
/// decode step captured (deployment.serving.graph_mode = full_decode_only). Said when it
/// improves the goal by more than 1%.
fn full_graph_hint(s: &Scenario, names: &[String], config: &Config, goal: &tunelab_search::Metric, g0: f64) -> Option<String> {
    let graph = names.iter().zip(&config.0).any(|(n, v)| n == "launch" && v.as_str() == Some("graph"));
    if s.stage != Stage::Deployment || !graph || s.deployment.serving.graph_mode == "full_decode_only" || !s.deployment.serving.host().ok()?.piecewise {
        return None;
    }
    let mut t = s.clone();
    t.deployment.serving.graph_mode = "full_decode_only".into();
    let mut st = crate::stages::setup(&t).ok()?;
    st.space.check(config).ok()?;
    let Outcome::Ok(v) = st.objective.evaluate(config) else { return None };
    let g1 = *v.first()?;
    let gain = if goal.direction == Direction::Maximize { g1 / g0 - 1.0 } else { 1.0 - g1 / g0 };
    (g0.abs() > 0.0 && gain > 0.01).then(|| {
        format!(
            "capturing the whole decode step as one graph (deployment.serving.graph_mode = full_decode_only, vLLM's cudagraph mode FULL_DECODE_ONLY) takes that Python off the step: {} {} → {} {} ({:.0}% better)",
            crate::spec::metrics::label(&goal.name),
            crate::spec::metrics::fmt4(g0),
            crate::spec::metrics::fmt4(g1),
            goal.unit,
            100.0 * gain
        )
    })
}

/// What building the collectives' task lists at once would save (`tunelab_sim::cost::comm`
/// notes): the all-reduces, all-gathers and reduce-scatters of a node's full mesh that pay a
/// task per peer, re-priced as HCCL's Mesh. Said when it is at least 3% of the step, with the
/// setting that buys it (deployment.serving.hccl_expansion "aiv").
fn collective_expansion_hint(ops: &[OpCost], d: &Device) -> Option<String> {
    use tunelab_sim::op::{CommAlgorithm, CommKind, Link};
    let total = ops.iter().map(|o| o.time_us).sum::<f64>();
    let (mut n, mut saved) = (0u64, 0.0);
    for o in ops {
        let Op::Comm { kind, bytes, ranks, link: Link::Hccs, algorithm: CommAlgorithm::Ring } = o.op else { continue };
        if kind == CommKind::AllToAll || !tunelab_sim::cost::comm::full_mesh(d, Link::Hccs, ranks) {
            continue;
        }
        let mesh = tunelab_sim::cost::comm::collective_us(d, kind, bytes, ranks, Link::Hccs, CommAlgorithm::Mesh).ok()?;
        saved += (o.estimate.time_us - mesh) * o.repeat as f64;
        n += o.repeat;
    }
    (total > 0.0 && saved >= 0.03 * total).then(|| {
        format!(
            "its {n} collectives inside the node build their tasks one peer at a time (HCCL's default expansion); with HCCL_OP_EXPANSION_MODE=AIV (deployment.serving.hccl_expansion = aiv) each pays the mesh's two latency steps: {:.2} ms ({:.0}%) less per step",
            saved / 1e3,
            100.0 * saved / total
        )
    })
}

trait OpFacts {
    fn is_kv_read(&self) -> bool;
    fn is_weight_matmul(&self) -> bool;
}

impl OpFacts for OpCost {
    /// Decode attention: one query token per sequence streaming the whole KV cache; and the
    /// copies of the cache an engine makes before it (Hugging Face's `torch.cat` and head
    /// expansion, `scheduler::price::decode_attention_ops`).
    fn is_kv_read(&self) -> bool {
        matches!(self.op, Op::Attention { kind: AttentionKind::Decode, .. }) || self.name.ends_with(".kv_cat") || self.name.ends_with(".kv_expand")
    }
    fn is_weight_matmul(&self) -> bool {
        matches!(self.op, Op::Matmul { .. }) && matches!(self.class, OpClass::Mlp | OpClass::Moe | OpClass::LmHead | OpClass::Attention) && !self.name.ends_with("attn.core")
    }
}


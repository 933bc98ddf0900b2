//! Diagnosis: where the time goes (per-operator hot spots and their bottleneck class), why (a
//! cause chain in words, with the numbers as evidence), and what to change (ranked suggestions
//! whose predicted effect is the simulator run on the changed point, never a guessed speed-up).
//!
//! Suggestions are scored as w_e * effectiveness + w_c * (1 - cost) + w_r * (1 - risk), weights
//! 0.5 / 0.3 / 0.2 by default (editable). Effectiveness is the simulated relative gain in the goal
//! (throughput or latency); cost and risk are editable priors per kind of change (engineering
//! effort, chips added; numerical risk from the device model's relative-error estimate), stated
//! as priors in the output, not measured.

use crate::serving::{cost_phase_with, default_point, point_from_config, tile_mode, Memo, OpCost, Phase, PhaseCost, ServingPoint, TileMode};
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tunelab_search::Config;
use tunelab_sim::device::Device;
use tunelab_sim::estimate::Bound;
use tunelab_sim::model::{ModelDesc, OpClass};
use tunelab_sim::{AttentionKind, Op, Precision};

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
}

/// What the suggestions optimise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Goal {
    /// Tokens per second per chip.
    Throughput,
    /// Time of one step (TTFT for prefill, TPOT for decode).
    Latency,
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

/// A change, what the simulator predicts for it, and its score.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    pub title: String,
    /// The serving point after the change (re-simulate it with `serving::cost_phase_with` in the
    /// diagnosis's tile mode).
    pub point: ServingPoint,
    /// Simulated step time after the change and the goal's relative gain (negative: worse).
    pub predicted_step_ms: Option<f64>,
    pub predicted_tokens_per_s: Option<f64>,
    pub effectiveness: f64,
    pub cost: f64,
    pub risk: f64,
    pub score: f64,
    /// Why it cannot be applied (out of memory, tp does not divide the heads ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infeasible: Option<String>,
}

/// The whole diagnosis of one phase of one point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    pub phase: Phase,
    pub point: ServingPoint,
    pub goal: Goal,
    pub step_ms: f64,
    pub tokens_per_s: f64,
    pub memory_gib: f64,
    /// Share of the step per bottleneck class, and the hot spots, largest first.
    pub bottlenecks: BTreeMap<String, f64>,
    pub hot_spots: Vec<HotSpot>,
    pub cause_chain: Vec<String>,
    pub suggestions: Vec<Suggestion>,
    pub weights: Weights,
    /// "default" (the device model's heuristic tiling) or "tuned" (the deployment stage's
    /// coordinate descent), as `serving::tile_mode` picks for the scenario.
    pub tiling: String,
    pub note: String,
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

/// Diagnoses the scenario's decode (or prefill) at a configuration of the deployment space (None:
/// the scenario's defaults), with the given weights.
pub fn diagnose(s: &Scenario, names: &[String], config: Option<&Config>, phase: Phase, weights: Weights) -> Result<Diagnosis, String> {
    let (model, device, _) = crate::context::resolve(s)?;
    let base = default_point(s, &model);
    let point = config.map(|c| point_from_config(names, c, base)).unwrap_or(base);
    let goal = match s.objectives.first().map(|o| o.metric.as_str()) {
        Some("ttft_ms" | "tpot_ms" | "model_time_ms") => Goal::Latency,
        _ if phase == Phase::Prefill => Goal::Latency,
        _ => Goal::Throughput,
    };
    diagnose_point(s, &model, &device, point, phase, goal, weights)
}

/// Diagnoses a resolved model and chip at one serving point.
pub fn diagnose_point(s: &Scenario, model: &ModelDesc, device: &Device, point: ServingPoint, phase: Phase, goal: Goal, weights: Weights) -> Result<Diagnosis, String> {
    let (inp, out) = (s.workload.input_len.max(1) as u64, s.workload.output_len.max(1) as u64);
    let mode = tile_mode(s);
    let mut memo = Memo::default();
    let pc = cost_phase_with(model, device, phase, &point, inp, out, &mut memo, mode)?;
    let per_seq = if phase == Phase::Prefill { inp } else { 1 };
    let tps = pc.tokens_per_s(per_seq) / point.tp as f64;
    let total = pc.total_us.max(1e-12);
    let (hot, bottlenecks) = hot_spots(&pc.ops);
    let cause_chain = causes(&pc.ops, phase.name(), phase == Phase::Decode, device, &bottlenecks);
    let mut suggestions = Vec::new();
    for (title, p, cost, risk) in candidates(&point, model) {
        let after = cost_phase_with(model, device, phase, &p, inp, out, &mut memo, mode);
        suggestions.push(evaluate(after, phase, goal, &pc, tps, title, p, cost, risk, &weights, inp));
    }
    suggestions.sort_by(|a, b| (a.infeasible.is_some()).cmp(&b.infeasible.is_some()).then(b.score.total_cmp(&a.score)));
    Ok(Diagnosis {
        phase, point, goal, step_ms: total / 1e3, tokens_per_s: tps, memory_gib: pc.memory.total as f64 / (1u64 << 30) as f64,
        bottlenecks, hot_spots: hot, cause_chain, suggestions, weights,
        tiling: if mode == TileMode::Best { "tuned" } else { "default" }.into(),
        note: format!("simulated with the analytic device model at {} tilings, eager launch; cost and risk are editable priors", if mode == TileMode::Best { "tuned" } else { "default" }),
    })
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
        format!("KV-cache reads take {:.0}% of the step", share(kv))
    } else if weights > 0.0 && words.contains("HBM") {
        format!("weight reads by the matmuls take {:.0}% of the step", share(weights))
    } else {
        format!("operators that are {words} take {:.0}% of the step", share(*t))
    };
    chain.push(format!("{label} is {words}: {what}"));
    if let Some(top) = ops.iter().max_by(|a, b| a.time_us.total_cmp(&b.time_us)) {
        let ridge = d.derived.peak_tflops_fp16 * 1e12 / (d.derived.hbm_gbs * 1e9).max(1.0);
        chain.push(format!(
            "the largest operator, {} ({}), takes {:.0}% of the step and is {}: {:.1} FLOP/byte against the chip's ridge point of {:.0}, attaining {:.1} TFLOP/s",
            top.name, top.class.name(), share(top.time_us), bound_words(top.estimate.bound), top.estimate.arithmetic_intensity, ridge, top.estimate.attained_tflops
        ));
    }
    for (class, s) in shares {
        if class != "memory" && class != "compute" && *s >= 0.1 {
            chain.push(format!("{class} is {:.0}% of the step", s * 100.0));
        }
    }
    chain
}

trait OpFacts {
    fn is_kv_read(&self) -> bool;
    fn is_weight_matmul(&self) -> bool;
}

impl OpFacts for crate::serving::OpCost {
    /// Decode attention: one query token per sequence streaming the whole KV cache.
    fn is_kv_read(&self) -> bool {
        matches!(self.op, Op::Attention { kind: AttentionKind::Decode, .. })
    }
    fn is_weight_matmul(&self) -> bool {
        matches!(self.class, OpClass::Mlp | OpClass::Moe | OpClass::LmHead | OpClass::Attention) && !self.name.ends_with("attn.core")
    }
}

/// The changes considered: (title, point after, cost prior, risk prior).
fn candidates(p: &ServingPoint, model: &ModelDesc) -> Vec<(String, ServingPoint, f64, f64)> {
    let mut v = Vec::new();
    if !p.flash_attention {
        v.push(("enable flash attention".into(), ServingPoint { flash_attention: true, ..*p }, 0.2, 0.05));
    }
    if !p.fuse_epilogues {
        v.push(("fuse matmul epilogues (bias, activation, residual)".into(), ServingPoint { fuse_epilogues: true, ..*p }, 0.2, 0.05));
    }
    if matches!(p.precision, Precision::Fp16 | Precision::Bf16 | Precision::Fp32) {
        v.push(("quantise weights to INT8 (W8A16)".into(), ServingPoint { precision: Precision::W8a16, ..*p }, 0.5, 0.3));
    }
    if p.precision == Precision::W8a16 {
        v.push(("quantise activations too (W8A8)".into(), ServingPoint { precision: Precision::W8a8, ..*p }, 0.6, 0.45));
    }
    v.push((format!("double the batch to {}", p.batch * 2), ServingPoint { batch: p.batch * 2, ..*p }, 0.1, 0.25));
    if p.batch > 1 {
        v.push((format!("halve the batch to {}", p.batch / 2), ServingPoint { batch: p.batch / 2, ..*p }, 0.1, 0.1));
    }
    let heads = model.llm.as_ref().map_or(1, |t| t.heads);
    if heads % (p.tp * 2) == 0 {
        v.push((format!("tensor parallel {} -> {}", p.tp, p.tp * 2), ServingPoint { tp: p.tp * 2, ..*p }, 0.6, 0.15));
    }
    v
}

#[allow(clippy::too_many_arguments)]
fn evaluate(after: Result<PhaseCost, String>, phase: Phase, goal: Goal, before: &PhaseCost, tps: f64, title: String, p: ServingPoint, cost: f64, risk: f64, w: &Weights, inp: u64) -> Suggestion {
    let per_seq = if phase == Phase::Prefill { inp } else { 1 };
    match after {
        Ok(after) => {
            let after_tps = after.tokens_per_s(per_seq) / p.tp as f64;
            let gain = match goal {
                Goal::Throughput => (after_tps - tps) / tps.max(1e-12),
                Goal::Latency => (before.total_us - after.total_us) / before.total_us.max(1e-12),
            };
            let eff = gain.clamp(-1.0, 1.0);
            let score = w.score(eff, cost, risk);
            Suggestion { title, point: p, predicted_step_ms: Some(after.total_us / 1e3), predicted_tokens_per_s: Some(after_tps), effectiveness: eff, cost, risk, score, infeasible: None }
        }
        Err(e) => Suggestion { title, point: p, predicted_step_ms: None, predicted_tokens_per_s: None, effectiveness: 0.0, cost, risk, score: f64::NEG_INFINITY.max(-1.0), infeasible: Some(e) },
    }
}

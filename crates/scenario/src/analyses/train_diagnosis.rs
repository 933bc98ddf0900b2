//! Diagnosis of a training configuration and of a search itself.
//!
//! Training: the same hot-spot map and cause chain as inference (`diagnosis`), over one training
//! step's operators, plus the schedule's own losses (pipeline bubble, exposed data-parallel
//! communication), and suggestions re-simulated with `training::simulate_split`.
//! Search signals: what the trials say about the search (how much was infeasible and why,
//! whether the best stopped improving), the "convergence" dimension of the diagnosis.

use crate::analyses::diagnosis::{causes, hot_spots, HotSpot, Weights};
use crate::spec::scenario::Scenario;
use crate::stages::training::{decode, inputs, step_operators, Inputs, TrainPoint, TrainResult, TrainStepOps};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tunelab_search::{Config, Metric, Trial, TrialState};
use tunelab_sim::workload::Recompute;

/// A training change, its simulated result and its score.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainSuggestion {
    pub title: String,
    pub step_time_ms: Option<f64>,
    pub memory_gib: Option<f64>,
    pub effectiveness: f64,
    pub cost: f64,
    pub risk: f64,
    pub score: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infeasible: Option<String>,
}

/// The diagnosis of one training configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainDiagnosis {
    pub step_time_ms: f64,
    pub mfu: f64,
    pub memory_gib: f64,
    pub bottlenecks: BTreeMap<String, f64>,
    pub hot_spots: Vec<HotSpot>,
    pub cause_chain: Vec<String>,
    pub suggestions: Vec<TrainSuggestion>,
    pub weights: Weights,
}

/// Diagnoses `config` of the training space (parameter `names`) for scenario `s`.
pub fn diagnose_training(s: &Scenario, names: &[String], config: &Config, weights: Weights) -> Result<TrainDiagnosis, String> {
    // The stage's own inputs (the mean sample length where samples vary) and its own step: the
    // hot spots are the operators the stage priced, on the pace-setting pipeline stage.
    let Inputs { options: o, model, device, seq_len: seq, global_batch: gb, .. } = inputs(s)?;
    let mut p = decode(names, config, gb)?;
    o.apply(&mut p);
    let TrainStepOps { ops, result: r, .. } = step_operators(s, names, config)?;
    let (hot, shares) = hot_spots(&ops);
    let mut chain = causes(&ops, "the training step", false, &device, &shares);
    if let Some(st) = r.busiest_stage {
        chain.push(format!("pipeline stage {} of {} sets the pace with {} of the model's layers (training.pipeline_layers {:?}): every stage runs each micro-batch at its rate", st.index, p.plan.pp, st.layers, o.pipeline_layers));
    }
    if r.bubble_fraction >= 0.05 {
        chain.push(format!("the pipeline bubble idles {:.0}% of each step: (pp - 1) / (m + pp - 1) with pp = {} and m = {} micro-batches", r.bubble_fraction * 100.0, p.plan.pp, r.grad_accum));
    }
    if let Some((_, sync)) = r.breakdown.iter().find(|(k, _)| k == crate::stages::training::MOE_SYNC).filter(|(_, v)| *v > 0.05 * r.step_time_ms) {
        chain.push(format!("{sync:.0} ms of the step ({:.0}%) the device waits on the host in the MoE layers: the token dispatcher's data-dependent shapes (routing masks, tokens per expert) synchronise host and device in every forward and backward pass of each MoE layer", 100.0 * sync / r.step_time_ms));
    }
    chain.push(format!("gradient and parameter communication: {}", r.overlap_note));
    if r.dp_comm_exposed_ms > 0.05 * r.step_time_ms {
        chain.push(format!("{:.0} ms of data-parallel communication is not hidden behind the backward pass ({:.0}% of the step)", r.dp_comm_exposed_ms, 100.0 * r.dp_comm_exposed_ms / r.step_time_ms));
    }
    let mut suggestions: Vec<TrainSuggestion> = candidates(&p, o.chips)
        .into_iter()
        .map(|(title, q, cost, risk)| score(crate::stages::training::simulate_options(&model, &device, &q, &o, seq, gb), &r, title, cost, risk, &weights))
        .collect();
    suggestions.sort_by(|a, b| a.infeasible.is_some().cmp(&b.infeasible.is_some()).then(b.score.total_cmp(&a.score)));
    Ok(TrainDiagnosis { step_time_ms: r.step_time_ms, mfu: r.mfu, memory_gib: r.memory_gib, bottlenecks: shares, hot_spots: hot, cause_chain: chain, suggestions, weights })
}

/// Changes considered: (title, point, cost prior, risk prior). Global batch stays fixed, so the
/// accumulation is re-derived from micro-batch x dp.
fn candidates(p: &TrainPoint, chips: u64) -> Vec<(String, TrainPoint, f64, f64)> {
    let mut v = Vec::new();
    let with_accum = |mut q: TrainPoint, gb_per: u64| {
        q.train.grad_accum = gb_per;
        q
    };
    let gb = p.micro_batch * p.plan.dp * p.train.grad_accum;
    let accum = |mb: u64, dp: u64| if mb * dp > 0 && gb % (mb * dp) == 0 { gb / (mb * dp) } else { 0 };
    if p.train.recompute != Recompute::None {
        let mut q = *p;
        q.train.recompute = Recompute::None;
        v.push(("turn recomputation off".to_string(), q, 0.1, 0.2));
    }
    if p.train.recompute != Recompute::Full {
        let mut q = *p;
        q.train.recompute = Recompute::Full;
        v.push(("recompute full layers".to_string(), q, 0.1, 0.05));
    }
    if p.train.zero_stage < 3 {
        let mut q = *p;
        q.train.zero_stage += 1;
        q.train.distributed_optimizer = false;
        v.push((format!("ZeRO stage {}", q.train.zero_stage), q, 0.2, 0.05));
    }
    let mut q = *p;
    q.micro_batch *= 2;
    v.push((format!("micro-batch {}", q.micro_batch), with_accum(q, accum(q.micro_batch, q.plan.dp)), 0.1, 0.1));
    if p.plan.dp % 2 == 0 && p.plan.tp * 2 <= 16 {
        let mut q = *p;
        q.plan.tp *= 2;
        q.plan.dp /= 2;
        v.push((format!("tensor parallel {} (dp {})", q.plan.tp, q.plan.dp), with_accum(q, accum(q.micro_batch, q.plan.dp)), 0.4, 0.1));
    }
    if p.plan.pp % 2 == 0 && p.plan.chips() == chips {
        let mut q = *p;
        q.plan.pp /= 2;
        q.plan.dp *= 2;
        v.push((format!("pipeline parallel {} (dp {})", q.plan.pp, q.plan.dp), with_accum(q, accum(q.micro_batch, q.plan.dp)), 0.4, 0.1));
    }
    v
}

fn score(after: Result<TrainResult, String>, before: &TrainResult, title: String, cost: f64, risk: f64, w: &Weights) -> TrainSuggestion {
    match after {
        Ok(a) => {
            let eff = ((before.step_time_ms - a.step_time_ms) / before.step_time_ms.max(1e-12)).clamp(-1.0, 1.0);
            let score = w.score(eff, cost, risk);
            TrainSuggestion { title, step_time_ms: Some(a.step_time_ms), memory_gib: Some(a.memory_gib), effectiveness: eff, cost, risk, score, infeasible: None }
        }
        Err(e) => TrainSuggestion { title, step_time_ms: None, memory_gib: None, effectiveness: 0.0, cost, risk, score: -1.0, infeasible: Some(e) },
    }
}

/// What the trials of a search say.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchSignals {
    pub evaluations: usize,
    pub infeasible_share: f64,
    pub failed: usize,
    /// Infeasibility reasons with the numbers blanked out ("out of memory by # GiB"), by count.
    pub top_reasons: Vec<(String, usize)>,
    /// The evaluation at which the best last improved, and whether it has stalled since
    /// (no improvement in the last third of the evaluations).
    pub last_improvement_at: Option<usize>,
    pub stalled: bool,
    pub summary: String,
}

/// Reads the signals from a study's trials (warm-start trials excluded).
pub fn search_signals(trials: &[Trial], metrics: &[Metric]) -> SearchSignals {
    let own: Vec<&Trial> = trials.iter().filter(|t| !t.warm).collect();
    let n = own.len();
    let infeasible = own.iter().filter(|t| t.state == TrialState::Infeasible).count();
    let failed = own.iter().filter(|t| t.state == TrialState::Failed).count();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for t in own.iter().filter(|t| t.state != TrialState::Ok) {
        let r = t.reason.as_deref().unwrap_or("no reason given");
        *reasons.entry(blank_numbers(r)).or_insert(0) += 1;
    }
    let mut top: Vec<(String, usize)> = reasons.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1));
    top.truncate(5);
    let (mut best, mut last) = (None::<f64>, None);
    if let Some(m) = metrics.first() {
        for (i, t) in own.iter().enumerate() {
            if let Some(v) = t.value().map(|v| m.signed(v)) {
                if best.is_none_or(|b| v < b) {
                    best = Some(v);
                    last = Some(i + 1);
                }
            }
        }
    }
    let stalled = n >= 9 && last.is_none_or(|l| l <= n - n / 3);
    let share = if n > 0 { infeasible as f64 / n as f64 } else { 0.0 };
    let mut summary = format!("{n} evaluations, {:.0}% infeasible", share * 100.0);
    if let Some((r, c)) = top.first() {
        summary.push_str(&format!("; most often: {r} ({c})"));
    }
    match last {
        Some(l) if stalled => summary.push_str(&format!("; no improvement since evaluation {l}")),
        Some(l) => summary.push_str(&format!("; last improvement at evaluation {l}")),
        None => summary.push_str("; nothing feasible yet"),
    }
    SearchSignals { evaluations: n, infeasible_share: share, failed, top_reasons: top, last_improvement_at: last, stalled, summary }
}

/// "out of memory by 35.46 GiB" -> "out of memory by # GiB": groups reasons that differ in numbers.
fn blank_numbers(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_num = false;
    for ch in s.chars().take(200) {
        let numeric = ch.is_ascii_digit() || (in_num && (ch == '.' || ch == 'e'));
        if numeric {
            if !in_num {
                out.push('#');
            }
            in_num = true;
        } else {
            in_num = false;
            out.push(ch);
        }
    }
    out
}

//! The impact analyser: what one change does at every stage. A change made for deployment
//! (quantised weights, a tensor-parallel degree) also changes the model's size; one made for
//! training (recomputation, ZeRO) changes training memory and step time but not inference. Each
//! figure is simulated before and after; a composite score weighs the relative improvements.
//!
//! Composite = sum over measures of weight x relative improvement (positive is better), with
//! weights inference latency 0.4, training memory 0.3, model size 0.3 by default (editable);
//! measures a change does not touch count as zero.

use crate::spec::scenario::Scenario;
use crate::stages::serving::{cost_phase, default_point, Phase, ServingPoint};
use crate::stages::training::{decode, simulate, TrainingOptions};
use serde::{Deserialize, Serialize};
use tunelab_search::{Config, Value};
use tunelab_sim::memory::memory_per_chip;
use tunelab_sim::workload::{ParallelPlan, Workload};
use tunelab_sim::Precision;

/// A change to evaluate; unset fields stay as they are.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Change {
    /// Inference precision ("fp16", "bf16", "w8a16", "w8a8").
    pub precision: Option<String>,
    pub flash_attention: Option<bool>,
    pub tp: Option<u64>,
    pub batch: Option<u64>,
    /// Training: "none", "selective", "full".
    pub recompute: Option<String>,
    /// Training: "zero0".."zero3", "distributed_optimizer".
    pub optimizer_sharding: Option<String>,
}

/// Weights of the composite score.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImpactWeights {
    pub latency: f64,
    pub training_memory: f64,
    pub model_size: f64,
}

impl Default for ImpactWeights {
    fn default() -> Self {
        ImpactWeights { latency: 0.4, training_memory: 0.3, model_size: 0.3 }
    }
}

/// One measure before and after.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImpactRow {
    pub stage: String,
    pub measure: String,
    pub unit: String,
    pub before: Option<f64>,
    pub after: Option<f64>,
    /// (before - after) / before for lower-is-better measures; None when either is missing.
    pub improvement: Option<f64>,
    /// Why a figure is missing (out of memory, not applicable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The whole analysis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImpactReport {
    pub change: Change,
    pub rows: Vec<ImpactRow>,
    pub composite: f64,
    pub weights: ImpactWeights,
}

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// Evaluates a change against the scenario's defaults at every stage.
pub fn analyse(s: &Scenario, change: &Change, weights: ImpactWeights) -> Result<ImpactReport, String> {
    let (model, device, _) = crate::stages::context::resolve(s)?;
    let before = default_point(s, &model);
    let mut after = before;
    if let Some(p) = &change.precision {
        after.precision = Precision::parse(p)?;
    }
    after.flash_attention = change.flash_attention.unwrap_or(after.flash_attention);
    after.tp = change.tp.unwrap_or(after.tp).max(1);
    after.batch = change.batch.unwrap_or(after.batch).max(1);
    let (inp, out) = (s.workload.input_len.max(1) as u64, s.workload.output_len.max(1) as u64);
    let mut rows = Vec::new();
    for (phase, measure) in [(Phase::Decode, "TPOT"), (Phase::Prefill, "TTFT")] {
        let f = |p: &ServingPoint| cost_phase(&model, &device, phase, p, inp, out).map(|c| c.total_us / 1e3);
        rows.push(row("inference", measure, "ms", f(&before), f(&after)));
    }
    // Model size: all weights at the deployment precision, summed over the tensor-parallel group.
    let size = |p: &ServingPoint| -> Result<f64, String> {
        let w = Workload::Decode { batch: 1, context_len: 1, output_len: 1 };
        let plan = ParallelPlan { tp: p.tp, ..ParallelPlan::default() };
        let m = memory_per_chip(&model, &w, &plan, &crate::stages::serving::graph_options(p), None)?;
        Ok(m.weights as f64 * p.tp as f64 / GIB)
    };
    rows.push(row("deployment", "model size", "GiB", size(&before), size(&after)));
    // Training memory and step time at the training stage's baseline point with the change.
    let o = TrainingOptions::from_scenario(s)?;
    let train_row = |c: &Change| -> Result<(f64, f64), String> {
        let names: Vec<String> = crate::stages::training::PARAMS.iter().map(|x| x.to_string()).collect();
        let precision = match c.precision.as_deref() {
            Some(p @ ("bf16" | "fp16" | "fp32")) => p.to_string(),
            _ => "bf16".to_string(),
        };
        let tp = c.tp.unwrap_or(1).max(1);
        let dp = (o.chips / tp).max(1);
        let cfg = Config(vec![
            Value::Int(tp as i64), Value::Int(1), Value::Int(dp as i64), Value::Int(1),
            Value::Str(c.recompute.clone().unwrap_or_else(|| "none".into())),
            Value::Str(c.optimizer_sharding.clone().unwrap_or_else(|| "zero1".into())),
            Value::Str("off".into()), Value::Str(precision),
        ]);
        let gb = s.workload.global_batch.max(1) as u64;
        let p = decode(&names, &cfg, gb)?;
        let r = simulate(&model, &device, &p, s.workload.seq_len.max(1) as u64, gb, o.chips)?;
        Ok((r.memory_gib, r.step_time_ms))
    };
    if model.llm.is_some() {
        let tb = train_row(&Change::default());
        let ta = train_row(change);
        let quant = change.precision.as_deref().is_some_and(|p| p.starts_with('w'));
        let mut r = row("training", "memory per chip", "GiB", tb.clone().map(|x| x.0), ta.clone().map(|x| x.0));
        let mut t = row("training", "step time", "ms", tb.map(|x| x.1), ta.map(|x| x.1));
        if quant {
            // Quantisation is applied after training: training is unaffected.
            for x in [&mut r, &mut t] {
                x.note = Some("post-training quantisation does not change training".into());
            }
        }
        rows.push(r);
        rows.push(t);
    }
    let imp = |stage: &str, m: &str| rows.iter().find(|r| r.stage == stage && r.measure == m).and_then(|r| r.improvement).unwrap_or(0.0);
    let composite = weights.latency * imp("inference", "TPOT") + weights.training_memory * imp("training", "memory per chip") + weights.model_size * imp("deployment", "model size");
    Ok(ImpactReport { change: change.clone(), rows, composite, weights })
}

fn row(stage: &str, measure: &str, unit: &str, b: Result<f64, String>, a: Result<f64, String>) -> ImpactRow {
    let note = match (&b, &a) {
        (Err(e), _) => Some(format!("before: {e}")),
        (_, Err(e)) => Some(format!("after: {e}")),
        _ => None,
    };
    let (b, a) = (b.ok(), a.ok());
    let improvement = match (b, a) {
        (Some(x), Some(y)) if x > 0.0 => Some((x - y) / x),
        _ => None,
    };
    ImpactRow { stage: stage.into(), measure: measure.into(), unit: unit.into(), before: b, after: a, improvement, note }
}

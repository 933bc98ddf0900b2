//! The impact analyser: what one change does at every stage. A change made for deployment
//! (quantised weights, a tensor-parallel degree) also changes the model's size; one made for
//! training (recomputation, ZeRO) changes training memory and step time but not inference. Each
//! figure is priced before and after by the stage objective that `tunelab eval` and the study use
//! (the deployment stage for inference, the training stage for training), at that stage's
//! baseline configuration; a composite score weighs the relative improvements.
//!
//! Composite = sum over measures of weight x relative improvement (positive is better), with
//! weights inference latency 0.4, training memory 0.3, model size 0.3 by default (editable);
//! measures a change does not touch count as zero.

use crate::spec::scenario::{Scenario, Stage};
use crate::stages::serving::{default_point, ServingPoint};
use crate::stages::StageSetup;
use serde::{Deserialize, Serialize};
use tunelab_search::{Config, Outcome, Value};
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

/// The scenario as the given stage sees it: the same model, chip, workload and options; the
/// space overrides, goals and limits only when the scenario is already that stage (they name its
/// parameters and metrics; another stage prices with its defaults).
fn stage_view(s: &Scenario, stage: Stage) -> Scenario {
    let mut t = s.clone();
    if s.stage != stage {
        t.stage = stage;
        t.space = Default::default();
        t.objectives = Vec::new();
        t.constraints = Default::default();
    }
    t
}

/// A stage objective with its baseline configuration: every figure of the analysis is priced by
/// the same function `tunelab eval` and the study call.
struct Priced {
    setup: StageSetup,
    names: Vec<String>,
}

impl Priced {
    fn new(s: &Scenario, stage: Stage) -> Result<Priced, String> {
        let setup = crate::stages::setup(&stage_view(s, stage))?;
        let names = setup.space.names().to_vec();
        Ok(Priced { setup, names })
    }

    /// The baseline with `edits` applied, by parameter name; an edit the stage has no
    /// parameter for is an error that says so.
    fn config(&self, edits: &[(&str, Value)]) -> Result<Config, String> {
        let mut c = self.setup.baseline.clone();
        for (name, v) in edits {
            let i = self.names.iter().position(|n| n == name).ok_or_else(|| format!("'{name}' is not a parameter of this stage"))?;
            c.0[i] = v.clone();
        }
        Ok(c)
    }

    /// The named metrics of `c`, from the stage objective. `checked`: refuse a configuration
    /// the space refuses, with the space's reason, exactly as `tunelab eval` (`Run::evaluate`)
    /// does; a changed configuration may leave the space's listed levels and is priced as is.
    fn metrics(&mut self, c: &Config, want: &[&str], checked: bool) -> Result<Vec<f64>, String> {
        if checked {
            self.setup.space.check(c)?;
        }
        match self.setup.objective.evaluate(c) {
            Outcome::Ok(v) => want
                .iter()
                .map(|w| self.setup.metrics.iter().position(|m| m.name == *w).and_then(|i| v.get(i).copied()).ok_or_else(|| format!("the stage reports no {w}")))
                .collect(),
            Outcome::Infeasible(r) | Outcome::Failed(r) => Err(r),
        }
    }

    fn value(&self, name: &str) -> Option<&Value> {
        self.names.iter().position(|n| n == name).map(|i| &self.setup.baseline.0[i])
    }
}

/// Evaluates a change against the scenario's baseline at every stage. Inference and training
/// figures come from the deployment and training stage objectives at their baseline
/// configurations (the scenario's own when it is that stage), so "before" is exactly what
/// `tunelab eval` prints for the scenario.
pub fn analyse(s: &Scenario, change: &Change, weights: ImpactWeights) -> Result<ImpactReport, String> {
    if s.stage == Stage::Landscape {
        return Err("impact: a landscape has no model on a chip to change; load a model scenario".into());
    }
    let (model, _, _) = crate::stages::context::resolve(s)?;
    let mut rows = Vec::new();
    // Inference: the deployment stage's TPOT and TTFT (as `tunelab eval` reports them).
    let mut dep = Priced::new(s, Stage::Deployment);
    let mut edits: Vec<(&str, Value)> = Vec::new();
    if let Some(p) = &change.precision {
        Precision::parse(p)?;
        edits.push(("precision", Value::Str(p.clone())));
    }
    if let Some(tp) = change.tp {
        edits.push(("tp", Value::Int(tp.max(1) as i64)));
    }
    if let Some(b) = change.batch {
        edits.push(("batch", Value::Int(b.max(1) as i64)));
    }
    let mut dep_note = None;
    if let Some(fa) = change.flash_attention {
        dep_note = Some(if fa { "the deployment stage always uses fused attention (FlashAttention); no change".to_string() } else { "the deployment stage always uses fused attention (FlashAttention); turning it off is an operator-stage knob".to_string() });
    }
    let (dep_before, dep_after) = match &mut dep {
        Ok(d) => {
            let before = d.setup.baseline.clone();
            let after = d.config(&edits);
            let b = d.metrics(&before, &["tpot_ms", "ttft_ms"], true);
            let a = after.and_then(|c| d.metrics(&c, &["tpot_ms", "ttft_ms"], false));
            (b, a)
        }
        Err(e) => (Err(e.clone()), Err(e.clone())),
    };
    for (i, measure) in ["TPOT", "TTFT"].iter().enumerate() {
        let mut r = row("inference", measure, "ms", dep_before.clone().map(|v| v[i]), dep_after.clone().map(|v| v[i]));
        if r.note.is_none() {
            r.note = dep_note.clone();
        }
        rows.push(r);
    }
    // Model size: all weights at the deployment precision, summed over the tensor-parallel group
    // (a property of the model and precision, not a timing).
    let point_of = |edits: &[(&str, Value)]| -> ServingPoint {
        let mut p = default_point(s, &model);
        if let Ok(d) = &dep {
            let names = d.names.clone();
            if let Ok(c) = d.config(edits) {
                p = crate::stages::serving::point_from_config(&names, &c, p);
            }
        }
        p
    };
    let size = |p: &ServingPoint| -> Result<f64, String> {
        let w = Workload::Decode { batch: 1, context_len: 1, output_len: 1 };
        let plan = ParallelPlan { tp: p.tp, ..ParallelPlan::default() };
        let m = memory_per_chip(&model, &w, &plan, &crate::stages::serving::graph_options(p), None)?;
        Ok(m.weights as f64 * p.tp as f64 / GIB)
    };
    rows.push(row("deployment", "model size", "GiB", size(&point_of(&[])), size(&point_of(&edits))));
    // Training: the training stage's memory per chip and step time (a language model, or any
    // model a training scenario trains, e.g. a diffusion pipeline's denoiser).
    if model.llm.is_some() || s.stage == Stage::Training {
        let quant = change.precision.as_deref().is_some_and(|p| p.starts_with('w'));
        let (tb, ta) = match Priced::new(s, Stage::Training) {
            Ok(mut t) => {
                let mut edits: Vec<(&str, Value)> = Vec::new();
                if let Some(p @ ("bf16" | "fp16" | "fp32")) = change.precision.as_deref() {
                    edits.push(("precision", Value::Str(p.into())));
                }
                if let Some(r) = &change.recompute {
                    edits.push(("recompute", Value::Str(r.clone())));
                }
                if let Some(o) = &change.optimizer_sharding {
                    edits.push(("optimizer_sharding", Value::Str(o.clone())));
                }
                if let Some(tp) = change.tp {
                    // Keep the job's chips: data parallelism gives way to tensor parallelism.
                    let int = |n: &str| t.value(n).and_then(|v| v.as_f64()).unwrap_or(1.0) as u64;
                    let chips = int("tp") * int("dp");
                    let tp = tp.max(1);
                    edits.push(("tp", Value::Int(tp as i64)));
                    edits.push(("dp", Value::Int((chips / tp).max(1) as i64)));
                }
                let before = t.setup.baseline.clone();
                let b = t.metrics(&before, &["memory_gib", "step_time_ms"], true);
                let a = t.config(&edits).and_then(|c| t.metrics(&c, &["memory_gib", "step_time_ms"], false));
                (b, a)
            }
            Err(e) => (Err(e.clone()), Err(e)),
        };
        let mut r = row("training", "memory per chip", "GiB", tb.clone().map(|x| x[0]), ta.clone().map(|x| x[0]));
        let mut t = row("training", "step time", "ms", tb.map(|x| x[1]), ta.map(|x| x[1]));
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

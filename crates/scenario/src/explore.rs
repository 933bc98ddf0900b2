//! The explore view: a heat map of the stage's primary metric over any two parameters (the others
//! held at a given or the baseline configuration), with infeasible cells carrying their reason,
//! and the detail of one point: its engine breakdown and its place on the roofline.
//!
//! Why through the stage objective: the heat map shows exactly what the tuner would see,
//! constraint violations ("does not fit L0A", "out of memory") included.

use crate::scenario::{Scenario, Stage};
use crate::serving::{cost, cost_with, default_point, graph_options, point_from_config, tile_mode, workload, Memo, OpCost, Phase, TileMode};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tunelab_search::{Config, Outcome, Param, Value};
use tunelab_sim::estimate::ALL_BOUNDS;
use tunelab_sim::memory::MemoryBreakdown;
use tunelab_sim::workload::ParallelPlan;

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
    let mut st = crate::stages::setup(s)?;
    let find = |n: &str| st.space.index_of(n).ok_or_else(|| format!("explore: the {} stage has no parameter '{}' (it has {})", s.stage.name(), crate::scenario::clip(n), st.space.names().join(", ")));
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
}

/// Metrics of a configuration from the stage objective, plus the engine breakdown and roofline
/// of the step it configures (training: one training step; otherwise a decode step, or the
/// prefill when the operator stage tiles prefill only).
pub fn point_detail(s: &Scenario, config: &Config) -> Result<PointDetail, String> {
    let mut st = crate::stages::setup(s)?;
    let names = st.space.names().to_vec();
    let (metrics, infeasible) = match st.space.check(config).map(|_| st.objective.evaluate(config)) {
        Err(e) => (Vec::new(), Some(e)),
        Ok(Outcome::Ok(v)) => (st.metrics.iter().zip(v).map(|(m, x)| (m.name.clone(), x, m.unit.clone())).collect(), None),
        Ok(Outcome::Infeasible(r) | Outcome::Failed(r)) => (Vec::new(), Some(r)),
    };
    let (model, device, _) = crate::context::resolve(s)?;
    let (inp, out) = (s.workload.input_len.max(1) as u64, s.workload.output_len.max(1) as u64);
    let sim = if s.stage == Stage::Training {
        let gb = s.workload.global_batch.max(1) as u64;
        let p = crate::training::decode(&names, config, gb)?;
        let w = tunelab_sim::workload::Workload::TrainStep { micro_batch: p.micro_batch, seq_len: s.workload.seq_len.max(1) as u64 };
        let opts = tunelab_sim::workload::GraphOptions { precision: p.precision, train: p.train, ..Default::default() };
        ("one training step (all micro-batches) at default tilings", cost(&model, &device, &w, &p.plan, &opts))
    } else {
        let p = point_from_config(&names, config, default_point(s, &model));
        let phase = if s.stage == Stage::Operator && s.operator.phase == "prefill" { Phase::Prefill } else { Phase::Decode };
        let w = workload(phase, p.batch, inp, out);
        let plan = ParallelPlan { tp: p.tp, ..ParallelPlan::default() };
        let mode = tile_mode(s);
        let label = match (phase, mode == TileMode::Best) {
            (Phase::Decode, true) => "one decode step at tuned tilings, eager launch",
            (Phase::Decode, false) => "one decode step at default tilings, eager launch",
            (_, true) => "the prefill at tuned tilings, eager launch",
            (_, false) => "the prefill at default tilings, eager launch",
        };
        (label, cost_with(&model, &device, &w, &plan, &graph_options(&p), &mut Memo::default(), mode))
    };
    let (label, result) = sim;
    let d = &device.derived;
    let ridge = d.peak_tflops_fp16 * 1e12 / (d.hbm_gbs * 1e9).max(1.0);
    let mut detail = PointDetail {
        metrics, infeasible, simulated: label.into(), total_ms: 0.0, exposed_ms: BTreeMap::new(), busy_ms: BTreeMap::new(), memory: None,
        intensity: 0.0, attained_tflops: 0.0, peak_tflops: d.peak_tflops_fp16, hbm_gbs: d.hbm_gbs, ridge_intensity: ridge, ops: Vec::new(),
    };
    let (ops, mem) = match result {
        Ok(x) => x,
        Err(e) => {
            detail.infeasible.get_or_insert(e);
            return Ok(detail);
        }
    };
    fill(&mut detail, &ops);
    detail.memory = Some(mem);
    Ok(detail)
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

//! Guards against over-optimisation: a compatibility check of a configuration against a target
//! chip, protected sensitive layers kept in 16-bit, and a validation "delta" check of outputs
//! before and after a change.
//!
//! Honest limits: a simulator computes no tensors, so the delta check compares the device model's
//! expected relative error of the data types used (`Estimate::relative_error`, an RMS estimate
//! from rounding units and reduction lengths), not real outputs; every report says so.

use crate::spec::scenario::{DeviceRef, Scenario};
pub use crate::stages::diffusion::guard::OutputKnob;
use crate::stages::serving::{cost, default_point, graph_options, workload, Phase, ServingPoint};
use serde::{Deserialize, Serialize};
use tunelab_search::{Config, Outcome};
use tunelab_sim::tiling::Tiling;
use tunelab_sim::workload::build_graph;
use tunelab_sim::{DType, Op};

/// Result of checking one configuration on another chip.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompatReport {
    pub target: String,
    pub compatible: bool,
    /// Why not (out of memory, tile does not fit L0A, ...), from the stage's own objective.
    pub problems: Vec<String>,
    /// The stage metrics on the target, when it runs there: (name, value, unit).
    pub metrics: Vec<(String, f64, String)>,
}

/// Evaluates `config` of the scenario's stage as if the scenario targeted `target` (a bundled chip
/// name): the same objective, so every device limit the stage knows is checked.
pub fn check_compatibility(s: &Scenario, config: &Config, target: &str) -> Result<CompatReport, String> {
    let mut t = s.clone();
    t.device = DeviceRef::Name(target.to_string());
    let mut setup = crate::stages::setup(&t)?;
    let (compatible, problems, metrics) = match setup.space.check(config) {
        Err(e) => (false, vec![format!("not a point of the {} space on {target}: {e}", s.stage.name())], Vec::new()),
        Ok(()) => match setup.objective.evaluate(config) {
            Outcome::Ok(v) => (true, Vec::new(), setup.metrics.iter().zip(v).map(|(m, x)| (m.name.clone(), x, m.unit.clone())).collect()),
            Outcome::Infeasible(r) | Outcome::Failed(r) => (false, vec![r], Vec::new()),
        },
    };
    Ok(CompatReport { target: target.to_string(), compatible, problems, metrics })
}

/// What keeping sensitive layers in 16-bit costs and saves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProtectedReport {
    pub patterns: Vec<String>,
    /// Graph operators the patterns matched (kept in 16-bit).
    pub protected_ops: Vec<String>,
    pub step_ms_all_quantised: f64,
    pub step_ms_protected: f64,
    /// Largest per-operator expected relative error, all quantised vs protected.
    pub rel_error_all_quantised: f64,
    pub rel_error_protected: f64,
    pub note: String,
    /// Which step the step times are ("decode step"; "denoising step" on the diffusion stage).
    #[serde(default = "decode_step")]
    pub step: String,
    /// The whole call end to end, all quantised and protected (diffusion: one pipeline call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms_all_quantised: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms_protected: Option<f64>,
}

fn decode_step() -> String {
    "decode step".into()
}

/// Layers commonly left unquantised: the output head, embeddings and MoE routers.
pub const DEFAULT_PROTECTED: &[&str] = &["lm_head", "embed", "router"];

/// Costs a quantised decode step with and without the protected layers kept in 16-bit.
pub fn protect_layers(s: &Scenario, point: &ServingPoint, patterns: &[String]) -> Result<ProtectedReport, String> {
    let (model, device, _) = crate::stages::context::resolve(s)?;
    let (inp, out) = (s.workload.input_len.max(1) as u64, s.workload.output_len.max(1) as u64);
    let w = workload(Phase::Decode, point.batch.max(1), inp, out);
    let plan = point.plan();
    let opts = graph_options(point);
    // Memory and feasibility of the point itself first (reasons come back as errors).
    cost(&model, &device, &w, &plan, &opts)?;
    let graph = build_graph(&model, &w, &plan, &opts)?;
    // Protected layers stay in the model's own 16-bit type (the native-precision rule).
    let keep = if crate::stages::context::native_precision(model.dtype, true) == tunelab_sim::Precision::Bf16 { DType::Bf16 } else { DType::Fp16 };
    let (mut t_q, mut t_p, mut e_q, mut e_p, mut names) = (0.0, 0.0, 0.0f64, 0.0f64, Vec::new());
    for o in &graph.ops {
        let eq = tunelab_sim::cost::estimate(&o.op, &Tiling::Default, &device).map_err(|e| format!("{}: {e}", o.name))?;
        let matched = patterns.iter().any(|p| !p.is_empty() && o.name.contains(p.as_str()));
        let protected_op = match (&o.op, matched) {
            (Op::Matmul { batch, m, n, k, epilogue, .. }, true) => {
                names.push(o.name.clone());
                Some(Op::Matmul { batch: *batch, m: *m, n: *n, k: *k, dtype: keep, weight_dtype: None, epilogue: *epilogue })
            }
            _ => None,
        };
        let ep = match &protected_op {
            Some(op) => tunelab_sim::cost::estimate(op, &Tiling::Default, &device).map_err(|e| format!("{}: {e}", o.name))?,
            None => eq,
        };
        t_q += eq.time_us * o.repeat as f64;
        t_p += ep.time_us * o.repeat as f64;
        e_q = e_q.max(eq.relative_error);
        e_p = e_p.max(ep.relative_error);
    }
    Ok(ProtectedReport {
        patterns: patterns.to_vec(),
        protected_ops: names,
        step_ms_all_quantised: t_q / 1e3,
        step_ms_protected: t_p / 1e3,
        rel_error_all_quantised: e_q,
        rel_error_protected: e_p,
        note: "relative errors are the device model's data-type estimates, not measured outputs".into(),
        step: decode_step(),
        latency_ms_all_quantised: None,
        latency_ms_protected: None,
    })
}

/// The validation check of a change: expected output error before and after against the bound.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeltaCheck {
    pub rel_error_before: f64,
    pub rel_error_after: f64,
    /// Growth of the expected error (after - before).
    pub delta: f64,
    pub limit: Option<f64>,
    pub pass: bool,
    pub note: String,
}

/// Compares the expected relative error (`rel_error`, the largest per-operator data-type
/// estimate) of the stage baseline and of `config`, both priced by the stage objective, against
/// `constraints.max_rel_error` (no bound: passes, and says so).
pub fn delta_check(s: &Scenario, config: &Config) -> Result<DeltaCheck, String> {
    // Priced without the scenario's limits: the check compares with the bound itself, and a
    // limit would turn the very figure it reports into "infeasible".
    let mut unbounded = s.clone();
    unbounded.constraints = Default::default();
    let mut setup = crate::stages::setup(&unbounded)?;
    let i = setup.metrics.iter().position(|m| m.name == "rel_error").ok_or_else(|| format!("the {} stage reports no expected relative error", s.stage.name()))?;
    let baseline = setup.baseline.clone();
    let mut err = |c: &Config| match setup.objective.evaluate(c) {
        Outcome::Ok(v) => Ok(v[i]),
        Outcome::Infeasible(r) | Outcome::Failed(r) => Err(r),
    };
    let b = err(&baseline).map_err(|e| format!("the baseline: {e}"))?;
    let a = err(config)?;
    let limit = s.constraints.max_rel_error;
    let pass = limit.is_none_or(|l| a <= l);
    let note = match limit {
        Some(l) => format!("expected relative error {a:.2e} after vs {b:.2e} before, bound {l:.2e}; a data-type estimate, no tensors are computed"),
        None => format!("expected relative error {a:.2e} after vs {b:.2e} before; no max_rel_error bound is set; a data-type estimate"),
    };
    Ok(DeltaCheck { rel_error_before: b, rel_error_after: a, delta: a - b, limit, pass, note })
}

/// Puts the protected-layers figures on the stage objective's scale: on the deployment stage the
/// all-quantised figure is the objective's TPOT of the quantised configuration (what `tunelab
/// eval` prints), and the protected one adds the device-time difference of the kept layers.
/// Elsewhere they stay the decode step's operator time, and a note says so.
fn anchor_on_objective(s: &Scenario, names: &[String], config: &Config, quantised: &ServingPoint, r: &mut ProtectedReport, notes: &mut Vec<String>) {
    let op_note = "step times are the decode step's operator device time (no host or scheduler costs)";
    if s.stage != crate::Stage::Deployment {
        notes.push(format!("protected layers: {op_note}"));
        return;
    }
    let priced = (|| -> Result<f64, String> {
        let mut setup = crate::stages::setup(s)?;
        let mut c = config.clone();
        if let Some(i) = names.iter().position(|n| n == "precision") {
            c.0[i] = tunelab_search::Value::Str(if quantised.precision == tunelab_sim::Precision::W8a8 { "w8a8" } else { "w8a16" }.to_string());
        }
        let t = setup.metrics.iter().position(|m| m.name == "tpot_ms").ok_or("the stage reports no tpot_ms")?;
        match setup.objective.evaluate(&c) {
            Outcome::Ok(v) => Ok(v[t]),
            Outcome::Infeasible(e) | Outcome::Failed(e) => Err(e),
        }
    })();
    match priced {
        Ok(tpot) => {
            let kept = r.step_ms_protected - r.step_ms_all_quantised;
            r.step_ms_all_quantised = tpot;
            r.step_ms_protected = tpot + kept;
            r.note = format!("TPOT of the quantised configuration from the deployment stage, plus the device time the kept layers add; {}", r.note);
        }
        Err(e) => notes.push(format!("protected layers: {op_note} (the stage could not price the quantised configuration: {e})")),
    }
}

/// The scenario's default serving point (convenience for the app's guard panel).
pub fn scenario_point(s: &Scenario) -> Result<ServingPoint, String> {
    let (model, _, _) = crate::stages::context::resolve(s)?;
    Ok(default_point(s, &model))
}

/// All three guards on one configuration (what the report view and `tunelab guards` show).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GuardsReport {
    /// The configuration checked, "name=value" pairs.
    pub config: String,
    /// The configuration on the target chip (None when no target was given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compatibility: Option<CompatReport>,
    /// Protected layers at a quantised precision (the configuration's own, or W8A16 when it is
    /// 16-bit, to show what protection would cost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protected: Option<ProtectedReport>,
    /// Expected output error of the configuration against the scenario's defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<DeltaCheck>,
    /// Diffusion: each knob the configuration sets that changes the output, with its guard.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_knobs: Vec<OutputKnob>,
    /// Why a guard could not run (a stage without an inference graph, an infeasible point ...).
    pub notes: Vec<String>,
}

/// Runs the guards on `config` (parameter `names`) of the scenario's stage: compatibility with
/// `target` (a bundled chip name, if any), layers matching `patterns` kept in 16-bit, and the
/// delta check of the configuration's serving point against the scenario's defaults.
pub fn check_all(s: &Scenario, names: &[String], config: &Config, target: Option<&str>, patterns: &[String]) -> Result<GuardsReport, String> {
    let mut notes = Vec::new();
    if s.stage == crate::Stage::Landscape {
        // The guards price a model on a chip; a landscape point's value is a measurement (of
        // some kernel on some GPU) or a function, so there is nothing for them to re-price.
        notes.push(format!("the guards need a model on a chip; {}", crate::analyses::explore::LANDSCAPE_HAS_NO_OPS));
        return Ok(GuardsReport { config: config.describe(names), compatibility: None, protected: None, delta: None, output_knobs: Vec::new(), notes });
    }
    let compatibility = match target.filter(|t| !t.trim().is_empty()) {
        Some(t) => Some(check_compatibility(s, config, t.trim())?),
        None => None,
    };
    if s.stage == crate::Stage::Diffusion {
        return diffusion_guards(s, names, config, compatibility, patterns);
    }
    let (model, _, _) = crate::stages::context::resolve(s)?;
    let base = default_point(s, &model);
    let point = crate::stages::serving::point_from_config(names, config, base);
    let (mut protected, mut delta) = (None, None);
    if model.llm.is_none() {
        notes.push("protected layers and the delta check need a language model's decode graph".into());
    } else {
        let quantised = if matches!(point.precision, tunelab_sim::Precision::W8a16 | tunelab_sim::Precision::W8a8) { point } else { ServingPoint { precision: tunelab_sim::Precision::W8a16, ..point } };
        match protect_layers(s, &quantised, patterns) {
            Ok(r) => protected = Some(r),
            Err(e) => notes.push(format!("protected layers: {e}")),
        }
        match delta_check(s, config) {
            Ok(d) => delta = Some(d),
            Err(e) => notes.push(format!("delta check: {e}")),
        }
        if let Some(r) = protected.as_mut() {
            anchor_on_objective(s, names, config, &quantised, r, &mut notes);
        }
    }
    Ok(GuardsReport { config: config.describe(names), compatibility, protected, delta, output_knobs: Vec::new(), notes })
}

/// The diffusion stage's guards, every figure from the stage's pricer: the output-changing
/// knobs the configuration sets, each named with its guard; the protected layers (the
/// configuration at W8A8 with the stage's protected layers, or `patterns` when they are not
/// the language-model default, kept in 16-bit, against every layer quantised); the delta check.
fn diffusion_guards(s: &Scenario, names: &[String], config: &Config, compatibility: Option<CompatReport>, patterns: &[String]) -> Result<GuardsReport, String> {
    use crate::stages::diffusion as d;
    let mut notes = Vec::new();
    let k = d::decode(names, config)?;
    let baseline_steps = d::options(s).steps.unwrap_or(d::pipeline(s)?.defaults.steps);
    let output_knobs = d::guard::output_knobs(&k, baseline_steps);
    let own = patterns.is_empty() || patterns.iter().map(String::as_str).eq(DEFAULT_PROTECTED.iter().copied());
    let protected = match d::guard::protection(s, names, config, if own { None } else { Some(patterns) }) {
        Ok(p) => {
            let what = if p.quantised_for_the_check { "the configuration is 16-bit: priced at W8A8 to show what protection costs" } else { "the configuration's own W8A8" };
            Some(ProtectedReport {
                patterns: p.patterns,
                protected_ops: p.protected_ops,
                step_ms_all_quantised: p.step_ms_all,
                step_ms_protected: p.step_ms_protected,
                rel_error_all_quantised: p.rel_error_all,
                rel_error_protected: p.rel_error_protected,
                note: format!("{what}; mean denoising step and the whole call from the diffusion stage; relative errors are the device model's data-type estimates, not measured outputs"),
                step: "denoising step".into(),
                latency_ms_all_quantised: Some(p.latency_ms_all),
                latency_ms_protected: Some(p.latency_ms_protected),
            })
        }
        Err(e) => {
            notes.push(format!("protected layers: {e}"));
            None
        }
    };
    let mut delta = None;
    match delta_check(s, config) {
        Ok(mut dc) => {
            let unseen: Vec<&str> = output_knobs.iter().filter(|o| !o.in_rel_error).map(|o| o.setting.as_str()).collect();
            if !unseen.is_empty() {
                dc.note = format!("{}; not in this estimate, compare real outputs before and after (validation mode): {}", dc.note, unseen.join("; "));
            }
            delta = Some(dc);
        }
        Err(e) => notes.push(format!("delta check: {e}")),
    }
    if output_knobs.is_empty() {
        notes.push("the configuration changes no output: every knob it sets keeps the exact pipeline".into());
    }
    Ok(GuardsReport { config: config.describe(names), compatibility, protected, delta, output_knobs, notes })
}

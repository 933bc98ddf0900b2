//! The tuning stages, each an Objective over the simulator, and what they share: the contract
//! (`StageSetup`), space overrides from the scenario, and the generic constraint and goal layer.
//!
//! Why a generic layer: every stage reports named metrics ("ttft_ms", "memory_gib", ...), so
//! limits, goal priorities and space overrides are applied once here instead of in each stage.
//!
//! Metric names used across stages (so constraints and goals work everywhere): `model_time_ms`,
//! `ttft_ms`, `tpot_ms`, `tokens_per_s`, `memory_gib`, `energy_j_per_token`, `rel_error`,
//! `utilisation`, `step_time_ms`, `mfu`, `power_w`.

pub mod blocks;
pub mod capacity;
pub mod context;
pub mod deployment;
pub mod diffusion;
pub mod focus;
pub mod graphcost;
pub mod queueing;
pub mod scheduler;
pub mod serving;
pub mod tileaxes;
pub mod landscape;
pub mod operator;
pub mod runtime;
pub mod scale;
pub mod serving_features;
pub mod stage_metrics;
pub mod training;

use crate::spec::scenario::{clip, Scenario, Stage};
use serde_json::Value as Json;
use tunelab_search::{Config, Direction, Domain, Metric, Objective, Outcome, Param, Space, Value};

/// What a stage gives the run: the space, the objective, its metrics and a baseline.
pub struct StageSetup {
    pub space: Space,
    /// Reports one value per entry of `metrics`, in that order.
    pub objective: Box<dyn Objective>,
    /// All metrics the objective reports, the stage's default primary first.
    pub metrics: Vec<Metric>,
    /// The "before" configuration (the framework defaults), evaluated for the report.
    pub baseline: Config,
    /// Parameter indices a focused local search refines after the main search (may be empty).
    pub focus: Vec<usize>,
    /// Extra evaluations for the focused search.
    pub focus_budget: usize,
    /// Warnings to show (e.g. an unknown model type loaded with guesses).
    pub notes: Vec<String>,
}

/// Builds the stage the scenario names, with the scenario's overrides, constraints and goals.
pub fn setup(s: &Scenario) -> Result<StageSetup, String> {
    let raw = stage_setup(s)?;
    finish(s, raw)
}

/// The stage with its parameter blocks (operator stage: one per operator, searched in sequence
/// by `crate::blocks`; other stages: none).
pub fn setup_with_blocks(s: &Scenario) -> Result<(StageSetup, Vec<crate::stages::blocks::Block>), String> {
    let (raw, blocks) = match s.stage {
        Stage::Operator => operator::setup_blocks(s)?,
        _ => (stage_setup(s)?, Vec::new()),
    };
    Ok((finish(s, raw)?, blocks))
}

/// The stage's own setup, before the generic goal and constraint layer.
pub fn stage_setup(s: &Scenario) -> Result<StageSetup, String> {
    match s.stage {
        Stage::Operator => operator::setup(s),
        Stage::Deployment => deployment::setup(s),
        Stage::Training => crate::stages::training::setup(s),
        Stage::Runtime => runtime::setup(s),
        Stage::Landscape => landscape::setup(s),
        Stage::Diffusion => diffusion::setup(s),
    }
}

/// The landscape stage for a landscape built elsewhere (`landscape::Landscape::build`, which
/// parses a cache's bytes once), with the scenario's goals and constraints.
pub fn setup_with_landscape(s: &Scenario, land: std::sync::Arc<landscape::Landscape>) -> Result<StageSetup, String> {
    finish(s, landscape::stage(s, land)?)
}

/// Applies the scenario's space overrides to a stage's parameters; unknown names are an error.
pub fn apply_overrides(s: &Scenario, mut params: Vec<Param>) -> Result<Vec<Param>, String> {
    for (name, o) in &s.space {
        let Some(p) = params.iter_mut().find(|p| &p.name == name) else {
            let known: Vec<&str> = params.iter().map(|p| p.name.as_str()).take(12).collect();
            return Err(format!("space.{}: no such parameter in the {} stage (some: {})", clip(name), s.stage.name(), known.join(", ")));
        };
        let field = format!("space.{}", clip(name));
        let to_value = |j: &Json| -> Result<Value, String> {
            match j {
                Json::Number(n) if n.is_i64() => Ok(Value::Int(n.as_i64().unwrap_or(0))),
                Json::Number(n) => n.as_f64().map(Value::Float).ok_or_else(|| format!("{field}: bad number")),
                Json::String(x) => Ok(Value::Str(x.clone())),
                Json::Bool(b) => Ok(Value::Str(b.to_string())),
                other => Err(format!("{field}: a choice must be a number or a string, got {other}")),
            }
        };
        if let Some(f) = &o.fixed {
            p.domain = Domain::Categorical { choices: vec![to_value(f)?] };
        } else if let Some(cs) = &o.choices {
            let choices = cs.iter().map(&to_value).collect::<Result<Vec<_>, _>>()?;
            p.domain = Domain::Categorical { choices };
        } else if let (Some(lo), Some(hi)) = (o.low, o.high) {
            let integral = matches!(p.domain, Domain::Int { .. } | Domain::Pow2 { .. });
            p.domain = match (&p.domain, integral) {
                (Domain::Pow2 { .. }, _) if o.step.is_none() => Domain::Pow2 { low: lo as i64, high: hi as i64 },
                (_, true) => Domain::Int { low: lo as i64, high: hi as i64, step: o.step.map(|x| x as i64).unwrap_or(1) },
                _ => Domain::Float { low: lo, high: hi, log: false, step: o.step },
            };
        } else {
            return Err(format!("{field}: give 'choices', 'fixed', or both 'low' and 'high'"));
        }
        p.validate().map_err(|e| format!("{field}: {e}"))?;
    }
    Ok(params)
}

/// The order of metrics the study sees: the scenario's goals by priority, then the rest.
pub fn goal_order(s: &Scenario, metrics: &[Metric]) -> Result<(Vec<usize>, Vec<Metric>), String> {
    let mut goals: Vec<(usize, f64)> = Vec::new();
    for (k, o) in s.objectives.iter().enumerate() {
        let i = metrics.iter().position(|m| m.name == o.metric).ok_or_else(|| {
            let names: Vec<&str> = metrics.iter().map(|m| m.name.as_str()).collect();
            format!("objectives[{k}].metric: the {} stage has no metric '{}' (it has {})", s.stage.name(), clip(&o.metric), names.join(", "))
        })?;
        if goals.iter().any(|g| g.0 == i) {
            return Err(format!("objectives[{k}].metric: '{}' is listed twice", clip(&o.metric)));
        }
        goals.push((i, o.priority));
    }
    // Stable sort: equal priorities keep the order written.
    goals.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut order: Vec<usize> = goals.iter().map(|g| g.0).collect();
    let rest: Vec<usize> = (0..metrics.len()).filter(|i| !order.contains(i)).collect();
    order.extend(rest);
    let mut out: Vec<Metric> = order.iter().map(|&i| metrics[i].clone()).collect();
    for o in &s.objectives {
        if let (Some(d), Some(m)) = (&o.direction, out.iter_mut().find(|m| m.name == o.metric)) {
            m.direction = if d == "maximize" { Direction::Maximize } else { Direction::Minimize };
        }
    }
    Ok((order, out))
}

fn finish(s: &Scenario, mut raw: StageSetup) -> Result<StageSetup, String> {
    let (order, metrics) = goal_order(s, &raw.metrics)?;
    let limits = limits(s, &raw.metrics)?;
    let inner = std::mem::replace(&mut raw.objective, Box::new(NoObjective));
    raw.objective = Box::new(Goals { inner, order, limits });
    raw.metrics = metrics;
    Ok(raw)
}

/// (metric index in the stage's order, max, min, label) for every limit that applies.
type Bound = (usize, Option<f64>, Option<f64>, String);

fn limits(s: &Scenario, metrics: &[Metric]) -> Result<Vec<Bound>, String> {
    let c = &s.constraints;
    let mut out = Vec::new();
    let named = [
        ("memory_gib", c.max_memory_gib, None, "memory per chip"),
        ("ttft_ms", c.max_ttft_ms, None, "TTFT"),
        ("tpot_ms", c.max_tpot_ms, None, "TPOT"),
        ("rel_error", c.max_rel_error, None, "relative error"),
        ("tokens_per_s", None, c.min_tokens_per_s, "throughput"),
        ("power_w", c.max_power_w, None, "power"),
    ];
    for (m, max, min, label) in named {
        if max.is_none() && min.is_none() {
            continue;
        }
        match metrics.iter().position(|x| x.name == m) {
            Some(i) => out.push((i, max, min, label.to_string())),
            // A limit the stage cannot measure is a mistake worth reporting, not ignoring.
            None => return Err(format!("constraints: the {} stage does not report '{m}', so its limit cannot apply", s.stage.name())),
        }
    }
    for (m, l) in &c.limits {
        let i = metrics.iter().position(|x| &x.name == m).ok_or_else(|| format!("constraints.limits: the {} stage has no metric '{}'", s.stage.name(), clip(m)))?;
        out.push((i, l.max, l.min, m.clone()));
    }
    Ok(out)
}

/// Wraps a stage objective: rejects points over a limit (saying by how much) and reorders the
/// metrics so the top-priority goal is primary.
struct Goals {
    inner: Box<dyn Objective>,
    order: Vec<usize>,
    limits: Vec<Bound>,
}

impl Objective for Goals {
    fn metrics(&self) -> Vec<Metric> {
        let m = self.inner.metrics();
        self.order.iter().filter_map(|&i| m.get(i).cloned()).collect()
    }
    fn evaluate(&mut self, config: &Config) -> Outcome {
        match self.inner.evaluate(config) {
            Outcome::Ok(v) => {
                let unit = |i: usize| self.inner_unit(i);
                for (i, max, min, label) in &self.limits {
                    let Some(x) = v.get(*i).copied() else { continue };
                    if let Some(mx) = max {
                        if x > *mx {
                            return Outcome::Infeasible(format!("{label} {} {} is over the limit of {} {} (by {})", fmt3(x), unit(*i), fmt3(*mx), unit(*i), fmt3(x - mx)));
                        }
                    }
                    if let Some(mn) = min {
                        if x < *mn {
                            return Outcome::Infeasible(format!("{label} {} {} is under the minimum of {} {}", fmt3(x), unit(*i), fmt3(*mn), unit(*i)));
                        }
                    }
                }
                Outcome::Ok(self.order.iter().map(|&i| v.get(i).copied().unwrap_or(f64::NAN)).collect())
            }
            other => other,
        }
    }
}

impl Goals {
    fn inner_unit(&self, i: usize) -> String {
        self.inner.metrics().get(i).map(|m| m.unit.clone()).unwrap_or_default()
    }
}

/// What `std::mem::replace` leaves behind for the instant the real objective moves into the
/// goals wrapper; it is never evaluated.
pub(crate) struct NoObjective;
impl Objective for NoObjective {
    fn metrics(&self) -> Vec<Metric> {
        Vec::new()
    }
    fn evaluate(&mut self, _: &Config) -> Outcome {
        Outcome::Failed("no objective".into())
    }
}

/// A number with three significant decimals for messages ("12.346").
pub fn fmt3(x: f64) -> String {
    if x.abs() >= 100.0 { format!("{x:.1}") } else { format!("{x:.3}") }
}

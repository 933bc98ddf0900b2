//! What a study optimises: anything that turns a configuration into metric values.

use crate::trial::Metric;
use crate::value::Config;

/// The result of one evaluation.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// One value per metric, in the objective's metric order.
    Ok(Vec<f64>),
    /// The point is not valid (does not fit memory, breaks alignment...); says why.
    Infeasible(String),
    /// The evaluation failed (a failed measurement in a replayed cache).
    Failed(String),
}

/// An evaluation function. The Ascend device model and a Kernel Tuner replay are both one.
pub trait Objective {
    /// The metrics `evaluate` reports, primary first.
    fn metrics(&self) -> Vec<Metric>;
    /// Evaluates one configuration of the study's space.
    fn evaluate(&mut self, config: &Config) -> Outcome;
}

/// An objective from a closure, for tests and small tools.
pub struct FnObjective<F: FnMut(&Config) -> Outcome> {
    metrics: Vec<Metric>,
    f: F,
}

impl<F: FnMut(&Config) -> Outcome> FnObjective<F> {
    /// Wraps `f`, which reports `metrics`.
    pub fn new(metrics: Vec<Metric>, f: F) -> Self {
        FnObjective { metrics, f }
    }
}

impl<F: FnMut(&Config) -> Outcome> Objective for FnObjective<F> {
    fn metrics(&self) -> Vec<Metric> {
        self.metrics.clone()
    }
    fn evaluate(&mut self, config: &Config) -> Outcome {
        (self.f)(config)
    }
}

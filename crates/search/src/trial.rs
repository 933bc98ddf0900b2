//! Trials (one evaluated configuration) and the metrics they report.

use crate::value::Config;
use serde::{Deserialize, Serialize};

/// Whether a metric should go down or up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Minimize,
    Maximize,
}

/// One objective metric (e.g. latency in ms, minimised). The first metric of a study is the
/// primary one: "best" means best in it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub name: String,
    #[serde(default)]
    pub unit: String,
    pub direction: Direction,
}

impl Metric {
    /// A minimised metric.
    pub fn minimize(name: &str, unit: &str) -> Metric {
        Metric { name: name.into(), unit: unit.into(), direction: Direction::Minimize }
    }
    /// A maximised metric.
    pub fn maximize(name: &str, unit: &str) -> Metric {
        Metric { name: name.into(), unit: unit.into(), direction: Direction::Maximize }
    }
    /// The value turned into "lower is better" form.
    pub fn signed(&self, v: f64) -> f64 {
        match self.direction {
            Direction::Minimize => v,
            Direction::Maximize => -v,
        }
    }
}

/// How an evaluation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrialState {
    /// Evaluated; `values` holds one number per metric.
    Ok,
    /// Not a valid point (a constraint or a device limit); `reason` says which.
    Infeasible,
    /// The evaluation itself failed (e.g. a Kernel Tuner "RuntimeFailedConfig").
    Failed,
}

/// One evaluated configuration. Trials are immutable once recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// Position in the study's history.
    pub id: usize,
    pub config: Config,
    pub state: TrialState,
    /// One value per metric when `state` is Ok; empty otherwise.
    #[serde(default)]
    pub values: Vec<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// True for a trial carried over from an earlier study (warm start); it cost no budget.
    #[serde(default, skip_serializing_if = "is_false")]
    pub warm: bool,
    /// Distinct evaluations spent when this trial finished (its place on convergence charts).
    #[serde(default)]
    pub evaluation: usize,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Trial {
    /// The primary metric's value, for an Ok trial.
    pub fn value(&self) -> Option<f64> {
        (self.state == TrialState::Ok).then(|| self.values.first().copied()).flatten()
    }

    /// True if the trial evaluated successfully.
    pub fn is_ok(&self) -> bool {
        self.state == TrialState::Ok
    }
}

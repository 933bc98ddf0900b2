//! The strategy interface: ask for configurations, be told how they did.
//!
//! Strategies read the history only through `History` (immutable trials), receive the RNG
//! explicitly, and report what they are doing as a key/value `Snapshot` so that charts and
//! teaching views never reach into a strategy's internals.

use crate::rng::Rng;
use crate::space::Space;
use crate::trial::{Metric, Trial};
use crate::value::Config;
use std::collections::{BTreeMap, HashMap};

/// Key/value state a strategy exposes for progress lines and teaching views
/// (e.g. `generation`, `temperature`, `gp_mean`, `choice_probabilities`).
pub type Snapshot = BTreeMap<String, serde_json::Value>;

/// A read-only view of a study for strategies.
pub struct History<'a> {
    pub space: &'a Space,
    pub metrics: &'a [Metric],
    /// Every trial so far, warm-start trials first.
    pub trials: &'a [Trial],
    pub(crate) seen: &'a HashMap<Config, usize>,
    /// Distinct evaluations still allowed.
    pub remaining: usize,
    /// The budget the study was given (distinct evaluations).
    pub budget: usize,
}

impl<'a> History<'a> {
    /// Builds a history view; `seen` maps configurations to their trial index.
    pub fn new(space: &'a Space, metrics: &'a [Metric], trials: &'a [Trial], seen: &'a HashMap<Config, usize>, remaining: usize, budget: usize) -> Self {
        History { space, metrics, trials, seen, remaining, budget }
    }

    /// True if this configuration was already evaluated (proposing it again costs nothing).
    pub fn is_seen(&self, c: &Config) -> bool {
        self.seen.contains_key(c)
    }

    /// The trial recorded for a configuration.
    pub fn trial_of(&self, c: &Config) -> Option<&'a Trial> {
        self.seen.get(c).map(|&i| &self.trials[i])
    }

    /// The primary metric in "lower is better" form, or None for a trial that is not Ok.
    pub fn score(&self, t: &Trial) -> Option<f64> {
        let m = self.metrics.first()?;
        t.value().map(|v| m.signed(v))
    }

    /// All metrics in "lower is better" form, for an Ok trial.
    pub fn signed_values(&self, t: &Trial) -> Option<Vec<f64>> {
        t.is_ok().then(|| self.metrics.iter().zip(&t.values).map(|(m, v)| m.signed(*v)).collect())
    }

    /// The best Ok trial by the primary metric.
    pub fn best(&self) -> Option<&'a Trial> {
        let mut best: Option<(&Trial, f64)> = None;
        for t in self.trials {
            if let Some(s) = self.score(t) {
                if best.is_none_or(|(_, b)| s < b) {
                    best = Some((t, s));
                }
            }
        }
        best.map(|(t, _)| t)
    }
}

/// A search strategy. `ask` proposes configurations (an empty answer means "exhausted");
/// `tell` reports the trials for the last batch, in the order asked. A configuration proposed
/// again comes back as its earlier trial, free of budget.
pub trait Strategy {
    /// The strategy's registry name (e.g. "genetic").
    fn name(&self) -> &'static str;
    /// Proposes the next batch.
    fn ask(&mut self, history: &History, rng: &mut Rng) -> Vec<Config>;
    /// Learns from the trials of the last batch.
    fn tell(&mut self, history: &History, trials: &[Trial]) {
        let _ = (history, trials);
    }
    /// True when the strategy's own stopping rule fires (e.g. GA: three generations under 2%).
    fn converged(&self) -> bool {
        false
    }
    /// What the strategy is doing, for teaching views.
    fn snapshot(&self) -> Snapshot {
        Snapshot::new()
    }
    /// A surrogate's prediction for a configuration, lower = predicted better, in the model's
    /// own (transformed) units; None for strategies without a model or before it is fitted.
    /// Only the order of predictions is meaningful (`auto` judges models by rank correlation).
    fn predict(&self, history: &History, config: &Config) -> Option<f64> {
        let _ = (history, config);
        None
    }
}

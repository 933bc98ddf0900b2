//! `auto`: picks a strategy from the space, the budget and the number of metrics, and ends
//! with a focused local search around the incumbent.
//!
//! The rules, and why:
//! - a space no larger than the budget is simply enumerated (random order, no repeats): every
//!   strategy would end there anyway;
//! - several metrics: NSGA-II, the one strategy that keeps a spread Pareto front;
//! - budgets up to `model_budget` (default 400) evaluations: Bayesian optimisation, because a
//!   surrogate learns the most per evaluation when evaluations are few, and a Gaussian process
//!   fit stays cheap at that size (it costs cubic time in the number of trials);
//! - larger budgets, or when "bayes" is not registered: the genetic algorithm, whose per-trial
//!   cost does not grow with the history.
//!
//! The last `polish` fraction of the budget (default 15%) goes to local search around the best
//! point: a model or a population explores to the very end, while the last evaluations pay
//! most when spent on the incumbent's untried neighbours. Earlier trials (warm start) are seen
//! by whichever strategy runs, since each reads the history.

use super::by_name;
use crate::rng::Rng;
use crate::strategy::{History, Snapshot, Strategy};
use crate::trial::Trial;
use crate::value::Config;

/// The automatic strategy: a main phase chosen per problem, then a local polish.
pub struct Auto {
    /// Largest budget handed to the model-based strategy.
    pub model_budget: usize,
    /// Fraction of the budget kept for the final local search (0 disables it).
    pub polish: f64,
    options: serde_json::Value,
    main: Option<Box<dyn Strategy>>,
    main_name: &'static str,
    polishing: bool,
}

impl Auto {
    /// Builds from JSON options: model_budget, polish, and `strategy` to force the main phase
    /// (any registry name); the whole object is passed on to the chosen strategies.
    pub fn from_options(o: &serde_json::Value) -> Auto {
        Auto {
            model_budget: o.get("model_budget").and_then(|v| v.as_u64()).map(|x| x as usize).unwrap_or(400),
            polish: o.get("polish").and_then(|v| v.as_f64()).filter(|x| x.is_finite()).unwrap_or(0.15).clamp(0.0, 0.9),
            options: o.clone(),
            main: None,
            main_name: "",
            polishing: false,
        }
    }

    /// The registry name of the main phase for this problem.
    fn choose(&self, h: &History) -> &'static str {
        if let Some(forced) = self.options.get("strategy").and_then(|v| v.as_str()) {
            if let Some((name, _)) = super::STRATEGIES.iter().find(|(n, _)| *n == forced && *n != "auto") {
                return name;
            }
        }
        let small = h.space.cardinality().is_some_and(|n| n <= h.budget as u128 + h.trials.len() as u128);
        if small {
            "random"
        } else if h.metrics.len() > 1 {
            "nsga2"
        } else if h.budget <= self.model_budget && by_name("bayes", &self.options).is_ok() {
            "bayes"
        } else {
            "genetic"
        }
    }

    fn build(&self, name: &str) -> Box<dyn Strategy> {
        // A registry name from our own list always builds; fall back to random just in case
        // the options object is something the chosen strategy rejects.
        by_name(name, &self.options).or_else(|_| by_name(name, &serde_json::json!({}))).unwrap_or_else(|_| Box::new(super::random::RandomSearch))
    }
}

impl Strategy for Auto {
    fn name(&self) -> &'static str {
        "auto"
    }

    fn ask(&mut self, h: &History, rng: &mut Rng) -> Vec<Config> {
        if self.main.is_none() {
            self.main_name = self.choose(h);
            self.main = Some(self.build(self.main_name));
        }
        let single = h.metrics.len() == 1 && self.main_name != "random";
        let polish_from = libm::ceil(self.polish * h.budget as f64) as usize;
        if single && !self.polishing && polish_from > 0 && h.remaining <= polish_from {
            // Switch once; the local search warm-starts from the best trial in the history.
            self.polishing = true;
            self.main = Some(self.build("local"));
            self.main_name = "local";
        }
        match self.main.as_mut() {
            Some(s) => s.ask(h, rng),
            None => Vec::new(),
        }
    }

    fn tell(&mut self, h: &History, trials: &[Trial]) {
        if let Some(s) = self.main.as_mut() {
            s.tell(h, trials);
        }
    }

    fn converged(&self) -> bool {
        self.main.as_ref().is_some_and(|s| s.converged())
    }

    fn snapshot(&self) -> Snapshot {
        let mut s = self.main.as_ref().map(|m| m.snapshot()).unwrap_or_default();
        s.insert("phase".into(), self.main_name.into());
        s.insert("polishing".into(), self.polishing.into());
        s
    }
}

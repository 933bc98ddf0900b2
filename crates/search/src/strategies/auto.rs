//! `auto`: picks a portfolio of strategies from the space, the budget and the number of
//! metrics, lets them take turns, and ends with a focused local search around the incumbent.
//!
//! The rules, and why:
//! - a space no larger than the budget is simply enumerated (random order, no repeats): every
//!   strategy would end there anyway;
//! - several metrics: NSGA-II, the one strategy that keeps a spread Pareto front;
//! - budgets up to `model_budget` (default 400): Bayesian optimisation takes `model_weight`
//!   (default 3) evaluations for each one of simulated annealing. A surrogate learns the most
//!   per evaluation when evaluations are few, and a Gaussian-process fit stays cheap at that
//!   size; the annealing share is insurance for landscapes the surrogate models badly (rugged,
//!   many interacting parameters), where a walk keeps improving while the model stalls.
//!   Annealing joins after the first third of the budget, so its walk starts from the best
//!   point the model found rather than from a random one. Both read the whole history;
//! - larger budgets, or when "bayes" is not registered: genetic algorithm and annealing, whose
//!   per-trial cost does not grow with the history.
//!
//! Turns are counted in evaluations, so a member proposing whole generations does not crowd out
//! one proposing single points. The last `polish` fraction of the budget (default 15%) goes to
//! local search around the best point: the last evaluations pay most when spent on the
//! incumbent's untried neighbours. Earlier trials (warm start) are seen by every member.

use super::by_name;
use crate::rng::Rng;
use crate::strategy::{History, Snapshot, Strategy};
use crate::trial::Trial;
use crate::value::Config;

/// The automatic strategy: a portfolio chosen per problem, then a local polish.
pub struct Auto {
    /// Largest budget handed to the model-based strategy.
    pub model_budget: usize,
    /// Fraction of the budget kept for the final local search (0 disables it).
    pub polish: f64,
    /// Evaluations the model-based member gets for each one of the model-free member.
    pub model_weight: usize,
    options: serde_json::Value,
    /// The strategies taking turns, with the evaluations each has been credited and its
    /// weight (its share of the evaluations).
    /// Members after the first are built only when they join (so they warm-start from the
    /// history), hence the Option.
    members: Vec<(&'static str, Option<Box<dyn Strategy>>, usize, usize)>,
    /// Which member proposed the batch in flight.
    asked: usize,
    polishing: bool,
    started: bool,
}

impl Auto {
    /// Builds from JSON options: model_budget, polish, `portfolio` (a list of registry names
    /// taking turns) or `strategy` (one name) to override the choice; the whole object is
    /// passed on to the chosen strategies.
    pub fn from_options(o: &serde_json::Value) -> Auto {
        Auto {
            model_budget: o.get("model_budget").and_then(|v| v.as_u64()).map(|x| x as usize).unwrap_or(400),
            polish: o.get("polish").and_then(|v| v.as_f64()).filter(|x| x.is_finite()).unwrap_or(0.15).clamp(0.0, 0.9),
            model_weight: o.get("model_weight").and_then(|v| v.as_u64()).map(|x| x as usize).unwrap_or(3).max(1),
            options: o.clone(),
            members: Vec::new(),
            asked: 0,
            polishing: false,
            started: false,
        }
    }

    /// The registry names of the portfolio for this problem.
    fn choose(&self, h: &History) -> Vec<(&'static str, usize)> {
        let known = |n: &str| super::STRATEGIES.iter().map(|s| s.0).find(|k| *k == n && *k != "auto");
        if let Some(list) = self.options.get("portfolio").and_then(|v| v.as_array()) {
            let names: Vec<(&'static str, usize)> = list.iter().filter_map(|v| v.as_str()).filter_map(known).map(|n| (n, 1)).collect();
            if !names.is_empty() {
                return names;
            }
        }
        if let Some(forced) = self.options.get("strategy").and_then(|v| v.as_str()).and_then(known) {
            return vec![(forced, 1)];
        }
        let small = h.space.cardinality().is_some_and(|n| n <= h.budget as u128 + h.trials.len() as u128);
        if small {
            vec![("random", 1)]
        } else if h.metrics.len() > 1 {
            vec![("nsga2", 1)]
        } else if h.budget <= self.model_budget && by_name("bayes", &self.options).is_ok() {
            vec![("bayes", self.model_weight), ("annealing", 1)]
        } else {
            vec![("genetic", 1), ("annealing", 1)]
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
        if !self.started {
            self.started = true;
            self.members = self.choose(h).into_iter().map(|(n, w)| (n, None, 0, w)).collect();
        }
        // The first member runs alone for the first third of the budget; the others join
        // then, starting from what it found (their warm start) with credit matching its pace.
        let spent = h.budget.saturating_sub(h.remaining);
        for i in 0..self.members.len() {
            if self.members[i].1.is_none() && (i == 0 || spent * 3 >= h.budget) {
                let pace = self.members[0].2 / self.members[0].3.max(1);
                let name = self.members[i].0;
                self.members[i].1 = Some(self.build(name));
                self.members[i].2 = pace * self.members[i].3;
            }
        }
        let single = h.metrics.len() == 1 && !self.members.iter().any(|m| m.0 == "random");
        let polish_from = libm::ceil(self.polish * h.budget as f64) as usize;
        if single && !self.polishing && polish_from > 0 && h.remaining <= polish_from {
            // Switch once; the local search warm-starts from the best trial in the history.
            self.polishing = true;
            self.members = vec![("local", Some(self.build("local")), 0, 1)];
        }
        // Turns go by evaluations, not by asks, so a member proposing whole generations does
        // not crowd out one proposing single points. A member with nothing to offer yields.
        let mut order: Vec<usize> = (0..self.members.len()).collect();
        order.sort_by_key(|&i| (self.members[i].2 * 1000 / self.members[i].3.max(1), i));
        for i in order {
            let Some(m) = self.members[i].1.as_mut() else { continue };
            let asked = m.ask(h, rng);
            if !asked.is_empty() {
                self.asked = i;
                return asked;
            }
        }
        Vec::new()
    }

    fn tell(&mut self, h: &History, trials: &[Trial]) {
        if let Some(m) = self.members.get_mut(self.asked) {
            m.2 += trials.len().max(1);
            if let Some(s) = m.1.as_mut() {
                s.tell(h, trials);
            }
        }
    }

    fn converged(&self) -> bool {
        // The lead member's rule decides, once every member has joined (a member not yet
        // started has not had its say).
        self.members.iter().all(|m| m.1.is_some()) && self.members.first().and_then(|m| m.1.as_ref()).is_some_and(|s| s.converged())
    }

    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::new();
        for (name, m, _, _) in &self.members {
            for (k, v) in m.as_ref().map(|m| m.snapshot()).unwrap_or_default() {
                s.insert(format!("{name}.{k}"), v);
            }
        }
        let names: Vec<&str> = self.members.iter().map(|m| m.0).collect();
        s.insert("phase".into(), names.join("+").into());
        s.insert("polishing".into(), self.polishing.into());
        s
    }
}

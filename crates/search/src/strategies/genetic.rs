//! Genetic algorithm: tournament selection, uniform crossover, rank-step mutation and elitist
//! (mu + lambda) survival, one generation per batch.
//!
//! Why these choices: tuning budgets are small (tens to hundreds of evaluations), so survival
//! keeps the best of parents and children together (the elites are never lost) and the
//! population is sized from the budget. Mutation steps ordered parameters by ranks (see
//! `variation`), and its rate grows while generations stall, which restores the diversity that
//! truncation survival removes. By default it reports `converged` when three generations
//! together improved the best by less than 2%, the rule the operator tuner prints.

use crate::rng::Rng;
use crate::strategy::{History, Snapshot, Strategy};
use crate::trial::Trial;
use crate::value::Config;
use crate::variation::{crossover, fresh, fresh_random, mutate, relative_gain, scored};

/// The genetic algorithm's state and settings.
pub struct Genetic {
    /// Individuals per generation; None sizes it from the budget.
    pub population: Option<usize>,
    /// Contestants per tournament.
    pub tournament: usize,
    /// Chance a child comes from two parents rather than one.
    pub crossover_rate: f64,
    /// Per-parameter mutation chance; None uses 1.5 / parameters.
    pub mutation_rate: Option<f64>,
    /// Generations over which the convergence rule looks.
    pub patience_generations: usize,
    /// Relative improvement below which those generations count as stalled.
    pub min_gain: f64,
    pool: Vec<(Config, f64)>,
    generation: usize,
    bests: Vec<f64>,
    stall: usize,
    started: bool,
    /// +1 for a minimised primary metric, -1 for a maximised one: scores are kept in
    /// "lower is better" form, and snapshots show the metric's own values.
    sign: f64,
}

impl Genetic {
    /// Builds from JSON options: population, tournament, crossover_rate, mutation_rate,
    /// patience_generations, min_gain. (Elitism needs no setting: parents and children compete
    /// for survival together, so the best are never lost.)
    pub fn from_options(o: &serde_json::Value) -> Genetic {
        let f = |k: &str, d: f64| o.get(k).and_then(|v| v.as_f64()).filter(|x| x.is_finite()).unwrap_or(d);
        let u = |k: &str| o.get(k).and_then(|v| v.as_u64()).map(|x| x as usize);
        Genetic {
            population: u("population").map(|p| p.max(2)),
            tournament: u("tournament").unwrap_or(2).max(1),
            crossover_rate: f("crossover_rate", 0.8).clamp(0.0, 1.0),
            mutation_rate: o.get("mutation_rate").and_then(|v| v.as_f64()).filter(|x| x.is_finite()).map(|x| x.clamp(0.0, 1.0)),
            patience_generations: u("patience_generations").unwrap_or(3).max(1),
            min_gain: f("min_gain", 0.02).max(0.0),
            pool: Vec::new(),
            generation: 0,
            bests: Vec::new(),
            stall: 0,
            started: false,
            sign: 1.0,
        }
    }

    fn size(&self, h: &History) -> usize {
        // About sqrt(budget) * 1.5: enough generations to converge within small budgets.
        self.population.unwrap_or_else(|| ((h.budget as f64).sqrt() * 1.5).round().clamp(6.0, 40.0) as usize)
    }

    fn tournament_pick(&self, rng: &mut Rng) -> usize {
        let mut best = rng.below(self.pool.len());
        for _ in 1..self.tournament {
            let j = rng.below(self.pool.len());
            if self.pool[j].1 < self.pool[best].1 {
                best = j;
            }
        }
        best
    }

    fn breed(&self, h: &History, n: usize, rng: &mut Rng) -> Vec<Config> {
        let d = h.space.params().len().max(1) as f64;
        let base = self.mutation_rate.unwrap_or((1.5 / d).min(0.5));
        // Stalled generations raise the mutation rate and the chance of long jumps.
        let rate = (base * (1.0 + 0.5 * self.stall as f64)).min(0.6);
        let jump = (0.05 * (1 + self.stall) as f64).min(0.3);
        let mut out: Vec<Config> = Vec::with_capacity(n);
        for _ in 0..n {
            let child = fresh(h, &out, 30, rng, |r| {
                let a = &self.pool[self.tournament_pick(r)].0;
                if self.pool.len() > 1 && r.chance(self.crossover_rate) {
                    let b = &self.pool[self.tournament_pick(r)].0;
                    if let Some(c) = crossover(h.space, a, b, r) {
                        return if r.chance(0.5) { mutate(h.space, &c, rate, jump, r).or(Some(c)) } else { Some(c) };
                    }
                }
                // Half the mutants change one parameter only: small budgets reward refining
                // good parents as much as recombining them.
                let rate = if r.chance(0.5) { 0.0 } else { rate };
                mutate(h.space, a, rate, jump, r)
            });
            match child.or_else(|| fresh_random(h, &out, rng)) {
                Some(c) => out.push(c),
                None => break,
            }
        }
        out
    }

    fn survive(&mut self, size: usize) {
        self.pool.sort_by(|a, b| a.1.total_cmp(&b.1));
        let mut kept: Vec<(Config, f64)> = Vec::with_capacity(size);
        for (c, s) in self.pool.drain(..) {
            if kept.len() < size && !kept.iter().any(|(k, _)| *k == c) {
                kept.push((c, s));
            }
        }
        // Failed individuals only stay while nothing better exists.
        if kept.iter().any(|k| k.1.is_finite()) {
            kept.retain(|k| k.1.is_finite());
        }
        self.pool = kept;
    }
}

impl Strategy for Genetic {
    fn name(&self) -> &'static str {
        "genetic"
    }

    fn ask(&mut self, h: &History, rng: &mut Rng) -> Vec<Config> {
        let size = self.size(h);
        if !self.started {
            // Warm start: the best earlier trials form the first population.
            self.started = true;
            self.pool = scored(h);
            self.survive(size);
        }
        if self.pool.len() < size.clamp(2, 4) || (self.generation == 0 && self.pool.len() < size) {
            // With warm-start survivors, half the newcomers are their mutants (transfer), the
            // rest random for diversity; from scratch, all random.
            let seeds: Vec<Config> = self.pool.iter().filter(|p| p.1.is_finite()).map(|p| p.0.clone()).collect();
            let mut out = Vec::new();
            while out.len() + self.pool.len() < size {
                let near = if !seeds.is_empty() && out.len() % 2 == 0 {
                    let s = &seeds[out.len() / 2 % seeds.len()];
                    fresh(h, &out, 20, rng, |r| mutate(h.space, s, 0.0, 0.0, r))
                } else {
                    None
                };
                match near.or_else(|| fresh_random(h, &out, rng)) {
                    Some(c) => out.push(c),
                    None => break,
                }
            }
            if !out.is_empty() {
                return out;
            }
        }
        if self.pool.is_empty() {
            return fresh_random(h, &[], rng).into_iter().collect();
        }
        self.breed(h, size, rng)
    }

    fn tell(&mut self, h: &History, trials: &[Trial]) {
        self.sign = h.metrics.first().map(|m| m.signed(1.0)).unwrap_or(1.0);
        for t in trials {
            let s = h.score(t).unwrap_or(f64::INFINITY);
            self.pool.push((t.config.clone(), s));
        }
        let size = self.size(h);
        self.survive(size);
        let best = self.pool.first().map(|p| p.1).unwrap_or(f64::INFINITY);
        let prev = self.bests.last().copied().unwrap_or(f64::INFINITY);
        if best < prev {
            self.stall = 0;
        } else {
            self.stall += 1;
        }
        self.bests.push(best);
        self.generation += 1;
    }

    fn converged(&self) -> bool {
        let k = self.patience_generations;
        if self.bests.len() <= k {
            return false;
        }
        let now = self.bests[self.bests.len() - 1];
        let then = self.bests[self.bests.len() - 1 - k];
        then.is_finite() && relative_gain(then, now) < self.min_gain
    }

    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::new();
        s.insert("generation".into(), self.generation.into());
        s.insert("population".into(), self.pool.len().into());
        let ok: Vec<f64> = self.pool.iter().map(|p| p.1).filter(|x| x.is_finite()).collect();
        if let Some(b) = ok.first() {
            s.insert("population_best".into(), (self.sign * *b).into());
            s.insert("population_mean".into(), (self.sign * ok.iter().sum::<f64>() / ok.len() as f64).into());
        }
        s.insert("stalled_generations".into(), self.stall.into());
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FnObjective, Metric, Outcome, Param, Space, StopReason, Study, StudyOptions};

    #[test]
    fn stops_when_three_generations_gain_under_two_percent() {
        let space = Space::new(vec![Param::int("a", 0, 99, 1), Param::int("b", 0, 99, 1)], &[]).unwrap();
        let metrics = vec![Metric::minimize("t", "ms")];
        let mut opts = StudyOptions::budget(1_000);
        opts.strategy_stop = true;
        let mut study = Study::new(space, metrics.clone(), opts).unwrap();
        // A flat objective: no generation can improve, so the rule fires after the 4th.
        let mut obj = FnObjective::new(metrics, |_: &Config| Outcome::Ok(vec![5.0]));
        let mut ga = Genetic::from_options(&serde_json::json!({"population": 10}));
        let stop = study.run(&mut ga, &mut obj, &mut Rng::seed_from_u64(1));
        assert_eq!(stop, StopReason::Converged);
        assert_eq!(study.evaluations(), 40, "four generations of ten");
        assert_eq!(ga.snapshot()["generation"], 4);
    }
}

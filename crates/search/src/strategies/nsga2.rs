//! NSGA-II for several metrics at once (e.g. latency and memory): elitist survival by
//! non-dominated rank then crowding distance, binary tournaments on the same order.
//!
//! Why: with several goals there is no single best, so survival keeps whole Pareto fronts and,
//! inside the last front that fits, the points in the emptiest regions (crowding distance), so
//! the front stays spread. With one metric it reduces to an elitist genetic algorithm.

use crate::pareto::{crowding_distance, non_dominated_sort};
use crate::rng::Rng;
use crate::strategy::{History, Snapshot, Strategy};
use crate::trial::Trial;
use crate::value::Config;
use crate::variation::{crossover, fresh, fresh_random, mutate};

/// NSGA-II state and settings.
pub struct Nsga2 {
    /// Individuals per generation; None sizes it from the budget.
    pub population: Option<usize>,
    /// Chance a child comes from two parents.
    pub crossover_rate: f64,
    /// Per-parameter mutation chance; None uses 1.5 / parameters.
    pub mutation_rate: Option<f64>,
    /// Survivors with their (rank, crowding) and signed metric values.
    pool: Vec<Member>,
    generation: usize,
    started: bool,
}

#[derive(Clone)]
struct Member {
    config: Config,
    values: Vec<f64>,
    rank: usize,
    crowding: f64,
}

impl Nsga2 {
    /// Builds from JSON options: population, crossover_rate, mutation_rate.
    pub fn from_options(o: &serde_json::Value) -> Nsga2 {
        Nsga2 {
            population: o.get("population").and_then(|v| v.as_u64()).map(|p| (p as usize).max(2)),
            crossover_rate: o.get("crossover_rate").and_then(|v| v.as_f64()).filter(|x| x.is_finite()).unwrap_or(0.9).clamp(0.0, 1.0),
            mutation_rate: o.get("mutation_rate").and_then(|v| v.as_f64()).filter(|x| x.is_finite()).map(|x| x.clamp(0.0, 1.0)),
            pool: Vec::new(),
            generation: 0,
            started: false,
        }
    }

    fn size(&self, h: &History) -> usize {
        self.population.unwrap_or_else(|| ((h.budget as f64).sqrt() * 1.5).round().clamp(6.0, 40.0) as usize)
    }

    /// Keeps `size` members: whole fronts first, the last one cut by crowding distance.
    fn survive(&mut self, size: usize) {
        let mut uniq: Vec<Member> = Vec::with_capacity(self.pool.len());
        for m in self.pool.drain(..) {
            if !uniq.iter().any(|u| u.config == m.config) {
                uniq.push(m);
            }
        }
        let points: Vec<Vec<f64>> = uniq.iter().map(|m| m.values.clone()).collect();
        let mut kept = Vec::with_capacity(size);
        for (rank, front) in non_dominated_sort(&points).into_iter().enumerate() {
            let cd = crowding_distance(&points, &front);
            let mut order: Vec<usize> = (0..front.len()).collect();
            order.sort_by(|&a, &b| cd[b].total_cmp(&cd[a]).then(front[a].cmp(&front[b])));
            for k in order {
                if kept.len() >= size {
                    break;
                }
                let mut m = uniq[front[k]].clone();
                m.rank = rank;
                m.crowding = cd[k];
                kept.push(m);
            }
        }
        self.pool = kept;
    }

    fn pick(&self, rng: &mut Rng) -> &Config {
        let (a, b) = (&self.pool[rng.below(self.pool.len())], &self.pool[rng.below(self.pool.len())]);
        let a_wins = a.rank < b.rank || (a.rank == b.rank && a.crowding >= b.crowding);
        if a_wins {
            &a.config
        } else {
            &b.config
        }
    }
}

impl Strategy for Nsga2 {
    fn name(&self) -> &'static str {
        "nsga2"
    }

    fn ask(&mut self, h: &History, rng: &mut Rng) -> Vec<Config> {
        let size = self.size(h);
        if !self.started {
            // Warm start: earlier Ok trials compete for the first population.
            self.started = true;
            self.pool = h
                .trials
                .iter()
                .filter_map(|t| h.signed_values(t).map(|v| Member { config: t.config.clone(), values: v, rank: 0, crowding: 0.0 }))
                .collect();
            self.survive(size);
        }
        if self.pool.len() < 2 || (self.generation == 0 && self.pool.len() < size) {
            let mut out = Vec::new();
            while out.len() + self.pool.len() < size.max(2) {
                match fresh_random(h, &out, rng) {
                    Some(c) => out.push(c),
                    None => break,
                }
            }
            if !out.is_empty() || self.pool.is_empty() {
                return out;
            }
        }
        let d = h.space.params().len().max(1) as f64;
        let rate = self.mutation_rate.unwrap_or((1.5 / d).min(0.5));
        let mut out: Vec<Config> = Vec::with_capacity(size);
        for _ in 0..size {
            let child = fresh(h, &out, 30, rng, |r| {
                let a = self.pick(r);
                if r.chance(self.crossover_rate) {
                    if let Some(c) = crossover(h.space, a, self.pick(r), r) {
                        return mutate(h.space, &c, rate, 0.05, r).or(Some(c));
                    }
                }
                mutate(h.space, a, rate, 0.05, r)
            });
            match child.or_else(|| fresh_random(h, &out, rng)) {
                Some(c) => out.push(c),
                None => break,
            }
        }
        out
    }

    fn tell(&mut self, h: &History, trials: &[Trial]) {
        for t in trials {
            // Failed points get no place in the fronts: they carry no values to compare.
            if let Some(v) = h.signed_values(t) {
                self.pool.push(Member { config: t.config.clone(), values: v, rank: 0, crowding: 0.0 });
            }
        }
        let size = self.size(h);
        self.survive(size);
        self.generation += 1;
    }

    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::new();
        s.insert("generation".into(), self.generation.into());
        s.insert("population".into(), self.pool.len().into());
        s.insert("front_size".into(), self.pool.iter().filter(|m| m.rank == 0).count().into());
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FnObjective, Metric, Outcome, Param, Space, Study, StudyOptions};

    /// Area dominated by the front up to the reference point (2 metrics, lower is better).
    fn hypervolume(mut pts: Vec<(f64, f64)>, r: (f64, f64)) -> f64 {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (mut area, mut y_prev) = (0.0, r.1);
        for (x, y) in pts {
            if y < y_prev && x < r.0 {
                area += (r.0 - x) * (y_prev - y);
                y_prev = y;
            }
        }
        area
    }

    #[test]
    fn finds_a_better_front_than_random_search() {
        let space = Space::new((0..3).map(|i| Param::int(&format!("x{i}"), 0, 19, 1)).collect(), &[]).unwrap();
        let metrics = vec![Metric::minimize("latency", "ms"), Metric::minimize("memory", "MB")];
        let f = |c: &Config| {
            let x: Vec<f64> = c.0.iter().map(|v| v.as_f64().unwrap_or(0.0) / 19.0).collect();
            let g = 1.0 + 4.0 * (x[1] - 0.5).powi(2) + 4.0 * (x[2] - 0.3).powi(2);
            Outcome::Ok(vec![x[0] * g, (1.0 - x[0]) * g])
        };
        let volume = |name: &str, seed: u64| {
            let mut s = crate::strategies::by_name(name, &serde_json::json!({})).unwrap();
            let mut study = Study::new(space.clone(), metrics.clone(), StudyOptions::budget(80)).unwrap();
            study.run(s.as_mut(), &mut FnObjective::new(metrics.clone(), f), &mut Rng::seed_from_u64(seed));
            let front: Vec<(f64, f64)> = study.pareto_front().iter().map(|t| (t.values[0], t.values[1])).collect();
            hypervolume(front, (2.0, 2.0))
        };
        let nsga: f64 = (0..6).map(|s| volume("nsga2", s)).sum();
        let random: f64 = (0..6).map(|s| volume("random", s)).sum();
        assert!(nsga > random, "NSGA-II hypervolume {nsga} is not above random search's {random}");
    }
}

//! Focused local search around the incumbent: first-improvement hill climbing over one-parameter
//! moves, with iterated-local-search kicks when a local optimum is reached.
//!
//! Why: once a good region is known (from earlier trials, or because an operator is the named
//! bottleneck) the cheapest way to gain is to try its immediate neighbours, in random order,
//! moving as soon as one is better. `intensity` widens the neighbourhood (rank steps up to
//! `intensity` in each direction), so "tune this operator harder" costs more evaluations and
//! finds more. At a local optimum a random kick from the best restarts the climb.

use crate::param::Param;
use crate::rng::Rng;
use crate::space::Space;
use crate::strategy::{History, Snapshot, Strategy};
use crate::trial::Trial;
use crate::value::Config;
use crate::variation::{fresh, fresh_random, mutate, scored};

/// Local search state and settings.
pub struct LocalSearch {
    /// Neighbourhood radius in ranks (1: adjacent values only).
    pub intensity: f64,
    /// Random points evaluated first when there is no earlier trial to start from; None: about
    /// a tenth of the budget, between 3 and 10.
    pub init: Option<usize>,
    center: Option<(Config, f64)>,
    best: Option<(Config, f64)>,
    queue: Vec<Config>,
    sampled: usize,
    kicks: usize,
    moves: usize,
    started: bool,
    /// The neighbourhood must be rebuilt around a new centre at the next ask.
    rebuild: bool,
    /// Started from earlier trials, so no random phase.
    warm: bool,
}

impl LocalSearch {
    /// Builds from JSON options: intensity (default 1), init.
    pub fn from_options(o: &serde_json::Value) -> LocalSearch {
        LocalSearch {
            intensity: o.get("intensity").and_then(|v| v.as_f64()).filter(|x| x.is_finite()).unwrap_or(1.0).clamp(1.0, 16.0),
            init: o.get("init").and_then(|v| v.as_u64()).map(|x| x as usize),
            center: None,
            best: None,
            queue: Vec::new(),
            sampled: 0,
            kicks: 0,
            moves: 0,
            started: false,
            rebuild: false,
            warm: false,
        }
    }

    fn radius(&self) -> i64 {
        libm::round(self.intensity) as i64
    }
}

/// Feasible points that differ from `c` in one parameter: ordered ones by 1..=radius ranks each
/// way (reaching further, up to 3 more ranks, when nearer values are not in the space), string
/// categories to every other choice, continuous floats by steps of 0.05 * k.
pub fn neighbourhood(space: &Space, c: &Config, radius: i64) -> Vec<Config> {
    let mut out = Vec::new();
    for (i, p) in space.params().iter().enumerate() {
        let with = |v| {
            let mut n = c.clone();
            n.0[i] = v;
            n
        };
        match p.levels() {
            Some(levels) if p.is_ordinal() => {
                let Some(l) = p.level_of(&c.0[i]) else { continue };
                let r = p.ordinal_rank(l) as i64;
                for dir in [-1i64, 1] {
                    let mut found = 0;
                    for k in 1..=radius + 3 {
                        let q = r + dir * k;
                        if q < 0 || q >= levels as i64 || (k > radius && found > 0) {
                            break;
                        }
                        let n = with(level(p, q));
                        if space.contains(&n) {
                            out.push(n);
                            found += 1;
                        }
                    }
                }
            }
            Some(levels) => {
                for l in 0..levels {
                    let n = with(p.level_value(l));
                    if n != *c && space.contains(&n) {
                        out.push(n);
                    }
                }
            }
            None => {
                let u = p.to_unit(&c.0[i]);
                for k in 1..=radius {
                    for dir in [-1.0, 1.0] {
                        let n = with(p.from_unit(u + dir * 0.05 * k as f64));
                        if n != *c && space.contains(&n) {
                            out.push(n);
                        }
                    }
                }
            }
        }
    }
    out
}

fn level(p: &Param, rank: i64) -> crate::value::Value {
    p.level_value(p.level_at_rank(rank.max(0) as usize))
}

impl Strategy for LocalSearch {
    fn name(&self) -> &'static str {
        "local"
    }

    fn ask(&mut self, h: &History, rng: &mut Rng) -> Vec<Config> {
        if !self.started {
            // Warm start: climb from the best earlier trial, skipping the random phase.
            self.started = true;
            if let Some(b) = scored(h).into_iter().min_by(|a, b| a.1.total_cmp(&b.1)) {
                self.best = Some(b.clone());
                self.center = Some(b);
                self.rebuild = true;
                self.warm = true;
            }
        }
        let init = self.init.unwrap_or((h.budget / 10).clamp(3, 10));
        if !self.warm && self.sampled < init {
            self.sampled += 1;
            return fresh_random(h, &[], rng).into_iter().collect();
        }
        if self.rebuild {
            self.rebuild = false;
            if let Some((c, _)) = &self.center {
                self.queue = neighbourhood(h.space, c, self.radius());
                self.queue.retain(|n| !h.is_seen(n));
                rng.shuffle(&mut self.queue);
            }
        }
        while let Some(n) = self.queue.pop() {
            if !h.is_seen(&n) {
                return vec![n];
            }
        }
        // Local optimum: kick from the best and climb again from wherever it lands.
        self.kicks += 1;
        let kick = self.best.clone().and_then(|(c, _)| fresh(h, &[], 30, rng, |r| mutate(h.space, &c, 0.3, 0.1, r)));
        self.center = None;
        kick.or_else(|| fresh_random(h, &[], rng)).into_iter().collect()
    }

    fn tell(&mut self, h: &History, trials: &[Trial]) {
        for t in trials {
            let Some(s) = h.score(t) else { continue };
            if self.best.as_ref().is_none_or(|b| s < b.1) {
                self.best = Some((t.config.clone(), s));
            }
            // First improvement: move as soon as a neighbour beats the centre. After a kick the
            // centre is empty, so the climb restarts from the kicked point even if it is worse.
            if self.center.as_ref().is_none_or(|c| s < c.1) {
                if self.center.is_some() && !self.queue.is_empty() {
                    self.moves += 1;
                }
                self.center = Some((t.config.clone(), s));
                self.rebuild = true;
            }
        }
    }

    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::new();
        s.insert("intensity".into(), self.intensity.into());
        s.insert("neighbours_left".into(), self.queue.len().into());
        s.insert("moves".into(), self.moves.into());
        s.insert("kicks".into(), self.kicks.into());
        if let Some((_, v)) = &self.center {
            s.insert("center".into(), (*v).into());
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Param, Value};

    #[test]
    fn intensity_widens_the_neighbourhood_and_skips_missing_members() {
        let s = Space::new(vec![Param::int("a", 0, 9, 1), Param::categorical("b", vec!["x".into(), "y".into()])], &[]).unwrap();
        let c = Config(vec![Value::Int(5), "x".into()]);
        assert_eq!(neighbourhood(&s, &c, 1).len(), 3, "a=4, a=6, b=y");
        assert_eq!(neighbourhood(&s, &c, 2).len(), 5, "a=3..7 without 5, b=y");
        // In a member space with a gap at a=6, a radius-1 move reaches on to a=7.
        let members: Vec<Config> = [0, 3, 4, 5, 7, 8].iter().map(|&a| Config(vec![Value::Int(a), "x".into()])).collect();
        let m = Space::from_members(s.params().to_vec(), members).unwrap();
        let n = neighbourhood(&m, &c, 1);
        assert!(n.contains(&Config(vec![Value::Int(7), "x".into()])) && n.contains(&Config(vec![Value::Int(4), "x".into()])));
        assert_eq!(n.len(), 2);
    }
}

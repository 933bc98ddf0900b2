//! Simulated annealing: a walk that takes every improving move and a worsening one with chance
//! exp(-relative loss / temperature), the temperature falling geometrically over the budget.
//!
//! Why relative loss: latencies span orders of magnitude between problems, so a temperature in
//! "fractions of the current value" means the same thing on every kernel. The schedule follows
//! the budget spent rather than the step count, so a short run still cools fully. A walk that
//! has accepted nothing for a while restarts from the best point seen, perturbed more strongly.

use crate::rng::Rng;
use crate::strategy::{History, Snapshot, Strategy};
use crate::trial::Trial;
use crate::value::Config;
use crate::variation::{fresh, fresh_random, mutate, scored};
use std::collections::VecDeque;

/// Simulated annealing state and settings.
pub struct Annealing {
    /// Starting temperature, as an accepted relative loss scale (0.3: a 30% worse move is
    /// accepted with chance 1/e at the start).
    pub t_start: f64,
    /// Final temperature at the end of the budget.
    pub t_end: f64,
    /// Proposals without an accepted move before restarting from the best.
    pub restart_after: Option<usize>,
    current: Option<(Config, f64)>,
    best: Option<(Config, f64)>,
    temperature: f64,
    recent: VecDeque<bool>,
    since_accept: usize,
    restarts: usize,
    started: bool,
    /// The acceptance draw for the coming `tell`, taken in `ask` where the RNG is at hand.
    draw: f64,
    /// +1 for a minimised primary metric, -1 for a maximised one (snapshots show the metric's
    /// own value, not the internal "lower is better" score).
    sign: f64,
}

impl Annealing {
    /// Builds from JSON options: t_start, t_end, restart_after.
    pub fn from_options(o: &serde_json::Value) -> Annealing {
        let f = |k: &str, d: f64| o.get(k).and_then(|v| v.as_f64()).filter(|x| x.is_finite() && *x > 0.0).unwrap_or(d);
        let t_start = f("t_start", 0.3);
        Annealing {
            t_start,
            t_end: f("t_end", 0.003).min(t_start),
            restart_after: o.get("restart_after").and_then(|v| v.as_u64()).map(|x| x.max(1) as usize),
            current: None,
            best: None,
            temperature: t_start,
            recent: VecDeque::new(),
            since_accept: 0,
            restarts: 0,
            started: false,
            draw: 0.5,
            sign: 1.0,
        }
    }

    fn accept(&mut self, c: Config, s: f64, rng_draw: f64) -> bool {
        let ok = match &self.current {
            None => s.is_finite(),
            Some((_, cur)) => {
                if !s.is_finite() {
                    false
                } else if s <= *cur {
                    true
                } else {
                    let loss = (s - cur) / cur.abs().max(1e-12);
                    rng_draw < libm::exp(-loss / self.temperature.max(1e-12))
                }
            }
        };
        if ok {
            self.current = Some((c, s));
        }
        ok
    }
}

impl Strategy for Annealing {
    fn name(&self) -> &'static str {
        "annealing"
    }

    fn ask(&mut self, h: &History, rng: &mut Rng) -> Vec<Config> {
        if !self.started {
            // Warm start: walk from the best earlier trial.
            self.started = true;
            let mut s = scored(h);
            s.sort_by(|a, b| a.1.total_cmp(&b.1));
            if let Some(b) = s.into_iter().next() {
                self.current = Some(b.clone());
                self.best = Some(b);
            }
        }
        self.draw = rng.unit();
        let spent = h.budget.saturating_sub(h.remaining) as f64;
        let progress = (spent / h.budget.max(1) as f64).clamp(0.0, 1.0);
        self.temperature = self.t_start * libm::pow(self.t_end / self.t_start, progress);
        let d = h.space.params().len().max(1);
        let patience = self.restart_after.unwrap_or(4 * d);
        if self.since_accept >= patience {
            // Stuck: restart from the best with a stronger kick.
            self.since_accept = 0;
            self.restarts += 1;
            self.current = self.best.clone();
            if let Some((c, _)) = &self.best {
                let kick = fresh(h, &[], 30, rng, |r| mutate(h.space, c, 0.5, 0.2, r));
                if let Some(k) = kick {
                    return vec![k];
                }
            }
        }
        // Classic annealing moves: exactly one parameter changes (mutation rate 0 means "pick
        // one"), so a step is a true neighbour and the temperature judges one change at a time.
        let next = match &self.current {
            Some((c, _)) => fresh(h, &[], 40, rng, |r| mutate(h.space, c, 0.0, 0.05, r)),
            None => None,
        };
        next.or_else(|| fresh_random(h, &[], rng)).into_iter().collect()
    }

    fn tell(&mut self, h: &History, trials: &[Trial]) {
        self.sign = h.metrics.first().map(|m| m.signed(1.0)).unwrap_or(1.0);
        for t in trials {
            let s = h.score(t).unwrap_or(f64::INFINITY);
            if s.is_finite() && self.best.as_ref().is_none_or(|b| s < b.1) {
                self.best = Some((t.config.clone(), s));
            }
            let draw = self.draw;
            let ok = self.accept(t.config.clone(), s, draw);
            self.since_accept = if ok { 0 } else { self.since_accept + 1 };
            self.recent.push_back(ok);
            if self.recent.len() > 20 {
                self.recent.pop_front();
            }
        }
    }

    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::new();
        s.insert("temperature".into(), self.temperature.into());
        let acc = self.recent.iter().filter(|x| **x).count() as f64 / self.recent.len().max(1) as f64;
        s.insert("acceptance".into(), acc.into());
        if let Some((_, v)) = &self.current {
            s.insert("current".into(), (self.sign * *v).into());
        }
        s.insert("restarts".into(), self.restarts.into());
        s
    }
}

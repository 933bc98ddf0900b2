//! A reinforcement-learning tuner: REINFORCE (Williams 1992) over independent per-parameter
//! categorical policies.
//!
//! Each parameter has a softmax over its levels (in value order; continuous floats are cut into
//! `bins` equal bins of the unit coordinate). A configuration is one action per parameter. Its
//! reward is rank-normalised: +1 for the best Ok trial so far, -1 for the worst, failed trials
//! -1, so runtimes spanning orders of magnitude give bounded, scale-free rewards. The policy
//! gradient step is lr * (reward - baseline) * (onehot - probabilities), with an exponential
//! moving average of rewards as the baseline. Seen configurations are never proposed: the
//! policy is resampled, then the sample is snapped to the nearest feasible point or nudged.
//! Warm-start trials in the history are learned from before the first proposal (transfer).

use super::candidates::{nearest_unseen_member, random_unseen};
use crate::param::Param;
use crate::rng::Rng;
use crate::strategy::{History, Snapshot, Strategy};
use crate::trial::Trial;
use crate::value::Config;

/// Logits are kept within +-LOGIT_MAX so that every choice keeps some probability.
const LOGIT_MAX: f64 = 6.0;
/// Policy samples tried before snapping or nudging.
const TRIES: usize = 64;

/// REINFORCE tuner.
pub struct Reinforce {
    /// Policy-gradient step size.
    pub learning_rate: f64,
    /// Decay of the moving-average baseline (0: last reward, near 1: long memory).
    pub baseline_decay: f64,
    /// Bins of a continuous float parameter.
    pub bins: usize,
    /// Probability of a uniformly random proposal (epsilon-greedy), for independent policies
    /// stuck in a basin that differs from a better one in several parameters at once.
    /// Default 0 (off): it did not help on average in our checks.
    pub explore: f64,
    logits: Vec<Vec<f64>>,
    names: Vec<String>,
    baseline: f64,
    learned: usize,
}

impl Default for Reinforce {
    fn default() -> Self {
        Reinforce { learning_rate: 0.8, baseline_decay: 0.9, bins: 10, explore: 0.0, logits: Vec::new(), names: Vec::new(), baseline: 0.0, learned: 0 }
    }
}

fn softmax(z: &[f64]) -> Vec<f64> {
    let m = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = z.iter().map(|x| libm::exp(x - m)).collect();
    let s: f64 = e.iter().sum();
    e.into_iter().map(|x| x / s).collect()
}

impl Reinforce {
    /// Builds from JSON options: `learning_rate`, `baseline_decay`, `bins`, `explore`.
    pub fn from_options(o: &serde_json::Value) -> Reinforce {
        let mut r = Reinforce::default();
        let num = |k: &str| o.get(k).and_then(|v| v.as_f64()).filter(|x| x.is_finite() && *x >= 0.0);
        if let Some(v) = num("learning_rate") {
            r.learning_rate = v.min(10.0);
        }
        if let Some(v) = num("baseline_decay") {
            r.baseline_decay = v.min(0.999);
        }
        if let Some(v) = num("explore") {
            r.explore = v.min(1.0);
        }
        if let Some(v) = num("bins") {
            r.bins = (v as usize).clamp(2, 1000);
        }
        r
    }

    fn arms(&self, p: &Param) -> usize {
        p.levels().unwrap_or(self.bins).max(1)
    }

    /// The action (rank or bin) a configuration's value takes for parameter `i`.
    fn action(&self, p: &Param, c: &Config, i: usize) -> usize {
        match (p.levels(), p.level_of(c.get(i))) {
            (Some(_), Some(l)) => p.ordinal_rank(l),
            _ => ((p.to_unit(c.get(i)) * self.bins as f64) as usize).min(self.bins - 1),
        }
    }

    fn value(&self, p: &Param, a: usize, rng: &mut Rng) -> crate::value::Value {
        match p.levels() {
            Some(_) => p.level_value(p.level_at_rank(a)),
            None => p.from_unit((a as f64 + rng.unit()) / self.bins as f64),
        }
    }

    /// Rank-normalised reward of a trial against every Ok trial in the history.
    fn reward(h: &History, t: &Trial) -> f64 {
        let Some(s) = h.score(t) else { return -1.0 };
        let (mut better, mut n) = (0usize, 0usize);
        for o in h.trials {
            if let Some(x) = h.score(o) {
                n += 1;
                if x < s {
                    better += 1;
                }
            }
        }
        if n <= 1 {
            0.0
        } else {
            1.0 - 2.0 * better as f64 / (n - 1) as f64
        }
    }

    fn learn(&mut self, h: &History, t: &Trial) {
        let r = Reinforce::reward(h, t);
        let adv = r - self.baseline;
        self.baseline = self.baseline_decay * self.baseline + (1.0 - self.baseline_decay) * r;
        let params = h.space.params();
        for (i, p) in params.iter().enumerate() {
            let a = self.action(p, &t.config, i);
            let z = &mut self.logits[i];
            let pr = softmax(z);
            for (k, (zk, pk)) in z.iter_mut().zip(&pr).enumerate() {
                let g = if k == a { 1.0 - pk } else { -pk };
                *zk = (*zk + self.learning_rate * adv * g).clamp(-LOGIT_MAX, LOGIT_MAX);
            }
        }
        self.learned += 1;
    }

    fn init(&mut self, h: &History) {
        if self.logits.len() != h.space.params().len() {
            self.logits = h.space.params().iter().map(|p| vec![0.0; self.arms(p)]).collect();
            self.names = h.space.names().to_vec();
            self.learned = 0;
            self.baseline = 0.0;
        }
    }
}

impl Strategy for Reinforce {
    fn name(&self) -> &'static str {
        "rl"
    }

    fn ask(&mut self, h: &History, rng: &mut Rng) -> Vec<Config> {
        self.init(h);
        // Transfer: learn from warm-start trials once, in history order.
        if self.learned == 0 {
            for t in h.trials.iter().filter(|t| t.warm) {
                self.learn(h, t);
            }
            self.learned = self.learned.max(1);
        }
        let params = h.space.params();
        if self.explore > 0.0 && rng.chance(self.explore) {
            return random_unseen(h, rng).into_iter().collect();
        }
        let probs: Vec<Vec<f64>> = self.logits.iter().map(|z| softmax(z)).collect();
        let mut last_unit = vec![0.5; params.len()];
        for _ in 0..TRIES {
            let mut vals = Vec::with_capacity(params.len());
            for (i, p) in params.iter().enumerate() {
                let mut x = rng.unit();
                let mut a = probs[i].len() - 1;
                for (k, pk) in probs[i].iter().enumerate() {
                    x -= pk;
                    if x < 0.0 {
                        a = k;
                        break;
                    }
                }
                vals.push(self.value(p, a, rng));
            }
            let c = Config(vals);
            if !h.is_seen(&c) && h.space.contains(&c) {
                return vec![c];
            }
            last_unit = h.space.to_unit(&c);
        }
        // The policy keeps landing on seen or infeasible points: snap, then nudge.
        if h.space.members().is_some() {
            return nearest_unseen_member(h, rng, &last_unit).or_else(|| random_unseen(h, rng)).into_iter().collect();
        }
        let snapped = h.space.from_unit(&last_unit);
        if !h.is_seen(&snapped) && h.space.contains(&snapped) {
            return vec![snapped];
        }
        for _ in 0..8 {
            let n = h.space.perturb(&snapped, 0.3, 0.2, rng);
            if !h.is_seen(&n) && h.space.contains(&n) {
                return vec![n];
            }
        }
        random_unseen(h, rng).into_iter().collect()
    }

    fn tell(&mut self, h: &History, trials: &[Trial]) {
        self.init(h);
        for t in trials.iter().filter(|t| !t.warm) {
            self.learn(h, t);
        }
    }

    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::new();
        let probs: serde_json::Map<String, serde_json::Value> =
            self.names.iter().zip(&self.logits).map(|(n, z)| (n.clone(), softmax(z).into())).collect();
        s.insert("choice_probabilities".into(), probs.into());
        s.insert("baseline".into(), self.baseline.into());
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FnObjective, Metric, Outcome, Space, Study, StudyOptions};

    #[test]
    fn probabilities_move_toward_good_choices() {
        let space = Space::new(vec![Param::int("a", 0, 4, 1), Param::int("b", 0, 4, 1), Param::float("c", 0.0, 1.0, false, None)], &[]).unwrap();
        let metric = vec![Metric::minimize("t", "ms")];
        let mut study = Study::new(space, metric.clone(), StudyOptions::budget(60)).unwrap();
        let mut obj = FnObjective::new(metric, |c: &Config| {
            let a = c.0[0].as_f64().unwrap();
            Outcome::Ok(vec![1.0 + a + 0.1 * c.0[1].as_f64().unwrap() + c.0[2].as_f64().unwrap()])
        });
        let mut rl = Reinforce::default();
        study.run(&mut rl, &mut obj, &mut Rng::seed_from_u64(4));
        let snap = rl.snapshot();
        let pa: Vec<f64> = serde_json::from_value(snap["choice_probabilities"]["a"].clone()).unwrap();
        assert!((pa.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(pa[0] > 0.2 && pa[0] > pa[4], "{pa:?}");
        let pc: Vec<f64> = serde_json::from_value(snap["choice_probabilities"]["c"].clone()).unwrap();
        assert_eq!(pc.len(), 10);
        assert!(pc[0] > pc[9], "{pc:?}");
    }

    #[test]
    fn rl_beats_random_on_a_smooth_problem() {
        use crate::strategies::bo::tests::mean_best;
        let (rl, rnd) = (mean_best("rl", 60, 8), mean_best("random", 60, 8));
        assert!(rl < rnd, "rl {rl} random {rnd}");
    }
}

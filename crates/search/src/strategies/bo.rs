//! Bayesian optimisation: a Gaussian-process surrogate (see `gp`) over the unit-box transform,
//! expected improvement (or probability of improvement, or a lower confidence bound) as the
//! acquisition, maximised over a candidate set drawn from the discrete space.
//!
//! Why this shape: evaluating the acquisition on every point of a large space is too slow for a
//! browser, so candidates are random unseen points plus the neighbours and perturbations of the
//! best trials (where improvements usually are). The model is refitted from the history at every
//! ask, so earlier trials given as a warm start (transfer) simply shorten the random initial
//! design. Positive runtimes are modelled as log(value) (runtimes are roughly lognormal) and
//! failed trials are imputed with the worst value seen, which steers the search away from
//! regions that fail without excluding them outright. Seen configurations are never proposed.
//! Options: `acquisition` ("ei" default, "pi", "lcb", "portfolio" = round robin of the three),
//! `relevance` (per-axis length scales by marginal likelihood; off by default: it did not help
//! on average in our checks), `initial`, `candidates`, `max_train`, `xi`.

use super::candidates::{candidates, random_unseen, training, MemberIndex, Transform};
use super::gp::{self, Gp};
use crate::rng::Rng;
use crate::strategy::{History, Snapshot, Strategy};
use crate::value::Config;

/// Which acquisition function ranks candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquisition {
    /// Expected improvement.
    Ei,
    /// Probability of improvement.
    Pi,
    /// Lower confidence bound, mean - 2 std.
    Lcb,
    /// Round robin over EI, PI and LCB (a hedge when no single one suits the problem).
    Portfolio,
}

/// Gaussian-process Bayesian optimisation.
pub struct Bayes {
    /// Random points before the model is used; 0 means "from the budget" (3 to 10).
    pub initial: usize,
    /// Random candidates scored per ask (besides neighbours of the best trials).
    pub candidates: usize,
    /// Most training points used in one fit (best half plus most recent).
    pub max_train: usize,
    /// Acquisition function.
    pub acquisition: Acquisition,
    /// Exploration margin of EI / PI, in standardised units.
    pub xi: f64,
    /// Hyperparameters are re-chosen by marginal likelihood every this many model asks.
    pub refit_every: usize,
    /// Per-axis relevance weights fitted by marginal likelihood.
    pub relevance: bool,
    /// Objective transform before the GP: "blend" (default: the mean of rank normal scores and
    /// standardised logs), "rank" (normal scores alone) or "log".
    pub transform: Transform,
    hyper: Option<(f64, f64, Vec<f64>)>,
    members: Option<MemberIndex>,
    model_asks: usize,
    snap: Snapshot,
    /// The model fitted at the last ask (for `predict`).
    last: Option<Gp>,
}

impl Default for Bayes {
    fn default() -> Self {
        Bayes {
            initial: 0,
            candidates: 150,
            max_train: 80,
            acquisition: Acquisition::Ei,
            xi: 0.01,
            refit_every: 8,
            relevance: false,
            transform: Transform::Blend,
            hyper: None,
            members: None,
            model_asks: 0,
            snap: Snapshot::new(),
            last: None,
        }
    }
}

impl Bayes {
    /// Builds from JSON options: `initial`, `candidates`, `max_train`, `acquisition`
    /// ("ei", "pi", "lcb", "portfolio"), `xi`, `relevance`; missing or malformed keys take defaults.
    pub fn from_options(o: &serde_json::Value) -> Result<Bayes, String> {
        let mut b = Bayes::default();
        let num = |k: &str| o.get(k).and_then(|v| v.as_u64()).map(|v| v as usize);
        if let Some(v) = num("initial") {
            b.initial = v;
        }
        if let Some(v) = num("candidates") {
            b.candidates = v.clamp(1, 100_000);
        }
        if let Some(v) = num("max_train") {
            b.max_train = v.clamp(4, 2_000);
        }
        if let Some(v) = o.get("relevance").and_then(|v| v.as_bool()) {
            b.relevance = v;
        }
        if let Some(v) = o.get("xi").and_then(|v| v.as_f64()).filter(|x| x.is_finite() && *x >= 0.0) {
            b.xi = v;
        }
        match o.get("transform").and_then(|v| v.as_str()) {
            None => {}
            Some(t) => b.transform = Transform::parse(t).ok_or_else(|| format!("bayes: unknown transform '{t}'; known: blend, rank, log"))?,
        }
        match o.get("acquisition").and_then(|v| v.as_str()) {
            None | Some("ei") => {}
            Some("pi") => b.acquisition = Acquisition::Pi,
            Some("lcb") | Some("ucb") => b.acquisition = Acquisition::Lcb,
            Some("portfolio") => b.acquisition = Acquisition::Portfolio,
            Some(other) => return Err(format!("bayes: unknown acquisition '{other}'; known: ei, pi, lcb, portfolio")),
        }
        Ok(b)
    }

    fn initial_size(&self, h: &History) -> usize {
        if self.initial > 0 {
            self.initial
        } else {
            (h.budget / 8).clamp(3, 10)
        }
    }

    fn phase(&mut self, name: &str) {
        self.snap.insert("phase".into(), name.into());
    }
}

impl Strategy for Bayes {
    fn name(&self) -> &'static str {
        "bayes"
    }

    fn ask(&mut self, h: &History, rng: &mut Rng) -> Vec<Config> {
        let ok = h.trials.iter().filter(|t| t.is_ok()).count();
        let data = if h.trials.len() >= self.initial_size(h) { training(h, self.max_train, self.transform) } else { None };
        let Some(data) = data.filter(|_| ok >= 2) else {
            self.phase("initial design");
            return random_unseen(h, rng).into_iter().collect();
        };
        let refit = self.hyper.is_none() || data.y.len() < 20 || self.model_asks.is_multiple_of(self.refit_every.max(1));
        self.model_asks += 1;
        let model = match (refit, &self.hyper) {
            (false, Some((l, nz, w))) if w.is_empty() => Gp::fit(&data.x, &data.y, *l, *nz),
            (false, Some((l, nz, w))) => Gp::fit_weighted(&data.x, &data.y, *l, *nz, w),
            _ => None,
        }
        .or_else(|| {
            let g = Gp::fit_best(&data.x, &data.y, gp::SCALES, gp::NOISES)?;
            Some(if self.relevance && data.y.len() >= 10 { g.refine_relevance(&data.x, &data.y) } else { g })
        });
        let Some(model) = model else {
            self.phase("initial design");
            return random_unseen(h, rng).into_iter().collect();
        };
        self.hyper = Some((model.length_scale, model.noise, model.weights.clone()));
        self.last = Some(model.clone());
        self.members = MemberIndex::for_history(self.members.take(), h);
        let cands = candidates(h, rng, self.candidates, self.members.as_ref());
        if cands.is_empty() {
            return vec![];
        }
        let best = data.y.iter().copied().fold(f64::INFINITY, f64::min);
        let acq = match self.acquisition {
            Acquisition::Portfolio => [Acquisition::Ei, Acquisition::Pi, Acquisition::Lcb][self.model_asks % 3],
            a => a,
        };
        let mut scored = Vec::with_capacity(cands.len());
        let mut top = (f64::NEG_INFINITY, 0usize);
        let units: Vec<Vec<f64>> = cands.iter().map(|c| h.space.to_unit(c)).collect();
        let preds = model.predict_many(&units);
        for (i, (u, (m, s))) in units.into_iter().zip(preds).enumerate() {
            let a = match acq {
                Acquisition::Ei => gp::expected_improvement(m, s, best, self.xi),
                Acquisition::Pi => gp::probability_of_improvement(m, s, best, self.xi),
                _ => -(m - 2.0 * s),
            };
            // EI underflows to zero far from the incumbent; fall back to the confidence bound.
            let key = if a > 1e-300 { a } else { -1e6 - (m - 2.0 * s) * 1e-6 };
            if key > top.0 {
                top = (key, i);
            }
            scored.push((u, m, s, a));
        }
        let back = |m: f64| m * data.scale + data.shift;
        let (_, pm, ps, pa) = &scored[top.1];
        self.phase("model");
        self.snap.insert("gp_mean".into(), back(*pm).into());
        self.snap.insert("gp_std".into(), (ps * data.scale).into());
        // The same prediction in the goal's own units (what the teaching card shows).
        let goal = GoalScale::new(h, self.transform);
        if let Some(g) = &goal {
            let (v, lo, hi, q) = g.value(back(*pm), ps * data.scale);
            self.snap.insert("predicted".into(), v.into());
            self.snap.insert("predicted_low".into(), lo.into());
            self.snap.insert("predicted_high".into(), hi.into());
            self.snap.insert("predicted_quantile".into(), q.into());
            self.snap.insert("goal_scale".into(), g.kind.into());
        }
        self.snap.insert("acquisition".into(), (*pa).into());
        self.snap.insert("acquisition_function".into(), format!("{acq:?}").to_lowercase().into());
        self.snap.insert("target_transform".into(), data.transform.into());
        self.snap.insert("length_scale".into(), model.length_scale.into());
        self.snap.insert("noise".into(), model.noise.into());
        self.snap.insert("training_points".into(), model.len().into());
        let sample: Vec<serde_json::Value> = scored
            .iter()
            .step_by((scored.len() / 40).max(1))
            .take(40)
            .map(|(u, m, s, a)| {
                let mut c = serde_json::json!({
                    "x": u.first().copied().unwrap_or(0.5), "y": u.get(1).copied().unwrap_or(0.5),
                    "mean": back(*m), "std": s * data.scale, "acquisition": a,
                });
                if let Some(g) = &goal {
                    let (v, lo, hi, _) = g.value(back(*m), s * data.scale);
                    c["value"] = v.into();
                    c["low"] = lo.into();
                    c["high"] = hi.into();
                }
                c
            })
            .collect();
        self.snap.insert("candidates".into(), sample.into());
        vec![cands[top.1].clone()]
    }

    fn snapshot(&self) -> Snapshot {
        self.snap.clone()
    }

    fn predict(&self, h: &History, c: &Config) -> Option<f64> {
        self.last.as_ref().map(|g| g.predict(&h.space.to_unit(c)).0)
    }
}

/// Maps the GP's scale (log, rank normal scores, or their blend, before standardising) back to
/// the goal's units, so a prediction reads "1234 tokens/s", not "-6.4".
///
/// Why by the observed trials: rank and blend are defined by the values seen so far, so the
/// inverse interpolates between them (monotone). Beyond the best or worst seen, a log or blend
/// prediction extrapolates along the log part; a rank prediction cannot (a rank says "better than
/// all seen", not by how much) and is held at the extreme seen, with its quantile reported.
struct GoalScale {
    kind: &'static str,
    /// (transformed value, score) of every Ok trial, sorted by the transformed value.
    pairs: Vec<(f64, f64)>,
    /// Log transform of scores (all of one sign), else identity.
    log: bool,
    /// Transformed units per unit of tf(score) (1 for log, 0.5/sd for blend, 0 for rank).
    slope: f64,
    metric: crate::trial::Metric,
}

impl GoalScale {
    fn new(h: &History, transform: Transform) -> Option<GoalScale> {
        let metric = h.metrics.first()?.clone();
        let full = training(h, usize::MAX, transform)?;
        let scores: Vec<Option<f64>> = h.trials.iter().map(|t| h.score(t)).collect();
        let ok: Vec<f64> = scores.iter().flatten().copied().collect();
        let log = ok.iter().all(|s| *s > 0.0) || ok.iter().all(|s| *s < 0.0);
        let tf = |s: f64| if !log { s } else if s > 0.0 { libm::log(s) } else { -libm::log(-s) };
        let slope = match full.transform {
            "blend" => {
                let worst = ok.iter().map(|s| tf(*s)).fold(f64::NEG_INFINITY, f64::max);
                let l: Vec<f64> = scores.iter().map(|s| s.map_or(worst, tf)).collect();
                let m = l.iter().sum::<f64>() / l.len() as f64;
                0.5 / libm::sqrt(l.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / l.len() as f64).max(1e-12)
            }
            "rank" => 0.0,
            _ => 1.0,
        };
        let mut pairs: Vec<(f64, f64)> =
            full.y.iter().zip(&scores).filter_map(|(y, s)| Some((y * full.scale + full.shift, (*s)?))).filter(|p| p.0.is_finite() && p.1.is_finite()).collect();
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        if pairs.is_empty() {
            return None;
        }
        Some(GoalScale { kind: full.transform, pairs, log, slope, metric })
    }

    fn untf(&self, l: f64) -> f64 {
        match (self.log, self.pairs[0].1 > 0.0) {
            (false, _) => l,
            (true, true) => libm::exp(l),
            (true, false) => -libm::exp(-l),
        }
    }

    fn tf(&self, s: f64) -> f64 {
        match (self.log, s > 0.0) {
            (false, _) => s,
            (true, true) => libm::log(s),
            (true, false) => -libm::log(-s),
        }
    }

    /// The score a transformed value stands for.
    fn score(&self, t: f64) -> f64 {
        if matches!(self.kind, "log" | "none") {
            return self.untf(t);
        }
        let (first, last) = (self.pairs[0], self.pairs[self.pairs.len() - 1]);
        if t <= first.0 {
            return if self.slope > 0.0 { self.untf(self.tf(first.1) + (t - first.0) / self.slope) } else { first.1 };
        }
        if t >= last.0 {
            return if self.slope > 0.0 { self.untf(self.tf(last.1) + (t - last.0) / self.slope) } else { last.1 };
        }
        let k = self.pairs.partition_point(|p| p.0 < t).max(1);
        let (a, b) = (self.pairs[k - 1], self.pairs[k]);
        if b.0 - a.0 <= 0.0 { a.1 } else { a.1 + (b.1 - a.1) * (t - a.0) / (b.0 - a.0) }
    }

    /// (value, low, high, quantile) in goal units for a transformed mean and standard
    /// deviation: the band is mean ± 2 sd mapped back (so it may be lopsided), `quantile` the
    /// share of Ok trials seen so far better than the predicted value (0: better than all).
    fn value(&self, t: f64, sd: f64) -> (f64, f64, f64, f64) {
        let (a, b, c) = (self.score(t), self.score(t - 2.0 * sd), self.score(t + 2.0 * sd));
        let (v, x, y) = (self.metric.signed(a), self.metric.signed(b), self.metric.signed(c));
        let q = self.pairs.iter().filter(|p| p.1 < a).count() as f64 / self.pairs.len() as f64;
        (v, x.min(y), x.max(y), q)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::strategies::by_name;
    use crate::strategy::Strategy;
    use crate::{Config, FnObjective, Metric, Outcome, Param, Rng, Space, Study, StudyOptions};

    /// A smooth 10,000-point problem with a failing corner, shared by the model-based tests.
    pub(crate) fn problem() -> (Space, impl Fn(&Config) -> Outcome) {
        let space = Space::new((0..4).map(|i| Param::int(&format!("p{i}"), 0, 9, 1)).collect(), &[]).unwrap();
        let f = |c: &Config| {
            let x: Vec<f64> = c.0.iter().map(|v| v.as_f64().unwrap_or(0.0) / 9.0).collect();
            if x[0] + x[1] > 1.7 {
                return Outcome::Failed("out of resources".into());
            }
            let q = 3.0 * (x[0] - 0.3).powi(2) + 2.0 * (x[1] - 0.7).powi(2) + (x[2] - 0.2).powi(2) + 0.3 * x[3];
            Outcome::Ok(vec![libm::exp(2.0 * q)])
        };
        (space, f)
    }

    /// Mean best value over `seeds` runs of `budget` evaluations.
    pub(crate) fn mean_best(name: &str, budget: usize, seeds: u64) -> f64 {
        let (space, f) = problem();
        let mut total = 0.0;
        for seed in 0..seeds {
            let mut s = by_name(name, &serde_json::Value::Null).unwrap();
            let metric = vec![Metric::minimize("t", "ms")];
            let mut study = Study::new(space.clone(), metric.clone(), StudyOptions::budget(budget)).unwrap();
            let mut obj = FnObjective::new(metric, &f);
            study.run(s.as_mut(), &mut obj, &mut Rng::seed_from_u64(seed));
            assert_eq!(study.evaluations(), budget);
            total += study.best_value().unwrap();
        }
        total / seeds as f64
    }

    #[test]
    fn bayes_beats_random_on_a_smooth_problem() {
        let (bo, rnd) = (mean_best("bayes", 30, 6), mean_best("random", 30, 6));
        assert!(bo < rnd, "bayes {bo} random {rnd}");
    }

    #[test]
    fn model_strategies_exhaust_a_tiny_space_without_repeats() {
        let space = Space::new(vec![Param::int("a", 0, 2, 1), Param::categorical("b", vec!["x".into(), "y".into()])], &[]).unwrap();
        for name in ["bayes", "tpe", "rl"] {
            let mut s = by_name(name, &serde_json::json!({"initial": 2, "startup": 2})).unwrap();
            let metric = vec![Metric::minimize("t", "ms")];
            let mut study = Study::new(space.clone(), metric.clone(), StudyOptions::budget(10)).unwrap();
            let mut rng = Rng::seed_from_u64(3);
            while !study.is_done() {
                let h = study.history();
                for c in s.ask(&h, &mut rng.clone()) {
                    assert!(!h.is_seen(&c) && h.space.contains(&c), "{name} proposed {c:?}");
                }
                let mut obj = FnObjective::new(metric.clone(), |c: &Config| Outcome::Ok(vec![c.0[0].as_f64().unwrap() + 1.0]));
                study.step(s.as_mut(), &mut obj, &mut rng);
            }
            assert_eq!(study.evaluations(), 6, "{name}");
            assert!(s.ask(&study.history(), &mut rng).is_empty(), "{name} should be exhausted");
        }
    }

    #[test]
    fn warm_start_skips_the_initial_design() {
        let (space, f) = problem();
        let metric = vec![Metric::minimize("t", "ms")];
        let mut first = Study::new(space.clone(), metric.clone(), StudyOptions::budget(12)).unwrap();
        let mut obj = FnObjective::new(metric.clone(), &f);
        first.run(&mut crate::strategies::random::RandomSearch, &mut obj, &mut Rng::seed_from_u64(1));
        let mut second = Study::new(space, metric, StudyOptions::budget(20)).unwrap();
        assert_eq!(second.warm_start(first.trials()), 12);
        let mut bo = super::Bayes::default();
        let asked = bo.ask(&second.history(), &mut Rng::seed_from_u64(2));
        assert_eq!(asked.len(), 1);
        let snap = bo.snapshot();
        assert_eq!(snap["phase"], "model");
        assert!(snap["gp_std"].as_f64().unwrap() >= 0.0);
        assert!(!snap["candidates"].as_array().unwrap().is_empty());
    }

    #[test]
    fn all_failed_history_falls_back_to_sampling() {
        let (space, _) = problem();
        let metric = vec![Metric::minimize("t", "ms")];
        for name in ["bayes", "tpe", "rl"] {
            let mut study = Study::new(space.clone(), metric.clone(), StudyOptions::budget(25)).unwrap();
            let mut obj = FnObjective::new(metric.clone(), |_: &Config| Outcome::Failed("no".into()));
            let mut s = by_name(name, &serde_json::Value::Null).unwrap();
            study.run(s.as_mut(), &mut obj, &mut Rng::seed_from_u64(5));
            assert_eq!(study.evaluations(), 25, "{name}");
        }
    }

    #[test]
    fn maximised_metrics_are_modelled_in_log_space() {
        let (space, f) = problem();
        let metric = vec![Metric::maximize("throughput", "1/ms")];
        let mut study = Study::new(space, metric.clone(), StudyOptions::budget(20)).unwrap();
        let mut obj = FnObjective::new(metric, |c: &Config| match f(c) {
            Outcome::Ok(v) => Outcome::Ok(vec![1.0 / v[0]]),
            other => other,
        });
        let mut bo = super::Bayes::from_options(&serde_json::json!({"transform": "log"})).unwrap();
        study.run(&mut bo, &mut obj, &mut Rng::seed_from_u64(8));
        let snap = bo.snapshot();
        assert_eq!(snap["phase"], "model");
        assert_eq!(snap["target_transform"], "log");
        assert_eq!(super::Bayes::default().transform.name(), "blend", "rank normal scores blended with log are the default");
    }

    #[test]
    fn the_prediction_is_reported_in_the_goals_units() {
        // A throughput around 1000 tokens/s: the card must say "about 1000", whatever scale the
        // GP works in (log, rank normal scores, or their blend).
        let (space, f) = problem();
        for transform in ["blend", "log", "rank"] {
            let metric = vec![Metric::maximize("tokens_per_s", "tokens/s")];
            let mut study = Study::new(space.clone(), metric.clone(), StudyOptions::budget(30)).unwrap();
            let mut obj = FnObjective::new(metric, |c: &Config| match f(c) {
                Outcome::Ok(v) => Outcome::Ok(vec![2000.0 / v[0]]),
                other => other,
            });
            let mut bo = super::Bayes::from_options(&serde_json::json!({"transform": transform})).unwrap();
            study.run(&mut bo, &mut obj, &mut Rng::seed_from_u64(3));
            let snap = bo.snapshot();
            let seen: Vec<f64> = study.trials().iter().filter_map(|t| t.value()).collect();
            let (lo, hi) = seen.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, v| (a.0.min(*v), a.1.max(*v)));
            let v = snap["predicted"].as_f64().unwrap();
            let (l, h) = (snap["predicted_low"].as_f64().unwrap(), snap["predicted_high"].as_f64().unwrap());
            assert!(v > lo / 3.0 && v < hi * 3.0, "{transform}: predicted {v} outside the seen {lo}..{hi}");
            assert!(l <= v && v <= h, "{transform}: band {l}..{h} around {v}");
            assert_eq!(snap["goal_scale"], if transform == "log" { "log" } else { transform });
            let q = snap["predicted_quantile"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&q));
            if transform == "rank" {
                assert!(v >= lo && v <= hi, "a rank prediction is held within the values seen");
            }
            let c = &snap["candidates"][0];
            assert!(c["value"].as_f64().unwrap() > 0.0 && c["low"].as_f64().unwrap() <= c["high"].as_f64().unwrap());
        }
    }

    #[test]
    fn odd_spaces_do_not_panic() {
        let spaces = [
            Space::new(vec![Param::float("x", 0.0, 1.0, false, None), Param::float("y", 1e-3, 1.0, true, None)], &["x + y <= 1.5".into()]).unwrap(),
            Space::new(vec![Param::int("one", 4, 4, 1)], &[]).unwrap(),
            Space::new(
                vec![Param::pow2("m", 16, 256), Param::categorical("o", vec!["a".into(), "b".into(), "c".into()]), Param::float("f", 0.0, 1.0, false, Some(0.25))],
                &["m * 4 <= 512".into()],
            )
            .unwrap(),
        ];
        for (k, space) in spaces.iter().enumerate() {
            for name in ["bayes", "tpe", "rl"] {
                for budget in [1, 30] {
                    let metric = vec![Metric::minimize("t", "ms")];
                    let mut study = Study::new(space.clone(), metric.clone(), StudyOptions::budget(budget)).unwrap();
                    let mut obj = FnObjective::new(metric, |c: &Config| {
                        let v: f64 = c.0.iter().filter_map(|v| v.as_f64()).sum();
                        if v > 200.0 { Outcome::Failed("too big".into()) } else { Outcome::Ok(vec![1.0 + v]) }
                    });
                    let mut s = by_name(name, &serde_json::Value::Null).unwrap();
                    study.run(s.as_mut(), &mut obj, &mut Rng::seed_from_u64(k as u64));
                    assert!(study.evaluations() >= 1 && study.evaluations() <= budget, "{name} on space {k}");
                    assert!(study.trials().iter().all(|t| space.contains(&t.config)), "{name} on space {k}");
                    let _ = s.snapshot();
                }
            }
        }
    }

    #[test]
    fn unknown_acquisition_is_an_error() {
        assert!(super::Bayes::from_options(&serde_json::json!({"acquisition": "magic"})).is_err());
        assert!(super::Bayes::from_options(&serde_json::json!({"acquisition": "lcb", "xi": -1})).is_ok());
    }
}

//! Tree-structured Parzen Estimator (Bergstra et al. 2011).
//!
//! Trials are split at the gamma quantile of the score into "good" and "bad" (failed trials are
//! bad). Each parameter gets a density l(x) over the good trials and g(x) over the bad ones:
//! over levels for discrete parameters (a Gaussian kernel over ordered ranks, or counts for
//! string categories) and a Parzen window on the unit coordinate for continuous floats, each
//! mixed with a uniform prior. Candidates are drawn from l and the one with the largest l/g (the
//! quantity that orders expected improvement) is proposed. When the feasible set is enumerable
//! the candidates are drawn from l restricted to unseen feasible points, so constrained and
//! member spaces (replayed caches) are searched exactly rather than by rejection. By default the
//! densities are multivariate (see `parzen::Joint`), which keeps interacting parameters together.

use super::candidates::random_unseen;
use super::parzen::{coord, value_at, Coord, Density, Joint};
use crate::rng::Rng;
use crate::strategy::{History, Snapshot, Strategy};
use crate::value::Config;
use std::collections::HashMap;

/// Enumerate the feasible set for candidate drawing up to this many points.
const ENUMERATE_MAX: u128 = 200_000;
/// Unseen points scored per ask by the multivariate form (a random subset beyond this).
const JOINT_SUBSET: usize = 4_000;
/// Bins used for a continuous float when reporting densities.
const SNAP_BINS: usize = 10;

/// TPE sampler.
pub struct Tpe {
    /// Random trials before the densities are used; 0 means "from the budget" (5 to 10).
    pub startup: usize,
    /// Fraction of Ok trials counted as good.
    pub gamma: f64,
    /// Most good trials.
    pub max_good: usize,
    /// Candidates drawn from l per ask.
    pub candidates: usize,
    /// Weight of the uniform prior in each density, in trials.
    pub prior_weight: f64,
    /// Probability of a random unseen proposal after startup, for independent densities stuck
    /// in a basin that differs from a better one in several parameters at once.
    /// Default 0 (off): it did not help on average in our checks.
    pub explore: f64,
    /// Multivariate (joint) densities instead of independent per-parameter ones.
    pub multivariate: bool,
    table: Option<Table>,
    snap: Snapshot,
    /// The densities fitted at the last model ask (for `predict`).
    last: Option<Model>,
}

/// l and g as fitted at one ask: independent per-parameter densities, and the joint form when
/// multivariate.
struct Model {
    l: Vec<Density>,
    g: Vec<Density>,
    joint: Option<Joint>,
}

impl Model {
    /// log l(x) - log g(x): higher is more likely good.
    fn score(&self, xs: &[Coord]) -> f64 {
        match &self.joint {
            Some(j) => j.score(xs),
            None => Tpe::score(&self.l, &self.g, xs),
        }
    }
}

impl Default for Tpe {
    fn default() -> Self {
        Tpe { startup: 0, gamma: 0.2, max_good: 25, candidates: 48, prior_weight: 4.0, explore: 0.0, multivariate: true, table: None, snap: Snapshot::new(), last: None }
    }
}

/// Coordinates of every feasible point and which have been seen, kept between asks so that
/// an ask costs one pass of table look-ups rather than hashing every point.
struct Table {
    coords: Vec<Vec<Coord>>,
    index: HashMap<Config, usize>,
    seen: Vec<bool>,
    synced: usize,
}

impl Table {
    fn new(all: &[Config], coords: &dyn Fn(&Config) -> Vec<Coord>) -> Table {
        let index = all.iter().enumerate().map(|(i, c)| (c.clone(), i)).collect();
        Table { coords: all.iter().map(coords).collect(), index, seen: vec![false; all.len()], synced: 0 }
    }

    fn sync(&mut self, h: &History) {
        for t in &h.trials[self.synced..] {
            if let Some(&i) = self.index.get(&t.config) {
                self.seen[i] = true;
            }
        }
        self.synced = h.trials.len();
    }
}

impl Tpe {
    /// Builds from JSON options: `startup`, `gamma`, `max_good`, `candidates`, `prior_weight`,
    /// `explore`, `multivariate`.
    pub fn from_options(o: &serde_json::Value) -> Tpe {
        let mut t = Tpe::default();
        let num = |k: &str| o.get(k).and_then(|v| v.as_f64()).filter(|x| x.is_finite() && *x >= 0.0);
        if let Some(v) = num("startup") {
            t.startup = v as usize;
        }
        if let Some(v) = num("gamma") {
            t.gamma = v.clamp(0.01, 0.9);
        }
        if let Some(v) = num("max_good") {
            t.max_good = (v as usize).max(1);
        }
        if let Some(v) = num("candidates") {
            t.candidates = (v as usize).clamp(1, 10_000);
        }
        if let Some(v) = o.get("multivariate").and_then(|v| v.as_bool()) {
            t.multivariate = v;
        }
        if let Some(v) = num("explore") {
            t.explore = v.min(1.0);
        }
        if let Some(v) = num("prior_weight") {
            t.prior_weight = v.clamp(1e-3, 100.0);
        }
        t
    }

    fn score(l: &[Density], g: &[Density], xs: &[Coord]) -> f64 {
        xs.iter().enumerate().map(|(i, &x)| libm::log(l[i].pdf(x).max(1e-300)) - libm::log(g[i].pdf(x).max(1e-300))).sum()
    }
}

impl Strategy for Tpe {
    fn name(&self) -> &'static str {
        "tpe"
    }

    fn ask(&mut self, h: &History, rng: &mut Rng) -> Vec<Config> {
        let startup = if self.startup > 0 { self.startup } else { (h.budget / 10).clamp(5, 10) };
        let mut ok: Vec<(f64, usize)> =
            h.trials.iter().enumerate().filter_map(|(i, t)| h.score(t).map(|s| (s, i))).collect();
        if h.trials.len() < startup || ok.len() < 2 || (self.explore > 0.0 && rng.chance(self.explore)) {
            self.snap.insert("phase".into(), (if ok.len() < 2 || h.trials.len() < startup { "startup" } else { "explore" }).into());
            return random_unseen(h, rng).into_iter().collect();
        }
        ok.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let n_good = (libm::ceil(self.gamma * ok.len() as f64) as usize).clamp(1, self.max_good);
        let mut is_good = vec![false; h.trials.len()];
        for &(_, i) in &ok[..n_good] {
            is_good[i] = true;
        }
        let params = h.space.params();
        let obs = |good: bool| -> Vec<Density> {
            params
                .iter()
                .enumerate()
                .map(|(pi, p)| {
                    let xs: Vec<Coord> = h.trials.iter().enumerate().filter(|(i, _)| is_good[*i] == good)
                        .map(|(_, t)| coord(p, &t.config, pi)).collect();
                    Density::build(p, &xs, self.prior_weight)
                })
                .collect()
        };
        let (l, g) = (obs(true), obs(false));
        let coords = |c: &Config| -> Vec<Coord> { params.iter().enumerate().map(|(i, p)| coord(p, c, i)).collect() };
        let joint = self.multivariate.then(|| {
            let split = |good: bool| -> Vec<Vec<Coord>> {
                h.trials.iter().enumerate().filter(|(i, _)| is_good[*i] == good).map(|(_, t)| coords(&t.config)).collect()
            };
            Joint::new(params, split(true), split(false), self.prior_weight)
        });
        let model = Model { l, g, joint };
        let (l, joint) = (&model.l, &model.joint);
        let weight = |xs: &[Coord]| xs.iter().enumerate().map(|(p, &x)| l[p].pdf(x)).product::<f64>();
        let score = |xs: &[Coord]| model.score(xs);
        let mut best: Option<(f64, Config)> = None;
        let enumerable = h.space.cardinality().is_some_and(|n| n <= ENUMERATE_MAX);
        if let Some(all) = h.space.feasible_points().filter(|_| enumerable) {
            // Draw from l restricted to the unseen feasible points.
            let table = self.table.take().filter(|t| t.coords.len() == all.len() && t.synced <= h.trials.len());
            let mut table = table.unwrap_or_else(|| Table::new(all, &coords));
            table.sync(h);
            let mut idx: Vec<usize> = (0..all.len()).filter(|i| !table.seen[*i]).collect();
            if idx.is_empty() {
                self.table = Some(table);
                return vec![];
            }
            if joint.is_some() && idx.len() > JOINT_SUBSET {
                for k in 0..JOINT_SUBSET {
                    let r = k + rng.below(idx.len() - k);
                    idx.swap(k, r);
                }
                idx.truncate(JOINT_SUBSET);
            }
            let w: Vec<f64> = match &joint {
                Some(j) => j.good_weights(idx.iter().map(|&i| &table.coords[i][..])),
                None => idx.iter().map(|&i| weight(&table.coords[i])).collect(),
            };
            let mut cum = Vec::with_capacity(idx.len());
            let mut total = 0.0;
            for x in w {
                total += x;
                cum.push(total);
            }
            for _ in 0..self.candidates {
                let j = if total > 0.0 && total.is_finite() {
                    let x = rng.unit() * total;
                    cum.partition_point(|&v| v <= x).min(idx.len() - 1)
                } else {
                    rng.below(idx.len())
                };
                let s = score(&table.coords[idx[j]]);
                if best.as_ref().is_none_or(|b| s > b.0) {
                    best = Some((s, all[idx[j]].clone()));
                }
            }
            self.table = Some(table);
        } else {
            for _ in 0..self.candidates * 4 {
                let xs: Vec<Coord> = match &joint {
                    Some(j) => j.sample(rng, params),
                    None => l.iter().map(|d| d.sample(rng)).collect(),
                };
                let c = Config(params.iter().zip(&xs).map(|(p, &x)| value_at(p, x)).collect());
                if h.is_seen(&c) || !h.space.contains(&c) {
                    continue;
                }
                let s = score(&xs);
                if best.as_ref().is_none_or(|b| s > b.0) {
                    best = Some((s, c));
                }
            }
        }
        self.snap.insert("phase".into(), "model".into());
        self.snap.insert("good_trials".into(), n_good.into());
        self.snap.insert("bad_trials".into(), (h.trials.len() - n_good).into());
        let dens: serde_json::Map<String, serde_json::Value> = params
            .iter()
            .zip(l.iter())
            .map(|(p, d)| {
                let v: Vec<f64> = match d {
                    Density::Levels(pr) => pr.clone(),
                    Density::Parzen { .. } => (0..SNAP_BINS).map(|b| d.pdf(Coord::Unit((b as f64 + 0.5) / SNAP_BINS as f64))).collect(),
                };
                (p.name.clone(), v.into())
            })
            .collect();
        self.snap.insert("good_density".into(), dens.into());
        self.last = Some(model);
        match best {
            Some((s, c)) => {
                self.snap.insert("log_ratio".into(), s.into());
                vec![c]
            }
            None => random_unseen(h, rng).into_iter().collect(),
        }
    }

    fn snapshot(&self) -> Snapshot {
        self.snap.clone()
    }

    /// Minus the log density ratio of the last fitted model: lower is predicted better (only the
    /// order means anything; `auto` judges the model by how it ranks points before they are
    /// measured).
    fn predict(&self, h: &History, c: &Config) -> Option<f64> {
        let m = self.last.as_ref()?;
        let xs: Vec<Coord> = h.space.params().iter().enumerate().map(|(i, p)| coord(p, c, i)).collect();
        Some(-m.score(&xs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::bo::tests::mean_best;
    use crate::{Param, Value};

    #[test]
    fn tpe_beats_random_on_a_smooth_problem() {
        let (tpe, rnd) = (mean_best("tpe", 40, 6), mean_best("random", 40, 6));
        assert!(tpe < rnd, "tpe {tpe} random {rnd}");
    }

    /// After a run, the model's predictions order unseen configurations roughly as they measure
    /// (what `auto` checks before trusting the model with turns).
    #[test]
    fn predictions_rank_configurations_like_the_objective() {
        use crate::strategies::bo::tests::problem;
        use crate::{FnObjective, Metric, Outcome, Study, StudyOptions};
        let (space, f) = problem();
        let metric = vec![Metric::minimize("t", "ms")];
        let mut study = Study::new(space.clone(), metric.clone(), StudyOptions::budget(60)).unwrap();
        let mut obj = FnObjective::new(metric, &f);
        let mut tpe = Tpe::default();
        assert!(tpe.predict(&study.history(), &space.sample(&mut Rng::seed_from_u64(0)).unwrap()).is_none(), "no model yet");
        study.run(&mut tpe, &mut obj, &mut Rng::seed_from_u64(3));
        let mut rng = Rng::seed_from_u64(9);
        let (mut agree, mut pairs) = (0, 0);
        for _ in 0..200 {
            let (a, b) = (space.sample(&mut rng).unwrap(), space.sample(&mut rng).unwrap());
            let (Outcome::Ok(fa), Outcome::Ok(fb)) = (f(&a), f(&b)) else { continue };
            if (fa[0] / fb[0]).ln().abs() < 0.5 {
                continue; // near-equal pairs say little
            }
            let h = study.history();
            let (pa, pb) = (tpe.predict(&h, &a).unwrap(), tpe.predict(&h, &b).unwrap());
            pairs += 1;
            agree += usize::from((pa < pb) == (fa[0] < fb[0]));
        }
        // Chance is one half; a sign error would give well under it.
        assert!(agree * 10 > pairs * 6, "the model orders {agree} of {pairs} clearly different pairs correctly");
    }

    #[test]
    fn joint_densities_keep_parameters_together() {
        let ps = vec![Param::int("a", 0, 9, 1), Param::int("b", 0, 9, 1)];
        let r = |a: usize, b: usize| vec![Coord::Rank(a), Coord::Rank(b)];
        let j = Joint::new(&ps, vec![r(0, 0), r(9, 9)], vec![r(0, 9), r(9, 0), r(5, 5)], 1.0);
        assert!(j.score(&r(0, 0)) > j.score(&r(0, 9)) + 1.0);
        assert!(j.score(&r(9, 9)) > j.score(&r(9, 0)) + 1.0);
        let mut rng = Rng::seed_from_u64(2);
        let near = (0..200).map(|_| j.sample(&mut rng, &ps)).filter(|x| matches!(x[..], [Coord::Rank(a), Coord::Rank(b)] if a.abs_diff(b) <= 3)).count();
        assert!(near > 120, "{near} of 200 draws kept a and b together");
    }

    #[test]
    fn densities_concentrate_on_observations() {
        let p = Param::int("a", 0, 9, 1);
        let d = Density::build(&p, &[Coord::Rank(2), Coord::Rank(2), Coord::Rank(3)], 1.0);
        let Density::Levels(pr) = &d else { panic!("discrete parameter") };
        assert!((pr.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(pr[2] > pr[8] && pr[3] > pr[8]);
        let c = Param::categorical("c", vec![Value::from("x"), Value::from("y"), Value::from("z")]);
        let d = Density::build(&c, &[Coord::Rank(1)], 1.0);
        assert!(d.pdf(Coord::Rank(1)) > d.pdf(Coord::Rank(0)));
        let f = Param::float("f", 0.0, 1.0, false, None);
        let d = Density::build(&f, &[Coord::Unit(0.2)], 1.0);
        assert!(d.pdf(Coord::Unit(0.2)) > d.pdf(Coord::Unit(0.9)));
        let mut rng = Rng::seed_from_u64(1);
        assert!((0..50).all(|_| matches!(d.sample(&mut rng), Coord::Unit(u) if (0.0..=1.0).contains(&u))));
    }
}

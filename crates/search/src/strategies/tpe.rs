//! Tree-structured Parzen Estimator (Bergstra et al. 2011), the independent per-parameter form.
//!
//! Trials are split at the gamma quantile of the score into "good" and "bad" (failed trials are
//! bad). Each parameter gets a density l(x) over the good trials and g(x) over the bad ones:
//! over levels for discrete parameters (a Gaussian kernel over ordered ranks, or counts for
//! string categories) and a Parzen window on the unit coordinate for continuous floats, each
//! mixed with a uniform prior. Candidates are drawn from l and the one with the largest l/g (the
//! quantity that orders expected improvement) is proposed. When the feasible set is enumerable
//! the candidates are drawn from l restricted to unseen feasible points, so constrained and
//! member spaces (replayed caches) are searched exactly rather than by rejection.

use super::candidates::random_unseen;
use crate::param::Param;
use crate::rng::Rng;
use crate::strategy::{History, Snapshot, Strategy};
use crate::value::Config;
use std::collections::HashMap;

/// Enumerate the feasible set for candidate drawing up to this many points.
const ENUMERATE_MAX: u128 = 200_000;
/// Uniform mass mixed into each per-parameter kernel of the multivariate form, in observations.
const JOINT_SMOOTH: f64 = 0.25;
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
}

impl Default for Tpe {
    fn default() -> Self {
        Tpe { startup: 0, gamma: 0.2, max_good: 25, candidates: 48, prior_weight: 4.0, explore: 0.0, multivariate: true, table: None, snap: Snapshot::new() }
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

/// One parameter's density: probabilities over ranks, or a Parzen window on [0, 1].
enum Density {
    Levels(Vec<f64>),
    Parzen { centres: Vec<f64>, bw: f64, prior: f64 },
}

/// Rank (ordered position) of a config's value, or its unit coordinate for continuous floats.
fn coord(p: &Param, c: &Config, i: usize) -> Coord {
    match (p.levels(), p.level_of(c.get(i))) {
        (Some(_), Some(l)) => Coord::Rank(p.ordinal_rank(l)),
        _ => Coord::Unit(p.to_unit(c.get(i))),
    }
}

#[derive(Clone, Copy)]
enum Coord {
    Rank(usize),
    Unit(f64),
}

impl Density {
    fn build(p: &Param, obs: &[Coord], prior: f64) -> Density {
        Density::build_bw(p, obs, prior, obs.len())
    }

    /// As `build`, with the bandwidth of a density over `count` observations.
    fn build_bw(p: &Param, obs: &[Coord], prior: f64, count: usize) -> Density {
        let m = count as f64;
        let bw_unit = (0.3 * libm::pow(m.max(1.0), -0.2)).clamp(0.03, 0.5);
        match p.levels() {
            Some(n) => {
                let mut w = vec![prior / n as f64; n];
                let bw = (bw_unit * n as f64).max(0.5);
                for o in obs {
                    let Coord::Rank(r) = *o else { continue };
                    if !p.is_ordinal() {
                        w[r.min(n - 1)] += 1.0;
                        continue;
                    }
                    let k: Vec<f64> =
                        (0..n).map(|j| libm::exp(-0.5 * libm::pow((j as f64 - r as f64) / bw, 2.0))).collect();
                    let z: f64 = k.iter().sum();
                    for (wj, kj) in w.iter_mut().zip(&k) {
                        *wj += kj / z;
                    }
                }
                let total: f64 = w.iter().sum();
                Density::Levels(w.into_iter().map(|x| x / total).collect())
            }
            None => {
                let centres = obs.iter().filter_map(|o| if let Coord::Unit(u) = o { Some(*u) } else { None }).collect();
                Density::Parzen { centres, bw: bw_unit, prior }
            }
        }
    }

    fn pdf(&self, x: Coord) -> f64 {
        match (self, x) {
            (Density::Levels(p), Coord::Rank(r)) => p.get(r).copied().unwrap_or(1e-12),
            (Density::Parzen { centres, bw, prior }, Coord::Unit(u)) => {
                let s: f64 = centres.iter().map(|c| super::gp::norm_pdf((u - c) / bw) / bw).sum();
                (prior + s) / (prior + centres.len() as f64)
            }
            _ => 1e-12,
        }
    }

    fn sample(&self, rng: &mut Rng) -> Coord {
        match self {
            Density::Levels(p) => {
                let mut x = rng.unit();
                for (j, pj) in p.iter().enumerate() {
                    x -= pj;
                    if x < 0.0 {
                        return Coord::Rank(j);
                    }
                }
                Coord::Rank(p.len().saturating_sub(1))
            }
            Density::Parzen { centres, bw, prior } => {
                let pick = rng.unit() * (centres.len() as f64 + prior);
                match centres.get(pick as usize) {
                    Some(c) => Coord::Unit((c + bw * rng.normal()).clamp(0.0, 1.0)),
                    None => Coord::Unit(rng.unit()),
                }
            }
        }
    }
}

/// The multivariate form (Falkner et al. 2018, Optuna's `multivariate`): l and g are mixtures
/// over trials of a product of per-parameter kernels, so parameters that only work together
/// (a tile that suits a block shape) stay together.
struct Joint {
    /// Per parameter and observed rank (or one entry for a continuous float): the kernel.
    kernels: Vec<Vec<Density>>,
    good: Vec<Vec<Coord>>,
    bad: Vec<Vec<Coord>>,
    prior: f64,
    uniform: f64,
    /// Discrete kernels as dense n*n tables (centre-major); empty for continuous floats.
    tables: Vec<Vec<f64>>,
}

impl Joint {
    fn new(params: &[Param], good: Vec<Vec<Coord>>, bad: Vec<Vec<Coord>>, prior: f64) -> Joint {
        let kernels = params
            .iter()
            .map(|p| match p.levels() {
                Some(n) => (0..n).map(|r| Density::build_bw(p, &[Coord::Rank(r)], JOINT_SMOOTH, good.len())).collect(),
                None => vec![Density::build_bw(p, &[], JOINT_SMOOTH, good.len())],
            })
            .collect();
        let uniform = params.iter().map(|p| 1.0 / p.levels().unwrap_or(1).max(1) as f64).product();
        let tables = params
            .iter()
            .zip(&kernels)
            .map(|(p, ks): (&Param, &Vec<Density>)| match p.levels() {
                Some(n) => ks.iter().flat_map(|k| (0..n).map(move |r| k.pdf(Coord::Rank(r)))).collect(),
                None => Vec::new(),
            })
            .collect();
        Joint { kernels, good, bad, prior, uniform, tables }
    }

    fn kernel(&self, p: usize, centre: Coord, x: Coord) -> f64 {
        if let (Some(t), Coord::Rank(c), Coord::Rank(r)) = (self.tables.get(p).filter(|t| !t.is_empty()), centre, x) {
            let n = self.kernels[p].len();
            return if c < n && r < n { t[c * n + r] } else { 1e-12 };
        }
        match (&self.kernels[p][..], centre, x) {
            (ks, Coord::Rank(c), _) => ks.get(c).map_or(1e-12, |k| k.pdf(x)),
            ([Density::Parzen { bw, prior, .. }], Coord::Unit(c), Coord::Unit(u)) => {
                (prior + super::gp::norm_pdf((u - c) / bw) / bw) / (prior + 1.0)
            }
            _ => 1e-12,
        }
    }

    fn mixture(&self, obs: &[Vec<Coord>], x: &[Coord]) -> f64 {
        let s: f64 = obs.iter().map(|o| (0..x.len()).map(|p| self.kernel(p, o[p], x[p])).product::<f64>()).sum();
        (self.prior * self.uniform + s) / (self.prior + obs.len() as f64)
    }

    /// l at many points: for each discrete parameter and level, the kernel of every good
    /// trial is tabulated once, so a point costs contiguous products rather than look-ups.
    fn good_weights<'a>(&self, points: impl Iterator<Item = &'a [Coord]>) -> Vec<f64> {
        let m = self.good.len();
        let cols: Vec<Option<Vec<f64>>> = (0..self.kernels.len())
            .map(|p| {
                let n = self.tables.get(p).filter(|t| !t.is_empty()).map(|_| self.kernels[p].len())?;
                Some((0..n).flat_map(|r| self.good.iter().map(move |o| self.kernel(p, o[p], Coord::Rank(r)))).collect())
            })
            .collect();
        let mut acc = vec![0.0; m];
        points
            .map(|x| {
                acc.iter_mut().for_each(|a| *a = 1.0);
                for (p, &xp) in x.iter().enumerate() {
                    match (&cols[p], xp) {
                        (Some(col), Coord::Rank(r)) if (r + 1) * m <= col.len() => {
                            acc.iter_mut().zip(&col[r * m..(r + 1) * m]).for_each(|(a, k)| *a *= k);
                        }
                        _ => acc.iter_mut().zip(&self.good).for_each(|(a, o)| *a *= self.kernel(p, o[p], xp)),
                    }
                }
                (self.prior * self.uniform + acc.iter().sum::<f64>()) / (self.prior + m as f64)
            })
            .collect()
    }

    fn score(&self, x: &[Coord]) -> f64 {
        libm::log(self.mixture(&self.good, x).max(1e-300)) - libm::log(self.mixture(&self.bad, x).max(1e-300))
    }

    /// A draw from l: a good trial (or the uniform prior) perturbed by each parameter's kernel.
    fn sample(&self, rng: &mut Rng, params: &[Param]) -> Vec<Coord> {
        let pick = rng.unit() * (self.good.len() as f64 + self.prior);
        let Some(o) = self.good.get(pick as usize) else {
            return params.iter().map(|p| match p.levels() {
                Some(n) => Coord::Rank(rng.below(n)),
                None => Coord::Unit(rng.unit()),
            }).collect();
        };
        (0..params.len())
            .map(|p| match (o[p], &self.kernels[p][..]) {
                (Coord::Rank(r), ks) => ks.get(r).map_or(Coord::Rank(r), |k| k.sample(rng)),
                (Coord::Unit(c), [Density::Parzen { bw, .. }]) => Coord::Unit((c + bw * rng.normal()).clamp(0.0, 1.0)),
                (x, _) => x,
            })
            .collect()
    }
}

fn value_at(p: &Param, x: Coord) -> crate::value::Value {
    match x {
        Coord::Rank(r) => p.level_value(p.level_at_rank(r)),
        Coord::Unit(u) => p.from_unit(u),
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
        let weight = |xs: &[Coord]| xs.iter().enumerate().map(|(p, &x)| l[p].pdf(x)).product::<f64>();
        let score = |xs: &[Coord]| match &joint {
            Some(j) => j.score(xs),
            None => Tpe::score(&l, &g, xs),
        };
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
            .zip(&l)
            .map(|(p, d)| {
                let v: Vec<f64> = match d {
                    Density::Levels(pr) => pr.clone(),
                    Density::Parzen { .. } => (0..SNAP_BINS).map(|b| d.pdf(Coord::Unit((b as f64 + 0.5) / SNAP_BINS as f64))).collect(),
                };
                (p.name.clone(), v.into())
            })
            .collect();
        self.snap.insert("good_density".into(), dens.into());
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

//! Parzen densities for TPE: per-parameter densities over levels or unit coordinates, and the
//! multivariate mixture of product kernels.

use crate::param::Param;
use crate::rng::Rng;
use crate::value::Config;

/// Uniform mass mixed into each per-parameter kernel of the multivariate form, in observations.
const JOINT_SMOOTH: f64 = 0.25;

/// One parameter's density: probabilities over ranks, or a Parzen window on [0, 1].
pub(crate) enum Density {
    Levels(Vec<f64>),
    Parzen { centres: Vec<f64>, bw: f64, prior: f64 },
}

/// Rank (ordered position) of a config's value, or its unit coordinate for continuous floats.
pub(crate) fn coord(p: &Param, c: &Config, i: usize) -> Coord {
    match (p.levels(), p.level_of(c.get(i))) {
        (Some(_), Some(l)) => Coord::Rank(p.ordinal_rank(l)),
        _ => Coord::Unit(p.to_unit(c.get(i))),
    }
}

#[derive(Clone, Copy)]
pub(crate) enum Coord {
    Rank(usize),
    Unit(f64),
}

impl Density {
    pub(crate) fn build(p: &Param, obs: &[Coord], prior: f64) -> Density {
        Density::build_bw(p, obs, prior, obs.len())
    }

    /// As `build`, with the bandwidth of a density over `count` observations.
    pub(crate) fn build_bw(p: &Param, obs: &[Coord], prior: f64, count: usize) -> Density {
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

    pub(crate) fn pdf(&self, x: Coord) -> f64 {
        match (self, x) {
            (Density::Levels(p), Coord::Rank(r)) => p.get(r).copied().unwrap_or(1e-12),
            (Density::Parzen { centres, bw, prior }, Coord::Unit(u)) => {
                let s: f64 = centres.iter().map(|c| super::gp::norm_pdf((u - c) / bw) / bw).sum();
                (prior + s) / (prior + centres.len() as f64)
            }
            _ => 1e-12,
        }
    }

    pub(crate) fn sample(&self, rng: &mut Rng) -> Coord {
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
pub(crate) struct Joint {
    /// Per parameter and observed rank (or one entry for a continuous float): the kernel.
    kernels: Vec<Vec<Density>>,
    pub(crate) good: Vec<Vec<Coord>>,
    bad: Vec<Vec<Coord>>,
    prior: f64,
    uniform: f64,
    /// Discrete kernels as dense n*n tables (centre-major); empty for continuous floats.
    tables: Vec<Vec<f64>>,
}

impl Joint {
    pub(crate) fn new(params: &[Param], good: Vec<Vec<Coord>>, bad: Vec<Vec<Coord>>, prior: f64) -> Joint {
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

    pub(crate) fn mixture(&self, obs: &[Vec<Coord>], x: &[Coord]) -> f64 {
        let s: f64 = obs.iter().map(|o| (0..x.len()).map(|p| self.kernel(p, o[p], x[p])).product::<f64>()).sum();
        (self.prior * self.uniform + s) / (self.prior + obs.len() as f64)
    }

    /// l at many points: for each discrete parameter and level, the kernel of every good
    /// trial is tabulated once, so a point costs contiguous products rather than look-ups.
    pub(crate) fn good_weights<'a>(&self, points: impl Iterator<Item = &'a [Coord]>) -> Vec<f64> {
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

    pub(crate) fn score(&self, x: &[Coord]) -> f64 {
        libm::log(self.mixture(&self.good, x).max(1e-300)) - libm::log(self.mixture(&self.bad, x).max(1e-300))
    }

    /// A draw from l: a good trial (or the uniform prior) perturbed by each parameter's kernel.
    pub(crate) fn sample(&self, rng: &mut Rng, params: &[Param]) -> Vec<Coord> {
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

pub(crate) fn value_at(p: &Param, x: Coord) -> crate::value::Value {
    match x {
        Coord::Rank(r) => p.level_value(p.level_at_rank(r)),
        Coord::Unit(u) => p.from_unit(u),
    }
}

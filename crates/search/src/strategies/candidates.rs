//! What the model-based strategies (bayes, tpe, rl) share: the surrogate's training data, the
//! candidate set an acquisition is maximised over, and a fallback unseen point.
//!
//! Candidates are unseen points only, so a model-based strategy never proposes a configuration
//! twice; on member spaces (replayed caches) they are found by index, never by snapping a
//! point through every member, which keeps large caches fast.

use crate::rng::Rng;
use crate::strategy::History;
use crate::value::Config;
use std::collections::{HashMap, HashSet};

/// How objective values are transformed before a surrogate sees them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transform {
    /// Normal scores of the ranks (a Gaussian copula): heavy tails, plateaus and a few huge
    /// outliers all become a standard normal sample, so one 10x-slow configuration cannot
    /// flatten the rest of the landscape and the fitted length scale is not driven by it.
    Rank,
    /// log(value) for positive runtimes (the former default), the value itself otherwise.
    Log,
    /// The mean of the standardised log values and the rank normal scores.
    Blend,
}

impl Transform {
    /// The option string ("rank", "log").
    pub fn parse(s: &str) -> Option<Transform> {
        match s {
            "rank" | "quantile" | "copula" => Some(Transform::Rank),
            "log" => Some(Transform::Log),
            "blend" => Some(Transform::Blend),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Transform::Rank => "rank",
            Transform::Log => "log",
            Transform::Blend => "blend",
        }
    }
}

/// Training set: unit coordinates and transformed, standardised targets, plus the transform
/// used and the (mean, std) used to standardise. None without two Ok trials.
pub(crate) struct Training {
    pub x: Vec<Vec<f64>>,
    pub y: Vec<f64>,
    pub transform: &'static str,
    pub shift: f64,
    pub scale: f64,
}

/// Inverse of the standard normal CDF (Acklam's rational approximation, relative error below
/// 1.2e-9), for p in (0, 1); libm only, so the same on every platform. Also the serving
/// simulation's draw of dataset lengths by strata (tunelab-scenario `scheduler::requests`).
#[allow(clippy::excessive_precision)] // the coefficients as Acklam published them
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.383577518672690e2, -3.066479806614716e1, 2.506628277459239];
    const B: [f64; 5] = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
    const C: [f64; 6] = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
    const D: [f64; 4] = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
    let p = p.clamp(1e-12, 1.0 - 1e-12);
    let tail = |q: f64| (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0);
    if p < 0.02425 {
        tail(libm::sqrt(-2.0 * libm::log(p)))
    } else if p > 1.0 - 0.02425 {
        -tail(libm::sqrt(-2.0 * libm::log(1.0 - p)))
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// Normal scores of `v` (lower first): ties share their mean rank, so a plateau is one value.
pub(crate) fn normal_scores(v: &[f64]) -> Vec<f64> {
    let n = v.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|a, b| v[*a].total_cmp(&v[*b]).then(a.cmp(b)));
    let mut out = vec![0.0; n];
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && v[order[j + 1]] == v[order[i]] {
            j += 1;
        }
        let p = ((i + j) as f64 / 2.0 + 0.5) / n as f64;
        let z = normal_quantile(p);
        for &k in &order[i..=j] {
            out[k] = z;
        }
        i = j + 1;
    }
    out
}

pub(crate) fn training(h: &History, cap: usize, transform: Transform) -> Option<Training> {
    let scores: Vec<Option<f64>> = h.trials.iter().map(|t| h.score(t)).collect();
    let ok: Vec<f64> = scores.iter().flatten().copied().collect();
    if ok.len() < 2 {
        return None;
    }
    let (t, name) = match transform {
        Transform::Rank => {
            // Failed trials rank as tied worst: the model learns that their region is bad
            // without a made-up value (they are no worse than the worst success, in rank).
            let raw: Vec<f64> = scores.iter().map(|s| s.unwrap_or(f64::INFINITY)).collect();
            (normal_scores(&raw), "rank")
        }
        Transform::Blend => {
            let raw: Vec<f64> = scores.iter().map(|s| s.unwrap_or(f64::INFINITY)).collect();
            let z = normal_scores(&raw);
            let log = ok.iter().all(|s| *s > 0.0) || ok.iter().all(|s| *s < 0.0);
            let tf = |s: f64| if log { if s > 0.0 { libm::log(s) } else { -libm::log(-s) } } else { s };
            let worst = ok.iter().map(|s| tf(*s)).fold(f64::NEG_INFINITY, f64::max);
            let l: Vec<f64> = scores.iter().map(|s| s.map_or(worst, tf)).collect();
            let m = l.iter().sum::<f64>() / l.len() as f64;
            let sd = libm::sqrt(l.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / l.len() as f64).max(1e-12);
            (z.iter().zip(&l).map(|(a, b)| 0.5 * a + 0.5 * (b - m) / sd).collect(), "blend")
        }
        Transform::Log => {
            // Positive values (runtimes) are modelled in log space; a maximised positive metric
            // (scores all negative) as -log(value); anything else as is.
            let log = ok.iter().all(|s| *s > 0.0) || ok.iter().all(|s| *s < 0.0);
            let tf = |s: f64| match (log, s > 0.0) {
                (false, _) => s,
                (true, true) => libm::log(s),
                (true, false) => -libm::log(-s),
            };
            let worst = ok.iter().map(|s| tf(*s)).fold(f64::NEG_INFINITY, f64::max);
            (scores.iter().map(|s| s.map_or(worst, tf)).collect::<Vec<f64>>(), if log { "log" } else { "none" })
        }
    };
    let mut keep: Vec<usize> = (0..t.len()).collect();
    if keep.len() > cap {
        keep.sort_by(|a, b| t[*a].total_cmp(&t[*b]).then(a.cmp(b)));
        let (best, rest) = keep.split_at(cap / 2);
        let mut rest = rest.to_vec();
        rest.sort_unstable();
        let recent = rest.split_off(rest.len() - (cap - best.len()));
        keep = best.iter().copied().chain(recent).collect();
        keep.sort_unstable();
    }
    let y: Vec<f64> = keep.iter().map(|&i| t[i]).collect();
    let shift = y.iter().sum::<f64>() / y.len() as f64;
    let var = y.iter().map(|v| (v - shift) * (v - shift)).sum::<f64>() / y.len() as f64;
    let scale = if var > 1e-24 { libm::sqrt(var) } else { 1.0 };
    Some(Training {
        x: keep.iter().map(|&i| h.space.to_unit(&h.trials[i].config)).collect(),
        y: y.iter().map(|v| (v - shift) / scale).collect(),
        transform: name,
        shift,
        scale,
    })
}

/// Unit coordinates of a member space's configurations and which are seen, kept between asks
/// so that scanning members costs no hashing.
pub(crate) struct MemberIndex {
    units: Vec<Vec<f64>>,
    index: HashMap<Config, usize>,
    seen: Vec<bool>,
    synced: usize,
}

impl MemberIndex {
    /// The index for `h`'s member space, reusing `old` when it still fits.
    pub(crate) fn for_history(old: Option<MemberIndex>, h: &History) -> Option<MemberIndex> {
        let members = h.space.members()?;
        let mut m = old.filter(|m| m.units.len() == members.len() && m.synced <= h.trials.len()).unwrap_or_else(|| MemberIndex {
            units: members.iter().map(|c| h.space.to_unit(c)).collect(),
            index: members.iter().enumerate().map(|(i, c)| (c.clone(), i)).collect(),
            seen: vec![false; members.len()],
            synced: 0,
        });
        for t in &h.trials[m.synced..] {
            if let Some(&i) = m.index.get(&t.config) {
                m.seen[i] = true;
            }
        }
        m.synced = h.trials.len();
        Some(m)
    }
}

/// Members drawn per ask when looking for the nearest neighbours of the best trials.
const NEAR_SAMPLE: usize = 1500;

/// Unseen candidates: neighbours and perturbations of the best Ok trials, then random points.
/// Falls back to every unseen feasible point of an enumerable space; empty means exhausted.
pub(crate) fn candidates(h: &History, rng: &mut Rng, random: usize, index: Option<&MemberIndex>) -> Vec<Config> {
    let mut ranked: Vec<(f64, usize)> =
        h.trials.iter().enumerate().filter_map(|(i, t)| h.score(t).map(|s| (s, i))).collect();
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut set: HashSet<Config> = HashSet::new();
    let mut out = Vec::new();
    let mut push = |c: Config, out: &mut Vec<Config>| {
        if !h.is_seen(&c) && set.insert(c.clone()) {
            out.push(c);
        }
    };
    for &(_, i) in ranked.iter().take(5) {
        for n in h.space.neighbours(&h.trials[i].config) {
            push(n, &mut out);
        }
    }
    if let (Some(members), Some(mi)) = (h.space.members(), index) {
        // Perturbing a member space snaps through every member; instead take the members
        // nearest to each of the best trials among a random subsample.
        // Targets: each of the best three trials and three Gaussian perturbations of each
        // (a third of the axes moved by 0.15, as `Space::perturb` does on product spaces).
        let mut tops: Vec<Vec<f64>> = Vec::new();
        for &(_, i) in ranked.iter().take(3) {
            let u = h.space.to_unit(&h.trials[i].config);
            for _ in 0..3 {
                let mut v = u.clone();
                let k = rng.below(v.len());
                for (a, x) in v.iter_mut().enumerate() {
                    if a == k || rng.chance(0.3) {
                        *x += 0.15 * rng.normal();
                    }
                }
                tops.push(v);
            }
            tops.push(u);
        }
        // The two nearest unseen sampled members of each target, kept by a running scan.
        let mut near = vec![[(f64::INFINITY, usize::MAX); 2]; tops.len()];
        for _ in 0..NEAR_SAMPLE.min(members.len() * 2) {
            let j = rng.below(members.len());
            if mi.seen[j] {
                continue;
            }
            for (t, best) in tops.iter().zip(near.iter_mut()) {
                let d: f64 = t.iter().zip(&mi.units[j]).map(|(a, b)| (a - b) * (a - b)).sum();
                if d < best[1].0 && best[0].1 != j && best[1].1 != j {
                    best[1] = (d, j);
                    if best[1].0 < best[0].0 {
                        best.swap(0, 1);
                    }
                }
            }
        }
        for best in near {
            for (_, j) in best.into_iter().filter(|b| b.1 != usize::MAX) {
                push(members[j].clone(), &mut out);
            }
        }
    } else {
        for &(_, i) in ranked.iter().take(3) {
            for _ in 0..3 {
                let c = h.space.perturb(&h.trials[i].config, 0.3, 0.15, rng);
                push(c, &mut out);
            }
        }
    }
    let target = out.len() + random;
    for _ in 0..random * 2 {
        if out.len() >= target {
            break;
        }
        match h.space.sample(rng) {
            Some(c) => push(c, &mut out),
            None => break,
        }
    }
    if out.is_empty() {
        if let Some(all) = h.space.feasible_points() {
            for c in all.iter().filter(|c| !h.is_seen(c)).take(random.max(1)) {
                push(c.clone(), &mut out);
            }
        }
    }
    out
}

/// The unseen member nearest to unit point `u` among a random subsample of a member space
/// (snapping through every member of a large cache would cost a full scan per proposal).
pub(crate) fn nearest_unseen_member(h: &History, rng: &mut Rng, u: &[f64]) -> Option<Config> {
    let members = h.space.members()?;
    let mut best: Option<(f64, usize)> = None;
    for _ in 0..NEAR_SAMPLE.min(members.len() * 2) {
        let j = rng.below(members.len());
        if h.is_seen(&members[j]) {
            continue;
        }
        let d: f64 = h.space.to_unit(&members[j]).iter().zip(u).map(|(a, b)| (a - b) * (a - b)).sum();
        if best.is_none_or(|b| d < b.0) {
            best = Some((d, j));
        }
    }
    best.map(|(_, j)| members[j].clone())
}

/// A random unseen feasible point, or None when none can be found.
pub(crate) fn random_unseen(h: &History, rng: &mut Rng) -> Option<Config> {
    for _ in 0..100 {
        match h.space.sample(rng) {
            Some(c) if !h.is_seen(&c) => return Some(c),
            Some(_) => {}
            None => return None,
        }
    }
    let all = h.space.feasible_points()?;
    let unseen: Vec<&Config> = all.iter().filter(|c| !h.is_seen(c)).collect();
    rng.choose(&unseen).map(|c| (*c).clone())
}

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

/// Training set: unit coordinates and transformed, standardised targets, plus whether the log
/// transform was used and the (mean, std) used to standardise. None without two Ok trials.
pub(crate) struct Training {
    pub x: Vec<Vec<f64>>,
    pub y: Vec<f64>,
    pub log: bool,
    pub shift: f64,
    pub scale: f64,
}

pub(crate) fn training(h: &History, cap: usize) -> Option<Training> {
    let scores: Vec<Option<f64>> = h.trials.iter().map(|t| h.score(t)).collect();
    let ok: Vec<f64> = scores.iter().flatten().copied().collect();
    if ok.len() < 2 {
        return None;
    }
    // Positive values (runtimes) are modelled in log space; a maximised positive metric
    // (scores all negative) as -log(value); anything else as is.
    let log = ok.iter().all(|s| *s > 0.0) || ok.iter().all(|s| *s < 0.0);
    let tf = |s: f64| match (log, s > 0.0) {
        (false, _) => s,
        (true, true) => libm::log(s),
        (true, false) => -libm::log(-s),
    };
    let worst = ok.iter().map(|s| tf(*s)).fold(f64::NEG_INFINITY, f64::max);
    let t: Vec<f64> = scores.iter().map(|s| s.map_or(worst, tf)).collect();
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
        log,
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

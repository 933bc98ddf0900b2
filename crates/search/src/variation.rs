//! Variation operators shared by the evolutionary and local strategies: mutation, crossover and
//! the unseen-candidate loop around them.
//!
//! They work on the unit box (one coordinate per parameter) but step *ordered* parameters by
//! whole ranks, because on real kernels neighbouring values (tile 4 vs 8) behave alike while a
//! Gaussian step in unit space either stays put on a short value list or jumps too far on a
//! long one. Results are snapped to the space (member spaces: nearest member) and checked for
//! feasibility, so callers always get a valid point.

use crate::param::Param;
use crate::rng::Rng;
use crate::space::Space;
use crate::strategy::History;
use crate::value::Config;

/// Attempts before an operator gives up on producing a new feasible point.
const TRIES: usize = 24;

/// A rank step of 1, 2, 3... with geometrically falling odds (mean about 1.5), in either
/// direction: mostly the adjacent value, sometimes a longer jump.
fn rank_step(rng: &mut Rng) -> i64 {
    let mut k = 1;
    while k < 64 && rng.chance(0.35) {
        k += 1;
    }
    if rng.chance(0.5) {
        -k
    } else {
        k
    }
}

/// Moves one unit coordinate of parameter `p`: by whole ranks for ordered discrete parameters,
/// to a random choice for string categories (or with probability `jump`), and by a Gaussian
/// step for continuous floats.
pub fn mutate_coord(p: &Param, u: f64, jump: f64, rng: &mut Rng) -> f64 {
    match p.levels() {
        Some(n) if p.is_ordinal() && !rng.chance(jump) => {
            let n = n.max(1) as i64;
            let r = ((u * n as f64) as i64).clamp(0, n - 1);
            // Long ranges (an integer 1..1000) need steps proportional to their length.
            let step = if n <= 16 {
                rank_step(rng)
            } else {
                let s = libm::round(0.1 * n as f64 * rng.normal()) as i64;
                if s == 0 { rank_step(rng) } else { s }
            };
            let r2 = (r + step).clamp(0, n - 1);
            (r2 as f64 + 0.5) / n as f64
        }
        Some(_) => rng.unit(),
        None if rng.chance(jump) => rng.unit(),
        None => (u + 0.1 * rng.normal()).clamp(0.0, 1.0),
    }
}

/// A feasible point near `c`: each parameter mutates with probability `rate` (at least one
/// does). `jump` is the chance a mutated parameter takes a uniformly random value instead of a
/// rank step. None when no different feasible point was found.
pub fn mutate(space: &Space, c: &Config, rate: f64, jump: f64, rng: &mut Rng) -> Option<Config> {
    let base = space.to_unit(c);
    let params = space.params();
    for _ in 0..TRIES {
        let mut u = base.clone();
        let mut moved = false;
        for (i, p) in params.iter().enumerate() {
            if rng.chance(rate) {
                u[i] = mutate_coord(p, u[i], jump, rng);
                moved = true;
            }
        }
        if !moved {
            let i = rng.below(params.len());
            u[i] = mutate_coord(&params[i], u[i], jump, rng);
        }
        let n = space.from_unit_near(&u, c);
        if n != *c && space.contains(&n) {
            return Some(n);
        }
    }
    None
}

/// Uniform crossover of two parents (each parameter from either), snapped to the space.
/// None when no feasible child different from both parents was found.
pub fn crossover(space: &Space, a: &Config, b: &Config, rng: &mut Rng) -> Option<Config> {
    let (ua, ub) = (space.to_unit(a), space.to_unit(b));
    for _ in 0..TRIES / 2 {
        let u: Vec<f64> = ua.iter().zip(&ub).map(|(x, y)| if rng.chance(0.5) { *x } else { *y }).collect();
        let n = space.from_unit(&u);
        if n != *a && n != *b && space.contains(&n) {
            return Some(n);
        }
    }
    None
}

/// Calls `make` until it yields a configuration neither evaluated nor already in `taken`, up to
/// `tries` times. Strategies use it so a generation is not wasted on free re-proposals.
pub fn fresh(h: &History, taken: &[Config], tries: usize, rng: &mut Rng, mut make: impl FnMut(&mut Rng) -> Option<Config>) -> Option<Config> {
    for _ in 0..tries {
        if let Some(c) = make(rng) {
            if !h.is_seen(&c) && !taken.contains(&c) {
                return Some(c);
            }
        }
    }
    None
}

/// An unseen random feasible point not in `taken`, if one turns up quickly.
pub fn fresh_random(h: &History, taken: &[Config], rng: &mut Rng) -> Option<Config> {
    fresh(h, taken, 100, rng, |r| h.space.sample(r))
}

/// Scores of the Ok trials in "lower is better" form, with their configurations; the warm-start
/// view every strategy starts from.
pub fn scored(h: &History) -> Vec<(Config, f64)> {
    h.trials.iter().filter_map(|t| h.score(t).map(|s| (t.config.clone(), s))).collect()
}

/// Relative improvement from `old` to `new` (lower is better), robust to signs and zero.
pub fn relative_gain(old: f64, new: f64) -> f64 {
    if !old.is_finite() {
        return if new.is_finite() { f64::INFINITY } else { 0.0 };
    }
    (old - new) / old.abs().max(1e-12)
}

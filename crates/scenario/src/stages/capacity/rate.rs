//! The search over the offered request rate: the highest rate a configuration sustains with its
//! TTFT and TPOT percentiles within the scenario's limits.
//!
//! Why bracketing then bisection: the only thing known about "sustains rate r" is that it holds
//! at low rates and fails past the knee, so the search first brackets the knee (doubling from
//! the starting rate while it holds, halving while it fails) and then bisects the bracket on a
//! log scale until the two ends are within `rel_tol` or the evaluation budget is spent. Every
//! probe serves the SAME request sample (lengths and the arrival pattern drawn once at unit
//! rate, stretched to each rate: common random numbers), so two configurations differ only by
//! the configuration, and a probe at a rate is a pure function of (configuration, rate): the
//! search is deterministic, natively and in wasm.

/// The verdict of one probe at one rate.
pub enum Verdict<T> {
    /// The limits hold at this rate; the stats of the run.
    Holds(T),
    /// A limit is missed at this rate (why, e.g. "TTFT p90 2410 ms > 2000 ms").
    Misses(String),
}

/// Grid steps per doubling of the rate: the search probes only rates `start x 2^(j / 36)`
/// (steps of 1.94%), so its answer, the highest grid rate that holds with the next one missing,
/// is the same whichever path the search took (a warm start from another configuration's rate,
/// or none) as long as "holds" falls once with the rate.
pub const STEPS_PER_OCTAVE: i32 = 36;

/// How the search is bounded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateBounds {
    /// The grid's anchor, grid index 0 (req/s): the scenario's own rate.
    pub start: f64,
    /// At most this many probes in all (bracketing and narrowing).
    pub max_probes: usize,
    /// Neither bracket end goes past start x 2^max_octaves or start / 2^max_octaves.
    pub max_octaves: u32,
    /// The grid index probed first (the previous configuration's answer in a study; None: 0).
    pub warm: Option<i32>,
    /// The first bracketing step in grid points (doubling after each probe): 1 when the warm
    /// index is already close (a search on a smaller sample found it).
    pub first_step: i32,
}

impl RateBounds {
    /// 24 probes, 12 octaves either way of `start`, no warm start.
    pub fn new(start: f64) -> RateBounds {
        RateBounds { start, max_probes: 24, max_octaves: 12, warm: None, first_step: 4 }
    }

    /// The rate at grid index `j`.
    pub fn rate(&self, j: i32) -> f64 {
        self.start * libm::pow(2.0, j as f64 / STEPS_PER_OCTAVE as f64)
    }
}

/// One probe: the rate and whether the limits held there (with why not).
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    pub rate: f64,
    pub holds: bool,
    pub why: Option<String>,
}

/// What the search found: the highest rate probed that holds and its stats.
#[derive(Clone, Debug)]
pub struct Found<T> {
    pub rate: f64,
    /// Its grid index (`RateBounds::rate`).
    pub index: i32,
    pub stats: T,
    /// The lowest rate probed that misses (None: none missed within the octaves or probes; the
    /// capacity is at least `rate`).
    pub upper: Option<f64>,
    /// Why the limits failed at `upper`.
    pub upper_why: Option<String>,
    pub probes: Vec<Probe>,
}

/// Searches the highest sustained rate on the grid of `b`. `probe(rate)` returns the verdict at
/// that rate and its margin, the largest of ln(percentile / limit) over the limits (<= 0 when
/// they hold, NaN when unknown), or an error when the configuration cannot run at all (the
/// error ends the search). Err when even the lowest rate the bounds allow misses the limits
/// (the message says at which rate and why).
///
/// How: the first probe at the warm index; then steps of 4, 8, 16, ... grid points away from it
/// until the knee is bracketed (a rate that holds and one that misses); then the bracket is
/// narrowed to adjacent grid points by regula falsi on the margins (Illinois: the end kept twice
/// has its margin halved), with a bisection whenever a step failed to halve the bracket. The
/// margins only choose where to probe: the answer is decided by the verdicts alone.
pub fn search<T>(b: RateBounds, mut probe: impl FnMut(f64) -> Result<(Verdict<T>, f64), String>) -> Result<Found<T>, String> {
    if !(b.start.is_finite() && b.start > 0.0) {
        return Err(format!("rate search: the starting rate {} req/s must be positive", b.start));
    }
    let lim = b.max_octaves as i32 * STEPS_PER_OCTAVE;
    let max = b.max_probes.max(2);
    let mut probes = Vec::new();
    let mut run = |j: i32, probes: &mut Vec<Probe>| -> Result<(Verdict<T>, f64), String> {
        let r = b.rate(j);
        let (v, m) = probe(r)?;
        probes.push(Probe { rate: r, holds: matches!(v, Verdict::Holds(_)), why: match &v { Verdict::Misses(w) => Some(w.clone()), _ => None } });
        Ok((v, m))
    };
    // (index, stats, margin) of the highest holding probe; (index, why, margin) of the lowest miss.
    let mut lo: Option<(i32, T, f64)> = None;
    let mut hi: Option<(i32, String, f64)> = None;
    let mut j = b.warm.unwrap_or(0).clamp(-lim, lim);
    match run(j, &mut probes)? {
        (Verdict::Holds(t), m) => lo = Some((j, t, m)),
        (Verdict::Misses(w), m) => hi = Some((j, w, m)),
    }
    // Bracket.
    let mut step = b.first_step.max(1);
    while probes.len() < max {
        match (&lo, &hi) {
            (Some(_), None) if j < lim => {
                j = (j + step).min(lim);
                match run(j, &mut probes)? {
                    (Verdict::Holds(t), m) => lo = Some((j, t, m)),
                    (Verdict::Misses(w), m) => hi = Some((j, w, m)),
                }
            }
            (None, Some(_)) if j > -lim => {
                j = (j - step).max(-lim);
                match run(j, &mut probes)? {
                    (Verdict::Holds(t), m) => lo = Some((j, t, m)),
                    (Verdict::Misses(w), m) => hi = Some((j, w, m)),
                }
            }
            _ => break,
        }
        step *= 2;
    }
    let Some(mut low) = lo else {
        let (j, w, _) = hi.unwrap_or((0, String::new(), 0.0));
        return Err(format!("misses the limits even at {} req/s ({w})", fmt_rate(b.rate(j))));
    };
    // Narrow to adjacent grid points.
    let (mut ml, mut mh) = (low.2, hi.as_ref().map_or(f64::NAN, |h| h.2));
    let mut kept: Option<bool> = None;
    let mut bisect = false;
    while let Some((h, _, _)) = &hi {
        let (l, h) = (low.0, *h);
        if probes.len() >= max || h - l <= 1 {
            break;
        }
        let width = h - l;
        let t = -ml / (mh - ml);
        let jc = if bisect || !(t.is_finite() && ml <= 0.0 && mh > 0.0) {
            l + width / 2
        } else {
            (l + libm::round(t * width as f64) as i32).clamp(l + 1, h - 1)
        };
        match run(jc, &mut probes)? {
            (Verdict::Holds(st), m) => {
                low = (jc, st, m);
                ml = m;
                if kept == Some(false) {
                    mh /= 2.0;
                }
                kept = Some(false);
            }
            (Verdict::Misses(w), m) => {
                hi = Some((jc, w, m));
                mh = m;
                if kept == Some(true) {
                    ml /= 2.0;
                }
                kept = Some(true);
            }
        }
        let now = hi.as_ref().map_or(0, |h| h.0) - low.0;
        bisect = 2 * now > width;
    }
    let (upper, upper_why) = match hi {
        Some((h, w, _)) => (Some(b.rate(h)), Some(w)),
        None => (None, None),
    };
    Ok(Found { rate: b.rate(low.0), index: low.0, stats: low.1, upper, upper_why, probes })
}

/// A rate for messages: four significant digits.
pub fn fmt_rate(r: f64) -> String {
    if r >= 100.0 { format!("{r:.1}") } else if r >= 1.0 { format!("{r:.3}") } else { format!("{r:.4}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knee(k: f64) -> impl FnMut(f64) -> Result<(Verdict<f64>, f64), String> {
        move |r| Ok((if r <= k { Verdict::Holds(r) } else { Verdict::Misses(format!("over {k}")) }, libm::log(r / k)))
    }

    #[test]
    fn finds_a_knee_above_the_start_within_tolerance_and_budget() {
        let f = search(RateBounds::new(1.0), knee(13.7)).unwrap();
        assert!(f.rate <= 13.7 && f.rate >= 13.7 / 1.02, "{}", f.rate);
        assert!(f.probes.len() <= 24);
        assert!(f.upper.unwrap() > 13.7);
    }

    #[test]
    fn finds_a_knee_below_the_start() {
        let f = search(RateBounds::new(8.0), knee(0.3)).unwrap();
        assert!(f.rate <= 0.3 && f.rate >= 0.3 / 1.02, "{}", f.rate);
    }

    #[test]
    fn a_configuration_that_never_holds_is_an_error_naming_the_rate() {
        let e = search(RateBounds::new(1.0), knee(-1.0)).unwrap_err();
        assert!(e.contains("req/s") && e.contains("over -1"), "{e}");
    }

    #[test]
    fn no_knee_within_the_octaves_reports_a_lower_bound() {
        let f = search(RateBounds { max_octaves: 3, ..RateBounds::new(1.0) }, knee(1e9)).unwrap();
        assert!((f.rate - 8.0).abs() < 1e-9, "{}", f.rate);
        assert!(f.upper.is_none());
    }

    #[test]
    fn the_probe_budget_bounds_the_search_and_errors_stop_it() {
        let mut calls = 0;
        let f = search(RateBounds { max_probes: 5, ..RateBounds::new(1.0) }, |r| {
            calls += 1;
            Ok((if r <= 100.0 { Verdict::Holds(()) } else { Verdict::Misses(String::new()) }, f64::NAN))
        });
        assert!(f.is_ok());
        assert_eq!(calls, 5);
        let e = search(RateBounds::new(1.0), |_| Err::<(Verdict<()>, f64), _>("KV cache too small".into())).unwrap_err();
        assert_eq!(e, "KV cache too small");
    }

    #[test]
    fn the_answer_does_not_depend_on_the_warm_start() {
        // A knee shaped like a queue's (the TTFT margin shoots up past it).
        let steep = |k: f64| move |r: f64| -> Result<(Verdict<f64>, f64), String> {
            let m = if r < k { libm::log(0.2 + 0.8 * r / k) } else { 5.0 * (r / k - 1.0) + 1e-9 };
            Ok((if r <= k { Verdict::Holds(r) } else { Verdict::Misses("over".into()) }, m))
        };
        let cold = search(RateBounds::new(8.0), steep(3.3)).unwrap();
        for warm in [-200, -40, -3, 0, 5, 30, 140] {
            let f = search(RateBounds { warm: Some(warm), ..RateBounds::new(8.0) }, steep(3.3)).unwrap();
            assert_eq!((f.index, f.rate), (cold.index, cold.rate), "warm {warm}");
            assert!(f.upper.unwrap() / f.rate < 1.02);
        }
        // From a nearby warm start it takes few probes.
        let near = search(RateBounds { warm: Some(cold.index), ..RateBounds::new(8.0) }, steep(3.3)).unwrap();
        assert!(near.probes.len() <= 5, "{:?}", near.probes);
    }
}

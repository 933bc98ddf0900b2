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

/// How the search is bounded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateBounds {
    /// The first rate probed (req/s).
    pub start: f64,
    /// At most this many probes in all (bracketing and bisection).
    pub max_probes: usize,
    /// Stop bisecting when hi / lo <= 1 + rel_tol.
    pub rel_tol: f64,
    /// Neither bracket end goes past start x 2^max_octaves or start / 2^max_octaves.
    pub max_octaves: u32,
}

impl RateBounds {
    /// 16 probes, 2% resolution, 12 octaves either way of `start`.
    pub fn new(start: f64) -> RateBounds {
        RateBounds { start, max_probes: 16, rel_tol: 0.02, max_octaves: 12 }
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
    pub stats: T,
    /// The lowest rate probed that misses (None: none missed within the octaves or probes; the
    /// capacity is at least `rate`).
    pub upper: Option<f64>,
    /// Why the limits failed at `upper`.
    pub upper_why: Option<String>,
    pub probes: Vec<Probe>,
}

/// Searches the highest sustained rate. `probe(rate)` returns the verdict at that rate, or an
/// error when the configuration cannot run at all (the error ends the search). Err when even
/// the lowest rate the bounds allow misses the limits (the message says at which rate and why).
pub fn search<T>(b: RateBounds, mut probe: impl FnMut(f64) -> Result<Verdict<T>, String>) -> Result<Found<T>, String> {
    if !(b.start.is_finite() && b.start > 0.0) {
        return Err(format!("rate search: the starting rate {} req/s must be positive", b.start));
    }
    let mut probes = Vec::new();
    let mut run = |r: f64, probes: &mut Vec<Probe>| -> Result<Verdict<T>, String> {
        let v = probe(r)?;
        probes.push(Probe { rate: r, holds: matches!(v, Verdict::Holds(_)), why: match &v { Verdict::Misses(w) => Some(w.clone()), _ => None } });
        Ok(v)
    };
    let max = b.max_probes.max(2);
    let mut lo: Option<(f64, T)> = None;
    let mut hi: Option<(f64, String)> = None;
    let mut r = b.start;
    match run(r, &mut probes)? {
        Verdict::Holds(t) => lo = Some((r, t)),
        Verdict::Misses(w) => hi = Some((r, w)),
    }
    // Bracket.
    let mut octave = 0;
    while octave < b.max_octaves && probes.len() < max {
        octave += 1;
        match (&lo, &hi) {
            (Some(_), None) => {
                r = b.start * libm::pow(2.0, octave as f64);
                match run(r, &mut probes)? {
                    Verdict::Holds(t) => lo = Some((r, t)),
                    Verdict::Misses(w) => hi = Some((r, w)),
                }
            }
            (None, Some(_)) => {
                r = b.start / libm::pow(2.0, octave as f64);
                match run(r, &mut probes)? {
                    Verdict::Holds(t) => lo = Some((r, t)),
                    Verdict::Misses(w) => hi = Some((r, w)),
                }
            }
            _ => break,
        }
    }
    let Some(mut low) = lo else {
        let (r, w) = hi.unwrap_or((b.start, String::new()));
        return Err(format!("misses the limits even at {} req/s ({w})", fmt_rate(r)));
    };
    // Bisect on a log scale.
    while let Some((h, _)) = &hi {
        if probes.len() >= max || *h <= low.0 * (1.0 + b.rel_tol) {
            break;
        }
        let mid = libm::sqrt(low.0 * h);
        match run(mid, &mut probes)? {
            Verdict::Holds(t) => low = (mid, t),
            Verdict::Misses(w) => hi = Some((mid, w)),
        }
    }
    let (upper, upper_why) = match hi {
        Some((h, w)) => (Some(h), Some(w)),
        None => (None, None),
    };
    Ok(Found { rate: low.0, stats: low.1, upper, upper_why, probes })
}

/// A rate for messages: four significant digits.
pub fn fmt_rate(r: f64) -> String {
    if r >= 100.0 { format!("{r:.1}") } else if r >= 1.0 { format!("{r:.3}") } else { format!("{r:.4}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knee(k: f64) -> impl FnMut(f64) -> Result<Verdict<f64>, String> {
        move |r| Ok(if r <= k { Verdict::Holds(r) } else { Verdict::Misses(format!("over {k}")) })
    }

    #[test]
    fn finds_a_knee_above_the_start_within_tolerance_and_budget() {
        let f = search(RateBounds::new(1.0), knee(13.7)).unwrap();
        assert!(f.rate <= 13.7 && f.rate >= 13.7 / 1.02, "{}", f.rate);
        assert!(f.probes.len() <= 16);
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
        assert_eq!(f.rate, 8.0);
        assert!(f.upper.is_none());
    }

    #[test]
    fn the_probe_budget_bounds_the_search_and_errors_stop_it() {
        let mut calls = 0;
        let f = search(RateBounds { max_probes: 5, ..RateBounds::new(1.0) }, |r| {
            calls += 1;
            Ok(if r <= 100.0 { Verdict::Holds(()) } else { Verdict::Misses(String::new()) })
        });
        assert!(f.is_ok());
        assert_eq!(calls, 5);
        let e = search(RateBounds::new(1.0), |_| Err::<Verdict<()>, _>("KV cache too small".into())).unwrap_err();
        assert_eq!(e, "KV cache too small");
    }
}

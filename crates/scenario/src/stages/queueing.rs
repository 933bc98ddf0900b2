//! Request-rate traces and the queueing approximation the runtime monitor uses.
//!
//! Why a queueing model: the simulator gives the latency of one batch (TTFT of a prefill, TPOT of
//! a decode step); a service-level objective is about requests arriving at random. A server with
//! `slots` concurrent sequences, each held for `service_s`, is treated as an M/G/c queue: Erlang C
//! for the chance to wait (Erlang 1917), the Allen-Cunneen correction (ca^2 + cs^2)/2 for
//! non-exponential service (A. O. Allen, "Probability, Statistics and Queueing Theory", 2nd ed.,
//! 1990), and the M/M/c exponential tail of the waiting time, scaled the same way, for percentiles.
//! Everything is deterministic: traces are closed-form curves, not random draws.

use serde::{Deserialize, Serialize};

// The named load curves are specification data; re-exported for existing paths.
pub use crate::spec::options::runtime::{bundled_trace, TRACES};

/// What the queue does at one arrival rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueState {
    /// Offered load over capacity; 1 or more means the queue grows without bound.
    pub utilisation: f64,
    /// Probability an arriving request waits for a slot (Erlang C).
    pub wait_probability: f64,
    /// Mean and p-quantile of the wait for a slot, ms (None when the queue is unstable).
    pub mean_wait_ms: Option<f64>,
    pub wait_pct_ms: Option<f64>,
    /// Requests per second the server can sustain.
    pub capacity_rps: f64,
}

/// Erlang C: probability of waiting in an M/M/c queue with `c` servers and offered load `a`
/// (Erlangs), through the numerically stable Erlang B recursion.
pub fn erlang_c(c: u64, a: f64) -> f64 {
    if c == 0 || !(a.is_finite() && a >= 0.0) {
        return 1.0;
    }
    let rho = a / c as f64;
    if rho >= 1.0 {
        return 1.0;
    }
    let mut b = 1.0;
    for k in 1..=c.min(1 << 20) {
        b = a * b / (k as f64 + a * b);
    }
    let denom = 1.0 - rho * (1.0 - b);
    if denom <= 0.0 {
        1.0
    } else {
        (b / denom).clamp(0.0, 1.0)
    }
}

/// The queue at `rate_rps` for a server with `slots` concurrent sequences each held `service_s`
/// seconds; `cs2` is the squared coefficient of variation of service (0: deterministic), arrivals
/// are Poisson (ca^2 = 1). `pct` is the quantile reported (0.9 for p90).
pub fn queue(rate_rps: f64, slots: u64, service_s: f64, cs2: f64, pct: f64) -> QueueState {
    let slots = slots.max(1);
    let mu = if service_s > 0.0 && service_s.is_finite() { 1.0 / service_s } else { f64::INFINITY };
    let capacity = slots as f64 * mu;
    let rate = if rate_rps.is_finite() { rate_rps.max(0.0) } else { f64::INFINITY };
    let util = if capacity.is_infinite() { 0.0 } else { rate / capacity };
    if util >= 1.0 || !util.is_finite() {
        return QueueState { utilisation: util, wait_probability: 1.0, mean_wait_ms: None, wait_pct_ms: None, capacity_rps: capacity };
    }
    if capacity.is_infinite() || rate == 0.0 {
        return QueueState { utilisation: util, wait_probability: 0.0, mean_wait_ms: Some(0.0), wait_pct_ms: Some(0.0), capacity_rps: capacity };
    }
    let pc = erlang_c(slots, rate / mu);
    let scv = (1.0 + cs2.max(0.0)) / 2.0;
    let drain = capacity - rate; // requests/s by which service outpaces arrivals
    let mean = pc / drain * scv;
    // M/M/c: P(W > t) = C exp(-(c mu - lambda) t); the quantile is 0 when C is below the tail mass.
    let tail = 1.0 - pct.clamp(0.0, 0.9999);
    let q = if pc <= tail { 0.0 } else { libm::log(pc / tail) / drain * scv };
    QueueState { utilisation: util, wait_probability: pc, mean_wait_ms: Some(mean * 1e3), wait_pct_ms: Some(q * 1e3), capacity_rps: capacity }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erlang_c_known_values() {
        // One server: C = rho. Two servers at a = 1: C = 1/3.
        assert!((erlang_c(1, 0.5) - 0.5).abs() < 1e-12);
        assert!((erlang_c(2, 1.0) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(erlang_c(4, 4.0), 1.0);
    }

    #[test]
    fn queue_waits_grow_with_load() {
        let a = queue(1.0, 8, 4.0, 0.0, 0.9);
        let b = queue(1.8, 8, 4.0, 0.0, 0.9);
        assert!(a.wait_pct_ms.unwrap() <= b.wait_pct_ms.unwrap());
        assert!(queue(2.5, 8, 4.0, 0.0, 0.9).wait_pct_ms.is_none());
        assert!((a.capacity_rps - 2.0).abs() < 1e-12);
    }

    #[test]
    fn traces_are_bounded() {
        for (n, _) in TRACES {
            let t = bundled_trace(n).unwrap();
            assert!(t.iter().all(|x| *x > 0.0 && *x <= 1.0));
        }
        assert!(bundled_trace("nope").is_err());
    }
}

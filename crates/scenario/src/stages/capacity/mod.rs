//! Capacity: what a deployment sustains and how many chips a load needs.
//!
//! - `rate`: the search over the offered request rate (bracketing and bisection, bounded,
//!   deterministic) for the highest rate a configuration sustains within the TTFT and TPOT
//!   limits.
//! - The capacity goals (`capacity_rps`, `capacity_tokens_per_s_per_chip`): a deployment
//!   scenario whose objectives or limits name one of them has every configuration priced at its
//!   own highest sustained rate, by the deployment objective the study calls (one evaluation
//!   path: `tunelab eval`, the report and the app show the same numbers). Every configuration
//!   serves the same request sample (common random numbers), drawn once from the scenario's
//!   seed at unit rate and stretched to each probed rate.
//!
//! Why a separate goal rather than a new meaning for `tokens_per_s_per_chip`: under an open
//! load the generated tokens per second are the offered load's whenever the engine keeps up, so
//! that metric measures the load, not the hardware (DeepSeek-V3 on 2 A3 nodes at 8 req/s gave
//! 95.25 tokens/s/chip at batch 8 and at batch 128). Old links keep their goal and price as
//! before; the bundled serving scenarios whose goal is throughput name the capacity goal.

// The fewest chips for a load (`plan`) runs studies and reads the fidelity bands, so it is an
// analysis: `crate::analyses::plan`.
pub mod rate;
pub mod spread;

use crate::spec::options::serving::ServingSpec;
use crate::spec::scenario::Scenario;
use crate::stages::scheduler::{Request, ServingStats, Slo};
use tunelab_search::Metric;

/// The capacity goals' metric ids.
pub const CAPACITY_METRICS: [&str; 2] = ["capacity_rps", "capacity_tokens_per_s_per_chip"];

/// True when the scenario's objectives or limits name a capacity goal.
pub fn wanted(s: &Scenario) -> bool {
    s.objectives.iter().any(|o| CAPACITY_METRICS.contains(&o.metric.as_str())) || s.constraints.limits.keys().any(|k| CAPACITY_METRICS.contains(&k.as_str()))
}

/// The metrics the deployment stage adds in capacity mode, after its own.
pub fn metrics() -> Vec<Metric> {
    vec![Metric::maximize("capacity_rps", "req/s"), Metric::maximize("capacity_tokens_per_s_per_chip", "tokens/s")]
}

/// Checks a scenario can be searched over its rate, and says why not. Capacity is measured
/// against the TTFT and TPOT limits: without a TTFT limit an overloaded engine only queues
/// (its TTFT grows, its TPOT need not), so the limit is required.
pub fn check(spec: &ServingSpec, slo: &Slo) -> Result<(), String> {
    if spec.is_static() {
        return Err("capacity goal: needs the scheduler (deployment.serving.mode = \"scheduler\"); the static simple mode has no request rate".into());
    }
    if spec.arrival != "poisson" && spec.arrival != "trace" {
        return Err(format!("capacity goal: the rate is searched over Poisson or traced arrivals (deployment.serving.arrival), not '{}'", crate::spec::scenario::clip(&spec.arrival)));
    }
    if slo.ttft_ms.is_none() {
        return Err("capacity goal: give constraints.max_ttft_ms (the p90 TTFT limit); an overloaded engine shows it by its queue, which only TTFT measures".into());
    }
    Ok(())
}

/// The arrival pattern at a mean rate of 1 req/s (a Poisson stream drawn at unit rate, or a
/// trace scaled so its requests span n seconds), and the rate the scenario itself offers, the
/// search's first probe.
pub fn unit_arrivals(spec: &ServingSpec, reqs: &[Request]) -> (Vec<f64>, f64) {
    let n = reqs.len().max(1) as f64;
    let last = reqs.iter().map(|r| r.arrival_s).fold(0.0, f64::max);
    match spec.arrival.as_str() {
        "trace" if last > 0.0 => (reqs.iter().map(|r| r.arrival_s * n / last).collect(), n / last),
        _ => (reqs.iter().map(|r| r.arrival_s * spec.request_rate.unwrap_or(1.0)).collect(), spec.request_rate.unwrap_or(1.0)),
    }
}

/// The verdict at one rate: the p90 TTFT and TPOT within their limits.
pub fn verdict(st: &ServingStats, slo: &Slo) -> Result<(), String> {
    if let Some(l) = slo.ttft_ms {
        if !(st.ttft_ms.p90 <= l) {
            return Err(format!("TTFT p90 {:.0} ms > {l} ms", st.ttft_ms.p90));
        }
    }
    if let Some(l) = slo.tpot_ms {
        if !(st.tpot_ms.p90 <= l) {
            return Err(format!("TPOT p90 {:.1} ms > {l} ms", st.tpot_ms.p90));
        }
    }
    Ok(())
}

/// How far a run is from its limits: the largest ln(p90 / limit) over the TTFT and TPOT limits
/// (<= 0 exactly when `verdict` holds; NaN when a percentile is not a number). The rate search
/// uses it only to choose where to probe next.
pub fn margin(st: &ServingStats, slo: &Slo) -> f64 {
    let mut m = f64::NEG_INFINITY;
    for (v, l) in [(st.ttft_ms.p90, slo.ttft_ms), (st.tpot_ms.p90, slo.tpot_ms)] {
        if let Some(l) = l {
            let x = if v > 0.0 && l > 0.0 { libm::log(v / l) } else if v <= l { -1.0 } else { f64::NAN };
            if x.is_nan() {
                return f64::NAN;
            }
            m = m.max(x);
        }
    }
    m
}

/// Requests in the engine at once at `rate` (Little's law: the rate times the mean end-to-end
/// time), against the requests the run served (`st.requests`; both are the deployment's, so the
/// ratio is each data-parallel rank's too).
pub fn in_flight(rate: f64, st: &ServingStats) -> f64 {
    rate * st.e2e_ms.mean * 1e-3
}

/// Whether a finite sample can show `rate` as a sustained load: a run where more requests would
/// be in the engine at once than the sample holds (`in_flight` > requests) is one burst the
/// engine drains, never the steady state a sustained rate means. Without this check a sample
/// smaller than what a rank holds at once (100 requests per rank on 32 DP ranks at batch 128)
/// met the TTFT limit even arriving all together, and the search reported its ceiling (32,768
/// req/s) or a burst's rate as capacity.
pub fn sample_verdict(rate: f64, st: &ServingStats) -> Result<(), String> {
    let (q, n) = (in_flight(rate, st), st.requests as f64);
    if q > n {
        return Err(format!(
            "sample too small: {q:.0} requests would be in flight at once (rate x mean end to end {:.0} ms, Little's law), more than the {n:.0} of the sample, so the run is one burst, not a sustained load",
            st.e2e_ms.mean
        ));
    }
    Ok(())
}

/// The rate search's verdict at `rate`: the limits (`verdict`), then the sample (`sample_verdict`).
pub fn verdict_at(rate: f64, st: &ServingStats, slo: &Slo) -> Result<(), String> {
    verdict(st, slo).and_then(|()| sample_verdict(rate, st))
}

/// `margin` with the sample's term, ln(in flight / requests): <= 0 exactly when `verdict_at` holds.
pub fn margin_at(rate: f64, st: &ServingStats, slo: &Slo) -> f64 {
    let m = margin(st, slo);
    let q = in_flight(rate, st);
    if m.is_nan() || !(q > 0.0) || st.requests == 0 {
        return m;
    }
    m.max(libm::log(q / st.requests as f64))
}

/// What a capacity answer owes to the search's bounds, in words (None when nothing): the
/// search's ceiling (the answer is a lower bound), or a sample that holds little more than the
/// requests in flight at that rate (the sample, not the deployment, stopped the search).
/// `values`: (metric, value) of a configuration in capacity mode.
pub fn bound_note(s: &Scenario, values: &[(String, f64)]) -> Option<String> {
    if !wanted(s) {
        return None;
    }
    let get = |n: &str| values.iter().find(|v| v.0 == n).map(|v| v.1);
    let rate = get("capacity_rps")?;
    let spec = &s.deployment.serving;
    let start = spec.request_rate.filter(|r| *r > 0.0)?;
    let b = rate::RateBounds::new(start);
    let ceiling = b.rate(b.max_octaves as i32 * rate::STEPS_PER_OCTAVE);
    if rate >= ceiling * (1.0 - 1e-9) {
        return Some(format!(
            "capacity above {} req/s: no rate the search may probe (up to 2^{} x the scenario's {start} req/s) missed the limits, so {} req/s is a lower bound, not the capacity",
            rate::fmt_rate(rate),
            b.max_octaves,
            rate::fmt_rate(rate)
        ));
    }
    let q = rate * get("e2e_mean_ms")? * 1e-3;
    let n = spec.requests as f64;
    // The next grid rate holds about 2% more in flight: within a fifth of the sample, the
    // sample (not a limit) may be what stopped the search.
    (q > 0.8 * n).then(|| format!(
        "capacity bound by the sample: at {} req/s about {q:.0} requests are in flight at once (Little's law), near the {n:.0} of the sample; a higher rate would be one burst of the whole sample, not a sustained load, so the search stopped there: more requests (deployment.serving.requests) let it measure higher",
        rate::fmt_rate(rate)
    ))
}

/// Generated tokens per second at a sustained rate: the rate times the sample's mean output
/// (what the engine keeps up with), not the run's tokens over its length (which includes the
/// ramp and the drain of a finite sample).
pub fn tokens_per_s_at(rate: f64, reqs: &[Request]) -> f64 {
    let n = reqs.len().max(1) as f64;
    rate * reqs.iter().map(|r| r.output as f64).sum::<f64>() / n
}

/// The note a capacity run shows.
pub fn note(spec: &ServingSpec, slo: &Slo) -> String {
    format!(
        "capacity goal: each configuration is served at the highest {} rate it sustains with TTFT p90 <= {} ms{} (a search over the rate on a grid of 1.94% steps anchored at {} req/s: bracketed from the previous configuration's answer, then narrowed to adjacent grid rates, at most 24 runs; the answer is the highest grid rate that holds with the next one missing, whichever configuration came before), every configuration on the same {} requests (common random numbers); every metric is at that rate, capacity_tokens_per_s_per_chip is the rate x the sample's mean output over the chips",
        if spec.arrival == "trace" { "traced (stretched)" } else { "Poisson" },
        slo.ttft_ms.unwrap_or(f64::INFINITY),
        slo.tpot_ms.map(|l| format!(" and TPOT p90 <= {l} ms")).unwrap_or_default(),
        spec.request_rate.map(|r| r.to_string()).unwrap_or_else(|| "the trace's own".into()),
        spec.requests,
    )
}

/// Says when a serving result is bound by the offered load: an open stream (Poisson or a
/// trace), a throughput goal, and requests that hardly queue (mean queueing under a tenth of
/// the mean end-to-end time), so the engine keeps up and the generated tokens per second are
/// the load's, whatever the configuration. `values`: (metric, value) with the goal first.
/// None in capacity mode (the rate is searched there) and for closed loops and bursts.
pub fn load_bound(s: &Scenario, values: &[(String, f64)]) -> Option<String> {
    let spec = &s.deployment.serving;
    if s.stage != crate::spec::scenario::Stage::Deployment || spec.is_static() || wanted(s) || !(spec.arrival == "poisson" || spec.arrival == "trace") {
        return None;
    }
    let (goal, _) = values.first()?;
    if !["tokens_per_s", "tokens_per_s_per_chip", "requests_per_s", "goodput_rps"].contains(&goal.as_str()) {
        return None;
    }
    let get = |n: &str| values.iter().find(|v| v.0 == n).map(|v| v.1);
    let (q, e2e) = (get("queue_ms")?, get("e2e_mean_ms")?);
    if !(e2e > 0.0 && q <= 0.1 * e2e) {
        return None;
    }
    let load = match spec.arrival.as_str() {
        "poisson" => format!("Poisson {} req/s", spec.request_rate.unwrap_or(0.0)),
        _ => format!("the {}-request trace", spec.trace.len()),
    };
    Some(format!(
        "bound by the offered load: under {load} the requests waited {q:.1} ms on average before their prefill, {:.1}% of their {e2e:.0} ms end to end, so the engine keeps up and {goal} is the load's (a faster configuration serves the same tokens per second); to measure what the deployment sustains, make capacity_tokens_per_s_per_chip (or capacity_rps) the goal: it searches the highest rate within the TTFT and TPOT limits",
        100.0 * q / e2e
    ))
}

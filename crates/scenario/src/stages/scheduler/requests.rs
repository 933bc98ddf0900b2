//! The requests a scenario's `deployment.serving` stream draws (closed-loop arrivals are set by
//! the simulation itself).

use crate::spec::options::serving::ServingSpec;
use tunelab_search::Rng;

/// One simulated request: its arrival and lengths (the prompt includes a multimodal model's
/// image tokens).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Request {
    pub arrival_s: f64,
    pub input: u64,
    pub output: u64,
}

/// Draws the requests of a spec (closed-loop arrivals are set by the simulation; here 0).
pub fn requests(spec: &ServingSpec, input_mean: u64, output_mean: u64, extra_prompt: u64, seed: u64) -> Vec<Request> {
    let mut rng = Rng::seed_from_u64(seed ^ 0x5E7F_1A6B_0C2D_3E4F);
    let n = if spec.arrival == "trace" { spec.trace.len() } else { spec.requests };
    let mut t = 0.0;
    let mut out = Vec::with_capacity(n);
    let mut trace: Vec<f64> = spec.trace.clone();
    trace.sort_by(|a, b| a.total_cmp(b));
    for i in 0..n {
        let arrival_s = match spec.arrival.as_str() {
            "poisson" => {
                let rate = spec.request_rate.unwrap_or(1.0);
                t += -libm::log(1.0 - rng.unit()) / rate;
                t
            }
            "trace" => trace[i],
            _ => 0.0,
        };
        let (input, output) = match tunelab_sim::workload::datasets::dataset(&spec.dataset) {
            Ok(d) if !spec.dataset.is_empty() => draw_dataset(&mut rng, &d),
            _ => (draw(&mut rng, spec, input_mean), draw(&mut rng, spec, output_mean)),
        };
        out.push(Request { arrival_s, input: input + extra_prompt, output });
    }
    out
}

/// One (prompt, output) pair from a dataset's statistics: lognormal lengths, resampled until
/// they pass the benchmark's filter (bounded: after 64 tries the last draw is clamped into it).
fn draw_dataset(rng: &mut Rng, d: &tunelab_sim::workload::datasets::DatasetStats) -> (u64, u64) {
    let s2 = libm::log(1.0 + d.cv * d.cv);
    let mut one = |mean: f64| (libm::round(mean * libm::exp(libm::sqrt(s2) * rng.normal() - s2 / 2.0)) as u64).max(1);
    let mut last = (d.min_len, d.min_len);
    for _ in 0..64 {
        let (i, o) = (one(d.input_mean), one(d.output_mean));
        last = (i, o);
        if i >= d.min_len && o >= d.min_len && i <= d.max_input && i + o <= d.max_total {
            return (i, o);
        }
    }
    let i = last.0.clamp(d.min_len, d.max_input);
    (i, last.1.clamp(d.min_len, d.max_total - i))
}

fn draw(rng: &mut Rng, spec: &ServingSpec, mean: u64) -> u64 {
    let m = mean.max(1) as f64;
    let x = match spec.length_distribution.as_str() {
        "uniform" => m * rng.uniform(1.0 - spec.length_spread, 1.0 + spec.length_spread),
        "lognormal" => {
            let s2 = libm::log(1.0 + spec.length_spread * spec.length_spread);
            m * libm::exp(libm::sqrt(s2) * rng.normal() - s2 / 2.0)
        }
        _ => m,
    };
    (libm::round(x) as u64).clamp(1, 1 << 22)
}

/// The requests as a speculative decoder serves them. Each verify step yields a random number
/// of tokens (mean `mean`, variance `var`: `workload::speculative::tokens_variance`), so a
/// request of L tokens needs a random number of steps, about normal with mean (L - 1) / mean
/// and variance (L - 1) var / mean^3; requests of equal length therefore finish apart, as on
/// the hardware, instead of in lockstep. The simulation advances one mean-sized token per step
/// (the pricer divides the verify step by `mean`), so each request's output becomes its drawn
/// steps times `mean`: the mean output, and the mean TPOT, are kept. The draw is a fixed
/// function of the request's index (deterministic, the same on every platform).
pub fn with_acceptance_spread(reqs: &[Request], mean: f64, var: f64) -> Vec<Request> {
    if !(mean > 1.0) || !(var > 0.0) {
        return reqs.to_vec();
    }
    NORMALS.with(|z| {
        let (z, last) = &mut *z.borrow_mut();
        // The draws depend on the index alone: a capacity search spreads the same requests at
        // every probed rate, so they are drawn once per thread (the same numbers).
        while z.len() < reqs.len() {
            let i = z.len() as u64;
            z.push(standard_normal(i));
        }
        // So are the spread lengths, for one (mean, var): each index keeps the last (output,
        // spread output) it gave, and a probe at another rate (same lengths) reads them back.
        let at = (mean.to_bits(), var.to_bits());
        if last.0 != at {
            last.0 = at;
            last.1.clear();
        }
        let kept = &mut last.1;
        reqs.iter()
            .zip(z.iter())
            .enumerate()
            .map(|(i, (r, &zi))| {
                if let Some(&(o, out)) = kept.get(i) {
                    if o == r.output {
                        return Request { output: out, ..*r };
                    }
                }
                let out = if r.output < 3 {
                    r.output
                } else {
                    let n = (r.output - 1) as f64;
                    let steps = n / mean + zi * libm::sqrt(n * var / (mean * mean * mean));
                    (libm::round(steps.max(1.0) * mean) as u64 + 1).clamp(2, 4 * r.output)
                };
                if i < kept.len() {
                    kept[i] = (r.output, out);
                } else if i == kept.len() {
                    kept.push((r.output, out));
                }
                Request { output: out, ..*r }
            })
            .collect()
    })
}

/// Spread lengths kept for one (mean, var) by their bits: per request index (output, spread output).
type KeptSpread = ((u64, u64), Vec<(u64, u64)>);

thread_local! {
    /// `standard_normal(i)` for i = 0, 1, ... as far as a run has needed them, and the spread
    /// lengths last given (`with_acceptance_spread`).
    static NORMALS: std::cell::RefCell<(Vec<f64>, KeptSpread)> = const { std::cell::RefCell::new((Vec::new(), ((0, 0), Vec::new()))) };
}

/// A standard normal draw from the index alone (splitmix64, then Box-Muller).
fn standard_normal(i: u64) -> f64 {
    let mix = |mut z: u64| {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let u = |z: u64| ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let (u1, u2) = (u(mix(2 * i)), u(mix(2 * i + 1)));
    libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * core::f64::consts::PI * u2)
}

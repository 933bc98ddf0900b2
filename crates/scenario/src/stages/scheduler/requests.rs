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
    let dataset = tunelab_sim::workload::datasets::dataset(&spec.dataset).ok().filter(|_| !spec.dataset.is_empty());
    let mut strata = dataset.as_ref().map(|_| Strata::new(n, seed));
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
        let (input, output) = match (&dataset, &mut strata) {
            (Some(d), Some(st)) => st.pair(i, d).unwrap_or_else(|| draw_dataset(&mut rng, d)),
            _ => (draw(&mut rng, spec, input_mean), draw(&mut rng, spec, output_mean)),
        };
        out.push(Request { arrival_s, input: input + extra_prompt, output });
    }
    out
}

/// A dataset's lengths drawn by strata (issue 43: a burst of few requests, such as 50 ShareGPT
/// prompts sent at once, lasts as long as its longest output, so one random draw of 50 lengths
/// moves the predicted throughput by tens of percent: `tunelab eval --spread` gives 275..465
/// tokens/s over five seeds on srv-vllm-phi4mini-1x910b-eager-sharegpt). Request i takes its
/// output length from the i-th of n equal-probability slices of the dataset's distribution and
/// its prompt length from a slice of an independent shuffle, each at a random point inside the
/// slice (Latin hypercube sampling): every sample holds the distribution's short and long
/// requests in their proportions, which is what the benchmark's own draw from the dataset holds
/// on average, and the seed still moves each length within its slice and the pairing. A pair the
/// benchmark's filter would drop is drawn again at random (`draw_dataset`).
struct Strata {
    u_in: Vec<f64>,
    u_out: Vec<f64>,
}

impl Strata {
    fn new(n: usize, seed: u64) -> Strata {
        let mut rng = Rng::seed_from_u64(seed ^ 0x1A7E_5EED_5A3B_9C01);
        let slices = |rng: &mut Rng| {
            let mut k: Vec<usize> = (0..n).collect();
            rng.shuffle(&mut k);
            k.into_iter().map(|k| (k as f64 + rng.unit().clamp(1e-9, 1.0 - 1e-9)) / n as f64).collect::<Vec<f64>>()
        };
        let u_out = slices(&mut rng);
        let u_in = slices(&mut rng);
        Strata { u_in, u_out }
    }

    /// Request i's (prompt, output) lengths, or None when the benchmark's filter drops the pair.
    fn pair(&self, i: usize, d: &tunelab_sim::workload::datasets::DatasetStats) -> Option<(u64, u64)> {
        let s = libm::sqrt(libm::log(1.0 + d.cv * d.cv));
        let len = |mean: f64, u: f64| (libm::round(mean * libm::exp(s * tunelab_search::strategies::candidates::normal_quantile(u) - s * s / 2.0)) as u64).max(1);
        let (inp, out) = (len(d.input_mean, self.u_in[i]), len(d.output_mean, self.u_out[i]));
        (inp >= d.min_len && out >= d.min_len && inp <= d.max_input && inp + out <= d.max_total).then_some((inp, out))
    }
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

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
        let input = draw(&mut rng, spec, input_mean) + extra_prompt;
        let output = draw(&mut rng, spec, output_mean);
        out.push(Request { arrival_s, input, output });
    }
    out
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

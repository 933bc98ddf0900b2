//! What a serving simulation measured: latency percentiles, throughput, goodput, and the
//! histogram that keeps percentiles of hundreds of thousands of inter-token gaps cheap.

use serde::{Deserialize, Serialize};

/// p50 / p90 / p99 and the mean of one latency, in ms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pcts {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
}

/// What a serving simulation measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServingStats {
    pub requests: usize,
    /// First arrival to last completion, s.
    pub duration_s: f64,
    /// Generated tokens per second over the duration.
    pub output_tokens_per_s: f64,
    /// Prompt plus generated tokens per second.
    pub total_tokens_per_s: f64,
    pub requests_per_s: f64,
    pub ttft_ms: Pcts,
    pub tpot_ms: Pcts,
    pub itl_ms: Pcts,
    /// Arrival to last token (end-to-end request latency), ms.
    #[serde(default)]
    pub e2e_ms: Pcts,
    /// Arrival to first scheduled (waiting for a slot or for KV blocks), ms.
    pub queue_ms: Pcts,
    /// TTFT less the queueing delay (prefill compute, and interference from other steps), ms.
    pub ttft_compute_ms: Pcts,
    /// Requests per second that met both latency limits (all of them when there are none).
    pub goodput_rps: f64,
    pub slo_attained: f64,
    pub preemptions: u64,
    pub steps: u64,
    /// Mean sequences per step.
    pub mean_batch: f64,
    /// Share of the duration the device was busy.
    pub busy_fraction: f64,
    /// Share of the device time spent on prompt tokens.
    pub prefill_share: f64,
    /// Host time the device waited for, as a share of all step time.
    pub host_share: f64,
    /// Largest share of the KV blocks in use at once.
    pub kv_peak_fraction: f64,
    pub kv_blocks: u64,
    pub energy_j: f64,
    pub flops: f64,
    pub rel_error: f64,
    /// Steps that ran as captured graphs.
    pub graph_steps: u64,
    /// Where the mean TTFT goes: front end, queueing, prefill and its host share, hand-off
    /// (`ttft`; zero when the run was not simulated request by request).
    #[serde(default)]
    pub ttft_split: super::TtftSplit,
}

/// Percentiles by linear interpolation between order statistics (numpy's default).
pub fn pcts(mut v: Vec<f64>) -> Pcts {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return Pcts::default();
    }
    // In total_cmp's order, at an integer sort's speed: each value's bits mapped to the integer
    // total_cmp compares (an involution: the sign bit is kept), sorted, mapped back. Unstable
    // is the same order here: values equal under total_cmp have the same bits.
    let key = |b: i64| b ^ ((((b >> 63) as u64) >> 1) as i64);
    let mut ints: Vec<i64> = v.iter().map(|x| key(x.to_bits() as i64)).collect();
    ints.sort_unstable();
    for (x, k) in v.iter_mut().zip(&ints) {
        *x = f64::from_bits(key(*k) as u64);
    }
    let q = |p: f64| {
        let x = p * (v.len() - 1) as f64;
        let (lo, hi) = (libm::floor(x) as usize, libm::ceil(x) as usize);
        v[lo] + (v[hi] - v[lo]) * (x - lo as f64)
    };
    Pcts { mean: v.iter().sum::<f64>() / v.len() as f64, p50: q(0.5), p90: q(0.9), p99: q(0.99) }
}

/// A log-binned histogram of latencies in ms (1/400 of a decade per bin from 1 us to 10^7 ms,
/// so a percentile is within 0.6% of the exact order statistic), for the hundreds of thousands
/// of inter-token gaps of a run without storing and sorting them; the mean is exact.
pub struct Histogram {
    bins: Vec<u64>,
    count: u64,
    sum: f64,
    /// The last value added and its bin: the sequences of one step mostly share their gap.
    last: (f64, usize),
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { bins: vec![0; Self::BINS], count: 0, sum: 0.0, last: (f64::NAN, 0) }
    }
}

impl Histogram {
    const PER_DECADE: f64 = 400.0;
    /// Decades below 1 ms covered (1 us) and bins in all (10 decades).
    const LOW: f64 = 3.0;
    const BINS: usize = 4000;

    pub fn add(&mut self, ms: f64) {
        self.add_n(ms, 1);
    }

    /// Adds `count` equal values.
    pub fn add_n(&mut self, ms: f64, count: u64) {
        if !ms.is_finite() || count == 0 {
            return;
        }
        let b = if ms == self.last.0 {
            self.last.1
        } else {
            let x = if ms > 0.0 { (libm::log10(ms) + Self::LOW) * Self::PER_DECADE } else { 0.0 };
            let b = (x.max(0.0) as usize).min(Self::BINS - 1);
            self.last = (ms, b);
            b
        };
        self.bins[b] += count;
        self.count += count;
        self.sum += ms * count as f64;
    }

    /// p50 / p90 / p99 (each bin's upper edge) and the mean.
    pub fn pcts(&self) -> Pcts {
        if self.count == 0 {
            return Pcts::default();
        }
        let q = |p: f64| {
            let rank = libm::ceil(p * self.count as f64).max(1.0) as u64;
            let mut seen = 0;
            for (b, c) in self.bins.iter().enumerate() {
                seen += c;
                if seen >= rank {
                    return libm::pow(10.0, (b + 1) as f64 / Self::PER_DECADE - Self::LOW);
                }
            }
            0.0
        };
        Pcts { mean: self.sum / self.count as f64, p50: q(0.5), p90: q(0.9), p99: q(0.99) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_sort_in_total_cmp_order() {
        // Negative, signed zeros, ties and a wide range, in a scrambled order.
        let mut v: Vec<f64> = (0..997u64).map(|i| ((i * 7919 % 997) as f64 - 400.0) * 1.37e-3 * if i % 5 == 0 { 1e6 } else { 1.0 }).collect();
        v.extend([0.0, -0.0, 0.0, f64::NAN, 5.0, 5.0, -1e300, 1e300]);
        let mut want = v.clone();
        want.retain(|x| x.is_finite());
        want.sort_by(|a, b| a.total_cmp(b));
        let q = |p: f64| {
            let x = p * (want.len() - 1) as f64;
            let (lo, hi) = (libm::floor(x) as usize, libm::ceil(x) as usize);
            want[lo] + (want[hi] - want[lo]) * (x - lo as f64)
        };
        let mean = want.iter().sum::<f64>() / want.len() as f64;
        let got = pcts(v);
        assert_eq!([got.mean, got.p50, got.p90, got.p99].map(f64::to_bits), [mean, q(0.5), q(0.9), q(0.99)].map(f64::to_bits));
    }
}

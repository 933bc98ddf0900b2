//! The device-side sums of a set of operators that the step pricer (`price`) adds up, and the
//! grid sizes it prices them at and interpolates between (`grid`). Its own file to keep `price` under 600 lines (moved as it
//! was, no behaviour change).

/// Device-side sums of a set of operators.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Part {
    /// Device time including each operator's exposed launch cost.
    pub device_us: f64,
    /// The launch share of `device_us`.
    pub launch_us: f64,
    /// Operator launches (repeats included).
    pub ops: f64,
    /// Host time to issue the operators eagerly (`cost::dispatch::host_us`, repeats included).
    pub host_us: f64,
    /// Collectives among the operators (repeats included): each pays the engine's eager
    /// per-collective host cost.
    pub collectives: f64,
    pub energy_uj: f64,
    pub flops: f64,
    pub rel_error: f64,
}

impl Part {
    /// `a + (b - a) t`, field by field (the error bound is the larger one).
    pub(super) fn lerp(a: &Part, b: &Part, t: f64) -> Part {
        let l = |x: f64, y: f64| x + (y - x) * t;
        Part {
            device_us: l(a.device_us, b.device_us),
            launch_us: l(a.launch_us, b.launch_us),
            ops: l(a.ops, b.ops),
            host_us: l(a.host_us, b.host_us),
            collectives: l(a.collectives, b.collectives),
            energy_uj: l(a.energy_uj, b.energy_uj),
            flops: l(a.flops, b.flops),
            rel_error: a.rel_error.max(b.rel_error),
        }
    }

    /// Every additive field times `x` (the error bound stays).
    pub(super) fn scaled(&self, x: f64) -> Part {
        Part { device_us: self.device_us * x, launch_us: self.launch_us * x, ops: self.ops * x, host_us: self.host_us * x, energy_uj: self.energy_uj * x, flops: self.flops * x, rel_error: self.rel_error, collectives: self.collectives * x }
    }

    pub(super) fn add(&mut self, o: &Part) {
        self.device_us += o.device_us;
        self.launch_us += o.launch_us;
        self.ops += o.ops;
        self.host_us += o.host_us;
        self.collectives += o.collectives;
        self.energy_uj += o.energy_uj;
        self.flops += o.flops;
        self.rel_error = self.rel_error.max(o.rel_error);
    }
}

/// The grid points around `x` and the position between them: exact up to 8, then points half
/// an octave apart (8, 12, 16, 24, 32, 48, ...), so costs are priced at two sizes per octave
/// and interpolated linearly in between. Operator time is close to affine in tokens, sequences
/// and context over such a span (flat while memory-bound, proportional once compute-bound);
/// the grid keeps a full deployment tune to a few thousand operator pricings.
pub fn grid(x: u64) -> (u64, u64, f64) {
    let x = x.max(1);
    if x <= 8 {
        return (x, x, 0.0);
    }
    let p = 1u64 << (63 - x.leading_zeros() as u64); // largest power of two <= x
    let mid = p + p / 2;
    let (lo, hi) = if x < mid { (p, mid) } else { (mid, 2 * p) };
    if lo == x {
        return (x, x, 0.0);
    }
    (lo, hi, (x - lo) as f64 / (hi - lo) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_brackets_within_half_an_octave() {
        for x in [1u64, 7, 8, 9, 12, 13, 16, 17, 33, 100, 1000, 1025, 4097, 123_457] {
            let (lo, hi, f) = grid(x);
            assert!(lo <= x && x <= hi && (0.0..1.0).contains(&f), "{x}");
            assert!((hi - lo) as f64 <= x as f64 / 2.0 + 1.0, "{x}: {lo}..{hi}");
            assert!((lo as f64 + (hi - lo) as f64 * f - x as f64).abs() < 1e-9);
        }
        assert_eq!(grid(1024), (1024, 1024, 0.0));
    }
}

//! The device-side sums of a set of operators that the step pricer (`price`) adds up and
//! interpolates between grid sizes. Its own file to keep `price` under 600 lines (moved as it
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

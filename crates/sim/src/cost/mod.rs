//! The cost model: one file per operator family, and the pieces they share (per-engine time
//! vectors, pipeline overlap, energy, numeric error, the final `Estimate`).
//!
//! Why per-engine vectors: every estimate must explain itself, so times are kept per engine
//! (`Parts`, a fixed array: no allocation) and combined by two rules only: `serial` (a + b) and
//! `overlap` (double-buffered stages: the slower stage's time plus one chunk of the faster,
//! the pipeline fill). The exposed parts then add up to the total by construction.

pub mod attention;
pub mod comm;
pub mod conv;
pub mod dispatch;
pub mod error;
pub mod matmul;
pub mod matmul_rules;
pub mod moe_comm;
pub mod vector;

use crate::device::Device;
use crate::estimate::{Bound, Breakdown, EngineTimes, Estimate, Infeasible, ALL_BOUNDS, ENGINES};
use crate::op::Op;
use crate::tiling::Tiling;

/// Time per engine (index order of `ALL_BOUNDS`), in whatever unit the caller uses.
pub type Parts = [f64; ENGINES];

pub const CUBE: usize = 0;
pub const VECTOR: usize = 1;
pub const HBM: usize = 2;
pub const L2: usize = 3;
pub const MTE1: usize = 4;
pub const MTE2: usize = 5;
pub const MTE3: usize = 6;
pub const FIXPIPE: usize = 7;
pub const LAUNCH: usize = 8;
pub const COMM: usize = 9;

/// MTE2 (GM -> L1/UB) is fastest with 512-byte bursts (D `_10_0010`): a contiguous run shorter
/// than one burst costs as much as a whole one. The matmul model applies it to the runs of A
/// (row-major activations), the vector model to the runs a kernel reads its rows in.
pub const MTE2_BURST_BYTES: f64 = 512.0;

/// How much slower than streaming MTE2 moves data read in contiguous runs of `run_bytes`
/// (`MTE2_BURST_BYTES`): 1 for runs of a burst or more.
#[inline(always)]
pub fn short_run_factor(run_bytes: f64) -> f64 {
    if run_bytes < MTE2_BURST_BYTES { MTE2_BURST_BYTES / run_bytes.max(1.0) } else { 1.0 }
}

/// A `Parts` with one engine set.
#[inline]
pub fn part(engine: usize, t: f64) -> Parts {
    let mut p = [0.0; ENGINES];
    p[engine] = t;
    p
}

#[inline]
pub fn sum(p: &Parts) -> f64 {
    p.iter().sum()
}

#[inline]
pub fn add(a: &Parts, b: &Parts) -> Parts {
    let mut o = *a;
    for i in 0..ENGINES {
        o[i] += b[i];
    }
    o
}

#[inline]
pub fn scale(a: &Parts, s: f64) -> Parts {
    let mut o = *a;
    for v in o.iter_mut() {
        *v *= s;
    }
    o
}

/// Two double-buffered stages over `n` chunks each (D `_10_0033`): the slower stage runs
/// throughout, the faster is exposed for one chunk (the pipeline fill). Taking the smaller of
/// the two chunks keeps the result monotone in both inputs.
#[inline]
pub fn overlap(a: &Parts, b: &Parts, n: f64) -> Parts {
    let (ta, tb) = (sum(a), sum(b));
    let n = if n >= 1.0 { n } else { 1.0 };
    let (big, small, tbig, tsmall) = if ta >= tb { (a, b, ta, tb) } else { (b, a, tb, ta) };
    if tsmall <= 0.0 {
        return *big;
    }
    let fill = (tsmall / n).min(tbig / n);
    add(big, &scale(small, fill / tsmall))
}

/// A stage's time: a scalar on the search hot path, per-engine `Parts` when explaining. The
/// same pipeline code runs on both, so the fast total and the breakdown cannot disagree.
pub trait Stage: Copy {
    fn zero() -> Self;
    fn one(engine: usize, t: f64) -> Self;
    fn total(&self) -> f64;
    fn plus(&self, o: &Self) -> Self;
    fn times(&self, s: f64) -> Self;
}

impl Stage for f64 {
    #[inline(always)]
    fn zero() -> Self {
        0.0
    }
    #[inline(always)]
    fn one(_: usize, t: f64) -> Self {
        t
    }
    #[inline(always)]
    fn total(&self) -> f64 {
        *self
    }
    #[inline(always)]
    fn plus(&self, o: &Self) -> Self {
        self + o
    }
    #[inline(always)]
    fn times(&self, s: f64) -> Self {
        self * s
    }
}

impl Stage for Parts {
    fn zero() -> Self {
        [0.0; ENGINES]
    }
    fn one(engine: usize, t: f64) -> Self {
        part(engine, t)
    }
    fn total(&self) -> f64 {
        sum(self)
    }
    fn plus(&self, o: &Self) -> Self {
        add(self, o)
    }
    fn times(&self, s: f64) -> Self {
        scale(self, s)
    }
}

/// `overlap` for any `Stage`: the slower stage plus one of `n` chunks of the faster.
#[inline(always)]
pub fn overlap_s<S: Stage>(a: S, b: S, n: f64) -> S {
    let inv = if n >= 1.0 { 1.0 / n } else { 1.0 };
    if a.total() >= b.total() {
        a.plus(&b.times(inv))
    } else {
        b.plus(&a.times(inv))
    }
}

/// Device memory as the critical path: when the chip-wide memory time exceeds what the cores
/// need, every on-core engine is hidden behind it, so the exposed time is memory alone.
#[inline]
pub fn memory_bound(exposed: &mut Parts, t_hbm: f64) {
    if t_hbm > sum(exposed) {
        *exposed = [0.0; ENGINES];
        exposed[HBM] = t_hbm;
    }
}

/// Everything an operator model computed, before it becomes an `Estimate`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Raw {
    /// Exposed time per engine in microseconds (adds up to the total).
    pub exposed: Parts,
    /// Busy time per engine on the busiest core, microseconds.
    pub busy: Parts,
    /// Engine-seconds summed over all cores (for energy): cube, vector.
    pub cube_core_us: f64,
    pub vector_core_us: f64,
    pub flops: f64,
    pub hbm_bytes: f64,
    pub cores_used: u32,
    pub waves: u64,
    pub relative_error: f64,
}

/// Turns a `Raw` into an `Estimate`: total, bound, roofline, energy.
pub fn finish(r: &Raw, d: &Device) -> Estimate {
    let total = sum(&r.exposed);
    // The largest exposed part bounds the estimate; an empty estimate (a one-rank collective)
    // is bounded by nothing but its launch.
    let mut best = LAUNCH;
    for i in 0..ENGINES {
        if r.exposed[i] > r.exposed[best] {
            best = i;
        }
    }
    let time_us = if total.is_finite() { total } else { f64::MAX };
    let secs = time_us * 1.0e-6;
    // Energy (ascend-devices.md "Power"): static power for the whole time, plus each engine
    // family's share of the dynamic envelope in proportion to how much of the chip it used.
    let dynamic_w = (d.power_tdp_w - d.power_idle_w).max(0.0);
    let cube_frac = r.cube_core_us * 1.0e-6 / d.cube_cores.max(1) as f64;
    let vec_frac = r.vector_core_us * 1.0e-6 / d.vector_cores.max(1) as f64;
    let mem_frac = r.hbm_bytes / (d.derived.hbm_gbs * 1.0e9).max(1.0);
    let dyn_j = dynamic_w * (d.power_share_cube * cube_frac + d.power_share_vector * vec_frac + d.power_share_memory * mem_frac);
    let energy_uj = (d.power_idle_w * secs + dyn_j) * 1.0e6;
    let busy = EngineTimes::from_array(r.busy);
    let exposed = EngineTimes::from_array(r.exposed);
    Estimate {
        time_us,
        flops: r.flops,
        hbm_bytes: r.hbm_bytes,
        energy_uj,
        bound: ALL_BOUNDS[best],
        breakdown: Breakdown {
            exposed,
            busy,
            cores_used: r.cores_used,
            waves: r.waves,
            overlapped_us: overlapped(&r.busy, &r.exposed),
        },
        arithmetic_intensity: if r.hbm_bytes > 0.0 { r.flops / r.hbm_bytes } else { 0.0 },
        attained_tflops: if time_us > 0.0 { r.flops / secs / 1.0e12 } else { 0.0 },
        relative_error: r.relative_error,
    }
}

/// Engine time hidden behind other engines: busy minus exposed over the on-core engines
/// (device memory and launch are not on-core engines).
fn overlapped(busy: &Parts, exposed: &Parts) -> f64 {
    let mut h = 0.0;
    for i in 0..ENGINES {
        if i != HBM && i != LAUNCH {
            h += busy[i] - exposed[i];
        }
    }
    h.max(0.0)
}

/// Adds estimates of kernels that run one after another (unfused attention).
pub fn chain(parts: &[Estimate]) -> Estimate {
    let mut exposed = [0.0; ENGINES];
    let mut busy = [0.0; ENGINES];
    let mut out = Estimate::default();
    let mut err2 = 0.0;
    for e in parts {
        exposed = add(&exposed, &e.breakdown.exposed.to_array());
        busy = add(&busy, &e.breakdown.busy.to_array());
        out.flops += e.flops;
        out.hbm_bytes += e.hbm_bytes;
        out.energy_uj += e.energy_uj;
        out.breakdown.cores_used = out.breakdown.cores_used.max(e.breakdown.cores_used);
        out.breakdown.waves = out.breakdown.waves.saturating_add(e.breakdown.waves);
        out.breakdown.overlapped_us += e.breakdown.overlapped_us;
        err2 += e.relative_error * e.relative_error;
    }
    out.time_us = sum(&exposed);
    let mut best = 0;
    for i in 1..ENGINES {
        if exposed[i] > exposed[best] {
            best = i;
        }
    }
    out.bound = ALL_BOUNDS[best];
    out.breakdown.exposed = EngineTimes::from_array(exposed);
    out.breakdown.busy = EngineTimes::from_array(busy);
    out.arithmetic_intensity = if out.hbm_bytes > 0.0 { out.flops / out.hbm_bytes } else { 0.0 };
    out.attained_tflops = if out.time_us > 0.0 { out.flops / (out.time_us * 1.0e-6) / 1.0e12 } else { 0.0 };
    out.relative_error = libm::sqrt(err2);
    out
}

/// `a * b` saturating at `u64::MAX`: always the value of `a.saturating_mul(b)`, but cheap
/// as WebAssembly. wasm32 has no 64 x 64 -> 128-bit multiply, so a checked or saturating u64
/// multiply (and, where overflow checks are on as in the dev profile, every plain u64 `*`)
/// becomes a call to the 128-bit multiply routine `__multi3`, several times per evaluation on
/// the search hot path. When both operands are below 2^32 the product is below 2^64 and one
/// plain multiply is exact; only absurd sizes take the saturating path.
#[inline(always)]
pub fn mul_sat(a: u64, b: u64) -> u64 {
    if (a | b) >> 32 == 0 {
        a.wrapping_mul(b) // cannot wrap: both factors < 2^32
    } else {
        a.saturating_mul(b)
    }
}

/// `a.max(b)` with the same rule as `f64::max` (a NaN operand yields the other one), inline.
/// As WebAssembly `f64::max` is a call to the `fmax` routine, because wasm's own `f64.max`
/// propagates NaN. (Signed zeros, where the rule leaves the choice open, never reach the
/// hot path: its terms are sums and products of non-negative numbers.)
#[inline(always)]
pub fn max_f(a: f64, b: f64) -> f64 {
    if a.is_nan() || a < b {
        b
    } else {
        a
    }
}

/// Rounds `x` up to a multiple of `a` (a >= 1), saturating.
#[inline]
pub fn align(x: u64, a: u64) -> u64 {
    let a = a.max(1);
    x.div_ceil(a).saturating_mul(a)
}

/// Costs `op` under `tiling` on `device`; an infeasible tiling says exactly why.
pub fn estimate(op: &Op, tiling: &Tiling, device: &Device) -> Result<Estimate, Infeasible> {
    match op {
        Op::Matmul { .. } => matmul::estimate(op, tiling, device),
        Op::Vector { .. } => vector::estimate(op, tiling, device),
        Op::Attention { .. } => attention::estimate(op, tiling, device),
        Op::Conv2d { .. } => conv::estimate(op, tiling, device),
        Op::Comm { .. } => comm::estimate(op, tiling, device),
        Op::GroupedMatmul { .. } | Op::MoeComm { .. } => moe_comm::estimate(op, tiling, device),
    }
}

/// Rejects absurd shapes up front so no arithmetic below can overflow into nonsense.
pub fn check_dims(dims: &[(&str, u64)]) -> Result<(), Infeasible> {
    let mut prod: f64 = 1.0;
    for (name, v) in dims {
        if *v == 0 {
            return Err(Infeasible::new(format!("{name} must be at least 1")));
        }
        if *v > 1 << 40 {
            return Err(Infeasible::new(format!("{name} = {v} is beyond what the model handles (2^40)")));
        }
        prod *= *v as f64;
    }
    if prod > 1.0e21 {
        return Err(Infeasible::new("problem too large for the model (more than 1e21 elements of work)"));
    }
    Ok(())
}

/// The engine label of a `Parts` index (for messages).
pub fn engine_name(i: usize) -> &'static str {
    ALL_BOUNDS.get(i).map(|b: &Bound| b.name()).unwrap_or("?")
}

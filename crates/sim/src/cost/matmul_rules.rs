//! The TCubeTiling feasibility rules (D `atlasascendc_api_07_0673`): fractal alignment, the
//! A / B / accumulator tiles fitting L0A / L0B / L0C (twice when double-buffered), the L1
//! working set, and depthA1 / depthB1 being one or two L1 loads deep. Failures are numbers
//! (`Reject`), formatted into a sentence only when someone asks.

use super::matmul::Ctx;
use super::mul_sat;
use crate::tiling::MatmulTiling;

/// Why a matmul tiling is infeasible, as numbers (formatted only when asked).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reject {
    Align { field: &'static str, value: u64, multiple: u64 },
    Zero { field: &'static str },
    Order(u8),
    L0a { need: u64, have: u64 },
    L0b { need: u64, have: u64 },
    L0c { need: u64, have: u64 },
    L1 { need: u64, have: u64 },
    Depth { field: &'static str, depth: u64, step: u64 },
}

impl Reject {
    /// A sentence saying exactly why.
    pub fn message(&self) -> String {
        match *self {
            Reject::Align { field, value, multiple } => format!("{field} = {value} is not a multiple of {multiple} (fractal alignment)"),
            Reject::Zero { field } => format!("{field} must be at least 1"),
            Reject::Order(o) => format!("iterateOrder = {o} must be 0 (M first) or 1 (N first)"),
            Reject::L0a { need, have } => format!("A tile overflows L0A by {} bytes ({need} > {have})", need - have),
            Reject::L0b { need, have } => format!("B tile overflows L0B by {} bytes ({need} > {have})", need - have),
            Reject::L0c { need, have } => format!("accumulator overflows L0C by {} bytes ({need} > {have})", need - have),
            Reject::L1 { need, have } => format!("L1 working set overflows L1 by {} bytes ({need} > {have})", need - have),
            Reject::Depth { field, depth, step } => format!("{field} = {depth} must be a multiple of {step} (whole L1 loads; twice or more double-buffers)"),
        }
    }
}

#[inline(always)]
pub(crate) fn check(c: &Ctx, t: &MatmulTiling) -> Result<(), Reject> {
    let fields: [(&'static str, u32, u64); 5] = [
        ("singleCoreM", t.single_core_m, 16), ("singleCoreN", t.single_core_n, 16),
        ("baseM", t.base_m, 16), ("baseN", t.base_n, 16), ("baseK", t.base_k, c.c0),
    ];
    for (field, v, mul) in fields {
        if v == 0 {
            return Err(Reject::Zero { field });
        }
        // The multiples (16, C0 in 8/16/32) are powers of two: a mask, not a divide.
        if v as u64 & (mul - 1) != 0 {
            return Err(Reject::Align { field, value: v as u64, multiple: mul });
        }
    }
    let steps: [(&'static str, u32); 6] = [
        ("stepM", t.step_m), ("stepN", t.step_n), ("stepKa", t.step_ka), ("stepKb", t.step_kb),
        ("depthA1", t.depth_a1), ("depthB1", t.depth_b1),
    ];
    for (field, v) in steps {
        if v == 0 {
            return Err(Reject::Zero { field });
        }
    }
    if t.iterate_order > 1 {
        return Err(Reject::Order(t.iterate_order));
    }
    // Tile sizes in u64 with `mul_sat`: tiling fields are any u32, so an absurd tiling must
    // saturate (and be rejected) rather than overflow, and `mul_sat` keeps that cheap as wasm.
    let (bm, bn, bk) = (t.base_m as u64, t.base_n as u64, t.base_k as u64);
    let tile_a = mul_sat(mul_sat(bm, bk), c.a_l);
    let need = mul_sat(tile_a, 1 + t.db_l0a as u64);
    if need > c.l0a {
        return Err(Reject::L0a { need, have: c.l0a });
    }
    let tile_b = mul_sat(mul_sat(bk, bn), c.b_l);
    let need = mul_sat(tile_b, 1 + t.db_l0b as u64);
    if need > c.l0b {
        return Err(Reject::L0b { need, have: c.l0b });
    }
    // L0C accumulates in FP32 / INT32 (4 bytes).
    let need = mul_sat(mul_sat(bm, bn), 4 * (1 + t.db_l0c as u64));
    if need > c.l0c {
        return Err(Reject::L0c { need, have: c.l0c });
    }
    let sa = mul_sat(t.step_m as u64, t.step_ka as u64);
    if !(t.depth_a1 as u64).is_multiple_of(sa) {
        return Err(Reject::Depth { field: "depthA1", depth: t.depth_a1 as u64, step: sa });
    }
    let sb = mul_sat(t.step_n as u64, t.step_kb as u64);
    if !(t.depth_b1 as u64).is_multiple_of(sb) {
        return Err(Reject::Depth { field: "depthB1", depth: t.depth_b1 as u64, step: sb });
    }
    let need = mul_sat(t.depth_a1 as u64, tile_a).saturating_add(mul_sat(t.depth_b1 as u64, tile_b));
    if need > c.l1 {
        return Err(Reject::L1 { need, have: c.l1 });
    }
    Ok(())
}


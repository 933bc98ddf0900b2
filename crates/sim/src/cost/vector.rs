//! Vector-unit operators: UB tiling (tile length, double buffering, 32-byte blocks), vector
//! throughput against MTE2 (GM -> UB) and MTE3 (UB -> GM) traffic, chip-wide memory bandwidth.
//!
//! Instruction counts per element come from each operator's formula (e.g. RMSNorm: square,
//! reduce-add, rsqrt per row, scale, gamma = about 5), not from measurements. The vector unit
//! moves 256 bytes per cycle: 128 FP16 lanes (S2) or 64 FP32; BF16 and INT8 are computed in
//! FP32. UB blocks are 32 bytes and tiles must be 32-byte aligned (D `_10_0010`). Double
//! buffering overlaps copy-in, compute and copy-out (D `_10_0033`). The vector pipe sustains
//! `vector_efficiency` of its peak and pays `vector_tile_sync_cycles` per UB tile (profile).

use super::{error, finish, Raw, HBM, LAUNCH, MTE2, MTE3, VECTOR};
use crate::device::Device;
use crate::dtype::DType;
use crate::estimate::{Estimate, Infeasible};
use crate::op::{Op, VectorKind};
use crate::tiling::{Tiling, VectorTiling};

/// Per element: input bytes, output bytes, instructions, whether whole rows must be in UB,
/// and FP32 scratch bytes in UB.
struct Spec {
    in_b: f64,
    out_b: f64,
    instr: f64,
    row: bool,
    tmp_b: f64,
}

fn spec(kind: VectorKind, t: DType) -> Spec {
    let b = t.bytes() as f64;
    let s = |in_b, out_b, instr, row, tmp_b| Spec { in_b, out_b, instr, row, tmp_b };
    match kind {
        VectorKind::Elementwise => s(2.0 * b, b, 1.0, false, 0.0),
        VectorKind::Activation => s(b, b, 5.0, false, 4.0),
        VectorKind::SwiGlu => s(2.0 * b, b, 5.0, false, 4.0),
        VectorKind::Softmax => s(b, b, 5.0, true, 4.0),
        VectorKind::LayerNorm => s(b, b, 8.0, true, 4.0),
        VectorKind::RmsNorm => s(b, b, 5.0, true, 4.0),
        // x plus its cos/sin table entries (half a row each): 2 muls, an add, a permute.
        VectorKind::Rotary => s(2.0 * b, b, 4.0, false, 4.0),
        VectorKind::Reduce => s(b, 0.0, 1.0, true, 0.0),
        // FP32 -> FP16, else -> FP32.
        VectorKind::Cast => s(b, if t == DType::Fp32 { 2.0 } else { 4.0 }, 1.0, false, 0.0),
        VectorKind::Quantize => s(b, 1.0, 4.0, true, 4.0),
        VectorKind::Gather => s(b, b, 0.0, false, 0.0),
        VectorKind::Scale => s(b, b, 1.0, false, 0.0),
        // Packed weights in (INT4: half a byte), the 16-bit workspace out; a cast, the offset
        // add and the scale multiply per element, computed in FP32.
        VectorKind::Antiquant => s(t.size(), 2.0, 3.0, false, 4.0),
    }
}

struct Shape {
    rows: u64,
    row_len: u64,
    kind: VectorKind,
    t: DType,
}

fn shape(op: &Op) -> Result<Shape, Infeasible> {
    match *op {
        Op::Vector { kind, rows, row_len, dtype } => {
            super::check_dims(&[("rows", rows), ("row_len", row_len)])?;
            Ok(Shape { rows, row_len, kind, t: dtype })
        }
        _ => Err(Infeasible::new("not a vector operator")),
    }
}

/// Elements per 32-byte UB block.
fn block_elems(t: DType) -> u64 {
    32 / t.bytes()
}

/// Bytes of UB per element of a tile (inputs, outputs, scratch).
fn ub_per_elem(sp: &Spec) -> f64 {
    sp.in_b + sp.out_b + sp.tmp_b
}

/// Candidate tile lengths: whole aligned rows times powers of two for row operators (when a
/// row fits UB), else powers of two from one 32-byte block, up to what UB holds.
pub fn tile_candidates(op: &Op, d: &Device) -> Vec<i64> {
    let Ok(s) = shape(op) else { return Vec::new() };
    let sp = spec(s.kind, s.t);
    let cap = (d.ub_bytes as f64 / ub_per_elem(&sp).max(1.0)) as u64;
    let row_al = super::align(s.row_len, block_elems(s.t));
    let unit = if sp.row && row_al <= cap { row_al } else { block_elems(s.t) };
    let mut v = Vec::new();
    let mut x = unit;
    while x <= cap && v.len() < 24 {
        v.push(x as i64);
        x = x.saturating_mul(2);
    }
    if v.is_empty() {
        v.push(unit as i64);
    }
    v
}

/// The largest double-buffered tile that fits, no larger than one core's share.
pub fn default_tiling(op: &Op, d: &Device) -> Option<VectorTiling> {
    let s = shape(op).ok()?;
    let cands = tile_candidates(op, d);
    let total = s.rows.saturating_mul(super::align(s.row_len, block_elems(s.t)));
    let share = total.div_ceil(d.vector_cores.max(1) as u64);
    for db in [true, false] {
        let mut pick = None;
        for &c in &cands {
            let t = VectorTiling { tile_len: c as u32, double_buffer: db };
            if check(&s, &t, d).is_ok() && (pick.is_none() || (c as u64) <= share.max(1)) {
                pick = Some(t);
            }
        }
        if pick.is_some() {
            return pick;
        }
    }
    None
}

/// Feasibility; Ok(passes) says how often the input is read (2: rows too long for UB).
fn check(s: &Shape, t: &VectorTiling, d: &Device) -> Result<u32, String> {
    let sp = spec(s.kind, s.t);
    let b = s.t.bytes();
    let tl = t.tile_len as u64;
    if tl == 0 {
        return Err("tileLen must be at least 1".into());
    }
    if !(tl * b).is_multiple_of(32) {
        return Err(format!("tileLen {tl} x {b} bytes = {} bytes is not 32-byte aligned (UB blocks are 32 bytes)", tl * b));
    }
    let need = (tl as f64 * ub_per_elem(&sp) * if t.double_buffer { 2.0 } else { 1.0 }) as u64;
    if need > d.ub_bytes {
        return Err(format!("tile overflows UB by {} bytes ({need} > {})", need - d.ub_bytes, d.ub_bytes));
    }
    let row_al = super::align(s.row_len, block_elems(s.t));
    let row_fits = row_al as f64 * ub_per_elem(&sp) <= d.ub_bytes as f64;
    if sp.row && row_fits && !tl.is_multiple_of(row_al) {
        return Err(format!("tileLen {tl} must hold whole rows: a multiple of the aligned row length {row_al}"));
    }
    Ok(if sp.row && !row_fits { 2 } else { 1 })
}

/// `Op::Vector` entry point.
pub fn estimate(op: &Op, tiling: &Tiling, d: &Device) -> Result<Estimate, Infeasible> {
    let s = shape(op)?;
    let t = match tiling {
        Tiling::Default => default_tiling(op, d).ok_or_else(|| Infeasible::new("no vector tiling fits UB"))?,
        Tiling::Vector(t) => *t,
        other => return Err(Infeasible::new(format!("a vector operator takes a vector tiling, not '{}'", other.describe()))),
    };
    let passes = check(&s, &t, d).map_err(Infeasible::new)? as f64;
    let sp = spec(s.kind, s.t);
    let row_al = super::align(s.row_len, block_elems(s.t));
    let elems = s.rows as f64 * if sp.row { row_al as f64 } else { s.row_len as f64 };
    let tile = (t.tile_len as f64).min(super::align(elems as u64, block_elems(s.t)) as f64);
    let tiles = (elems / tile).ceil().max(1.0);
    let vcores = d.vector_cores.max(1) as f64;
    let per_core = (tiles / vcores).ceil();
    let cores_used = tiles.min(vcores);
    let compute_bytes = if s.t == DType::Fp16 { 2.0 } else { 4.0 };
    // Sustained lanes: the peak times the profile's vector efficiency.
    let epc = d.vector_lanes_fp16 * 2.0 / compute_bytes * d.vector_efficiency;
    // Per tile, in vector-clock cycles. Reductions write one value per row.
    let rows_per_tile = if sp.row { (tile / row_al as f64).max(1.0) } else { 0.0 };
    let out_tile = tile * sp.out_b + if s.kind == VectorKind::Reduce { rows_per_tile * s.t.bytes() as f64 } else { 0.0 };
    // SwiGLU's input row holds the gate half and the up half (row_len elements each); the
    // kernel reads each half of each row as its own run (torch_npu's swiglu: a [.., 100] input
    // moves at ~0.31 TB/s against ~1.22 TB/s for long rows, set 3's FlagGems rows), so a half
    // shorter than an MTE2 burst costs a whole burst (`cost::short_run_factor`, the rule the
    // matmul model applies to A's runs). Other kinds read their tiles contiguously.
    let run_slow = if s.kind == VectorKind::SwiGlu { super::short_run_factor((s.row_len * s.t.bytes()) as f64) } else { 1.0 };
    let mte2 = tile * sp.in_b * passes * run_slow / d.gm_bytes_per_cycle;
    // Each tile also pays its hand-offs (MTE2 -> V -> MTE3 flags, loop control).
    let vec = tile * sp.instr / epc + d.vector_tile_sync_cycles;
    let mte3 = out_tile / d.ub_to_gm_bytes_per_cycle;
    let us = 1.0 / d.vector_clock_mhz;
    let stages = [(MTE2, mte2), (VECTOR, vec), (MTE3, mte3)];
    let mut exposed = [0.0; super::ENGINES];
    if t.double_buffer {
        // Pipeline of three stages over `per_core` tiles: the slowest runs throughout, the
        // others are exposed for one tile each (fill and drain).
        let mut slow = 0;
        for j in 1..3 {
            if stages[j].1 > stages[slow].1 {
                slow = j;
            }
        }
        for (j, (e, v)) in stages.iter().enumerate() {
            exposed[*e] = if j == slow { v * per_core * us } else { v * us };
        }
    } else {
        for (e, v) in stages {
            exposed[e] = v * per_core * us;
        }
    }
    let mut busy = [0.0; super::ENGINES];
    for (e, v) in stages {
        busy[e] = v * per_core * us;
    }
    let in_total = elems * sp.in_b * passes;
    let out_total = if s.kind == VectorKind::Reduce { s.rows as f64 * s.t.bytes() as f64 } else { elems * sp.out_b };
    let hbm_bytes = in_total + out_total;
    // Short runs occupy the memory path a whole burst each (the same rule as MTE2's above).
    let t_hbm = (in_total * run_slow + out_total) / (d.derived.hbm_gbs * 1.0e3);
    super::memory_bound(&mut exposed, t_hbm);
    busy[HBM] = t_hbm;
    exposed[LAUNCH] = d.launch_vector_us;
    busy[LAUNCH] = d.launch_vector_us;
    let reduce_len = if sp.row { s.row_len } else { 0 };
    let raw = Raw {
        exposed,
        busy,
        cube_core_us: 0.0,
        vector_core_us: vec * tiles * us,
        flops: s.rows as f64 * s.row_len as f64 * sp.instr,
        hbm_bytes,
        cores_used: cores_used as u32,
        waves: per_core as u64,
        relative_error: error::vector(s.t, sp.instr, reduce_len),
    };
    Ok(finish(&raw, d))
}

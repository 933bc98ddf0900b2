//! The tiling axes the tuner searches, and a quick coordinate-descent tiler.
//!
//! Why not the device model's axes as they are: TCubeTiling's L1 depths must equal
//! stepM x stepKa (single-buffered) or twice that (double-buffered), so searching `depthA1`
//! freely makes nearly every random point infeasible. The tuner searches the equivalent choice
//! instead, `l1DbA` / `l1DbB` (0: single, 1: double buffered), and derives the depth.

use tunelab_sim::cost::{estimate, matmul};
use tunelab_sim::device::Device;
use tunelab_sim::estimate::Estimate;
use tunelab_sim::tiling::{Axis, MatmulTiling, Tiling};
use tunelab_sim::tuning::{default_tiling, tiling_axes, tiling_from_assignment};
use tunelab_sim::Op;

/// Searched axes of `op` (depths replaced by L1 double-buffer switches).
pub fn search_axes(op: &Op, device: &Device) -> Vec<Axis> {
    tiling_axes(op, device)
        .into_iter()
        // An axis with no candidates cannot be searched (and must never be indexed).
        .filter(|a| !a.values.is_empty())
        .map(|a| match a.name.as_str() {
            "depthA1" => Axis { name: "l1DbA".into(), values: vec![0, 1] },
            "depthB1" => Axis { name: "l1DbB".into(), values: vec![0, 1] },
            _ => a,
        })
        .collect()
}

/// The value of a searched axis in a tiling.
pub fn value_in(t: &Tiling, axis: &str) -> Option<i64> {
    match t {
        Tiling::Matmul(m) => match axis {
            "l1DbA" => Some((m.depth_a1 >= 2 * m.step_m * m.step_ka) as i64),
            "l1DbB" => Some((m.depth_b1 >= 2 * m.step_n * m.step_kb) as i64),
            _ => m.get(axis),
        },
        Tiling::Vector(v) => match axis { "tileLen" => Some(v.tile_len as i64), "doubleBuffer" => Some(v.double_buffer as i64), _ => None },
        Tiling::Flash(f) => match axis { "blockQ" => Some(f.block_q as i64), "blockKv" => Some(f.block_kv as i64), _ => None },
        Tiling::Default => None,
    }
}

/// The tiling for searched-axis values (missing axes take `tiling_from_assignment`'s defaults).
pub fn to_tiling(op: &Op, values: &[(String, i64)]) -> Result<Tiling, String> {
    let get = |n: &str, d: i64| values.iter().find(|(k, _)| k == n).map(|(_, v)| *v).unwrap_or(d);
    let mut out: Vec<(String, i64)> = Vec::with_capacity(values.len());
    for (k, v) in values {
        match k.as_str() {
            "l1DbA" => out.push(("depthA1".into(), get("stepM", 1) * get("stepKa", 4) * (1 + v.clamp(&0, &1)))),
            "l1DbB" => out.push(("depthB1".into(), get("stepN", 1) * get("stepKb", 4) * (1 + v.clamp(&0, &1)))),
            _ => out.push((k.clone(), *v)),
        }
    }
    tiling_from_assignment(op, &out)
}

/// Sweeps of coordinate descent before giving up.
const PASSES: usize = 4;
/// Axes with at most this many values take part in pair moves.
const PAIR_LEVELS: usize = 10;

/// Coordinate descent from the default tiling: single-axis moves until none helps, then one
/// sweep of pair moves (coupled axes such as baseM x baseN), repeated while that helps. Never
/// slower than the default tiling. Matmuls are timed with the allocation-free `matmul::time_us`
/// (the function the exhaustive search uses), so a descent costs about a millisecond.
pub fn descend(op: &Op, device: &Device) -> Result<Estimate, String> {
    let def = default_tiling(op, device);
    let start = estimate(op, &def, device).or_else(|_| estimate(op, &Tiling::Default, device)).map_err(|e| e.reason)?;
    let axes = search_axes(op, device);
    if axes.is_empty() {
        return Ok(start);
    }
    let init: Vec<i64> = axes.iter().map(|a| value_in(&def, &a.name).unwrap_or(a.values[0])).collect();
    let names: Vec<&str> = axes.iter().map(|a| a.name.as_str()).collect();
    let (best_vals, _) = match (op, &def) {
        (Op::Matmul { .. }, Tiling::Matmul(t0)) => {
            let ctx = matmul::Ctx::new(matmul::problem(op).map_err(|e| e.reason)?, device);
            let slots = MatmulSlots::new(&names);
            let time = |v: &[i64]| {
                let t = slots.apply(t0, v)?;
                matmul::time_us(&ctx, &t)
            };
            sweep(&axes, init, start.time_us, time)
        }
        _ => {
            let time = |v: &[i64]| {
                let assign: Vec<(String, i64)> = names.iter().zip(v).map(|(n, x)| (n.to_string(), *x)).collect();
                to_tiling(op, &assign).ok().and_then(|t| estimate(op, &t, device).ok()).map(|e| e.time_us)
            };
            sweep(&axes, init, start.time_us, time)
        }
    };
    let assign: Vec<(String, i64)> = names.iter().zip(&best_vals).map(|(n, x)| (n.to_string(), *x)).collect();
    match to_tiling(op, &assign).ok().and_then(|t| estimate(op, &t, device).ok()) {
        Some(e) if e.time_us < start.time_us => Ok(e),
        _ => Ok(start),
    }
}

/// The searched matmul axes resolved to tiling fields once per descent. Why: a descent times a
/// few hundred candidates per matmul and a deployment tune descends thousands of matmuls;
/// setting fields by name (string compares per axis per candidate) cost several times the
/// timing itself. `apply` gives exactly the tiling the by-name path gave.
struct MatmulSlots {
    /// Per axis: the `MATMUL_AXES` position it sets; None for the L1 double-buffer switches
    /// (they set no field, the depths are derived from them) and for a name the tiling does not
    /// know (`unknown`).
    fields: Vec<Option<usize>>,
    /// Some axis names no tiling field: every candidate is then invalid, as `set` errs.
    unknown: bool,
    /// Axis positions of the `l1DbA` / `l1DbB` switches (first occurrence), if searched.
    db_a: Option<usize>,
    db_b: Option<usize>,
}

impl MatmulSlots {
    fn new(names: &[&str]) -> MatmulSlots {
        let is_switch = |n: &str| n.starts_with("l1Db");
        let fields: Vec<Option<usize>> = names.iter().map(|n| if is_switch(n) { None } else { MatmulTiling::field_index(n) }).collect();
        let unknown = names.iter().zip(&fields).any(|(n, f)| !is_switch(n) && f.is_none());
        let db_a = names.iter().position(|m| *m == "l1DbA");
        let db_b = names.iter().position(|m| *m == "l1DbB");
        MatmulSlots { fields, unknown, db_a, db_b }
    }

    /// `t0` with the axis values `v` set (None: a value out of its field's range).
    fn apply(&self, t0: &MatmulTiling, v: &[i64]) -> Option<MatmulTiling> {
        if self.unknown {
            return None;
        }
        let mut t = *t0;
        for (f, x) in self.fields.iter().zip(v) {
            if let Some(i) = f {
                if !t.try_set_at(*i, *x) {
                    return None;
                }
            }
        }
        let flag = |p: Option<usize>| p.map_or(1, |i| v[i] + 1) as u32;
        t.depth_a1 = t.step_m * t.step_ka * flag(self.db_a);
        t.depth_b1 = t.step_n * t.step_kb * flag(self.db_b);
        Some(t)
    }
}

/// The descent itself over value vectors; returns the best values and time.
fn sweep(axes: &[Axis], mut cur: Vec<i64>, mut best: f64, time: impl Fn(&[i64]) -> Option<f64>) -> (Vec<i64>, f64) {
    for _ in 0..PASSES {
        let mut changed = false;
        for (i, a) in axes.iter().enumerate() {
            for &v in &a.values {
                let keep = cur[i];
                if v == keep {
                    continue;
                }
                cur[i] = v;
                match time(&cur) {
                    Some(t) if t < best => {
                        best = t;
                        changed = true;
                    }
                    _ => cur[i] = keep,
                }
            }
        }
        if changed {
            continue;
        }
        for i in 0..axes.len() {
            for j in i + 1..axes.len() {
                if axes[i].values.len() > PAIR_LEVELS || axes[j].values.len() > PAIR_LEVELS {
                    continue;
                }
                for &vi in &axes[i].values {
                    for &vj in &axes[j].values {
                        let keep = (cur[i], cur[j]);
                        if (vi, vj) == keep {
                            continue;
                        }
                        (cur[i], cur[j]) = (vi, vj);
                        match time(&cur) {
                            Some(t) if t < best => {
                                best = t;
                                changed = true;
                            }
                            _ => (cur[i], cur[j]) = keep,
                        }
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    (cur, best)
}

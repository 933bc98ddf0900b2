//! Tiling search support as plain data (no dependency on a search crate): the tunable axes of
//! an operator, a tiling from an assignment of them, the model's own heuristic tiling, and a
//! fast exhaustive search that evaluates every valid tiling without allocating per evaluation.

use crate::cost::{self, attention, conv, matmul, vector};
use crate::device::Device;
use crate::estimate::Estimate;
use crate::op::{AttentionKind, Op};
use crate::tiling::{Axis, FlashTiling, MatmulTiling, Tiling, VectorTiling, MATMUL_AXES};

/// Ways to split an aligned dimension over cores: 24-core chips (2 x 3 x 4) and 20-core chips
/// (4 x 5, 2 x 10), whose core count has a factor of 5.
const NSPLITS: usize = 13;
const SPLITS: [u64; NSPLITS] = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32];
const BASE_MN: [u64; 5] = [16, 32, 64, 128, 256];
const BASE_K_C0: [u64; 5] = [1, 2, 4, 8, 16];
const STEP_MN: [u32; 2] = [1, 2];
const STEP_K: [u32; 4] = [1, 2, 4, 8];
const DEPTHS: [i64; 6] = [1, 2, 4, 8, 16, 32];
const FLASH_Q: [u32; 5] = [16, 32, 64, 128, 256];
const FLASH_KV: [u32; 6] = [16, 32, 64, 128, 256, 512];

/// Candidate per-core block sizes for an aligned dimension: even splits, aligned to 16.
fn single_core_values(aligned: u64, out: &mut [u64; NSPLITS]) -> usize {
    let mut n = 0;
    for d in SPLITS {
        let v = cost::align(aligned.div_ceil(d), 16);
        if v >= 16 && !out[..n].contains(&v) {
            out[n] = v;
            n += 1;
        }
    }
    out[..n].sort_unstable();
    n
}

fn base_values(aligned: u64, cands: &[u64], out: &mut [u64; 5]) -> usize {
    let mut n = 0;
    for &v in cands {
        // A base larger than the whole dimension only adds padding; keep the first that covers it.
        if v <= aligned || n == 0 {
            out[n] = v;
            n += 1;
        }
        if v >= aligned {
            break;
        }
    }
    n
}

/// The matmul problem behind an op whose tiling is a TCubeTiling.
fn matmul_problem(op: &Op) -> Option<matmul::Problem> {
    match op {
        Op::Matmul { .. } => matmul::problem(op).ok(),
        Op::Conv2d { .. } => conv::problem(op).ok(),
        _ => None,
    }
}

/// Tunable fields of `op` and their candidate values (empty: nothing to tune).
pub fn tiling_axes(op: &Op, device: &Device) -> Vec<Axis> {
    let ax = |name: &str, values: Vec<i64>| Axis { name: name.to_string(), values };
    if let Some(p) = matmul_problem(op) {
        let c = matmul::Ctx::new(p, device);
        let (mal, nal, kal) = c.aligned();
        let (mut sm, mut sn) = ([0u64; NSPLITS], [0u64; NSPLITS]);
        let (nsm, nsn) = (single_core_values(mal, &mut sm), single_core_values(nal, &mut sn));
        let (mut bm, mut bn, mut bk) = ([0u64; 5], [0u64; 5], [0u64; 5]);
        let kc: [u64; 5] = BASE_K_C0.map(|f| f * c.c0());
        let (nbm, nbn, nbk) = (base_values(mal, &BASE_MN, &mut bm), base_values(nal, &BASE_MN, &mut bn), base_values(kal, &kc, &mut bk));
        let v = |s: &[u64]| s.iter().map(|&x| x as i64).collect::<Vec<i64>>();
        let steps = |s: &[u32]| s.iter().map(|&x| x as i64).collect::<Vec<i64>>();
        return vec![
            ax(MATMUL_AXES[0], v(&sm[..nsm])), ax(MATMUL_AXES[1], v(&sn[..nsn])),
            ax(MATMUL_AXES[2], v(&bm[..nbm])), ax(MATMUL_AXES[3], v(&bn[..nbn])), ax(MATMUL_AXES[4], v(&bk[..nbk])),
            ax(MATMUL_AXES[5], DEPTHS.to_vec()), ax(MATMUL_AXES[6], DEPTHS.to_vec()),
            ax(MATMUL_AXES[7], steps(&STEP_MN)), ax(MATMUL_AXES[8], steps(&STEP_MN)),
            ax(MATMUL_AXES[9], steps(&STEP_K)), ax(MATMUL_AXES[10], steps(&STEP_K)),
            ax(MATMUL_AXES[11], vec![0, 1]), ax(MATMUL_AXES[12], vec![0, 1]),
            ax(MATMUL_AXES[13], vec![0, 1]), ax(MATMUL_AXES[14], vec![0, 1]),
        ];
    }
    match op {
        Op::Vector { .. } => vec![ax("tileLen", vector::tile_candidates(op, device)), ax("doubleBuffer", vec![0, 1])],
        Op::Attention { kind: AttentionKind::Flash, .. } => vec![
            ax("blockQ", FLASH_Q.iter().map(|&x| x as i64).collect()),
            ax("blockKv", FLASH_KV.iter().map(|&x| x as i64).collect()),
        ],
        Op::Attention { kind: AttentionKind::Decode, .. } => {
            vec![ax("blockKv", FLASH_KV.iter().map(|&x| x as i64).collect())]
        }
        _ => Vec::new(),
    }
}

/// A device-independent starting matmul tiling: 128 x 256 x (128 bytes of K), L1 double
/// buffered four K steps deep, L0A/L0B double buffered (a common Ascend C starting point).
pub fn base_matmul(c0: u64) -> MatmulTiling {
    MatmulTiling {
        single_core_m: 128, single_core_n: 256, base_m: 128, base_n: 256, base_k: (4 * c0) as u32,
        depth_a1: 8, depth_b1: 8, step_m: 1, step_n: 1, step_ka: 4, step_kb: 4, iterate_order: 0,
        db_l0a: true, db_l0b: true, db_l0c: false,
    }
}

/// A tiling from `(axis name, value)` pairs; fields not named keep `default_tiling`'s
/// device-independent values (`base_matmul`, whole-tile vector, 128 x 128 flash).
pub fn tiling_from_assignment(op: &Op, values: &[(String, i64)]) -> Result<Tiling, String> {
    if let Some(p) = matmul_problem(op) {
        let mut t = base_matmul(p.c0());
        for (k, v) in values {
            t.set(k, *v)?;
        }
        return Ok(Tiling::Matmul(t));
    }
    let get = |name: &str, lo: i64, hi: i64| -> Result<Option<u32>, String> {
        match values.iter().find(|(k, _)| k == name) {
            None => Ok(None),
            Some((_, v)) if (lo..=hi).contains(v) => Ok(Some(*v as u32)),
            Some((_, v)) => Err(format!("tiling field {name} = {v} out of range {lo}..{hi}")),
        }
    };
    let known: &[&str] = match op {
        Op::Vector { .. } => &["tileLen", "doubleBuffer"],
        Op::Attention { kind: AttentionKind::Flash | AttentionKind::Decode, .. } => &["blockQ", "blockKv"],
        _ => &[],
    };
    if let Some((k, _)) = values.iter().find(|(k, _)| !known.contains(&k.as_str())) {
        return Err(if known.is_empty() {
            format!("this operator has no tunable tiling (got '{k}')")
        } else {
            format!("unknown tiling field '{k}' (known: {})", known.join(", "))
        });
    }
    match op {
        Op::Vector { .. } => Ok(Tiling::Vector(VectorTiling {
            tile_len: get("tileLen", 1, 1 << 24)?.unwrap_or(4096),
            double_buffer: get("doubleBuffer", 0, 1)?.unwrap_or(1) == 1,
        })),
        Op::Attention { kind: AttentionKind::Flash | AttentionKind::Decode, .. } => Ok(Tiling::Flash(FlashTiling {
            block_q: get("blockQ", 1, 1 << 16)?.unwrap_or(128),
            block_kv: get("blockKv", 1, 1 << 16)?.unwrap_or(128),
        })),
        _ => Ok(Tiling::Default),
    }
}

/// One of the heuristic's standard inner tilings for a per-core split: base tiles `bm` x `bn`
/// (clipped to the split), 128 bytes of K per base step, K steps giving 512-byte bursts,
/// stepM / stepN as given, L1 double-buffered (halved when L1 is short), L0A / L0B
/// double-buffered when they fit.
fn standard(c: &matmul::Ctx, d: &Device, split: (u64, u64), base: (u64, u64), s_m: u32, s_n: u32, order: u8) -> MatmulTiling {
    let (_, _, kal) = c.aligned();
    let (al, bl) = c.operand_bytes();
    let (bm, bn) = (base.0.min(split.0), base.1.min(split.1));
    let bk = (128 / al.max(1)).max(c.c0()).min(kal);
    let sk = (512 / (bk * al).max(1)).clamp(1, 8) as u32;
    let mut t = MatmulTiling {
        single_core_m: split.0 as u32, single_core_n: split.1 as u32, base_m: bm as u32, base_n: bn as u32, base_k: bk as u32,
        depth_a1: 2 * s_m * sk, depth_b1: 2 * s_n * sk, step_m: s_m, step_n: s_n, step_ka: sk, step_kb: sk,
        iterate_order: order, db_l0a: 2 * bm * bk * al <= d.l0a_bytes, db_l0b: 2 * bk * bn * bl <= d.l0b_bytes, db_l0c: false,
    };
    if (t.depth_a1 as u64 * bm * bk * al) + (t.depth_b1 as u64 * bn * bk * bl) > d.l1_bytes {
        t.depth_a1 /= 2;
        t.depth_b1 /= 2;
    }
    t
}

/// The heuristic matmul tiling, cheap enough to use inside whole-model estimates: every
/// per-core split is scored by the cost model itself (`matmul::time_us` of the standard
/// 128 x 256 tiling, so traffic is charged exactly as the estimate charges it: HBM first
/// reads at the GM rate, L2 re-reads at the L2 rate, waves over the cores), then the best of
/// a few standard shapes (128x256, 256x128, 128x128 base tiles, stepM/stepN 1, 2 or 4, both
/// loop orders) on the winning split: a few hundred evaluations at most.
pub fn default_matmul(c: &matmul::Ctx, d: &Device) -> MatmulTiling {
    let (mal, nal, _) = c.aligned();
    let (mut sm, mut sn) = ([0u64; NSPLITS], [0u64; NSPLITS]);
    let (nsm, nsn) = (single_core_values(mal, &mut sm), single_core_values(nal, &mut sn));
    let mut best = (f64::INFINITY, 0u64, sm[0].max(16), sn[0].max(16));
    for &a in &sm[..nsm] {
        for &b in &sn[..nsn] {
            let mut score = f64::INFINITY;
            for base in [(128u64, 256u64), (256, 128)] {
                if let Some(x) = matmul::time_us(c, &standard(c, d, (a, b), base, 1, 1, 0)) {
                    score = score.min(x);
                }
            }
            // Splits of a huge problem can pass 2^32 each: the area saturates, never overflows.
            let area = cost::mul_sat(a, b);
            if score < best.0 || (score == best.0 && area > best.1) {
                best = (score, area, a, b);
            }
        }
    }
    let split = (best.2, best.3);
    let mut pick: Option<(f64, MatmulTiling)> = None;
    for base in [(128u64, 256u64), (256, 128), (128, 128)] {
        for s_m in [1u32, 2, 4] {
            for s_n in [1u32, 2, 4] {
                for order in 0..2u8 {
                    let t = standard(c, d, split, base, s_m, s_n, order);
                    if let Some(time) = matmul::time_us(c, &t) {
                        if pick.is_none_or(|p| time < p.0) {
                            pick = Some((time, t));
                        }
                    }
                }
            }
        }
    }
    pick.map_or_else(|| standard(c, d, split, (128, 256), 1, 1, 0), |p| p.1)
}

/// The model's own heuristic tiling for `op`.
pub fn default_tiling(op: &Op, device: &Device) -> Tiling {
    if let Some(p) = matmul_problem(op) {
        return Tiling::Matmul(default_matmul(&matmul::Ctx::new(p, device), device));
    }
    match op {
        Op::Vector { .. } => vector::default_tiling(op, device).map(Tiling::Vector).unwrap_or(Tiling::Default),
        Op::Attention { kind: AttentionKind::Flash | AttentionKind::Decode, .. } => {
            attention::default_tiling(op, device).map(Tiling::Flash).unwrap_or(Tiling::Default)
        }
        _ => Tiling::Default,
    }
}

/// Every valid tiling evaluated; the fastest, its estimate, and how many were valid.
/// Ops with nothing to tune return their default estimate and a count of 1.
pub fn best_tiling(op: &Op, device: &Device) -> Option<(Tiling, Estimate, usize)> {
    if let Some(p) = matmul_problem(op) {
        let c = matmul::Ctx::new(p, device);
        let (t, n) = best_matmul(&c, device)?;
        let e = cost::estimate(op, &Tiling::Matmul(t), device).ok()?;
        return Some((Tiling::Matmul(t), e, n));
    }
    let axes = tiling_axes(op, device);
    if axes.iter().any(|a| a.values.is_empty()) {
        return None;
    }
    if axes.is_empty() {
        let e = cost::estimate(op, &Tiling::Default, device).ok()?;
        return Some((Tiling::Default, e, 1));
    }
    // Small spaces (vector, flash, decode): tilings built directly from the candidates.
    let mut best: Option<(Tiling, Estimate)> = None;
    let mut valid = 0usize;
    let mut consider = |t: Tiling| {
        if let Ok(e) = cost::estimate(op, &t, device) {
            valid += 1;
            if best.as_ref().is_none_or(|b| e.time_us < b.1.time_us) {
                best = Some((t, e));
            }
        }
    };
    match op {
        Op::Vector { .. } => {
            for &len in &axes[0].values {
                for db in [false, true] {
                    consider(Tiling::Vector(VectorTiling { tile_len: len.clamp(1, 1 << 24) as u32, double_buffer: db }));
                }
            }
        }
        Op::Attention { kind: AttentionKind::Decode, .. } => {
            // Decode packs its query rows itself; only the KV block is free.
            let q = attention::default_tiling(op, device).map_or(16, |t| t.block_q);
            for &kv in &FLASH_KV {
                consider(Tiling::Flash(FlashTiling { block_q: q, block_kv: kv }));
            }
        }
        _ => {
            for &q in &FLASH_Q {
                for &kv in &FLASH_KV {
                    consider(Tiling::Flash(FlashTiling { block_q: q, block_kv: kv }));
                }
            }
        }
    }
    best.map(|(t, e)| (t, e, valid))
}

/// Candidate lists of one matmul problem (fixed arrays: no allocation).
struct Lists {
    sm: [u64; NSPLITS],
    nsm: usize,
    sn: [u64; NSPLITS],
    nsn: usize,
    bm: [u64; 5],
    nbm: usize,
    bn: [u64; 5],
    nbn: usize,
    bk: [u64; 5],
    nbk: usize,
}

fn lists(c: &matmul::Ctx) -> Lists {
    let (mal, nal, kal) = c.aligned();
    let mut l = Lists { sm: [0; NSPLITS], nsm: 0, sn: [0; NSPLITS], nsn: 0, bm: [0; 5], nbm: 0, bn: [0; 5], nbn: 0, bk: [0; 5], nbk: 0 };
    l.nsm = single_core_values(mal, &mut l.sm);
    l.nsn = single_core_values(nal, &mut l.sn);
    let kc: [u64; 5] = BASE_K_C0.map(|f| f * c.c0());
    l.nbm = base_values(mal, &BASE_MN, &mut l.bm);
    l.nbn = base_values(nal, &BASE_MN, &mut l.bn);
    l.nbk = base_values(kal, &kc, &mut l.bk);
    l
}

/// Calls `f` with every tiling that passes the L0 / L1 / depth rules for the per-core split
/// already set in `t` (those rules do not depend on the split).
#[inline(always)]
fn for_each_inner(
    c: &matmul::Ctx,
    d: &Device,
    l: &Lists,
    t: &mut MatmulTiling,
    mut skip: impl FnMut(&MatmulTiling) -> bool,
    costing: bool,
    mut f: impl FnMut(&MatmulTiling),
) {
    let (l0a, l0b, l0c, l1) = (d.l0a_bytes, d.l0b_bytes, d.l0c_bytes, d.l1_bytes);
    let (al, bl) = c.operand_bytes();
    for &b_m in &l.bm[..l.nbm] {
        t.base_m = b_m as u32;
        for &b_n in &l.bn[..l.nbn] {
            t.base_n = b_n as u32;
            for &b_k in &l.bk[..l.nbk] {
                t.base_k = b_k as u32;
                if skip(t) {
                    continue;
                }
                let (a_tile, b_tile) = (b_m * b_k * al, b_k * b_n * bl);
                for db in 0u8..8 {
                    let (da, dbb, dc) = (db & 1 != 0, db & 2 != 0, db & 4 != 0);
                    if a_tile * (1 + da as u64) > l0a || b_tile * (1 + dbb as u64) > l0b || b_m * b_n * 4 * (1 + dc as u64) > l0c {
                        continue;
                    }
                    (t.db_l0a, t.db_l0b, t.db_l0c) = (da, dbb, dc);
                    for &s_m in &STEP_MN {
                        for &s_ka in &STEP_K {
                            for &da1 in &DEPTHS {
                                let da1 = da1 as u32;
                                let a_l1 = da1 as u64 * a_tile;
                                // Deeper than double-buffered costs the same as double-buffered
                                // (the model only tells one L1 load from two), so when costing,
                                // those tilings cannot win and are skipped.
                                if !da1.is_multiple_of(s_m * s_ka) || a_l1 > l1 || (costing && da1 > 2 * s_m * s_ka) {
                                    continue;
                                }
                                (t.step_m, t.step_ka, t.depth_a1) = (s_m, s_ka, da1);
                                for &s_n in &STEP_MN {
                                    for &s_kb in &STEP_K {
                                        for &db1 in &DEPTHS {
                                            let db1 = db1 as u32;
                                            if !db1.is_multiple_of(s_n * s_kb) || a_l1 + db1 as u64 * b_tile > l1 || (costing && db1 > 2 * s_n * s_kb) {
                                                continue;
                                            }
                                            (t.step_n, t.step_kb, t.depth_b1) = (s_n, s_kb, db1);
                                            for order in 0..2u8 {
                                                t.iterate_order = order;
                                                f(t);
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Exhaustive TCubeTiling search over the `tiling_axes` candidates. Every valid tiling is
/// counted; per-core splits are visited in order of a lower bound (cube alone, or memory), and
/// once that bound reaches the best time found no tiling of the remaining splits can win, so
/// they are counted without being costed. The result is the exact optimum of the space.
pub fn best_matmul(c: &matmul::Ctx, d: &Device) -> Option<(MatmulTiling, usize)> {
    let l = lists(c);
    let mut t = base_matmul(c.c0());
    let mut inner = 0usize;
    for_each_inner(c, d, &l, &mut t, |_| false, false, |_| inner += 1);
    let mut outers = [(0.0f64, 0u64, 0u64); NSPLITS * NSPLITS];
    let mut n = 0;
    for &a in &l.sm[..l.nsm] {
        for &b in &l.sn[..l.nsn] {
            outers[n] = (matmul::lower_bound_us(c, a, b), a, b);
            n += 1;
        }
    }
    outers[..n].sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    let best_time = std::cell::Cell::new(f64::INFINITY);
    let mut best: Option<MatmulTiling> = None;
    for &(lb, a, b) in &outers[..n] {
        if lb >= best_time.get() {
            break;
        }
        t.single_core_m = a as u32;
        t.single_core_n = b as u32;
        let skip = |t: &MatmulTiling| matmul::base_lower_bound_us(c, t) >= best_time.get();
        for_each_inner(c, d, &l, &mut t, skip, true, |t| {
            if let Some(time) = matmul::time_us(c, t) {
                if time < best_time.get() {
                    best_time.set(time);
                    best = Some(*t);
                }
            }
        });
    }
    // Every tiling that passes the buffer rules is valid (the split values are aligned), and
    // those rules do not depend on the split: the count is exact without costing them all.
    best.map(|t| (t, n * inner))
}

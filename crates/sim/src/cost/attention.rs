//! Attention three ways. Unfused: QK^T, softmax and PV as three kernels with the scores
//! materialised in device memory. Flash: one fused kernel per (batch, head, query block) that
//! walks key/value blocks; S = QK^T on the cube, online softmax on the vector unit, O += PV on
//! the cube, stages pipelined over blocks (D `_10_0033`). Decode: the flash loop with the query
//! heads of one KV head packed into the cube's M (GQA) and the KV cache split over cores when
//! there are fewer (batch, kv head) pairs than cores (flash-decoding).
//!
//! On split chips (910B) S leaves L0C through GM/L2 to the vector cores and P comes back the
//! same way, paying `fa_handoff_cycles` per KV block (profile); on coupled chips it stays on
//! the core (L0C -> UB -> L1).

use super::{add, align, error, finish, matmul, overlap, part, sum, vector, Raw, CUBE, FIXPIPE, HBM, L2, LAUNCH, MTE1, MTE2, MTE3, VECTOR};
use crate::device::{Arch, Device};
use crate::dtype::DType;
use crate::estimate::{Estimate, Infeasible};
use crate::op::{AttentionKind, Epilogue, Op, VectorKind};
use crate::tiling::{FlashTiling, Tiling};

#[derive(Clone, Copy)]
struct Att {
    kind: AttentionKind,
    b: u64,
    h: u64,
    kvh: u64,
    q: u64,
    kv: u64,
    d: u64,
    causal: bool,
    t: DType,
}

fn shape(op: &Op) -> Result<Att, Infeasible> {
    let Op::Attention { kind, batch, heads, kv_heads, q_len, kv_len, head_dim, causal, dtype } = *op else {
        return Err(Infeasible::new("not attention"));
    };
    super::check_dims(&[("batch", batch), ("heads", heads), ("kv_heads", kv_heads), ("q_len", q_len), ("kv_len", kv_len), ("head_dim", head_dim)])?;
    if heads % kv_heads != 0 {
        return Err(Infeasible::new(format!("heads ({heads}) must be a multiple of kv_heads ({kv_heads})")));
    }
    Ok(Att { kind, b: batch, h: heads, kvh: kv_heads, q: q_len, kv: kv_len, d: head_dim, causal, t: dtype })
}

/// Query rows of one decode work item: the q heads sharing a KV head, times the query length.
fn decode_rows(a: &Att) -> u64 {
    align((a.h / a.kvh).saturating_mul(a.q), 16)
}

/// The decode query block: all packed rows, at most 128 (more rows take several blocks).
fn decode_block_q(a: &Att) -> u32 {
    decode_rows(a).min(128) as u32
}

/// 128 x 128 blocks clipped to the problem (decode: the packed rows, 256-row KV blocks).
pub fn default_tiling(op: &Op, d: &Device) -> Option<FlashTiling> {
    let a = shape(op).ok()?;
    let cands: &[(u32, u32)] = &[(128, 128), (128, 64), (64, 128), (64, 64), (32, 64), (16, 64), (16, 32), (16, 16)];
    let clip = |x: u32, n: u64| (x as u64).min(align(n, 16)) as u32;
    for &(bq, bkv) in cands {
        let t = match a.kind {
            // Wide packed rows (MLA's 576-wide latent over 64+ heads per chip) need a smaller
            // Q block than 128 rows to fit L0A: the candidates shrink it as they go.
            AttentionKind::Decode => FlashTiling { block_q: decode_block_q(&a).min(bq), block_kv: clip(bkv * 2, a.kv) },
            _ => FlashTiling { block_q: clip(bq, a.q), block_kv: clip(bkv, a.kv) },
        };
        if flash(&a, &t, d).is_ok() {
            return Some(t);
        }
    }
    None
}

/// `Op::Attention` entry point.
pub fn estimate(op: &Op, tiling: &Tiling, d: &Device) -> Result<Estimate, Infeasible> {
    let a = shape(op)?;
    match a.kind {
        AttentionKind::Unfused | AttentionKind::Exported => {
            if *tiling != Tiling::Default {
                return Err(Infeasible::new("unfused attention runs separate default-tiled kernels; give no tiling"));
            }
            if a.kind == AttentionKind::Exported {
                exported(&a, d)
            } else {
                unfused(&a, d)
            }
        }
        _ => {
            let mut t = match tiling {
                Tiling::Default => default_tiling(op, d).ok_or_else(|| Infeasible::new("no flash block size fits this device"))?,
                Tiling::Flash(t) => *t,
                other => return Err(Infeasible::new(format!("flash attention takes block sizes, not '{}'", other.describe()))),
            };
            if a.kind == AttentionKind::Decode {
                // Decode packs its rows itself (at most 128 a block); a smaller block given by
                // `default_tiling` is kept, for rows too wide for L0A at 128.
                t.block_q = t.block_q.min(decode_block_q(&a)).max(1);
            }
            flash(&a, &t, d).map(|r| finish(&r, d))
        }
    }
}

fn unfused(a: &Att, d: &Device) -> Result<Estimate, Infeasible> {
    let bh = a.b.saturating_mul(a.h);
    let qk = Op::Matmul { batch: bh, m: a.q, n: a.kv, k: a.d, dtype: a.t, weight_dtype: None, epilogue: Epilogue::None };
    let sm = Op::Vector { kind: VectorKind::Softmax, rows: bh.saturating_mul(a.q), row_len: a.kv, dtype: a.t };
    let pv = Op::Matmul { batch: bh, m: a.q, n: a.d, k: a.kv, dtype: a.t, weight_dtype: None, epilogue: Epilogue::None };
    let parts = [
        matmul::estimate(&qk, &Tiling::Default, d)?,
        vector::estimate(&sm, &Tiling::Default, d)?,
        matmul::estimate(&pv, &Tiling::Default, d)?,
    ];
    let mut e = super::chain(&parts);
    // Causal attention computes the full square and masks it; useful work is about half.
    if a.causal && a.kv >= a.q {
        let full = 4.0 * (bh as f64) * a.q as f64 * a.kv as f64 * a.d as f64;
        let useful = 4.0 * (bh as f64) * a.d as f64 * (a.q as f64 * a.kv as f64 - a.q as f64 * (a.q as f64 - 1.0) / 2.0);
        e.flops = e.flops - full + useful;
        e.attained_tflops = e.flops / (e.time_us * 1.0e-6) / 1.0e12;
        e.arithmetic_intensity = if e.hbm_bytes > 0.0 { e.flops / e.hbm_bytes } else { 0.0 };
    }
    Ok(e)
}

/// Attention as an ONNX export of BertSelfAttention runs once ATC has compiled it with
/// `precision_mode_v2=mixed_float16` and the fp16-overflowing ops on the blocklist (MindIE-LLM's
/// BGE "offline" OM model): MatMul(Q, K^T) in fp16, Div by sqrt(head_dim), a Cast to fp32 for
/// the blocklisted mask Add and Softmax (HF's additive mask is finfo(float32).min, outside fp16;
/// the README's ops_info.json itself is not published: assumed), a Cast back, MatMul(P, V). Seven
/// kernels, each reading and writing the [batch x heads, q, kv] scores in device memory.
fn exported(a: &Att, d: &Device) -> Result<Estimate, Infeasible> {
    let bh = a.b.saturating_mul(a.h);
    let rows = bh.saturating_mul(a.q);
    let v = |kind, t| Op::Vector { kind, rows, row_len: a.kv, dtype: t };
    let vec = |op: Op| vector::estimate(&op, &Tiling::Default, d);
    let qk = Op::Matmul { batch: bh, m: a.q, n: a.kv, k: a.d, dtype: a.t, weight_dtype: None, epilogue: Epilogue::None };
    let pv = Op::Matmul { batch: bh, m: a.q, n: a.d, k: a.kv, dtype: a.t, weight_dtype: None, epilogue: Epilogue::None };
    let mut parts = vec![
        matmul::estimate(&qk, &Tiling::Default, d)?,
        vec(v(VectorKind::Scale, a.t))?,
        vec(v(VectorKind::Cast, a.t))?,
        vec(v(VectorKind::Scale, DType::Fp32))?,
        vec(v(VectorKind::Softmax, DType::Fp32))?,
        vec(v(VectorKind::Cast, DType::Fp32))?,
        matmul::estimate(&pv, &Tiling::Default, d)?,
    ];
    // A coupled chip's cube (910, 310P) reads only FRACTAL_NZ: ATC's TransData kernels take
    // the scores out of Q K^T to ND for the Div, Cast, mask Add and Softmax and the
    // probabilities back to NZ for P V, a read and a write of every score each
    // (`workload::onnx_om`, which adds the Q, K, V and context ones as operators of their own).
    if d.arch == Arch::Coupled {
        let td = vec(v(VectorKind::Gather, a.t))?;
        parts.push(td.clone());
        parts.push(td);
    }
    Ok(super::chain(&parts))
}

fn flash(a: &Att, t: &FlashTiling, dev: &Device) -> Result<Raw, Infeasible> {
    let (bq, bkv) = (t.block_q as u64, t.block_kv as u64);
    for (name, v) in [("blockQ", bq), ("blockKv", bkv)] {
        if v == 0 || v % 16 != 0 {
            return Err(Infeasible::new(format!("{name} = {v} must be a positive multiple of 16 (fractal)")));
        }
    }
    // The cube computes in FP16/BF16 (FP32 at the chip's cube_fp32_rate); INT8 KV is dequantised to FP16.
    let ct = if a.t == DType::Int8 { DType::Fp16 } else { a.t };
    let eb = ct.bytes();
    let c0 = 32 / eb;
    let dal = align(a.d, c0);
    let over = |what: &str, need: u64, have: u64| {
        Infeasible::new(format!("{what} overflows by {} bytes ({need} > {have})", need - have))
    };
    let need = bq * dal.max(bkv) * eb;
    if need > dev.l0a_bytes {
        return Err(over("Q/P block in L0A", need, dev.l0a_bytes));
    }
    let need = bkv * dal * eb;
    if need > dev.l0b_bytes {
        return Err(over("K/V block in L0B", need, dev.l0b_bytes));
    }
    let need = bq * bkv.max(dal) * 4;
    if need > dev.l0c_bytes {
        return Err(over("S/O accumulator in L0C", need, dev.l0c_bytes));
    }
    let need = (bq * dal + 4 * bkv * dal + bq * bkv) * eb;
    if need > dev.l1_bytes {
        return Err(over("Q, double-buffered K/V and P in L1", need, dev.l1_bytes));
    }
    let vpc = match dev.arch {
        Arch::Split => (dev.vector_cores / dev.cube_cores.max(1)).max(1) as u64,
        Arch::Coupled => 1,
    };
    let rows = bq.div_ceil(vpc);
    let need = rows * bkv * (4 + eb) + rows * dal * 4 + rows * 64;
    if need > dev.ub_bytes {
        return Err(over("softmax rows in UB", need, dev.ub_bytes));
    }
    let decode = a.kind == AttentionKind::Decode;
    let kvb = a.t.bytes() as f64;
    let (qf, kvf, df) = (a.q as f64, a.kv as f64, a.d as f64);
    // Work items and the KV rows each one visits.
    let (mut items, mut kv_item) = if decode {
        ((a.b * a.kvh) as f64 * (decode_rows(a) as f64 / bq as f64).ceil(), kvf)
    } else {
        let nqb = (qf / bq as f64).ceil();
        let vis = if a.causal && a.kv >= a.q { (kvf - qf + (qf + bq as f64) / 2.0).min(kvf) } else { kvf };
        ((a.b * a.h) as f64 * nqb, vis)
    };
    let cores = dev.cube_cores.max(1) as f64;
    if decode && items < cores {
        let split = (cores / items).ceil().min((kvf / bkv as f64).ceil()).max(1.0);
        items *= split;
        kv_item = (kvf / split).ceil();
    }
    let nb = (kv_item / bkv as f64).ceil().max(1.0);
    let (bqf, bkvf, dalf) = (bq as f64, bkv as f64, dal as f64);
    let cube_cyc_per_mac = if ct == DType::Fp32 { 1.0 / (4096.0 * dev.cube_fp32_rate) } else { 1.0 / 4096.0 };
    let cube = 2.0 * bqf * bkvf * dalf * cube_cyc_per_mac;
    let mte1 = add(&part(MTE1, (bqf * dalf + bqf * bkvf) * eb as f64 / dev.l1_to_l0a_bytes_per_cycle), &part(MTE1, 2.0 * bkvf * dalf * eb as f64 / dev.l1_to_l0b_bytes_per_cycle));
    // L0 double buffering overlaps MTE1 with the cube at base-K granularity (64 elements) over
    // both matmuls of the block.
    let k_steps = (dalf / 64.0).ceil() + (bkvf / 64.0).ceil();
    let inner = overlap(&part(CUBE, cube), &mte1, k_steps);
    // K and V blocks: decode streams them once from GM; prefill re-reads them from L2 (shared by
    // the query blocks and the heads of a KV group).
    let kv_bytes = 2.0 * bkvf * df * kvb;
    let load = if decode { part(MTE2, kv_bytes / dev.gm_bytes_per_cycle) } else { part(L2, kv_bytes / dev.l2_read_bytes_per_cycle) };
    let ratio = dev.cube_clock_mhz / dev.vector_clock_mhz;
    let epc32 = dev.vector_lanes_fp16 / 2.0 * dev.vector_efficiency;
    // Online softmax: max, sub, exp, sum, scale, cast per score; rescale O (2 per element).
    let vec = part(VECTOR, (rows as f64 * bkvf * 6.0 + rows as f64 * dalf * 2.0) / epc32 * ratio);
    // FixPipe drains S (cast to the input type on the way out) and the partial O (FP32).
    let s_bytes = bqf * bkvf * eb as f64;
    let fix_bpc = match dev.arch {
        Arch::Split => dev.l0c_out_bytes_per_cycle.min(dev.l2_write_bytes_per_cycle),
        Arch::Coupled => dev.l0c_out_bytes_per_cycle,
    };
    let fix = part(FIXPIPE, (s_bytes + bqf * dalf * 4.0) / fix_bpc);
    // S to the vector unit and P back to L1: through L2 on split chips (each vector core reads
    // its rows of S and writes its rows of P; the cube core reads P), on-core when coupled.
    let (xfer_v, xfer_c) = match dev.arch {
        Arch::Split => (part(L2, 2.0 * s_bytes / vpc as f64 / dev.l2_read_bytes_per_cycle), part(MTE2, s_bytes / dev.l2_read_bytes_per_cycle)),
        Arch::Coupled => (part(MTE3, s_bytes / dev.l1_to_ub_bytes_per_cycle), [0.0; super::ENGINES]),
    };
    // Pipeline over nb blocks: the slowest stage runs nb times, the others once (fill/drain).
    let stages = [inner, load, vec, fix, xfer_v, xfer_c];
    let mut slow = 0;
    for j in 1..stages.len() {
        if sum(&stages[j]) > sum(&stages[slow]) {
            slow = j;
        }
    }
    let mut item = [0.0; super::ENGINES];
    for (j, s) in stages.iter().enumerate() {
        item = add(&item, &super::scale(s, if j == slow { nb } else { 1.0 }));
    }
    // Split chips: every KV block crosses between AIC and AIV and back (S out through FixPipe
    // and GM/L2, cross-core flags, P back to L1); the hand-off latency is not hidden, because
    // the next block's P @ V waits on this block's softmax.
    let handoff = match dev.arch {
        Arch::Split => dev.fa_handoff_cycles,
        Arch::Coupled => 0.0,
    };
    item[L2] += nb * handoff;
    // Q in, O out once per item.
    item[MTE2] += bqf * df * kvb / dev.gm_bytes_per_cycle;
    item[MTE3] += bqf * df * kvb / dev.ub_to_gm_bytes_per_cycle;
    let waves = (items / cores).ceil();
    let us = waves / dev.cube_clock_mhz;
    let mut exposed = super::scale(&item, us);
    let mut busy = [0.0; super::ENGINES];
    for s in &stages {
        busy = add(&busy, &super::scale(s, nb * us));
    }
    busy[L2] += nb * handoff * us;
    // Device memory: Q, O, and K/V once if they fit in L2, else once per query block.
    let kv_unique = 2.0 * (a.b * a.kvh) as f64 * kvf * df * kvb;
    let q_o = 2.0 * (a.b * a.h) as f64 * qf * df * kvb;
    let passes = if decode || kv_unique <= dev.l2_bytes as f64 { 1.0 } else { (qf / bqf).ceil() };
    let hbm_bytes = q_o + kv_unique * passes;
    let t_hbm = hbm_bytes / (dev.derived.hbm_gbs * 1.0e3);
    super::memory_bound(&mut exposed, t_hbm);
    busy[HBM] = t_hbm;
    exposed[LAUNCH] = dev.launch_matmul_us;
    busy[LAUNCH] = dev.launch_matmul_us;
    let pairs = (a.b * a.h) as f64 * qf;
    let flops = if a.causal && !decode && a.kv >= a.q {
        4.0 * (a.b * a.h) as f64 * df * (qf * kvf - qf * (qf - 1.0) / 2.0)
    } else {
        4.0 * pairs * kvf * df
    };
    let e_qk = error::matmul(ct, ct, a.d);
    let e_sm = error::vector(DType::Fp32, 6.0, a.kv);
    let e_pv = error::matmul(ct, ct, a.kv);
    Ok(Raw {
        exposed,
        busy,
        cube_core_us: cube * nb * items / dev.cube_clock_mhz,
        vector_core_us: sum(&vec) * nb * items * vpc as f64 / dev.cube_clock_mhz,
        flops,
        hbm_bytes,
        cores_used: items.min(cores) as u32,
        waves: waves as u64,
        relative_error: libm::sqrt(e_qk * e_qk + e_sm * e_sm + e_pv * e_pv),
    })
}

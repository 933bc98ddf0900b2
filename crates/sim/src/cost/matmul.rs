//! Matmul and batched matmul on the cube unit under a TCubeTiling (D `atlasascendc_api_07_0673`).
//!
//! Per core block (singleCoreM x singleCoreN x K): MTE2 brings A and B panels from GM (first
//! touch at the per-core GM rate, re-reads from L2 at the L2 rate, S1 `[AICoreMemoryRates]`),
//! MTE1 copies base tiles L1 -> L0A/L0B (512 / 256 B per cycle, S1), the cube does
//! 16 x 16 x C0 MACs per cycle, FixPipe drains L0C. Stages overlap only where the tiling double
//! buffers (D `_10_0033`). Blocks run in waves over the cube cores; the chip-wide memory
//! bandwidth (S2) bounds the whole kernel, with operands re-read from L2 when they fit it.
//! The hot path (`core`) allocates nothing and returns a numeric `Reject` rather than a string.

use super::{add, align, error, finish, overlap, part, sum, Raw, CUBE, FIXPIPE, HBM, L2, LAUNCH, MTE1, MTE2, VECTOR};
use crate::device::{Arch, Device};
use crate::dtype::DType;
use crate::estimate::{Estimate, Infeasible};
use crate::op::{Epilogue, Op};
use crate::tiling::{MatmulTiling, Tiling};

/// A matmul problem reduced to what the cost model needs.
#[derive(Clone, Copy, Debug)]
pub struct Problem {
    pub batch: u64,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub a: DType,
    pub b: DType,
    /// GM bytes of A relative to its img2col size (convolution reads the input once; 1 else).
    pub a_gm_scale: f64,
    pub epilogue: Epilogue,
}

impl Problem {
    /// The type the cube computes in: INT8 only when both operands are INT8 (W8A16 dequantises
    /// weights to FP16 first), FP32 when either is FP32, else BF16/FP16.
    pub fn cube_type(&self) -> DType {
        match (self.a, self.b) {
            (DType::Int8, DType::Int8) => DType::Int8,
            (DType::Fp32, _) | (_, DType::Fp32) => DType::Fp32,
            (DType::Bf16, _) | (_, DType::Bf16) => DType::Bf16,
            _ => DType::Fp16,
        }
    }
    /// Fractal K alignment C0 in elements: 32 bytes of the cube type (ascend-devices.md).
    pub fn c0(&self) -> u64 {
        32 / self.cube_type().bytes()
    }
}

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
            Reject::Depth { field, depth, step } => format!("{field} = {depth} must be {step} (single buffer) or {} (double buffer)", 2 * step),
        }
    }
}

/// Per-device, per-problem constants hoisted out of the hot loop.
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    p: Problem,
    c0: u64,
    a_l: u64,
    b_l: u64,
    a_gm: f64,
    b_gm: f64,
    c_out: f64,
    macs: f64,
    mal: u64,
    nal: u64,
    kal: u64,
    l0a: u64,
    l0b: u64,
    l0c: u64,
    l1: u64,
    gm_bpc: f64,
    l2_bpc: f64,
    l1a_bpc: f64,
    l1b_bpc: f64,
    fix_bpc: f64,
    /// Vector elements per cube cycle available to one cube core's epilogue / dequant.
    vec_epc: f64,
    epi_instr: f64,
    dequant: bool,
    cores: u64,
    us_per_cycle: f64,
    hbm_bytes_per_us: f64,
    l2_bytes: f64,
    launch_us: f64,
}

impl Ctx {
    /// Hoists everything that does not depend on the tiling.
    pub fn new(p: Problem, d: &Device) -> Ctx {
        let ct = p.cube_type();
        let c0 = p.c0();
        let l_bytes = |t: DType| if ct == DType::Int8 { 1 } else { ct.bytes().max(t.bytes()) };
        let vec_per_aic = match d.arch {
            Arch::Split => (d.vector_cores as f64 / d.cube_cores.max(1) as f64).max(1.0),
            Arch::Coupled => 1.0,
        };
        // FP16 lanes per cycle; FP32 work goes at half rate (same 256-byte datapath, S2).
        let vec_epc = d.vector_lanes_fp16 * vec_per_aic * d.vector_clock_mhz / d.cube_clock_mhz;
        let epi_instr = match p.epilogue {
            Epilogue::None | Epilogue::Bias => 0.0, // bias is added by FixPipe on the way out
            Epilogue::BiasGelu => 6.0,              // tanh-GELU: ~6 vector instructions
            Epilogue::SwiGlu => 5.0,                // silu (exp, add, div) then two muls
            Epilogue::ResidualAdd => 1.0,
        };
        Ctx {
            p,
            c0,
            a_l: l_bytes(p.a),
            b_l: l_bytes(p.b),
            a_gm: p.a.bytes() as f64 * p.a_gm_scale,
            b_gm: p.b.bytes() as f64,
            c_out: error::output_type(p.a).bytes() as f64,
            macs: (16 * 16 * c0) as f64,
            mal: align(p.m, 16),
            nal: align(p.n, 16),
            kal: align(p.k, c0),
            l0a: d.l0a_bytes,
            l0b: d.l0b_bytes,
            l0c: d.l0c_bytes,
            l1: d.l1_bytes,
            gm_bpc: d.gm_bytes_per_cycle,
            l2_bpc: d.l2_read_bytes_per_cycle,
            l1a_bpc: d.l1_to_l0a_bytes_per_cycle,
            l1b_bpc: d.l1_to_l0b_bytes_per_cycle,
            fix_bpc: d.l0c_out_bytes_per_cycle.min(d.l2_write_bytes_per_cycle),
            vec_epc,
            epi_instr,
            dequant: p.b == DType::Int8 && ct != DType::Int8,
            cores: d.cube_cores.max(1) as u64,
            us_per_cycle: 1.0 / d.cube_clock_mhz,
            hbm_bytes_per_us: d.derived.hbm_gbs * 1.0e3,
            l2_bytes: d.l2_bytes as f64,
            launch_us: d.launch_matmul_us,
        }
    }

    /// The padded problem dims (M, N aligned to 16, K to C0).
    pub fn aligned(&self) -> (u64, u64, u64) {
        (self.mal, self.nal, self.kal)
    }

    pub fn c0(&self) -> u64 {
        self.c0
    }

    /// Bytes per element of A and B in L1 / L0.
    pub fn operand_bytes(&self) -> (u64, u64) {
        (self.a_l, self.b_l)
    }
}

fn check(c: &Ctx, t: &MatmulTiling) -> Result<(), Reject> {
    let fields: [(&'static str, u32, u64); 5] = [
        ("singleCoreM", t.single_core_m, 16), ("singleCoreN", t.single_core_n, 16),
        ("baseM", t.base_m, 16), ("baseN", t.base_n, 16), ("baseK", t.base_k, c.c0),
    ];
    for (field, v, mul) in fields {
        if v == 0 {
            return Err(Reject::Zero { field });
        }
        if v as u64 % mul != 0 {
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
    let (bm, bn, bk) = (t.base_m as u64, t.base_n as u64, t.base_k as u64);
    let need = bm * bk * c.a_l * (1 + t.db_l0a as u64);
    if need > c.l0a {
        return Err(Reject::L0a { need, have: c.l0a });
    }
    let need = bk * bn * c.b_l * (1 + t.db_l0b as u64);
    if need > c.l0b {
        return Err(Reject::L0b { need, have: c.l0b });
    }
    // L0C accumulates in FP32 / INT32 (4 bytes).
    let need = bm * bn * 4 * (1 + t.db_l0c as u64);
    if need > c.l0c {
        return Err(Reject::L0c { need, have: c.l0c });
    }
    let sa = t.step_m as u64 * t.step_ka as u64;
    if t.depth_a1 as u64 != sa && t.depth_a1 as u64 != 2 * sa {
        return Err(Reject::Depth { field: "depthA1", depth: t.depth_a1 as u64, step: sa });
    }
    let sb = t.step_n as u64 * t.step_kb as u64;
    if t.depth_b1 as u64 != sb && t.depth_b1 as u64 != 2 * sb {
        return Err(Reject::Depth { field: "depthB1", depth: t.depth_b1 as u64, step: sb });
    }
    let need = t.depth_a1 as u64 * bm * bk * c.a_l + t.depth_b1 as u64 * bn * bk * c.b_l;
    if need > c.l1 {
        return Err(Reject::L1 { need, have: c.l1 });
    }
    Ok(())
}

#[inline]
fn cdiv(a: u64, b: u64) -> u64 {
    a.div_ceil(b.max(1))
}

/// The hot path: costs one tiling. No allocation, no strings.
pub fn core(c: &Ctx, t: &MatmulTiling) -> Result<Raw, Reject> {
    check(c, t)?;
    let bm = (t.single_core_m as u64).min(c.mal);
    let bn = (t.single_core_n as u64).min(c.nal);
    let kal = c.kal;
    let em = (t.base_m as u64).min(bm);
    let en = (t.base_n as u64).min(bn);
    let ek = (t.base_k as u64).min(kal);
    let (nm, nn, nk) = (cdiv(bm, em), cdiv(bn, en), cdiv(kal, ek));
    let sm = (t.step_m as u64).min(nm);
    let sn = (t.step_n as u64).min(nn);
    let ska = (t.step_ka as u64).min(nk);
    let skb = (t.step_kb as u64).min(nk);
    let (cm, cn) = (cdiv(nm, sm), cdiv(nn, sn));
    let (a_res_k, b_res_k) = (ska >= nk, skb >= nk);
    let m_inner = t.iterate_order == 0;
    // How often each panel crosses MTE2: a panel stays in L1 only if its whole K extent fits
    // and the loop order revisits it while resident.
    let (fa, fb) = if m_inner {
        (if cm == 1 && a_res_k { 1 } else { cn }, if b_res_k { 1 } else { cm })
    } else {
        (if a_res_k { 1 } else { cn }, if cn == 1 && b_res_k { 1 } else { cm })
    };
    let (bmf, bnf, kf) = (bm as f64, bn as f64, kal as f64);
    let pa = bmf * kf * c.a_gm;
    let pb = kf * bnf * c.b_gm;
    let a_first = part(MTE2, pa / c.gm_bpc);
    let a_re = part(L2, pa * (fa - 1) as f64 / c.l2_bpc);
    let mut b_load = add(&part(MTE2, pb / c.gm_bpc), &part(L2, pb * (fb - 1) as f64 / c.l2_bpc));
    if c.dequant {
        // W8A16: the vector unit casts and scales every loaded weight (2 instructions).
        b_load[VECTOR] += kf * bnf * fb as f64 * 2.0 / c.vec_epc;
    }
    let a_load = add(&a_first, &a_re);
    // L0 reuse: with a single K step the tile of the operand not walked by the inner loop stays.
    let a_l0 = bmf * kf * c.a_l as f64 * if nk == 1 && !m_inner { 1.0 } else { nn as f64 };
    let b_l0 = kf * bnf * c.b_l as f64 * if nk == 1 && m_inner { 1.0 } else { nm as f64 };
    let (ta, tb) = (a_l0 / c.l1a_bpc, b_l0 / c.l1b_bpc);
    let cube = bmf * bnf * kf / c.macs;
    let n_mmad = (nm * nn * nk) as f64;
    let mte1_db = if t.db_l0a { ta } else { 0.0 } + if t.db_l0b { tb } else { 0.0 };
    let mte1_ser = ta + tb - mte1_db;
    let inner = add(&overlap(&part(CUBE, cube), &part(MTE1, mte1_db), n_mmad), &part(MTE1, mte1_ser));
    let a_db = t.depth_a1 >= 2 * t.step_m * t.step_ka;
    let b_db = t.depth_b1 >= 2 * t.step_n * t.step_kb;
    let zero = [0.0; super::ENGINES];
    let load_db = add(if a_db { &a_load } else { &zero }, if b_db { &b_load } else { &zero });
    let load_ser = add(if a_db { &zero } else { &a_load }, if b_db { &zero } else { &b_load });
    let n_l1 = (cm * cn * cdiv(nk, ska.min(skb))) as f64;
    let s2 = add(&overlap(&inner, &load_db, n_l1), &load_ser);
    let out_bytes = bmf * bnf * c.c_out;
    let mut fix = part(FIXPIPE, out_bytes / c.fix_bpc);
    fix[VECTOR] += bmf * bnf * c.epi_instr / c.vec_epc;
    if c.p.epilogue == Epilogue::ResidualAdd {
        fix[MTE2] += out_bytes / c.gm_bpc;
    }
    let n_out = (nm * nn) as f64;
    let block = if t.db_l0c { overlap(&s2, &fix, n_out) } else { add(&s2, &fix) };

    let batch = c.p.batch;
    let blocks = batch.saturating_mul(cdiv(c.mal, bm)).saturating_mul(cdiv(c.nal, bn));
    let cores = blocks.min(c.cores).max(1);
    let waves = cdiv(blocks, cores);
    let wf = waves as f64 * c.us_per_cycle;
    let mut exposed = [0.0; super::ENGINES];
    for (e, b) in exposed.iter_mut().zip(block.iter()) {
        *e = b * wf;
    }
    // Chip-wide memory: operands once if they fit in L2, else the overflow share of re-reads.
    let bf = batch as f64;
    let unique = bf * (c.mal as f64 * kf * c.a_gm + kf * c.nal as f64 * c.b_gm);
    let requested = blocks as f64 * (pa * fa as f64 + pb * fb as f64);
    let reads = if unique <= c.l2_bytes { unique } else { unique + (requested - unique).max(0.0) * (1.0 - c.l2_bytes / unique) };
    let out_total = bf * c.p.m as f64 * c.p.n as f64 * c.c_out;
    let writes = if c.p.epilogue == Epilogue::ResidualAdd { 2.0 * out_total } else { out_total };
    let hbm_bytes = reads + writes;
    let t_hbm = hbm_bytes / c.hbm_bytes_per_us;
    let t_core = sum(&exposed);
    if t_hbm > t_core {
        exposed[HBM] = t_hbm - t_core;
    }
    exposed[LAUNCH] = c.launch_us;
    let mut busy = [0.0; super::ENGINES];
    busy[CUBE] = cube * wf;
    busy[MTE1] = (ta + tb) * wf;
    busy[MTE2] = (a_load[MTE2] + b_load[MTE2] + fix[MTE2]) * wf;
    busy[L2] = (a_load[L2] + b_load[L2]) * wf;
    busy[FIXPIPE] = fix[FIXPIPE] * wf;
    busy[VECTOR] = (b_load[VECTOR] + fix[VECTOR]) * wf;
    busy[HBM] = t_hbm;
    busy[LAUNCH] = c.launch_us;
    let (m, n, k) = (c.p.m as f64, c.p.n as f64, c.p.k as f64);
    Ok(Raw {
        exposed,
        busy,
        cube_core_us: cube * blocks as f64 * c.us_per_cycle,
        vector_core_us: busy[VECTOR] / wf * blocks as f64 * c.us_per_cycle,
        flops: 2.0 * bf * m * n * k,
        hbm_bytes,
        cores_used: cores as u32,
        waves,
        relative_error: error::matmul(c.p.a, c.p.b, c.p.k),
    })
}

/// Only the total time of a tiling, for searches (None when infeasible).
#[inline]
pub fn time_us(c: &Ctx, t: &MatmulTiling) -> Option<f64> {
    core(c, t).ok().map(|r| sum(&r.exposed))
}

/// The matmul problem of an `Op::Matmul`.
pub fn problem(op: &Op) -> Result<Problem, Infeasible> {
    match *op {
        Op::Matmul { batch, m, n, k, dtype, weight_dtype, epilogue } => {
            super::check_dims(&[("batch", batch), ("m", m), ("n", n), ("k", k)])?;
            Ok(Problem { batch, m, n, k, a: dtype, b: weight_dtype.unwrap_or(dtype), a_gm_scale: 1.0, epilogue })
        }
        _ => Err(Infeasible::new("not a matmul")),
    }
}

/// Costs a matmul problem under a tiling (Default: the heuristic tiling).
pub fn estimate_problem(p: Problem, tiling: &Tiling, d: &Device) -> Result<Estimate, Infeasible> {
    let c = Ctx::new(p, d);
    let t = match tiling {
        Tiling::Default => crate::tuning::default_matmul(&c, d),
        Tiling::Matmul(t) => *t,
        other => return Err(Infeasible::new(format!("a matmul takes a matmul tiling, not '{}'", other.describe()))),
    };
    let raw = core(&c, &t).map_err(|r| Infeasible::new(r.message()))?;
    Ok(finish(&raw, d))
}

/// `Op::Matmul` entry point.
pub fn estimate(op: &Op, tiling: &Tiling, d: &Device) -> Result<Estimate, Infeasible> {
    estimate_problem(problem(op)?, tiling, d)
}

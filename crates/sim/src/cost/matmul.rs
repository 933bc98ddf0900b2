//! Matmul and batched matmul on the cube unit under a TCubeTiling (D `atlasascendc_api_07_0673`).
//!
//! Per core block (singleCoreM x singleCoreN x K): MTE2 brings A and B panels from GM (first
//! touch at the per-core GM rate, re-reads from L2 at the L2 rate, S1 `[AICoreMemoryRates]`),
//! MTE1 copies base tiles L1 -> L0A/L0B (512 / 256 B per cycle, S1), the cube does
//! 16 x 16 x C0 MACs per cycle, FixPipe drains L0C. Stages overlap only where the tiling double
//! buffers (D `_10_0033`). Blocks run in waves over the cube cores; the chip-wide memory
//! bandwidth (S2) bounds the whole kernel, with operands re-read from L2 when they fit it.
//! The hot path (`core`) allocates nothing and returns a numeric `Reject` rather than a string.
//!
//! Pipeline hand-offs (profile `cube_kstep_sync_cycles`, `l1_load_sync_cycles`,
//! `fixpipe_sync_cycles`): every MMAD waits on the MTE1 -> M flag and sets M -> MTE1, every L1
//! panel load waits on MTE1 -> MTE2 before it may overwrite a buffer, every output tile hands
//! L0C to FixPipe. These are paid per K step / load / tile, so large matmuls stop short of the
//! cube peak by mechanism, and small base tiles pay more of them.
//!
//! L2 reuse: all bytes a core requests beyond the first read of each operand byte are re-reads.
//! Cores of one wave walk K in step, so concurrent re-reads of a shared panel hit L2; a
//! re-read in a later wave hits only if what one wave touches (its A rows and B columns over
//! the whole K, the wave footprint) stays in L2: the miss share is `1 - L2 / footprint` once
//! the footprint exceeds L2, a smooth transition. Each core's MTE2 reads through L2 at the L2
//! rate; the device-memory side (first reads and misses) is the chip-wide sustained HBM bound.

use super::{align, error, finish, max_f, mul_sat, overlap_s, Parts, Raw, Stage, CUBE, FIXPIPE, HBM, L2, LAUNCH, MTE1, MTE2, VECTOR};
use crate::device::{Arch, Device};
use crate::dtype::DType;
use crate::estimate::{Estimate, Infeasible};
use crate::op::{Epilogue, Op};
use crate::tiling::{MatmulTiling, Tiling};

pub use super::matmul_rules::Reject;
use super::matmul_rules::check;

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
    /// The type the cube computes in: INT8 only when both operands are integers and the
    /// activations INT8 (W4A8 widens its INT4 weights to INT8 on the way in), INT4 when both
    /// are INT4 (W4A4; the cube's s4 path, C0 = 64 elements), FP32 when either is FP32, else
    /// BF16/FP16 (W8A16 and W4A16 dequantise weights to the activation type first).
    pub fn cube_type(&self) -> DType {
        match (self.a, self.b) {
            (DType::Int4, DType::Int4) => DType::Int4,
            (DType::Int8, DType::Int8 | DType::Int4) | (DType::Int4, DType::Int8) => DType::Int8,
            (DType::Fp32, _) | (_, DType::Fp32) => DType::Fp32,
            (DType::Bf16, _) | (_, DType::Bf16) => DType::Bf16,
            _ => DType::Fp16,
        }
    }
    /// Fractal K alignment C0 in elements: 32 bytes of the cube type (ascend-devices.md).
    pub fn c0(&self) -> u64 {
        256 / self.cube_type().bits()
    }
}

/// Per-device, per-problem constants hoisted out of the hot loop.
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    pub(crate) p: Problem,
    pub(crate) c0: u64,
    pub(crate) a_l: u64,
    pub(crate) b_l: u64,
    pub(crate) a_gm: f64,
    pub(crate) b_gm: f64,
    pub(crate) c_out: f64,
    pub(crate) inv_macs: f64,
    pub(crate) mal: u64,
    pub(crate) nal: u64,
    pub(crate) kal: u64,
    pub(crate) l0a: u64,
    pub(crate) l0b: u64,
    pub(crate) l0c: u64,
    pub(crate) l1: u64,
    pub(crate) inv_gm: f64,
    pub(crate) inv_l2: f64,
    pub(crate) inv_l1a: f64,
    pub(crate) inv_l1b: f64,
    pub(crate) inv_fix: f64,
    /// Cube cycles per vector element-instruction available to one cube core.
    pub(crate) inv_vec: f64,
    pub(crate) epi_instr: f64,
    pub(crate) dequant: bool,
    pub(crate) cores: u64,
    pub(crate) us_per_cycle: f64,
    pub(crate) inv_hbm: f64,
    pub(crate) l2_bytes: f64,
    pub(crate) launch_us: f64,
    pub(crate) kstep_sync: f64,
    /// Operand bytes if each element were read once (the L2 model's unique bytes).
    pub(crate) unique: f64,
    pub(crate) l1_sync: f64,
    pub(crate) fix_sync: f64,
}

impl Ctx {
    /// Hoists everything that does not depend on the tiling.
    pub fn new(p: Problem, d: &Device) -> Ctx {
        let ct = p.cube_type();
        let c0 = p.c0();
        let l_bytes = |t: DType| if ct.is_int() { 1 } else { ct.bytes().max(t.bytes()) };
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
        let (mal, nal, kal) = (align(p.m, 16), align(p.n, 16), align(p.k, c0));
        // Packed INT4 moves half a byte per element.
        let a_gm = p.a.size() * p.a_gm_scale;
        let b_gm = p.b.size();
        Ctx {
            p,
            c0,
            a_l: l_bytes(p.a),
            b_l: l_bytes(p.b),
            a_gm,
            b_gm,
            c_out: error::output_type(p.a).bytes() as f64,
            // FP32 goes at the chip's measured FP32 cube rate; the other types at one fractal
            // (16 x 16 x C0) per cycle.
            inv_macs: match ct {
                DType::Fp32 => 1.0 / (4096.0 * d.cube_fp32_rate),
                // The s4 fractal holds 16x64x16 MACs, but the chip issues INT4 at its own rate.
                DType::Int4 => 1.0 / (4096.0 * d.cube_int4_rate),
                _ => 1.0 / (16 * 16 * c0) as f64,
            },
            mal: align(p.m, 16),
            nal: align(p.n, 16),
            kal: align(p.k, c0),
            l0a: d.l0a_bytes,
            l0b: d.l0b_bytes,
            l0c: d.l0c_bytes,
            l1: d.l1_bytes,
            inv_gm: 1.0 / d.gm_bytes_per_cycle,
            inv_l2: 1.0 / d.l2_read_bytes_per_cycle,
            inv_l1a: 1.0 / d.l1_to_l0a_bytes_per_cycle,
            inv_l1b: 1.0 / d.l1_to_l0b_bytes_per_cycle,
            inv_fix: 1.0 / d.l0c_out_bytes_per_cycle.min(d.l2_write_bytes_per_cycle),
            inv_vec: 1.0 / vec_epc,
            epi_instr,
            dequant: p.b.is_int() && !ct.is_int(),
            cores: d.cube_cores.max(1) as u64,
            us_per_cycle: 1.0 / d.cube_clock_mhz,
            inv_hbm: 1.0 / (d.derived.hbm_gbs * 1.0e3),
            l2_bytes: d.l2_bytes as f64,
            launch_us: d.launch_matmul_us,
            kstep_sync: d.cube_kstep_sync_cycles,
            unique: p.batch as f64 * (mal as f64 * kal as f64 * a_gm + kal as f64 * nal as f64 * b_gm),
            l1_sync: d.l1_load_sync_cycles,
            fix_sync: d.fixpipe_sync_cycles,
        }
    }

    /// The padded problem dims (M, N aligned to 16, K to C0).
    pub fn aligned(&self) -> (u64, u64, u64) {
        (self.mal, self.nal, self.kal)
    }

    pub fn c0(&self) -> u64 {
        self.c0
    }

    /// The batch count.
    pub fn batch(&self) -> u64 {
        self.p.batch
    }

    /// Bytes per element of A and B in L1 / L0.
    pub fn operand_bytes(&self) -> (u64, u64) {
        (self.a_l, self.b_l)
    }
}

/// Ceiling division (a manual 32-bit fast path was measured slower under WebAssembly).
#[inline(always)]
fn cdiv(a: u64, b: u64) -> u64 {
    let b = b.max(1);
    a.div_ceil(b)
}

/// Scalar terms of one tiling, in cube cycles per block (shared by the fast and full paths).
#[derive(Clone, Copy)]
struct Terms {
    cube: f64,
    ta: f64,
    tb: f64,
    a_first: f64,
    a_re: f64,
    b_first: f64,
    b_re: f64,
    b_vec: f64,
    fix: f64,
    fix_vec: f64,
    fix_mte2: f64,
    n_mmad: f64,
    n_l1: f64,
    n_out: f64,
    a_db: bool,
    b_db: bool,
    hbm_reads: f64,
    blocks: u64,
    waves: u64,
    cores: u64,
}

#[inline(always)]
fn terms(c: &Ctx, t: &MatmulTiling) -> Result<Terms, Reject> {
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
    // MTE2 is fastest with 512-byte bursts (`super::MTE2_BURST_BYTES`). A (activations, row-major ND
    // M x K) is read in runs of stepKa x baseK elements; a shorter run costs as much as a
    // 512-byte one. B is taken to be in the fractal NZ layout (weights are converted offline;
    // each 16 x C0 fractal is 512 contiguous bytes), so its runs are always full.
    let run_a = (mul_sat(ska, ek).min(kal)) as f64 * c.a_gm;
    let slow_a = super::short_run_factor(run_a);
    let pa = bmf * kf * c.a_gm;
    let pb = kf * bnf * c.b_gm;
    let (fa, fb) = (fa as f64, fb as f64);
    // L0 reuse: with a single K step the tile of the operand not walked by the inner loop stays.
    let a_l0 = bmf * kf * c.a_l as f64 * if nk == 1 && !m_inner { 1.0 } else { nn as f64 };
    let b_l0 = kf * bnf * c.b_l as f64 * if nk == 1 && m_inner { 1.0 } else { nm as f64 };
    let out_bytes = bmf * bnf * c.c_out;
    let (mb, nb) = (cdiv(c.mal, bm), cdiv(c.nal, bn));
    let blocks = mul_sat(mul_sat(c.p.batch, mb), nb);
    let cores = blocks.min(c.cores).max(1);
    // L2: requested vs unique bytes, and the footprint of one wave (blocks in N-inner raster
    // order: up to `cores` columns of one row, or whole rows).
    let unique = c.unique;
    let requested = blocks as f64 * (pa * fa + pb * fb);
    let gn = nb.min(cores);
    let gm = if nb >= cores { 1 } else { cdiv(cores, nb) };
    let footprint = (gm as f64 * pa + gn as f64 * pb).min(unique);
    let miss = if footprint > c.l2_bytes { 1.0 - c.l2_bytes / footprint } else { 0.0 };
    let reread = max_f(requested - unique, 0.0);
    let hbm_reads = unique + reread * miss;
    // Per core: every byte reaches MTE2 through L2 at the L2 rate (first reads on MTE2,
    // re-reads on L2); the device-memory side of first reads and misses is the chip-wide HBM
    // bound (`hbm_bytes`), so per-block costs never fall as the problem grows.
    let n_l1 = mul_sat(mul_sat(cm, cn), cdiv(nk, ska.min(skb))) as f64;
    let n_mmad = mul_sat(mul_sat(nm, nn), nk) as f64;
    let n_out = mul_sat(nm, nn) as f64;
    Ok(Terms {
        // Each MMAD also pays its issue / flag hand-off on the cube pipe.
        cube: bmf * bnf * kf * c.inv_macs + n_mmad * c.kstep_sync,
        ta: a_l0 * c.inv_l1a,
        tb: b_l0 * c.inv_l1b,
        a_first: pa * c.inv_l2 * slow_a + 0.5 * n_l1 * c.l1_sync,
        a_re: pa * (fa - 1.0) * c.inv_l2 * slow_a,
        b_first: pb * c.inv_l2 + 0.5 * n_l1 * c.l1_sync,
        b_re: pb * (fb - 1.0) * c.inv_l2,
        // W8A16: the vector unit casts and scales every loaded weight (2 instructions).
        b_vec: if c.dequant { kf * bnf * fb * 2.0 * c.inv_vec } else { 0.0 },
        fix: out_bytes * c.inv_fix + n_out * c.fix_sync,
        fix_vec: bmf * bnf * c.epi_instr * c.inv_vec,
        fix_mte2: if c.p.epilogue == Epilogue::ResidualAdd { out_bytes * c.inv_gm } else { 0.0 },
        n_mmad,
        n_l1,
        n_out,
        // In u64: the u32 product could overflow for an absurd tiling.
        a_db: t.depth_a1 as u64 >= mul_sat(2, mul_sat(t.step_m as u64, t.step_ka as u64)),
        b_db: t.depth_b1 as u64 >= mul_sat(2, mul_sat(t.step_n as u64, t.step_kb as u64)),
        hbm_reads,
        blocks,
        waves: cdiv(blocks, cores),
        cores,
    })
}

/// The per-block pipeline: cube || MTE1 (if L0 double-buffered), then || MTE2 (if L1
/// double-buffered), then || FixPipe (if L0C double-buffered); otherwise the stages add.
#[inline(always)]
fn block<S: Stage>(x: &Terms, t: &MatmulTiling) -> S {
    let mte1_db = if t.db_l0a { x.ta } else { 0.0 } + if t.db_l0b { x.tb } else { 0.0 };
    let mte1_ser = x.ta + x.tb - mte1_db;
    let inner = overlap_s(S::one(CUBE, x.cube), S::one(MTE1, mte1_db), x.n_mmad).plus(&S::one(MTE1, mte1_ser));
    let a_load = S::one(MTE2, x.a_first).plus(&S::one(L2, x.a_re));
    let b_load = S::one(MTE2, x.b_first).plus(&S::one(L2, x.b_re)).plus(&S::one(VECTOR, x.b_vec));
    let (mut load_db, mut load_ser) = (S::zero(), S::zero());
    if x.a_db { load_db = load_db.plus(&a_load) } else { load_ser = load_ser.plus(&a_load) }
    if x.b_db { load_db = load_db.plus(&b_load) } else { load_ser = load_ser.plus(&b_load) }
    let s2 = overlap_s(inner, load_db, x.n_l1).plus(&load_ser);
    let fix = S::one(FIXPIPE, x.fix).plus(&S::one(VECTOR, x.fix_vec)).plus(&S::one(MTE2, x.fix_mte2));
    if t.db_l0c { overlap_s(s2, fix, x.n_out) } else { s2.plus(&fix) }
}

/// Device-memory bytes: the operand reads the L2 model lets through (see the module note),
/// plus the output (and the residual read).
#[inline(always)]
fn hbm_bytes(c: &Ctx, x: &Terms) -> f64 {
    let out_total = c.p.batch as f64 * c.p.m as f64 * c.p.n as f64 * c.c_out;
    x.hbm_reads + if c.p.epilogue == Epilogue::ResidualAdd { 2.0 * out_total } else { out_total }
}

/// Only the total time of a tiling, for searches (None when infeasible). No allocation.
#[inline]
pub fn time_us(c: &Ctx, t: &MatmulTiling) -> Option<f64> {
    let x = terms(c, t).ok()?;
    let core = block::<f64>(&x, t) * x.waves as f64 * c.us_per_cycle;
    let mem = hbm_bytes(c, &x) * c.inv_hbm;
    Some(max_f(core, mem) + c.launch_us)
}

/// Lower bound on the time of any tiling with this per-core split: the cube alone, the first
/// read of each panel at the per-core GM rate, or device memory.
pub fn lower_bound_us(c: &Ctx, single_core_m: u64, single_core_n: u64) -> f64 {
    let bm = single_core_m.min(c.mal).max(1);
    let bn = single_core_n.min(c.nal).max(1);
    let blocks = c.p.batch.saturating_mul(cdiv(c.mal, bm)).saturating_mul(cdiv(c.nal, bn));
    let waves = cdiv(blocks, blocks.min(c.cores).max(1));
    let (bmf, bnf, kf) = (bm as f64, bn as f64, c.kal as f64);
    // Each block reads its panels at least once, at best at the faster of the GM and L2 rates;
    // chip-wide, the unique bytes plus the missed share of the least possible re-reads.
    let (pa, pb) = (bmf * kf * c.a_gm, kf * bnf * c.b_gm);
    let inv_min = c.inv_l2;
    let core = (bmf * bnf * kf * c.inv_macs).max((pa + pb) * inv_min) * waves as f64 * c.us_per_cycle;
    let mem = (min_reads(c, blocks, bm, bn) + c.p.batch as f64 * c.p.m as f64 * c.p.n as f64 * c.c_out) * c.inv_hbm;
    core.max(mem) + c.launch_us
}

/// The fewest operand bytes from device memory any tiling with this split can need (each
/// panel requested once per block; see `terms` for the same L2 model).
fn min_reads(c: &Ctx, blocks: u64, bm: u64, bn: u64) -> f64 {
    let kf = c.kal as f64;
    let (pa, pb) = (bm as f64 * kf * c.a_gm, kf * bn as f64 * c.b_gm);
    let unique = c.p.batch as f64 * (c.mal as f64 * kf * c.a_gm + kf * c.nal as f64 * c.b_gm);
    let cores = blocks.min(c.cores).max(1);
    let nb = cdiv(c.nal, bn);
    let footprint = (cdiv(cores, nb) as f64 * pa + nb.min(cores) as f64 * pb).min(unique);
    let miss = if footprint > c.l2_bytes { 1.0 - c.l2_bytes / footprint } else { 0.0 };
    unique + (blocks as f64 * (pa + pb) - unique).max(0.0) * miss
}

/// Lower bound for any tiling with this split and these base sizes (steps, buffering and
/// order free): the cube, the cheaper loop order's MTE1 traffic, or first-touch MTE2 at full
/// burst efficiency, whichever is largest; or device memory.
pub fn base_lower_bound_us(c: &Ctx, t: &MatmulTiling) -> f64 {
    let bm = (t.single_core_m as u64).min(c.mal).max(1);
    let bn = (t.single_core_n as u64).min(c.nal).max(1);
    let em = (t.base_m as u64).min(bm).max(1);
    let en = (t.base_n as u64).min(bn).max(1);
    let ek = (t.base_k as u64).min(c.kal).max(1);
    let (nm, nn, nk) = (cdiv(bm, em), cdiv(bn, en), cdiv(c.kal, ek));
    let (bmf, bnf, kf) = (bm as f64, bn as f64, c.kal as f64);
    let a = bmf * kf * c.a_l as f64 * c.inv_l1a;
    let b = kf * bnf * c.b_l as f64 * c.inv_l1b;
    let (m_inner, n_inner) = if nk == 1 { (a * nn as f64 + b, a + b * nm as f64) } else { (a * nn as f64 + b * nm as f64, a * nn as f64 + b * nm as f64) };
    let mte1 = m_inner.min(n_inner);
    let inv_min = c.inv_l2;
    let load = (bmf * kf * c.a_gm + kf * bnf * c.b_gm) * inv_min;
    let cube = bmf * bnf * kf * c.inv_macs + mul_sat(mul_sat(nm, nn), nk) as f64 * c.kstep_sync;
    let blocks = c.p.batch.saturating_mul(cdiv(c.mal, bm)).saturating_mul(cdiv(c.nal, bn));
    let waves = cdiv(blocks, blocks.min(c.cores).max(1));
    let core = cube.max(mte1).max(load) * waves as f64 * c.us_per_cycle + c.launch_us;
    core.max(lower_bound_us(c, bm, bn))
}

/// The full path: costs one tiling with its per-engine breakdown.
pub fn core(c: &Ctx, t: &MatmulTiling) -> Result<Raw, Reject> {
    let x = terms(c, t)?;
    let blk: Parts = block(&x, t);
    let wf = x.waves as f64 * c.us_per_cycle;
    let mut exposed = super::scale(&blk, wf);
    let hbm = hbm_bytes(c, &x);
    let t_hbm = hbm * c.inv_hbm;
    super::memory_bound(&mut exposed, t_hbm);
    exposed[LAUNCH] = c.launch_us;
    let mut busy = [0.0; super::ENGINES];
    busy[CUBE] = x.cube * wf;
    busy[MTE1] = (x.ta + x.tb) * wf;
    busy[MTE2] = (x.a_first + x.b_first + x.fix_mte2) * wf;
    busy[L2] = (x.a_re + x.b_re) * wf;
    busy[FIXPIPE] = x.fix * wf;
    busy[VECTOR] = (x.b_vec + x.fix_vec) * wf;
    busy[HBM] = t_hbm;
    busy[LAUNCH] = c.launch_us;
    let (m, n, k) = (c.p.m as f64, c.p.n as f64, c.p.k as f64);
    let per_block = x.blocks as f64 * c.us_per_cycle;
    Ok(Raw {
        exposed,
        busy,
        cube_core_us: x.cube * per_block,
        vector_core_us: (x.b_vec + x.fix_vec) * per_block,
        flops: 2.0 * c.p.batch as f64 * m * n * k,
        hbm_bytes: hbm,
        cores_used: x.cores as u32,
        waves: x.waves,
        relative_error: error::matmul(c.p.a, c.p.b, c.p.k),
    })
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
    estimate_ctx(Ctx::new(p, d), tiling, d)
}

/// Costs a matmul problem whose device-memory side sustains `hbm_gbs` rather than the chip's
/// copy rate (a kernel whose traffic is a read stream: `cost::moe_comm`'s grouped matmul).
pub fn estimate_problem_at(p: Problem, tiling: &Tiling, d: &Device, hbm_gbs: f64) -> Result<Estimate, Infeasible> {
    let mut c = Ctx::new(p, d);
    c.inv_hbm = 1.0 / (hbm_gbs.max(1.0e-3) * 1.0e3);
    estimate_ctx(c, tiling, d)
}

fn estimate_ctx(c: Ctx, tiling: &Tiling, d: &Device) -> Result<Estimate, Infeasible> {
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

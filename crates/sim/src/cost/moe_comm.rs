//! The MoE operators: the token exchange of expert parallelism (dispatch and combine, in the
//! kernel forms engines use) and the experts' grouped matmul.
//!
//! **The grouped matmul** runs as its groups batched (`Op::lowered`, the cube pipeline of
//! `cost::matmul`), with one difference: its device-memory traffic is a read stream (every
//! touched expert's [K, N] weight read once, the token rows and outputs small beside it), and
//! the library's grouped matmul sustains `grouped_matmul_hbm_efficiency` of the HBM peak on it
//! (`grouped_hbm_gbs`), not the copy-measured `hbm_efficiency` (half writes).
//!
//! One rank holds `tokens` tokens, each routed to `top_k` experts spread evenly over the `ranks`
//! ranks. The wire part of an exchange is priced as the collective it is (`cost::comm`, its
//! links and efficiencies, the A3 SuperPOD fabric included).
//! - `all_to_all` (HCCL all-to-all(v)): every routed copy, one (token, expert) pair each, of
//!   `hidden` elements (plus a 4-byte fp32 scale when the wire type is INT8); the task to each
//!   peer is issued in turn (the ring's p - 1 steps). The reordering around it is the
//!   framework's own operators.
//! - `deepep_normal`, `deepep_low_latency` and `mc2` are AIV kernels that move the rows
//!   themselves (DeepEP-Ascend, sgl-project/sgl-kernel-npu@b2e93094, the commit of its README's
//!   A3 figures: csrc/deepep/ops/op_kernel/cam_moe_dispatch_normal.h and cam_moe_combine_normal.h;
//!   the low-latency mode and vLLM-Ascend's `mc2` call CANN's MoeDistributeDispatchV2 /
//!   CombineV2, the same scheme). What the code does, and so what is priced:
//!   - **A row per (token, expert) pair**, not per destination rank: the receiver's output is
//!     expanded per local expert (`expandx_out` has one row per received pair), so a token bound
//!     for two experts of one rank crosses the link twice. A dispatch row carries the token
//!     (INT8 or BF16), a 32-byte scale slot and the (rank, token, k) triple; a combine row the
//!     expert's BF16 output; each padded to 512 bytes in the window (`WIN_ADDR_ALIGN`).
//!   - **Dispatch stages before it sends**: each vector core takes its share of the pairs and,
//!     row after row, reads the BF16 token from device memory, quantises it in the vector unit
//!     when the wire type is INT8 (cast to fp32, abs, max-reduce, scale, three casts down:
//!     `DISPATCH_QUANT_PASSES`), and writes the row to the window; only then do the flags go
//!     out and the rows cross the link.
//!   - **Combine reduces after it receives**: the expert outputs cross the link to their
//!     tokens' ranks, then each vector core, token after token, waits for its top-k flags,
//!     reads the k rows, casts, weights and adds them in fp32 (`COMBINE_PASSES_PER_ROW`) and
//!     writes the token.
//!   - Each row step of those loops is serial on its core: every vector instruction is followed
//!     by a pipe barrier and the loop passes through scalar flag waits (`*_HANDOFFS`, counted in
//!     the code), each a hand-off priced at the kernel library's `vector_tile_sync_cycles`, the
//!     same per-tile hand-off the vector operators pay. A phase takes the longer of its busiest
//!     core's serial rows and the device memory its bytes need.
//!   - `deepep_normal` dispatch first runs a layout exchange (`aclnnNotifyDispatch`: the counts
//!     per expert, latency only), and the host reads the counts back to size the output before
//!     it launches the data kernel: one host round trip (`eager_host_us_per_launch`).
//!
//! Only the share that leaves the rank crosses the link ((p - 1) / p, `comm::steps_and_bytes`),
//! at the row kernels' own sustained share of the link (`aiv_link_efficiency`, kernel library;
//! HCCL's all-to-all keeps `hccs_efficiency`).
//! - **The low-latency and MC2 dispatch copy what they received** (`LocalWindowCopy`, CANN
//!   hicann/ops-transformer mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_dispatch_v2.h
//!   @1f20f8f9: `AlltoAllDispatch -> SetStatus -> WaitDispatch -> LocalWindowCopy`): the senders
//!   write into the receiver's window, then each vector core, row after row, reads a received
//!   row from its window and writes the token, its scale and its triple to the outputs
//!   (`RECV_COPY_HANDOFFS`). The normal mode's data kernel reads the peers' windows straight into
//!   its output (`ShareToOutputLongSeq`), so its wire part already is that loop.
//! - **The normal mode waits for its latest peer** (`peer_wait_us`): its dispatch syncs the host
//!   inside the call (deep_ep.cpp: `max_bs.item()`, `total_recv_token.item()` between the
//!   layout exchange and the data kernel), and ranks are not aligned before a call, so each
//!   cross-rank wait that follows host work on every rank (notify_dispatch's flags, the data
//!   kernel's `WaitStatus`; the combine's per-token flags) ends when the latest of the p - 1
//!   peers arrives. The spread grows with the peers: `NORMAL_*_WAITS` x (p - 1) x the kernel
//!   library's `normal_peer_wait_us` (sgl-kernel-npu@f425bdf1; its README's dispatch slows 2.6x
//!   and its combine 1.5x from EP8 to EP128 at the same bytes per rank). The low-latency mode
//!   and MC2 sync no host inside the call and do not pay it.

use crate::device::Device;
use crate::estimate::{Estimate, Infeasible};
use crate::op::{CommAlgorithm, CommKind, MoeCommForm, MoePhase, Op};
use crate::tiling::Tiling;

/// Vector passes over a row when a dispatch quantises it to INT8 in the kernel (fp32 cast, abs,
/// max-reduce, scale, cast to int32, to half, to int8: `QuantProcess`).
pub const DISPATCH_QUANT_PASSES: f64 = 7.0;
/// Hand-offs per dispatch row that quantises: the MTE2 -> V and V -> MTE3 queue flags, a pipe
/// barrier after each of the 7 passes' instructions (6), the scalar read of the max (V -> S and
/// S -> V), `SetDeqScale`'s barrier and the triple's MTE3 <-> S flags (`FillTriple`): 13.
pub const DISPATCH_HANDOFFS_QUANT: f64 = 13.0;
/// Hand-offs per dispatch row that is copied as it is (BF16): the two queue flags and the
/// triple's two.
pub const DISPATCH_HANDOFFS_PLAIN: f64 = 4.0;
/// Vector passes per received row of a combine (cast to fp32, multiply by the weight, add).
pub const COMBINE_PASSES_PER_ROW: f64 = 3.0;
/// Hand-offs per received row of a combine (the queue flag and two pipe barriers).
pub const COMBINE_HANDOFFS_PER_ROW: f64 = 3.0;
/// Hand-offs per combined token beyond its rows: the flag wait loop (S -> MTE2, MTE2 -> V,
/// V -> S, S -> V, V -> MTE3) and the final cast's barrier and V -> MTE3 flag.
pub const COMBINE_HANDOFFS_PER_TOKEN: f64 = 7.0;
/// Cross-rank waits of a normal-mode dispatch that follow host work on every rank: the layout
/// exchange's flags (notify_dispatch) and, after the host reads the counts back, the data
/// kernel's `WaitStatus`.
pub const NORMAL_DISPATCH_WAITS: f64 = 2.0;
/// Cross-rank waits of a normal-mode combine: its per-token flags (`WaitBuffCopy`).
pub const NORMAL_COMBINE_WAITS: f64 = 1.0;
/// Hand-offs per received row of a low-latency / MC2 dispatch's window copy: the queue's
/// MTE2 -> MTE3 flag (EnQue/DeQue) and the buffer's MTE3 -> MTE2 release (FreeTensor/Alloc).
pub const RECV_COPY_HANDOFFS: f64 = 2.0;
/// Window rows are padded to this many bytes (`WIN_ADDR_ALIGN`).
const WINDOW_ALIGN: u64 = 512;

/// Distinct ranks a token's `top_k` experts land on, experts uniform over `ranks` ranks.
pub fn distinct_ranks(ranks: u64, top_k: u64) -> f64 {
    let p = ranks.max(1) as f64;
    p * (1.0 - libm::pow(1.0 - 1.0 / p, top_k as f64))
}

/// Whether the form is an AIV kernel that moves (token, expert) rows itself.
fn rows_kernel(form: MoeCommForm) -> bool {
    !matches!(form, MoeCommForm::AllToAll)
}

/// Bytes one (token, expert) copy occupies on the wire: for HCCL's all-to-all the `hidden`
/// elements plus their fp32 scale when INT8; for the row kernels the padded window row.
fn copy_bytes(op: &Op) -> f64 {
    let Op::MoeComm { phase, form, hidden, dtype, .. } = *op else { return 0.0 };
    let elems = hidden.saturating_mul(dtype.bytes() as u64);
    if !rows_kernel(form) {
        let scale = if dtype.bytes() == 1 { 4.0 } else { 0.0 };
        return elems as f64 + scale;
    }
    let row = match phase {
        // Token, a 32-byte scale slot, the (rank, token, k) triple of int32.
        MoePhase::Dispatch => super::align(elems, 32).saturating_add(32 + 12),
        MoePhase::Combine => elems,
    };
    super::align(row, WINDOW_ALIGN) as f64
}

/// The collective an exchange's wire part runs as (the full logical bytes of the rank's side,
/// the algorithm) and the bytes of its layout exchange (None: it has none).
pub fn as_collective(op: &Op) -> Option<(f64, CommAlgorithm, Option<u64>)> {
    let Op::MoeComm { phase, form, tokens, top_k, ranks, .. } = *op else { return None };
    let bytes = tokens as f64 * top_k as f64 * copy_bytes(op);
    Some(match form {
        MoeCommForm::AllToAll => (bytes, CommAlgorithm::Ring, None),
        // The counts per expert: three int32 per expert of each rank (latency only).
        MoeCommForm::DeepepNormal if phase == MoePhase::Dispatch => (bytes, CommAlgorithm::Mesh, Some(12 * ranks)),
        MoeCommForm::DeepepNormal | MoeCommForm::DeepepLowLatency | MoeCommForm::Mc2 => (bytes, CommAlgorithm::Mesh, None),
    })
}

/// Time (us) a normal-mode exchange spends waiting for its latest peer: its cross-rank waits
/// that follow host work on every rank, each (p - 1) x `normal_peer_wait_us`. Zero for the
/// other forms and for one rank.
pub fn peer_wait_us(op: &Op, d: &Device) -> f64 {
    let Op::MoeComm { phase, form: MoeCommForm::DeepepNormal, ranks, .. } = *op else { return 0.0 };
    let waits = match phase {
        MoePhase::Dispatch => NORMAL_DISPATCH_WAITS,
        MoePhase::Combine => NORMAL_COMBINE_WAITS,
    };
    waits * ranks.saturating_sub(1) as f64 * d.normal_peer_wait_us
}

/// Bytes that leave one rank (what a benchmark's "bandwidth" divides by the time).
pub fn wire_bytes(op: &Op) -> f64 {
    let Op::MoeComm { ranks, .. } = *op else { return 0.0 };
    let p = ranks.max(1) as f64;
    as_collective(op).map_or(0.0, |(b, ..)| b * (p - 1.0) / p)
}

/// The receive-side window copy of a low-latency / MC2 dispatch (`LocalWindowCopy`): every
/// received row (one per (token, expert), as many as the rank sends on average) is read from the
/// window and its token written to the output, row after row on each vector core; the longer of
/// the busiest core's loop and the device memory its bytes need. Zero for the other forms and
/// phases.
fn recv_copy_phase(op: &Op, d: &Device) -> super::Raw {
    let Op::MoeComm { phase: MoePhase::Dispatch, form: MoeCommForm::DeepepLowLatency | MoeCommForm::Mc2, tokens, hidden, top_k, dtype, .. } = *op else { return super::Raw::default() };
    let row = copy_bytes(op);
    let elems = hidden.saturating_mul(dtype.bytes() as u64) as f64;
    let (gm, out) = (d.gm_bytes_per_cycle.max(1.0), d.ub_to_gm_bytes_per_cycle.max(1.0));
    // Read the padded row; write the token, then its 4-byte scale (INT8) and 12-byte triple.
    let cycles = row / gm + RECV_COPY_HANDOFFS * d.vector_tile_sync_cycles + (elems + 16.0) / out;
    let rows = tokens as f64 * top_k as f64;
    let vcores = d.vector_cores.max(1) as f64;
    let per_core = libm::ceil(rows / vcores);
    let us = per_core * cycles / d.vector_clock_mhz.max(1.0);
    let hbm_bytes = rows * (row + elems + 16.0);
    let t_hbm = hbm_bytes / (d.derived.hbm_gbs * 1.0e3);
    let mut exposed = [0.0; super::ENGINES];
    exposed[super::VECTOR] = us;
    super::memory_bound(&mut exposed, t_hbm);
    let mut busy = [0.0; super::ENGINES];
    busy[super::VECTOR] = us;
    busy[super::HBM] = t_hbm;
    super::Raw { exposed, busy, hbm_bytes, cores_used: rows.min(vcores) as u32, waves: per_core as u64, ..super::Raw::default() }
}

/// Exposed time (us) of a low-latency / MC2 dispatch's window copy (`recv_copy_phase`); zero for
/// the other forms and phases.
pub fn recv_copy_us(op: &Op, d: &Device) -> f64 {
    let r = recv_copy_phase(op, d);
    r.exposed.iter().sum()
}

/// The on-chip phase of a row kernel (dispatch: stage and quantise; combine: weighted sum), as
/// exposed engine time in us: the busiest vector core's serial loop, or the device memory its
/// bytes need when that is longer. Zero for HCCL's all-to-all.
fn core_phase(op: &Op, d: &Device) -> super::Raw {
    let Op::MoeComm { phase, form, tokens, hidden, top_k, dtype, .. } = *op else { return super::Raw::default() };
    if !rows_kernel(form) {
        return super::Raw::default();
    }
    let h = hidden as f64;
    // The kernels compute in fp32: 64 lanes of the 128-lane (fp16) vector unit, at the
    // library's sustained share.
    let lanes = d.vector_lanes_fp16 * 0.5 * d.vector_efficiency;
    let sync = d.vector_tile_sync_cycles;
    let (gm, out) = (d.gm_bytes_per_cycle.max(1.0), d.ub_to_gm_bytes_per_cycle.max(1.0));
    let row = copy_bytes(op);
    // The activations and expert outputs arrive in BF16.
    let act = 2.0 * h;
    let (items, cycles, hbm_bytes, vec_cycles) = match phase {
        MoePhase::Dispatch => {
            let quant = dtype.bytes() == 1;
            let (passes, handoffs) = if quant { (DISPATCH_QUANT_PASSES, DISPATCH_HANDOFFS_QUANT) } else { (0.0, DISPATCH_HANDOFFS_PLAIN) };
            let copies = tokens as f64 * top_k as f64;
            let vec = passes * h / lanes;
            (copies, act / gm + vec + handoffs * sync + row / out, copies * (act + row), vec)
        }
        MoePhase::Combine => {
            let k = top_k as f64;
            let vec = k * COMBINE_PASSES_PER_ROW * h / lanes + h / lanes;
            let handoffs = k * COMBINE_HANDOFFS_PER_ROW + COMBINE_HANDOFFS_PER_TOKEN;
            let t = tokens as f64;
            (t, k * act / gm + vec + handoffs * sync + act / out, t * (k + 1.0) * act, vec)
        }
    };
    let vcores = d.vector_cores.max(1) as f64;
    let per_core = libm::ceil(items / vcores);
    let us = 1.0 / d.vector_clock_mhz.max(1.0);
    let mut exposed = [0.0; super::ENGINES];
    exposed[super::VECTOR] = per_core * cycles * us;
    let t_hbm = hbm_bytes / (d.derived.hbm_gbs * 1.0e3);
    super::memory_bound(&mut exposed, t_hbm);
    let mut busy = [0.0; super::ENGINES];
    busy[super::VECTOR] = per_core * cycles * us;
    busy[super::HBM] = t_hbm;
    super::Raw { exposed, busy, vector_core_us: items * vec_cycles * us, hbm_bytes, cores_used: items.min(vcores) as u32, waves: per_core as u64, ..super::Raw::default() }
}

/// Device-memory rate (GB/s) of a grouped matmul: its traffic is a read stream (each touched
/// expert's weight once, beside a few token rows and outputs), which sustains the kernel
/// library's `grouped_matmul_hbm_efficiency` of the HBM peak, not the all-core copy's
/// `hbm_efficiency` (half writes: every write turns the bus around).
pub fn grouped_hbm_gbs(d: &Device) -> f64 {
    d.hbm_peak_gbs * d.grouped_matmul_hbm_efficiency
}

/// A grouped matmul in its lowered form (`Op::lowered`: the groups batched, possibly retyped to
/// INT8 by a tuner) under `tiling`: the batched matmul's cube pipeline, its memory bound at the
/// grouped matmul's read-stream rate (`grouped_hbm_gbs`).
pub fn estimate_grouped_lowered(lowered: &Op, tiling: &Tiling, d: &Device) -> Result<Estimate, Infeasible> {
    super::matmul::estimate_problem_at(super::matmul::problem(lowered)?, tiling, d, grouped_hbm_gbs(d))
}

/// Bytes a grouped matmul reads as weights: every group's [k, n] matrix once.
pub fn grouped_weight_bytes(op: &Op) -> f64 {
    let Op::GroupedMatmul { groups, n, k, dtype, weight_dtype, .. } = *op else { return 0.0 };
    groups as f64 * n as f64 * k as f64 * weight_dtype.unwrap_or(dtype).size()
}

/// `Op::MoeComm` and `Op::GroupedMatmul` entry point.
pub fn estimate(op: &Op, tiling: &Tiling, d: &Device) -> Result<Estimate, Infeasible> {
    match *op {
        Op::GroupedMatmul { .. } => {
            let m = op.lowered().ok_or_else(|| Infeasible::new("not a grouped matmul"))?;
            estimate_grouped_lowered(&m, tiling, d)
        }
        Op::MoeComm { phase, form, tokens, hidden, top_k, ranks, link, .. } => {
            super::check_dims(&[("tokens", tokens), ("hidden", hidden), ("top_k", top_k), ("ranks", ranks)])?;
            if top_k > 1024 {
                return Err(Infeasible::new(format!("top_k = {top_k}: at most 1024 experts per token")));
            }
            let (bytes, algorithm, layout) = as_collective(op).ok_or_else(|| Infeasible::new("not a MoE exchange"))?;
            if bytes > (1u64 << 50) as f64 {
                return Err(Infeasible::new(format!("the {} moves {bytes:.3e} bytes, beyond what the model handles (2^50)", phase_name(phase))));
            }
            let rows = rows_kernel(form);
            let comm = |b: u64, a| {
                let c = Op::Comm { kind: CommKind::AllToAll, bytes: b, ranks, link, algorithm: a };
                if rows { super::comm::estimate_aiv(&c, d) } else { super::comm::estimate(&c, &Tiling::Default, d) }
            };
            let e = comm(bytes as u64, algorithm)?;
            if !rows {
                return Ok(e);
            }
            // Phases in series: (layout exchange, host round trip), stage, wire, reduce, and
            // the normal mode's waits for its latest peer (on the exchange's engine).
            let (core, recv) = (core_phase(op, d), recv_copy_phase(op, d));
            let mut exposed = super::add(&super::add(&e.breakdown.exposed.to_array(), &core.exposed), &recv.exposed);
            let mut busy = super::add(&super::add(&e.breakdown.busy.to_array(), &core.busy), &recv.busy);
            let wait = peer_wait_us(op, d);
            exposed[super::COMM] += wait;
            busy[super::COMM] += wait;
            if let Some(lb) = layout {
                let l = comm(lb, CommAlgorithm::Mesh)?;
                exposed = super::add(&exposed, &l.breakdown.exposed.to_array());
                busy = super::add(&busy, &l.breakdown.busy.to_array());
                // The host waits for the counts before it sizes the output and launches.
                exposed[super::LAUNCH] += d.eager_host_us_per_launch;
                busy[super::LAUNCH] += d.eager_host_us_per_launch;
            }
            let raw = super::Raw { exposed, busy, vector_core_us: core.vector_core_us, hbm_bytes: e.hbm_bytes + core.hbm_bytes + recv.hbm_bytes, cores_used: core.cores_used, waves: core.waves.max(1), ..super::Raw::default() };
            Ok(super::finish(&raw, d))
        }
        _ => Err(Infeasible::new("not a MoE operator")),
    }
}

fn phase_name(p: MoePhase) -> &'static str {
    match p {
        MoePhase::Dispatch => "dispatch",
        MoePhase::Combine => "combine",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::bundled_device;
    use crate::dtype::DType;
    use crate::op::Link;

    fn ex(form: MoeCommForm, tokens: u64, ranks: u64, link: Link) -> Op {
        Op::MoeComm { phase: MoePhase::Dispatch, form, tokens, hidden: 7168, top_k: 8, ranks, dtype: DType::Int8, link }
    }

    #[test]
    fn the_row_kernels_send_a_padded_row_per_token_and_expert() {
        assert!((distinct_ranks(8, 8) - 8.0 * (1.0 - (7.0f64 / 8.0).powi(8))).abs() < 1e-9);
        assert_eq!(distinct_ranks(1, 8), 1.0);
        // DeepEP-Ascend expands the received rows per expert: normal and low-latency move the
        // same rows, each an INT8 token (7168 B) with its scale slot and triple, padded to 7680 B.
        let n = wire_bytes(&ex(MoeCommForm::DeepepNormal, 4096, 8, Link::Hccs));
        let l = wire_bytes(&ex(MoeCommForm::DeepepLowLatency, 4096, 8, Link::Hccs));
        assert_eq!(n, l);
        assert_eq!(n, 4096.0 * 8.0 * 7680.0 * 7.0 / 8.0);
        // HCCL's all-to-all sends the bare copy and its scale.
        assert_eq!(wire_bytes(&ex(MoeCommForm::AllToAll, 4096, 8, Link::Hccs)), 4096.0 * 8.0 * 7172.0 * 7.0 / 8.0);
        // One rank: nothing leaves it.
        assert_eq!(wire_bytes(&ex(MoeCommForm::AllToAll, 4096, 1, Link::Hccs)), 0.0);
    }

    #[test]
    fn quantising_in_the_kernel_costs_vector_time_and_normal_dispatch_a_host_round_trip() {
        let d = bundled_device("910C").unwrap();
        let t = |op: &Op| estimate(op, &Tiling::Default, &d).unwrap();
        let int8 = ex(MoeCommForm::DeepepLowLatency, 128, 8, Link::Hccs);
        let Op::MoeComm { phase, form, tokens, hidden, top_k, ranks, link, .. } = int8 else { unreachable!() };
        let bf16 = Op::MoeComm { phase, form, tokens, hidden, top_k, ranks, dtype: DType::Bf16, link };
        // Half the bytes on the wire, but the quantisation's vector passes and hand-offs.
        let (q, c) = (t(&int8), t(&bf16));
        assert!(q.breakdown.exposed.to_array()[crate::cost::VECTOR] > c.breakdown.exposed.to_array()[crate::cost::VECTOR]);
        assert!(wire_bytes(&int8) < wire_bytes(&bf16) * 0.6);
        // Normal dispatch adds its layout exchange and the host's wait for the counts.
        let normal = ex(MoeCommForm::DeepepNormal, 128, 8, Link::Hccs);
        let extra = t(&normal).time_us - q.time_us;
        assert!(extra >= d.eager_host_us_per_launch + d.launch_comm_us, "{extra}");
        // A combine reduces after the wire: its time exceeds the bare transfer's.
        let comb = Op::MoeComm { phase: MoePhase::Combine, form: MoeCommForm::DeepepNormal, tokens: 4096, hidden: 7168, top_k: 8, ranks: 8, dtype: DType::Bf16, link: Link::Hccs };
        let wire = crate::cost::comm::collective_us(&d, CommKind::AllToAll, as_collective(&comb).unwrap().0 as u64, 8, Link::Hccs, CommAlgorithm::Mesh).unwrap();
        assert!(t(&comb).time_us > wire * 1.05);
    }

    #[test]
    fn every_form_is_priced_on_its_link_and_wider_ep_over_the_superpod_costs_more() {
        let d = bundled_device("910C").unwrap();
        let t = |f, p, l| estimate(&ex(f, 4096, p, l), &Tiling::Default, &d).unwrap().time_us;
        for f in MoeCommForm::ALL {
            assert!(t(f, 8, Link::Hccs) > 0.0, "{f:?}");
            assert!(t(f, 128, Link::SuperPod) > t(f, 8, Link::Hccs), "{f:?}");
        }
        // At decode's few tokens, rows issued to all peers at once beat the task-per-peer
        // all-to-all's 63 steps, padding and staging included.
        let small = |f| estimate(&ex(f, 16, 64, Link::SuperPod), &Tiling::Default, &d).unwrap().time_us;
        assert!(small(MoeCommForm::DeepepLowLatency) < small(MoeCommForm::AllToAll));
        // A bad shape is an error naming the field.
        let bad = Op::MoeComm { phase: MoePhase::Combine, form: MoeCommForm::Mc2, tokens: 0, hidden: 7168, top_k: 8, ranks: 8, dtype: DType::Bf16, link: Link::Hccs };
        assert!(estimate(&bad, &Tiling::Default, &d).unwrap_err().reason.contains("tokens"));
    }

    #[test]
    fn a_grouped_matmul_costs_as_its_groups_batched_over_a_read_stream() {
        let d = bundled_device("910B2").unwrap();
        let g = Op::GroupedMatmul { groups: 32, m: 2560, n: 2048, k: 4096, dtype: DType::Fp16, weight_dtype: None };
        let m = g.lowered().unwrap();
        assert!(matches!(m, Op::Matmul { batch: 32, m: 80, .. }));
        let (a, b) = (estimate(&g, &Tiling::Default, &d).unwrap(), super::super::matmul::estimate(&m, &Tiling::Default, &d).unwrap());
        // The same batched problem, its memory bound at the grouped matmul's read-stream rate.
        let at = super::super::matmul::estimate_problem_at(super::super::matmul::problem(&m).unwrap(), &Tiling::Default, &d, grouped_hbm_gbs(&d)).unwrap();
        assert_eq!(a.time_us, at.time_us);
        // Weight-bound at 80 rows per expert: faster than the copy rate prices it, by about
        // the ratio of the two efficiencies.
        let ratio = b.time_us / a.time_us;
        let eff = d.grouped_matmul_hbm_efficiency / d.hbm_efficiency;
        assert!(ratio > 1.0 && (ratio - eff).abs() < 0.05 * eff, "{ratio} vs {eff}");
    }
}

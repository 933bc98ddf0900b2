//! The MoE operators: the token exchange of expert parallelism (dispatch and combine, in the
//! kernel forms engines use) and the experts' grouped matmul.
//!
//! An exchange is priced as the collective it is (`cost::comm`, its links and efficiencies, the
//! A3 SuperPOD fabric included), with the bytes and the issue pattern of its form. One rank
//! holds `tokens` tokens, each routed to `top_k` experts spread evenly over the `ranks` ranks;
//! a token copy carries `hidden` elements, plus a 4-byte fp32 scale per copy when the wire type
//! is INT8 (per-token dynamic quantisation, as DeepEP-Ascend and MC2 send it).
//! - `all_to_all` (HCCL all-to-all(v)): every routed copy, one (token, expert) pair each; the
//!   task to each peer is issued in turn (the ring's p - 1 steps).
//! - `deepep_normal`: each token crosses once per distinct destination rank (DeepEP sends a
//!   token to a rank once and lets that rank copy it to its local experts; a combine reduces
//!   per rank before sending back), after a layout exchange of the per-rank counts (an int32 per
//!   rank: latency only); all peers at once (`CommAlgorithm::Mesh`: ceil(log2 p) steps).
//!   With E experts uniform over p ranks, a token's top_k experts hit
//!   p (1 - (1 - 1/p)^top_k) distinct ranks in expectation.
//! - `deepep_low_latency` and `mc2` (`npu_moe_distribute_dispatch`/`_combine`): fixed-size
//!   receive buffers, no layout exchange, a copy per (token, expert), all peers at once; MC2
//!   fuses the dispatch quantisation into the kernel (priced inside it: no separate vector op).
//!
//! Only the share that leaves the rank crosses the link ((p - 1) / p, `comm::steps_and_bytes`).

use crate::device::Device;
use crate::estimate::{Estimate, Infeasible};
use crate::op::{CommAlgorithm, CommKind, MoeCommForm, MoePhase, Op};
use crate::tiling::Tiling;

/// Distinct ranks a token's `top_k` experts land on, experts uniform over `ranks` ranks.
pub fn distinct_ranks(ranks: u64, top_k: u64) -> f64 {
    let p = ranks.max(1) as f64;
    p * (1.0 - libm::pow(1.0 - 1.0 / p, top_k as f64))
}

/// Bytes one token copy carries (`hidden` elements, plus its fp32 scale when INT8).
fn copy_bytes(op: &Op) -> f64 {
    let Op::MoeComm { hidden, dtype, .. } = *op else { return 0.0 };
    let scale = if dtype.bytes() == 1 { 4.0 } else { 0.0 };
    hidden as f64 * dtype.bytes() as f64 + scale
}

/// The collective an exchange runs as (kind, the full logical bytes of the rank's side, the
/// algorithm) and the bytes of its layout exchange (None: it has none).
pub fn as_collective(op: &Op) -> Option<(f64, CommAlgorithm, Option<u64>)> {
    let Op::MoeComm { form, tokens, top_k, ranks, .. } = *op else { return None };
    let copy = copy_bytes(op);
    let copies = tokens as f64 * top_k as f64;
    Some(match form {
        MoeCommForm::AllToAll => (copies * copy, CommAlgorithm::Ring, None),
        MoeCommForm::DeepepNormal => (tokens as f64 * distinct_ranks(ranks, top_k) * copy, CommAlgorithm::Mesh, Some(4 * ranks)),
        MoeCommForm::DeepepLowLatency | MoeCommForm::Mc2 => (copies * copy, CommAlgorithm::Mesh, None),
    })
}

/// Bytes that leave one rank (what a benchmark's "bandwidth" divides by the time).
pub fn wire_bytes(op: &Op) -> f64 {
    let Op::MoeComm { ranks, .. } = *op else { return 0.0 };
    let p = ranks.max(1) as f64;
    as_collective(op).map_or(0.0, |(b, ..)| b * (p - 1.0) / p)
}

/// `Op::MoeComm` and `Op::GroupedMatmul` entry point.
pub fn estimate(op: &Op, tiling: &Tiling, d: &Device) -> Result<Estimate, Infeasible> {
    match *op {
        Op::GroupedMatmul { .. } => {
            let m = op.lowered().ok_or_else(|| Infeasible::new("not a grouped matmul"))?;
            super::matmul::estimate(&m, tiling, d)
        }
        Op::MoeComm { phase, tokens, hidden, top_k, ranks, link, .. } => {
            super::check_dims(&[("tokens", tokens), ("hidden", hidden), ("top_k", top_k), ("ranks", ranks)])?;
            if top_k > 1024 {
                return Err(Infeasible::new(format!("top_k = {top_k}: at most 1024 experts per token")));
            }
            let (bytes, algorithm, layout) = as_collective(op).ok_or_else(|| Infeasible::new("not a MoE exchange"))?;
            if bytes > (1u64 << 50) as f64 {
                return Err(Infeasible::new(format!("the {} moves {bytes:.3e} bytes, beyond what the model handles (2^50)", phase_name(phase))));
            }
            let comm = |b: u64, a| super::comm::estimate(&Op::Comm { kind: CommKind::AllToAll, bytes: b, ranks, link, algorithm: a }, &Tiling::Default, d);
            let e = comm(bytes as u64, algorithm)?;
            let Some(lb) = layout else { return Ok(e) };
            // The layout exchange runs before the tokens move: its time adds, engine by engine.
            let l = comm(lb, CommAlgorithm::Mesh)?;
            let raw = super::Raw {
                exposed: super::add(&e.breakdown.exposed.to_array(), &l.breakdown.exposed.to_array()),
                busy: super::add(&e.breakdown.busy.to_array(), &l.breakdown.busy.to_array()),
                hbm_bytes: e.hbm_bytes + l.hbm_bytes,
                cores_used: 0,
                waves: 1,
                ..super::Raw::default()
            };
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
    fn deepep_normal_sends_a_token_once_per_rank_and_low_latency_once_per_expert() {
        assert!((distinct_ranks(8, 8) - 8.0 * (1.0 - (7.0f64 / 8.0).powi(8))).abs() < 1e-9);
        assert_eq!(distinct_ranks(1, 8), 1.0);
        let n = wire_bytes(&ex(MoeCommForm::DeepepNormal, 4096, 8, Link::Hccs));
        let l = wire_bytes(&ex(MoeCommForm::DeepepLowLatency, 4096, 8, Link::Hccs));
        assert!(n < l * 0.7, "normal {n:.3e} B should de-duplicate against low-latency {l:.3e} B");
        // One rank: nothing leaves it.
        assert_eq!(wire_bytes(&ex(MoeCommForm::AllToAll, 4096, 1, Link::Hccs)), 0.0);
    }

    #[test]
    fn every_form_is_priced_on_its_link_and_wider_ep_over_the_superpod_costs_more() {
        let d = bundled_device("910C").unwrap();
        let t = |f, p, l| estimate(&ex(f, 4096, p, l), &Tiling::Default, &d).unwrap().time_us;
        for f in MoeCommForm::ALL {
            assert!(t(f, 8, Link::Hccs) > 0.0, "{f:?}");
            assert!(t(f, 128, Link::SuperPod) > t(f, 8, Link::Hccs), "{f:?}");
        }
        // The same bytes issued to all peers at once beat the task-per-peer all-to-all.
        assert!(t(MoeCommForm::DeepepLowLatency, 64, Link::SuperPod) < t(MoeCommForm::AllToAll, 64, Link::SuperPod));
        // A bad shape is an error naming the field.
        let bad = Op::MoeComm { phase: MoePhase::Combine, form: MoeCommForm::Mc2, tokens: 0, hidden: 7168, top_k: 8, ranks: 8, dtype: DType::Bf16, link: Link::Hccs };
        assert!(estimate(&bad, &Tiling::Default, &d).unwrap_err().reason.contains("tokens"));
    }

    #[test]
    fn a_grouped_matmul_costs_as_its_groups_batched() {
        let d = bundled_device("910B2").unwrap();
        let g = Op::GroupedMatmul { groups: 32, m: 2560, n: 2048, k: 4096, dtype: DType::Fp16, weight_dtype: None };
        let m = g.lowered().unwrap();
        assert!(matches!(m, Op::Matmul { batch: 32, m: 80, .. }));
        let (a, b) = (estimate(&g, &Tiling::Default, &d).unwrap(), super::super::matmul::estimate(&m, &Tiling::Default, &d).unwrap());
        assert_eq!(a.time_us, b.time_us);
    }
}

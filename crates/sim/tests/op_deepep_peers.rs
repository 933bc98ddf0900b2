//! DeepEP-Ascend's normal mode slows with the EP size at the same bytes per rank (set 3,
//! op-deepep-ascend-normal-a3-superpod: dispatch 146 -> 57 GB/s and combine 125 -> 81 GB/s from
//! EP8 to EP128 on the A3 SuperPOD). Its dispatch syncs the host inside the call and the ranks
//! are not aligned before it, so each cross-rank wait that follows host work on every rank ends
//! when the latest peer arrives: two such waits in a dispatch, one in a combine, each (p - 1) x
//! the kernel library's `normal_peer_wait_us` (`cost::moe_comm::peer_wait_us`). The low-latency
//! mode and MC2 sync no host inside the call and do not pay it.
//! Run: cargo test -p tunelab-sim --test op_deepep_peers

use tunelab_sim::cost::moe_comm;
use tunelab_sim::*;

fn op(phase: MoePhase, form: MoeCommForm, ranks: u64) -> Op {
    let (dtype, link) = (if phase == MoePhase::Dispatch { DType::Int8 } else { DType::Bf16 }, if ranks > 16 { Link::SuperPod } else { Link::Hccs });
    Op::MoeComm { phase, form, tokens: 4096, hidden: 7168, top_k: 8, ranks, dtype, link }
}

/// The benchmark's rate: the BF16 bytes of the rows a rank receives over the time (GB/s).
fn rate(e: &Estimate) -> f64 {
    4096.0 * 8.0 * 7168.0 * 2.0 / (e.time_us * 1.0e3)
}

fn est(o: &Op, d: &Device) -> Estimate {
    estimate(o, &Tiling::Default, d).unwrap()
}

#[test]
fn the_normal_mode_slows_with_its_peers_and_dispatch_more_than_combine() {
    let d = bundled_device("910C").unwrap();
    assert!(d.normal_peer_wait_us >= 2.0 && d.normal_peer_wait_us <= 60.0, "{}", d.normal_peer_wait_us);
    let r = |phase, p| rate(&est(&op(phase, MoeCommForm::DeepepNormal, p), &d));
    let (d8, d128) = (r(MoePhase::Dispatch, 8), r(MoePhase::Dispatch, 128));
    let (c8, c128) = (r(MoePhase::Combine, 8), r(MoePhase::Combine, 128));
    eprintln!("normal dispatch {d8:.0} -> {d128:.0} GB/s, combine {c8:.0} -> {c128:.0} GB/s (EP8 -> EP128; measured 146 -> 57, 125 -> 81)");
    // Each EP doubling costs rate, and EP128 keeps well under 70% of EP8's (the link share
    // alone kept 93%: 147 -> 136 GB/s).
    let mut last = f64::INFINITY;
    for p in [8u64, 16, 32, 64, 128] {
        let x = r(MoePhase::Dispatch, p);
        assert!(x < last, "EP{p}: {x:.1} GB/s not below {last:.1}");
        last = x;
    }
    assert!(d128 < 0.7 * d8, "dispatch EP128 {d128:.0} vs EP8 {d8:.0}");
    // Two waits against one: the dispatch loses a larger share than the combine.
    assert!(d128 / d8 < c128 / c8, "dispatch {:.2} vs combine {:.2}", d128 / d8, c128 / c8);
    // The waits are exactly waits x (p - 1) x the library's value, on the exchange's engine.
    let o = op(MoePhase::Dispatch, MoeCommForm::DeepepNormal, 64);
    assert_eq!(moe_comm::peer_wait_us(&o, &d), 2.0 * 63.0 * d.normal_peer_wait_us);
    let c = op(MoePhase::Combine, MoeCommForm::DeepepNormal, 64);
    assert_eq!(moe_comm::peer_wait_us(&c, &d), 63.0 * d.normal_peer_wait_us);
    let mut zero = d.clone();
    zero.normal_peer_wait_us = 0.0;
    let gap = est(&o, &d).breakdown.exposed.to_array()[tunelab_sim::cost::COMM] - est(&o, &zero).breakdown.exposed.to_array()[tunelab_sim::cost::COMM];
    assert!((gap - moe_comm::peer_wait_us(&o, &d)).abs() < 1e-6, "{gap}");
}

#[test]
fn the_other_forms_and_one_rank_pay_no_peer_wait() {
    let d = bundled_device("910C").unwrap();
    for form in [MoeCommForm::DeepepLowLatency, MoeCommForm::Mc2, MoeCommForm::AllToAll] {
        for phase in [MoePhase::Dispatch, MoePhase::Combine] {
            assert_eq!(moe_comm::peer_wait_us(&op(phase, form, 128), &d), 0.0, "{form:?} {phase:?}");
        }
    }
    assert_eq!(moe_comm::peer_wait_us(&op(MoePhase::Dispatch, MoeCommForm::DeepepNormal, 1), &d), 0.0);
    // The low-latency mode's decode floor (set 3: 132-153 us at 128 tokens, EP8..EP32) is
    // untouched by the normal mode's waits.
    let mut zero = d.clone();
    zero.normal_peer_wait_us = 0.0;
    let ll = Op::MoeComm { phase: MoePhase::Dispatch, form: MoeCommForm::DeepepLowLatency, tokens: 128, hidden: 7168, top_k: 8, ranks: 32, dtype: DType::Int8, link: Link::SuperPod };
    assert_eq!(est(&ll, &d).time_us, est(&ll, &zero).time_us);
}

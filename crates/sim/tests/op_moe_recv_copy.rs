//! CANN's MoeDistributeDispatchV2 (the low-latency DeepEP-Ascend dispatch and vLLM-Ascend's mc2)
//! ends with `LocalWindowCopy`: each vector core copies the rows the peers wrote into its window
//! to the outputs, row after row. Set 3's low-latency dispatch latencies (132 / 139 / 153 us at
//! 128 tokens, EP8 / 16 / 32) sat 10-12% above the prediction without it.
//! Run: cargo test -p tunelab-sim --test op_moe_recv_copy

use tunelab_sim::*;

fn ll(phase: MoePhase, form: MoeCommForm, tokens: u64) -> Op {
    let dtype = if phase == MoePhase::Dispatch { DType::Int8 } else { DType::Bf16 };
    Op::MoeComm { phase, form, tokens, hidden: 7168, top_k: 8, ranks: 16, dtype, link: Link::Hccs }
}

/// The exposed time of the on-chip phases: the vector cores' loops, or device memory where their
/// bytes need longer.
fn vector_us(o: &Op, d: &Device) -> f64 {
    let e = estimate(o, &Tiling::Default, d).unwrap().breakdown.exposed.to_array();
    e[tunelab_sim::cost::VECTOR] + e[tunelab_sim::cost::HBM]
}

#[test]
fn the_window_copy_costs_the_dispatch_and_grows_with_its_rows() {
    let d = bundled_device("910C").unwrap();
    for form in [MoeCommForm::DeepepLowLatency, MoeCommForm::Mc2] {
        let (small, big) = (vector_us(&ll(MoePhase::Dispatch, form, 16), &d), vector_us(&ll(MoePhase::Dispatch, form, 128), &d));
        assert!(big > small * 4.0, "{form:?}: 128 tokens {big:.1} us vs 16 tokens {small:.1} us of vector time");
    }
    // The low-latency dispatch at the row's shape lands within 10% of the measured 139 us.
    let t = estimate(&ll(MoePhase::Dispatch, MoeCommForm::DeepepLowLatency, 128), &Tiling::Default, &d).unwrap().time_us;
    eprintln!("low-latency dispatch EP16, 128 tokens: {t:.1} us (measured 139)");
    assert!((t / 139.0 - 1.0).abs() < 0.10, "{t:.1} us");
}

#[test]
fn the_normal_mode_pulls_into_its_output_and_pays_no_second_copy() {
    let d = bundled_device("910C").unwrap();
    // Same rows, same staging and quantisation: the low-latency dispatch's vector time exceeds
    // the normal one's by its window copy; the combines (no such copy in either) are equal.
    let v = |phase, form| vector_us(&ll(phase, form, 128), &d);
    let (n, l) = (v(MoePhase::Dispatch, MoeCommForm::DeepepNormal), v(MoePhase::Dispatch, MoeCommForm::DeepepLowLatency));
    assert!(l > n + 1.0, "low-latency {l:.2} us vs normal {n:.2} us of vector and memory time");
    assert_eq!(v(MoePhase::Combine, MoeCommForm::DeepepNormal), v(MoePhase::Combine, MoeCommForm::DeepepLowLatency));
}

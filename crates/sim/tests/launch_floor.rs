//! The device-side launch of a vector kernel (task scheduling, core start, tail sync) is the
//! whole device time of the smallest one: torch_npu's swiglu over a [4, 32] fp16 input takes
//! 4.2 us of device time on a 910B, and the benchmark's other tiny shapes sit on a 3-4 us floor
//! (set 3, op-flaggems-swiglu-torchnpu-baseline). The chip profiles' `launch_vector_us` carries
//! it (was msmodeling's 2 us, "to be confirmed"). Run: cargo test -p tunelab-sim --test launch_floor

use tunelab_sim::*;

fn us(op: &Op, d: &Device) -> f64 {
    estimate(op, &Tiling::Default, d).unwrap().time_us
}

fn swiglu(rows: u64, row_len: u64) -> Op {
    Op::Vector { kind: VectorKind::SwiGlu, rows, row_len, dtype: DType::Fp16 }
}

#[test]
fn the_smallest_vector_kernel_takes_the_measured_floor() {
    let d = bundled_device("910B2").unwrap();
    // The row's operator: 4 rows of 16 outputs (the last dim of 32 halves).
    let tiny = us(&swiglu(4, 16), &d);
    // Measured 4.2 us; the source's tiny shapes span 3-4 us.
    assert!((3.0..=5.0).contains(&tiny), "swiglu [4, 32]: {tiny:.2} us");
    // The floor is the launch, not work: a 4x larger tiny input costs (almost) the same.
    let tiny4 = us(&swiglu(16, 16), &d);
    assert!(tiny4 < tiny * 1.1, "{tiny4:.2} vs {tiny:.2} us");
}

#[test]
fn every_a2_and_a3_profile_carries_the_same_floor() {
    // One C220 core, CANN stack and task scheduler: the 910B2 measurement is reused on the
    // other 910B SKUs and the 910C die, and each says so in its note.
    for chip in ["910B1", "910B2", "910B3", "910B4", "910C"] {
        let d = bundled_device(chip).unwrap();
        assert_eq!(d.launch_vector_us, 4.0, "{chip}");
    }
    // A chip with another core keeps its own value (310P3: the 910B's old 2 us, an assumption).
    assert_eq!(bundled_device("310P3").unwrap().launch_vector_us, 2.0);
}

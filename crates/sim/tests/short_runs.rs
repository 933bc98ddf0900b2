//! MTE2 moves a contiguous run shorter than a 512-byte burst at the cost of a whole burst
//! (`cost::short_run_factor`). SwiGLU reads each row's gate and up halves as separate runs, so a
//! short last dimension makes it far slower per byte than a long one: torch_npu's swiglu over a
//! [100, 65536, 100] fp16 input takes 6.33 ms (~0.31 TB/s) against ~1.22 TB/s for long rows
//! (set 3, op-flaggems-swiglu-torchnpu-baseline). Run: cargo test -p tunelab-sim --test short_runs

use tunelab_sim::cost::{short_run_factor, MTE2_BURST_BYTES};
use tunelab_sim::*;

fn us(op: &Op, d: &Device) -> f64 {
    estimate(op, &Tiling::Default, d).unwrap().time_us
}

fn swiglu(rows: u64, row_len: u64) -> Op {
    Op::Vector { kind: VectorKind::SwiGlu, rows, row_len, dtype: DType::Fp16 }
}

#[test]
fn the_burst_rule_is_one_fact() {
    assert_eq!(short_run_factor(MTE2_BURST_BYTES), 1.0);
    assert_eq!(short_run_factor(4096.0), 1.0);
    assert!((short_run_factor(100.0) - 5.12).abs() < 1e-12);
    // A zero-length run is not a division by zero.
    assert!(short_run_factor(0.0).is_finite());
}

#[test]
fn swiglu_over_short_rows_is_slower_per_byte_than_over_long_rows() {
    let d = bundled_device("910B2").unwrap();
    // The same elements: 6553600 rows of 50 outputs against 10000 rows of 32768.
    let short = us(&swiglu(6_553_600, 50), &d);
    let long = us(&swiglu(10_000, 32_768), &d);
    let per_elem_short = short / (6_553_600.0 * 50.0);
    let per_elem_long = long / (10_000.0 * 32_768.0);
    // The measured ratio is ~3.9 (6.33 ms / 1.61 ms over 1.31/1.31 GB of input).
    let ratio = per_elem_short / per_elem_long;
    assert!((3.0..=5.0).contains(&ratio), "short rows {short:.0} us, long rows {long:.0} us, per-element ratio {ratio:.2}");
    // Against the measured 6.33 ms, within 15%.
    assert!((short / 6333.0 - 1.0).abs() < 0.15, "{short:.0} us");
    // A half row of a burst or more pays nothing: 256 fp16 outputs = 512-byte runs.
    let at_burst = us(&swiglu(4096, 256), &d) / (4096.0 * 256.0);
    let longer = us(&swiglu(1024, 1024), &d) / (1024.0 * 1024.0);
    assert!((at_burst / longer - 1.0).abs() < 0.25, "{at_burst} vs {longer}");
}

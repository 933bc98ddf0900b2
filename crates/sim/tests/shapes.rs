//! Shape checks from public facts: big square FP16 matmul near (below) peak on 910B2, 1024^3
//! far below, M = 1 decode-shaped matmul bound by memory. Prints the figures.

use tunelab_sim::*;

fn mm(m: u64, n: u64, k: u64, t: DType) -> Op {
    Op::Matmul { batch: 1, m, n, k, dtype: t, weight_dtype: None, epilogue: Epilogue::None }
}

#[test]
fn large_square_fp16_close_to_but_below_peak() {
    let d = bundled_device("910B2").unwrap();
    let op = mm(8192, 8192, 8192, DType::Fp16);
    let (t, e, n) = best_tiling(&op, &d).unwrap();
    let peak = d.derived.peak_tflops_fp16;
    println!("8192^3 fp16 910B2: {:.1} TFLOPS of {:.1} ({} valid) {:?} {}", e.attained_tflops, peak, n, e.bound, t.describe());
    assert!(e.attained_tflops < peak);
    assert!(e.attained_tflops > 0.75 * peak, "{}", e.attained_tflops);
    let op = mm(4096, 4096, 4096, DType::Fp16);
    let (t, e, n) = best_tiling(&op, &d).unwrap();
    println!("4096^3 fp16 910B2: {:.1} TFLOPS ({:.1} us) of {:.1} ({} valid) {:?} {}", e.attained_tflops, e.time_us, peak, n, e.bound, t.describe());
    println!("{:?}", e.breakdown);
    assert!(e.attained_tflops < peak && e.attained_tflops > 0.6 * peak);
}

#[test]
fn small_cube_far_below_peak() {
    let d = bundled_device("910B2").unwrap();
    let (_, e, _) = best_tiling(&mm(1024, 1024, 1024, DType::Fp16), &d).unwrap();
    let peak = d.derived.peak_tflops_fp16;
    println!("1024^3 fp16 910B2: {:.1} TFLOPS ({:.2} us) of {:.1}, bound {:?}", e.attained_tflops, e.time_us, peak, e.bound);
    assert!(e.attained_tflops < 0.5 * peak);
}

#[test]
fn decode_shaped_matmul_is_memory_bound() {
    let d = bundled_device("910B2").unwrap();
    for (n, k) in [(4096u64, 4096u64), (11008, 4096), (4096, 11008)] {
        let (t, e, _) = best_tiling(&mm(1, n, k, DType::Fp16), &d).unwrap();
        let gbs = e.hbm_bytes / (e.time_us - e.breakdown.exposed.launch) / 1.0e3;
        println!("M=1 n={n} k={k}: {:.2} us, {:?}, {:.0} GB/s of {:.0}, {}", e.time_us, e.bound, gbs, d.derived.hbm_gbs, t.describe());
        assert_eq!(e.bound, Bound::Hbm);
    }
}

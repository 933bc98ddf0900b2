//! The operator rows of the shared calibration set (`shared/calibration/ascend-measurements.json`,
//! category "op"), predicted from their setup alone with the device model and the eager /
//! host-timed dispatch model. Prints measured vs predicted per row and the median |error|.
//! Run: cargo test -p tunelab-sim --test op_rows -- --nocapture

use tunelab_sim::cost::{comm, dispatch};
use tunelab_sim::*;

fn d() -> Device {
    bundled_device("910B2").unwrap()
}

/// The 910B2 with the hand-written kernel library (the PTO-ISA GEMM and the custom all-reduce
/// rows are hand-written kernels, assets/kernels/libraries.json).
fn hand_written() -> Device {
    let mut v: serde_json::Value = serde_json::from_str(tunelab_sim::device::bundled_profile_text("910B2").unwrap()).unwrap();
    v["kernel_library"] = serde_json::json!("hand-written");
    Device::from_json(&v.to_string()).unwrap()
}

fn fa(b: u64, h: u64, s_q: u64, s_kv: u64, dim: u64) -> Op {
    Op::Attention { kind: AttentionKind::Flash, batch: b, heads: h, kv_heads: h, q_len: s_q, kv_len: s_kv, head_dim: dim, causal: false, dtype: DType::Fp16 }
}

fn dev_us(op: &Op, dev: &Device) -> f64 {
    estimate(op, &Tiling::Default, dev).unwrap().time_us
}

/// Timed alone between two events in eager mode: host issue, then the kernel.
fn single(op: &Op, dev: &Device) -> f64 {
    dispatch::single_call_us(dev, op, dev_us(op, dev))
}

/// Called back to back `n` times (inner iterations), per call.
fn looped(op: &Op, dev: &Device, n: f64) -> f64 {
    dispatch::back_to_back_us(dev, op, dev_us(op, dev), n)
}

/// A hand-tuned kernel's compute-only time: the best tiling's device time.
fn tuned(op: &Op, dev: &Device) -> f64 {
    best_tiling(op, dev).unwrap().1.time_us
}

#[test]
fn print_op_rows() {
    let dev = d();
    let hw = hand_written();
    let copy = |mib: u64| Op::Vector { kind: VectorKind::Gather, rows: mib * 1024 * 1024 / 4 / 4096, row_len: 4096, dtype: DType::Fp32 };
    let mm = Op::Matmul { batch: 1, m: 768, n: 768, k: 768, dtype: DType::Fp32, weight_dtype: None, epilogue: Epilogue::None };
    let gemm = Op::Matmul { batch: 1, m: 5416, n: 1408, k: 6144, dtype: DType::Fp16, weight_dtype: None, epilogue: Epilogue::None };
    let rows: Vec<(&str, f64, f64)> = vec![
        ("op-hbm-copy-128MiB", 185.56, looped(&copy(128), &dev, 20.0)),
        ("op-hbm-copy-160MiB", 267.79, looped(&copy(160), &dev, 20.0)),
        ("op-hbm-copy-224MiB", 373.94, looped(&copy(224), &dev, 20.0)),
        ("op-matmul-fp32-768cube", 18.69, looped(&mm, &dev, 49.0)),
        ("fa-h8d64-S1", 164.49, single(&fa(1, 8, 1, 1, 64), &dev)),
        ("fa-h8d64-S2048", 240.56, single(&fa(1, 8, 2048, 2048, 64), &dev)),
        ("fa-h8d64-S4096", 588.71, single(&fa(1, 8, 4096, 4096, 64), &dev)),
        ("fa-h8d64-S8192", 1699.22, single(&fa(1, 8, 8192, 8192, 64), &dev)),
        ("fa-h1d128-S1024", 58.461, single(&fa(1, 1, 1024, 1024, 128), &dev)),
        ("fa-h1d128-S4096", 118.302, single(&fa(1, 1, 4096, 4096, 128), &dev)),
        ("fa-h1d128-S8192", 353.147, single(&fa(1, 1, 8192, 8192, 128), &dev)),
        ("fa-h1d128-S32768", 3646.173, single(&fa(1, 1, 32768, 32768, 128), &dev)),
        // The PTO-ISA torch_jit flash demo times 50 calls under one timer (fa_benchmark.py
        // time_npu), on an x86 host as the fidelity rows compare: back to back.
        ("fa-hosttimed-128x1024 (x86, 50 calls)", 46.83, looped(&fa(1, 1, 128, 1024, 128), &dev, 50.0)),
        ("fa-hosttimed-2048x8192 (x86, 50 calls)", 142.38, looped(&fa(1, 1, 2048, 8192, 128), &dev, 50.0)),
        ("gemm-5416x1408x6144", 368.1, tuned(&gemm, &hw)),
        ("allreduce-8rank-17MB", 437.3, comm::collective_us(&hw, CommKind::AllReduce, 5504 * 1536 * 2, 8, Link::Hccs, CommAlgorithm::Ring).unwrap()),
    ];
    let mut errs = vec![];
    for (id, m, p) in &rows {
        let e = (p - m) / m * 100.0;
        errs.push(e.abs());
        println!("{id:36} measured {m:10.2} us  predicted {p:10.2} us  error {e:+7.1}%");
    }
    errs.sort_by(|a, b| a.total_cmp(b));
    let median = (errs[7] + errs[8]) / 2.0;
    println!("median |error| {median:.1}% over {} rows", errs.len());
    // Issue 8's target for the operator rows, from mechanisms (not a per-row fit).
    assert!(median <= 10.0, "median |error| {median:.1}% over the operator rows exceeds 10%");
}

/// Square FP16 matmuls from 4096 to 16384 at the default tiling: the fraction of peak must move
/// smoothly through the L2 size (no cliff between neighbouring sizes) and stay below the peak.
#[test]
fn matmul_fraction_of_peak_is_smooth_through_l2() {
    for chip in ["910B2", "910B3", "910B4"] {
        let dev = bundled_device(chip).unwrap();
        let mut prev: Option<f64> = None;
        let mut line = String::new();
        for i in 0..=12u64 {
            let s = 4096 + i * 1024;
            let op = Op::Matmul { batch: 1, m: s, n: s, k: s, dtype: DType::Fp16, weight_dtype: None, epilogue: Epilogue::None };
            let e = estimate(&op, &default_tiling(&op, &dev), &dev).unwrap();
            let frac = e.attained_tflops / dev.derived.peak_tflops_fp16;
            line += &format!(" {s}:{:.0}%", frac * 100.0);
            assert!(frac < 0.95, "{chip} {s}^3 at {:.1}% of peak", frac * 100.0);
            assert!(frac > 0.5, "{chip} {s}^3 only {:.1}% of peak at the default tiling", frac * 100.0);
            if let Some(p) = prev {
                // 910B4 (0.8 TB/s HBM) turns memory-bound near 11264^3 once a wave's footprint
                // leaves L2: a real but steeper step than on the 1.6 TB/s parts.
                assert!((frac - p).abs() < if chip == "910B4" { 0.2 } else { 0.15 }, "{chip}: {s}^3 jumps from {:.1}% to {:.1}% of peak", p * 100.0, frac * 100.0);
            }
            prev = Some(frac);
        }
        println!("{chip} default-tiling fraction of peak:{line}");
    }
}

/// Prints (never asserts) the search-speed figures: matmul tiling evaluations per second and
/// the exhaustive 4096^3 tiling search. Run with --release for meaningful numbers.
#[test]
fn print_speed() {
    let t = std::time::Instant::now();
    let n = tunelab_sim::bench::matmul_evals(2_000_000);
    let s = t.elapsed().as_secs_f64();
    println!("matmul tiling evaluations: {:.1} M/s", n / s / 1e6);
    let dev = d();
    for chip in ["910B2", "910B3"] {
        let dev = bundled_device(chip).unwrap();
        let op = Op::Matmul { batch: 1, m: 4096, n: 4096, k: 4096, dtype: DType::Fp16, weight_dtype: None, epilogue: Epilogue::None };
        let t = std::time::Instant::now();
        let (_, e, count) = best_tiling(&op, &dev).unwrap();
        println!("{chip} exhaustive 4096^3: {count} tilings in {:.3} s, best {:.1} us ({:.1}% of peak)", t.elapsed().as_secs_f64(), e.time_us, e.attained_tflops / dev.derived.peak_tflops_fp16 * 100.0);
    }
    let _ = dev;
}

//! The operator rows of the shared calibration set (`shared/calibration/ascend-measurements.json`,
//! category "op"), predicted from their setup alone with the device model and the eager /
//! host-timed dispatch model. Prints measured vs predicted per row and the median |error|.
//! Run: cargo test -p tunelab-sim --test op_rows -- --nocapture

use tunelab_sim::*;

fn d() -> Device {
    bundled_device("910B2").unwrap()
}

fn fa(b: u64, h: u64, s_q: u64, s_kv: u64, dim: u64) -> Op {
    Op::Attention { kind: AttentionKind::Flash, batch: b, heads: h, kv_heads: h, q_len: s_q, kv_len: s_kv, head_dim: dim, causal: false, dtype: DType::Fp16 }
}

fn dev_us(op: &Op, dev: &Device) -> f64 {
    estimate(op, &Tiling::Default, dev).unwrap().time_us
}

#[test]
fn print_op_rows() {
    let dev = d();
    let copy = |mib: u64| Op::Vector { kind: VectorKind::Gather, rows: mib * 1024 * 1024 / 4 / 4096, row_len: 4096, dtype: DType::Fp32 };
    let mm = Op::Matmul { batch: 1, m: 768, n: 768, k: 768, dtype: DType::Fp32, weight_dtype: None, epilogue: Epilogue::None };
    let gemm = Op::Matmul { batch: 1, m: 5416, n: 1408, k: 6144, dtype: DType::Fp16, weight_dtype: None, epilogue: Epilogue::None };
    let rows: Vec<(&str, f64, f64)> = vec![
        ("op-hbm-copy-128MiB", 185.56, dev_us(&copy(128), &dev)),
        ("op-hbm-copy-160MiB", 267.79, dev_us(&copy(160), &dev)),
        ("op-hbm-copy-224MiB", 373.94, dev_us(&copy(224), &dev)),
        ("op-matmul-fp32-768cube", 18.69, dev_us(&mm, &dev)),
        ("fa-h8d64-S1", 164.49, dev_us(&fa(1, 8, 1, 1, 64), &dev)),
        ("fa-h8d64-S2048", 240.56, dev_us(&fa(1, 8, 2048, 2048, 64), &dev)),
        ("fa-h8d64-S4096", 588.71, dev_us(&fa(1, 8, 4096, 4096, 64), &dev)),
        ("fa-h8d64-S8192", 1699.22, dev_us(&fa(1, 8, 8192, 8192, 64), &dev)),
        ("fa-h1d128-S1024", 58.461, dev_us(&fa(1, 1, 1024, 1024, 128), &dev)),
        ("fa-h1d128-S4096", 118.302, dev_us(&fa(1, 1, 4096, 4096, 128), &dev)),
        ("fa-h1d128-S8192", 353.147, dev_us(&fa(1, 1, 8192, 8192, 128), &dev)),
        ("fa-h1d128-S32768", 3646.173, dev_us(&fa(1, 1, 32768, 32768, 128), &dev)),
        ("fa-hosttimed-128x1024 (aarch64)", 70.338, dev_us(&fa(1, 1, 128, 1024, 128), &dev)),
        ("fa-hosttimed-2048x8192 (aarch64)", 126.845, dev_us(&fa(1, 1, 2048, 8192, 128), &dev)),
        ("gemm-5416x1408x6144", 368.1, dev_us(&gemm, &dev)),
        ("allreduce-8rank-17MB", 437.3, dev_us(&Op::Comm { kind: CommKind::AllReduce, bytes: 5504 * 1536 * 2, ranks: 8, link: Link::Hccs, algorithm: CommAlgorithm::Ring }, &dev)),
    ];
    let mut errs = vec![];
    for (id, m, p) in &rows {
        let e = (p - m) / m * 100.0;
        errs.push(e.abs());
        println!("{id:36} measured {m:10.2} us  predicted {p:10.2} us  error {e:+7.1}%");
    }
    errs.sort_by(|a, b| a.total_cmp(b));
    println!("median |error| {:.1}% over {} rows", (errs[7] + errs[8]) / 2.0, errs.len());
}

#[test]
fn dbg_gemm() {
    let dev = d();
    for (m, n, k) in [(5416u64, 1408u64, 6144u64), (8192, 8192, 8192), (16384, 16384, 16384), (4096, 4096, 4096), (768,768,768)] {
        let op = Op::Matmul { batch: 1, m, n, k, dtype: DType::Fp16, weight_dtype: None, epilogue: Epilogue::None };
        let t = default_tiling(&op, &dev);
        let e = estimate(&op, &t, &dev).unwrap();
        println!("{m}x{n}x{k} default {:?}\n  {:.1} us {:.1}% peak bound {:?} exposed {:?} waves {}", t, e.time_us, e.attained_tflops / dev.derived.peak_tflops_fp16 * 100.0, e.bound, e.breakdown.exposed, e.breakdown.waves);
        if m <= 8192 {
            let (bt, be, _) = best_tiling(&op, &dev).unwrap();
            println!("  best {:?}\n  {:.1} us {:.1}% exposed {:?}", bt, be.time_us, be.attained_tflops / dev.derived.peak_tflops_fp16 * 100.0, be.breakdown.exposed);
        }
    }
}

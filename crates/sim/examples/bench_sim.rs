//! Prints the device-model benchmark figures: `cargo run --profile bench-native -p tunelab-sim --example bench_sim`.

use std::time::Instant;
use tunelab_sim::*;

fn main() {
    let n = 20_000_000;
    let t0 = Instant::now();
    let evals = bench::matmul_evals(n);
    let dt = t0.elapsed().as_secs_f64();
    println!("matmul_tiling_evals_per_s {:.0}", evals / dt);
    let d = bundled_device("910B2").unwrap();
    let op = Op::Matmul { batch: 1, m: 4096, n: 4096, k: 4096, dtype: DType::Fp16, weight_dtype: None, epilogue: Epilogue::None };
    let t0 = Instant::now();
    let (t, e, valid) = best_tiling(&op, &d).unwrap();
    let dt = t0.elapsed().as_secs_f64();
    println!("exhaustive 4096^3 fp16 910B2: {dt:.3} s, {valid} valid, {:.1} TFLOPS, {}", e.attained_tflops, t.describe());
}

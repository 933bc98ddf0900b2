//! Device-model benchmark figures for `tunelab bench --json` (wired by the bench command).

use std::time::Instant;
use tunelab_sim::{bench, bundled_device, tuning, DType, Epilogue, Op};

/// (name, value) pairs: matmul tiling evaluations per second on one core, and the exhaustive
/// search over every valid tiling of a 4096^3 FP16 matmul on 910B2.
#[allow(dead_code)]
pub fn figures() -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    let _ = bench::matmul_evals(200_000); // warm-up
    let n = 5_000_000;
    let t0 = Instant::now();
    let evals = bench::matmul_evals(n);
    let dt = t0.elapsed().as_secs_f64().max(1e-9);
    out.push(("matmul_tiling_evals_per_s".to_string(), serde_json::json!((evals / dt).round())));
    if let Ok(d) = bundled_device("910B2") {
        let op = Op::Matmul { batch: 1, m: 4096, n: 4096, k: 4096, dtype: DType::Fp16, weight_dtype: None, epilogue: Epilogue::None };
        let t0 = Instant::now();
        if let Some((_, e, valid)) = tuning::best_tiling(&op, &d) {
            out.push(("matmul_4096_fp16_910b2_exhaustive_s".to_string(), serde_json::json!(t0.elapsed().as_secs_f64())));
            out.push(("matmul_4096_fp16_910b2_valid_tilings".to_string(), serde_json::json!(valid)));
            out.push(("matmul_4096_fp16_910b2_best_tflops".to_string(), serde_json::json!(e.attained_tflops)));
        }
    }
    out
}

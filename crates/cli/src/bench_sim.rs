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
    let load = load_average();
    let (t0, c0) = (Instant::now(), thread_cpu_s());
    let evals = bench::matmul_evals(n);
    let dt = t0.elapsed().as_secs_f64().max(1e-9);
    out.push(("matmul_tiling_evals_per_s".to_string(), serde_json::json!((evals / dt).round())));
    // The wall-clock rate depends on what else the machine runs; the rate per second of this
    // thread's own CPU time does not (much), so both are printed, with the load average.
    if let (Some(c0), Some(c1)) = (c0, thread_cpu_s()) {
        if c1 > c0 {
            out.push(("matmul_tiling_evals_per_cpu_s".to_string(), serde_json::json!((evals / (c1 - c0)).round())));
        }
    }
    if let Some(l) = load {
        out.push(("load_average_1min".to_string(), serde_json::json!(l)));
    }
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

/// This thread's CPU time in seconds (user + system), from /proc/thread-self/stat (Linux; None
/// elsewhere). Clock ticks of 1/100 s: the 5 M evaluations above take about a second.
pub(crate) fn thread_cpu_s() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the command name (which may hold spaces) closed by ')': state is field 3,
    // utime and stime are fields 14 and 15.
    let rest = s.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let (u, k): (f64, f64) = (f.get(11)?.parse().ok()?, f.get(12)?.parse().ok()?);
    Some((u + k) / 100.0)
}

/// The 1-minute load average (/proc/loadavg; None elsewhere).
pub(crate) fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

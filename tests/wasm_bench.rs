//! The device-model benchmark, natively and as WebAssembly under Node: the same function
//! (`tunelab_sim::bench::matmul_evals`) timed on both targets, so the ratio can be read off the
//! test output. It prints figures and asserts only that work was done: timing depends on the
//! machine, so it is never a pass/fail threshold.
//!
//! Natively: `cargo test --test wasm_bench -- --nocapture`. As wasm under Node:
//! `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner cargo test --target wasm32-unknown-unknown --test wasm_bench`.
//! Compare like with like: the same cargo profile on both targets (in the dev profile the
//! engine crates are built at opt-level 2).

/// Evaluations per timed round; several rounds, the best one counts (less noise on a busy box).
const EVALS: usize = 10_000_000;
const ROUNDS: usize = 3;

fn now_ms() -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        js_sys::Date::now()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        use std::time::{SystemTime, UNIX_EPOCH};
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64() * 1e3).unwrap_or(0.0)
    }
}

fn best_rate() -> f64 {
    let mut best = 0.0f64;
    for _ in 0..ROUNDS {
        let t0 = now_ms();
        let done = tunelab_sim::bench::matmul_evals(EVALS);
        let secs = ((now_ms() - t0) / 1e3).max(1e-3);
        assert_eq!(done, EVALS as f64, "every tiling evaluated");
        best = best.max(done / secs);
    }
    best
}

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen_test::wasm_bindgen_test]
fn matmul_tiling_evals_per_second() {
    let rate = best_rate();
    wasm_bindgen_test::console_log!("matmul_tiling_evals_per_s (wasm32 under Node): {rate:.0}");
}

#[cfg(not(target_arch = "wasm32"))]
#[test]
fn matmul_tiling_evals_per_second() {
    let rate = best_rate();
    println!("matmul_tiling_evals_per_s (native): {rate:.0}");
}

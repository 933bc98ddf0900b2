//! Benchmarks as plain functions, so the same code runs natively and compiled to WebAssembly
//! (the app's wasm test calls `matmul_evals` and compares with the native figure).

use crate::cost::matmul;
use crate::device::bundled_device;
use crate::op::Op;
use crate::tiling::MatmulTiling;
use crate::tuning;
use crate::DType;

/// Evaluates `n` matmul tilings (4096^3 FP16 on 910B2, cycling through varied valid tilings)
/// and returns how many were evaluated; the checksum keeps the work from being optimised away.
/// Time it from the caller (`std::time::Instant` natively, `performance.now()` in a browser).
pub fn matmul_evals(n: usize) -> f64 {
    let Ok(d) = bundled_device("910B2") else { return 0.0 };
    let op = Op::Matmul { batch: 1, m: 4096, n: 4096, k: 4096, dtype: DType::Fp16, weight_dtype: None, epilogue: Default::default() };
    let Ok(p) = matmul::problem(&op) else { return 0.0 };
    let c = matmul::Ctx::new(p, &d);
    let base = tuning::default_matmul(&c, &d);
    let mut ts = [base; 8];
    let variants: [(u32, u32, u32, u32); 8] = [(128, 256, 64, 1), (128, 128, 64, 2), (64, 256, 64, 4), (128, 128, 128, 1),
        (256, 128, 64, 1), (64, 64, 128, 2), (128, 64, 64, 8), (32, 256, 64, 2)];
    for (t, (m, n, k, s)) in ts.iter_mut().zip(variants) {
        *t = MatmulTiling { base_m: m, base_n: n, base_k: k, step_ka: s, step_kb: s, depth_a1: 2 * s, depth_b1: 2 * s, db_l0c: false, ..base };
    }
    let mut acc = 0.0;
    for i in 0..n {
        let mut t = ts[i & 7];
        t.iterate_order = (i >> 3 & 1) as u8;
        if let Some(x) = matmul::time_us(&c, &t) {
            acc += x;
        }
    }
    if acc < 0.0 {
        return -1.0;
    }
    n as f64
}

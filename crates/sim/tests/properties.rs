//! Device-model properties: never faster than any engine's peak, monotone in problem size for
//! a fixed tiling, breakdown adds up, infeasible tilings say why, bad profiles name the field.

use tunelab_sim::*;

/// A tiny deterministic generator (xorshift) so the properties run over many shapes.
struct Gen(u64);
impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[(self.next() % xs.len() as u64) as usize]
    }
    fn dim(&mut self) -> u64 {
        1 + self.next() % 3000
    }
}

const DTYPES: [DType; 4] = [DType::Fp32, DType::Fp16, DType::Bf16, DType::Int8];

fn random_op(g: &mut Gen) -> Op {
    let t = g.pick(&DTYPES);
    match g.next() % 6 {
        0 | 1 => Op::Matmul { batch: 1 + g.next() % 4, m: g.dim(), n: g.dim(), k: g.dim(), dtype: t, weight_dtype: if g.next().is_multiple_of(4) { Some(DType::Int8) } else { None }, epilogue: g.pick(&[Epilogue::None, Epilogue::Bias, Epilogue::BiasGelu, Epilogue::ResidualAdd]) },
        2 => Op::Vector { kind: g.pick(&[VectorKind::Elementwise, VectorKind::Softmax, VectorKind::RmsNorm, VectorKind::LayerNorm, VectorKind::Rotary, VectorKind::Reduce, VectorKind::Cast, VectorKind::Quantize, VectorKind::Gather, VectorKind::Scale, VectorKind::Activation, VectorKind::SwiGlu]), rows: g.dim(), row_len: g.dim(), dtype: t },
        3 => {
            let kvh = g.pick(&[1u64, 2, 8]);
            Op::Attention { kind: g.pick(&[AttentionKind::Unfused, AttentionKind::Flash, AttentionKind::Decode]), batch: 1 + g.next() % 4, heads: kvh * g.pick(&[1u64, 4]), kv_heads: kvh, q_len: g.dim(), kv_len: g.dim(), head_dim: g.pick(&[64u64, 128]), causal: g.next().is_multiple_of(2), dtype: g.pick(&[DType::Fp16, DType::Bf16]) }
        }
        4 => Op::Conv2d { batch: 1 + g.next() % 2, in_ch: 1 + g.next() % 320, out_ch: 1 + g.next() % 320, h: 8 + g.next() % 64, w: 8 + g.next() % 64, kh: 3, kw: 3, stride: 1 + g.next() % 2, pad: 1, dtype: g.pick(&[DType::Fp16, DType::Bf16]) },
        _ => Op::Comm { kind: g.pick(&[CommKind::AllReduce, CommKind::AllGather, CommKind::ReduceScatter, CommKind::AllToAll]), bytes: g.next() % (1 << 30), ranks: 1 + g.next() % 16, link: g.pick(&[Link::Hccs, Link::InterNode, Link::Pcie]), algorithm: g.pick(&[CommAlgorithm::Ring, CommAlgorithm::Tree]) },
    }
}

fn peak_tflops(d: &Device) -> f64 {
    // INT8 TOPS is the highest cube rate; the vector unit is far below it.
    d.derived.peak_tops_int8
}

#[test]
fn never_beats_any_engine_peak_and_breakdown_adds_up() {
    let devices = bundled();
    // Re-pinned 8 -> 9: main added the 64 GB 910B4 board profile (910B4-64G.json, 6656f77); every
    // file in assets/devices/ still has to load.
    assert_eq!(devices.len(), 9, "every bundled profile loads (910C and 910B4-64G included)");
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    for i in 0..1500 {
        let d = &devices[i % devices.len()];
        let op = random_op(&mut g);
        let e = match estimate(&op, &Tiling::Default, d) {
            Ok(e) => e,
            // Only a collective over a link the chip lacks may fail with the default tiling.
            Err(why) => {
                assert!(matches!(op, Op::Comm { .. }) && why.reason.contains("no "), "{op:?} on {}: {}", d.name, why.reason);
                continue;
            }
        };
        assert!(e.time_us.is_finite() && e.time_us >= 0.0, "{op:?}");
        assert!(e.attained_tflops <= peak_tflops(d) * 1.000001, "{op:?} {e:?}");
        if let Op::Matmul { dtype: DType::Fp16 | DType::Bf16, weight_dtype: None, .. } = op {
            assert!(e.attained_tflops <= d.derived.peak_tflops_fp16 * 1.000001, "{op:?}");
        }
        if let Op::Matmul { dtype: DType::Fp32, .. } = op {
            assert!(e.attained_tflops <= d.derived.peak_tflops_fp32 * 1.000001, "{op:?}");
        }
        if !matches!(op, Op::Comm { .. }) && e.time_us > 0.0 {
            let gbs = e.hbm_bytes / (e.time_us - e.breakdown.exposed.launch).max(1e-12) / 1.0e3;
            assert!(gbs <= d.derived.hbm_gbs * 1.000001, "{op:?}: {gbs} GB/s > {}", d.derived.hbm_gbs);
        }
        let parts = e.breakdown.exposed.sum();
        assert!((parts - e.time_us).abs() <= 1e-9 * e.time_us.max(1.0), "{op:?}: {parts} vs {}", e.time_us);
        for v in e.breakdown.exposed.to_array() {
            assert!(v >= -1e-12, "{op:?}: negative part {v}");
        }
        assert!(e.relative_error >= 0.0 && e.relative_error < 0.1, "{op:?}");
        assert!(e.energy_uj >= 0.0);
    }
}

#[test]
fn larger_problem_never_faster_with_same_tiling() {
    let d = bundled_device("910B2").unwrap();
    let mut g = Gen(12345);
    let mut checked = 0;
    for _ in 0..8000 {
        let (m, n, k) = (g.dim(), g.dim(), g.dim());
        let t = g.pick(&DTYPES);
        let op = Op::Matmul { batch: 1, m, n, k, dtype: t, weight_dtype: None, epilogue: Epilogue::None };
        let axes = tiling_axes(&op, &d);
        let assign: Vec<(String, i64)> = axes.iter().map(|a| (a.name.clone(), g.pick(&a.values))).collect();
        let Ok(tiling) = tiling_from_assignment(&op, &assign) else { continue };
        let Ok(small) = estimate(&op, &tiling, &d) else { continue };
        let grow = 1 + g.next() % 500;
        let bigger = match g.next() % 3 {
            0 => Op::Matmul { batch: 1, m: m + grow, n, k, dtype: t, weight_dtype: None, epilogue: Epilogue::None },
            1 => Op::Matmul { batch: 1, m, n: n + grow, k, dtype: t, weight_dtype: None, epilogue: Epilogue::None },
            _ => Op::Matmul { batch: 1, m, n, k: k + grow, dtype: t, weight_dtype: None, epilogue: Epilogue::None },
        };
        let big = estimate(&bigger, &tiling, &d).expect("feasibility does not depend on size");
        assert!(big.time_us >= small.time_us * (1.0 - 1e-12), "{op:?} -> {bigger:?} with {}: {} < {}", tiling.describe(), big.time_us, small.time_us);
        checked += 1;
    }
    assert!(checked > 400, "{checked}");
    // Vector and flash attention too.
    for rows in [1u64, 7, 100, 1000, 5000] {
        let a = Op::Vector { kind: VectorKind::RmsNorm, rows, row_len: 4096, dtype: DType::Fp16 };
        let b = Op::Vector { kind: VectorKind::RmsNorm, rows: rows + 13, row_len: 4096, dtype: DType::Fp16 };
        let t = default_tiling(&a, &d);
        assert!(estimate(&b, &t, &d).unwrap().time_us >= estimate(&a, &t, &d).unwrap().time_us);
    }
    for q in [128u64, 1000, 4096] {
        let mk = |q| Op::Attention { kind: AttentionKind::Flash, batch: 1, heads: 32, kv_heads: 8, q_len: q, kv_len: q, head_dim: 128, causal: true, dtype: DType::Fp16 };
        let t = default_tiling(&mk(q), &d);
        assert!(estimate(&mk(q + 100), &t, &d).unwrap().time_us >= estimate(&mk(q), &t, &d).unwrap().time_us);
    }
}

#[test]
fn infeasible_tilings_say_why() {
    let d = bundled_device("910B2").unwrap();
    let op = Op::Matmul { batch: 1, m: 4096, n: 4096, k: 4096, dtype: DType::Fp16, weight_dtype: None, epilogue: Epilogue::None };
    let cases: &[(&[(&str, i64)], &str)] = &[
        (&[("baseM", 256), ("baseK", 256), ("dbL0A", 0)], "overflows L0A by 65536 bytes"),
        (&[("baseN", 256), ("baseK", 128), ("dbL0B", 1)], "overflows L0B"),
        (&[("baseM", 256), ("baseN", 256)], "overflows L0C"),
        (&[("baseM", 24)], "not a multiple of 16"),
        (&[("baseK", 40)], "not a multiple of 16"),
        (&[("depthA1", 3)], "depthA1 = 3 must be a multiple of 4"),
        (&[("stepKa", 8), ("depthA1", 16), ("stepKb", 8), ("depthB1", 16)], "overflows L1"),
    ];
    for (assign, why) in cases {
        let v: Vec<(String, i64)> = assign.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let t = tiling_from_assignment(&op, &v).unwrap();
        let err = estimate(&op, &t, &d).expect_err("must be infeasible");
        assert!(err.reason.contains(why), "{assign:?}: {}", err.reason);
    }
    assert!(tiling_from_assignment(&op, &[("bogus".into(), 1)]).unwrap_err().contains("bogus"));
    // Every candidate either costs or says why; the exhaustive count matches a brute count.
    let small = Op::Matmul { batch: 1, m: 64, n: 96, k: 80, dtype: DType::Int8, weight_dtype: None, epilogue: Epilogue::None };
    let axes = tiling_axes(&small, &d);
    let mut idx = vec![0usize; axes.len()];
    let mut valid = 0;
    let mut brute_best = f64::INFINITY;
    loop {
        let v: Vec<(String, i64)> = axes.iter().zip(&idx).map(|(a, &i)| (a.name.clone(), a.values[i])).collect();
        match estimate(&small, &tiling_from_assignment(&small, &v).unwrap(), &d) {
            Ok(e) => {
                valid += 1;
                brute_best = brute_best.min(e.time_us);
            }
            Err(e) => assert!(!e.reason.is_empty()),
        }
        let mut i = 0;
        while i < axes.len() {
            idx[i] += 1;
            if idx[i] < axes[i].values.len() {
                break;
            }
            idx[i] = 0;
            i += 1;
        }
        if i == axes.len() {
            break;
        }
    }
    let (_, e, n) = best_tiling(&small, &d).unwrap();
    assert_eq!(n, valid);
    assert_eq!(e.time_us, brute_best, "the bound-pruned search must find the exact optimum");
    let v = Op::Vector { kind: VectorKind::Softmax, rows: 64, row_len: 1000, dtype: DType::Fp16 };
    let bad = |tile, db| estimate(&v, &Tiling::Vector(VectorTiling { tile_len: tile, double_buffer: db }), &d).unwrap_err().reason;
    assert!(bad(17, false).contains("32-byte aligned"));
    assert!(bad(1008 * 60, true).contains("overflows UB"));
    assert!(bad(1024, false).contains("whole rows"));
    let f = Op::Attention { kind: AttentionKind::Flash, batch: 1, heads: 8, kv_heads: 8, q_len: 4096, kv_len: 4096, head_dim: 128, causal: false, dtype: DType::Fp16 };
    let e = estimate(&f, &Tiling::Flash(FlashTiling { block_q: 512, block_kv: 512 }), &d).unwrap_err();
    assert!(e.reason.contains("overflows"), "{}", e.reason);
}

#[test]
fn exhaustive_best_beats_default_and_any_sample() {
    let d = bundled_device("910B3").unwrap();
    let op = Op::Matmul { batch: 4, m: 512, n: 1024, k: 768, dtype: DType::Bf16, weight_dtype: None, epilogue: Epilogue::None };
    let (_, best, _) = best_tiling(&op, &d).unwrap();
    let def = estimate(&op, &Tiling::Default, &d).unwrap();
    assert!(best.time_us <= def.time_us);
    let mut g = Gen(7);
    let axes = tiling_axes(&op, &d);
    for _ in 0..3000 {
        let v: Vec<(String, i64)> = axes.iter().map(|a| (a.name.clone(), g.pick(&a.values))).collect();
        if let Ok(e) = estimate(&op, &tiling_from_assignment(&op, &v).unwrap(), &d) {
            assert!(best.time_us <= e.time_us);
        }
    }
}

#[test]
fn bad_profiles_name_the_field() {
    let good = bundled_device("910B2").unwrap().to_json();
    let back = Device::from_json(&good).unwrap();
    assert_eq!(back, bundled_device("910B2").unwrap());
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["fields"].as_object_mut().unwrap().remove("l0a_bytes");
    assert!(Device::from_json(&v.to_string()).unwrap_err().contains("l0a_bytes"));
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["fields"]["cube_clock_mhz"]["value"] = serde_json::json!(-5);
    assert!(Device::from_json(&v.to_string()).unwrap_err().contains("cube_clock_mhz"));
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["fields"]["hbm_peak_gbs"].as_object_mut().unwrap().remove("source");
    assert!(Device::from_json(&v.to_string()).unwrap_err().contains("hbm_peak_gbs.source"));
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["fields"]["arch"]["value"] = serde_json::json!("fused");
    assert!(Device::from_json(&v.to_string()).unwrap_err().contains("arch"));
    assert!(Device::from_json("{").unwrap_err().contains("JSON"));
    assert!(Device::from_json("{\"name\": \"x\"}").unwrap_err().contains("fields"));
    assert!(bundled_device("nope").is_err());
    let d = bundled_device("910B2").unwrap();
    assert!((d.derived.peak_tflops_fp16 - 353.9).abs() < 0.1);
    assert!((bundled_device("910B1").unwrap().derived.peak_tflops_fp16 - 363.7).abs() < 0.1);
    assert!((bundled_device("310P3").unwrap().derived.peak_tflops_fp16 - 69.5).abs() < 0.1);
    assert!((bundled_device("310B1").unwrap().derived.peak_tflops_fp16 - 10.0).abs() < 0.1);
}

#[test]
fn absurd_shapes_do_not_panic() {
    let d = bundled_device("310B1").unwrap();
    let big = u64::MAX;
    let ops = [
        Op::Matmul { batch: big, m: big, n: big, k: big, dtype: DType::Fp16, weight_dtype: None, epilogue: Epilogue::None },
        Op::Matmul { batch: 1, m: 0, n: 1, k: 1, dtype: DType::Fp16, weight_dtype: None, epilogue: Epilogue::None },
        Op::Vector { kind: VectorKind::Softmax, rows: big, row_len: big, dtype: DType::Fp32 },
        Op::Attention { kind: AttentionKind::Flash, batch: 1, heads: 3, kv_heads: 2, q_len: 1, kv_len: 1, head_dim: 1, causal: true, dtype: DType::Fp16 },
        Op::Conv2d { batch: 1, in_ch: 1, out_ch: 1, h: 2, w: 2, kh: 5, kw: 5, stride: 1, pad: 0, dtype: DType::Fp16 },
        Op::Comm { kind: CommKind::AllReduce, bytes: big, ranks: big, link: Link::Hccs, algorithm: CommAlgorithm::Tree },
    ];
    for op in &ops {
        let _ = estimate(op, &Tiling::Default, &d);
        let _ = best_tiling(op, &d);
        let _ = tiling_axes(op, &d);
    }
    assert!(estimate(&ops[1], &Tiling::Default, &d).unwrap_err().reason.contains("m must be"));
}

#[test]
fn bundled_files_show_the_derived_numbers_the_model_uses() {
    for name in ["910B1", "910B2", "910B3", "910B4", "910", "310P3", "310B1"] {
        let text = std::fs::read_to_string(format!("{}/../../assets/devices/{name}.json", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let file: serde_json::Value = serde_json::from_str(&text).unwrap();
        let d = Device::from_json(&text).unwrap();
        let model = serde_json::to_value(&d.derived).unwrap();
        for (k, v) in file["derived"].as_object().unwrap() {
            assert_eq!(v["derived"], true, "{name} {k}");
            let shown = v["value"].as_f64().unwrap();
            let used = model[k].as_f64().unwrap();
            assert!((shown - used).abs() <= 1e-3 * used.abs().max(1.0), "{name} {k}: file {shown} vs model {used}");
        }
    }
}

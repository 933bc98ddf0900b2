//! The grouped matmul (torch_npu's `npu_grouped_matmul`, the MoE experts' GEMM) reads every
//! touched expert's weight once: its device-memory traffic is a read stream, which sustains the
//! kernel library's `grouped_matmul_hbm_efficiency` of the HBM peak rather than the all-core
//! copy's `hbm_efficiency` (half writes). Set 3's FlagGems torch_npu rows
//! (op-flaggems-grouped-matmul-torchnpu-baseline, 910B2, 32 experts, fp16) take 0.360 / 0.184 /
//! 0.367 / 0.177 ms for M1024/M2560 x (K4096 N2048 | K1024 N4096): the copy rate priced them
//! 21-33% slow. Run: cargo test -p tunelab-sim --test op_grouped_matmul

use tunelab_sim::cost::moe_comm;
use tunelab_sim::*;

fn gmm(m: u64, k: u64, n: u64) -> Op {
    Op::GroupedMatmul { groups: 32, m, n, k, dtype: DType::Fp16, weight_dtype: None }
}

fn ms(o: &Op, d: &Device) -> f64 {
    estimate(o, &Tiling::Default, d).unwrap().time_us / 1.0e3
}

#[test]
fn the_experts_weight_stream_runs_at_the_librarys_read_rate_not_the_copy_rate() {
    let d = bundled_device("910B2").unwrap();
    let eff = d.grouped_matmul_hbm_efficiency;
    assert!((0.7..=0.95).contains(&eff) && eff > d.hbm_efficiency, "{eff} vs copy {}", d.hbm_efficiency);
    for ((m, k, n), measured) in [((1024, 4096, 2048), 0.359678), ((1024, 1024, 4096), 0.184132), ((2560, 4096, 2048), 0.367067), ((2560, 1024, 4096), 0.177334)] {
        let g = gmm(m, k, n);
        let t = ms(&g, &d);
        // The same problem as a plain batched matmul goes at the copy rate.
        let plain = ms(&g.lowered().unwrap(), &d);
        eprintln!("M{m} K{k} N{n}: grouped {t:.3} ms, as a batched matmul {plain:.3} ms, measured {measured:.3} ms");
        assert!(plain > 1.15 * t, "M{m} K{k} N{n}: {plain} vs {t}");
        assert!((t / measured - 1.0).abs() < 0.12, "M{m} K{k} N{n}: {t:.3} ms vs measured {measured:.3}");
        // Weight-bound: no faster than its weights over the read-stream rate.
        let floor = moe_comm::grouped_weight_bytes(&g) / (moe_comm::grouped_hbm_gbs(&d) * 1.0e6);
        assert!(t >= floor && t < 1.1 * floor + 0.01, "{t} vs weight floor {floor}");
    }
    // Half the weights, half the time (no per-group cost), at either row count.
    let r = ms(&gmm(1024, 4096, 2048), &d) / ms(&gmm(1024, 1024, 4096), &d);
    assert!((r - 2.0).abs() < 0.15, "{r}");
}

#[test]
fn the_rate_is_a_kernel_library_field_with_bounds_and_a_bad_value_is_named() {
    // Every bundled library carries it, and every chip resolves it.
    for chip in ["910B2", "910B4", "910C", "310P3"] {
        let d = bundled_device(chip).unwrap();
        assert!(d.grouped_matmul_hbm_efficiency > 0.0 && d.grouped_matmul_hbm_efficiency <= 1.0, "{chip}");
    }
    let text = tunelab_sim::device::bundled_profile_text("910B2").unwrap();
    let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
    v["kernel_library"] = serde_json::json!({"name": "aclnn", "fields": {"grouped_matmul_hbm_efficiency": {"value": 1.7, "source": "assumption"}}});
    let e = Device::from_json(&v.to_string()).err().unwrap_or_default();
    assert!(e.contains("grouped_matmul_hbm_efficiency"), "{e}");
    // A library override moves the grouped matmul and nothing else.
    v["kernel_library"] = serde_json::json!({"name": "aclnn", "fields": {"grouped_matmul_hbm_efficiency": {"value": 0.75, "source": "assumption"}}});
    let slow = Device::from_json(&v.to_string()).unwrap();
    let d = bundled_device("910B2").unwrap();
    let g = gmm(1024, 4096, 2048);
    assert!(ms(&g, &slow) > 1.1 * ms(&g, &d));
    let plain = g.lowered().unwrap();
    assert_eq!(ms(&plain, &slow), ms(&plain, &d));
}

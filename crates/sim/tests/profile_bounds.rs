//! Issue 13 #10: every chip-profile field is bounded to a physically plausible range at load,
//! and the error names the field. Before the fix a power of 1e308 W or a bandwidth of 5e-324
//! GB/s loaded, and every estimate came out inf/NaN.

use serde_json::{json, Value};
use tunelab_sim::device::{field_range, numeric_fields};
use tunelab_sim::*;

fn profile() -> Value {
    serde_json::from_str(&bundled_device("910B2").unwrap().to_json()).unwrap()
}

fn load_with(field: &str, value: Value) -> Result<Device, String> {
    let mut v = profile();
    v["fields"][field]["value"] = value;
    Device::from_json(&v.to_string())
}

#[test]
fn degenerate_profiles_are_refused_naming_the_field() {
    let e = load_with("power_tdp_w", json!(1e308)).unwrap_err();
    assert!(e.contains("device field 'power_tdp_w'") && e.contains("must be within ["), "{e}");
    let e = load_with("hbm_peak_gbs", json!(5e-324)).unwrap_err();
    assert!(e.contains("device field 'hbm_peak_gbs'") && e.contains("must be within ["), "{e}");
    for (field, bad) in [("cube_clock_mhz", json!(1e12)), ("l2_bytes", json!(1e18)), ("hccs_gbs", json!(1e300)), ("gm_bytes_per_cycle", json!(1e-9)), ("launch_matmul_us", json!(1e9))] {
        let e = load_with(field, bad).unwrap_err();
        assert!(e.contains(&format!("'{field}'")), "{field}: {e}");
    }
}

#[test]
fn every_field_at_its_extremes_gives_finite_estimates() {
    // Each numeric field at the edge of its range, one at a time: the profile loads and a
    // matmul, a vector op, flash attention and a collective all price to finite numbers.
    let ops = [
        Op::Matmul { batch: 1, m: 1024, n: 1024, k: 1024, dtype: DType::Fp16, weight_dtype: None, epilogue: Epilogue::None },
        Op::Vector { kind: VectorKind::RmsNorm, rows: 4096, row_len: 4096, dtype: DType::Fp16 },
        Op::Attention { kind: AttentionKind::Flash, batch: 1, heads: 8, kv_heads: 8, q_len: 1024, kv_len: 1024, head_dim: 128, causal: true, dtype: DType::Fp16 },
        Op::Comm { kind: CommKind::AllReduce, bytes: 1 << 24, ranks: 8, link: Link::Hccs, algorithm: CommAlgorithm::Ring },
    ];
    for field in numeric_fields() {
        let (lo, hi) = field_range(field).unwrap();
        for x in [lo, hi] {
            let mut v = profile();
            let is_int = matches!(field, "cube_cores" | "vector_cores") || field.ends_with("_bytes");
            v["fields"][field]["value"] = if is_int { json!(x as u64) } else { json!(x) };
            // A kernel-library field set in the chip profile overrides the library's (needs a source).
            if v["fields"][field].get("source").is_none() {
                v["fields"][field]["source"] = json!("assumption");
            }
            if let Some(o) = v["fields"][field].as_object_mut() {
                o.remove("min");
                o.remove("max");
            }
            if field == "power_tdp_w" {
                v["fields"]["power_idle_w"]["value"] = json!(0.0);
            }
            let Ok(d) = Device::from_json(&v.to_string()) else { continue };
            for op in &ops {
                if let Ok(e) = estimate(op, &Tiling::Default, &d) {
                    assert!(e.time_us.is_finite() && e.energy_uj.is_finite() && e.time_us > 0.0, "{field} = {x}: {op:?} -> {e:?}");
                }
            }
        }
    }
}

#[test]
fn declared_bounds_travel_and_hold() {
    let d = bundled_device("910B2").unwrap();
    assert!(!d.bounds.is_empty());
    let back = Device::from_json(&d.to_json()).unwrap();
    assert_eq!(back.bounds, d.bounds);
    // A fitted value outside its declared bounds is refused.
    let mut v = profile();
    let [lo, _] = d.bounds["hbm_efficiency"];
    v["fields"]["hbm_efficiency"]["value"] = json!(lo / 2.0);
    let e = Device::from_json(&v.to_string()).unwrap_err();
    assert!(e.contains("'hbm_efficiency'") && e.contains("declared bounds"), "{e}");
    // Bounds wider than the plausible range are refused too.
    let mut v = profile();
    v["fields"]["hbm_efficiency"]["max"] = json!(7.0);
    assert!(Device::from_json(&v.to_string()).unwrap_err().contains("'hbm_efficiency'"));
    // The same holds for a kernel library's value set by a calibration (`kernel_libraries`).
    let mut v = profile();
    v["kernel_libraries"] = json!({"aclnn": {"vector_efficiency": {"value": 0.1, "source": "fit", "min": 0.3, "max": 1.0}}});
    let e = Device::from_json(&v.to_string()).unwrap_err();
    assert!(e.contains("'vector_efficiency'") && e.contains("declared bounds"), "{e}");
}

#[test]
fn old_profiles_without_the_new_fields_still_load() {
    // A profile written before the dispatch / pipeline fields (e.g. inline in an old link).
    let mut v = profile();
    let f = v["fields"].as_object_mut().unwrap();
    for k in ["eager_host_us_per_launch", "eager_host_us_attention", "graph_launch_us", "cube_kstep_sync_cycles", "l1_load_sync_cycles", "fixpipe_sync_cycles", "vector_tile_sync_cycles", "vector_efficiency", "fa_handoff_cycles", "hccs_efficiency", "aiv_link_efficiency"] {
        f.remove(k);
    }
    let d = Device::from_json(&v.to_string()).unwrap();
    let b = bundled_device("910B2").unwrap();
    assert_eq!(d.eager_host_us_per_launch, b.eager_host_us_per_launch);
    assert_eq!(d.fa_handoff_cycles, b.fa_handoff_cycles);
    // A profile without the launch costs takes them from its kernel library (a software cost).
    assert!(d.sources["graph_launch_us"].starts_with("aclnn:"), "{}", d.sources["graph_launch_us"]);
    assert_eq!(d.graph_launch_us, b.graph_launch_us);
}

#[test]
fn kernel_efficiencies_come_from_the_named_library() {
    // The chip profile keeps chip facts; the matmul pipeline hand-off is the library's.
    let aclnn = bundled_device("910B2").unwrap();
    assert_eq!(aclnn.kernel_library, "aclnn");
    assert!(aclnn.sources["cube_kstep_sync_cycles"].starts_with("aclnn:"));
    let mut v = profile();
    v["kernel_library"] = json!("hand-written");
    let hw = Device::from_json(&v.to_string()).unwrap();
    assert_eq!(hw.kernel_library, "hand-written");
    let e = |d: &Device| estimate(&Op::Matmul { batch: 1, m: 8192, n: 8192, k: 8192, dtype: DType::Fp16, weight_dtype: None, epilogue: Epilogue::None }, &Tiling::Default, d).unwrap().time_us;
    assert!(e(&hw) >= e(&aclnn), "a hand-written kernel's single-buffered K steps are never faster than CANN's GEMM at the same tiling");
    v["kernel_library"] = json!("cublas");
    let err = Device::from_json(&v.to_string()).unwrap_err();
    assert!(err.contains("kernel_library") && err.contains("aclnn"), "{err}");
}

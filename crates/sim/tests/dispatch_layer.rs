//! Issue 21 (layering): host launch cost is a software-stack property (torch_npu's op dispatch
//! and the aclnn two-phase call with host tiling), so the eager dispatch fields live in the
//! kernel-library file (assets/kernels/libraries.json), not in the chip profiles, which keep
//! only what microbenchmarks of the silicon measure. Same values as before the move.

use serde_json::{json, Value};
use tunelab_sim::cost::dispatch::{self, LaunchMode};
use tunelab_sim::*;

#[test]
fn no_chip_profile_carries_a_kernel_library_field() {
    // A kernel field left in a bundled profile overrides its library (the rule that keeps old
    // shared links opening), so a stale copy silently re-prices every kernel on that chip: the
    // A3 (910C) profile kept the hand-written GEMM's 160-cycle K-step sync after the 910B
    // profiles moved to the library, and every framework matmul on A3 paid for that kernel.
    for d in bundled() {
        let text = tunelab_sim::device::bundled_profile_text(&d.name).unwrap();
        let v: Value = serde_json::from_str(text).unwrap();
        for k in tunelab_sim::kernels::KERNEL_FIELDS {
            assert!(v["fields"].get(*k).is_none(), "{}: '{k}' is a property of the kernel library, not of the chip", d.name);
            assert!(d.sources[*k].starts_with(&format!("{}:", d.kernel_library)), "{}: {k} comes from {}", d.name, d.sources[*k]);
        }
        // Every bundled chip gets CANN's library, and the moved dispatch costs unchanged.
        assert_eq!(d.kernel_library, "aclnn", "{}", d.name);
        assert_eq!((d.eager_host_us_per_launch, d.eager_host_us_attention, d.graph_launch_us), (20.0, 25.0, 150.0), "{}", d.name);
    }
}

#[test]
fn the_librarys_launch_cost_is_what_eager_dispatch_charges() {
    let mut v: Value = serde_json::from_str(&bundled_device("910B2").unwrap().to_json()).unwrap();
    v["kernel_libraries"] = json!({"aclnn": {"eager_host_us_per_launch": {"value": 40.0, "source": "fit", "min": 5.0, "max": 60.0}}});
    let slow = Device::from_json(&v.to_string()).unwrap();
    let base = bundled_device("910B2").unwrap();
    let op = Op::Vector { kind: VectorKind::RmsNorm, rows: 8, row_len: 4096, dtype: DType::Fp16 };
    // RMSNorm is eight framework launches in eager mode: twice the per-launch cost doubles it.
    let (a, b) = (dispatch::host_us(&base, &op, LaunchMode::Eager), dispatch::host_us(&slow, &op, LaunchMode::Eager));
    assert_eq!((a, b), (160.0, 320.0));
    assert_eq!(dispatch::host_us(&slow, &op, LaunchMode::Graph), 0.0);
    // A value outside the library's declared bounds is refused, naming the field.
    v["kernel_libraries"]["aclnn"]["eager_host_us_per_launch"]["value"] = json!(100.0);
    let e = Device::from_json(&v.to_string()).unwrap_err();
    assert!(e.contains("eager_host_us_per_launch"), "{e}");
}

//! INT4 x INT4 matmuls (W4A4) at the chip's own INT4 cube rate (`cube_int4_rate`, source AMCT
//! in the profiles): CANN documents an INT4 performance benefit only on the 310P, so on an
//! A2 chip a compute-bound W4A4 GEMM takes as long as the same GEMM in INT8, while on a 310P3
//! it runs at the s4 fractal's twice-INT8 rate. Old profiles without the field keep loading.

use tunelab_sim::*;

fn time_us(d: &Device, t: DType, m: u64) -> f64 {
    let op = Op::Matmul { batch: 1, m, n: 8192, k: 8192, dtype: t, weight_dtype: None, epilogue: Epilogue::None };
    cost::estimate(&op, &Tiling::Default, d).unwrap().time_us
}

#[test]
fn an_a2_chip_runs_int4_at_the_int8_rate_and_a_310p3_at_twice_it() {
    let a2 = device::bundled_device("910B2").unwrap();
    let (i8, i4) = (time_us(&a2, DType::Int8, 8192), time_us(&a2, DType::Int4, 8192));
    assert!((i4 / i8 - 1.0).abs() < 0.1, "910B2 8192^3: INT4 {i4:.0} us vs INT8 {i8:.0} us");
    let p = device::bundled_device("310P3").unwrap();
    let (i8, i4) = (time_us(&p, DType::Int8, 8192), time_us(&p, DType::Int4, 8192));
    assert!(i8 / i4 > 1.6, "310P3 8192^3: INT4 {i4:.0} us vs INT8 {i8:.0} us");
}

#[test]
fn a_profile_without_the_int4_rate_takes_the_bundled_chips() {
    let mut v: serde_json::Value = serde_json::from_str(device::bundled_profile_text("910B4").unwrap()).unwrap();
    v["fields"].as_object_mut().unwrap().remove("cube_int4_rate");
    let old = Device::from_json(&v.to_string()).unwrap();
    assert_eq!(old.cube_int4_rate, device::bundled_device("910B4").unwrap().cube_int4_rate);
    v["fields"]["cube_int4_rate"] = serde_json::json!({"value": 0.0, "source": "assumption"});
    let e = Device::from_json(&v.to_string()).unwrap_err();
    assert!(e.contains("cube_int4_rate"), "{e}");
}

//! Fidelity and calibration: the shared measurement set converts reproducibly, is predicted
//! through the stages' own evaluation path, a fit stays inside the declared bounds and lowers
//! the error, and msprof op summaries are read by column name.

use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use tunelab_scenario::calibrate::{calibrate, fittable, msprof, Options};
use tunelab_scenario::fidelity::{case_scenario, cases, evaluate, load_any, pinned_config, MeasurementSet};

const SET: &str = include_str!("../../../assets/measurements/ascend-910b.json");

fn set() -> MeasurementSet {
    MeasurementSet::from_json(SET).expect("the bundled measurement set parses")
}

#[test]
fn conversion_keeps_every_source_row_and_value() {
    let s = set();
    assert_eq!(s.rows.len(), 60, "the shared set has 60 rows");
    let src_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/calibration/ascend-measurements.json");
    let Ok(src) = std::fs::read_to_string(src_path) else {
        eprintln!("note: {src_path} not present; only the converted file is checked");
        return;
    };
    let src: Vec<Json> = serde_json::from_str(&src).unwrap();
    for (r, row) in src.iter().zip(&s.rows) {
        assert_eq!(r["id"].as_str().unwrap(), row.id, "rows keep the source order and ids");
        // Every numeric measured value of the source appears unchanged in the converted row.
        let mine: Vec<(String, Option<f64>)> = row.values.iter().chain(row.variants.iter().flat_map(|v| v.values.iter())).map(|m| (m.metric.clone(), m.value)).collect();
        for (k, v) in r["measured"].as_object().unwrap() {
            let Some(x) = v["value"].as_f64() else { continue };
            let got = mine.iter().find(|(n, _)| n == k).unwrap_or_else(|| panic!("{}: measured value '{k}' missing after conversion", row.id));
            assert_eq!(got.1, Some(x), "{}: '{k}' changed in conversion", row.id);
        }
    }
    // Reproducible: the converter regenerates the committed file byte for byte.
    let out = std::env::temp_dir().join(format!("tunelab-measurements-{}.json", std::process::id()));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/convert_measurements.py");
    match std::process::Command::new("python3").arg(script).arg(src_path).arg(&out).output() {
        Ok(o) if o.status.success() => {
            let regenerated = std::fs::read_to_string(&out).unwrap();
            let _ = std::fs::remove_file(&out);
            assert!(regenerated == SET, "scripts/convert_measurements.py no longer reproduces assets/measurements/ascend-910b.json; re-run it and commit the result");
        }
        _ => eprintln!("note: python3 not available; the conversion's reproducibility was not re-checked"),
    }
}

#[test]
fn fidelity_predicts_most_rows_through_the_stage_objective() {
    let s = set();
    let rep = evaluate(&s, &BTreeMap::new(), None);
    eprintln!("{}", rep.summary_text());
    assert!(rep.summary.rows_covered >= 45, "at least 45 of the 60 rows are predicted, got {}", rep.summary.rows_covered);
    for cat in ["op", "serving", "training"] {
        assert!(rep.summary.by_category.get(cat).is_some_and(|g| g.values > 0), "category {cat} has predictions");
    }
    for c in &rep.rows {
        assert!(c.predicted.is_finite() && c.predicted > 0.0, "{} {}: prediction {}", c.case, c.metric, c.predicted);
    }
    // Every value not compared says why.
    for u in &rep.unexpressed {
        assert!(!u.reason.trim().is_empty(), "{} {} has no reason", u.id, u.metric);
    }
    // Deterministic.
    assert_eq!(rep, evaluate(&s, &BTreeMap::new(), None));
}

#[test]
fn a_prediction_equals_the_runs_own_evaluation() {
    // One evaluation path: the value fidelity reports is what Run::evaluate gives for the
    // pinned configuration of the same scenario.
    let s = set();
    let all = cases(&s);
    let case = all.iter().find(|c| c.label() == "srv-llama2-7b-tp1-bs1-modes/graph").expect("case present");
    let sc = case_scenario(case, None).unwrap();
    let setup = tunelab_scenario::stages::setup(&sc).unwrap();
    let cfg = pinned_config(&setup);
    let mut run = tunelab_scenario::Run::new(&sc).unwrap();
    let out = run.evaluate(&cfg);
    let tunelab_search::Outcome::Ok(v) = out else { panic!("pinned configuration infeasible: {out:?}") };
    let i = run.metrics().iter().position(|m| m.name == "tpot_ms").unwrap();
    let rep = evaluate(&s, &BTreeMap::new(), None);
    let row = rep.rows.iter().find(|c| c.case == "srv-llama2-7b-tp1-bs1-modes/graph" && c.metric == "maxautotune_decode").unwrap();
    assert_eq!(row.predicted, v[i], "fidelity and Run::evaluate price the same configuration identically");
}

#[test]
fn an_unknown_knob_is_listed_with_the_stage_reason() {
    let mut s = set();
    s.rows.retain(|r| r.id == "trn-llama3-8b-8k-1x8");
    s.rows[0].scenario["space"]["warp_speed"] = json!({"fixed": 9});
    let rep = evaluate(&s, &BTreeMap::new(), None);
    assert!(rep.rows.is_empty());
    assert!(rep.unexpressed[0].reason.contains("warp_speed"), "{}", rep.unexpressed[0].reason);
}

#[test]
fn bad_measurement_files_are_named() {
    let e = MeasurementSet::from_json(r#"{"schema": "x", "rows": []}"#).unwrap_err();
    assert!(e.contains("schema"), "{e}");
    let e = MeasurementSet::from_json(r#"{"schema": "tunelab-measurements/1", "rows": [{"id": "a", "values": [{"metric": "t", "value": -3, "unit": "us", "predict": "model_time_ms"}]}]}"#).unwrap_err();
    assert!(e.contains("'a'") && e.contains("positive"), "{e}");
    let e = MeasurementSet::from_json(r#"{"schema": "tunelab-measurements/1", "rows": [{"id": 5}]}"#).unwrap_err();
    assert!(e.contains("rows[0]"), "{e}");
    let e = load_any("hello", "f.txt", "910B2").unwrap_err();
    assert!(e.contains("neither"), "{e}");
}

#[test]
fn calibration_stays_in_bounds_and_lowers_the_error() {
    // Synthetic truth: the operator rows "measured" on a 910B2 whose declared parameters differ
    // from the shipped ones; the fit starts from the shipped profile and must move toward them.
    let mut s = set();
    s.rows.retain(|r| r.category == "op" && r.chip == "910B2" && r.predict_with != "tuned");
    let profile: Json = serde_json::from_str(tunelab_sim::device::bundled_profile_text("910B2").unwrap()).unwrap();
    let params = fittable(&profile);
    assert!(!params.is_empty(), "the 910B2 profile declares fittable parameters");
    let truth: Vec<f64> = params.iter().map(|p| p.min + (p.max - p.min) * 0.35).collect();
    let true_profile = tunelab_scenario::calibrate::with_values(&profile, &params, &truth);
    let devs: BTreeMap<String, Json> = [("910B2".to_string(), true_profile)].into();
    let measured = evaluate(&s, &devs, None);
    assert!(measured.rows.len() >= 8, "{:?}", measured.unexpressed);
    for r in s.rows.iter_mut() {
        for m in r.values.iter_mut() {
            if let Some(c) = measured.rows.iter().find(|c| c.case == r.id && c.metric == m.metric) {
                m.value = Some(c.predicted);
            }
        }
    }
    let opts = Options { strategy: "auto".into(), budget: 80, loo_budget: 6, seed: 3, prior: 0.0, ..Options::default() };
    let cal = calibrate(&s, "fnv1a64:test", "910B2", &profile, &opts).unwrap();
    eprintln!("{}", cal.to_text());
    assert!(cal.loss_after <= cal.loss_before, "the fit never ends worse than the starting profile ({} -> {})", cal.loss_before, cal.loss_after);
    assert!(cal.loss_after < cal.loss_before * 0.6, "the fit lowers the residual markedly ({} -> {})", cal.loss_before, cal.loss_after);
    for p in &cal.params {
        assert!(p.after >= p.min && p.after <= p.max, "{} = {} outside [{}, {}]", p.name, p.after, p.min, p.max);
    }
    assert!(cal.rows.iter().any(|r| r.error_loo.is_some()), "leave-one-out errors are reported");
    // The written profile loads, marks fitted values and carries the digest and residual.
    let d = tunelab_sim::device::Device::from_json(&cal.profile.to_string()).expect("the calibrated profile loads");
    assert_eq!(d.name, "910B2");
    let f = &cal.profile["fields"][&cal.params[0].name];
    assert_eq!(f["source"], "fit");
    assert_eq!(f["fit"]["digest"], "fnv1a64:test");
    assert!(f["fit"]["residual"].as_f64().is_some());
    // Same seed, same fit.
    let again = calibrate(&s, "fnv1a64:test", "910B2", &profile, &opts).unwrap();
    assert_eq!(again.params, cal.params);
}

#[test]
fn calibration_refuses_a_chip_without_rows_or_bounds() {
    let s = set();
    let profile: Json = serde_json::from_str(tunelab_sim::device::bundled_profile_text("910B3").unwrap()).unwrap();
    let e = calibrate(&s, "d", "910B3", &profile, &Options { budget: 2, loo_budget: 0, ..Options::default() }).unwrap_err();
    assert!(e.contains("910B3") && e.contains("--family"), "{e}");
    let mut bare = profile.clone();
    for (_, f) in bare["fields"].as_object_mut().unwrap().iter_mut() {
        let o = f.as_object_mut().unwrap();
        o.remove("min");
        o.remove("max");
    }
    // The kernel libraries' values are fittable too unless the profile's own table is empty.
    bare["kernel_libraries"] = serde_json::json!({});
    let e = calibrate(&s, "d", "910B3", &bare, &Options::default()).unwrap_err();
    assert!(e.contains("no fittable parameters"), "{e}");
}

/// A small op summary in the column layout of CANN 8.x msprof (`op_summary_*.csv`).
const OP_SUMMARY: &str = "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles\n\
0,4294967295,12,2,aclnnMatmul_MatMulCommon_MatMulV2,MatMulV2,static,AI_CORE,1733040000000.12\t,486.02,2.1,24,0,NO,\"4096,4096;4096,4096\",FLOAT16;FLOAT16,ND;ND,\"4096,4096\",FLOAT16,ND,N/A,125.3,5412345\n\
0,4294967295,14,2,aclnnMatmul_MatMulCommon_MatMulV2,MatMulV2,static,AI_CORE,1733040000300.50\t,489.80,2.0,24,0,NO,\"4096,4096;4096,4096\",FLOAT16;FLOAT16,ND;ND,\"4096,4096\",FLOAT16,ND,N/A,124.9,5400000\n\
0,4294967295,15,2,aclnnRmsNorm_RmsNorm_RmsNorm,RmsNorm,static,AI_VECTOR_CORE,1733040000500.00\t,18.4,1.0,48,0,NO,\"1,1024,4096;4096\",FLOAT16;FLOAT16,ND;ND,\"1,1024,4096;1,1024,1\",FLOAT16;FLOAT,ND;ND,N/A,16.1,700000\n\
0,4294967295,16,2,aclnnArgMax_ArgMaxV2,ArgMaxV2,static,AI_VECTOR_CORE,1733040000600.00\t,6.2,1.0,8,0,NO,\"1,32000\",FLOAT16,ND,\"1\",INT64,ND,N/A,5.0,1000\n\
0,N/A,N/A,N/A,hcom_allReduce__123_0_1,hcom_allReduce_,N/A,HCCL,1733040000700.00\t,88.0,0,0,0,NO,,,,,,,N/A,N/A,N/A\n";

#[test]
fn msprof_op_summary_becomes_measurements() {
    let (set, skipped) = load_any(OP_SUMMARY, "op_summary_0_1_1.csv", "910B2").unwrap();
    assert_eq!(set.rows.len(), 2, "the two MatMulV2 launches are one measurement, RmsNorm another: {:?}", set.rows.iter().map(|r| &r.id).collect::<Vec<_>>());
    let mm = set.rows.iter().find(|r| r.id.contains("MatMulV2")).unwrap();
    assert_eq!(mm.values[0].value, Some((486.02 + 489.80) / 2.0), "median of the launches");
    let op = &mm.model["ops"][0]["op"];
    assert_eq!((op["m"].as_u64(), op["n"].as_u64(), op["k"].as_u64()), (Some(4096), Some(4096), Some(4096)));
    assert_eq!(op["dtype"], "fp16");
    let rn = set.rows.iter().find(|r| r.id.contains("RmsNorm")).unwrap();
    assert_eq!((rn.model["ops"][0]["op"]["rows"].as_u64(), rn.model["ops"][0]["op"]["row_len"].as_u64()), (Some(1024), Some(4096)));
    assert!(skipped.iter().any(|(k, why)| k.starts_with("ArgMaxV2") && why.contains("no Tunelab operator")), "{skipped:?}");
    assert!(skipped.iter().any(|(k, why)| k.starts_with("hcom_allReduce_") && why.contains("HCCL")), "{skipped:?}");
    // And it is predicted like any other measurement file.
    let rep = evaluate(&set, &BTreeMap::new(), None);
    assert_eq!(rep.rows.len(), 2, "{:?}", rep.unexpressed);
    // Quoted fields with commas and doubled quotes parse.
    let recs = msprof::parse_csv("a,\"b,c\",\"d\"\"e\"\r\n1,2,3\n").unwrap();
    assert_eq!(recs, vec![vec!["a", "b,c", "d\"e"], vec!["1", "2", "3"]]);
    // A summary without the duration column is named.
    let e = load_any("Op Name,OP Type,Input Shapes,Input Data Types,Task Duration\nx,MatMul,,,\n", "s.csv", "910B2");
    assert!(e.is_ok() || e.unwrap_err().contains("column"));
    let e = msprof::op_summary_to_set("Op Name,OP Type,Input Shapes,Task Duration(us)\n", "910B2", "s").unwrap_err();
    assert!(e.contains("Input Data Types"), "{e}");
}

#[test]
fn a_calibrated_profile_travels_in_the_link_within_its_bound() {
    let mut s = set();
    s.rows.retain(|r| r.id.starts_with("op-hbm-copy"));
    let profile: Json = serde_json::from_str(tunelab_sim::device::bundled_profile_text("910B2").unwrap()).unwrap();
    let opts = Options { budget: 6, loo_budget: 0, ..Options::default() };
    let cal = calibrate(&s, "fnv1a64:link", "910B2", &profile, &opts).unwrap();
    let mut sc = tunelab_scenario::Scenario::default();
    sc.device = tunelab_scenario::scenario::DeviceRef::Inline(tunelab_scenario::calibrate::compact_profile(&cal.profile));
    sc.validate().unwrap();
    let frag = tunelab_scenario::url::encode(&sc);
    eprintln!("link with the calibrated profile: {} characters (bound {})", frag.len(), tunelab_scenario::url::MAX_FRAGMENT);
    assert!(frag.len() < tunelab_scenario::url::MAX_FRAGMENT / 8, "{} characters", frag.len());
    let back = tunelab_scenario::url::decode(&frag).unwrap();
    assert_eq!(back.device, sc.device, "the profile comes back from the link unchanged");
    let tunelab_scenario::scenario::DeviceRef::Inline(p) = &back.device else { panic!() };
    // Every field the fit moved is marked as fitted and every other keeps its source, in the
    // chip's fields or in the profile's kernel-library table (`<library>.<field>`).
    for f in &cal.params {
        let field = match f.name.split_once('.') {
            Some((lib, k)) => &p["kernel_libraries"][lib][k],
            None => &p["fields"][&f.name],
        };
        let moved = (f.after - f.before).abs() > 1e-9 * f.before.abs().max(1.0);
        if moved {
            assert_eq!(field["source"], "fit", "{}", f.name);
        } else if !field.is_null() {
            assert_eq!(field["source"], f.source_before.as_str(), "{}", f.name);
        }
    }
}

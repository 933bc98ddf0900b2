//! Issue 41: every `tunelab fidelity` row priced with a model Tunelab approximates carries that
//! model's approximation notes (`ModelDesc::approximations`), in the JSON rows and under the
//! row in the text table; a model read exactly carries none.

use std::collections::BTreeMap;
use tunelab_scenario::evidence::fidelity::{evaluate, rows::MeasurementSet};

fn set(model: serde_json::Value) -> MeasurementSet {
    let v = serde_json::json!({
        "schema": "tunelab-measurements/1",
        "name": "approximations",
        "rows": [{
            "id": "gpt-oss-ttft", "category": "serving", "chip": "910B2", "model": model, "stage": "deployment",
            "scenario": {"workload": {"batch": 1, "input_len": 512, "output_len": 16}},
            "values": [{"metric": "ttft", "value": 100.0, "unit": "ms", "predict": "ttft_ms"}]
        }]
    });
    MeasurementSet::from_json(&v.to_string()).unwrap()
}

#[test]
fn a_row_priced_with_an_approximated_model_shows_its_approximations() {
    let gpt_oss: serde_json::Value = serde_json::from_str(include_str!("../../sim/tests/data/models/gpt-oss-20b.config.json")).unwrap();
    let r = evaluate(&set(gpt_oss), &BTreeMap::new(), None);
    assert_eq!(r.rows.len(), 1, "unexpressed: {:?}", r.unexpressed);
    let a = &r.rows[0].approximations;
    assert!(a.iter().any(|n| n.starts_with("MoE:")), "{a:?}");
    assert!(r.to_text().contains("~ model approximated: MoE:"), "{}", r.to_text());
    assert!(r.to_json()["rows"][0]["approximations"].as_array().is_some_and(|v| !v.is_empty()));
    // A model read exactly: no notes.
    let r = evaluate(&set(serde_json::json!("llama-2-7b")), &BTreeMap::new(), None);
    assert_eq!(r.rows.len(), 1);
    assert!(r.rows[0].approximations.is_empty(), "{:?}", r.rows[0].approximations);
}

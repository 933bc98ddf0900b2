//! Engine releases as data (issue 43): what a vLLM-Ascend release changes that a user sees.
//! Here the weight format of float linear weights: v0.11.0rc1-rc2 (and v0.12.0rc1) cast BF16/FP16
//! linear weights to FRACTAL_NZ at load (vllm-ascend #3356), v0.11.0rc3/v0.11.0 (#4495) and
//! v0.13.0rc1 on (#4878) leave them ND (assets/engines/releases.json `float_weight_nz`), priced
//! by serving-host.json `float_nz_linear_factor` (`stages::scheduler::weight_format`).

mod common;

use serde_json::{json, Value as Json};
use tunelab_scenario::fidelity::{cases, predict_case, MeasurementSet};
use tunelab_scenario::serving::Phase;
use tunelab_scenario::Scenario;

const SET3: &str = include_str!("../../../assets/measurements/ascend-set3.json");

/// QwQ-32B (the bundled qwen2.5-32b config) at TP4, batch 1, 1K context, full decode graph on an
/// A2 chip under vLLM-Ascend `version`: the launch of vllm-ascend issue #4167.
fn qwq(version: &str, precision: &str, extra: Json) -> Scenario {
    Scenario::from_value(qwq_json(version, precision, extra)).unwrap_or_else(|e| panic!("{e}"))
}

fn qwq_json(version: &str, precision: &str, extra: Json) -> Json {
    let mut v = json!({
        "version": 1, "name": "QwQ-32B TP4 bs1", "stage": "deployment", "device": "910B2", "model": "qwen2.5-32b",
        "workload": { "batch": 1, "input_len": 1024, "output_len": 128 },
        "deployment": { "tile_operators": false, "serving": { "mode": "static", "engine": "vllm-ascend", "engine_version": version, "graph_mode": "full_decode_only" } },
        "space": { "tp": { "fixed": 4 }, "batch": { "fixed": 1 }, "precision": { "fixed": precision }, "launch": { "fixed": "graph" } },
        "budget": 1
    });
    tunelab_scenario::evidence::fidelity::merge(&mut v, &extra);
    v
}

fn decode(s: &Scenario) -> tunelab_scenario::stages::deployment::StepOperators {
    common::step_with(s, &[], Phase::Decode)
}

/// The fidelity path's prediction of one row's metric (what `tunelab fidelity` compares).
fn predicted(id: &str, metric: &str) -> f64 {
    let set = MeasurementSet::from_json(SET3).unwrap();
    let all = cases(&set);
    let case = all.iter().find(|c| c.row.id == id).unwrap_or_else(|| panic!("no case {id}"));
    let (m, _) = predict_case(case, None).unwrap_or_else(|e| panic!("{e}"));
    m.get(metric).unwrap_or_else(|| panic!("no metric {metric}")).0
}

#[test]
fn the_v0_11_0rc1_image_decodes_slower_than_v0_9_1_through_its_nz_float_weights() {
    // The source's pair: 20-21 ms on v0.9.1, ~27 ms on v0.11.0rc1 (issue #4167).
    let v09 = predicted("srv-vllm-qwq32b-tp4-bs1-graph-v091-vs-v011/v0.9", "tpot_ms");
    let rc1 = predicted("srv-vllm-qwq32b-tp4-bs1-graph-v091-vs-v011/v0.11", "tpot_ms");
    assert!(rc1 > v09 * 1.08, "v0.11.0rc1 {rc1} ms vs v0.9.1 {v09} ms: the NZ cast of the float linear weights costs per token");
    assert!(rc1 < 27.0 && rc1 > 27.0 * 0.82, "v0.11.0rc1 TPOT {rc1} ms within 18% of the measured 27 ms");
}

#[test]
fn only_the_releases_that_cast_float_weights_to_nz_pay_for_it_and_the_step_names_it() {
    let step = |v: &str| decode(&qwq(v, "bf16", json!({})));
    let (nd, rc1, final_, r13) = (step("0.9"), step("0.11.0rc1"), step("0.11"), step("0.13"));
    let line = "release weight format: BF16/FP16 linear weights cast to FRACTAL_NZ";
    assert!(rc1.what.contains(line) && rc1.what.contains("x1.18"), "{}", rc1.what);
    for (v, s) in [("0.9", &nd), ("0.11 (v0.11.0, #4495)", &final_), ("0.13", &r13)] {
        assert!(!s.what.contains(line), "{v} leaves float weights ND: {}", s.what);
    }
    let gate_up = |s: &tunelab_scenario::stages::deployment::StepOperators| s.ops.iter().find(|o| o.name.ends_with("gate_up_proj")).map(|o| o.time_us).unwrap();
    let r = gate_up(&rc1) / gate_up(&nd);
    assert!((r - 1.18).abs() < 1e-6, "the listed gate/up projection carries the factor: x{r}");
    // Norms, attention and collectives keep their time.
    let norm = |s: &tunelab_scenario::stages::deployment::StepOperators| s.ops.iter().find(|o| o.name.ends_with("input_norm")).map(|o| o.time_us).unwrap();
    assert_eq!(norm(&rc1), norm(&nd));
}

#[test]
fn quantised_weights_are_nz_in_every_release_and_pay_nothing_extra() {
    let step = |v: &str| decode(&qwq(v, "w8a8", json!({})));
    let (rc1, nd) = (step("0.11.0rc1"), step("0.9"));
    assert!(!rc1.what.contains("release weight format"), "{}", rc1.what);
    let total = |s: &tunelab_scenario::stages::deployment::StepOperators| s.ops.iter().map(|o| o.time_us).sum::<f64>();
    assert_eq!(total(&rc1), total(&nd));
}

#[test]
fn a_scenario_sets_the_factor_from_its_own_runs_and_an_out_of_range_one_is_refused_by_name() {
    let own = decode(&qwq("0.11.0rc1", "bf16", json!({ "deployment": { "serving": { "host_costs": { "float_nz_linear_factor": 1.5 } } } })));
    assert!(own.what.contains("linear layers x1.5"), "{}", own.what);
    let v = qwq_json("0.11.0rc1", "bf16", json!({ "deployment": { "serving": { "host_costs": { "float_nz_linear_factor": 3.0 } } } }));
    let e = match Scenario::from_value(v) {
        Err(e) => e,
        Ok(s) => match common::configured(&s, &[]) {
            Err(e) => e,
            Ok(_) => panic!("a factor of 3 outside [1, 2] was accepted"),
        },
    };
    assert!(e.contains("host_costs.float_nz_linear_factor") && e.contains("[1, 2]"), "{e}");
}

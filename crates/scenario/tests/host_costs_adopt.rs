//! A framework fit of the user's own benchmark runs adopted into a scenario
//! (`deployment.serving.host_costs`): it moves the scenario's predictions toward what the runs
//! measured, it is priced wherever the scenario is, it rides the link, and a bad value is
//! refused by name.

use tunelab_scenario::evidence::benchruns::{self, calibrate::calibrate_framework, Format};
use tunelab_scenario::{fidelity, url, Scenario};

fn runs() -> Vec<benchruns::BenchRun> {
    let dir = format!("{}/../../assets/benchruns", env!("CARGO_MANIFEST_DIR"));
    let files: Vec<(String, String)> = ["vllm-bench-serve-sample.json", "sglang-bench-serving-sample.jsonl"].iter().map(|p| (p.to_string(), std::fs::read_to_string(format!("{dir}/{p}")).unwrap())).collect();
    benchruns::read_files(&files, Format::Auto).unwrap()
}

fn launch() -> Scenario {
    let mut v: serde_json::Value = serde_json::from_str(include_str!("../../../assets/scenarios/llama2-7b-910B2-deployment.json")).unwrap();
    v["deployment"]["serving"]["engine"] = serde_json::json!("vllm-ascend");
    Scenario::from_value(v).unwrap()
}

fn median_error(s: &Scenario) -> f64 {
    let set = benchruns::measurement_set(&runs(), s, "samples").unwrap();
    fidelity::evaluate(&set, &Default::default(), None).summary.overall.median_abs_error.unwrap()
}

#[test]
fn an_adopted_fit_moves_the_prediction_toward_the_runs_and_rides_the_link() {
    let base = launch();
    let set = benchruns::measurement_set(&runs(), &base, "samples").unwrap();
    let opts = tunelab_scenario::calibrate::Options { budget: 40, loo_budget: 0, ..Default::default() };
    let fit = calibrate_framework(&set, "d", &opts).unwrap();
    let mut adopted = base.clone();
    let lines = fit.adopt(&mut adopted).unwrap();
    assert!(!lines.is_empty() && lines.iter().all(|l| l.starts_with("deployment.serving.host_costs.")), "{lines:?}");
    assert!(!adopted.deployment.serving.host_costs.is_empty());
    // Priced by the same path: the adopted scenario's rows are closer to what the runs measured.
    let (before, after) = (median_error(&base), median_error(&adopted));
    assert!(after < before, "median |error| {before} -> {after}");
    // Its fitted error is what the fit reported for its rows (the same pricing).
    let reported = fit.calibration.median_abs_error_after.unwrap();
    assert!((after - reported).abs() < 1e-6 * reported, "adopted {after} vs the fit's {reported}");
    // The link carries the values and opens to the same scenario; a scenario without them
    // writes no key (old links unchanged).
    let back = url::decode(&url::encode(&adopted)).unwrap();
    assert_eq!(back.deployment.serving.host_costs, adopted.deployment.serving.host_costs);
    assert_eq!(back, adopted);
    assert!(!serde_json::to_string(&base).unwrap().contains("host_costs"));
    // The report names the values beside the file's.
    let notes = tunelab_scenario::stages::deployment::setup(&adopted).map(|s| s.notes).unwrap_or_default();
    assert!(notes.iter().any(|n| n.contains("deployment.serving.host_costs")), "{notes:?}");
}

#[test]
fn unknown_names_and_values_outside_the_bounds_are_refused_by_name() {
    let with = |k: &str, v: f64| {
        let mut j = serde_json::to_value(launch()).unwrap();
        j["deployment"]["serving"]["host_costs"] = serde_json::json!({ k: v });
        Scenario::from_value(j)
    };
    assert!(with("step_host_us", 1800.0).is_ok());
    let e = with("step_host_usec", 1800.0).unwrap_err();
    assert!(e.contains("deployment.serving.host_costs.step_host_usec") && e.contains("known: "), "{e}");
    let e = with("step_host_us", 99999.0).unwrap_err();
    assert!(e.contains("deployment.serving.host_costs.step_host_us") && e.contains("bound"), "{e}");
}

#[test]
fn a_scenario_host_cost_changes_what_a_configuration_costs() {
    let base = launch();
    let names: Vec<String> = tunelab_scenario::stages::deployment::setup(&base).unwrap().space.params().iter().map(|p| p.name.clone()).collect();
    let c = tunelab_scenario::stages::deployment::setup(&base).unwrap().baseline.clone();
    let plain = tunelab_scenario::stages::deployment::serve(&base, &names, &c).unwrap();
    let mut slow = base.clone();
    slow.deployment.serving.host_costs.insert("step_host_us".into(), 4500.0);
    let slowed = tunelab_scenario::stages::deployment::serve(&slow, &names, &c).unwrap();
    assert!(slowed.tpot_ms.p50 > plain.tpot_ms.p50 + 2.0, "TPOT p50 {} -> {}", plain.tpot_ms.p50, slowed.tpot_ms.p50);
}

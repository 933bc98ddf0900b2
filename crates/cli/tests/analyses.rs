//! `tunelab impact`, `tunelab guards` and `tunelab diagnose` reach the analyses: the numbers are the library's, bad
//! input is a named error with exit status 2.

use std::process::Command;

fn tunelab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tunelab")).args(args).current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).output().expect("runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

const SCENARIO: &str = "assets/scenarios/llama2-7b-910B2-deployment.json";

/// SCENARIO as the library reads it, to compare the CLI's numbers with the library's.
fn scenario() -> tunelab_scenario::Scenario {
    tunelab_scenario::Scenario::from_json(&std::fs::read_to_string(format!("{}/../../{SCENARIO}", env!("CARGO_MANIFEST_DIR"))).unwrap()).unwrap()
}

#[test]
fn impact_prints_every_stage_and_the_composite_of_the_library() {
    let (code, out, err) = tunelab(&["impact", SCENARIO, "--precision", "w8a16", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let s = scenario();
    let change = tunelab_scenario::impact::Change { precision: Some("w8a16".into()), ..Default::default() };
    let lib = tunelab_scenario::impact::analyse(&s, &change, Default::default()).unwrap();
    assert_eq!(v["composite"].as_f64().unwrap().to_bits(), lib.composite.to_bits());
    assert!(lib.composite > 0.0, "W8A16 shrinks the model and speeds decode");
    // Weights are editable; a bad one is named.
    let (code, out, _) = tunelab(&["impact", SCENARIO, "--precision", "w8a16", "--weights", "latency=1,training_memory=0,model_size=0"]);
    assert_eq!(code, 0);
    assert!(out.contains("composite") && out.contains("1 x TPOT"), "{out}");
    let (code, _, err) = tunelab(&["impact", SCENARIO, "--weights", "speed=1", "--tp", "2"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown weight 'speed'"), "{err}");
    let (code, _, err) = tunelab(&["impact", SCENARIO]);
    assert_eq!(code, 2);
    assert!(err.contains("give at least one change"), "{err}");
}

#[test]
fn guards_check_another_chip_protected_layers_and_the_delta() {
    let (code, out, err) = tunelab(&["guards", SCENARIO, "--set", "batch=32,precision=w8a16", "--chip", "910B4", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["compatibility"]["target"], "910B4");
    assert!(v["protected"]["protected_ops"].as_array().unwrap().iter().any(|o| o.as_str().unwrap().contains("lm_head")));
    assert!(v["delta"]["rel_error_after"].as_f64().unwrap() > v["delta"]["rel_error_before"].as_f64().unwrap(), "INT8 weights add expected error");
    let (code, _, err) = tunelab(&["guards", SCENARIO, "--chip", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("nope"), "{err}");
}

#[test]
fn diagnose_prints_the_librarys_diagnosis_where_the_time_goes_and_what_to_change() {
    let (code, out, err) = tunelab(&["diagnose", SCENARIO, "--set", "batch=8", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let s = scenario();
    let run = tunelab_scenario::Run::new(&s).unwrap();
    let names = run.space().names().to_vec();
    let mut config = run.baseline_config().clone();
    config.0[names.iter().position(|n| n == "batch").unwrap()] = tunelab_search::Value::Int(8);
    let lib = tunelab_scenario::diagnosis::diagnose(&s, Some(&config), Default::default()).unwrap();
    assert_eq!(v["goal_value"].as_f64().unwrap().to_bits(), lib.goal_value.unwrap().to_bits());
    assert_eq!(v["config"]["batch"], 8);
    // The text is the library's rendering: goal, where the time goes, hot spots, suggestions.
    let (code, text, err) = tunelab(&["diagnose", SCENARIO, "--set", "batch=8"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(text, lib.to_text());
    for part in ["Goal: ", "Where the time goes", "Root cause", "Hot spots", "Suggestions (improve the goal)"] {
        assert!(text.contains(part), "{part} missing:\n{text}");
    }
    assert!(lib.suggestions.iter().all(|x| text.contains(&lib.suggestion_line(x))), "{text}");
    // Bad input is named, with exit status 2.
    let (code, _, err) = tunelab(&["diagnose", SCENARIO, "--weights", "0.5,x,0.2"]);
    assert_eq!(code, 2);
    assert!(err.contains("'x' is not a number"), "{err}");
    let (code, _, err) = tunelab(&["diagnose", SCENARIO, "--set", "nope=3"]);
    assert_eq!(code, 2);
    assert!(err.contains("nope"), "{err}");
}

#[test]
fn a_kernel_tuner_landscape_opens_its_bundled_cache_for_eval_guards_and_diagnose() {
    let kt = "assets/scenarios/landscape-convolution-mi250x.json";
    let (code, out, err) = tunelab(&["eval", kt, "--ops"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("no operator breakdown"), "{out}");
    let (code, _, err) = tunelab(&["guards", kt]);
    assert_eq!(code, 0, "{err}");
    // Its diagnosis re-evaluates the neighbours from the measured cache; it has no operators.
    let (code, out, err) = tunelab(&["diagnose", kt]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Where the time goes: no operator breakdown") && out.contains("1. "), "{out}");
    // A function landscape has a diagnosis (its neighbours re-evaluated) and no operators.
    let (code, out, err) = tunelab(&["diagnose", "assets/scenarios/landscape-branin.json"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Where the time goes: no operator breakdown") && out.contains("Suggestions"), "{out}");
}

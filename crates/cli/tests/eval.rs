//! `tunelab eval` end to end: it prices a configuration exactly as the tuning run does.

use std::process::Command;

fn tunelab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tunelab")).args(args).current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).output().expect("runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn eval_of_the_runs_best_config_gives_the_runs_best_value_bit_for_bit() {
    let scenario = "assets/scenarios/llama2-7b-910B2-deployment.json";
    let (code, out, err) = tunelab(&["run", scenario, "--json"]);
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let best_config = r["best_config"].as_object().expect("best_config");
    let set: Vec<String> = best_config.iter().map(|(k, v)| format!("{k}={}", v.as_str().map(String::from).unwrap_or_else(|| v.to_string()))).collect();
    let (code, out, err) = tunelab(&["eval", scenario, "--set", &set.join(","), "--json"]);
    assert_eq!(code, 0, "{err}");
    let e: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(e["state"], "ok");
    // The run's best is the primary (first) metric of its best configuration.
    let first_metric = r["metric"].as_str().map(String::from).unwrap_or_default();
    assert_eq!(e["metrics"][&first_metric].to_string(), r["best"].to_string(), "eval {} vs run best {}", e["metrics"], r["best"]);
}

#[test]
fn eval_names_unknown_parameters_and_out_of_space_values() {
    let scenario = "assets/scenarios/llama2-7b-910B2-deployment.json";
    let (code, _, err) = tunelab(&["eval", scenario, "--set", "batchsize=8"]);
    assert_eq!(code, 2);
    assert!(err.lines().any(|l| l.starts_with("error: ")) && err.contains("'batchsize'") && err.contains("precision"), "{err}");
    let (code, _, err) = tunelab(&["eval", scenario, "--set", "precision=int3"]);
    assert_eq!(code, 2);
    assert!(err.contains("'precision'") && err.contains("bf16"), "{err}");
    // Without --set it prices the baseline and prints every metric.
    let (code, out, err) = tunelab(&["eval", scenario]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("tokens_per_s") && out.contains("ttft_ms") && out.contains("memory_gib"), "{out}");
}

#[test]
fn eval_ops_prints_the_explore_detail_of_the_library() {
    let scenario = "assets/scenarios/llama2-7b-910B2-deployment.json";
    let (code, out, err) = tunelab(&["eval", scenario, "--set", "batch=8", "--ops", "--json"]);
    assert_eq!(code, 0, "{err}");
    let e: serde_json::Value = serde_json::from_str(&out).unwrap();
    let s = tunelab_scenario::Scenario::from_json(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/scenarios/llama2-7b-910B2-deployment.json")).unwrap()).unwrap();
    let run = tunelab_scenario::Run::new(&s).unwrap();
    let names = run.space().names().to_vec();
    let mut config = run.baseline_config().clone();
    config.0[names.iter().position(|n| n == "batch").unwrap()] = tunelab_search::Value::Int(8);
    let lib = tunelab_scenario::explore::point_detail(&s, &config).unwrap();
    assert_eq!(e["operators"]["total_ms"].as_f64().unwrap().to_bits(), lib.total_ms.to_bits());
    assert_eq!(e["operators"]["ops"].as_array().unwrap().len(), lib.ops.len());
    // The text lists every operator, largest first, under the step it simulates.
    let (code, text, err) = tunelab(&["eval", scenario, "--set", "batch=8", "--ops"]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains(&format!("operators of {}", lib.simulated)), "{text}");
    let largest = lib.ops.iter().max_by(|a, b| a.time_ms.total_cmp(&b.time_ms)).unwrap();
    let table = &text[text.find("operator ").unwrap()..];
    assert!(table.lines().nth(1).unwrap().starts_with(&largest.name), "{table}");
    assert_eq!(table.lines().count(), 1 + lib.ops.len(), "{table}");
    // Without --ops, no table.
    let (_, plain, _) = tunelab(&["eval", scenario, "--set", "batch=8"]);
    assert!(!plain.contains("operators of"), "{plain}");
}

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

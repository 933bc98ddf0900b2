//! `tunelab run` and `tunelab url` end to end: the binary, its stdout/stderr and exit codes.

use std::process::Command;

fn tunelab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tunelab")).args(args).current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).output().expect("runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

fn temp(name: &str, text: &str) -> String {
    let p = std::env::temp_dir().join(format!("tunelab-cli-test-{}-{name}", std::process::id()));
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn run_json_prints_one_report_with_best_and_progress_on_stderr() {
    let (code, out, err) = tunelab(&["run", "assets/scenarios/llama2-7b-910B2-deployment.json", "--json", "--progress"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("stdout is one JSON document");
    assert!(v["best"].is_number());
    assert!(v["best_config"]["batch"].is_i64());
    assert!(err.lines().any(|l| l.starts_with("Generation 2: best ")), "{err}");
    // The same scenario prints the same best again (deterministic).
    let (_, again, _) = tunelab(&["run", "assets/scenarios/llama2-7b-910B2-deployment.json", "--json"]);
    let w: serde_json::Value = serde_json::from_str(again.trim()).unwrap();
    assert_eq!(v["best"].to_string(), w["best"].to_string());
}

#[test]
fn url_round_trips_and_rejects_garbage() {
    let (code, frag, _) = tunelab(&["url", "assets/scenarios/qwen2.5-7b-910B2-operator.json"]);
    assert_eq!(code, 0);
    assert!(frag.starts_with("v1."));
    let (code, json, err) = tunelab(&["url", "--decode", frag.trim()]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["stage"], "operator");
    let (code, _, err) = tunelab(&["url", "--decode", "v1.!!notbase64"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("error: "), "{err}");
}

#[test]
fn bad_input_exits_2_with_a_message() {
    for (name, text, needle) in [
        ("neg.json", r#"{"workload": {"batch": -2}}"#, "workload.batch"),
        ("zero.json", r#"{"model": {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 0, "num_attention_heads": 32, "intermediate_size": 11008, "vocab_size": 32000}}"#, "layers"),
        ("broken.json", "{\"stage\": ", "not valid JSON"),
    ] {
        let p = temp(name, text);
        let (code, _, err) = tunelab(&["run", &p]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains(needle), "{name}: {err}");
        let _ = std::fs::remove_file(p);
    }
    let (code, _, err) = tunelab(&["run"]);
    assert_eq!(code, 2);
    assert!(err.to_lowercase().contains("usage"), "{err}");
}

//! `tunelab run` on landscape scenarios: a bundled Kernel Tuner cache, a dropped one given with
//! `--cache`, and a toy function; a run's lane 0 finds what `tunelab replay` finds.

use std::process::Command;

fn tunelab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tunelab")).args(args).current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).output().expect("runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

fn temp(name: &str, text: &str) -> String {
    let p = std::env::temp_dir().join(format!("tunelab-landscape-test-{}-{name}", std::process::id()));
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out.trim()).expect("stdout is one JSON document")
}

#[test]
fn run_on_a_bundled_cache_equals_replay_for_the_same_strategy_seed_and_budget() {
    for (strategy, seed) in [("annealing", 2), ("auto", 5)] {
        let scenario = format!(
            r#"{{"version":1,"stage":"landscape","landscape":{{"kernel_tuner":{{"bundled":"pnpoly_RTX_2080_Ti"}}}},"strategy":{{"name":"{strategy}"}},"budget":80,"seed":{seed}}}"#
        );
        let path = temp(&format!("{strategy}.json"), &scenario);
        let (code, out, err) = tunelab(&["run", &path, "--json"]);
        assert_eq!(code, 0, "{err}");
        let run = json(&out);
        let (code, out, err) = tunelab(&["replay", "--cache", "assets/kernel-tuner/pnpoly_RTX_2080_Ti.json.gz", "--strategy", strategy, "--budget", "80", "--seeds", &seed.to_string(), "--json"]);
        assert_eq!(code, 0, "{err}");
        let replay = json(&out);
        assert_eq!(run["best"], replay["best"], "{strategy} seed {seed}");
        assert_eq!(run["strategies"][0]["evaluations"], replay["evaluations"]);
        assert_eq!(run["strategies"][0]["failed"], replay["failed"]);
        assert_eq!(run["landscape"]["optimum"], replay["optimum"]);
        assert_eq!(run["landscape"]["strategies"][0][2], replay["ratio"]);
    }
}

#[test]
fn the_shipped_landscape_scenarios_run() {
    let (code, out, err) = tunelab(&["run", "assets/scenarios/landscape-convolution-mi250x.json"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("true optimum") && out.contains("best / optimum"), "{out}");
    let (code, out, err) = tunelab(&["run", "assets/scenarios/landscape-branin.json", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    assert_eq!(v["stage"], "landscape");
    assert!(v["landscape"]["optimum"].as_f64().unwrap() < 0.45);
}

#[test]
fn a_dropped_cache_needs_cache_and_the_same_file() {
    let digest = tunelab_scenario::stages::landscape::cache_digest(&std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/kernel-tuner/convolution_MI250X.json.gz")).unwrap()).unwrap();
    let scenario = format!(
        r#"{{"stage":"landscape","landscape":{{"kernel_tuner":{{"dropped":{{"name":"conv.json.gz","digest":"{digest}","configs":4362}}}}}},"strategy":{{"name":"random"}},"budget":30}}"#
    );
    let path = temp("dropped.json", &scenario);
    let (code, _, err) = tunelab(&["run", &path]);
    assert_ne!(code, 0);
    assert!(err.contains("--cache") && err.contains("drop 'conv.json.gz' again"), "{err}");
    let (code, out, err) = tunelab(&["run", &path, "--cache", "assets/kernel-tuner/convolution_MI250X.json.gz", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(json(&out)["best"].is_number());
    let (code, _, err) = tunelab(&["run", &path, "--cache", "assets/kernel-tuner/pnpoly_RTX_2080_Ti.json.gz"]);
    assert_ne!(code, 0);
    assert!(err.contains("not the 'conv.json.gz'"), "{err}");
    let (code, _, err) = tunelab(&["run", "assets/scenarios/landscape-branin.json", "--cache", "assets/kernel-tuner/pnpoly_RTX_2080_Ti.json.gz"]);
    assert_ne!(code, 0);
    assert!(err.contains("--cache"), "{err}");
}

//! Kernel Tuner cache replay: the real cache loads with the documented counts, a replay spends
//! its budget as Kernel Tuner's simulation mode does, and every kind of bad input is an error
//! that names the problem.

use tunelab_search::kernel_tuner::KernelTunerCache;
use tunelab_search::strategies::by_name;
use tunelab_search::{Config, Objective, Outcome, Rng, Study, StudyOptions, Value};

const REAL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/kernel-tuner/convolution_RTX_2080_Ti.json");

fn header() -> &'static str {
    "{\n\"device_name\": \"\",\n\"kernel_name\": \"k\",\n\"problem_size\": [8],\n\"tune_params_keys\": [\"bx\", \"t\"],\n\"tune_params\": {\"bx\": [32, 16, 64], \"t\": [1, 2]},\n\"cache\": {"
}

fn entry(bx: i64, t: i64, time: &str) -> String {
    format!("\n\"{bx},{t}\": {{\"bx\": {bx}, \"t\": {t}, \"time\": {time}, \"times\": [1.0]}},")
}

/// A small open (unterminated) cache: what an interrupted Kernel Tuner run leaves.
fn open_cache() -> String {
    let mut s = header().to_string();
    s += &entry(16, 1, "3.0");
    s += &entry(32, 1, "2.0");
    s += &entry(64, 2, "\"RuntimeFailedConfig\"");
    s += &entry(32, 2, "1.5");
    s
}

fn closed(open: &str) -> String {
    format!("{}}}\n}}\n", open.trim_end().trim_end_matches(','))
}

fn err(text: &str) -> String {
    KernelTunerCache::parse(text).expect_err("expected an error")
}

#[test]
fn the_real_cache_loads_with_the_documented_counts() {
    let text = std::fs::read_to_string(REAL).unwrap();
    let c = KernelTunerCache::parse(&text).unwrap();
    assert_eq!(c.len(), 6768);
    assert_eq!(c.failed(), 1512);
    assert_eq!(c.space.members().unwrap().len(), 6768);
    assert_eq!(c.objective, "time");
    assert!(c.minimize);
    let opt = c.optimum().unwrap();
    assert!((opt - 0.9002624034881592).abs() < 1e-12, "optimum {opt}");
    // The first record of the file: 2,32,15,15,0,1,1,0 -> 15.936... ms.
    let cfg = Config([2, 32, 15, 15, 0, 1, 1, 0].iter().map(|v| Value::Int(*v)).collect());
    let v = c.lookup(&cfg).unwrap().unwrap();
    assert!((v - 15.93639669418335).abs() < 1e-9);
}

#[test]
fn a_replay_spends_the_budget_and_counts_failures() {
    let text = std::fs::read_to_string(REAL).unwrap();
    let c = KernelTunerCache::parse(&text).unwrap();
    let mut s = by_name("random", &serde_json::json!({})).unwrap();
    let mut study = Study::new(c.space.clone(), vec![c.metric()], StudyOptions::budget(120)).unwrap();
    let mut obj = c.objective();
    study.run(s.as_mut(), &mut obj, &mut Rng::seed_from_u64(4));
    assert_eq!(study.evaluations(), 120);
    assert!(study.failed() > 0, "about a fifth of the cache failed; 120 random draws must hit some");
    assert!(study.best_value().unwrap() >= c.optimum().unwrap());
}

#[test]
fn open_and_closed_forms_load_the_same() {
    let open = open_cache();
    let a = KernelTunerCache::parse(&open).unwrap();
    let b = KernelTunerCache::parse(&closed(&open)).unwrap();
    for c in [&a, &b] {
        assert_eq!(c.len(), 4);
        assert_eq!(c.failed(), 1);
        assert_eq!(c.optimum(), Some(1.5));
    }
    assert_eq!(a.space.members(), b.space.members());
    // Trailing whitespace after the last comma is what a killed process often leaves.
    assert_eq!(KernelTunerCache::parse(&format!("{open}\n  \n")).unwrap().len(), 4);
    // A failed entry is a failed evaluation; an uncached point is not a point of the space.
    let mut obj = a.objective();
    let failed = Config(vec![Value::Int(64), Value::Int(2)]);
    assert!(matches!(obj.evaluate(&failed), Outcome::Failed(_)));
    assert!(!a.space.contains(&Config(vec![Value::Int(16), Value::Int(2)])));
}

#[test]
fn optional_fields_take_their_defaults() {
    // An objective list, a schema version, bool and string parameter values.
    let text = r#"{"schema_version": "1.0.0", "objective": ["time"], "tune_params_keys": ["ro", "mode"],
      "tune_params": {"ro": [false, true], "mode": ["a", "b"]},
      "cache": {"False,a": {"ro": false, "mode": "a", "time": 2.0}, "True,b": {"ro": true, "mode": "b", "time": 1.0}}}"#;
    let c = KernelTunerCache::parse(text).unwrap();
    assert_eq!(c.optimum(), Some(1.0));
    assert!(c.kernel_name.is_empty());
    let gflops = text.replace(r#"["time"]"#, r#""GFLOP/s""#).replace("\"time\"", "\"GFLOP/s\"");
    let g = KernelTunerCache::parse(&gflops).unwrap();
    assert!(!g.minimize, "throughput objectives are maximised");
    assert_eq!(g.optimum(), Some(2.0));
    // Kernel Tuner's hyperparameter tuner writes a "score" that may be negative and goes up.
    let score = text.replace(r#"["time"]"#, r#""score""#).replace("\"time\": 2.0", "\"score\": -0.5").replace("\"time\": 1.0", "\"score\": 0.25");
    let s = KernelTunerCache::parse(&score).unwrap();
    assert!(!s.minimize);
    assert_eq!(s.optimum(), Some(0.25));
}

#[test]
fn truncated_or_malformed_json_is_an_error() {
    let full = closed(&open_cache());
    let cut = &full[..full.len() / 2];
    let e = err(cut);
    assert!(e.contains("malformed or truncated JSON"), "{e}");
    assert!(err("").contains("empty"));
    assert!(err("[1, 2]").contains("not a JSON object"));
    assert!(err("{\"tune_params_keys\": [\"a\"], ").contains("JSON"));
}

#[test]
fn missing_keys_are_named() {
    let full = closed(&open_cache());
    assert!(err(&full.replace("\"tune_params_keys\"", "\"keys\"")).contains("'tune_params_keys'"));
    assert!(err(&full.replace("\"tune_params\":", "\"params\":")).contains("'tune_params'"));
    let no_t = full.replace("\"t\": [1, 2]", "\"u\": [1, 2]");
    assert!(err(&no_t).contains("parameter 't'"));
    let no_time = closed(&(header().to_string() + "\n\"16,1\": {\"bx\": 16, \"t\": 1, \"times\": [1.0]},"));
    let e = err(&no_time);
    assert!(e.contains("\"16,1\"") && e.contains("'time'"), "{e}");
    let no_param = closed(&(header().to_string() + "\n\"16,1\": {\"bx\": 16, \"time\": 1.0},"));
    assert!(err(&no_param).contains("no value for parameter 't'"));
    let no_cache = "{\"tune_params_keys\": [\"a\"], \"tune_params\": {\"a\": [1]}}";
    assert!(err(no_cache).contains("'cache'"));
}

#[test]
fn wrong_types_are_named() {
    let full = closed(&open_cache());
    assert!(err(&full.replace("\"bx\": 16,", "\"bx\": [16],")).contains("parameter 'bx' is an array"));
    assert!(err(&full.replace("\"time\": 3.0", "\"time\": [3.0]")).contains("'time' is an array"));
    assert!(err(&full.replace("\"time\": 3.0", "\"time\": null")).contains("'time' is null"));
    assert!(err(&full.replace("[\"bx\", \"t\"]", "\"bx\"")).contains("not an array"));
    assert!(err(&full.replace("\"bx\": 16,", "\"bx\": 17,")).contains("bx=17 is not in the value list"));
    assert!(err(&full.replace("\"t\": [1, 2]", "\"t\": []")).contains("'tune_params'.'t' is empty"));
}

#[test]
fn nan_negative_and_empty_are_errors() {
    let full = closed(&open_cache());
    let e = err(&full.replace("\"time\": 3.0", "\"time\": NaN"));
    assert!(e.contains("NaN"), "{e}");
    assert!(err(&full.replace("\"time\": 3.0", "\"time\": Infinity")).contains("Infinity"));
    let e = err(&full.replace("\"time\": 3.0", "\"time\": -3.0"));
    assert!(e.contains("negative") && e.contains("\"16,1\""), "{e}");
    let empty = format!("{}}}\n}}", header());
    assert!(err(&empty).contains("cache is empty"));
    let open_empty = header().to_string();
    assert!(err(&open_empty).contains("cache is empty"));
    assert!(err(&full.replace("[\"bx\", \"t\"]", "[]")).contains("no parameters"));
}

fn asset(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/../../assets/kernel-tuner/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[test]
fn gzipped_caches_load_as_benchmark_hub_ships_them() {
    use tunelab_search::kernel_tuner::load_bytes;
    for (name, n, failed) in [
        ("convolution_MI250X.json.gz", 4362, None),
        ("gemm_RTX_3060_laptop.json.gz", 10000, None),
        ("pnpoly_RTX_2080_Ti.json.gz", 4092, Some(358)),
    ] {
        let c = load_bytes(&asset(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(c.len(), n, "{name}");
        if let Some(f) = failed {
            assert_eq!(c.failed(), f, "{name}");
        }
        assert!(c.optimum().is_some());
    }
    // The plain .json goes through the same entry point and gives the same cache as `parse`.
    let plain = load_bytes(&asset("convolution_RTX_2080_Ti.json")).unwrap();
    assert_eq!((plain.len(), plain.failed()), (6768, 1512));
}

#[test]
fn damaged_gzip_and_binary_files_are_named_errors() {
    use tunelab_search::kernel_tuner::load_bytes;
    let gz = asset("pnpoly_RTX_2080_Ti.json.gz");
    let e = load_bytes(&gz[..gz.len() / 2]).unwrap_err();
    assert!(e.contains("gzip") && e.contains("truncated"), "{e}");
    let e = load_bytes(&[0xff, 0xfe, 0x00, 0x41]).unwrap_err();
    assert!(e.contains("not UTF-8"), "{e}");
    // A byte-order mark in front of the JSON is tolerated.
    let mut bom = b"\xef\xbb\xbf".to_vec();
    bom.extend(closed(&open_cache()).bytes());
    assert_eq!(load_bytes(&bom).unwrap().len(), 4);
}

/// Issue 13 #6: `json.dump(..., sort_keys=True)` puts "cache" first, so the file does not end
/// with the cache object; it is complete and must load (it was refused as "unfinished").
#[test]
fn a_cache_written_with_sorted_keys_loads() {
    let text = r#"{"cache": {"16,1": {"bx": 16, "t": 1, "time": 3.0}, "32,2": {"bx": 32, "t": 2, "time": 1.5}},
 "device_name": "", "kernel_name": "k", "objective": "time", "problem_size": [8],
 "tune_params": {"bx": [16, 32], "t": [1, 2]},
 "tune_params_keys": ["bx", "t"]}"#;
    let c = KernelTunerCache::parse(text).unwrap();
    assert_eq!((c.len(), c.optimum()), (2, Some(1.5)));
    // Pretty-printed as Python's json.dump(indent=1, sort_keys=True) writes it.
    let pretty = serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(text).unwrap()).unwrap();
    assert!(pretty.trim_end().ends_with("]\n}"));
    assert_eq!(KernelTunerCache::parse(&pretty).unwrap().len(), 2);
    // Still: an unterminated file whose records run to the end is closed and loads.
    assert_eq!(KernelTunerCache::parse(&open_cache()).unwrap().len(), 4);
}

/// The real cache rewritten as benchmark_hub's T4 twin (`*_T4.json`): one result per record,
/// the configuration as an object, the time as a named measurement, failures as their error
/// string with an invalidity.
fn as_t4(text: &str) -> serde_json::Value {
    let doc: serde_json::Value = serde_json::from_str(text).unwrap();
    let keys: Vec<String> = doc["tune_params_keys"].as_array().unwrap().iter().map(|k| k.as_str().unwrap().to_string()).collect();
    let results: Vec<serde_json::Value> = doc["cache"]
        .as_object()
        .unwrap()
        .values()
        .map(|rec| {
            let configuration: serde_json::Map<String, serde_json::Value> = keys.iter().map(|k| (k.clone(), rec[k].clone())).collect();
            let failed = rec["time"].is_string();
            serde_json::json!({
                "timestamp": "2023-12-21 10:44:42.236642+00:00",
                "configuration": configuration,
                "times": {"compilation": 1.0, "framework": 0.0, "search_algorithm": 0, "validation": 0, "runtimes": [1.0]},
                "invalidity": if failed { "runtime" } else { "correct" },
                "correctness": 1,
                "measurements": [{"name": "time", "value": rec["time"].clone(), "unit": "ms"}],
                "objectives": ["time"]
            })
        })
        .collect();
    serde_json::json!({"schema_version": "1.0.0", "metadata": {"timeunit": "miliseconds"}, "results": results})
}

#[test]
fn a_t4_results_file_loads_as_the_same_cache() {
    let text = std::fs::read_to_string(REAL).unwrap();
    let classic = KernelTunerCache::parse(&text).unwrap();
    let t4 = KernelTunerCache::parse(&as_t4(&text).to_string()).unwrap();
    assert_eq!((t4.len(), t4.failed(), t4.objective.as_str()), (6768, 1512, "time"));
    assert_eq!(t4.optimum(), classic.optimum());
    // Same measurement for every configuration, found by parameter name (T4 orders them by name).
    let names: Vec<&str> = t4.space.params().iter().map(|p| p.name.as_str()).collect();
    let classic_names: Vec<&str> = classic.space.params().iter().map(|p| p.name.as_str()).collect();
    for c in classic.space.members().unwrap().iter().take(500) {
        let reordered = Config(names.iter().map(|n| c.0[classic_names.iter().position(|m| m == n).unwrap()].clone()).collect());
        assert_eq!(t4.lookup(&reordered), classic.lookup(c), "{c:?}");
    }
    // And it replays like any cache.
    let r = tunelab_search::kernel_tuner::replay(&t4, "auto", &serde_json::json!({}), 40, 1, false).unwrap();
    assert_eq!(r.evaluations, 40);
    // Gzipped, through the entry point the CLI and the browser use.
    let gz = gzipped(as_t4(&text).to_string().as_bytes());
    assert_eq!(tunelab_search::kernel_tuner::load_bytes(&gz).unwrap().len(), 6768);
}

#[test]
fn bad_t4_files_name_the_result() {
    let mut doc = as_t4(&closed(&open_cache()));
    let e = err(&serde_json::json!({"schema_version": "1.0.0", "results": []}).to_string());
    assert!(e.contains("no results"), "{e}");
    let e = err(&serde_json::json!({"results": {"a": 1}}).to_string());
    assert!(e.contains("'results' is not an array"), "{e}");
    doc["results"][2]["configuration"] = serde_json::json!({"bx": 16});
    let e = err(&doc.to_string());
    assert!(e.contains("T4 result 2") && e.contains("differ"), "{e}");
    doc["results"][2]["configuration"] = serde_json::json!(7);
    let e = err(&doc.to_string());
    assert!(e.contains("T4 result 2") && e.contains("no 'configuration' object"), "{e}");
    // A result with no measurement of the objective is a failed configuration, not an error.
    let mut doc = as_t4(&closed(&open_cache()));
    doc["results"][0]["measurements"] = serde_json::json!([]);
    doc["results"][0]["invalidity"] = serde_json::json!("compile");
    let c = KernelTunerCache::parse(&doc.to_string()).unwrap();
    assert_eq!((c.len(), c.failed()), (4, 2));
}

/// Kernel Tuner's reader marks a record failed when any field is an error name; a failed record
/// of a throughput objective may have only `time` set to the error, and no throughput at all.
#[test]
fn a_failed_record_without_the_objective_is_failed_not_an_error() {
    let text = r#"{"tune_params_keys": ["bx"], "tune_params": {"bx": [16, 32, 64]}, "objective": "GFLOP/s",
 "cache": {"16": {"bx": 16, "time": 2.0, "GFLOP/s": 10.0}, "32": {"bx": 32, "time": "CompilationFailedConfig"},
 "64": {"bx": 64, "time": 1.0, "GFLOP/s": 20.0}}}"#;
    let c = KernelTunerCache::parse(text).unwrap();
    assert_eq!((c.len(), c.failed(), c.optimum()), (3, 1, Some(20.0)));
    assert!(!c.minimize);
    // Without an error name anywhere, a missing objective is still named.
    let e = err(&text.replace("\"CompilationFailedConfig\"", "3.0"));
    assert!(e.contains("has no 'GFLOP/s'"), "{e}");
}

/// A gzip member holding `data` (header, raw DEFLATE, CRC-32 and length): a valid `.gz` file.
fn gzipped(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    out.extend(miniz_oxide::deflate::compress_to_vec(data, 6));
    out.extend(tunelab_search::gzip::crc32(data).to_le_bytes());
    out.extend((data.len() as u32).to_le_bytes());
    out
}

#[test]
fn a_t4_file_that_repeats_a_configuration_names_the_result() {
    let mut doc = as_t4(&closed(&open_cache()));
    doc["results"][3]["configuration"] = doc["results"][1]["configuration"].clone();
    let e = err(&doc.to_string());
    assert!(e.contains("T4 result") && e.contains("repeats a configuration"), "{e}");
}

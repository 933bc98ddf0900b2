//! Issue 44, parts 2 to 4: measurement files and profiler CSVs as they come from the field.
//! Misspelled keys are reported; a row's framework and its scenario's engine are one fact;
//! every reader is bounded and names the limit it refuses with; msprof CSVs with byte-order
//! marks, UTF-16, GBK, quotes, two data types, huge shapes and denormal durations are read
//! correctly or refused with a message; a row's own values next to variants are compared.

use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use tunelab_scenario::calibrate::{encoding, msprof};
use tunelab_scenario::fidelity::{evaluate, load_any, rows, MeasurementSet};

fn op_row(id: &str, extra: Json) -> Json {
    let mut r = json!({
        "id": id, "category": "op", "chip": "910B2", "stage": "operator", "source": "test",
        "model": {"format": "tunelab-graph", "name": "mm", "family": "custom", "dtype": "fp16",
                  "ops": [{"name": "mm", "repeat": 1, "op": {"op": "matmul", "batch": 1, "m": 1024, "n": 1024, "k": 1024, "dtype": "fp16"}}]},
        "values": [{"metric": "t", "value": 100.0, "unit": "us", "predict": "model_time_ms"}]
    });
    tunelab_scenario::fidelity::merge(&mut r, &extra);
    r
}

fn file(rows: Vec<Json>) -> String {
    json!({"schema": "tunelab-measurements/1", "name": "t", "rows": rows}).to_string()
}

#[test]
fn misspelled_measurement_keys_are_reported() {
    let mut r = op_row("a", json!({}));
    r.as_object_mut().unwrap().insert("scenaro".into(), json!({"workload": {"batch": 2}}));
    r["values"][0].as_object_mut().unwrap().insert("perchip".into(), json!(true));
    r["values"][0].as_object_mut().unwrap().insert("predcit".into(), json!("tpot_ms"));
    let (_, rep) = MeasurementSet::from_json_reporting(&file(vec![r])).unwrap();
    let lines = rep.lines();
    for want in [
        "`rows[0].scenaro`: unknown key; did you mean `scenario`?",
        "`rows[0].values[0].perchip`: unknown key; did you mean `per_chip`?",
        "`rows[0].values[0].predcit`: unknown key; did you mean `predict`?",
    ] {
        assert!(lines.iter().any(|l| l == want), "{want} not in {lines:?}");
    }
    // Inside a row's partial scenario, as the scenario reads it.
    let r = op_row("b", json!({"stage": "deployment", "scenario": {"deployment": {"serving": {"graph_mod": "full"}}}}));
    let (_, rep) = MeasurementSet::from_json_reporting(&file(vec![r])).unwrap();
    assert_eq!(rep.lines(), vec!["`rows[0].scenario.deployment.serving.graph_mod`: unknown key; did you mean `graph_mode`?"]);
    // A byte-order mark is accepted.
    assert!(MeasurementSet::from_json(&format!("\u{feff}{}", file(vec![op_row("c", json!({}))]))).is_ok());
}

#[test]
fn a_rows_framework_prices_it_or_the_row_is_refused() {
    let train = |fw: Option<&str>, scen: Json| {
        let mut r = json!({"id": "t", "category": "training", "chip": "910B2", "stage": "training", "model": "llama-2-7b", "scenario": scen,
            "values": [{"metric": "tps", "value": 1000.0, "unit": "tokens/s", "predict": "tokens_per_s"}]});
        if let Some(f) = fw {
            r["framework"] = json!(f);
        }
        MeasurementSet::from_json(&file(vec![r])).unwrap().rows.remove(0)
    };
    let r = train(Some("deepspeed"), Json::Null);
    assert_eq!(r.scenario["training"]["framework"], "deepspeed", "priced by the framework that ran it");
    let r = train(None, json!({"training": {"framework": "deepspeed"}}));
    assert_eq!(r.framework.as_deref(), Some("deepspeed"), "grouped by the framework that priced it");
    let r = train(Some("deepspeed"), json!({"training": {"framework": "megatron"}}));
    let why = r.cannot_express.expect("refused");
    assert!(why.contains("deepspeed") && why.contains("megatron"), "{why}");
    // Serving: the engine.
    let mut s = op_row("s", json!({"category": "serving", "stage": "deployment", "model": "llama-2-7b", "framework": "mindie", "scenario": {"deployment": {"serving": {"engine": "vllm-ascend"}}}}));
    s["values"] = json!([{"metric": "tpot", "value": 30.0, "unit": "ms", "predict": "tpot_ms"}]);
    let set = MeasurementSet::from_json(&file(vec![s])).unwrap();
    let rep = evaluate(&set, &BTreeMap::new(), None);
    assert!(rep.rows.is_empty());
    assert!(rep.unexpressed[0].reason.contains("'mindie'") && rep.unexpressed[0].reason.contains("'vllm-ascend'"), "{:?}", rep.unexpressed);
}

#[test]
fn a_rows_own_values_next_to_variants_are_compared() {
    let r = op_row("v", json!({"variants": [{"suffix": "x", "space": {}, "values": [{"metric": "t2", "value": 120.0, "unit": "us", "predict": "model_time_ms"}]}]}));
    let set = MeasurementSet::from_json(&file(vec![r])).unwrap();
    let rep = evaluate(&set, &BTreeMap::new(), None);
    let cases: Vec<&str> = rep.rows.iter().map(|c| c.case.as_str()).collect();
    assert_eq!(cases, vec!["v", "v/x"], "{:?}", rep.unexpressed);
}

#[test]
fn measurement_limits_are_named() {
    let too_many: Vec<Json> = (0..=rows::MAX_VALUES_PER_ROW).map(|i| json!({"metric": format!("m{i}"), "value": 1.0, "unit": "us"})).collect();
    let e = MeasurementSet::from_json(&file(vec![op_row("a", json!({"values": too_many}))])).unwrap_err();
    assert!(e.contains("MAX_VALUES_PER_ROW"), "{e}");
    let deep = format!("{{\"schema\": \"tunelab-measurements/1\", \"rows\": [{{\"id\": \"x\", \"model\": {}1{}}}]}}", "[".repeat(40), "]".repeat(40));
    let e = MeasurementSet::from_json(&deep).unwrap_err();
    assert!(e.contains("MAX_NESTING"), "{e}");
    let rows_text = format!("{{\"schema\": \"tunelab-measurements/1\", \"rows\": [{}]}}", vec!["{}"; rows::MAX_ROWS + 1].join(","));
    let e = MeasurementSet::from_json(&rows_text).unwrap_err();
    assert!(e.contains("MAX_ROWS"), "{e}");
    let e = MeasurementSet::from_json(&" ".repeat(rows::MAX_MEASUREMENT_BYTES + 1)).unwrap_err();
    assert!(e.contains("MAX_MEASUREMENT_BYTES"), "{e}");
    // A 300 KB string where a number belongs is not echoed whole.
    let mut r = op_row("s", json!({}));
    r["weight"] = json!("w".repeat(300_000));
    let e = MeasurementSet::from_json(&file(vec![r])).unwrap_err();
    assert!(e.len() < 1000, "{} characters", e.len());
    // Numbers print readably.
    let mut r = op_row("w", json!({}));
    r["weight"] = json!(1e300);
    let e = MeasurementSet::from_json(&file(vec![r])).unwrap_err();
    assert!(e.contains("1e300") && e.len() < 200, "{e}");
}

const HEAD: &str = "Op Name,OP Type,Task Duration(us),Input Shapes,Input Data Types,Output Shapes\n";

#[test]
fn msprof_files_from_the_field() {
    let body = "a,MatMulV2,10.5,\"64,64;64,64\",FLOAT16;FLOAT16,\"64,64\"\n";
    // A UTF-8 byte-order mark before `OP Type`.
    let (set, _) = load_any(&format!("\u{feff}{HEAD}{body}"), "bom.csv", "910B2").unwrap();
    assert_eq!(set.rows.len(), 1);
    // UTF-16 LE and BE with a mark, decoded.
    let text = format!("{HEAD}{body}");
    for bytes in [
        [0xFF, 0xFE].into_iter().chain(text.encode_utf16().flat_map(|w| w.to_le_bytes())).collect::<Vec<u8>>(),
        [0xFE, 0xFF].into_iter().chain(text.encode_utf16().flat_map(|w| w.to_be_bytes())).collect::<Vec<u8>>(),
    ] {
        let t = encoding::decode(&bytes, "op.csv").unwrap();
        assert_eq!(load_any(&t, "op.csv", "910B2").unwrap().0.rows.len(), 1);
    }
    // GBK: named, with the command that converts it.
    let mut gbk = text.clone().into_bytes();
    gbk.extend_from_slice(b"\xCB\xE3\xD7\xD3,MatMulV2,1,\"1,1;1,1\",FLOAT16;FLOAT16,\n");
    let e = encoding::decode(&gbk, "op.csv").unwrap_err();
    assert!(e.contains("GBK") && e.contains("iconv -f GBK -t UTF-8"), "{e}");
}

#[test]
fn msprof_never_loses_or_corrupts_silently() {
    // An unterminated quote is an error naming its line.
    let e = load_any(&format!("{HEAD}a,MatMulV2,10,\"64,64;64,64,FLOAT16;FLOAT16,\nb,Add,1,\"8\",FLOAT16,\n"), "q.csv", "910B2").unwrap_err();
    assert!(e.contains("line 2") && e.contains("quote"), "{e}");
    // One shape in two data types: two rows, two ids.
    let two = format!("{HEAD}a,Add,10,\"64,64\",FLOAT16,\nb,Add,11,\"64,64\",BF16,\n");
    let (set, _) = load_any(&two, "d.csv", "910B2").unwrap();
    let ids: Vec<&str> = set.rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1], "{ids:?}");
    // Batch dimensions of 2^32 x 2^32 overflow: refused, never wrapped to batch 1.
    let big = format!("{HEAD}a,BatchMatMul,10,\"4294967296,4294967296,64,64;4294967296,4294967296,64,64\",FLOAT16;FLOAT16,\n");
    let (set, skipped) = load_any(&big, "o.csv", "910B2").unwrap();
    assert!(set.rows.is_empty());
    assert!(skipped.iter().any(|(_, why)| why.contains("overflows") || why.contains("elements")), "{skipped:?}");
    // A denormal (or zero, negative, infinite) duration is not a measurement.
    let den = format!("{HEAD}a,Add,1e-310,\"64\",FLOAT16,\nb,Add,inf,\"64\",FLOAT16,\nc,Add,-1,\"64\",FLOAT16,\n");
    let (set, skipped) = load_any(&den, "t.csv", "910B2").unwrap();
    assert!(set.rows.is_empty());
    assert_eq!(skipped.len(), 3, "{skipped:?}");
}

#[test]
fn msprof_limits_are_named() {
    let mut t = String::from(HEAD);
    for i in 0..=msprof::MAX_DISTINCT_OPS {
        t += &format!("a,Add,1,\"{}\",FLOAT16,\n", i + 1);
    }
    let e = load_any(&t, "many.csv", "910B2").unwrap_err();
    assert!(e.contains("MAX_DISTINCT_OPS"), "{e}");
    let wide = format!("{HEAD}{}\n", vec!["x"; msprof::MAX_FIELDS + 1].join(","));
    let e = load_any(&wide, "wide.csv", "910B2").unwrap_err();
    assert!(e.contains("MAX_FIELDS"), "{e}");
}

//! `tunelab bench --inputs`: time and peak memory of the largest inputs the readers accept
//! (issue 44): an msprof op summary at the launch and distinct-operator limits, a measurement
//! file at the row and value limits, and the summary of one row with the most values a row may
//! have. Peak memory is the process's peak resident set (VmHWM), reset before each case
//! (Linux `/proc/self/clear_refs`; elsewhere "n/a"). Figures are printed, never asserted.

use serde_json::{json, Value};
use std::time::Instant;
use tunelab_scenario::calibrate::msprof;
use tunelab_scenario::fidelity::{self, rows};

fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident set since the last reset, MiB.
fn peak_mib() -> Value {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)).and_then(|k| k.parse::<f64>().ok()))
        .map_or(json!("n/a"), |kb| json!((kb / 1024.0).round()))
}

/// The largest op summary accepted: `MAX_DISTINCT_OPS` distinct operators over as many launches
/// as fit in `MAX_BYTES`, at most `MAX_LAUNCHES`.
pub fn largest_op_summary() -> String {
    let mut t = String::from("Op Name,OP Type,Task Duration(us),Input Shapes,Input Data Types,Output Shapes\n");
    let mut i = 0usize;
    while i < msprof::MAX_LAUNCHES {
        let line = format!("op{i},Add,{}.{},\"{},4096\",FLOAT16,\"{},4096\"\n", 10 + i % 97, i % 10, 1 + i % msprof::MAX_DISTINCT_OPS, 1 + i % msprof::MAX_DISTINCT_OPS);
        if t.len() + line.len() > msprof::MAX_BYTES {
            break;
        }
        t += &line;
        i += 1;
    }
    t
}

/// The largest measurement file accepted by rows and values: `MAX_ROWS` operator rows sharing
/// `MAX_VALUES` values, under `MAX_MEASUREMENT_BYTES`.
pub fn largest_measurement_file() -> String {
    let per_row = rows::MAX_VALUES / rows::MAX_ROWS;
    let rows: Vec<Value> = (0..rows::MAX_ROWS)
        .map(|i| {
            json!({"id": format!("r{i}"), "category": "op", "chip": "910B2", "stage": "operator", "source": format!("s{}", i % 50),
                "model": {"format": "tunelab-graph", "name": "add", "family": "custom", "dtype": "fp16", "ops": [{"name": "add", "repeat": 1, "op": {"op": "vector", "kind": "elementwise", "rows": 1 + i, "row_len": 4096, "dtype": "fp16"}}]},
                "values": (0..per_row).map(|k| json!({"metric": format!("t{k}"), "value": 10.0 + k as f64, "unit": "us", "predict": "model_time_ms"})).collect::<Vec<_>>()})
        })
        .collect();
    json!({"schema": fidelity::SCHEMA, "name": "largest", "rows": rows}).to_string()
}

/// The calibrate case: an op summary of 200 distinct operators, one launch each (about
/// 7 KB): MatMuls of 50 shapes, elementwise, activation and norm vectors of 50 shapes each.
pub fn op_summary_200() -> String {
    let mut t = String::from("OP Type,Task Duration(us),Input Shapes,Input Data Types\n");
    for i in 0..50usize {
        let (m, k, n) = (64 * (1 + i % 10), 512 * (1 + i / 10), 1024);
        t += &format!("MatMulV2,{:.1},\"{m},{k};{k},{n}\",FLOAT16;FLOAT16\n", 8.0 + (m * k * n) as f64 / 1.5e8);
        let rows = 16 * (1 + i);
        t += &format!("Add,{:.1},\"{rows},4096;{rows},4096\",FLOAT16;FLOAT16\n", 3.0 + rows as f64 * 0.02);
        t += &format!("FastGelu,{:.1},\"{rows},11008\",FLOAT16\n", 4.0 + rows as f64 * 0.05);
        t += &format!("RmsNorm,{:.1},\"{rows},4096;4096\",FLOAT16;FLOAT16\n", 5.0 + rows as f64 * 0.03);
    }
    t
}

#[allow(dead_code)]
pub fn figures() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let csv = largest_op_summary();
    out.push(("inputs_msprof_csv_mib".to_string(), json!((csv.len() as f64 / 1048576.0 * 10.0).round() / 10.0)));
    reset_peak();
    let t0 = Instant::now();
    let read = fidelity::load_any(&csv, "largest.csv", "910B2");
    out.push(("inputs_msprof_read_s".to_string(), json!(t0.elapsed().as_secs_f64())));
    out.push(("inputs_msprof_peak_mib".to_string(), peak_mib()));
    out.push(("inputs_msprof_rows".to_string(), json!(read.as_ref().map(|r| r.0.rows.len()).unwrap_or(0))));
    drop((csv, read));
    let text = largest_measurement_file();
    out.push(("inputs_measurements_mib".to_string(), json!((text.len() as f64 / 1048576.0 * 10.0).round() / 10.0)));
    reset_peak();
    let t0 = Instant::now();
    let set = fidelity::MeasurementSet::from_json_reporting(&text);
    out.push(("inputs_measurements_read_s".to_string(), json!(t0.elapsed().as_secs_f64())));
    out.push(("inputs_measurements_peak_mib".to_string(), peak_mib()));
    out.push(("inputs_measurements_values".to_string(), json!(set.as_ref().map(|s| s.0.rows.iter().map(|r| r.values.len()).sum::<usize>()).unwrap_or(0))));
    if let Err(e) = &set {
        out.push(("inputs_measurements_error".to_string(), json!(e)));
    }
    drop((text, set));
    // The summary of the most values a file may have (their predictions are synthetic: the
    // summary's cost, not the stages', is measured), all in one group.
    let compared: Vec<fidelity::Compared> = (0..rows::MAX_VALUES)
        .map(|i| fidelity::Compared {
            id: format!("r{}", i / rows::MAX_VALUES_PER_ROW), case: format!("r{}", i / rows::MAX_VALUES_PER_ROW), category: "op".into(), chip: "910B2".into(),
            metric: format!("t{}", i % 7), unit: "us".into(), measured: 10.0 + i as f64, predicted: 12.0 + (i % 1013) as f64, error: 0.1, predicted_by: String::new(),
            weight: 1.0, group: "g".into(), source: String::new(), layer: "kernel:aclnn".into(), framework: String::new(), launch: String::new(), release: String::new(), family: String::new(), approximations: Vec::new(),
        })
        .collect();
    reset_peak();
    let t0 = Instant::now();
    let s = fidelity::summarise(&compared, 0, rows::MAX_ROWS);
    out.push(("inputs_summary_100000_values_s".to_string(), json!(t0.elapsed().as_secs_f64())));
    out.push(("inputs_summary_ranked_pairs".to_string(), json!(s.overall.ranked_pairs)));
    out.extend(calibrate_200());
    out.extend(kernel_tuner_largest());
    out
}

/// The largest Kernel Tuner cache accepted: `MAX_CONFIGS` configurations of four 27-level
/// parameters, each record padded with a list of repeated timings (as Kernel Tuner writes
/// `times`) so the file reaches `MAX_CACHE_BYTES` of JSON.
pub fn largest_kernel_tuner_cache() -> String {
    use tunelab_search::kernel_tuner::{MAX_CACHE_BYTES, MAX_CONFIGS};
    let levels: Vec<String> = (0..27).map(|i| (i * 8).to_string()).collect();
    let list = format!("[{}]", levels.join(","));
    let mut t = format!("{{\"kernel_name\": \"largest\", \"device_name\": \"bench\", \"objective\": \"time\", \"tune_params_keys\": [\"a\", \"b\", \"c\", \"d\"], \"tune_params\": {{\"a\": {list}, \"b\": {list}, \"c\": {list}, \"d\": {list}}}, \"cache\": {{");
    let tail = "}}\n";
    let configs = MAX_CONFIGS.min(27usize.pow(4));
    // The padding that brings the records to the byte limit: "times": [t, t, ...].
    let per = MAX_CACHE_BYTES.saturating_sub(400) / configs;
    let mut n = 0usize;
    while n < configs {
        let (a, b, c, d) = (n % 27 * 8, n / 27 % 27 * 8, n / 729 % 27 * 8, n / 19683 % 27 * 8);
        let mut e = format!("{}\"{a},{b},{c},{d}\": {{\"a\": {a}, \"b\": {b}, \"c\": {c}, \"d\": {d}, \"time\": {}.{}, \"times\": [", if n > 0 { ", " } else { "" }, 1 + n % 89, n % 1000);
        let mut k = 0;
        while e.len() + 12 < per {
            e += if k > 0 { ", 1.2345" } else { "1.2345" };
            k += 1;
        }
        e += "]}";
        if t.len() + e.len() + tail.len() > MAX_CACHE_BYTES {
            break;
        }
        t += &e;
        n += 1;
    }
    t + tail
}

fn kernel_tuner_largest() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let text = largest_kernel_tuner_cache();
    out.push(("inputs_kernel_tuner_mib".to_string(), json!((text.len() as f64 / 1048576.0 * 10.0).round() / 10.0)));
    reset_peak();
    let t0 = Instant::now();
    let cache = tunelab_search::kernel_tuner::load_bytes(text.as_bytes());
    out.push(("inputs_kernel_tuner_read_s".to_string(), json!(t0.elapsed().as_secs_f64())));
    out.push(("inputs_kernel_tuner_peak_mib".to_string(), peak_mib()));
    match cache {
        Ok(c) => out.push(("inputs_kernel_tuner_configs".to_string(), json!(c.len()))),
        Err(e) => out.push(("inputs_kernel_tuner_error".to_string(), json!(e))),
    }
    out
}

/// `tunelab calibrate`'s default fit (one fit and the leave-out refits) on the case, an
/// op summary of 200 distinct operators on the 910B2.
fn calibrate_200() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let csv = op_summary_200();
    out.push(("inputs_calibrate_csv_kib".to_string(), json!((csv.len() as f64 / 1024.0 * 10.0).round() / 10.0)));
    let profile: Value = match tunelab_sim::device::bundled_profile_text("910B2").map(serde_json::from_str) {
        Some(Ok(p)) => p,
        _ => return vec![("inputs_calibrate_error".to_string(), json!("no bundled 910B2 profile"))],
    };
    reset_peak();
    let t0 = Instant::now();
    let fit = fidelity::load_any(&csv, "ops200.csv", "910B2").and_then(|(set, _)| {
        let digest = fidelity::MeasurementSet::digest_of(&csv);
        tunelab_scenario::calibrate::calibrate(&set, &digest, "910B2", &profile, &tunelab_scenario::calibrate::Options::default())
    });
    out.push(("inputs_calibrate_200_ops_s".to_string(), json!(t0.elapsed().as_secs_f64())));
    out.push(("inputs_calibrate_200_ops_peak_mib".to_string(), peak_mib()));
    match fit {
        Ok(c) => {
            out.push(("inputs_calibrate_200_ops_values".to_string(), json!(c.rows.len())));
            out.push(("inputs_calibrate_200_ops_evaluations".to_string(), json!(c.evaluations)));
        }
        Err(e) => out.push(("inputs_calibrate_error".to_string(), json!(e))),
    }
    out
}

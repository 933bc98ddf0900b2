//! AISBench (`ais_bench ... -m perf`) performance results, as its DefaultPerfSummarizer writes
//! them under `outputs/<time>/performances/<model abbr>/` (AISBench/benchmark
//! ais_bench/benchmark/summarizers/default_perf.py `_dump_calculated_perf_data`, and
//! ais_bench/benchmark/calculators/base_perf_metric_calculator.py):
//! - `<dataset>.json`: the common metrics, `{name: {stage: value}}` with the stage "total" and
//!   values carrying their unit as text ("98409.4916 ms", "41.622 token/s") or bare numbers
//!   (Total Requests, Failed Requests, Success Requests, Concurrency, Max Concurrency, Total
//!   Input Tokens, Total Generated Tokens);
//! - `<dataset>.csv`: per-request statistics, header `Performance Parameters,Stage,` + the
//!   statistics (default Average, Min, Max, Median, P75, P90, P99) + `N`, one line per
//!   parameter (E2EL, TTFT, TPOT, ITL in "<x> ms"; InputTokens, OutputTokens;
//!   OutputTokenThroughput, PrefillTokenThroughput in "<x> token/s").
//! The request rate is the model config's `request_rate` and is in neither file, so a run read
//! from them needs the rate given (`--rate`; the app's rate field).

use super::common::{clip, csv, ms, unknown_keys, with_unit, MAX_REQUESTS};
use super::BenchRun;
use serde_json::Value as Json;

/// The common metrics the summarizer writes.
const COMMON: &[&str] = &[
    "Benchmark Duration", "Total Requests", "Failed Requests", "Success Requests", "Concurrency", "Max Concurrency", "Request Throughput", "Total Input Tokens",
    "Total Generated Tokens", "Total Output Tokens", "Prefill Token Throughput", "Input Token Throughput", "Output Token Throughput", "Total Token Throughput",
];

/// The per-request parameters of the CSV, and (statistic, Tunelab metric) for the compared ones.
const PARAMS: &[(&str, &[(&str, &str)])] = &[
    ("TTFT", &[("Average", "ttft_mean_ms"), ("Median", "ttft_p50_ms"), ("P90", "ttft_ms"), ("P99", "ttft_p99_ms")]),
    ("TPOT", &[("Average", "tpot_mean_ms"), ("Median", "tpot_p50_ms"), ("P90", "tpot_ms"), ("P99", "tpot_p99_ms")]),
    ("ITL", &[("Average", "itl_mean_ms"), ("Median", "itl_p50_ms"), ("P90", "itl_p90_ms"), ("P99", "itl_p99_ms")]),
    ("E2EL", &[("Average", "e2e_mean_ms"), ("Median", "e2e_p50_ms"), ("P99", "e2e_p99_ms")]),
    ("InputTokens", &[]),
    ("OutputTokens", &[]),
    ("OutputTokenThroughput", &[]),
    ("PrefillTokenThroughput", &[]),
    ("PrefillBatchsize", &[]),
    ("DecoderBatchsize", &[]),
];

fn empty_run() -> BenchRun {
    BenchRun { tool: "AISBench".into(), rate_stated: false, ..Default::default() }
}

/// The "total" stage's value of a common metric (None when absent).
fn common(v: &Json, key: &str, units: &[&str]) -> Result<Option<f64>, String> {
    let Some(m) = v.get(key) else { return Ok(None) };
    let o = m.as_object().ok_or_else(|| format!("'{key}': expected {{stage: value}}"))?;
    let Some(x) = o.get("total") else { return Err(format!("'{key}': no 'total' stage (stages: {})", o.keys().map(|k| clip(k, 20)).collect::<Vec<_>>().join(", "))) };
    match x {
        Json::Number(n) => n.as_f64().filter(|x| x.is_finite() && *x >= 0.0).map(Some).ok_or_else(|| format!("'{key}'.total: must be a finite number >= 0")),
        Json::String(s) => with_unit(s, units, &format!("'{key}'.total")).map(|(x, _)| Some(x)),
        _ => Err(format!("'{key}'.total: must be a number or \"<number> <unit>\"")),
    }
}

/// Reads `<dataset>.json` (the common metrics).
pub fn read_json(text: &str) -> Result<BenchRun, String> {
    let v: Json = serde_json::from_str(&super::common::python_json(text)).map_err(|e| format!("not valid JSON: {e}"))?;
    if !v.is_object() {
        return Err("expected a JSON object (AISBench's <dataset>.json common metrics)".into());
    }
    let done = common(&v, "Success Requests", &[])?.ok_or("'Success Requests': missing (not AISBench's common metrics?)")?;
    if done < 1.0 || done > MAX_REQUESTS as f64 || done.fract() != 0.0 {
        return Err(format!("'Success Requests': {done} (a whole number of requests, 1 to {MAX_REQUESTS})"));
    }
    let completed = done as usize;
    let total = common(&v, "Total Requests", &[])?.map_or(completed, |x| x as usize);
    let tin = common(&v, "Total Input Tokens", &[])?.ok_or("'Total Input Tokens': missing")?;
    let tout = match common(&v, "Total Generated Tokens", &[])? {
        Some(x) => x,
        None => common(&v, "Total Output Tokens", &[])?.ok_or("'Total Generated Tokens': missing")?,
    };
    let mut r = empty_run();
    r.completed = completed;
    r.num_prompts = total;
    r.max_concurrency = common(&v, "Max Concurrency", &[])?.map(|c| c as u64).filter(|c| *c > 0);
    r.mean_input = tin / completed as f64;
    r.mean_output = tout / completed as f64;
    for (key, metric, unit, units) in [("Output Token Throughput", "tokens_per_s", "tokens/s", &["token/s"][..]), ("Request Throughput", "requests_per_s", "req/s", &["req/s"][..])] {
        if let Some(x) = common(&v, key, units)? {
            r.measured.push((key.to_string(), x, unit.to_string(), metric.to_string()));
        }
    }
    if r.measured.is_empty() {
        return Err("no measured value: expected 'Output Token Throughput' or 'Request Throughput'".into());
    }
    r.warnings.extend(unknown_keys(&v, COMMON, "AISBench common metrics"));
    Ok(r)
}

/// Reads `<dataset>.csv` (the per-request statistics). Errors name the line and column.
pub fn read_csv(text: &str) -> Result<BenchRun, String> {
    let lines = csv(text, "AISBench CSV")?;
    let Some((_, head)) = lines.first() else { return Err("empty file".into()) };
    if head.len() < 3 || head[0].trim() != "Performance Parameters" || head[1].trim() != "Stage" {
        return Err("line 1: expected the header 'Performance Parameters,Stage,<statistics>,N' of AISBench's <dataset>.csv".into());
    }
    let cols: Vec<&str> = head.iter().map(|c| c.trim()).collect();
    let col = |name: &str| cols.iter().position(|c| *c == name);
    let mut r = empty_run();
    let mut unknown = Vec::new();
    let (mut n, mut mean_in, mut mean_out) = (None, None, None);
    for (line, cells) in &lines[1..] {
        if cells.len() != cols.len() {
            return Err(format!("line {line}: {} cells, the header has {}", cells.len(), cols.len()));
        }
        let (param, stage) = (cells[0].trim(), cells[1].trim());
        if stage != "total" {
            r.warnings.push(format!("line {line}: {} stage '{}' not read (only 'total')", clip(param, 30), clip(stage, 20)));
            continue;
        }
        let Some((_, stats)) = PARAMS.iter().find(|(p, _)| *p == param) else {
            unknown.push(clip(param, 40));
            continue;
        };
        let cell = |stat: &str| col(stat).map(|i| cells[i].as_str());
        for (stat, metric) in stats.iter() {
            if let Some(c) = cell(stat) {
                let x = ms(c, &format!("line {line} {param} {stat}"))?;
                r.measured.push((format!("{param} {stat}"), x, "ms".into(), metric.to_string()));
            }
        }
        if let Some(c) = cell("N") {
            let x = with_unit(c, &[], &format!("line {line} {param} N"))?.0;
            if param == "E2EL" || (param == "InputTokens" && n.is_none()) {
                n = Some(x);
            }
        }
        if param == "InputTokens" || param == "OutputTokens" {
            let c = cell("Average").ok_or_else(|| format!("line 1: no 'Average' column for {param}"))?;
            let x = with_unit(c, &[], &format!("line {line} {param} Average"))?.0;
            if param == "InputTokens" { mean_in = Some(x) } else { mean_out = Some(x) }
        }
    }
    if !unknown.is_empty() {
        r.warnings.push(format!("AISBench CSV: parameter(s) Tunelab does not read: {}", unknown.join(", ")));
    }
    let n = n.ok_or("no E2EL or InputTokens line with N (the requests measured)")?;
    if n < 1.0 || n > MAX_REQUESTS as f64 || n.fract() != 0.0 {
        return Err(format!("N: {n} (a whole number of requests, 1 to {MAX_REQUESTS})"));
    }
    r.completed = n as usize;
    r.num_prompts = r.completed;
    r.mean_input = mean_in.ok_or("no InputTokens line (the prompt lengths)")?;
    r.mean_output = mean_out.ok_or("no OutputTokens line (the output lengths)")?;
    if r.measured.is_empty() {
        return Err("no measured latency: expected TTFT, TPOT, ITL or E2EL lines".into());
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    const JSON: &str = include_str!("../../../../../assets/benchruns/aisbench/gsm8k.json");
    const CSV: &str = include_str!("../../../../../assets/benchruns/aisbench/gsm8k.csv");

    #[test]
    fn both_files_read_and_merge() {
        let mut j = super::read_json(JSON).unwrap();
        let c = super::read_csv(CSV).unwrap();
        assert_eq!((j.completed, j.max_concurrency), (8, Some(1)));
        assert!((c.mean_input - 1512.5).abs() < 1e-9 && c.mean_output == 512.0);
        assert!(j.warnings.is_empty() && c.warnings.is_empty(), "{:?} {:?}", j.warnings, c.warnings);
        assert!(!j.rate_stated, "AISBench's files do not record the request rate");
        j.merge(c).unwrap();
        for m in ["tokens_per_s", "ttft_mean_ms", "ttft_ms", "tpot_p99_ms", "itl_p50_ms", "e2e_p99_ms"] {
            assert!(j.measured.iter().any(|x| x.3 == m), "{m}");
        }
        assert_eq!(j.measured.iter().find(|x| x.3 == "ttft_ms").unwrap().1, 2006.6);
    }

    #[test]
    fn bad_files_name_line_and_field() {
        for (bad, want) in [
            (CSV.replace("2006.6 ms", "2006.6 parsecs"), "line 3 TTFT P90: unit 'parsecs'"),
            (CSV.replacen(",total,", ",total,x,", 1), "line 2: 11 cells"),
            ("TTFT,total\n".to_string(), "line 1: expected the header"),
            (CSV.replace("TTFT,total", "TTFX,total"), "TTFX"),
        ] {
            let got = super::read_csv(&bad);
            let msg = match got {
                Err(e) => e,
                Ok(r) => r.warnings.join("; "),
            };
            assert!(msg.contains(want), "{want}: {msg}");
        }
        for (bad, want) in [
            (JSON.replace("\"Success Requests\": {\"total\": 8}", "\"Success Requests\": {\"prefill\": 8}"), "no 'total' stage"),
            (JSON.replace("41.622 token/s", "41.622 furlongs"), "'Output Token Throughput'.total: unit"),
            ("{}".to_string(), "'Success Requests': missing"),
        ] {
            let e = super::read_json(&bad).unwrap_err();
            assert!(e.contains(want), "{want}: {e}");
        }
    }
}

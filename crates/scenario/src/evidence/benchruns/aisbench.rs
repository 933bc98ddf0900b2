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
//! - `<dataset>_details.jsonl`: one line per request as the perf-mode output handler writes it
//!   (ais_bench/benchmark/openicl/icl_inferencer/output_handler/base_handler.py `write_to_json`
//!   with perf_mode: `<data_abbr>_details.jsonl`; each line `{data_abbr, id}` + the request's
//!   `Output.__dict__` from ais_bench/benchmark/models/output.py `RequestOutput.get_metrics`
//!   (success, error_info, time_points, input_tokens, output_tokens, extra_perf_data,
//!   extra_details_data, input, uuid, turn_id, prediction) + `db_name`; the time points, a numpy
//!   array, are a `{"__db_ref__": id}` into the run's SQLite database, which Tunelab does not
//!   read). Tunelab reads the per-request lengths of the successful requests, as
//!   `default_perf.py` `_calc_perf_data` counts them.
//! The request rate is the model config's `request_rate` and is in none of the files, so a run
//! read from them needs the rate given (`--rate`; the app's rate field).

use super::common::{clip, csv, ms, unknown_keys, with_unit, MAX_REQUESTS, MAX_TOKENS};
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

/// The keys of a `_details.jsonl` line (what `RequestOutput.get_metrics` and the handler write).
const DETAIL_KEYS: &[&str] = &[
    "data_abbr", "id", "success", "error_info", "time_points", "input_tokens", "output_tokens", "extra_perf_data", "extra_details_data", "input", "uuid", "turn_id", "prediction", "db_name",
    "origin_prompt", "response_anomaly_payload", "gold",
];

/// Whether `first_line` is a `_details.jsonl` record (the format's own keys).
pub fn is_details(first_line: &str) -> bool {
    first_line.contains("\"time_points\"") && first_line.contains("\"db_name\"")
}

/// Reads `<dataset>_details.jsonl`: the input and output tokens of every successful request.
/// A line whose backend reported no usage (input_tokens 0, output_tokens null: AISBench then
/// counts the text with the model's tokenizer, which Tunelab does not have) is an error naming
/// the line, never a guess.
pub fn read_details(text: &str) -> Result<BenchRun, String> {
    let mut r = empty_run();
    let (mut lines, mut failed) = (0usize, 0usize);
    let mut other = std::collections::BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_start_matches('\u{feff}').trim();
        if line.is_empty() {
            continue;
        }
        lines += 1;
        if lines > MAX_REQUESTS {
            return Err(format!("over {MAX_REQUESTS} requests"));
        }
        let n = i + 1;
        let v: Json = serde_json::from_str(line).map_err(|e| format!("line {n}: not valid JSON: {e}"))?;
        let o = v.as_object().ok_or_else(|| format!("line {n}: expected a JSON object (one request of AISBench's <dataset>_details.jsonl)"))?;
        other.extend(o.keys().filter(|k| !DETAIL_KEYS.contains(&k.as_str())).take(50).map(|k| clip(k, 40)));
        match o.get("success") {
            Some(Json::Bool(true)) => {}
            Some(Json::Bool(false)) => {
                failed += 1;
                continue;
            }
            _ => return Err(format!("line {n}: 'success' must be true or false")),
        }
        let len = |k: &str| -> Result<u64, String> {
            match o.get(k) {
                Some(Json::Number(x)) => x.as_u64().filter(|t| *t <= MAX_TOKENS).ok_or_else(|| format!("line {n}: '{k}' must be a whole number of tokens, 0 to {MAX_TOKENS}")),
                None | Some(Json::Null) => Err(format!("line {n}: no '{k}' (the backend reported no usage; AISBench then counts the text with the model's tokenizer, which Tunelab does not have)")),
                _ => Err(format!("line {n}: '{k}' must be a whole number of tokens")),
            }
        };
        let (input, output) = (len("input_tokens")?, len("output_tokens")?);
        if input == 0 {
            return Err(format!("line {n}: 'input_tokens' is 0 (the backend reported no usage; AISBench then counts the prompt with the model's tokenizer, which Tunelab does not have)"));
        }
        r.input_lens.push(input);
        r.output_lens.push(output);
    }
    if r.input_lens.is_empty() {
        return Err(if lines == 0 { "no request".into() } else { format!("none of the {lines} requests succeeded") });
    }
    if failed > 0 {
        r.warnings.push(format!("AISBench details: {failed} of {lines} requests failed; their lengths are not read"));
    }
    if !other.is_empty() {
        r.warnings.push(format!("AISBench details: key(s) Tunelab does not read: {}", other.into_iter().take(12).collect::<Vec<_>>().join(", ")));
    }
    r.completed = r.input_lens.len();
    r.num_prompts = lines;
    let k = r.completed as f64;
    r.mean_input = r.input_lens.iter().sum::<u64>() as f64 / k;
    r.mean_output = r.output_lens.iter().sum::<u64>() as f64 / k;
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

    const DETAILS: &str = include_str!("../../../../../assets/benchruns/aisbench/gsm8k_details.jsonl");

    #[test]
    fn the_per_request_details_give_the_lengths_and_merge_with_the_other_files() {
        let d = super::read_details(DETAILS).unwrap();
        assert_eq!(d.input_lens.len(), 8);
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        let c = super::read_csv(CSV).unwrap();
        // The same run as the CSV's statistics: its mean, min and max prompt.
        assert!((d.mean_input - c.mean_input).abs() < 1e-9 && d.mean_output == c.mean_output);
        assert_eq!((d.input_lens.iter().min(), d.input_lens.iter().max()), (Some(&1481), Some(&1566)));
        let mut j = super::read_json(JSON).unwrap();
        j.merge(c).unwrap();
        j.merge(d).unwrap();
        assert_eq!(j.input_lens.len(), 8, "the merged run carries the per-request lengths");
        assert!(j.input_cv() > 0.0);
    }

    #[test]
    fn bad_details_name_the_line() {
        let first = DETAILS.lines().next().unwrap();
        for (bad, want) in [
            (DETAILS.replacen("\"input_tokens\": 1509", "\"input_tokens\": 0", 1), "line 1: 'input_tokens' is 0"),
            (DETAILS.replacen("\"output_tokens\": 512", "\"output_tokens\": null", 1), "line 1: no 'output_tokens'"),
            (DETAILS.replacen("\"input_tokens\": 1509", "\"input_tokens\": -3", 1), "line 1: 'input_tokens' must be a whole number"),
            (format!("{first}\n{{oops\n"), "line 2: not valid JSON"),
            (DETAILS.replace("\"success\": true", "\"success\": false"), "none of the 8 requests succeeded"),
            (DETAILS.replacen("\"success\": true", "\"success\": \"yes\"", 1), "line 1: 'success' must be true or false"),
        ] {
            let e = super::read_details(&bad).unwrap_err();
            assert!(e.contains(want), "{want}: {e}");
        }
        let one_failed = super::read_details(&DETAILS.replacen("\"success\": true", "\"success\": false", 1)).unwrap();
        assert_eq!(one_failed.input_lens.len(), 7);
        assert!(one_failed.warnings[0].contains("1 of 8 requests failed"), "{:?}", one_failed.warnings);
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

//! MindIE Benchmark (MindIE Service's own benchmark tool, `benchmark --TestType client ...`)
//! output, as Ascend's own tuner reads it (Ascend/msit msserviceprofiler, modelevalstate
//! optimizer benchmark.py, class `BenchMark`: `get_ttft_tpot`, `get_performance_metric`,
//! `update_result_common`, `get_req_token_info`) with the metric names of the MindIE 2.2.RC1
//! documentation's AISBench / MindIE Benchmark comparison table (mindie_service0111):
//! - `result_perf_*.csv`: one column per metric (FirstTokenTime = TTFT, DecodeTime = ITL,
//!   GenerateTime = E2EL, InputTokens, GeneratedTokens, GeneratedTokenSpeed, PrefillBatchsize,
//!   DecoderBatchsize, ...), one line per statistic in the order average, max, min, P75, P90,
//!   SLO_P90, P99, N (an optional first column naming them is checked); cells "<x> ms" or bare;
//! - `result_common_*.csv`: one line of run totals: Returned (completed, with its share as
//!   "<n>( <p>% )"), Total, Concurrency (the client's concurrency), Throughput ("<x> req/s"),
//!   GenerateSpeed or OutputGenerateSpeed ("<x> token/s");
//! - `results_per_request_*.json`: `{request id: {input_len, output_len, ...}}`.
//! The request rate is not in these files (a client run is closed-loop at its Concurrency):
//! give it (`--rate`, "inf" for the closed loop).

use super::common::{clip, csv, ms, with_unit, MAX_REQUESTS, MAX_TOKENS};
use super::BenchRun;
use serde_json::Value as Json;

/// The statistics' lines of result_perf, in the tool's order.
const STATS: [&str; 8] = ["average", "max", "min", "P75", "P90", "SLO_P90", "P99", "N"];

/// (metric column, [(statistic index, Tunelab metric)]).
const PERF: &[(&str, &[(usize, &str)])] = &[
    ("FirstTokenTime", &[(0, "ttft_mean_ms"), (4, "ttft_ms"), (6, "ttft_p99_ms")]),
    ("DecodeTime", &[(0, "itl_mean_ms"), (4, "itl_p90_ms"), (6, "itl_p99_ms")]),
    ("GenerateTime", &[(0, "e2e_mean_ms"), (6, "e2e_p99_ms")]),
    ("InputTokens", &[]),
    ("GeneratedTokens", &[]),
    ("GeneratedTokenSpeed", &[]),
    ("PrefillBatchsize", &[]),
    ("DecoderBatchsize", &[]),
];

/// The result_common columns read.
const COMMON: &[&str] = &["Returned", "Total", "Failed", "Concurrency", "Throughput", "GenerateSpeed", "OutputGenerateSpeed"];

fn empty_run() -> BenchRun {
    BenchRun { tool: "MindIE Benchmark".into(), rate_stated: false, ..Default::default() }
}

/// Reads `result_perf_*.csv`.
pub fn read_perf(text: &str) -> Result<BenchRun, String> {
    let lines = csv(text, "MindIE result_perf")?;
    let Some((_, head)) = lines.first() else { return Err("empty file".into()) };
    let cols: Vec<&str> = head.iter().map(|c| c.trim()).collect();
    let col = |n: &str| cols.iter().position(|c| *c == n);
    let first = col("FirstTokenTime").ok_or("line 1: no 'FirstTokenTime' column (not MindIE Benchmark's result_perf?)")?;
    let body = &lines[1..];
    if body.len() != STATS.len() {
        return Err(format!("{} statistic lines after the header, expected {} ({})", body.len(), STATS.len(), STATS.join(", ")));
    }
    // An optional first column names the statistics: it must name them in the tool's order.
    if first > 0 && !PERF.iter().any(|(p, _)| *p == cols[0]) {
        for (k, (line, cells)) in body.iter().enumerate() {
            let got = cells.first().map(|c| c.trim()).unwrap_or("");
            if !got.is_empty() && !got.eq_ignore_ascii_case(STATS[k]) {
                return Err(format!("line {line}: statistic '{}' where the tool writes '{}'", clip(got, 20), STATS[k]));
            }
        }
    }
    let mut r = empty_run();
    let mut unknown = Vec::new();
    for (i, name) in cols.iter().enumerate() {
        if i == 0 && !PERF.iter().any(|(p, _)| p == name) {
            continue;
        }
        let Some((_, stats)) = PERF.iter().find(|(p, _)| p == name) else {
            unknown.push(clip(name, 40));
            continue;
        };
        let cell = |k: usize| -> Result<&str, String> {
            let (line, cells) = &body[k];
            cells.get(i).map(|c| c.as_str()).ok_or_else(|| format!("line {line}: no cell for {name}"))
        };
        for (k, metric) in stats.iter() {
            let x = ms(cell(*k)?, &format!("line {} {name} {}", body[*k].0, STATS[*k]))?;
            r.measured.push((format!("{name} {}", STATS[*k]), x, "ms".into(), metric.to_string()));
        }
        let avg = || -> Result<f64, String> { Ok(with_unit(cell(0)?, &["token/s", "tokens/s"], &format!("line {} {name} average", body[0].0))?.0) };
        match *name {
            "InputTokens" => r.mean_input = avg()?,
            "GeneratedTokens" => r.mean_output = avg()?,
            _ => {}
        }
        if *name == "FirstTokenTime" {
            let n = with_unit(cell(7)?, &[], &format!("line {} {name} N", body[7].0))?.0;
            if n < 1.0 || n > MAX_REQUESTS as f64 || n.fract() != 0.0 {
                return Err(format!("line {} {name} N: {n} (a whole number of requests, 1 to {MAX_REQUESTS})", body[7].0));
            }
            r.completed = n as usize;
            r.num_prompts = r.completed;
        }
    }
    if col("InputTokens").is_none() || col("GeneratedTokens").is_none() {
        return Err("line 1: needs the InputTokens and GeneratedTokens columns (the run's lengths)".into());
    }
    if !unknown.is_empty() {
        r.warnings.push(format!("MindIE result_perf: column(s) Tunelab does not read: {}", unknown.join(", ")));
    }
    Ok(r)
}

/// Reads `result_common_*.csv`.
pub fn read_common(text: &str) -> Result<BenchRun, String> {
    let lines = csv(text, "MindIE result_common")?;
    let [(_, head), (line, row)] = lines.as_slice() else { return Err(format!("{} lines: expected a header and one line of totals", lines.len())) };
    if head.len() != row.len() {
        return Err(format!("line {line}: {} cells, the header has {}", row.len(), head.len()));
    }
    let get = |n: &str| head.iter().position(|c| c.trim() == n).map(|i| row[i].trim());
    let ret = get("Returned").ok_or("line 1: no 'Returned' column (not MindIE Benchmark's result_common?)")?;
    let count: String = ret.chars().take_while(|c| c.is_ascii_digit()).collect();
    let completed: usize = count.parse().map_err(|_| format!("line {line} Returned: '{}' does not start with the number of requests returned", clip(ret, 30)))?;
    if completed == 0 || completed > MAX_REQUESTS {
        return Err(format!("line {line} Returned: {completed} (1 to {MAX_REQUESTS} requests)"));
    }
    let mut r = empty_run();
    r.completed = completed;
    r.num_prompts = match get("Total") {
        Some(t) => with_unit(t, &[], &format!("line {line} Total"))?.0 as usize,
        None => completed,
    };
    r.max_concurrency = match get("Concurrency") {
        Some(c) => Some(with_unit(c, &[], &format!("line {line} Concurrency"))?.0 as u64).filter(|c| *c > 0),
        None => None,
    };
    if let Some(t) = get("Throughput") {
        r.measured.push(("Throughput".into(), with_unit(t, &["req/s"], &format!("line {line} Throughput"))?.0, "req/s".into(), "requests_per_s".into()));
    }
    if let Some((k, g)) = get("OutputGenerateSpeed").map(|g| ("OutputGenerateSpeed", g)).or_else(|| get("GenerateSpeed").map(|g| ("GenerateSpeed", g))) {
        r.measured.push((k.into(), with_unit(g, &["token/s", "tokens/s"], &format!("line {line} {k}"))?.0, "tokens/s".into(), "tokens_per_s".into()));
    }
    if r.measured.is_empty() {
        return Err("no measured value: expected Throughput or GenerateSpeed".into());
    }
    let unknown: Vec<String> = head.iter().map(|c| c.trim()).filter(|c| !COMMON.contains(c)).map(|c| clip(c, 40)).collect();
    if !unknown.is_empty() {
        r.warnings.push(format!("MindIE result_common: column(s) Tunelab does not read: {}", unknown.join(", ")));
    }
    Ok(r)
}

/// Reads `results_per_request_*.json`: the per-request lengths (in the file's key order, which
/// does not matter for lengths).
pub fn read_per_request(text: &str) -> Result<BenchRun, String> {
    let v: Json = serde_json::from_str(&super::common::python_json(text)).map_err(|e| format!("not valid JSON: {e}"))?;
    let o = v.as_object().ok_or("expected a JSON object {request id: {input_len, output_len, ...}}")?;
    if o.len() > MAX_REQUESTS {
        return Err(format!("{} requests, over {MAX_REQUESTS}", o.len()));
    }
    let mut r = empty_run();
    let mut other = std::collections::BTreeSet::new();
    for (id, e) in o {
        let e = e.as_object().ok_or_else(|| format!("'{}': expected an object", clip(id, 40)))?;
        let len = |k: &str| e.get(k).and_then(Json::as_u64).filter(|n| *n <= MAX_TOKENS).ok_or_else(|| format!("'{}'.{k}: must be a whole number of tokens", clip(id, 40)));
        r.input_lens.push(len("input_len")?);
        r.output_lens.push(len("output_len")?);
        other.extend(e.keys().filter(|k| *k != "input_len" && *k != "output_len").take(50).map(|k| clip(k, 40)));
    }
    if r.input_lens.is_empty() {
        return Err("no request".into());
    }
    if !other.is_empty() {
        r.warnings.push(format!("MindIE results_per_request: key(s) Tunelab does not read: {}", other.into_iter().take(12).collect::<Vec<_>>().join(", ")));
    }
    r.completed = r.input_lens.len();
    r.num_prompts = r.completed;
    let n = r.completed as f64;
    r.mean_input = r.input_lens.iter().sum::<u64>() as f64 / n;
    r.mean_output = r.output_lens.iter().sum::<u64>() as f64 / n;
    Ok(r)
}

#[cfg(test)]
mod tests {
    const PERF: &str = include_str!("../../../../../assets/benchruns/mindie/result_perf_20251120101500.csv");
    const COMMON: &str = include_str!("../../../../../assets/benchruns/mindie/result_common_20251120101500.csv");
    const REQ: &str = include_str!("../../../../../assets/benchruns/mindie/results_per_request_20251120101500.json");

    #[test]
    fn the_three_files_read_and_merge() {
        let mut c = super::read_common(COMMON).unwrap();
        assert_eq!((c.completed, c.num_prompts, c.max_concurrency), (16, 16, Some(8)));
        let p = super::read_perf(PERF).unwrap();
        assert_eq!(p.completed, 16);
        assert!(p.measured.iter().any(|m| m.3 == "ttft_ms") && p.measured.iter().any(|m| m.3 == "itl_p99_ms"));
        let q = super::read_per_request(REQ).unwrap();
        assert_eq!(q.input_lens.len(), 16);
        c.merge(p).unwrap();
        c.merge(q).unwrap();
        assert_eq!(c.input_lens.len(), 16);
        assert!(c.measured.iter().any(|m| m.3 == "tokens_per_s") && c.measured.iter().any(|m| m.3 == "e2e_mean_ms"));
    }

    #[test]
    fn bad_files_name_line_and_column() {
        for (bad, want) in [
            (PERF.replacen("average", "mean", 1), "line 2: statistic 'mean'"),
            (PERF.replace("FirstTokenTime", "FTT"), "no 'FirstTokenTime'"),
            (PERF.lines().take(5).collect::<Vec<_>>().join("\n"), "4 statistic lines"),
        ] {
            let e = super::read_perf(&bad).unwrap_err();
            assert!(e.contains(want), "{want}: {e}");
        }
        for (bad, want) in [(COMMON.replace(" req/s", " req/min"), "Throughput: unit 'req/min'"), (COMMON.replace("16( 100.0% )", "all"), "Returned: 'all'")] {
            let e = super::read_common(&bad).unwrap_err();
            assert!(e.contains(want), "{want}: {e}");
        }
        assert!(super::read_per_request("{\"a\": {\"input_len\": -1, \"output_len\": 2}}").unwrap_err().contains("'a'.input_len"));
    }
}

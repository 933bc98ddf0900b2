//! SGLang `python -m sglang.bench_serving --output-file F.jsonl` (sgl-project/sglang
//! python/sglang/bench_serving.py, `benchmark()`): every run appends one JSON line, the `result`
//! dict (arguments backend, dataset_name, request_rate, max_concurrency, the random/sharegpt
//! lengths; results duration, completed, total_input_tokens, total_output_tokens,
//! request_throughput, input_throughput, output_throughput, `mean_/median_/std_/p99_` +
//! `e2e_latency|ttft|tpot|itl` + `_ms`, p95_itl_ms, concurrency, accept_length) and, with
//! `--output-details`, the per-request lists input_lens, output_lens, ttfts (s), itls (s),
//! generated_texts, errors. Python's json writes the default rate as `Infinity`.

use super::common::{lens, num, python_json, same_len, unknown_keys, MAX_RUNS};
use super::BenchRun;
use serde_json::Value as Json;

/// Every key bench_serving writes (summary and details); others are reported, not read.
const KNOWN: &[&str] = &[
    "backend", "dataset_name", "request_rate", "max_concurrency", "sharegpt_output_len", "random_input_len", "random_output_len", "random_range_ratio", "duration", "completed",
    "total_input_tokens", "total_output_tokens", "total_output_tokens_retokenized", "request_throughput", "input_throughput", "output_throughput", "total_throughput",
    "mean_e2e_latency_ms", "median_e2e_latency_ms", "std_e2e_latency_ms", "p99_e2e_latency_ms", "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
    "median_tpot_ms", "std_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "median_itl_ms", "std_itl_ms", "p95_itl_ms", "p99_itl_ms", "max_itl_ms", "concurrency", "accept_length",
    "input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors", "tag", "num_prompts", "model_id",
];

/// (SGLang's key, Tunelab metric).
const COMPARED: &[(&str, &str, &str)] = &[
    ("output_throughput", "tokens_per_s", "tokens/s"),
    ("request_throughput", "requests_per_s", "req/s"),
    ("mean_ttft_ms", "ttft_mean_ms", "ms"),
    ("median_ttft_ms", "ttft_p50_ms", "ms"),
    ("p99_ttft_ms", "ttft_p99_ms", "ms"),
    ("mean_tpot_ms", "tpot_mean_ms", "ms"),
    ("median_tpot_ms", "tpot_p50_ms", "ms"),
    ("p99_tpot_ms", "tpot_p99_ms", "ms"),
    ("mean_itl_ms", "itl_mean_ms", "ms"),
    ("median_itl_ms", "itl_p50_ms", "ms"),
    ("p99_itl_ms", "itl_p99_ms", "ms"),
    ("mean_e2e_latency_ms", "e2e_mean_ms", "ms"),
    ("median_e2e_latency_ms", "e2e_p50_ms", "ms"),
    ("p99_e2e_latency_ms", "e2e_p99_ms", "ms"),
];

/// Reads every line of the JSONL text (one run each). An error names the line.
pub fn read(text: &str) -> Result<Vec<BenchRun>, String> {
    let mut runs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if runs.len() >= MAX_RUNS {
            return Err(format!("over {MAX_RUNS} runs (lines)"));
        }
        let mut r = read_line(line).map_err(|e| format!("line {}: {e}", i + 1))?;
        r.label = format!("line {}", i + 1);
        runs.push(r);
    }
    if runs.is_empty() {
        return Err("no run: an SGLang bench_serving output file has one JSON object per line".into());
    }
    Ok(runs)
}

fn read_line(line: &str) -> Result<BenchRun, String> {
    let v: Json = serde_json::from_str(&python_json(line)).map_err(|e| format!("not valid JSON: {e}"))?;
    if !v.is_object() {
        return Err("expected a JSON object (one bench_serving result)".into());
    }
    let completed = num(&v, "completed")?.ok_or("'completed': missing (not an SGLang bench_serving result?)")?;
    if completed < 1.0 || completed > super::common::MAX_REQUESTS as f64 || completed.fract() != 0.0 {
        return Err(format!("'completed': {completed} (a whole number of requests, 1 to {})", super::common::MAX_REQUESTS));
    }
    let completed = completed as usize;
    let request_rate = super::vllm::request_rate(&v, "Infinity", "; Infinity for all at once")?;
    let max_concurrency = num(&v, "max_concurrency")?.map(|c| c as u64).filter(|c| *c > 0);
    let input_lens = lens(&v, "input_lens")?;
    let output_lens = lens(&v, "output_lens")?;
    same_len(("input_lens", input_lens.len()), ("output_lens", output_lens.len()))?;
    let ttfts = super::vllm::seconds(&v, "ttfts")?;
    same_len(("input_lens", input_lens.len()), ("ttfts", ttfts.len()))?;
    let total_in = num(&v, "total_input_tokens")?.ok_or("'total_input_tokens': missing")?;
    let total_out = num(&v, "total_output_tokens")?.ok_or("'total_output_tokens': missing")?;
    let mut measured = Vec::new();
    for (key, metric, unit) in COMPARED {
        if let Some(x) = num(&v, key)? {
            measured.push((key.to_string(), x, unit.to_string(), metric.to_string()));
        }
    }
    super::vllm::p90_from_requests(&mut measured, &ttfts);
    if measured.is_empty() {
        return Err("no measured value: expected output_throughput, mean_ttft_ms and the like".into());
    }
    let backend = v.get("backend").and_then(Json::as_str).unwrap_or("");
    Ok(BenchRun {
        tool: "sglang bench_serving".into(),
        model_id: v.get("model_id").and_then(Json::as_str).map(|s| super::common::clip(s, 200)).unwrap_or_else(|| format!("(backend {})", super::common::clip(backend, 40))),
        num_prompts: completed,
        completed,
        request_rate,
        max_concurrency,
        mean_input: total_in / completed as f64,
        mean_output: total_out / completed as f64,
        input_lens,
        output_lens,
        measured,
        warnings: unknown_keys(&v, KNOWN, "sglang bench_serving").into_iter().collect(),
        rate_stated: true,
        label: String::new(),
    })
}

#[cfg(test)]
mod tests {
    const SAMPLE: &str = include_str!("../../../../../assets/benchruns/sglang-bench-serving-sample.jsonl");

    #[test]
    fn every_line_is_a_run_and_infinity_is_a_burst() {
        let runs = super::read(SAMPLE).unwrap();
        assert_eq!(runs.len(), 3);
        assert_eq!(runs[0].request_rate, Some(2.0));
        assert_eq!(runs[2].request_rate, None, "Infinity is all at once");
        assert!(runs.iter().all(|r| r.warnings.is_empty()), "{:?}", runs[0].warnings);
        assert_eq!(runs[1].input_lens.len(), runs[1].completed, "per-request lengths of --output-details");
        assert!(runs[1].measured.iter().any(|m| m.3 == "ttft_ms"), "p90 TTFT from the per-request ttfts");
    }

    #[test]
    fn bad_lines_name_the_line_and_field() {
        let good = SAMPLE.lines().next().unwrap();
        for (bad, want) in [
            (format!("{good}\n{{\"completed\": 4}}"), "line 2: 'request_rate'"),
            (format!("{good}\n[1]"), "line 2: expected a JSON object"),
            (good.replace("\"completed\": 16", "\"completed\": -3"), "line 1: 'completed'"),
            (good.replace("\"mean_ttft_ms\": ", "\"mean_ttft_ms\": NaN, \"x\": "), "'mean_ttft_ms': NaN"),
            ("\n\n".to_string(), "no run"),
        ] {
            let e = super::read(&bad).unwrap_err();
            assert!(e.contains(want), "{want}: {e}");
        }
        let w = super::read(&good.replacen('{', "{\"mystery_key\": 1, ", 1)).unwrap();
        assert!(w[0].warnings[0].contains("'mystery_key'"), "{:?}", w[0].warnings);
    }
}

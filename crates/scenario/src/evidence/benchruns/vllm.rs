//! `vllm bench serve --save-result` JSON (vLLM's vllm/benchmarks/serve.py): the run's summary
//! and, with `--save-detailed`, its per-request lengths and TTFTs. The fields read are checked
//! for type and range, naming the key; keys the tool writes that Tunelab does not read are
//! known, and any other key is reported as a warning.

use super::common::{lens, num, python_json, same_len, unknown_keys_by, MAX_REQUESTS};
use super::BenchRun;
use serde_json::Value as Json;

/// (vLLM's key stem, Tunelab metric for mean, median, p90, p99).
const LATENCIES: [(&str, [&str; 4]); 4] = [
    ("ttft", ["ttft_mean_ms", "ttft_p50_ms", "ttft_ms", "ttft_p99_ms"]),
    ("tpot", ["tpot_mean_ms", "tpot_p50_ms", "tpot_ms", "tpot_p99_ms"]),
    ("itl", ["itl_mean_ms", "itl_p50_ms", "itl_p90_ms", "itl_p99_ms"]),
    ("e2el", ["e2e_mean_ms", "e2e_p50_ms", "", "e2e_p99_ms"]),
];

/// Keys serve.py writes besides the latency statistics (`main()`'s result_json and
/// `benchmark()`'s result dict, with `--save-detailed`'s lists).
const KNOWN: &[&str] = &[
    "date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts", "request_rate", "burstiness", "max_concurrency", "duration", "completed", "failed",
    "total_input_tokens", "total_output_tokens", "request_throughput", "request_goodput", "output_throughput", "total_token_throughput", "max_output_tokens_per_s",
    "max_concurrent_requests", "input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors", "start_times", "num_warmups", "ramp_up_strategy",
    "ramp_up_start_rps", "ramp_up_end_rps",
];

/// A latency statistic key: `mean_|median_|std_|p<NN>_` + `ttft|tpot|itl|e2el` + `_ms`.
fn is_stat(k: &str) -> bool {
    let Some(body) = k.strip_suffix("_ms") else { return false };
    let Some((stat, stem)) = body.split_once('_') else { return false };
    let stat_ok = matches!(stat, "mean" | "median" | "std") || (stat.starts_with('p') && stat.len() > 1 && stat[1..].chars().all(|c| c.is_ascii_digit() || c == '.'));
    stat_ok && matches!(stem, "ttft" | "tpot" | "itl" | "e2el")
}

/// Per-request times in seconds under `key` (a failed request's 0 kept; absent: empty).
pub fn seconds(v: &Json, key: &str) -> Result<Vec<f64>, String> {
    match v.get(key) {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Array(a)) => {
            if a.len() > MAX_REQUESTS {
                return Err(format!("'{key}': {} entries, over {MAX_REQUESTS}", a.len()));
            }
            a.iter().enumerate().map(|(i, x)| x.as_f64().filter(|t| t.is_finite() && *t >= 0.0 && *t < 1e7).ok_or_else(|| format!("'{key}'[{i}]: must be a time in seconds >= 0"))).collect()
        }
        Some(_) => Err(format!("'{key}': must be a list")),
    }
}

/// numpy's default percentile (linear between closest ranks) of `v` (sorted here), `q` in 0..=100.
pub fn percentile(v: &[f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let rank = q / 100.0 * (s.len() - 1) as f64;
    let (lo, hi) = (libm::floor(rank) as usize, libm::ceil(rank) as usize);
    Some(s[lo] + (s[hi] - s[lo]) * (rank - lo as f64))
}

/// The p90 TTFT of the per-request TTFTs (successful requests: TTFT > 0) when the summary has
/// none: the percentile the deployment stage's TTFT limit reads.
pub fn p90_from_requests(measured: &mut Vec<(String, f64, String, String)>, ttfts: &[f64]) {
    if measured.iter().any(|m| m.3 == "ttft_ms") {
        return;
    }
    let ok: Vec<f64> = ttfts.iter().copied().filter(|t| *t > 0.0).collect();
    if ok.len() >= 2 {
        if let Some(p) = percentile(&ok, 90.0) {
            measured.push(("p90 of ttfts (per request)".into(), p * 1000.0, "ms".into(), "ttft_ms".into()));
        }
    }
}

/// Reads the JSON text.
pub fn read(text: &str) -> Result<BenchRun, String> {
    let v: Json = serde_json::from_str(&python_json(text)).map_err(|e| format!("not valid JSON: {e}"))?;
    if !v.is_object() {
        return Err("expected a JSON object (vllm bench serve --save-result)".into());
    }
    let completed = num(&v, "completed")?.ok_or("'completed': missing (not a vllm bench serve result?)")?;
    if completed < 1.0 || completed > MAX_REQUESTS as f64 || completed.fract() != 0.0 {
        return Err(format!("'completed': {completed} (a whole number of requests, 1 to {MAX_REQUESTS}; 0 completed leaves nothing to compare)"));
    }
    let completed = completed as usize;
    let num_prompts = num(&v, "num_prompts")?.map_or(completed, |x| x as usize);
    let request_rate = request_rate(&v, "\"inf\"", ", \"inf\" for a burst")?;
    let max_concurrency = num(&v, "max_concurrency")?.map(|c| c as u64).filter(|c| *c > 0);
    let input_lens = lens(&v, "input_lens")?;
    let output_lens = lens(&v, "output_lens")?;
    same_len(("input_lens", input_lens.len()), ("output_lens", output_lens.len()))?;
    let ttfts = seconds(&v, "ttfts")?;
    same_len(("input_lens", input_lens.len()), ("ttfts", ttfts.len()))?;
    let total_in = num(&v, "total_input_tokens")?.ok_or("'total_input_tokens': missing")?;
    let total_out = num(&v, "total_output_tokens")?.ok_or("'total_output_tokens': missing")?;
    let mut measured = Vec::new();
    for (key, metric, unit) in [("output_throughput", "tokens_per_s", "tokens/s"), ("request_throughput", "requests_per_s", "req/s")] {
        if let Some(x) = num(&v, key)? {
            measured.push((key.to_string(), x, unit.to_string(), metric.to_string()));
        }
    }
    for (stem, [mean, p50, p90, p99]) in LATENCIES {
        for (key, metric) in [(format!("mean_{stem}_ms"), mean), (format!("median_{stem}_ms"), p50), (format!("p90_{stem}_ms"), p90), (format!("p99_{stem}_ms"), p99)] {
            if metric.is_empty() {
                continue;
            }
            if let Some(x) = num(&v, &key)? {
                measured.push((key, x, "ms".into(), metric.to_string()));
            }
        }
    }
    p90_from_requests(&mut measured, &ttfts);
    if measured.is_empty() {
        return Err("no measured value: expected output_throughput or mean_ttft_ms and the like".into());
    }
    Ok(BenchRun {
        tool: "vllm bench serve".into(),
        model_id: v.get("model_id").and_then(Json::as_str).map(|s| super::common::clip(s, 200)).unwrap_or_default(),
        num_prompts,
        completed,
        request_rate,
        max_concurrency,
        mean_input: total_in / completed as f64,
        mean_output: total_out / completed as f64,
        input_lens,
        output_lens,
        measured,
        warnings: unknown_keys_by(&v, |k| KNOWN.contains(&k) || is_stat(k), "vllm bench serve").into_iter().collect(),
        rate_stated: true,
        label: String::new(),
    })
}

#[cfg(test)]
mod tests {
    const SAMPLE: &str = include_str!("../../../../../assets/benchruns/vllm-bench-serve-sample.json");

    #[test]
    fn a_saved_result_gives_its_workload_and_values() {
        let r = super::read(SAMPLE).unwrap();
        assert_eq!((r.completed, r.request_rate, r.max_concurrency), (8, Some(4.0), Some(16)));
        assert_eq!(r.input_lens.len(), 8);
        assert!(r.measured.iter().any(|m| m.3 == "ttft_p99_ms") && r.measured.iter().any(|m| m.3 == "tokens_per_s"));
        assert!((r.mean_input - 2048.0).abs() < 200.0);
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        // The sample's TTFTs 0.38..0.47 s: numpy's p90 of the eight, rank 6.3: 0.45 + 0.3 x 0.02 = 456 ms.
        let p90 = r.measured.iter().find(|m| m.3 == "ttft_ms").unwrap().1;
        assert!((p90 - 456.0).abs() < 1e-6, "{p90}");
    }

    #[test]
    fn bad_files_name_the_field() {
        for (bad, field) in [
            ("[]", "JSON object"),
            ("{\"completed\": 3}", "request_rate"),
            ("{\"completed\": -1, \"request_rate\": 1}", "completed"),
            ("{\"completed\": 2, \"request_rate\": \"x\", \"output_throughput\": 1}", "request_rate"),
            ("not json", "not valid JSON"),
            ("{\"completed\": 2, \"request_rate\": 1, \"total_input_tokens\": 2, \"total_output_tokens\": 2, \"output_throughput\": 1, \"input_lens\": [1], \"output_lens\": [1, 2]}", "'output_lens' has 2"),
        ] {
            let e = super::read(bad).unwrap_err();
            assert!(e.contains(field), "{bad}: {e}");
        }
        let w = super::read(&SAMPLE.replacen('{', "{\"p90_ttft_ms\": 450.0, \"odd_key\": 1, ", 1)).unwrap();
        assert_eq!(w.warnings.len(), 1);
        assert!(w.warnings[0].contains("'odd_key'") && !w.warnings[0].contains("p90_ttft_ms"), "{:?}", w.warnings);
        assert_eq!(w.measured.iter().find(|m| m.3 == "ttft_ms").unwrap().1, 450.0, "the summary's p90 wins over the per-request one");
    }
}

/// `request_rate` as both tools write it: a positive number, or Python's infinity (vLLM's
/// "inf", SGLang's `Infinity`, read as "inf" by the Python-JSON reader) for all at once (None).
/// `inf` names the spelling in errors; `missing` ends the missing-field message.
pub(super) fn request_rate(v: &Json, inf: &str, missing: &str) -> Result<Option<f64>, String> {
    let bad = || format!("'request_rate': must be a positive number or {inf}");
    match v.get("request_rate") {
        Some(Json::String(s)) if s == "inf" => Ok(None),
        Some(Json::Number(n)) => n.as_f64().filter(|r| r.is_finite() && *r > 0.0).map(Some).ok_or_else(bad),
        None | Some(Json::Null) => Err(format!("'request_rate': missing (the run's arrival rate{missing})")),
        Some(_) => Err(bad()),
    }
}

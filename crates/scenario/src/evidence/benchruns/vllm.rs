//! `vllm bench serve --save-result` JSON (vLLM's vllm/benchmarks/serve.py): the run's summary
//! and, with `--save-detailed`, its per-request lengths. Unknown keys are kept out (the tool
//! writes many); the fields read are checked for type and range, naming the key.

use super::BenchRun;
use serde_json::Value as Json;

/// Most requests a file may list.
const MAX_REQUESTS: usize = 100_000;

/// (vLLM's key stem, Tunelab metric for mean, median, p90, p99).
const LATENCIES: [(&str, [&str; 4]); 4] = [
    ("ttft", ["ttft_mean_ms", "ttft_p50_ms", "ttft_ms", "ttft_p99_ms"]),
    ("tpot", ["tpot_mean_ms", "tpot_p50_ms", "tpot_ms", "tpot_p99_ms"]),
    ("itl", ["itl_mean_ms", "itl_p50_ms", "itl_p90_ms", "itl_p99_ms"]),
    ("e2el", ["e2e_mean_ms", "e2e_p50_ms", "", "e2e_p99_ms"]),
];

fn num(v: &Json, key: &str) -> Result<Option<f64>, String> {
    match v.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Number(n)) => n.as_f64().filter(|x| x.is_finite() && *x >= 0.0).map(Some).ok_or_else(|| format!("'{key}': must be a finite number >= 0")),
        Some(_) => Err(format!("'{key}': must be a number")),
    }
}

fn lens(v: &Json, key: &str) -> Result<Vec<u64>, String> {
    match v.get(key) {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Array(a)) => {
            if a.len() > MAX_REQUESTS {
                return Err(format!("'{key}': {} entries, over {MAX_REQUESTS}", a.len()));
            }
            a.iter().enumerate().map(|(i, x)| x.as_u64().filter(|n| *n <= 1 << 24).ok_or_else(|| format!("'{key}'[{i}]: must be a whole number of tokens"))).collect()
        }
        Some(_) => Err(format!("'{key}': must be a list")),
    }
}

/// Reads the JSON text.
pub fn read(text: &str) -> Result<BenchRun, String> {
    let v: Json = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    if !v.is_object() {
        return Err("expected a JSON object (vllm bench serve --save-result)".into());
    }
    let completed = num(&v, "completed")?.ok_or("'completed': missing (not a vllm bench serve result?)")? as usize;
    if completed == 0 {
        return Err("'completed': 0 requests completed, nothing to compare".into());
    }
    let num_prompts = num(&v, "num_prompts")?.map_or(completed, |x| x as usize);
    let request_rate = match v.get("request_rate") {
        Some(Json::String(s)) if s == "inf" => None,
        Some(Json::Number(n)) => Some(n.as_f64().filter(|r| r.is_finite() && *r > 0.0).ok_or("'request_rate': must be a positive number or \"inf\"")?),
        None | Some(Json::Null) => return Err("'request_rate': missing (the run's arrival rate, \"inf\" for a burst)".into()),
        Some(_) => return Err("'request_rate': must be a positive number or \"inf\"".into()),
    };
    let max_concurrency = num(&v, "max_concurrency")?.map(|c| c as u64).filter(|c| *c > 0);
    let input_lens = lens(&v, "input_lens")?;
    let output_lens = lens(&v, "output_lens")?;
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
    if measured.is_empty() {
        return Err("no measured value: expected output_throughput or mean_ttft_ms and the like".into());
    }
    Ok(BenchRun {
        tool: "vllm bench serve".into(),
        model_id: v.get("model_id").and_then(Json::as_str).unwrap_or("").chars().take(200).collect(),
        num_prompts,
        completed,
        request_rate,
        max_concurrency,
        mean_input: total_in / completed as f64,
        mean_output: total_out / completed as f64,
        input_lens,
        output_lens,
        measured,
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
    }

    #[test]
    fn bad_files_name_the_field() {
        for (bad, field) in [("[]", "JSON object"), ("{\"completed\": 3}", "request_rate"), ("{\"completed\": -1, \"request_rate\": 1}", "completed"), ("{\"completed\": 2, \"request_rate\": \"x\", \"output_throughput\": 1}", "request_rate"), ("not json", "not valid JSON")] {
            let e = super::read(bad).unwrap_err();
            assert!(e.contains(field), "{bad}: {e}");
        }
    }
}

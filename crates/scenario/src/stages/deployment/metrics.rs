//! The deployment stage's metrics: names, units and directions, in the order `tunelab eval`
//! and the report list them.

use tunelab_search::Metric;

/// The stage's metrics, in the order `eval` reports them.
pub fn metrics() -> Vec<Metric> {
    vec![
        Metric::maximize("tokens_per_s", "tokens/s"),
        Metric::minimize("ttft_ms", "ms"),
        Metric::minimize("tpot_ms", "ms"),
        Metric::maximize("tokens_per_s_per_chip", "tokens/s"),
        Metric::minimize("memory_gib", "GiB"),
        Metric::minimize("energy_j_per_token", "J/token"),
        Metric::minimize("rel_error", ""),
        Metric::minimize("power_w", "W"),
        Metric::maximize("utilisation", ""),
        Metric::minimize("ttft_p50_ms", "ms"),
        Metric::minimize("ttft_p99_ms", "ms"),
        Metric::minimize("tpot_p50_ms", "ms"),
        Metric::minimize("tpot_p99_ms", "ms"),
        Metric::minimize("itl_p50_ms", "ms"),
        Metric::minimize("itl_p90_ms", "ms"),
        Metric::minimize("itl_p99_ms", "ms"),
        Metric::minimize("queue_ms", "ms"),
        Metric::maximize("goodput_rps", "req/s"),
        Metric::maximize("requests_per_s", "req/s"),
        Metric::minimize("preemptions", ""),
        Metric::minimize("prefill_share", ""),
        // Means beside the percentiles: vLLM's and SGLang's benchmark tools print means first,
        // and most published serving rows are means.
        Metric::minimize("ttft_mean_ms", "ms"),
        Metric::minimize("tpot_mean_ms", "ms"),
        Metric::minimize("itl_mean_ms", "ms"),
        Metric::minimize("e2e_mean_ms", "ms"),
        Metric::minimize("e2e_p50_ms", "ms"),
        Metric::minimize("e2e_p99_ms", "ms"),
    ]
}

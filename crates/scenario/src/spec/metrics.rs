//! The metric registry: one place that says what every metric the stages report is called on
//! screen, its unit, what it means in one line and which way is better, plus the number format
//! the UI uses (about four significant digits; exports keep full precision).
//!
//! Why one registry: the report, the diagnosis, the heat map, the trial table and the CLI all
//! show the same metrics; a label or a meaning written in each view drifts apart.

use serde::Serialize;

/// What a metric is, for people.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MetricInfo {
    /// The id the stages report ("tokens_per_s_per_chip").
    pub id: &'static str,
    /// A short human label ("Throughput per chip").
    pub label: &'static str,
    /// The unit shown ("tokens/s"); empty for a plain ratio.
    pub unit: &'static str,
    /// One line: what the number is.
    pub meaning: &'static str,
    /// True when a larger value is better.
    pub higher_is_better: bool,
    /// Shown as a percentage (a fraction 0..1 in the data).
    pub percent: bool,
}

const fn m(id: &'static str, label: &'static str, unit: &'static str, meaning: &'static str, higher_is_better: bool, percent: bool) -> MetricInfo {
    MetricInfo { id, label, unit, meaning, higher_is_better, percent }
}

/// Every metric a stage reports.
pub const METRICS: &[MetricInfo] = &[
    m("tokens_per_s", "Throughput", "tokens/s", "Tokens per second of the whole instance or job, all its chips (generated tokens when serving, training tokens when training).", true, false),
    m("tokens_per_s_per_chip", "Throughput per chip", "tokens/s", "Tokens per second divided by every chip that produces them: serving, tp x dp of the instance (a disaggregated layout: every chip of the cluster, prefill instances included); training, every chip of the job.", true, false),
    m("ttft_ms", "Time to first token (p90)", "ms", "TTFT: from a request's arrival to its first token, 90th percentile over the simulated requests (simple mode: one prefill of the batch).", false, false),
    m("tpot_ms", "Time per output token (p90)", "ms", "TPOT: a request's decode time per generated token after the first, 90th percentile (simple mode: one decode step at the mean context).", false, false),
    m("ttft_p50_ms", "TTFT p50", "ms", "Median time to first token over the simulated requests.", false, false),
    m("ttft_p99_ms", "TTFT p99", "ms", "Time to first token that 99% of the simulated requests stay under.", false, false),
    m("tpot_p50_ms", "TPOT p50", "ms", "Median time per output token over the simulated requests.", false, false),
    m("tpot_p99_ms", "TPOT p99", "ms", "Time per output token that 99% of the simulated requests stay under.", false, false),
    m("itl_p50_ms", "Inter-token latency p50", "ms", "Median gap between two consecutive tokens of a request (prefills of others can stall it).", false, false),
    m("itl_p90_ms", "Inter-token latency p90", "ms", "90th percentile of the gaps between consecutive tokens of a request.", false, false),
    m("itl_p99_ms", "Inter-token latency p99", "ms", "99th percentile of the gaps between consecutive tokens of a request.", false, false),
    m("ttft_mean_ms", "TTFT mean", "ms", "Mean time to first token over the simulated requests (what vLLM's and SGLang's benchmark tools print first).", false, false),
    m("tpot_mean_ms", "TPOT mean", "ms", "Mean time per output token over the simulated requests.", false, false),
    m("itl_mean_ms", "Inter-token latency mean", "ms", "Mean gap between two consecutive tokens of a request.", false, false),
    m("e2e_mean_ms", "End-to-end latency mean", "ms", "Mean time from a request's arrival to its last token.", false, false),
    m("e2e_p50_ms", "End-to-end latency p50", "ms", "Median time from a request's arrival to its last token.", false, false),
    m("e2e_p99_ms", "End-to-end latency p99", "ms", "Time from arrival to last token that 99% of the simulated requests stay under.", false, false),
    m("queue_ms", "Queueing delay", "ms", "Mean time a request waits before its prefill starts (apart from compute).", false, false),
    m("goodput_rps", "Goodput", "req/s", "Requests per second served within the scenario's TTFT and TPOT limits.", true, false),
    m("requests_per_s", "Requests per second", "req/s", "Completed requests per second over the whole simulated run.", true, false),
    m("preemptions", "Preemptions", "", "Requests evicted from the KV cache and recomputed because blocks ran out.", false, false),
    m("prefill_share", "Prefill share", "", "Share of the device time spent in prefills (the rest is decode).", false, true),
    m("model_time_ms", "Workload time", "ms", "Time of the whole simulated workload: the prefill plus every decode step, operator times summed.", false, false),
    m("memory_gib", "Memory per chip", "GiB", "Device memory one chip needs or reserves: weights, KV cache, activations and workspace.", false, false),
    m("energy_j_per_token", "Energy per token", "J/token", "Energy of all the instance's chips per generated token.", false, false),
    m("energy_j", "Energy", "J", "Energy of one chip for the whole simulated workload.", false, false),
    m("rel_error", "Numerical error (data types)", "", "Expected relative numerical error of the least precise operator from its data types' rounding and quantisation (0.01 = ±1% in the computed values). It says nothing about how far a time or throughput may be from hardware: that is the prediction band beside the headline numbers.", false, true),
    m("power_w", "Power", "W", "Average power of one chip over the simulated run (busy and idle).", false, false),
    m("utilisation", "Utilisation", "", "Share of the chip's peak in use: useful FLOPs per second over the FP16 cube peak (runtime stage: busy share of the chips).", true, true),
    m("step_time_ms", "Step time", "ms", "Time of one training step (all micro-batches, communication not hidden).", false, false),
    m("mfu", "MFU", "", "Model FLOPs utilisation: model FLOPs per second over the peak of all chips.", true, true),
    m("capacity_rps", "Capacity", "req/s", "Requests per second the instance sustains: the runtime stage's under its arrival pattern; the deployment stage's capacity goal the highest offered rate (Poisson or the trace, stretched) with TTFT and TPOT p90 within the limits, found by a search over the rate on the same request sample for every configuration.", true, false),
    m("capacity_tokens_per_s_per_chip", "Capacity per chip", "tokens/s", "Generated tokens per second per chip at the highest rate the deployment sustains within the TTFT and TPOT limits (the rate x the sample's mean output over the chips): what the hardware serves, not what the offered load asks.", true, false),
    m("bubble_fraction", "Pipeline bubble", "", "Share of a training step the pipeline stages sit idle: (pp - 1) / (micro-batches + pp - 1).", false, true),
    m("dp_comm_exposed_ms", "Exposed DP communication", "ms", "Data-parallel gradient communication not hidden behind the backward pass, per step.", false, false),
    m("grad_accum", "Gradient accumulation", "steps", "Micro-batches accumulated per optimiser step (global batch / (micro-batch x data-parallel)).", false, false),
    m("latency_ms", "Latency per call", "ms", "Diffusion: one pipeline call from prompt to decoded images (text encoders, every denoising step, VAE, host work), for the whole batch.", false, false),
    m("images_per_s", "Images per second", "images/s", "Diffusion: images (or videos) per second of all the scenario's chips: batch x pipeline instances / latency.", true, false),
    m("step_ms", "Time per step", "ms", "Diffusion: mean time of one denoising step (both CFG branches, cached steps, scheduler kernels and loop overhead).", false, false),
    m("text_encoder_ms", "Text encoders", "ms", "Diffusion: time of the text encoders per call (0 when the prompt's embeddings come from the cache).", false, false),
    m("vae_ms", "VAE decoder", "ms", "Diffusion: time of the VAE decoder per call.", false, false),
    m("output_changing_knobs", "Output-changing knobs", "", "Diffusion: knobs set away from the exact pipeline that change the images (fewer steps, W8A8, token merging, step caching); quality is not simulated.", false, false),
    m("f", "Function value", "", "The known 2-D function's value at the point (a teaching landscape: branin, rastrigin, ...), minimised.", false, false),
    m("time", "Kernel time", "ms", "The kernel's time as measured and recorded in the Kernel Tuner cache (a measurement replayed, not an estimate).", false, false),
    m("model_tflops_per_chip", "Model TFLOP/s per chip", "TFLOP/s", "Training: the MFU's model FLOPs per second per chip (6 N + 12 L H Q T per token for a language model, recomputation excluded), what Megatron and MindSpeed print as throughput per GPU in TFLOP/s/GPU.", true, false),
    m("samples_per_s", "Samples per second", "samples/s", "Training: sequences (or images, for a diffusion model) per second of the whole job: the global batch over the step time.", true, false),
];

/// The registry entry of a metric id; an id not in the registry gets a readable fallback (its
/// id with spaces, the unit the stage gave, no meaning), never a panic.
pub fn info(id: &str) -> MetricInfo {
    METRICS.iter().find(|m| m.id == id).copied().unwrap_or(MetricInfo {
        id: "",
        label: "",
        unit: "",
        meaning: "",
        higher_is_better: false,
        percent: false,
    })
}

/// The label shown for a metric id (the registry's, or the id with spaces).
pub fn label(id: &str) -> String {
    match METRICS.iter().find(|m| m.id == id) {
        Some(m) => m.label.to_string(),
        None => id.replace('_', " "),
    }
}

/// The unit a metric is shown in: the registry's (one unit per metric, whatever a stage
/// wrote: "J/token", never "J"), else the unit the stage reported for an unknown id.
pub fn unit(id: &str, reported: &str) -> String {
    let i = info(id);
    if i.id.is_empty() { reported.trim().to_string() } else { i.unit.to_string() }
}

/// "Label (unit)" for column heads and axis titles: "Throughput per chip (tokens/s)". A
/// percentage's head carries no unit, its values do ("MFU", "16.13%"), so no "(%) 16.13%".
pub fn label_unit(id: &str, reported: &str) -> String {
    let i = info(id);
    let u = if i.percent { String::new() } else { unit(id, reported) };
    if u.is_empty() { label(id) } else { format!("{} ({u})", label(id)) }
}

/// A CSV column head: the metric's id (machine-readable) with the registry's unit:
/// "energy_j_per_token (J/token)"; a percentage is written as a fraction, and says so.
pub fn csv_head(id: &str, reported: &str) -> String {
    let u = if info(id).percent { "fraction".to_string() } else { unit(id, reported) };
    if u.is_empty() { id.to_string() } else { format!("{id} ({u})") }
}

/// A metric's value with its unit as people read it: "1265 tokens/s", "16.13%", "0.5".
pub fn value_unit(id: &str, x: f64, reported: &str) -> String {
    if info(id).percent { fmt_metric(id, x) } else { fmt_unit(x, &unit(id, reported)) }
}

/// The one-line meaning (empty for an unknown id).
pub fn meaning(id: &str) -> &'static str {
    info(id).meaning
}

/// About four significant digits, no exponent for everyday magnitudes: 1265.273496 -> "1265",
/// 43.7123 -> "43.71", 0.00123456 -> "0.001235", 123456.7 -> "123500". Non-finite values print
/// as "—". Every number the page and the CLI show people goes through here (or [`fmt_sig`]);
/// exports keep full precision (`format_best`).
pub fn fmt4(x: f64) -> String {
    fmt_sig(x, 4)
}

/// `x` rounded to `digits` significant digits (1..=6), without trailing zeros; an exponent
/// only outside 1e-4..1e7 ("1.235e7"). Non-finite values print as "—".
pub fn fmt_sig(x: f64, digits: u32) -> String {
    if !x.is_finite() {
        return "—".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    let digits = digits.clamp(1, 6) as i32;
    let a = x.abs();
    if !(1e-4..1e7).contains(&a) {
        let s = format!("{:.*e}", (digits - 1) as usize, x);
        // "1.200e7" -> "1.2e7"
        return match s.split_once('e') {
            Some((m, e)) if m.contains('.') => format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.')),
            _ => s,
        };
    }
    let magnitude = libm::floor(libm::log10(a)) as i32; // 1265 -> 3
    let decimals = digits - 1 - magnitude;
    let s = if decimals >= 0 {
        format!("{x:.*}", decimals as usize)
    } else {
        // Large integers: round away the digits beyond the significant ones (123456 -> 123500).
        let step = libm::pow(10.0, -decimals as f64);
        format!("{:.0}", libm::round(x / step) * step)
    };
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if s == "-0" { "0".into() } else { s }
}

/// A number with its unit as people read it: "26.45 ms", "38%" (no space before %), the bare
/// number when there is no unit.
pub fn fmt_unit(x: f64, unit: &str) -> String {
    match unit.trim() {
        "" => fmt4(x),
        "%" => format!("{}%", fmt4(x)),
        u => format!("{} {u}", fmt4(x)),
    }
}

/// A full-precision number as written by `format_best` (or any text) shown to people: a number
/// is rounded by [`fmt4`], anything else is returned unchanged ("null" -> "—").
pub fn readable(raw: &str) -> String {
    match raw.trim() {
        "null" => "—".into(),
        t => t.parse::<f64>().map(fmt4).unwrap_or_else(|_| raw.to_string()),
    }
}

/// A metric's value as the UI shows it: four significant digits, a percentage for fractions.
pub fn fmt_metric(id: &str, x: f64) -> String {
    if info(id).percent { format!("{}%", fmt4(x * 100.0)) } else { fmt4(x) }
}

/// Whether going from `before` to `after` is better for this metric (None: equal or unknown
/// direction). `higher_is_better` from the study's metric wins over the registry when given.
pub fn is_better(higher_is_better: bool, before: f64, after: f64) -> Option<bool> {
    if before == after || !before.is_finite() || !after.is_finite() {
        return None;
    }
    Some((after > before) == higher_is_better)
}

/// How `tunelab run --json` prints `best`: serde_json's number formatting (the app's DOM shows
/// exactly this string, so browser tests can compare it with the CLI's).
pub fn format_best(v: f64) -> String {
    serde_json::to_string(&v).unwrap_or_else(|_| "null".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_significant_digits() {
        assert_eq!(fmt4(1265.273496037568), "1265");
        assert_eq!(fmt4(43.71234), "43.71");
        assert_eq!(fmt4(0.00123456), "0.001235");
        assert_eq!(fmt4(-2.5), "-2.5");
        assert_eq!(fmt4(12_345_678.0), "1.235e7");
        assert_eq!(fmt4(f64::NAN), "—");
        assert_eq!(fmt_metric("rel_error", 0.1234), "12.34%");
    }

    #[test]
    fn never_more_than_the_asked_significant_digits() {
        assert_eq!(fmt4(1063.7420810687952), "1064");
        assert_eq!(fmt4(123_456.7), "123500");
        assert_eq!(fmt4(9_999.96), "10000");
        assert_eq!(fmt4(0.000_05), "5e-5");
        assert_eq!(fmt4(-0.000_01), "-1e-5");
        assert_eq!(fmt4(1.0e-9 - 1.0e-9), "0");
        assert_eq!(fmt_sig(1234.5, 3), "1230");
        assert_eq!(fmt_sig(0.012345, 2), "0.012");
        assert_eq!(fmt_unit(26.4512, "ms"), "26.45 ms");
        assert_eq!(fmt_unit(38.0, "%"), "38%");
        assert_eq!(readable("1063.7420810687952"), "1064");
        assert_eq!(readable("null"), "—");
        assert_eq!(readable("none yet"), "none yet");
        // Whatever the magnitude, at most four significant digits reach the screen.
        for e in -12..14 {
            for m in [1.0, 1.23456789, 9.99951, 5.5555555] {
                let s = fmt4(m * 10f64.powi(e));
                let mantissa = s.split('e').next().unwrap().replace(['-', '.'], "");
                let sig = mantissa.trim_start_matches('0');
                let sig = if s.contains('.') || s.contains('e') { sig } else { sig.trim_end_matches('0') };
                assert!(sig.len() <= 4, "{m}e{e} -> {s}");
            }
        }
    }

    #[test]
    fn every_stage_metric_has_a_label_unit_and_meaning() {
        for id in ["tokens_per_s", "ttft_ms", "tpot_ms", "tokens_per_s_per_chip", "memory_gib", "energy_j_per_token", "rel_error", "power_w", "utilisation", "model_time_ms", "energy_j"] {
            let i = info(id);
            assert_eq!(i.id, id, "{id} is not in the registry");
            assert!(!i.meaning.is_empty() && !i.label.is_empty());
        }
        assert_eq!(label("some_new_metric"), "some new metric");
        // One unit per metric whatever a stage reported, a percentage's head without one.
        assert_eq!(label_unit("energy_j_per_token", "J"), "Energy per token (J/token)");
        assert_eq!(label_unit("tokens_per_s_per_chip", "tok/s"), "Throughput per chip (tokens/s)");
        assert_eq!(label_unit("mfu", ""), "MFU");
        assert_eq!(label_unit("some_new_metric", "widgets"), "some new metric (widgets)");
        assert_eq!(csv_head("energy_j_per_token", "J"), "energy_j_per_token (J/token)");
        assert_eq!(csv_head("mfu", ""), "mfu (fraction)");
        assert_eq!(value_unit("mfu", 0.16134, ""), "16.13%");
        assert_eq!(value_unit("model_time_ms", 18.99898052215576, "ms"), "19 ms");
        assert_eq!(label("f"), "Function value");
        assert_eq!(label_unit("time", "ms"), "Kernel time (ms)");
        assert_eq!(is_better(true, 1.0, 2.0), Some(true));
        assert_eq!(is_better(false, 1.0, 2.0), Some(false));
    }
}

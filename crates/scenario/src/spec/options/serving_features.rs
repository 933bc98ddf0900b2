//! Serving options a scenario states beyond the scheduler basics (`deployment.serving.*`):
//! speculative decoding, the KV-cache type, a prefix-cache hit rate, a bundled dataset's
//! lengths and a cap on requests in flight. Plain data with validation that names the field;
//! the stage reads them (`stages::serving_features`).

use serde::{Deserialize, Serialize};

/// `deployment.serving.speculative`: speculative decoding (absent: off).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SpeculativeOptions {
    /// "eagle", "eagle3" or "mtp" (the checkpoint's own next-token layers).
    pub method: String,
    /// Draft tokens per verify step to consider (the space's `num_speculative_tokens`; the
    /// first is the baseline).
    pub num_speculative_tokens: Vec<i64>,
    /// Per-token acceptance probability (0..1).
    pub acceptance_rate: Option<f64>,
    /// Or the mean accept length (tokens per verify step, as SGLang and vLLM log it) at the
    /// first `num_speculative_tokens`; the acceptance rate is solved from it.
    pub accept_length: Option<f64>,
    /// The prompt dataset whose published accept length is the default ("random",
    /// "sharegpt", "mt_bench", "gsm8k", "humaneval"; assets/constants/speculative.json);
    /// empty: the serving dataset, else "random".
    pub dataset: String,
    /// EAGLE-3's draft vocabulary (`draft_vocab_size`; default 32000 for eagle3, else the
    /// target's).
    pub draft_vocab: Option<u64>,
    /// MTP modules used (`num_nextn_predict_layers`).
    pub mtp_layers: u64,
}

impl Default for SpeculativeOptions {
    fn default() -> Self {
        SpeculativeOptions { method: "eagle3".into(), num_speculative_tokens: vec![3], acceptance_rate: None, accept_length: None, dataset: String::new(), draft_vocab: None, mtp_layers: 1 }
    }
}

impl SpeculativeOptions {
    /// Checks every field, naming the one at fault.
    pub fn validate(&self) -> Result<(), String> {
        let f = "deployment.serving.speculative";
        tunelab_sim::workload::speculative::SpecMethod::parse(&self.method).map_err(|e| format!("{f}.method: {e}"))?;
        let max = tunelab_sim::workload::speculative::MAX_SPECULATIVE_TOKENS as i64;
        if self.num_speculative_tokens.is_empty() {
            return Err(format!("{f}.num_speculative_tokens: give at least one value (1..={max})"));
        }
        if let Some(k) = self.num_speculative_tokens.iter().find(|k| !(1..=max).contains(*k)) {
            return Err(format!("{f}.num_speculative_tokens: {k} must be in 1..={max}"));
        }
        if let Some(a) = self.acceptance_rate {
            if !(a.is_finite() && (0.0..=1.0).contains(&a)) {
                return Err(format!("{f}.acceptance_rate: {a} must be within 0..1 (the chance a draft token is accepted)"));
            }
        }
        if let Some(l) = self.accept_length {
            let k = self.num_speculative_tokens[0];
            if !(l.is_finite() && l >= 1.0 && l <= (k + 1) as f64) {
                return Err(format!("{f}.accept_length: {l} must be within [1, {}] (tokens per verify step with {k} draft tokens)", k + 1));
            }
        }
        if self.acceptance_rate.is_some() && self.accept_length.is_some() {
            return Err(format!("{f}: give acceptance_rate or accept_length, not both"));
        }
        if let Some(v) = self.draft_vocab {
            if v == 0 || v > tunelab_sim::model::MAX_VOCAB {
                return Err(format!("{f}.draft_vocab: {v} must be in 1..={}", tunelab_sim::model::MAX_VOCAB));
            }
        }
        if !(1..=8).contains(&self.mtp_layers) {
            return Err(format!("{f}.mtp_layers: {} must be in 1..=8", self.mtp_layers));
        }
        Ok(())
    }
}

/// Checks the other serving options (`kv_cache_dtype`, `prefix_cache_hit_rate`, `dataset`,
/// `max_concurrency`), naming the field at fault.
pub fn validate_features(kv_cache_dtype: &str, prefix_cache_hit_rate: f64, dataset: &str, max_concurrency: Option<u64>) -> Result<(), String> {
    let f = "deployment.serving";
    if !matches!(kv_cache_dtype, "auto" | "int8") {
        return Err(format!("{f}.kv_cache_dtype: expected auto or int8 (C8), got '{}'", crate::scenario::clip(kv_cache_dtype)));
    }
    if !(prefix_cache_hit_rate.is_finite() && (0.0..1.0).contains(&prefix_cache_hit_rate)) {
        return Err(format!("{f}.prefix_cache_hit_rate: {prefix_cache_hit_rate} must be within [0, 1) (the share of prompt tokens found cached)"));
    }
    if !dataset.is_empty() && !tunelab_sim::workload::datasets::names().iter().any(|d| d == dataset) {
        return Err(format!(
            "{f}.dataset: unknown dataset '{}' (known: {})",
            crate::scenario::clip(dataset),
            tunelab_sim::workload::datasets::names().join(", ")
        ));
    }
    if max_concurrency == Some(0) {
        return Err(format!("{f}.max_concurrency: must be at least 1"));
    }
    Ok(())
}

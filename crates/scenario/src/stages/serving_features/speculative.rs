//! Speculative decoding in the deployment stage: a scenario's `deployment.serving.speculative`
//! resolved into `SpecDecode` for one number of draft tokens, and the draft's step pricer.
//!
//! How a step is priced (`scheduler::price::StepPricer::step`): every decoding sequence runs the
//! draft k times (one token row each, attention over its cache) and the target verifies k + 1
//! positions (k + 1 token rows through the linear layers, a k + 1-query attention over the
//! cache, k + 1 LM-head rows). The scheduler advances one token per sequence per step, so a
//! decoding sequence's share of the priced step is divided by the accept length: one simulated
//! step is 1 / E of a verify step, TPOT is per accepted token, and throughput counts accepted
//! tokens.

use crate::scheduler::ServingSpec;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;
use tunelab_sim::workload::speculative::{acceptance_for_length, SpecDecode, SpecMethod};

const SPEC_JSON: &str = tunelab_sim::json_asset!("../../../../../assets/constants/speculative.json");

#[derive(Deserialize)]
struct Default_ {
    accept_length: f64,
    num_speculative_tokens: u64,
}

#[derive(Deserialize)]
struct File {
    defaults: BTreeMap<String, BTreeMap<String, Default_>>,
}

fn defaults() -> &'static Result<BTreeMap<String, BTreeMap<String, (f64, u64)>>, String> {
    static D: OnceLock<Result<BTreeMap<String, BTreeMap<String, (f64, u64)>>, String>> = OnceLock::new();
    D.get_or_init(|| {
        let f: File = serde_json::from_str(SPEC_JSON).map_err(|e| format!("speculative.json: {e}"))?;
        Ok(f.defaults.into_iter().map(|(m, d)| (m, d.into_iter().map(|(k, v)| (k, (v.accept_length, v.num_speculative_tokens))).collect())).collect())
    })
}

/// EAGLE-3's published drafts' LM head (`draft_vocab_size` in their config.json).
const EAGLE3_DRAFT_VOCAB: u64 = 32_000;

/// The per-token acceptance rate a spec states or implies: the rate itself, or solved from the
/// accept length at the first listed number of draft tokens, or the published default for the
/// method and dataset.
pub fn acceptance(spec: &ServingSpec) -> Result<Option<(f64, String)>, String> {
    let Some(o) = &spec.speculative else { return Ok(None) };
    let f = "deployment.serving.speculative";
    if let Some(a) = o.acceptance_rate {
        return Ok(Some((a, "acceptance_rate as set".into())));
    }
    let k0 = o.num_speculative_tokens.first().copied().unwrap_or(1).max(1) as u64;
    if let Some(l) = o.accept_length {
        let a = acceptance_for_length(l, k0).map_err(|e| format!("{f}.accept_length: {e}"))?;
        return Ok(Some((a, format!("solved from accept length {l} at {k0} draft tokens"))));
    }
    let method = SpecMethod::parse(&o.method).map_err(|e| format!("{f}.method: {e}"))?;
    let dataset = if !o.dataset.is_empty() { o.dataset.clone() } else if !spec.dataset.is_empty() { spec.dataset.clone() } else { "random".into() };
    let all = defaults().as_ref().map_err(|e| e.clone())?;
    let table = all.get(method.name()).ok_or_else(|| format!("{f}.method: no published defaults for '{}'", method.name()))?;
    let (len, k) = table.get(&dataset).copied().ok_or_else(|| {
        format!("{f}.dataset: no published accept length for '{dataset}' with {} (known: {}); set acceptance_rate", method.name(), table.keys().cloned().collect::<Vec<_>>().join(", "))
    })?;
    let a = acceptance_for_length(len, k).map_err(|e| format!("speculative.json: {e}"))?;
    Ok(Some((a, format!("default for {} on {dataset}: accept length {len} at {k} draft tokens (assets/constants/speculative.json)", method.name()))))
}

/// The resolved setting for `k` draft tokens (None: speculative decoding off).
pub fn resolve(spec: &ServingSpec, k: u64) -> Result<Option<SpecDecode>, String> {
    let Some(o) = &spec.speculative else { return Ok(None) };
    let Some((a, _)) = acceptance(spec)? else { return Ok(None) };
    let method = SpecMethod::parse(&o.method).map_err(|e| format!("deployment.serving.speculative.method: {e}"))?;
    let draft_vocab = o.draft_vocab.unwrap_or(if method == SpecMethod::Eagle3 { EAGLE3_DRAFT_VOCAB } else { 0 });
    let s = SpecDecode { method, num_speculative_tokens: k, acceptance_rate: a, draft_vocab, mtp_layers: o.mtp_layers };
    s.validate("deployment.serving.speculative")?;
    Ok(Some(s))
}

/// The numbers of draft tokens the space offers (the first is the baseline).
pub fn token_levels(spec: &ServingSpec) -> Vec<i64> {
    spec.speculative.as_ref().map(|o| o.num_speculative_tokens.clone()).unwrap_or_default()
}

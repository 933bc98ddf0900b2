//! Serving-engine releases as data (`assets/engines/releases.json`): each release's defaults
//! (graph capture mode, async scheduling, chunked prefill, token budget) and any host cost that
//! differs from the engine's block in serving-host.json (which describes the engine's baseline
//! release). `deployment.serving.engine_version` picks one; absent, the baseline, so a scenario
//! written before releases existed prices exactly as it did.

use serde::Deserialize;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The bundled releases file.
pub const RELEASES_JSON: &str = tunelab_sim::json_asset_lean!("../../../../../assets/engines/releases.json");

/// One release's defaults (None: as the engine's block in serving-host.json says).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReleaseDefaults {
    #[serde(default)]
    pub graph_mode: Option<String>,
    #[serde(default)]
    pub async_scheduling: Option<bool>,
    #[serde(default)]
    pub chunked_prefill: Option<String>,
    /// The token budget per step: [on a device under 70 GiB, on one of 70 GiB or more].
    #[serde(default)]
    pub max_num_batched_tokens: Option<[i64; 2]>,
    /// Which decode batches get a captured graph: "max_num_seqs" (the ceiling follows
    /// max_num_seqs, `stages::scheduler::HostCosts::capture_tokens`) or "fixed".
    #[serde(default)]
    pub graph_capture: Option<String>,
    /// The release casts BF16/FP16 linear weights to FRACTAL_NZ at load (vLLM-Ascend
    /// v0.11.0rc1-rc2, and v0.12.0rc1 which is not a release here: VLLM_ASCEND_ENABLE_NZ=1 did so), priced by
    /// serving-host.json `float_nz_linear_factor` (`stages::scheduler::weight_format`).
    #[serde(default)]
    pub float_weight_nz: Option<bool>,
}

/// One release of an engine.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct Release {
    #[serde(default)]
    pub vllm: Option<String>,
    #[serde(default)]
    pub defaults: ReleaseDefaults,
    #[serde(default)]
    pub defaults_source: String,
    /// Host costs that differ from serving-host.json's engine block: field -> {value, source}.
    #[serde(default)]
    pub host: BTreeMap<String, Json>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct EngineReleases {
    pub baseline: String,
    pub newest: String,
    #[serde(default)]
    pub newest_source: String,
    pub releases: BTreeMap<String, Release>,
}

#[derive(Deserialize)]
struct File {
    engines: BTreeMap<String, EngineReleases>,
}

/// Every engine's releases (parsed once; a malformed bundled file is a build-time mistake the
/// tests catch).
pub fn all() -> &'static BTreeMap<String, EngineReleases> {
    static ALL: OnceLock<BTreeMap<String, EngineReleases>> = OnceLock::new();
    ALL.get_or_init(|| serde_json::from_str::<File>(RELEASES_JSON).map(|f| f.engines).unwrap_or_default())
}

/// The release `version` of `engine` ("" = the engine's baseline), or an error naming the field
/// and the releases there are. None: the engine has no releases in the file (its one block).
pub fn release(engine: &str, version: &str) -> Result<Option<(&'static str, &'static Release)>, String> {
    let Some(e) = all().get(engine) else {
        if version.is_empty() {
            return Ok(None);
        }
        return Err(format!("deployment.serving.engine_version: engine '{}' has no releases in assets/engines/releases.json (leave engine_version empty)", crate::spec::scenario::clip(engine)));
    };
    let v = if version.is_empty() { e.baseline.as_str() } else { version.trim().trim_start_matches('v') };
    match e.releases.get_key_value(v) {
        Some((k, r)) => Ok(Some((k.as_str(), r))),
        None => Err(format!(
            "deployment.serving.engine_version: '{}' is not a release of {engine} (known: {}; newest {})",
            crate::spec::scenario::clip(version),
            e.releases.keys().cloned().collect::<Vec<_>>().join(", "),
            e.newest
        )),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_bundled_releases_parse_and_name_their_baseline_and_newest() {
        let all = super::all();
        assert!(all.contains_key("vllm-ascend"), "releases.json parses");
        for (name, e) in all {
            assert!(e.releases.contains_key(&e.baseline), "{name}: baseline {} is a release", e.baseline);
            assert!(e.releases.contains_key(&e.newest), "{name}: newest {} is a release", e.newest);
            for (v, r) in &e.releases {
                assert!(!r.defaults_source.is_empty(), "{name} {v}: every release names its sources");
            }
        }
        assert_eq!(super::release("vllm-ascend", "").unwrap().unwrap().0, "0.23");
        assert_eq!(super::release("vllm-ascend", "v0.9").unwrap().unwrap().0, "0.9");
        let e = super::release("vllm-ascend", "0.5").unwrap_err();
        assert!(e.contains("engine_version") && e.contains("0.11"), "{e}");
        assert!(super::release("generic", "").unwrap().is_none());
        assert!(super::release("generic", "1.0").is_err());
    }
}

//! `scenario.landscape`: where a landscape stage's surface comes from (a Kernel Tuner cache,
//! bundled or dropped, or a toy function on a grid), its bounds and its validation. Plain data:
//! the landscape stage (`stages::landscape`) loads and races what this names.

use crate::spec::scenario::{clip, Scenario, Stage};
use serde::{Deserialize, Serialize};

/// The toy functions the landscape stage defines (`stages::landscape::TOY_FUNCTIONS` has their
/// formulas; a test there keeps the two lists equal).
pub const TOY_FUNCTION_NAMES: &[&str] = &["branin", "rastrigin", "rosenbrock", "himmelblau", "ackley", "schwefel"];

/// Where a landscape comes from (the scenario's `landscape` field).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum LandscapeSource {
    /// Real measurements: a Kernel Tuner cache file.
    KernelTuner(KernelTunerSource),
    /// A 2-D analytic function on a grid.
    Toy(ToySpec),
}

/// Which Kernel Tuner cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum KernelTunerSource {
    /// One of the caches shipped with Tunelab (`BUNDLED_CACHES`), by name.
    Bundled(String),
    /// A file the user supplied; only its identity is recorded.
    Dropped(DroppedCache),
}

/// The identity of a user's cache file: enough to ask for it again and recognise it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DroppedCache {
    /// The file name as the user had it (shown, never used as a path by the engine).
    pub name: String,
    /// SHA-256 (64 lower-case hex digits) of the cache's JSON text after gunzip (`digest`).
    pub digest: String,
    /// Cached configurations (failed ones included), shown in the "drop it again" message.
    pub configs: usize,
}

/// A 2-D analytic landscape evaluated on an `resolution` x `resolution` grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToySpec {
    /// One of `TOY_FUNCTIONS`.
    pub function: String,
    /// Grid points per axis (`MIN_RESOLUTION..=MAX_RESOLUTION`).
    #[serde(default = "default_resolution")]
    pub resolution: usize,
}

fn default_resolution() -> usize {
    64
}

/// The caches shipped in assets/kernel-tuner/: (name a scenario uses, file name, SHA-256 of its
/// JSON text as `cache_digest` computes it). The app fetches the file as a static asset and the
/// CLI reads it; neither is compiled into the engine. The digest makes a link to a bundled cache
/// reproduce exactly: a stale or different file is refused instead of raced.
pub const BUNDLED_CACHES: &[(&str, &str, &str)] = &[
    ("convolution_MI250X", "convolution_MI250X.json.gz", "9828d4e117c5df867f984a02552f0dc6a91e8a63d1766da66f37888fdb5336e3"),
    ("convolution_RTX_2080_Ti", "convolution_RTX_2080_Ti.json", "8208844592da02652581c113b13328709210d36d41512b1226d24a5ab0e14b7e"),
    ("gemm_RTX_3060_laptop", "gemm_RTX_3060_laptop.json.gz", "b04247ffff3a09a7a16a4adbf14f535b28db4b22097df09f8310689313722b5e"),
    ("pnpoly_RTX_2080_Ti", "pnpoly_RTX_2080_Ti.json.gz", "27892b9bc4c29b7500829f45893771d5c567bd47efa11531a94934cd63113d0b"),
];

/// The file name of a bundled cache.
pub fn bundled_file(name: &str) -> Option<&'static str> {
    BUNDLED_CACHES.iter().find(|b| b.0 == name).map(|b| b.1)
}

/// The recorded digest of a bundled cache.
pub fn bundled_digest(name: &str) -> Option<&'static str> {
    BUNDLED_CACHES.iter().find(|b| b.0 == name).map(|b| b.2)
}

/// Fewest and most grid points per axis of a toy landscape. The upper bound keeps the whole
/// surface cheap to evaluate and to draw (256 x 256 = 65,536 points).
pub const MIN_RESOLUTION: usize = 2;
pub const MAX_RESOLUTION: usize = 256;
/// Longest file name recorded for a dropped cache.
pub const MAX_NAME_CHARS: usize = 200;

pub fn unknown_function(name: &str) -> String {
    format!("landscape.toy.function: no toy function '{}' (there are {})", clip(name), TOY_FUNCTION_NAMES.join(", "))
}

pub fn source_of(s: &Scenario) -> Result<&LandscapeSource, String> {
    s.landscape.as_ref().ok_or_else(|| {
        "landscape: the landscape stage needs a source: {\"kernel_tuner\": {\"bundled\": NAME}}, {\"kernel_tuner\": {\"dropped\": {...}}} or {\"toy\": {\"function\": NAME, \"resolution\": N}}".to_string()
    })
}

/// Checks a source's fields (names, sizes, digest form); messages name the field.
pub fn check_source(src: &LandscapeSource) -> Result<(), String> {
    match src {
        LandscapeSource::Toy(t) => {
            if !TOY_FUNCTION_NAMES.contains(&t.function.as_str()) {
                return Err(unknown_function(&t.function));
            }
            if !(MIN_RESOLUTION..=MAX_RESOLUTION).contains(&t.resolution) {
                return Err(format!("landscape.toy.resolution: must be between {MIN_RESOLUTION} and {MAX_RESOLUTION} points per axis, got {}", t.resolution));
            }
        }
        LandscapeSource::KernelTuner(KernelTunerSource::Bundled(n)) => {
            if bundled_file(n).is_none() {
                let known: Vec<&str> = BUNDLED_CACHES.iter().map(|b| b.0).collect();
                return Err(format!("landscape.kernel_tuner.bundled: no bundled cache '{}' (bundled: {}); drop your own file instead", clip(n), known.join(", ")));
            }
        }
        LandscapeSource::KernelTuner(KernelTunerSource::Dropped(d)) => {
            if d.name.trim().is_empty() || d.name.chars().count() > MAX_NAME_CHARS {
                return Err(format!("landscape.kernel_tuner.dropped.name: a file name of 1 to {MAX_NAME_CHARS} characters"));
            }
            if d.digest.len() != 64 || !d.digest.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
                return Err(format!("landscape.kernel_tuner.dropped.digest: expected 64 lower-case hex digits (SHA-256), got '{}'", clip(&d.digest)));
            }
            if d.configs == 0 {
                return Err("landscape.kernel_tuner.dropped.configs: a cache has at least one configuration".into());
            }
        }
    }
    Ok(())
}

/// Validation of the scenario's landscape part (called from `Scenario::validate`).
pub fn validate(s: &Scenario) -> Result<(), String> {
    if s.stage != Stage::Landscape {
        return Ok(());
    }
    check_source(source_of(s)?)?;
    // A cache may be sliced (`space` entries keep some of its configurations, checked against
    // the cache when it is loaded: `stages::landscape::slice_space`); a toy's grid is drawn whole.
    if !s.space.is_empty() && matches!(s.landscape, Some(LandscapeSource::Toy(_))) {
        return Err("space: a toy landscape is drawn whole on its grid; 'space' entries slice Kernel Tuner caches only".into());
    }
    Ok(())
}

/// The goal metric of a landscape scenario without loading it (the cache's objective is
/// "time", minimised, for every cache Kernel Tuner writes by default; a toy's is "f").
pub fn goal_metric(s: &Scenario) -> &'static str {
    match s.landscape {
        Some(LandscapeSource::Toy(_)) => "f",
        _ => "time",
    }
}


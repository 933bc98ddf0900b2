//! The knowledge base: tuned cases kept with a fingerprint of model, chip and stage, found again
//! for similar problems, used to warm-start new searches, and moved between machines as
//! self-contained packages that carry their own checksum.
//!
//! Why plain serde data: the browser keeps the whole base in localStorage as one JSON string, and
//! the CLI writes the same string to a file. Loading never fails hard: a corrupt store is reported
//! and set aside (returned as text so the app can offer it for download) and an empty base is used.
//!
//! The checksum is FNV-1a (64-bit, Fowler/Noll/Vo) over canonical JSON (object keys sorted, no
//! whitespace), written here so that it is identical natively and in WebAssembly. It detects
//! accidental corruption and casual edits; it is not a cryptographic signature and says so.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use tunelab_search::{Config, Metric, Space, Trial, TrialState, Value};

/// Version tag of the stored base and of packages.
pub const KB_FORMAT: &str = "tunelab-kb/1";
pub const PACKAGE_FORMAT: &str = "tunelab-package/1";
/// Largest package or store accepted (the browser's localStorage holds about 5 MB).
pub const MAX_BYTES: usize = 8 * 1024 * 1024;
/// Most earlier configurations a warm start transfers; the run owns the bound (`run::WARM_LIMIT`).
pub use crate::run::WARM_LIMIT;

/// What a case is about: similarity search compares these.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// Model name, e.g. `Llama-2-7B`.
    pub model: String,
    /// `llm`, `moe`, `diffusion`, `multimodal`.
    pub family: String,
    /// Parameter count in billions (0 when unknown).
    #[serde(default)]
    pub params_b: f64,
    /// Chip name, e.g. `910B2`.
    pub chip: String,
    /// `operator`, `deployment`, `training`, `runtime`.
    pub stage: String,
}

impl Fingerprint {
    /// Similarity in [0, 1]: zero across stages (their spaces differ); otherwise half model
    /// (same name 1, same family scaled by size ratio, else 0.1) and half chip (same name 1,
    /// same generation prefix such as `910B` 0.7, else 0.2).
    pub fn similarity(&self, other: &Fingerprint) -> f64 {
        if !self.stage.eq_ignore_ascii_case(&other.stage) {
            return 0.0;
        }
        let model = if self.model.eq_ignore_ascii_case(&other.model) {
            1.0
        } else if self.family.eq_ignore_ascii_case(&other.family) {
            let (a, b) = (self.params_b.max(1e-3), other.params_b.max(1e-3));
            0.3 + 0.6 * libm::exp(-libm::fabs(libm::log(a / b)))
        } else {
            0.1
        };
        let chip = if self.chip.eq_ignore_ascii_case(&other.chip) {
            1.0
        } else if chip_generation(&self.chip) == chip_generation(&other.chip) {
            0.7
        } else {
            0.2
        };
        0.5 * model + 0.5 * chip
    }
}

/// "910B2" -> "910B", "310P3" -> "310P", "910" -> "910": the chip generation (the leading
/// digits and the character after them). Works on characters, not bytes, so any Unicode name
/// ("昇腾910B2", "é") is safe (issue 13 #2).
fn chip_generation(chip: &str) -> String {
    let mut out = String::new();
    for ch in chip.trim().chars().flat_map(|c| c.to_uppercase()) {
        out.push(ch);
        if !ch.is_ascii_digit() {
            break;
        }
    }
    out
}

/// One tuned case: enough to find it again, warm-start from it and reproduce it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Case {
    pub fingerprint: Fingerprint,
    #[serde(default)]
    pub title: String,
    /// The scenario JSON exactly as run (what the URL carries).
    pub scenario: Json,
    pub seed: u64,
    /// Parameter names of the space, in config order (so trials can be remapped by name).
    pub param_names: Vec<String>,
    pub metrics: Vec<Metric>,
    pub trials: Vec<Trial>,
    #[serde(default)]
    pub best_value: Option<f64>,
    #[serde(default)]
    pub best_config: Option<Config>,
}

/// A similar case with its score.
#[derive(Clone, Debug, PartialEq)]
pub struct Match<'a> {
    pub score: f64,
    pub case: &'a Case,
}

/// The stored base.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KnowledgeBase {
    #[serde(default = "kb_format")]
    pub format: String,
    #[serde(default)]
    pub cases: Vec<Case>,
}

fn kb_format() -> String {
    KB_FORMAT.into()
}

/// What loading a store gave: the base, and the corrupt text set aside with the reason.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    pub kb: KnowledgeBase,
    /// (reason, original text) when the store could not be read; the base is then empty.
    pub set_aside: Option<(String, String)>,
}

impl KnowledgeBase {
    /// An empty base.
    pub fn new() -> Self {
        KnowledgeBase { format: kb_format(), cases: Vec::new() }
    }

    /// Reads a stored base. Never fails: a corrupt or foreign store is set aside, with the reason.
    pub fn load(text: &str) -> Loaded {
        KnowledgeBase::load_reporting(text).0
    }

    /// `load`, with the keys the stored base carries that no field reads (`spec::strict`; the
    /// CLI warns, or refuses with `--strict`).
    pub fn load_reporting(text: &str) -> (Loaded, crate::spec::strict::Report) {
        let text = crate::spec::strict::strip_bom(text);
        let mut unknown = crate::spec::strict::Report::default();
        let aside = |why: String| Loaded { kb: KnowledgeBase::new(), set_aside: Some((why, text.to_string())) };
        if text.trim().is_empty() {
            return (Loaded { kb: KnowledgeBase::new(), set_aside: None }, unknown);
        }
        if text.len() > MAX_BYTES {
            return (aside(format!("the stored knowledge base is larger than {} MiB", MAX_BYTES >> 20)), unknown);
        }
        let loaded = match crate::spec::strict::from_str::<KnowledgeBase>(text, &[]) {
            Ok((kb, rep)) if kb.format == KB_FORMAT => {
                unknown = rep;
                Loaded { kb, set_aside: None }
            }
            Ok((kb, _)) => aside(format!("the stored knowledge base has format '{}', expected '{KB_FORMAT}'", crate::spec::scenario::clip(&kb.format))),
            Err(e) => aside(format!("the stored knowledge base is corrupt and was set aside: {}", crate::spec::strict::clip_error(&e.to_string()))),
        };
        (loaded, unknown)
    }

    /// The base as JSON, for localStorage or a file.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Adds a case, replacing an earlier one with the same fingerprint and seed.
    pub fn add(&mut self, case: Case) {
        self.cases.retain(|c| !(c.fingerprint == case.fingerprint && c.seed == case.seed));
        self.cases.push(case);
    }

    /// Cases similar to `fp` (score above `min_score`), best first; ties keep insertion order.
    pub fn similar(&self, fp: &Fingerprint, min_score: f64) -> Vec<Match<'_>> {
        let mut v: Vec<Match> = self
            .cases
            .iter()
            .map(|c| Match { score: fp.similarity(&c.fingerprint), case: c })
            .filter(|m| m.score > min_score)
            .collect();
        v.sort_by(|a, b| b.score.total_cmp(&a.score));
        v
    }

    /// Earlier trials for a new study over `space` with `metrics`, from the cases most similar to
    /// `fp`: remapped by parameter and metric name, kept only if they belong to the new space,
    /// at most `limit` (normally `WARM_LIMIT`), best cases first. Their values are the EARLIER
    /// scenario's: hand them to `Run::warm_start`, which keeps only the configurations and
    /// re-prices them on the new scenario.
    pub fn warm_trials(&self, fp: &Fingerprint, space: &Space, metrics: &[Metric], limit: usize) -> Vec<Trial> {
        let mut out: Vec<Trial> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for m in self.similar(fp, 0.5) {
            for t in &m.case.trials {
                if out.len() >= limit {
                    return out;
                }
                if let Some(t) = remap_trial(t, &m.case.param_names, &m.case.metrics, space, metrics) {
                    if seen.insert(t.config.clone()) {
                        out.push(t);
                    }
                }
            }
        }
        out
    }
}

/// A trial of one space expressed in another, by names; None when a parameter or metric is
/// missing or the point is outside the new space.
pub fn remap_trial(t: &Trial, names: &[String], metrics: &[Metric], space: &Space, new_metrics: &[Metric]) -> Option<Trial> {
    let mut values: Vec<Value> = Vec::with_capacity(space.names().len());
    for n in space.names() {
        let i = names.iter().position(|x| x == n)?;
        values.push(t.config.0.get(i)?.clone());
    }
    let config = Config(values);
    space.check(&config).ok()?;
    let vals = if t.state == TrialState::Ok {
        let mut v = Vec::with_capacity(new_metrics.len());
        for m in new_metrics {
            let i = metrics.iter().position(|x| x.name == m.name)?;
            v.push(*t.values.get(i)?);
        }
        v
    } else {
        Vec::new()
    };
    Some(Trial { id: 0, config, state: t.state, values: vals, reason: t.reason.clone(), warm: true, evaluation: 0 })
}

/// A self-contained, reproducible tuning package.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Package {
    pub format: String,
    /// Crate name -> version of the code that produced it.
    pub tool_versions: BTreeMap<String, String>,
    pub case: Case,
    /// The bit patterns (16 hex digits) of every float in the trials and the best, in order.
    /// serde_json's default parser may round a 17-digit decimal by one unit in the last place;
    /// these restore the exact values so that a reproduction can be compared bit for bit.
    #[serde(default)]
    pub exact_floats: Vec<String>,
    /// `fnv1a64:<16 hex>` over the canonical JSON of everything above.
    pub checksum: String,
}

/// Every float of a case that must survive a round trip exactly, in a fixed order.
fn case_floats(c: &mut Case) -> Vec<&mut f64> {
    let mut out: Vec<&mut f64> = Vec::new();
    for t in &mut c.trials {
        for v in &mut t.config.0 {
            if let Value::Float(f) = v {
                out.push(f);
            }
        }
        out.extend(t.values.iter_mut());
    }
    if let Some(b) = &mut c.best_value {
        out.push(b);
    }
    if let Some(cfg) = &mut c.best_config {
        for v in &mut cfg.0 {
            if let Value::Float(f) = v {
                out.push(f);
            }
        }
    }
    out
}

/// The versions written into packages.
pub fn tool_versions() -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    m.insert("tunelab-scenario".into(), env!("CARGO_PKG_VERSION").into());
    m.insert("kb-format".into(), KB_FORMAT.into());
    m
}

/// Exports a case as a package (pretty JSON with its checksum).
pub fn export_package(case: &Case) -> String {
    let mut case = case.clone();
    let exact_floats = case_floats(&mut case).into_iter().map(|f| format!("{:016x}", f.to_bits())).collect();
    let mut p = Package { format: PACKAGE_FORMAT.into(), tool_versions: tool_versions(), case, exact_floats, checksum: String::new() };
    p.checksum = package_checksum(&p);
    serde_json::to_string_pretty(&p).unwrap_or_default()
}

/// Imports a package: size, JSON shape, format and checksum are checked; a tampered or
/// malformed package is refused with a message that says which check failed.
pub fn import_package(text: &str) -> Result<Package, String> {
    import_package_reporting(text).map(|(p, _)| p)
}

/// `import_package`, with the keys the package carries that no field reads (its case's
/// scenario included, read as a scenario).
pub fn import_package_reporting(text: &str) -> Result<(Package, crate::spec::strict::Report), String> {
    let text = crate::spec::strict::strip_bom(text);
    if text.len() > MAX_BYTES {
        return Err(format!("package is larger than {} MiB", MAX_BYTES >> 20));
    }
    let (mut p, mut unknown): (Package, _) = crate::spec::strict::from_str(text, &[]).map_err(|e| format!("package is malformed: {}", crate::spec::strict::clip_error(&e.to_string())))?;
    if let Ok((_, r)) = crate::spec::strict::from_value::<crate::spec::scenario::Scenario>(&p.case.scenario, crate::spec::validate::RETIRED_SCENARIO_KEYS) {
        unknown.extend(r.prefixed("case.scenario"));
    }
    if p.format != PACKAGE_FORMAT {
        return Err(format!("package format '{}' is not supported (expected '{PACKAGE_FORMAT}')", p.format));
    }
    let exact = p.exact_floats.clone();
    let floats = case_floats(&mut p.case);
    if floats.len() != exact.len() {
        return Err(format!("package is malformed: {} numbers but {} exact encodings", floats.len(), exact.len()));
    }
    for (f, hex) in floats.into_iter().zip(&exact) {
        let bits = u64::from_str_radix(hex, 16).map_err(|_| format!("package is malformed: '{}' is not a 16-digit hex float", crate::spec::scenario::clip(hex)))?;
        let x = f64::from_bits(bits);
        let close = x.to_bits() == f.to_bits() || (x - *f).abs() <= 1e-12 * x.abs().max(f.abs());
        if !close {
            return Err(format!("package checksum mismatch: the value {f} does not match its exact encoding {x}; it was modified or damaged"));
        }
        *f = x;
    }
    let want = package_checksum(&p);
    if p.checksum != want {
        return Err(format!(
            "package checksum mismatch: it says {} but its content gives {want}; it was modified or damaged",
            p.checksum
        ));
    }
    let c = &p.case;
    if c.trials.iter().any(|t| t.config.len() != c.param_names.len()) {
        return Err("package is inconsistent: a trial has the wrong number of parameter values".into());
    }
    if c.trials.iter().any(|t| t.is_ok() && t.values.len() != c.metrics.len()) {
        return Err("package is inconsistent: a trial has the wrong number of metric values".into());
    }
    Ok((p, unknown))
}

/// The checksum of a package's content (the `checksum` field itself excluded).
pub fn package_checksum(p: &Package) -> String {
    let mut v = serde_json::to_value(p).unwrap_or(Json::Null);
    if let Json::Object(m) = &mut v {
        m.remove("checksum");
    }
    format!("fnv1a64:{:016x}", fnv1a64(canonical_json(&v).as_bytes()))
}

/// FNV-1a, 64-bit (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// JSON with object keys sorted at every level and no whitespace, independent of how the map
/// type orders keys.
pub fn canonical_json(v: &Json) -> String {
    let mut s = String::new();
    write_canonical(v, &mut s);
    s
}

fn write_canonical(v: &Json, out: &mut String) {
    match v {
        Json::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(k).unwrap_or_default());
                out.push(':');
                write_canonical(&m[k.as_str()], out);
            }
            out.push('}');
        }
        Json::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&serde_json::to_string(other).unwrap_or_default()),
    }
}

/// True when two trial lists agree bit for bit in configs, states and values (the test of an
/// exact reproduction).
pub fn same_trials(a: &[Trial], b: &[Trial]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.config == y.config
                && x.state == y.state
                && x.values.len() == y.values.len()
                && x.values.iter().zip(&y.values).all(|(p, q)| p.to_bits() == q.to_bits())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(model: &str, chip: &str) -> Fingerprint {
        Fingerprint { model: model.into(), family: "llm".into(), params_b: 7.0, chip: chip.into(), stage: "deployment".into() }
    }

    #[test]
    fn non_ascii_chip_and_model_names_never_abort() {
        // Issue 13 #2: slicing at a byte offset aborted on these.
        assert_eq!(chip_generation("昇腾910B2"), "昇");
        assert_eq!(chip_generation("é"), "É");
        assert_eq!(chip_generation("910B2"), "910B");
        assert_eq!(chip_generation("910é3"), "910É");
        assert_eq!(chip_generation(""), "");
        let a = fp("Llama-2-7B", "昇腾910B2");
        for other in ["é", "910B2", "昇腾910B3", "", "9é"] {
            let s = a.similarity(&fp("模型", other));
            assert!((0.0..=1.0).contains(&s), "{other}: {s}");
        }
        let mut kb = KnowledgeBase::new();
        kb.add(Case {
            fingerprint: fp("é", "é"),
            title: "é".into(),
            scenario: Json::Null,
            seed: 0,
            param_names: vec![],
            metrics: vec![],
            trials: vec![],
            best_value: None,
            best_config: None,
        });
        assert_eq!(kb.similar(&a, 0.0).len(), 1);
    }
}

//! The argument lists of serving-engine releases, as data (`assets/engines/flags/*.json`): every
//! `vllm serve` flag of a vLLM-Ascend release's vLLM, every `python -m sglang.launch_server`
//! flag of an SGLang release, the MindIE config.json fields of a MindIE release, each with its
//! source, and per release how it launches the features Tunelab tunes beyond plain flags (EPLB,
//! an INT8 KV cache: `features`). An export keyed on a release (`deployment.serving.
//! engine_version`) writes only what that release has; the rest is said in the notes
//! (`keep_known`).

use serde::Deserialize;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::sync::OnceLock;

const FILES: &[(&str, &str)] = &[
    ("vllm-ascend-0.9.json", tunelab_sim::json_asset!("../../../../../assets/engines/flags/vllm-ascend-0.9.json")),
    ("vllm-ascend-0.10.json", tunelab_sim::json_asset!("../../../../../assets/engines/flags/vllm-ascend-0.10.json")),
    ("vllm-ascend-0.11.json", tunelab_sim::json_asset!("../../../../../assets/engines/flags/vllm-ascend-0.11.json")),
    ("vllm-ascend-0.13.json", tunelab_sim::json_asset!("../../../../../assets/engines/flags/vllm-ascend-0.13.json")),
    ("vllm-ascend-0.17.json", tunelab_sim::json_asset!("../../../../../assets/engines/flags/vllm-ascend-0.17.json")),
    ("vllm-ascend-0.18.json", tunelab_sim::json_asset!("../../../../../assets/engines/flags/vllm-ascend-0.18.json")),
    ("vllm-ascend-0.20.json", tunelab_sim::json_asset!("../../../../../assets/engines/flags/vllm-ascend-0.20.json")),
    ("vllm-ascend-0.22.json", tunelab_sim::json_asset!("../../../../../assets/engines/flags/vllm-ascend-0.22.json")),
    ("vllm-ascend-0.23.json", tunelab_sim::json_asset!("../../../../../assets/engines/flags/vllm-ascend-0.23.json")),
    ("sglang-0.5.23.json", tunelab_sim::json_asset!("../../../../../assets/engines/flags/sglang-0.5.23.json")),
    ("mindie-2.x.json", tunelab_sim::json_asset!("../../../../../assets/engines/flags/mindie-2.x.json")),
];

/// How a release launches one feature: environment variables, flags (with `$REDUNDANT` standing
/// for the tuned count) and keys merged into `--additional-config`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Feature {
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub additional_config: Option<Json>,
    pub source: String,
}

/// One argument list (one file).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgList {
    pub schema: String,
    pub engine: String,
    /// The releases (`engine_version` keys of assets/engines/releases.json) it describes.
    pub engine_versions: Vec<String>,
    /// The release's name as its makers write it.
    pub release: String,
    pub program: String,
    pub scope: String,
    /// Command-line flags: flag -> where the release defines it.
    #[serde(default)]
    pub flags: BTreeMap<String, String>,
    /// Flags the release still parses but deprecates (never written).
    #[serde(default)]
    pub deprecated: BTreeMap<String, String>,
    /// `--additional-config` keys (dotted for nested ones) -> source.
    #[serde(default)]
    pub additional_config: BTreeMap<String, String>,
    /// Config-file fields (MindIE's config.json, dotted paths) -> source.
    #[serde(default)]
    pub fields: BTreeMap<String, String>,
    #[serde(default)]
    pub features: BTreeMap<String, Feature>,
}

impl ArgList {
    pub fn has(&self, flag: &str) -> bool {
        self.flags.contains_key(flag)
    }

    /// The feature's launch with `$REDUNDANT` replaced.
    pub fn feature(&self, name: &str, redundant: u64) -> Option<Feature> {
        let mut f = self.features.get(name)?.clone();
        let sub = |s: &str| s.replace("$REDUNDANT", &redundant.to_string());
        f.args = f.args.iter().map(|a| sub(a)).collect();
        if let Some(c) = &mut f.additional_config {
            replace_placeholder(c, redundant);
        }
        Some(f)
    }
}

fn replace_placeholder(v: &mut Json, n: u64) {
    match v {
        Json::String(s) if s == "$REDUNDANT" => *v = Json::from(n),
        Json::Object(m) => m.values_mut().for_each(|x| replace_placeholder(x, n)),
        Json::Array(a) => a.iter_mut().for_each(|x| replace_placeholder(x, n)),
        _ => {}
    }
}

/// Every bundled list, with its file name (a malformed file is a build-time mistake the tests
/// catch: `every_argument_list_parses_and_names_its_sources`).
pub fn all() -> &'static [(&'static str, ArgList)] {
    static ALL: OnceLock<Vec<(&'static str, ArgList)>> = OnceLock::new();
    ALL.get_or_init(|| FILES.iter().filter_map(|(name, text)| serde_json::from_str::<ArgList>(text).ok().map(|l| (*name, l))).collect())
}

/// A release's list: the one naming `version` or, when none does, the newest list of an older
/// release of the engine, else the oldest list (with `false`: the caller says so in its notes).
pub fn for_release(engine: &str, version: &str) -> Option<(&'static ArgList, bool)> {
    let lists = || all().iter().map(|(_, l)| l).filter(move |l| l.engine == engine);
    if let Some(l) = lists().find(|l| l.engine_versions.iter().any(|v| v == version)) {
        return Some((l, true));
    }
    let key = |v: &str| v.split('.').map(|p| p.parse::<u64>().unwrap_or(0)).collect::<Vec<_>>();
    let want = key(version);
    let newest = |l: &&ArgList| l.engine_versions.iter().map(|v| key(v)).max();
    lists().filter(|l| l.engine_versions.iter().any(|v| key(v) <= want)).max_by_key(newest).or_else(|| lists().min_by_key(newest)).map(|l| (l, false))
}

/// The releases an export targets: the scenario's own engine at its `engine_version` (absent:
/// that engine's baseline), the other engines at their baselines (SGLang: its newest list).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, Deserialize)]
pub struct Targets {
    pub vllm_ascend: String,
    pub mindie: String,
    pub sglang: String,
}

impl Targets {
    pub fn of(s: &crate::spec::scenario::Scenario) -> Targets {
        let spec = &s.deployment.serving;
        let pick = |engine: &str| -> String {
            let own = if spec.engine == engine { spec.engine_version.as_str() } else { "" };
            match crate::spec::options::releases::release(engine, own) {
                Ok(Some((k, _))) => k.to_string(),
                _ => crate::spec::options::releases::all().get(engine).map(|e| e.baseline.clone()).unwrap_or_default(),
            }
        };
        Targets { vllm_ascend: pick("vllm-ascend"), mindie: pick("mindie"), sglang: newest("sglang") }
    }
}

/// The newest release of `engine` with a bundled list.
pub fn newest(engine: &str) -> String {
    let key = |v: &str| v.split('.').map(|p| p.parse::<u64>().unwrap_or(0)).collect::<Vec<_>>();
    all().iter().filter(|(_, l)| l.engine == engine).flat_map(|(_, l)| l.engine_versions.iter()).max_by_key(|v| key(v)).cloned().unwrap_or_default()
}

/// `args` without the flags `list` lacks (each dropped with its values, the tokens up to the next
/// flag), each said in `notes`. The first token (the model) is kept.
pub fn keep_known(args: Vec<String>, list: &ArgList, notes: &mut Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut dropping = false;
    for (i, a) in args.into_iter().enumerate() {
        if a.starts_with("--") {
            dropping = !list.has(&a);
            if dropping {
                notes.push(format!("{a}: {} has no such argument (assets/engines/flags/), so the launch leaves it out", list.release));
            }
        } else if i == 0 {
            dropping = false;
        }
        if !dropping {
            out.push(a);
        }
    }
    out
}

/// Every dotted path of a JSON object's keys (an array's objects are named by the array).
pub fn paths(v: &Json) -> Vec<String> {
    fn walk(v: &Json, at: &str, out: &mut Vec<String>) {
        match v {
            Json::Object(m) => {
                for (k, x) in m {
                    let p = if at.is_empty() { k.clone() } else { format!("{at}.{k}") };
                    out.push(p.clone());
                    walk(x, &p, out);
                }
            }
            Json::Array(a) => a.iter().for_each(|x| walk(x, at, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, "", &mut out);
    out.sort();
    out.dedup();
    out
}

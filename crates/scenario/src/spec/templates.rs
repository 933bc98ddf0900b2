//! Strategy templates: ready starting points ("LLM inference on 910B, cloud") chosen from model
//! family x chip x scenario kind, each a plain JSON strategy file the user can read and edit.
//!
//! Why data, not code: the mission asks for editable strategy files, so a template is exactly the
//! JSON the user sees. The bundled ones are compiled in (`json_asset!`, without layout whitespace) because WebAssembly
//! has no filesystem; `parse_template` accepts an edited copy with the same checks.

use crate::spec::scenario::{ObjectiveSpec, Scenario, Stage, StrategySpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One objective of a template with its priority (a weight; the largest is the primary goal).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TemplateObjective {
    /// A metric name of the stage (e.g. `tokens_per_s`, `tpot_ms`, `memory_per_chip_gib`).
    pub metric: String,
    /// Relative importance, non-negative.
    #[serde(default = "one")]
    pub priority: f64,
}

fn one() -> f64 {
    1.0
}

/// Limits a template imposes. All optional; missing means "no limit".
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TemplateConstraints {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ttft_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tpot_ms: Option<f64>,
    /// Largest share of device memory a configuration may use (0..1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_fraction_max: Option<f64>,
    /// Largest relative output error a precision change may introduce (a user bound; the
    /// simulator does not compute numerical error, it gates precision choices by it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rel_error: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_power_w: Option<f64>,
}

/// An editable strategy file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Template {
    /// Stable identifier (file name without `.json`).
    pub name: String,
    pub title: String,
    #[serde(default)]
    pub description: String,
    /// Model families it suits: `llm`, `moe`, `diffusion`, `multimodal`, or `*`.
    pub model_families: Vec<String>,
    /// Chip name prefixes it suits (`910B` matches 910B1..B4), or `*`.
    pub devices: Vec<String>,
    /// `cloud` (throughput), `edge` (latency, power), `device` (memory), or `*`.
    pub scenario_kind: String,
    /// The tuning stage: `operator`, `deployment`, `training`, `runtime`.
    pub stage: String,
    /// A strategy registry name (`auto`, `genetic`, ...).
    pub strategy: String,
    #[serde(default)]
    pub strategy_options: serde_json::Value,
    /// Distinct evaluations.
    pub budget: usize,
    pub objectives: Vec<TemplateObjective>,
    #[serde(default)]
    pub constraints: TemplateConstraints,
    /// Stage options: `attention_fusion` (`off`: unfused attention and separate epilogues;
    /// `flash`: flash attention offered; `full`: flash attention and fused matmul epilogues),
    /// `launch` (`graph`/`eager`), `precisions` (a list), `mixed_precision` (training).
    #[serde(default)]
    pub options: BTreeMap<String, serde_json::Value>,
}

/// The scenario kinds and what each optimises first (for the app's picker).
pub const SCENARIO_KINDS: &[(&str, &str)] = &[
    ("cloud", "throughput"),
    ("edge", "latency and power"),
    ("device", "memory and size"),
];

const STAGES: &[&str] = &["operator", "deployment", "training", "runtime", "diffusion"];
const MAX_TEMPLATE_BYTES: usize = 64 * 1024;

/// Source text of the bundled templates, in tie-break order (earlier wins a tie).
const BUNDLED: &[(&str, &str)] = &[
    ("llm-910b-cloud", tunelab_sim::json_asset!("../../../../assets/templates/llm-910b-cloud.json")),
    ("moe-910b-cloud", tunelab_sim::json_asset!("../../../../assets/templates/moe-910b-cloud.json")),
    ("multimodal-910b-cloud", tunelab_sim::json_asset!("../../../../assets/templates/multimodal-910b-cloud.json")),
    ("diffusion-910b-cloud", tunelab_sim::json_asset!("../../../../assets/templates/diffusion-910b-cloud.json")),
    ("llm-310p-edge", tunelab_sim::json_asset!("../../../../assets/templates/llm-310p-edge.json")),
    ("diffusion-310p-edge", tunelab_sim::json_asset!("../../../../assets/templates/diffusion-310p-edge.json")),
    ("t2i-pipeline-310p-edge", tunelab_sim::json_asset!("../../../../assets/templates/t2i-pipeline-310p-edge.json")),
    ("t2i-pipeline-910b-cloud", tunelab_sim::json_asset!("../../../../assets/templates/t2i-pipeline-910b-cloud.json")),
    ("video-910b-8chips", tunelab_sim::json_asset!("../../../../assets/templates/video-910b-8chips.json")),
    ("llm-310b-device", tunelab_sim::json_asset!("../../../../assets/templates/llm-310b-device.json")),
    ("llm-910b-training", tunelab_sim::json_asset!("../../../../assets/templates/llm-910b-training.json")),
    ("generic", tunelab_sim::json_asset!("../../../../assets/templates/generic.json")),
];

/// Parses and checks a template file (an edited one too). The error names the problem.
pub fn parse_template(text: &str) -> Result<Template, String> {
    if text.len() > MAX_TEMPLATE_BYTES {
        return Err(format!("template is larger than {} KiB", MAX_TEMPLATE_BYTES / 1024));
    }
    let t: Template = serde_json::from_str(text).map_err(|e| format!("template is not valid JSON: {e}"))?;
    t.validate()?;
    Ok(t)
}

impl Template {
    /// Checks the fields a run relies on.
    pub fn validate(&self) -> Result<(), String> {
        let n = &self.name;
        if n.trim().is_empty() {
            return Err("template has an empty name".into());
        }
        if !STAGES.contains(&self.stage.as_str()) {
            return Err(format!("template '{n}': unknown stage '{}' ({})", self.stage, STAGES.join(", ")));
        }
        if self.budget == 0 || self.budget > 100_000 {
            return Err(format!("template '{n}': budget must be 1..100000, got {}", self.budget));
        }
        if self.strategy.trim().is_empty() {
            return Err(format!("template '{n}': no strategy"));
        }
        if self.objectives.is_empty() {
            return Err(format!("template '{n}': no objectives"));
        }
        for o in &self.objectives {
            if !(o.priority.is_finite() && o.priority >= 0.0) {
                return Err(format!("template '{n}': objective '{}' has priority {}, expected >= 0", o.metric, o.priority));
            }
        }
        let c = &self.constraints;
        for (k, v) in [("max_ttft_ms", c.max_ttft_ms), ("max_tpot_ms", c.max_tpot_ms), ("max_rel_error", c.max_rel_error), ("max_power_w", c.max_power_w)] {
            if let Some(x) = v {
                if !(x.is_finite() && x > 0.0) {
                    return Err(format!("template '{n}': constraint {k} must be positive, got {x}"));
                }
            }
        }
        if let Some(f) = c.memory_fraction_max {
            if !(f > 0.0 && f <= 1.0) {
                return Err(format!("template '{n}': memory_fraction_max must be in (0, 1], got {f}"));
            }
        }
        Ok(())
    }

    /// The template as pretty JSON, the editable strategy file.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The objectives sorted by priority, highest first (stable for equal priorities).
    pub fn ranked_objectives(&self) -> Vec<TemplateObjective> {
        let mut v = self.objectives.clone();
        v.sort_by(|a, b| b.priority.total_cmp(&a.priority));
        v
    }

    /// How well this template suits the request; None when the model family rules it out.
    /// Family weighs most, then scenario kind, then chip (a chip mismatch is tolerated so
    /// that a "device" request on a big chip still gets the memory-first template).
    pub fn match_score(&self, model_family: &str, device_name: &str, scenario_kind: &str) -> Option<u32> {
        let fam = match model_family.trim().to_ascii_lowercase().as_str() {
            // The simulator's family names map onto the template families.
            "dense_llm" => "llm".to_string(),
            "moe_llm" => "moe".to_string(),
            other => other.to_string(),
        };
        let family = if self.model_families.iter().any(|f| f.eq_ignore_ascii_case(&fam)) {
            4
        } else if self.model_families.iter().any(|f| f == "*") {
            1
        } else {
            return None;
        };
        let dev = device_name.trim().to_ascii_uppercase();
        let device = if self.devices.iter().any(|d| d != "*" && dev.starts_with(&d.to_ascii_uppercase())) {
            3
        } else if self.devices.iter().any(|d| d == "*") {
            1
        } else {
            0
        };
        let kind = if self.scenario_kind.eq_ignore_ascii_case(scenario_kind.trim()) {
            4
        } else if self.scenario_kind == "*" {
            1
        } else {
            0
        };
        Some(family + device + kind)
    }
}

/// Every bundled template, parsed. A bundled file that fails to parse is a build defect; it is
/// skipped here (never a panic) and caught by the tests.
pub fn bundled_templates() -> Vec<Template> {
    BUNDLED.iter().filter_map(|(_, src)| parse_template(src).ok()).collect()
}

/// The source text of a bundled template by name (what the app shows in its editor).
pub fn bundled_template_source(name: &str) -> Option<&'static str> {
    BUNDLED.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

/// Picks the best template for model family x chip x scenario kind. Always returns one: the
/// `generic` template matches anything.
pub fn pick_template(model_family: &str, device_name: &str, scenario_kind: &str) -> Template {
    pick_template_from(&bundled_templates(), model_family, device_name, scenario_kind, None)
        .unwrap_or_else(fallback)
}

/// Like `pick_template` over a given list, optionally restricted to one stage.
pub fn pick_template_from(
    list: &[Template],
    model_family: &str,
    device_name: &str,
    scenario_kind: &str,
    stage: Option<&str>,
) -> Option<Template> {
    let mut best: Option<(u32, &Template)> = None;
    for t in list {
        if stage.is_some_and(|s| s != t.stage) {
            continue;
        }
        if let Some(s) = t.match_score(model_family, device_name, scenario_kind) {
            if best.is_none_or(|(b, _)| s > b) {
                best = Some((s, t));
            }
        }
    }
    best.map(|(_, t)| t.clone())
}

/// Applies a template to a scenario: stage, strategy, budget, goals by priority, limits and
/// options. `device_memory_gib` turns `memory_fraction_max` into an absolute limit.
pub fn apply_template(t: &Template, s: &mut Scenario, device_memory_gib: Option<f64>) -> Result<(), String> {
    t.validate()?;
    s.stage = match t.stage.as_str() {
        "operator" => Stage::Operator,
        "training" => Stage::Training,
        "runtime" => Stage::Runtime,
        "diffusion" => Stage::Diffusion,
        _ => Stage::Deployment,
    };
    if s.stage == Stage::Diffusion {
        apply_diffusion(t, s)?;
    }
    s.strategy = StrategySpec { name: t.strategy.clone(), options: t.strategy_options.clone() };
    s.budget = t.budget;
    s.objectives = t
        .ranked_objectives()
        .into_iter()
        .map(|o| ObjectiveSpec { metric: o.metric, priority: o.priority, direction: None })
        .collect();
    let c = &t.constraints;
    s.constraints.max_ttft_ms = c.max_ttft_ms;
    s.constraints.max_tpot_ms = c.max_tpot_ms;
    s.constraints.max_power_w = c.max_power_w;
    // The deployment and operator stages report rel_error; the others cannot bound it.
    s.constraints.max_rel_error = if matches!(s.stage, Stage::Deployment | Stage::Operator) { c.max_rel_error } else { None };
    s.constraints.max_memory_gib = match (c.memory_fraction_max, device_memory_gib) {
        (Some(f), Some(m)) if m.is_finite() && m > 0.0 => Some(f * m),
        _ => None,
    };
    let opt_str = |k: &str| t.options.get(k).and_then(|v| v.as_str()).map(str::to_string);
    match opt_str("attention_fusion").as_deref() {
        Some("off") => (s.operator.fusion, s.operator.epilogue_fusion) = (false, false),
        Some("flash") => (s.operator.fusion, s.operator.epilogue_fusion) = (true, false),
        Some("full") => (s.operator.fusion, s.operator.epilogue_fusion) = (true, true),
        Some(other) => return Err(format!("template '{}': attention_fusion must be off, flash or full, got '{other}'", t.name)),
        None => {}
    }
    if let Some(l) = opt_str("launch") {
        s.deployment.launch_modes = vec![l];
    }
    if let Some(list) = t.options.get("precisions").and_then(|v| v.as_array()) {
        s.deployment.precisions = list.iter().filter_map(|x| x.as_str().map(str::to_string)).collect();
    }
    if let Some(p) = opt_str("mixed_precision") {
        s.training.precisions = vec![p];
    }
    // Serving settings (`deployment.serving` fields, merged over the scenario's own).
    if let Some(v) = t.options.get("serving") {
        let mut cur = serde_json::to_value(&s.deployment.serving).map_err(|e| e.to_string())?;
        if let (Some(cur), Some(new)) = (cur.as_object_mut(), v.as_object()) {
            for (k, x) in new {
                cur.insert(k.clone(), x.clone());
            }
        }
        let serving = <crate::spec::options::serving::ServingSpec as serde::Deserialize>::deserialize(&cur).map_err(|e| format!("template '{}': options.serving: {e}", t.name))?;
        serving.validate().map_err(|e| format!("template '{}': {e}", t.name))?;
        s.deployment.serving = serving;
    }
    Ok(())
}

/// A diffusion template's options: `pipeline` (the model when the scenario's is not a pipeline),
/// `diffusion` (fields of `scenario.diffusion`, merged), `unet_level` / `vae_level` (the seed's
/// optimisation levels, pinned as knob values: assets/constants/diffusion.json `levels`).
fn apply_diffusion(t: &Template, s: &mut Scenario) -> Result<(), String> {
    let field = |k: &str| format!("template '{}': options.{k}", t.name);
    let want = t.options.get("pipeline").and_then(|v| v.as_str()).unwrap_or("sd2.1-base");
    let video = tunelab_sim::workload::diffusers::Pipeline::load(want).map(|p| p.is_video()).map_err(|e| format!("{}: {e}", field("pipeline")))?;
    let current = match &s.model {
        crate::spec::scenario::ModelRef::Id(id) => tunelab_sim::workload::diffusers::Pipeline::load(id),
        crate::spec::scenario::ModelRef::Inline(j) => tunelab_sim::workload::diffusers::Pipeline::from_value(j),
    };
    let keep = current.is_ok_and(|p| p.is_video() == video);
    if !keep {
        s.model = crate::scenario::ModelRef::Id(want.to_string());
    }
    if let Some(v) = t.options.get("diffusion") {
        let mut cur = serde_json::to_value(s.diffusion.clone().unwrap_or_default()).map_err(|e| e.to_string())?;
        if let (Some(cur), Some(new)) = (cur.as_object_mut(), v.as_object()) {
            for (k, x) in new {
                cur.insert(k.clone(), x.clone());
            }
        }
        let d: crate::spec::diffusion::DiffusionOptions = serde_json::from_value(cur).map_err(|e| format!("{}: {e}", field("diffusion")))?;
        d.validate().map_err(|e| format!("template '{}': {e}", t.name))?;
        s.diffusion = Some(d);
    }
    let level = |k: &str| t.options.get(k).and_then(|v| v.as_u64()).map(|x| x as usize);
    let pins = crate::spec::options::diffusion::level_pins(level("unet_level"), level("vae_level")).map_err(|e| format!("template '{}': {e}", t.name))?;
    s.space.clear();
    for (k, v) in pins {
        let o: crate::scenario::SpaceOverride = serde_json::from_value(v).map_err(|e| format!("{}: {e}", field("levels")))?;
        s.space.insert(k, o);
    }
    Ok(())
}

/// Maps a model description's `model_type` (Hugging Face) or graph kind to a template family.
pub fn model_family_of(model_type: &str) -> &'static str {
    let m = model_type.to_ascii_lowercase();
    if m.contains("moe") || m.contains("mixtral") || m.contains("deepseek") {
        "moe"
    } else if m.contains("unet") || m.contains("diffusion") {
        "diffusion"
    } else if m.contains("clip") || m.contains("vl") || m.contains("llava") || m.contains("multimodal") {
        "multimodal"
    } else {
        "llm"
    }
}

fn fallback() -> Template {
    Template {
        name: "generic".into(),
        title: "Any model on any chip".into(),
        description: String::new(),
        model_families: vec!["*".into()],
        devices: vec!["*".into()],
        scenario_kind: "*".into(),
        stage: "deployment".into(),
        strategy: "auto".into(),
        strategy_options: serde_json::Value::Null,
        budget: 64,
        objectives: vec![TemplateObjective { metric: "tpot_ms".into(), priority: 1.0 }],
        constraints: TemplateConstraints::default(),
        options: BTreeMap::new(),
    }
}

/// A bundled chip the template is meant for, when the scenario's chip is not one of them (the
/// first bundled chip matching the template's first device prefix); None when it fits or the
/// template suits any chip.
pub fn chip_for(t: &Template, s: &Scenario) -> Option<String> {
    if t.devices.iter().any(|d| d == "*") {
        return None;
    }
    let current = match &s.device {
        crate::spec::scenario::DeviceRef::Name(n) => n.to_ascii_lowercase(),
        crate::spec::scenario::DeviceRef::Inline(_) => return None,
    };
    if t.devices.iter().any(|p| current.starts_with(&p.to_ascii_lowercase())) {
        return None;
    }
    let names = tunelab_sim::device::bundled_names();
    t.devices.iter().find_map(|p| names.iter().find(|n| n.to_ascii_lowercase().starts_with(&p.to_ascii_lowercase())).map(|n| n.to_string()))
}

/// What applying `t` to `s` gives, and every field it changes as "path: before → after" lines,
/// so the app can show the changes before applying them (and undo them after). A chip the
/// template is not meant for is switched to one it is (`chip_for`), and the memory limit is
/// taken from that chip.
pub fn preview(t: &Template, s: &Scenario) -> Result<(Scenario, Vec<String>), String> {
    let mut next = s.clone();
    if let Some(chip) = chip_for(t, s) {
        next.device = crate::spec::scenario::DeviceRef::Name(chip);
    }
    let mem = match &next.device {
        crate::spec::scenario::DeviceRef::Name(n) => tunelab_sim::bundled_device(n).ok().map(|d| d.memory_bytes as f64 / (1024.0 * 1024.0 * 1024.0)),
        crate::spec::scenario::DeviceRef::Inline(_) => None,
    };
    apply_template(t, &mut next, mem)?;
    let a = serde_json::to_value(s).map_err(|e| e.to_string())?;
    let b = serde_json::to_value(&next).map_err(|e| e.to_string())?;
    let mut lines = Vec::new();
    diff("", &a, &b, &mut lines);
    lines.retain(|l| !l.starts_with("view"));
    Ok((next, lines))
}

fn diff(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value as J;
    if a == b {
        return;
    }
    match (a, b) {
        (J::Object(x), J::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                diff(&p, x.get(k).unwrap_or(&J::Null), y.get(k).unwrap_or(&J::Null), out);
            }
        }
        _ => {
            let show = |v: &J| match v {
                J::Null => "none".to_string(),
                J::String(s) => s.clone(),
                other => {
                    let t = other.to_string();
                    if t.chars().count() > 80 { format!("{}…", t.chars().take(80).collect::<String>()) } else { t }
                }
            };
            out.push(format!("{path}: {} → {}", show(a), show(b)));
        }
    }
}

#[cfg(test)]
mod preview_tests {
    use super::*;

    #[test]
    fn edge_template_previews_every_change_and_moves_to_its_chip() {
        let t = bundled_templates().into_iter().find(|t| t.name == "llm-310p-edge").unwrap();
        let s = Scenario::default();
        let (next, lines) = preview(&t, &s).unwrap();
        println!("{lines:#?}");
        assert!(lines.iter().any(|l| l.starts_with("device: 910B2 → 310P")), "{lines:?}");
        assert!(lines.iter().any(|l| l.starts_with("objectives")));
        assert!(lines.iter().any(|l| l.starts_with("budget")));
        assert_ne!(next, s);
        // Applying nothing new: a second preview of the result changes nothing.
        assert!(preview(&t, &next).unwrap().1.is_empty());
    }
}

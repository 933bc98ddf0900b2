//! One fact, one place: a measurement row's `framework` and the scenario setting that prices it
//! (`training.framework` for a training row, `deployment.serving.engine` for a serving row)
//! say the same thing. Read once, here: the one that is stated sets the other; when both are
//! stated and disagree the row is refused naming both, so the summary, the bands and the refits
//! (which group by `Row::framework`) always group a row by what priced it.
//!
//! Why at reading time: before, a row `framework: "deepspeed"` without
//! `scenario.training.framework` was priced as Megatron (the default) and grouped, banded and
//! refitted as DeepSpeed: the framework layer was credited with errors it never priced.

use super::Row;
use serde_json::Value as Json;

/// The scenario setting a row's framework is for, by stage: (path, the setting's value for a
/// row framework name, the setting's accepted values).
fn setting(stage: &str) -> Option<(&'static [&'static str], fn(&str) -> Option<String>, Vec<String>)> {
    match stage {
        "training" => Some((&["training", "framework"], training_name, tunelab_sim::workload::TRAIN_FRAMEWORKS.iter().map(|s| s.to_string()).collect())),
        "deployment" | "" => Some((&["deployment", "serving", "engine"], serving_name, crate::spec::options::serving::engines())),
        _ => None,
    }
}

/// The `training.framework` a row's framework is priced as: MindSpeed(-LLM) runs Megatron's
/// schedule (the option's own documentation), the others by name.
fn training_name(fw: &str) -> Option<String> {
    let f = fw.trim().to_ascii_lowercase();
    match f.as_str() {
        "mindspeed" | "mindspeed-llm" | "megatron" | "megatron-lm" => Some("megatron".into()),
        _ if tunelab_sim::workload::TRAIN_FRAMEWORKS.contains(&f.as_str()) => Some(f),
        _ => None,
    }
}

/// The `deployment.serving.engine` a row's framework is priced as (the engines by name).
fn serving_name(fw: &str) -> Option<String> {
    let f = fw.trim().to_ascii_lowercase();
    crate::spec::options::serving::engines().into_iter().find(|e| *e == f)
}

/// Makes the row's framework and its scenario's setting one fact. A row whose two statements
/// contradict, or whose framework the stage cannot price, is kept but marked `cannot_express`
/// with the reason (listed as not compared, never summarised).
pub fn reconcile(r: &mut Row) -> Result<(), String> {
    let Some((path, map, known)) = setting(&r.stage) else { return Ok(()) };
    if r.cannot_express.is_some() {
        return Ok(());
    }
    let dotted = path.join(".");
    let stated = pointer(&r.scenario, path).map(str::to_string);
    match (r.framework.clone(), stated) {
        (None, None) => {}
        (None, Some(s)) => r.framework = Some(s),
        (Some(fw), stated) => match (map(&fw), stated) {
            (Some(m), Some(s)) if m != s.trim().to_ascii_lowercase() => {
                r.cannot_express = Some(format!("the row's framework '{}' and its scenario's {dotted} '{}' contradict (one fact, stated twice); make them agree", crate::spec::scenario::clip(&fw), crate::spec::scenario::clip(&s)));
            }
            (Some(_), Some(_)) => {}
            (Some(m), None) => set(&mut r.scenario, path, m),
            (None, Some(s)) => {
                r.cannot_express = Some(format!("the row's framework '{}' is not one the {} stage prices, and its scenario's {dotted} '{}' is; state one of them (the stage knows: {})", crate::spec::scenario::clip(&fw), stage(r), crate::spec::scenario::clip(&s), known.join(", ")));
            }
            (None, None) => {
                r.cannot_express = Some(format!("the row's framework '{}' is not one the {} stage prices (set {dotted} to one of: {})", crate::spec::scenario::clip(&fw), stage(r), known.join(", ")));
            }
        },
    }
    Ok(())
}

fn stage(r: &Row) -> &str {
    if r.stage.is_empty() { "deployment" } else { &r.stage }
}

fn pointer<'a>(v: &'a Json, path: &[&str]) -> Option<&'a str> {
    let mut n = v;
    for k in path {
        n = n.get(k)?;
    }
    n.as_str()
}

fn set(v: &mut Json, path: &[&str], value: String) {
    if !v.is_object() {
        *v = Json::Object(Default::default());
    }
    let mut n = v;
    for k in &path[..path.len() - 1] {
        let o = n.as_object_mut().expect("object");
        let e = o.entry(k.to_string()).or_insert_with(|| Json::Object(Default::default()));
        if !e.is_object() {
            *e = Json::Object(Default::default());
        }
        n = e;
    }
    n.as_object_mut().expect("object").insert(path[path.len() - 1].to_string(), Json::String(value));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(stage: &str, fw: Option<&str>, scenario: Json) -> Row {
        Row { id: "r".into(), stage: stage.into(), framework: fw.map(str::to_string), scenario, ..Default::default() }
    }

    #[test]
    fn a_stated_framework_prices_the_row() {
        let mut r = row("training", Some("deepspeed"), Json::Null);
        reconcile(&mut r).unwrap();
        assert_eq!(r.scenario["training"]["framework"], "deepspeed");
        let mut r = row("deployment", Some("vllm-ascend"), json!({"deployment": {"batches": [1]}}));
        reconcile(&mut r).unwrap();
        assert_eq!(r.scenario["deployment"]["serving"]["engine"], "vllm-ascend");
        assert_eq!(r.scenario["deployment"]["batches"], json!([1]));
    }

    #[test]
    fn the_scenario_names_an_unstated_framework() {
        let mut r = row("deployment", None, json!({"deployment": {"serving": {"engine": "mindie"}}}));
        reconcile(&mut r).unwrap();
        assert_eq!(r.framework.as_deref(), Some("mindie"));
    }

    #[test]
    fn contradictions_are_refused_naming_both() {
        let mut r = row("training", Some("deepspeed"), json!({"training": {"framework": "megatron"}}));
        reconcile(&mut r).unwrap();
        let why = r.cannot_express.unwrap();
        assert!(why.contains("'deepspeed'") && why.contains("training.framework 'megatron'"), "{why}");
        let mut r = row("deployment", Some("torchair"), json!({"deployment": {"serving": {"engine": "transformers"}}}));
        reconcile(&mut r).unwrap();
        assert!(r.cannot_express.unwrap().contains("deployment.serving.engine 'transformers'"));
        // MindSpeed-LLM runs Megatron's schedule: no contradiction.
        let mut r = row("training", Some("mindspeed"), json!({"training": {"framework": "megatron"}}));
        reconcile(&mut r).unwrap();
        assert!(r.cannot_express.is_none());
        let mut r = row("deployment", Some("lmdeploy"), Json::Null);
        reconcile(&mut r).unwrap();
        assert!(r.cannot_express.unwrap().contains("'lmdeploy' is not one the deployment stage prices"));
    }
}

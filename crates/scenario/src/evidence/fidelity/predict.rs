//! Pricing one case: the scenario a row describes (its model, its chip with the kernel library
//! it names, its pinned configuration) and the stage metrics its objective gives there.

use super::{cases, Case, MeasurementSet, Row};
use crate::spec::scenario::{clip, Scenario};
use crate::stages;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use tunelab_search::{Config, Outcome};

/// Deep-merges `b` into `a` (objects key by key; anything else replaces).
pub fn merge(a: &mut Json, b: &Json) {
    match (a, b) {
        (Json::Object(x), Json::Object(y)) => {
            for (k, v) in y {
                merge(x.entry(k.clone()).or_insert(Json::Null), v);
            }
        }
        (a, b) => *a = b.clone(),
    }
}

/// The scenario a case is predicted with. `device` replaces the row's chip (an inline profile
/// during calibration).
pub fn case_scenario(case: &Case, device: Option<&Json>) -> Result<Scenario, String> {
    let r = case.row;
    if r.model.is_null() {
        return Err("the row names no model".into());
    }
    let stage = if r.stage.is_empty() { "deployment" } else { r.stage.as_str() };
    let mut v = json!({
        "name": r.id,
        "stage": stage,
        "model": r.model,
        "device": with_kernel_library(r, device)?,
        "budget": 1,
    });
    if r.scenario.is_object() {
        merge(&mut v, &r.scenario);
    }
    if let Some(var) = case.variant {
        if var.scenario.is_object() {
            merge(&mut v, &var.scenario);
        }
        if var.space.is_object() {
            merge(&mut v, &json!({ "space": var.space }));
        }
    }
    Scenario::from_value(v)
}

/// The device a row is priced on: `device` (an inline profile) or the row's bundled chip, with
/// the kernel library the row names (assets/kernels; a hand-written kernel is not CANN's). An
/// inline profile may carry `kernel_libraries: {lib: {field: {...}}}` (a calibration or a
/// leave-one-source-out refit): the row's library takes its fields from there.
fn with_kernel_library(r: &Row, device: Option<&Json>) -> Result<Json, String> {
    let (libs, default) = tunelab_sim::kernels::names();
    let lib = r.kernel_library.as_deref().filter(|l| *l != default && libs.iter().any(|n| n == l));
    if lib.is_none() {
        return Ok(device.cloned().unwrap_or_else(|| Json::String(r.chip.clone())));
    }
    let mut d = match device {
        Some(d) => d.clone(),
        None => {
            let t = tunelab_sim::device::bundled_profile_text(&r.chip).ok_or_else(|| format!("unknown chip '{}'", clip(&r.chip)))?;
            serde_json::from_str(t).map_err(|e| e.to_string())?
        }
    };
    if let (Some(o), Some(lib)) = (d.as_object_mut(), lib) {
        o.insert("kernel_library".into(), json!(lib));
    }
    Ok(d)
}

/// The configuration a pinned scenario describes: each parameter's only value when pinned,
/// else the stage's baseline value (the framework default), else its first level.
pub fn pinned_config(setup: &stages::StageSetup) -> Config {
    let params = setup.space.params();
    Config(
        params
            .iter()
            .enumerate()
            .map(|(i, p)| match (p.levels(), setup.baseline.0.get(i)) {
                (Some(1), _) => p.level_value(0),
                (_, Some(b)) if p.contains(b) => b.clone(),
                _ => p.level_value(0),
            })
            .collect(),
    )
}

/// The stage metrics of one case, by name, with their units; Err: the reason it cannot be
/// predicted (the stage's own message).
pub fn predict_case(case: &Case, device: Option<&Json>) -> Result<(BTreeMap<String, (f64, String)>, f64), String> {
    let s = case_scenario(case, device)?;
    let chips = job_chips(&s);
    let (names, units, values) = if case.row.predict_with == "tuned" {
        let mut run = crate::Run::new(&s)?;
        run.run_to_end();
        let names: Vec<String> = run.metrics().iter().map(|m| m.name.clone()).collect();
        let units: Vec<String> = run.metrics().iter().map(|m| m.unit.clone()).collect();
        let best = run.overall_best().map(|(_, t)| t.values.clone()).ok_or("the tuning run found no feasible configuration")?;
        (names, units, best)
    } else {
        let mut setup = stages::setup(&s)?;
        let c = pinned_config(&setup);
        let names: Vec<String> = setup.metrics.iter().map(|m| m.name.clone()).collect();
        let units: Vec<String> = setup.metrics.iter().map(|m| m.unit.clone()).collect();
        match setup.objective.evaluate(&c) {
            Outcome::Ok(v) => (names, units, v),
            Outcome::Infeasible(r) | Outcome::Failed(r) => return Err(format!("the pinned configuration is infeasible: {r}")),
        }
    };
    let chips = chips.or_else(|| config_tp(&s)).unwrap_or(1.0);
    Ok((names.into_iter().zip(values.into_iter().zip(units)).collect(), chips))
}

/// The stage metrics of the row `id` of a measurement file's text (`predict_case` on the
/// bundled chip profile; a row with variants: its first): what a test or a one-row check needs.
pub fn predict_row(set_text: &str, id: &str) -> Result<BTreeMap<String, (f64, String)>, String> {
    let set = MeasurementSet::from_json(set_text)?;
    let cases = cases(&set);
    let case = cases.iter().find(|c| c.row.id == id).ok_or_else(|| format!("no row '{}' in the measurement file", clip(id)))?;
    predict_case(case, None).map(|(metrics, _)| metrics)
}

/// Chips of the job: `training.chips` for training.
fn job_chips(s: &Scenario) -> Option<f64> {
    if s.stage == crate::Stage::Training {
        return Some(s.training.chips as f64);
    }
    None
}

/// The pinned tensor-parallel degree (chips of one serving instance).
fn config_tp(s: &Scenario) -> Option<f64> {
    s.space.get("tp").and_then(|o| o.fixed.as_ref()).and_then(Json::as_f64)
}

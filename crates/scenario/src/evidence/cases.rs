//! Glue between runs and the knowledge base: the fingerprint of a scenario, a case from a finished
//! run, and the exact reproduction of an imported package (re-run its scenario and compare every
//! trial bit for bit).
//!
//! Kept apart from `knowledge` so that the stored data stays plain serde with no engine inside.

use crate::evidence::knowledge::{same_trials, Case, Fingerprint, Package};
use crate::run::Run;
use crate::spec::scenario::Scenario;
use serde::{Deserialize, Serialize};

/// The template family of a simulator model family (`llm`, `moe`, `diffusion`, `multimodal`).
pub fn family_name(f: tunelab_sim::ModelFamily) -> &'static str {
    use tunelab_sim::ModelFamily::*;
    match f {
        DenseLlm => "llm",
        MoeLlm => "moe",
        Diffusion => "diffusion",
        Multimodal => "multimodal",
        Custom => "custom",
        Encoder => "encoder",
    }
}

/// The fingerprint of a scenario: model name, family and size, chip, stage.
pub fn fingerprint_of(s: &Scenario) -> Result<Fingerprint, String> {
    // A landscape has no model or chip: it is known by its source (a cache, a toy function).
    if s.stage == crate::spec::scenario::Stage::Landscape {
        let label = crate::stages::landscape::source_label(s);
        return Ok(Fingerprint { model: label, family: "landscape".into(), params_b: 0.0, chip: String::new(), stage: s.stage.name().into() });
    }
    let (model, device, _) = crate::stages::context::resolve(s)?;
    Ok(Fingerprint {
        model: model.name.clone(),
        family: family_name(model.family).into(),
        params_b: model.loaded_params() as f64 / 1e9,
        chip: device.name.clone(),
        stage: s.stage.name().into(),
    })
}

/// A case from a run's first lane (the main strategy): its scenario, seed, trials and best.
pub fn case_from_run(run: &Run, title: &str) -> Result<Case, String> {
    case_from_run_with(run, title, fingerprint_of(run.scenario())?)
}

/// `case_from_run` with the scenario's fingerprint given (the page's engine worker computes it:
/// `fingerprint_of` reads the model).
pub fn case_from_run_with(run: &Run, title: &str, fingerprint: Fingerprint) -> Result<Case, String> {
    let s = run.scenario();
    let best = run.best_trial(0);
    Ok(Case {
        fingerprint,
        title: title.chars().take(200).collect(),
        scenario: serde_json::to_value(s).map_err(|e| e.to_string())?,
        seed: s.seed,
        param_names: run.space().names().to_vec(),
        metrics: run.metrics().to_vec(),
        trials: run.trials(0).to_vec(),
        best_value: best.and_then(|t| t.value()),
        best_config: best.map(|t| t.config.clone()),
    })
}

/// The outcome of re-running a package.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reproduction {
    /// Every trial matches bit for bit (configs, states and values).
    pub identical: bool,
    pub trials: usize,
    /// Index of the first trial that differs, when one does.
    pub first_difference: Option<usize>,
    pub best_value: Option<f64>,
    pub message: String,
}

/// Re-runs the package's scenario to the end and compares its trials with the stored ones.
pub fn reproduce(p: &Package) -> Result<Reproduction, String> {
    let s = Scenario::from_value(p.case.scenario.clone()).map_err(|e| format!("package scenario: {e}"))?;
    let mut run = Run::new(&s)?;
    run.run_to_end();
    let got = run.trials(0);
    let want = &p.case.trials;
    let identical = same_trials(got, want);
    let first_difference = if identical { None } else { (0..got.len().max(want.len())).find(|&i| !same_trials(&got[i.min(got.len())..(i + 1).min(got.len())], &want[i.min(want.len())..(i + 1).min(want.len())])) };
    let best_value = run.best_value(0);
    let message = if identical {
        format!("reproduced exactly: {} trials, best {}", got.len(), best_value.map(crate::run::format_best).unwrap_or_else(|| "none".into()))
    } else {
        format!("NOT reproduced: {} trials now vs {} stored, first difference at trial {}", got.len(), want.len(), first_difference.unwrap_or(0))
    };
    Ok(Reproduction { identical, trials: got.len(), first_difference, best_value, message })
}

//! Calibrating the framework layer from benchmark runs: the launch's serving engine's host
//! costs (`calibrate::framework`, assets/constants/serving-host.json) fitted to the runs'
//! measurement rows by the calibration's own search and leave-one-source-out (a source is a
//! benchmark file; one file's runs are left out one by one). The rows are priced by the
//! fidelity path, which prices a configuration with the function the study uses.

use crate::calibrate::{framework, Calibration, Calibrator, Options};
use crate::fidelity::MeasurementSet;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;

/// A framework-layer fit: the calibration (parameters before/after within their bounds, each
/// value before/after/left out) and the engine's block with the fitted values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FrameworkFit {
    /// The engine whose host costs were fitted (the layer), e.g. "vllm-ascend".
    pub engine: String,
    pub calibration: Calibration,
    /// `{"engine": ..., "fields": {name: {value, source: "fit", bound, fit: {before, digest,
    /// residual, values}}}}`: what would replace the engine's fields in serving-host.json.
    pub engine_fields: Json,
}

/// The launch's chip (a bundled profile name) and its profile file.
fn chip_profile(set: &MeasurementSet) -> Result<(String, Json), String> {
    let chip = set.rows.first().map(|r| r.chip.clone()).ok_or("no measurement row to fit")?;
    let text = tunelab_sim::device::bundled_profile_text(&chip).ok_or_else(|| format!("chip '{chip}': not a bundled profile"))?;
    Ok((chip, serde_json::from_str(text).map_err(|e| e.to_string())?))
}

/// The engine the rows were served by (every row must name the same one).
fn engine_of(set: &MeasurementSet) -> Result<String, String> {
    let mut e: Vec<String> = set.rows.iter().map(|r| r.framework.clone().unwrap_or_else(|| "generic".into())).collect();
    e.sort();
    e.dedup();
    match e.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err("no measurement row to fit".into()),
        many => Err(format!("the rows were served by several engines ({}): fit one engine's rows at a time", many.join(", "))),
    }
}

/// A fit in progress over `set` (rows from `measurement_set`), stepped by the caller (the
/// browser's worker keeps its answers coming between steps).
///
/// The fit starts from the file's values: host costs the launch scenario sets itself
/// (`deployment.serving.host_costs`, e.g. adopted from an earlier fit) are taken off the rows
/// for the fit, as they are what a fit replaces (otherwise they would hide the fitted values).
pub fn framework_calibrator(set: &MeasurementSet, digest: &str, opts: &Options) -> Result<(String, Calibrator), String> {
    let mut own = set.clone();
    for r in &mut own.rows {
        if let Some(serving) = r.scenario.pointer_mut("/deployment/serving").and_then(Json::as_object_mut) {
            serving.remove("host_costs");
        }
    }
    let set = &own;
    let engine = engine_of(set)?;
    let (chip, profile) = chip_profile(set)?;
    let params = framework::params(&engine)?;
    let opts = Options { categories: vec!["serving".into()], family: false, ..opts.clone() };
    Ok((engine, Calibrator::with_params(set, digest, &chip, &profile, params, &opts)?))
}

/// The fitted engine block of a finished calibration.
pub fn engine_fields(engine: &str, cal: &Calibration) -> Json {
    let mut fields = serde_json::Map::new();
    for p in &cal.params {
        let Some(name) = p.name.strip_prefix(&format!("{}{engine}.", framework::PREFIX)) else { continue };
        let moved = (p.after - p.before).abs() > 1e-9 * p.before.abs().max(1.0);
        fields.insert(
            name.to_string(),
            if moved {
                json!({ "value": p.after, "source": "fit", "bound": [p.min, p.max], "fit": { "before": { "value": p.before, "source": p.source_before }, "digest": cal.digest, "residual": cal.loss_after, "values": cal.rows.len() } })
            } else {
                json!({ "value": p.before, "source": p.source_before, "bound": [p.min, p.max] })
            },
        );
    }
    json!({ "engine": engine, "fields": fields })
}

/// Fits the framework layer in one call (the CLI).
pub fn calibrate_framework(set: &MeasurementSet, digest: &str, opts: &Options) -> Result<FrameworkFit, String> {
    let (engine, mut c) = framework_calibrator(set, digest, opts)?;
    while !c.step(64) {}
    let calibration = c.finish()?;
    Ok(FrameworkFit { engine_fields: engine_fields(&engine, &calibration), engine, calibration })
}

impl FrameworkFit {
    /// The fitted values that moved, as a scenario's own host costs
    /// (`deployment.serving.host_costs`, by field name).
    pub fn host_costs(&self) -> BTreeMap<String, f64> {
        let prefix = format!("{}{}.", framework::PREFIX, self.engine);
        self.calibration
            .params
            .iter()
            .filter(|p| (p.after - p.before).abs() > 1e-9 * p.before.abs().max(1.0))
            .filter_map(|p| Some((p.name.strip_prefix(&prefix)?.to_string(), p.after)))
            .collect()
    }

    /// Adopts the fit into `s` (the launch it was fitted on, or another scenario served by the
    /// same engine): the moved values become the scenario's `deployment.serving.host_costs`
    /// (over any it had), priced wherever the scenario is. Returns one line per value set.
    /// Refused when the scenario's engine is not the fit's or nothing moved.
    pub fn adopt(&self, s: &mut crate::Scenario) -> Result<Vec<String>, String> {
        let serving = &mut s.deployment.serving;
        if serving.engine != self.engine {
            return Err(format!("the fit is of {}'s host costs; this scenario serves with {} (deployment.serving.engine)", self.engine, serving.engine));
        }
        let costs = self.host_costs();
        if costs.is_empty() {
            return Err("the fit moved no host cost: nothing to adopt".into());
        }
        let mut merged = serving.host_costs.clone();
        merged.extend(costs.iter().map(|(k, v)| (k.clone(), *v)));
        crate::spec::options::host_costs::validate(&serving.engine, &merged)?;
        serving.host_costs = merged;
        let before: BTreeMap<String, f64> = self.calibration.params.iter().filter_map(|p| Some((p.name.strip_prefix(&format!("{}{}.", framework::PREFIX, self.engine))?.to_string(), p.before))).collect();
        Ok(costs.iter().map(|(k, v)| format!("deployment.serving.host_costs.{k} = {v:.4} us (was {:.4})", before.get(k).copied().unwrap_or(f64::NAN))).collect())
    }

    /// Plain-text report: the layer, then the calibration's table.
    pub fn to_text(&self) -> String {
        format!(
            "Framework layer: {} host costs (assets/constants/serving-host.json engines.{}.fields), fitted within their bounds\n{}",
            self.engine,
            self.engine,
            self.calibration.to_text()
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::evidence::benchruns::{measurement_set, read_files, Format};

    fn set_of(engine: &str) -> crate::fidelity::MeasurementSet {
        let dir = format!("{}/../../assets/benchruns", env!("CARGO_MANIFEST_DIR"));
        let files: Vec<(String, String)> = ["vllm-bench-serve-sample.json", "sglang-bench-serving-sample.jsonl"].iter().map(|p| (p.to_string(), std::fs::read_to_string(format!("{dir}/{p}")).unwrap())).collect();
        let runs = read_files(&files, Format::Auto).unwrap();
        let mut launch: serde_json::Value = serde_json::from_str(include_str!("../../../../../assets/scenarios/llama2-7b-910B2-deployment.json")).unwrap();
        launch["deployment"]["serving"]["engine"] = serde_json::json!(engine);
        let launch = crate::Scenario::from_value(launch).unwrap();
        measurement_set(&runs, &launch, "samples").unwrap()
    }

    #[test]
    fn the_fit_moves_only_framework_fields_within_bounds_and_reports_leave_one_out() {
        let set = set_of("vllm-ascend");
        let opts = crate::calibrate::Options { budget: 24, loo_budget: 6, ..Default::default() };
        let fit = super::calibrate_framework(&set, "d", &opts).unwrap();
        assert_eq!(fit.engine, "vllm-ascend");
        assert!(!fit.calibration.params.is_empty());
        for p in &fit.calibration.params {
            assert!(p.name.starts_with("framework:vllm-ascend."), "{}", p.name);
            assert!(p.after >= p.min && p.after <= p.max, "{} = {} outside [{}, {}]", p.name, p.after, p.min, p.max);
        }
        assert!(fit.calibration.loss_after <= fit.calibration.loss_before + 1e-12, "a warm-started fit never ends worse");
        assert!(fit.calibration.rows.iter().any(|r| r.error_loo.is_some()), "leave-one-source-out errors beside the fit");
        assert!(fit.calibration.profile.get("kernel_libraries").is_none(), "the chip profile is untouched by a framework fit");
        assert_eq!(fit.engine_fields["engine"], "vllm-ascend");
        assert!(fit.to_text().contains("Framework layer: vllm-ascend"));
    }

    #[test]
    fn an_unknown_engine_or_mixed_engines_are_refused_by_name() {
        let mut set = set_of("vllm-ascend");
        set.rows[0].framework = Some("sglang".into());
        let e = super::framework_calibrator(&set, "d", &Default::default()).err().unwrap();
        assert!(e.contains("several engines"), "{e}");
        assert!(crate::calibrate::framework::params("trt-llm").unwrap_err().contains("'trt-llm'"));
    }
}

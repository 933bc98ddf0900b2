//! The framework layer's fittable parameters: a serving engine's host costs
//! (assets/constants/serving-host.json, `engines.<engine>.fields`), fitted by the same search
//! and leave-one-source-out as a chip profile's fields. A parameter is named
//! `framework:<engine>.<field>` (its layer in its name); its bounds are the `bound` written
//! beside the value. Only the host costs in microseconds (`*_us*`) and shares of host time
//! (`*_share`, e.g. eager_ep_serial_share) are fitted: the engine's
//! switches (schedule_ahead_steps) and capture sizes (graph_capture_ceiling) are facts of the
//! release, not rates a measurement can move.
//!
//! A fitted value reaches pricing through `stages::scheduler::with_fitted_fields` (the bundled
//! engine block with the value replaced, inside the bounds) around each evaluation, so the
//! study's own pricing path is used unchanged.

use super::FitParam;

/// The layer prefix of a framework parameter's name.
pub const PREFIX: &str = "framework:";

/// The fittable host costs of `engine`, as calibration parameters (the list a scenario's
/// `deployment.serving.host_costs` is checked against: `spec::options::host_costs::fields`).
pub fn params(engine: &str) -> Result<Vec<FitParam>, String> {
    let out: Vec<FitParam> = crate::spec::options::host_costs::fields(engine)?
        .into_iter()
        .map(|f| FitParam { name: format!("{PREFIX}{engine}.{}", f.name), value: f.value.clamp(f.min, f.max), min: f.min, max: f.max, source: f.source })
        .collect();
    if out.is_empty() {
        return Err(format!("engine '{engine}' declares no host cost with bounds to fit"));
    }
    Ok(out)
}

/// (engine, field, value) of the framework parameters among `params` at `vals`.
fn host_values(params: &[FitParam], vals: &[f64]) -> Vec<(String, String, f64)> {
    params
        .iter()
        .zip(vals)
        .filter_map(|(p, v)| {
            let (engine, field) = p.name.strip_prefix(PREFIX)?.split_once('.')?;
            Some((engine.to_string(), field.to_string(), *v))
        })
        .collect()
}

/// Runs `f` with the framework parameters among `params` set to `vals` (no framework
/// parameter: `f` as is).
pub fn scoped<R>(params: &[FitParam], vals: &[f64], f: impl FnOnce() -> R) -> R {
    let host = host_values(params, vals);
    if host.is_empty() {
        f()
    } else {
        crate::stages::scheduler::with_fitted_fields(&host, f)
    }
}

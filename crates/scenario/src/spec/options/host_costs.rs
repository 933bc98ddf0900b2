//! A scenario's own serving-engine host costs (`deployment.serving.host_costs`): values of the
//! engine's fittable host costs (assets/constants/serving-host.json `engines.<engine>.fields`,
//! the ones in microseconds with a `bound`) that replace the file's for this scenario only, as
//! a fit of the user's own benchmark runs gives them (`tunelab benchrun --calibrate --adopt`,
//! the app's "Your own benchmark runs" panel, "Adopt").
//!
//! Why a scenario field and not an edited constants file: the fit is of one user's engine and
//! host, not a fact of the release; the scenario (and its link) carries it, and a scenario
//! without it prices exactly as before. The values go through the pricing every serving number
//! uses (`ServingSpec::host` through `stages::scheduler::host_costs::apply`, after a named release's own host costs), and the report names
//! them beside the file's values.
//!
//! Which fields: the ones a framework fit moves (`fields`, one list for the fit and for this
//! check): host costs in microseconds with a bound in the file. An unknown name or a value
//! outside its bound is refused by name, never clamped.

use std::collections::BTreeMap;

/// One fittable host cost of an engine: its name, the file's value, bounds and source id.
#[derive(Clone, Debug, PartialEq)]
pub struct HostCostField {
    pub name: String,
    pub value: f64,
    pub min: f64,
    pub max: f64,
    pub source: String,
}

/// The fittable host costs of `engine` in the bundled serving-host.json, in name order.
pub fn fields(engine: &str) -> Result<Vec<HostCostField>, String> {
    use serde_json::Value as Json;
    let v: Json = serde_json::from_str(super::serving::HOST_JSON).map_err(|e| format!("serving-host.json: {e}"))?;
    let engines = v.get("engines").and_then(Json::as_object).ok_or("serving-host.json: no 'engines'")?;
    let block = engines.get(engine).ok_or_else(|| format!("engine '{engine}': not in assets/constants/serving-host.json (engines: {})", engines.keys().cloned().collect::<Vec<_>>().join(", ")))?;
    let mut out = Vec::new();
    for (name, f) in block.get("fields").and_then(Json::as_object).into_iter().flatten() {
        // Host costs in microseconds, the release-dependent kernel factors priced beside them
        // (`float_nz_linear_factor`, a ratio with its own bound), and shares of host time
        // (`*_share`, a fraction in its bound).
        if !name.contains("_us") && !name.ends_with("_factor") && !name.ends_with("_share") {
            continue;
        }
        let bound: Vec<f64> = f.get("bound").and_then(Json::as_array).map(|b| b.iter().filter_map(Json::as_f64).collect()).unwrap_or_default();
        if let (Some(value), [lo, hi]) = (f.get("value").and_then(Json::as_f64), bound.as_slice()) {
            if lo < hi {
                let source = f.get("source").and_then(Json::as_str).unwrap_or("").to_string();
                out.push(HostCostField { name: name.clone(), value, min: *lo, max: *hi, source });
            }
        }
    }
    Ok(out)
}

/// Checks `costs` against `engine`'s fittable host costs: every name known, every value a
/// number within its bound. The message names the field.
pub fn validate(engine: &str, costs: &BTreeMap<String, f64>) -> Result<(), String> {
    if costs.is_empty() {
        return Ok(());
    }
    let f = "deployment.serving.host_costs";
    let known = fields(engine).map_err(|e| format!("{f}: {e}"))?;
    for (name, v) in costs {
        let Some(k) = known.iter().find(|k| &k.name == name) else {
            return Err(format!(
                "{f}.{}: not a host cost of engine '{engine}' that a scenario can set (known: {})",
                crate::spec::scenario::clip(name),
                known.iter().map(|k| k.name.as_str()).collect::<Vec<_>>().join(", ")
            ));
        };
        if !(v.is_finite() && *v >= k.min && *v <= k.max) {
            let unit = if name.ends_with("_share") { "" } else { " us" };
            return Err(format!("{f}.{name}: {v}{unit} is outside its bound [{}, {}] (assets/constants/serving-host.json engines.{engine}.fields.{name})", k.min, k.max));
        }
    }
    Ok(())
}

/// The report's note: each value beside the file's.
pub fn note(engine: &str, costs: &BTreeMap<String, f64>) -> Option<String> {
    if costs.is_empty() {
        return None;
    }
    let known = fields(engine).unwrap_or_default();
    let items: Vec<String> = costs
        .iter()
        .map(|(n, v)| {
            let unit = if n.ends_with("_share") { "" } else { " us" };
            match known.iter().find(|k| &k.name == n) {
                Some(k) => format!("{n} {v}{unit} (serving-host.json: {}{unit})", k.value),
                None => format!("{n} {v}{unit}"),
            }
        })
        .collect();
    Some(format!("host costs set by this scenario (deployment.serving.host_costs, e.g. adopted from a fit of your own benchmark runs) replace {engine}'s: {}", items.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_and_values_outside_the_bound_are_refused_by_name() {
        let m = |k: &str, v: f64| BTreeMap::from([(k.to_string(), v)]);
        assert!(validate("vllm-ascend", &m("step_host_us", 1200.0)).is_ok());
        let e = validate("vllm-ascend", &m("step_host_ms", 1.0)).unwrap_err();
        assert!(e.contains("host_costs.step_host_ms") && e.contains("step_host_us"), "{e}");
        let e = validate("vllm-ascend", &m("step_host_us", 1e9)).unwrap_err();
        assert!(e.contains("host_costs.step_host_us") && e.contains("[200, 5000]"), "{e}");
        // A switch of the release, not a cost: not settable.
        assert!(validate("vllm-ascend", &m("schedule_ahead_steps", 0.0)).unwrap_err().contains("schedule_ahead_steps"));
        // A field another engine has.
        assert!(validate("sglang", &m("frontend_us_per_request", 4000.0)).is_err());
    }
}

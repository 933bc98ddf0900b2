//! The profile side of a calibration (split from `mod.rs`, no change): which fields of a chip
//! profile (and its kernel libraries) are fittable, writing values back into a copy, and
//! marking a fit's values with their digest, residual and the value each replaced.

use super::{framework, Fitted};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};

/// One fittable parameter of a profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitParam {
    pub name: String,
    pub value: f64,
    pub min: f64,
    pub max: f64,
    pub source: String,
}

/// The fittable parameters of a profile (file JSON), in the file's key order: the chip's
/// `fields` with bounds, then the kernel libraries' fields (named `<library>.<field>`), from the
/// profile's `kernel_libraries` table where it has one, else the bundled libraries.
pub fn fittable(profile: &Json) -> Vec<FitParam> {
    let mut out = Vec::new();
    let mut push = |name: String, f: &Json| {
        let num = |key: &str| f.get(key).and_then(Json::as_f64);
        if let (Some(v), Some(lo), Some(hi)) = (num("value"), num("min"), num("max")) {
            if lo.is_finite() && hi.is_finite() && lo < hi {
                let source = f.get("source").and_then(Json::as_str).unwrap_or("").to_string();
                out.push(FitParam { name, value: v.clamp(lo, hi), min: lo, max: hi, source });
            }
        }
    };
    for (k, f) in profile.get("fields").and_then(Json::as_object).into_iter().flatten() {
        push(k.clone(), f);
    }
    for (lib, fields) in kernel_table(profile) {
        for (k, f) in fields.as_object().into_iter().flatten() {
            // A kernel field the chip profile itself carries (an old profile) is fitted there.
            if profile.get("fields").and_then(|x| x.get(k)).is_none() {
                push(format!("{lib}.{k}"), f);
            }
        }
    }
    out
}

/// The profile's kernel-library table, or the bundled libraries' fields.
fn kernel_table(profile: &Json) -> serde_json::Map<String, Json> {
    if let Some(t) = profile.get("kernel_libraries").and_then(Json::as_object) {
        return t.clone();
    }
    let mut m = serde_json::Map::new();
    for lib in tunelab_sim::kernels::names().0 {
        if let Ok((b, _)) = tunelab_sim::kernels::bundled_block(&lib) {
            m.insert(lib, b.get("fields").cloned().unwrap_or(Json::Null));
        }
    }
    m
}

/// The field object a fittable parameter lives in (created in the kernel table when needed).
fn field_mut<'a>(p: &'a mut Json, name: &str) -> Option<&'a mut serde_json::Map<String, Json>> {
    // A framework parameter lives in the engine's block, not in the chip profile.
    if name.starts_with(framework::PREFIX) {
        return None;
    }
    if p.get("fields").and_then(|f| f.get(name)).is_some() {
        return p.get_mut("fields").and_then(|f| f.get_mut(name)).and_then(Json::as_object_mut);
    }
    let (lib, field) = name.split_once('.')?;
    if p.get("kernel_libraries").is_none() {
        let t = kernel_table(p);
        p.as_object_mut()?.insert("kernel_libraries".into(), Json::Object(t));
    }
    p.get_mut("kernel_libraries")?.get_mut(lib)?.get_mut(field)?.as_object_mut()
}

/// A copy of `profile` with the parameters set to `values`.
pub fn with_values(profile: &Json, params: &[FitParam], values: &[f64]) -> Json {
    let mut p = profile.clone();
    for (fp, v) in params.iter().zip(values) {
        if let Some(f) = field_mut(&mut p, &fp.name) {
            f.insert("value".into(), json!(round_sig(*v)));
        }
    }
    p
}

/// Rounds to 6 significant digits (profiles stay readable; far below model error).
pub(super) fn round_sig(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let d = libm::floor(libm::log10(x.abs())) as i32;
    let s = libm::pow(10.0, (5 - d) as f64);
    libm::round(x * s) / s
}

/// A profile made small for a link: the informational `derived` block and `about` text are
/// dropped (the simulator recomputes derived numbers when it loads the profile).
pub fn compact_profile(profile: &Json) -> Json {
    let mut p = profile.clone();
    if let Some(o) = p.as_object_mut() {
        o.remove("derived");
        o.remove("about");
    }
    p
}

/// The profile with fitted values marked: `source: "fit"` plus the data's digest and residual;
/// the value it replaced is kept under `fit.before`.
pub fn fitted_profile(profile: &Json, fitted: &[Fitted], set_name: &str, digest: &str, residual: f64, values: usize) -> Json {
    let mut p = profile.clone();
    for f in fitted {
        // A value the fit left where it was is not a fitted value: its source stays.
        if (f.after - f.before).abs() <= 1e-9 * f.before.abs().max(1.0) {
            continue;
        }
        if let Some(o) = field_mut(&mut p, &f.name) {
            let old_src = o.get("source").cloned().unwrap_or(Json::Null);
            let old_before = o.get("fit").and_then(|x| x.get("before")).cloned();
            o.insert("value".into(), json!(f.after));
            o.insert("source".into(), json!("fit"));
            let before = old_before.unwrap_or_else(|| json!({ "value": f.before, "source": old_src }));
            o.insert("fit".into(), json!({ "digest": digest, "residual": round_sig(residual), "values": values, "before": before }));
        }
    }
    if let Some(s) = p.get_mut("sources").and_then(Json::as_object_mut) {
        s.insert(
            "fit".into(),
            json!(format!("fitted by `tunelab calibrate` to '{set_name}' ({digest}): residual = weighted mean |ln(predicted/measured)| = {:.4} over {values} values, within the bounds declared next to each value", residual)),
        );
    }
    p
}

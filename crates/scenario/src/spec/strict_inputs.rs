//! Unknown keys of the JSON inputs that are not read by serde alone: a chip profile (read by
//! the device model's own table of fields), a strategy template (its `options` are read by the
//! code that applies it) and a scenario's inline chip profile. Each check takes its known keys
//! from the reader itself (`tunelab_sim::device::numeric_fields`, the kernel library's fields,
//! serde's field lists for the typed blocks), so a field added to a reader is known at once.

use crate::spec::strict::{self, nearest, Report, UnknownKey};
use serde_json::Value as Json;

/// Top-level keys of a chip profile file (`tunelab_sim::Device::from_json` reads name, soc,
/// fields, kernel_library, kernel_libraries and sources; schema, about and derived are for the
/// reader of the file and are recomputed).
const PROFILE_KEYS: &[&str] = &["schema", "name", "soc", "about", "fields", "sources", "derived", "kernel_library", "kernel_libraries"];
/// Keys of one profile field.
const FIELD_KEYS: &[&str] = &["value", "source", "note", "min", "max", "fit"];

fn push(rep: &mut Report, path: String, key: &str, known: &[&str]) {
    rep.extend(Report { keys: vec![UnknownKey { suggestion: nearest(key, known), path, note: None }], more: 0 });
}

/// Unknown keys of a chip profile (file JSON): at the top, among its `fields` (the device
/// model's numeric fields and `arch`), inside each field, and among a kernel-library table's
/// fields. A misspelled field that has a bundled default would otherwise take that default
/// without a word.
pub fn profile_keys(v: &Json) -> Report {
    let mut rep = Report::default();
    let Some(o) = v.as_object() else { return rep };
    for k in o.keys() {
        if !PROFILE_KEYS.contains(&k.as_str()) {
            push(&mut rep, k.clone(), k, PROFILE_KEYS);
        }
    }
    let mut known: Vec<&str> = tunelab_sim::device::numeric_fields();
    known.push("arch");
    for (k, f) in o.get("fields").and_then(Json::as_object).into_iter().flatten() {
        if !known.contains(&k.as_str()) {
            push(&mut rep, format!("fields.{k}"), k, &known);
            continue;
        }
        for fk in f.as_object().map(|m| m.keys().collect::<Vec<_>>()).unwrap_or_default() {
            if !FIELD_KEYS.contains(&fk.as_str()) {
                push(&mut rep, format!("fields.{k}.{fk}"), fk, FIELD_KEYS);
            }
        }
    }
    for (lib, fields) in o.get("kernel_libraries").and_then(Json::as_object).into_iter().flatten() {
        for k in fields.as_object().map(|m| m.keys().collect::<Vec<_>>()).unwrap_or_default() {
            if !tunelab_sim::kernels::KERNEL_FIELDS.contains(&k.as_str()) {
                push(&mut rep, format!("kernel_libraries.{lib}.{k}"), k, tunelab_sim::kernels::KERNEL_FIELDS);
            }
        }
    }
    rep
}

/// The `options` keys a template's code reads (`templates::apply_template`); `serving` and
/// `diffusion` are then read as the scenario's typed blocks, strictly.
const TEMPLATE_OPTIONS: &[&str] = &["attention_fusion", "launch", "precisions", "mixed_precision", "serving", "pipeline", "diffusion", "unet_level", "vae_level"];

/// Unknown keys of a strategy template file.
pub fn template_keys(text: &str) -> Result<Report, String> {
    let (t, mut rep) = strict::from_str::<crate::spec::templates::Template>(text, &[]).map_err(|e| format!("template is not valid JSON: {}", strict::clip_error(&e.to_string())))?;
    for (k, v) in &t.options {
        match k.as_str() {
            "serving" => {
                if let Ok((_, r)) = strict::from_value::<crate::spec::options::serving::ServingSpec>(v, &[]) {
                    rep.extend(r.prefixed("options.serving"));
                }
            }
            "diffusion" => {
                if let Ok((_, r)) = strict::from_value::<crate::spec::diffusion::DiffusionOptions>(v, &[]) {
                    rep.extend(r.prefixed("options.diffusion"));
                }
            }
            _ if TEMPLATE_OPTIONS.contains(&k.as_str()) => {}
            _ => push(&mut rep, format!("options.{k}"), k, TEMPLATE_OPTIONS),
        }
    }
    Ok(rep)
}

/// The keys of a scenario's inline chip profile (`device` given as an object).
pub fn scenario_device_keys(s: &crate::spec::scenario::Scenario) -> Report {
    match &s.device {
        crate::spec::scenario::DeviceRef::Inline(v) => profile_keys(v).prefixed("device"),
        crate::spec::scenario::DeviceRef::Name(_) => Report::default(),
    }
}

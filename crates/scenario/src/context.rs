//! Resolving a scenario's model and chip references into the simulator's data, for the analysis
//! modules (training, runtime, diagnosis, impact, explore).
//!
//! Why here: the analysis code needs the model description and the device profile themselves
//! (to cost single operators and read peaks), not only a stage objective.

use crate::scenario::{DeviceRef, ModelRef, Scenario};
use tunelab_sim::device::{bundled_device, Device};
use tunelab_sim::model::{bundled_models, load_model, ModelDesc};

/// The model, the chip, and any warnings from loading them.
pub fn resolve(s: &Scenario) -> Result<(ModelDesc, Device, Vec<String>), String> {
    let text = match &s.model {
        ModelRef::Id(id) if id.trim_start().starts_with('{') => id.clone(),
        ModelRef::Id(id) => {
            let want = id.trim().to_ascii_lowercase();
            let models = bundled_models();
            match models.iter().find(|(n, _)| *n == want) {
                Some((_, t)) => t.to_string(),
                None => return Err(format!("model: unknown bundled model '{}' (known: {})", crate::scenario::clip(id), models.iter().map(|m| m.0).collect::<Vec<_>>().join(", "))),
            }
        }
        ModelRef::Inline(j) => serde_json::to_string(j).map_err(|e| format!("model: {e}"))?,
    };
    let loaded = load_model(&text).map_err(|e| format!("model: {e}"))?;
    let device = match &s.device {
        DeviceRef::Name(n) => bundled_device(n).map_err(|e| format!("device: {e}"))?,
        DeviceRef::Inline(j) => Device::from_json(&serde_json::to_string(j).unwrap_or_default()).map_err(|e| format!("device: {e}"))?,
    };
    Ok((loaded.model, device, loaded.warnings))
}

/// The chip's memory in GiB.
pub fn memory_gib(d: &Device) -> f64 {
    d.memory_bytes as f64 / (1024.0 * 1024.0 * 1024.0)
}

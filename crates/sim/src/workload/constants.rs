//! Framework constants of the training step, each with its source and plausible bounds, read from
//! `assets/constants/training.json` (compiled in, so the browser has them too).

use serde::Deserialize;
use std::sync::OnceLock;

/// One constant: value, unit, bounds and where it comes from.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct Constant {
    pub value: f64,
    pub unit: String,
    pub min: f64,
    pub max: f64,
    pub source: String,
}

/// The training constants (see the JSON file for each source).
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct TrainingConstants {
    pub framework_step_ms: Constant,
    pub micro_batch_overhead_ms: Constant,
    pub allocator_fragmentation: Constant,
    pub allocator_reserve_bytes: Constant,
    pub moe_imbalance: Constant,
}

/// The JSON text the constants come from.
pub const TRAINING_CONSTANTS_JSON: &str = crate::json_asset!("../../../../assets/constants/training.json");

impl TrainingConstants {
    /// Parses and bound-checks a constants file; errors name the field.
    pub fn from_json(text: &str) -> Result<TrainingConstants, String> {
        let c: TrainingConstants = serde_json::from_str(text).map_err(|e| format!("training constants: {e}"))?;
        for (name, k) in c.all() {
            if !(k.value.is_finite() && k.min <= k.value && k.value <= k.max) {
                return Err(format!("training constant '{name}' = {} must be within [{}, {}]", k.value, k.min, k.max));
            }
        }
        Ok(c)
    }
    /// (name, constant) for every entry, for reports.
    pub fn all(&self) -> [(&'static str, &Constant); 5] {
        [
            ("framework_step_ms", &self.framework_step_ms),
            ("micro_batch_overhead_ms", &self.micro_batch_overhead_ms),
            ("allocator_fragmentation", &self.allocator_fragmentation),
            ("allocator_reserve_bytes", &self.allocator_reserve_bytes),
            ("moe_imbalance", &self.moe_imbalance),
        ]
    }
}

/// The bundled training constants (parsed once; the file is checked by a test).
pub fn training_constants() -> &'static TrainingConstants {
    static C: OnceLock<TrainingConstants> = OnceLock::new();
    C.get_or_init(|| {
        TrainingConstants::from_json(TRAINING_CONSTANTS_JSON).unwrap_or_else(|e| panic!("bundled {e}"))
    })
}

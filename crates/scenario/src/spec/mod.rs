//! The specification: what a user writes and shares. The versioned `Scenario`, its validation,
//! the link codec, templates, the bundled scenarios, the auto-tune import format and the metric
//! registry. Plain data and checks: nothing here prices a configuration, and nothing here
//! imports the stages, the analyses or the evidence (they depend on it, never the reverse).

pub mod applies;
pub mod autotune;
pub mod bundled;
pub mod messages;
pub mod metrics;
pub mod options;
pub mod pretty;
pub mod scenario;
pub mod strict;
pub mod strict_inputs;
pub mod templates;
pub mod url;
pub mod validate;

// Option modules by their earlier paths (`spec::cluster`, `spec::diffusion`, `spec::serving_options`).
pub use options::{cluster, diffusion, serving_features as serving_options};

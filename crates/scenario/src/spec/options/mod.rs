//! The stages' options: plain serde data that a scenario carries and validates. The stages read
//! them; nothing here imports a stage.

pub mod cluster;
pub mod diffusion;
pub mod host_costs;
pub mod landscape;
pub mod releases;
pub mod runtime;
pub mod serving;
pub mod serving_features;
pub mod training;

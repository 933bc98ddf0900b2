//! The stages' options: plain serde data that a scenario carries and validates. The stages read
//! them; nothing here imports a stage.

pub mod landscape;
pub mod runtime;
pub mod serving;
pub mod training;

//! tunelab-scenario

pub mod autotune;
pub mod knowledge;
pub mod scenario;
pub mod stages;
pub mod templates;

pub use scenario::{Scenario, Stage, SCENARIO_VERSION};
pub use stages::{setup, StageSetup};

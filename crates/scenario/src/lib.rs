//! tunelab-scenario

pub mod autotune;
pub mod bundled;
pub mod focus;
pub mod empirical;
pub mod knowledge;
pub mod report;
pub mod run;
pub mod queueing;
pub mod scenario;
pub mod stages;
pub mod templates;
pub mod url;

pub use scenario::{Scenario, Stage, SCENARIO_VERSION};
pub use bundled::{bundled_scenario, bundled_scenarios};
pub use report::Report;
pub use run::{format_best, Progress, Run};
pub use stages::{setup, StageSetup};

//! tunelab-scenario

pub mod autotune;
pub mod blocks;
pub mod bundled;
pub mod cases;
pub mod context;
pub mod diagnosis;
pub mod focus;
pub mod graphcost;
pub mod empirical;
pub mod explore;
pub mod guards;
pub mod impact;
pub mod knowledge;
pub mod report;
pub mod run;
pub mod queueing;
pub mod scenario;
pub mod serving;
pub mod stages;
pub mod templates;
pub mod tileaxes;
pub mod train_diagnosis;
pub mod url;
pub mod validate;
/// The training and runtime stages (files under stages/, declared here by their author).
#[path = "stages/training.rs"]
pub mod training;
#[path = "stages/runtime.rs"]
pub mod runtime;

pub use scenario::{Scenario, Stage, SCENARIO_VERSION};
pub use bundled::{bundled_scenario, bundled_scenarios};
pub use report::Report;
pub use run::{format_best, Progress, Run};
pub use stages::{setup, StageSetup};

//! tunelab-scenario: wires the search engine to the device model. A versioned `Scenario` (what
//! the URL carries) becomes a stage (`stages::setup`: a space and an objective over the
//! simulator), a steppable `Run` with one study per strategy, and a `Report`.
//!
//! Why this shape: the browser and the CLI run the same `Run`, stepping it in slices, so a
//! scenario plus its seed gives the same trials everywhere; everything the user supplies goes
//! through `Scenario::from_json` or `url::decode`, which validate and never panic.

pub mod autotune;
pub mod blocks;
pub mod calibrate;
pub mod chips;
pub mod bundled;
pub mod cases;
pub mod context;
pub mod diagnosis;
pub mod focus;
pub mod graphcost;
pub mod empirical;
pub mod explore;
pub mod fidelity;
pub mod guards;
pub mod impact;
pub mod knowledge;
pub mod metrics;
pub mod report;
pub mod run;
pub mod queueing;
pub mod scenario;
pub mod scheduler;
pub mod serving;
/// Serving options beyond the scheduler basics (speculative decoding, KV type, datasets, ...).
#[path = "spec/serving_options.rs"]
pub mod serving_options;
pub mod stages;
pub mod templates;
pub mod tileaxes;
pub mod train_diagnosis;
pub mod url;
pub mod validate;
/// The training stage lives in `stages::` like the others; re-exported so that
/// `tunelab_scenario::training` paths keep working.
pub use stages::training;
/// The runtime stage lives in `stages::` too; re-exported for `tunelab_scenario::runtime` paths.
pub use stages::runtime;

pub use scenario::{Scenario, Stage, SCENARIO_VERSION};
pub use bundled::{bundled_scenario, bundled_scenarios};
pub use report::Report;
pub use run::{format_best, Progress, Run};
pub use stages::{setup, StageSetup};

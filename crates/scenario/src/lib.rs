//! tunelab-scenario: wires the search engine to the device model. A versioned `Scenario` (what
//! the URL carries) becomes a stage (`stages::setup`: a space and an objective over the
//! simulator), a steppable `Run` with one study per strategy, and a `Report`.
//!
//! Why this shape: the browser and the CLI run the same `Run`, stepping it in slices, so a
//! scenario plus its seed gives the same trials everywhere; everything the user supplies goes
//! through `Scenario::from_json` or `url::decode`, which validate and never panic.

// The crate is arranged by role (see each folder's module doc); dependencies point one way:
// spec <- stages <- run <- analyses, evidence. The specification imports none of the others.
pub mod analyses;
pub mod evidence;
pub mod run;
pub mod spec;
pub mod stages;

// Paths from before the arrangement by role keep working for the app, the CLI and the tests.
pub use analyses::{chips, diagnosis, diagnosis_text, explore, guards, impact, plan, report, train_diagnosis};
pub use evidence::{calibrate, cases, fidelity, knowledge};
pub use spec::{autotune, bundled, metrics, scenario, serving_options, templates, url, validate};
pub use stages::training::empirical;
pub use stages::{blocks, context, focus, graphcost, queueing, scheduler, serving, tileaxes};
pub use stages::{runtime, training};

pub use scenario::{Scenario, Stage, SCENARIO_VERSION};
pub use bundled::{bundled_scenario, bundled_scenarios};
pub use report::Report;
pub use run::{format_best, Progress, Run};
pub use stages::{setup, StageSetup};

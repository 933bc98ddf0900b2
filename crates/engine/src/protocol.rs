//! Messages between the page and a lane worker, sent as JSON text.
//!
//! Why JSON text: both sides are the same Rust types, serde_json is already in the page, and
//! floats round-trip exactly (`float_roundtrip`), so the page's mirror holds the very bits the
//! worker computed (the trace digest compares them with the CLI's).

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use tunelab_scenario::Scenario;
use tunelab_search::{StopReason, Trial};

/// Page to worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToWorker {
    /// Build the run of `scenario` and own its lanes `lanes` (one per worker when the machine
    /// has the cores); `warm` are transfer trials given to every lane before it starts. `run`
    /// tags every update, so the page drops stale ones.
    Start { run: u64, lanes: Vec<usize>, scenario: Box<Scenario>, warm: Vec<Trial> },
    /// Step until done or paused, sending updates on the way.
    Go { run: u64 },
    /// Stop stepping after the current slice and send an update.
    Pause { run: u64 },
    /// One study step (one evaluation) for each owned lane, then an update.
    Step { run: u64 },
    /// Forget the run.
    Drop,
    /// Compare chips: tune `scenario` on `chip` with `budget` evaluations per strategy, starting
    /// from `port` (the page's current best, also priced on the chip); answered once with
    /// `Tuned` (`tunelab_scenario::chips::chip_row`, what `tunelab chips` runs).
    Tune { run: u64, scenario: Box<Scenario>, chip: String, budget: usize, port: Option<tunelab_search::Config> },
    /// Explore: the heat map of the primary metric over parameters `x` and `y`, the others at
    /// the baseline (`tunelab_scenario::explore::heatmap`); answered once with `Heatmap`.
    Heatmap { run: u64, scenario: Box<Scenario>, x: String, y: String },
    /// A configuration's breakdown and roofline place (`explore::point_detail`, the stage's own
    /// objective); answered once with `Detail`.
    Detail { run: u64, scenario: Box<Scenario>, config: tunelab_search::Config },
    /// A view's question (`questions::answer`); answered once with `Answer`.
    Ask { run: u64, question: Box<crate::questions::Question> },
}

/// Worker to page. Externally tagged (`{"update": {...}}`), unlike `ToWorker`: an internally
/// tagged enum is read through serde's buffered `Content`, a second copy of every payload's
/// reader in the page's module (trials, heat maps, details, reports: tens of KiB gzipped).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FromWorker {
    /// The worker's module loaded and it takes messages (the page holds its messages until then:
    /// a worker's wasm loads asynchronously, and a message before that would be lost).
    Ready,
    /// The run is built; the baseline's outcome as the worker priced it (the page's mirror takes
    /// it rather than pricing it again on the page's thread).
    /// `shape`: the run's stage as data (`Run::shape`), so the page's mirror builds no stage
    /// (`Run::from_shape`); None for a landscape (the page draws its own landscape).
    Started {
        run: u64,
        baseline: Baseline,
        #[serde(default)]
        shape: Option<Box<tunelab_scenario::run::RunShape>>,
        /// The transfer trials `warm` gave every lane, as this run priced them
        /// (`Run::transferred`): the mirror adopts them (`Run::adopt_transferred`).
        #[serde(default)]
        transferred: Vec<Trial>,
    },
    /// One update per owned lane.
    Update { lanes: Vec<LaneUpdate> },
    Error { run: u64, message: String },
    /// One chip of a comparison (the answer to `Tune`).
    Tuned { run: u64, row: Box<tunelab_scenario::chips::ChipRow> },
    /// The answer to `Heatmap` (or why there is none).
    Heatmap { run: u64, map: Result<Box<tunelab_scenario::explore::HeatMap>, String> },
    /// The answer to `Detail`.
    Detail { run: u64, detail: Result<Box<tunelab_scenario::explore::PointDetail>, String> },
    /// The answer to `Ask`.
    Answer { run: u64, answer: Result<Box<crate::questions::Answer>, String> },
}

/// What a lane did since its last update.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LaneUpdate {
    pub run: u64,
    pub lane: usize,
    /// Trials recorded since the last update, in order.
    pub trials: Vec<Trial>,
    /// Batches told to the strategy so far ("generations").
    pub batches: usize,
    pub stop: Option<StopReason>,
    /// The strategy's latest snapshot, and those taken at each batch since the last update.
    pub snapshot: Json,
    pub snapshots: Vec<Json>,
    /// Generation lines since the last update.
    pub log: Vec<String>,
    /// True when the worker stopped stepping with this update (paused, step done, finished).
    pub idle: bool,
    /// Milliseconds the worker spent stepping since the last update (for the cores figure).
    pub busy_ms: f64,
}

impl ToWorker {
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
    pub fn from_text(s: &str) -> Result<ToWorker, String> {
        // Through a parsed tree, deserialised by reference: the scenario inside is then decoded
        // by the same code as every other scenario (one copy of that code in the page, not one
        // per kind of JSON reader; see the size budget in tests/e2e/size.mjs).
        let v: Json = serde_json::from_str(s).map_err(|e| format!("worker message: {e}"))?;
        ToWorker::deserialize(&v).map_err(|e| format!("worker message: {e}"))
    }
}

impl FromWorker {
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!("{{\"error\":{{\"run\":0,\"message\":\"update not serialisable: {}\"}}}}", e.to_string().replace('"', "'"))
        })
    }
    pub fn from_text(s: &str) -> Result<FromWorker, String> {
        // Through a parsed tree too (as `ToWorker::from_text`): the page's module then decodes
        // every update and answer with the tree's small reader, not with a copy of the text
        // reader per type (issue 46's 1 MiB first load). The values are the same (floats parse
        // exactly either way: serde_json's float_roundtrip).
        let v: Json = serde_json::from_str(s).map_err(|e| format!("worker update: {e}"))?;
        FromWorker::deserialize(&v).map_err(|e| format!("worker update: {e}"))
    }
}

/// The baseline's outcome (`tunelab_search::Outcome`, which has no serde form).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Baseline {
    Ok(Vec<f64>),
    Infeasible(String),
    Failed(String),
}

impl From<&tunelab_search::Outcome> for Baseline {
    fn from(o: &tunelab_search::Outcome) -> Self {
        match o {
            tunelab_search::Outcome::Ok(v) => Baseline::Ok(v.clone()),
            tunelab_search::Outcome::Infeasible(r) => Baseline::Infeasible(r.clone()),
            tunelab_search::Outcome::Failed(r) => Baseline::Failed(r.clone()),
        }
    }
}

impl From<Baseline> for tunelab_search::Outcome {
    fn from(b: Baseline) -> Self {
        match b {
            Baseline::Ok(v) => tunelab_search::Outcome::Ok(v),
            Baseline::Infeasible(r) => tunelab_search::Outcome::Infeasible(r),
            Baseline::Failed(r) => tunelab_search::Outcome::Failed(r),
        }
    }
}

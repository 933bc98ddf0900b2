//! What the serving tests share: a deployment scenario's baseline configuration with some
//! parameters set by name, and its serving statistics through the study's own objective.
#![allow(dead_code)]

use tunelab_scenario::stages::deployment::serve;
use tunelab_scenario::stages::scheduler::ServingStats;
use tunelab_scenario::stages::setup;
use tunelab_scenario::Scenario;
use tunelab_search::{Config, Value};

/// The stage's parameter names and its baseline with `set` applied (a name the stage does not
/// have panics, naming the parameters it has).
pub fn configured(s: &Scenario, set: &[(&str, Value)]) -> Result<(Vec<String>, Config), String> {
    let st = setup(s)?;
    let names = st.space.names().to_vec();
    let mut c = st.baseline.clone();
    for (n, v) in set {
        let k = names.iter().position(|x| x == n).unwrap_or_else(|| panic!("no parameter {n} in {names:?}"));
        c.0[k] = v.clone();
    }
    Ok((names, c))
}

/// Serves the baseline with `set` applied.
pub fn serve_with(s: &Scenario, set: &[(&str, Value)]) -> Result<ServingStats, String> {
    let (names, c) = configured(s, set)?;
    serve(s, &names, &c)
}

/// The operators of one serving step of the baseline with `set` applied (panics with the
/// stage's own message on a scenario it refuses).
pub fn step_with(s: &Scenario, set: &[(&str, Value)], phase: tunelab_scenario::serving::Phase) -> tunelab_scenario::stages::deployment::StepOperators {
    let (names, c) = configured(s, set).unwrap_or_else(|e| panic!("{e}"));
    tunelab_scenario::stages::deployment::step_operators(s, &names, &c, phase, None).unwrap_or_else(|e| panic!("{e}"))
}

/// A scenario's baseline value (the first metric, e.g. an operator stage's ms) and the run's
/// notes, both as the study computes them.
pub fn baseline_and_notes(s: &Scenario) -> (f64, Vec<String>) {
    let run = tunelab_scenario::Run::new(s).unwrap();
    let notes = run.notes().to_vec();
    let mut st = setup(s).unwrap();
    let base = st.baseline.clone();
    match st.objective.evaluate(&base) {
        tunelab_search::Outcome::Ok(v) => (v[0], notes),
        o => panic!("{o:?}"),
    }
}

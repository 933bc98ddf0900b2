//! Compare chips by tuning on each: the same scenario (strategies, seed, goal, limits) with the
//! chip swapped, tuned on its own, so each chip is shown at its own best configuration, not at
//! the configuration another chip's tuning found. Beside it, that other configuration ("ported")
//! priced on the chip by the same stage objective, so the user sees what re-tuning buys. Each
//! chip's study starts from the ported configuration (a warm start, re-priced on the chip, no
//! budget spent), so its own best is never worse than the ported one.
//!
//! The browser runs one `chip_row` per chip in a Web Worker, porting the run's best; `tunelab
//! chips` runs the scenario first (`current_best`, as `tunelab run` does) and then the same
//! `chip_row`s, so both show the same numbers for the same scenario and budget.

use crate::stages::context::{chip_label, title};
use crate::spec::scenario::{DeviceRef, Scenario};
use crate::Run;
use serde::{Deserialize, Serialize};
use tunelab_search::{Config, Trial, TrialState};

/// Evaluations per strategy each chip is tuned with by default (or the scenario's budget when
/// smaller): a short study, stated wherever the comparison is shown.
pub const COMPARE_BUDGET: usize = 100;

/// One chip's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChipRow {
    /// Bundled chip name.
    pub chip: String,
    /// The tuned scenario's title (model, this chip, stage, goal).
    pub title: String,
    /// Evaluations per strategy the chip was tuned with.
    pub budget: usize,
    /// Evaluations spent over all strategies.
    pub evaluations: usize,
    /// The strategy that found the chip's best (None when no trial beat the ported start).
    pub best_strategy: Option<String>,
    /// The chip's best is the ported configuration itself: the short study found nothing better.
    pub best_is_ported: bool,
    /// The chip's own best configuration, as `Config::describe` writes it, and its values.
    pub best_config: Option<String>,
    #[serde(skip)]
    pub best: Option<Config>,
    /// Every metric of the chip's own best: (name, value, unit), goal first.
    pub metrics: Vec<(String, f64, String)>,
    /// The ported configuration (another chip's best) priced on this chip: its metrics, or why
    /// it cannot run here.
    pub ported: Option<Result<Vec<(String, f64, String)>, String>>,
    /// Why the chip could not be tuned (the scenario does not build on it, nothing feasible).
    pub error: Option<String>,
}

impl ChipRow {
    /// The goal's value on this chip at its own best.
    pub fn goal(&self) -> Option<f64> {
        self.metrics.first().map(|m| m.1)
    }

    /// The goal's value of the ported configuration on this chip.
    pub fn ported_goal(&self) -> Option<f64> {
        self.ported.as_ref().and_then(|r| r.as_ref().ok()).and_then(|m| m.first()).map(|m| m.1)
    }
}

/// Evaluations per strategy a comparison asked for `wanted` uses (at least 1, at most the
/// scenario's own budget).
pub fn budget_for(s: &Scenario, wanted: usize) -> usize {
    wanted.clamp(1, s.budget.max(1))
}

/// The scenario with its chip swapped and its budget set: everything else (strategies, seed,
/// goal, limits, workload) stays, and its name is the title naming the new chip.
pub fn chip_scenario(s: &Scenario, chip: &str, budget: usize) -> Scenario {
    let mut t = s.clone();
    t.device = DeviceRef::Name(chip.to_string());
    t.budget = budget_for(s, budget);
    t.name = title(&t);
    t
}

/// Tunes the scenario on `chip` with `budget` evaluations per strategy, and prices `port` (if
/// given) on that chip through the same stage objective. Errors come back in the row.
pub fn chip_row(s: &Scenario, chip: &str, budget: usize, port: Option<&Config>) -> ChipRow {
    let t = chip_scenario(s, chip, budget);
    let mut row = ChipRow {
        chip: chip.to_string(),
        title: t.name.clone(),
        budget: t.budget,
        evaluations: 0,
        best_strategy: None,
        best_is_ported: false,
        best_config: None,
        best: None,
        metrics: Vec::new(),
        ported: None,
        error: None,
    };
    let mut run = match Run::new(&t) {
        Ok(r) => r,
        Err(e) => {
            row.error = Some(e);
            return row;
        }
    };
    // The study starts from the ported configuration, re-priced on this chip (a warm start:
    // it costs no budget), as an engineer moving to a new chip would: so the chip's own best is
    // never worse than the ported one when that runs here.
    if let Some(c) = port {
        let seed = Trial { id: 0, config: c.clone(), state: TrialState::Ok, values: Vec::new(), reason: None, warm: true, evaluation: 0 };
        if let Err(e) = run.warm_start(&[seed]) {
            row.error = Some(e);
            return row;
        }
    }
    run.run_to_end();
    row.evaluations = run.evaluations();
    let names = run.space().names().to_vec();
    match run.overall_best() {
        Some((i, trial)) => {
            row.best_is_ported = trial.warm;
            row.best_strategy = (!trial.warm).then(|| run.lanes()[i].spec.name.clone());
            row.best_config = Some(trial.config.describe(&names));
            row.metrics = run.metrics().iter().zip(&trial.values).map(|(m, v)| (m.name.clone(), *v, m.unit.clone())).collect();
            row.best = Some(trial.config.clone());
        }
        None => row.error = Some(format!("no feasible configuration in {} evaluations", row.evaluations)),
    }
    if let Some(c) = port {
        row.ported = Some(crate::analyses::guards::check_compatibility(s, c, chip).and_then(|r| if r.compatible { Ok(r.metrics) } else { Err(r.problems.join("; ")) }));
    }
    row
}

/// Whether the scenario can be compared across chips: its stage builds, and it is priced by the
/// device model. A landscape's values are measurements of one kernel on one GPU, or a function:
/// every chip would show the same numbers, so it is refused with a reason.
pub fn comparable(s: &Scenario) -> Result<(), String> {
    if s.stage == crate::Stage::Landscape {
        return Err("a landscape's values do not depend on the chip: nothing to compare".into());
    }
    crate::stages::setup(s).map(|_| ())
}

/// The chip the scenario names ("custom chip" for an inline profile).
pub fn home_chip(s: &Scenario) -> String {
    chip_label(s)
}

/// The scenario tuned as it stands (its own budget, as `tunelab run` does): its best
/// configuration, the "current best" the comparison ports to every chip.
pub fn current_best(s: &Scenario) -> Result<Option<Config>, String> {
    let mut run = Run::new(s)?;
    run.run_to_end();
    Ok(run.overall_best().map(|(_, t)| t.config.clone()))
}

/// Every bundled chip tuned with `budget` evaluations per strategy, each study started from
/// `port` (the current best; `current_best`), which each row also prices on its chip.
pub fn compare(s: &Scenario, budget: usize, port: Option<&Config>) -> Vec<ChipRow> {
    tunelab_sim::device::bundled_names().into_iter().map(|chip| chip_row(s, chip, budget, port)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario() -> Scenario {
        let mut s = crate::bundled_scenario("llama2-7b-910B2-deployment").unwrap();
        s.budget = 300;
        s
    }

    #[test]
    fn a_landscape_is_not_compared_across_chips() {
        let mut s = Scenario { stage: crate::Stage::Landscape, ..Scenario::default() };
        s.landscape = Some(crate::stages::landscape::LandscapeSource::Toy(crate::stages::landscape::ToySpec { function: "branin".into(), resolution: 9 }));
        assert!(crate::stages::setup(&s).is_ok(), "a toy landscape builds");
        assert!(comparable(&s).unwrap_err().contains("do not depend on the chip"));
        assert!(comparable(&scenario()).is_ok());
    }

    #[test]
    fn a_chip_scenario_changes_only_the_chip_budget_and_name() {
        let s = scenario();
        let t = chip_scenario(&s, "910B4", 40);
        assert_eq!(t.device, DeviceRef::Name("910B4".into()));
        assert_eq!(t.budget, 40);
        assert!(t.name.contains("910B4") && !t.name.contains("910B2"), "{}", t.name);
        assert_eq!((t.seed, t.strategies().len(), &t.objectives, &t.constraints), (s.seed, s.strategies().len(), &s.objectives, &s.constraints));
        assert_eq!(budget_for(&s, 10_000), 300, "never more than the scenario's own budget");
        assert_eq!(budget_for(&s, 0), 1);
    }

    /// Each chip's best is its own study's best (a run of the chip's scenario gives the same),
    /// it is at least as good as the home chip's best ported there (when both were priced, the
    /// own study saw at least the baseline), and the home chip's row is its own study.
    #[test]
    fn each_chip_is_tuned_on_its_own() {
        let mut s = scenario();
        s.budget = 40;
        let best = current_best(&s).unwrap().unwrap();
        let rows = compare(&s, 12, Some(&best));
        assert_eq!(rows.len(), tunelab_sim::device::bundled_names().len());
        let home = rows.iter().find(|r| r.chip == "910B2").unwrap();
        // On its own chip the current best is priced as the run priced it.
        let mut run = Run::new(&s).unwrap();
        run.run_to_end();
        assert_eq!(home.ported_goal(), run.overall_best().and_then(|(_, t)| t.value()));
        let b4 = rows.iter().find(|r| r.chip == "910B4").unwrap();
        assert!(b4.title.contains("910B4"));
        assert_eq!(b4.budget, 12);
        // Its own study: the chip's scenario, warm-started from the home chip's best.
        let mut run = Run::new(&chip_scenario(&s, "910B4", 12)).unwrap();
        let seed = Trial { id: 0, config: best.clone(), state: TrialState::Ok, values: Vec::new(), reason: None, warm: true, evaluation: 0 };
        run.warm_start(&[seed]).unwrap();
        run.run_to_end();
        assert_eq!(b4.goal(), run.overall_best().and_then(|(_, t)| t.value()));
        // Never worse than the ported configuration where that runs (the goal is maximised).
        for r in &rows {
            if let (Some(own), Some(p)) = (r.goal(), r.ported_goal()) {
                assert!(own >= p, "{}: own {own} < ported {p}", r.chip);
            }
        }
        assert!(b4.evaluations > 0 && b4.evaluations <= 12 * s.strategies().len(), "{} evaluations, 12 per strategy", b4.evaluations);
        // Determinism: the same row twice.
        assert_eq!(chip_row(&s, "910B4", 12, Some(&best)), *b4);
        // The ported configuration is priced by the stage objective on that chip.
        let port = crate::analyses::guards::check_compatibility(&s, &best, "910B4").unwrap();
        match &b4.ported {
            Some(Ok(m)) => assert_eq!(m, &port.metrics),
            Some(Err(e)) => assert!(!port.compatible, "{e}"),
            None => panic!("not priced"),
        }
    }
}

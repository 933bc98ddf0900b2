//! One evaluation path: the impact analyser's "before" figures are what `tunelab eval` prints for
//! the scenario (the stage objective at the baseline configuration), for every bundled deployment
//! and training scenario; and its "after" is the same objective at the changed configuration.

use tunelab_scenario::impact::{analyse, Change};
use tunelab_scenario::{bundled_scenarios, Run, Stage};
use tunelab_search::{Outcome, Value};

/// `tunelab eval`'s answer: the run's objective at a configuration, by metric name (Err: the
/// reason it is infeasible).
fn eval_or_why(run: &mut Run, config: &tunelab_search::Config, metric: &str) -> Result<f64, String> {
    let i = run.metrics().iter().position(|m| m.name == metric).unwrap_or_else(|| panic!("no metric {metric}"));
    match run.evaluate(config) {
        Outcome::Ok(v) => Ok(v[i]),
        Outcome::Infeasible(r) | Outcome::Failed(r) => Err(r),
    }
}

fn eval(run: &mut Run, config: &tunelab_search::Config, metric: &str) -> f64 {
    eval_or_why(run, config, metric).unwrap()
}

fn row<'a>(r: &'a tunelab_scenario::impact::ImpactReport, stage: &str, measure: &str) -> &'a tunelab_scenario::impact::ImpactRow {
    r.rows.iter().find(|x| x.stage == stage && x.measure == measure).unwrap_or_else(|| panic!("no row {stage}/{measure}"))
}

#[test]
fn impact_before_equals_eval_on_every_bundled_deployment_and_training_scenario() {
    let mut checked = 0;
    for (name, s) in bundled_scenarios() {
        let s = s.unwrap();
        let rows: &[(&str, &str, &str)] = match s.stage {
            Stage::Deployment => &[("inference", "TPOT", "tpot_ms"), ("inference", "TTFT", "ttft_ms")],
            Stage::Training => &[("training", "memory per chip", "memory_gib"), ("training", "step time", "step_time_ms")],
            _ => continue,
        };
        let mut run = Run::new(&s).unwrap();
        let base = run.baseline_config().clone();
        let r = analyse(&s, &Change { batch: Some(16), ..Change::default() }, Default::default()).unwrap();
        for (stage, measure, metric) in rows {
            let got = row(&r, stage, measure);
            match eval_or_why(&mut run, &base, metric) {
                Ok(e) => {
                    let b = got.before.unwrap_or_else(|| panic!("{name}: {stage}/{measure} has no before: {:?}", got.note));
                    assert_eq!(b.to_bits(), e.to_bits(), "{name}: impact {stage}/{measure} before {b} but eval {metric} {e}");
                }
                // The baseline does not run (e.g. out of memory): impact says so with eval's reason.
                Err(why) => {
                    assert!(got.before.is_none(), "{name}: eval says '{why}' but impact has a before");
                    assert!(got.note.as_deref().is_some_and(|n| n.contains(&why)), "{name}: impact note {:?} lacks '{why}'", got.note);
                }
            }
        }
        checked += 1;
    }
    assert!(checked >= 4, "only {checked} bundled deployment/training scenarios");
}

#[test]
fn impact_after_is_the_objective_at_the_changed_configuration() {
    let s = tunelab_scenario::bundled_scenario("llama2-7b-910B2-deployment").unwrap();
    let mut run = Run::new(&s).unwrap();
    let mut cfg = run.baseline_config().clone();
    let i = run.space().names().iter().position(|n| n == "batch").unwrap();
    cfg.0[i] = Value::Int(16);
    let r = analyse(&s, &Change { batch: Some(16), ..Change::default() }, Default::default()).unwrap();
    let row = r.rows.iter().find(|x| x.measure == "TPOT").unwrap();
    assert_eq!(row.after.unwrap().to_bits(), eval(&mut run, &cfg, "tpot_ms").to_bits());
}

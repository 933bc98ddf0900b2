//! Transfer: a run warm-started from a similar saved case starts from what that case learned.

use tunelab_scenario::cases::{case_from_run, fingerprint_of};
use tunelab_scenario::knowledge::KnowledgeBase;
use tunelab_scenario::{Run, Scenario};

fn scenario(seed: u64, budget: usize) -> Scenario {
    let mut s = Scenario::default();
    s.seed = seed;
    s.budget = budget;
    s
}

#[test]
fn warm_start_from_a_saved_case_starts_at_its_best() {
    let first = scenario(1, 40);
    let mut run = Run::new(&first).unwrap();
    run.run_to_end();
    let earlier_best = run.best_value(0).unwrap();
    let mut kb = KnowledgeBase::new();
    kb.add(case_from_run(&run, "earlier").unwrap());

    // A different seed and a tiny budget: without transfer it would rarely match the earlier best.
    let second = scenario(2, 1);
    let mut warm = Run::new(&second).unwrap();
    let fp = fingerprint_of(&second).unwrap();
    let trials = kb.warm_trials(&fp, warm.space(), warm.metrics(), 100);
    assert!(!trials.is_empty(), "a case of the same model, chip and stage is similar");
    assert!(warm.warm_start(&trials).unwrap() > 0);
    let m = warm.metrics()[0].clone();
    let before_any = warm.best_value(0).unwrap();
    // Transfer re-prices configurations on this scenario (issue 13 #3; the serving simulation
    // depends on the seed): the earlier best configuration is known before spending budget, at
    // its value HERE, never at the earlier scenario's value.
    let best_cfg = run.best_trial(0).unwrap().config.clone();
    assert!(warm.transferred().iter().any(|t| t.config == best_cfg), "the earlier best configuration is transferred");
    let here = match warm.evaluate(&best_cfg) {
        tunelab_search::Outcome::Ok(v) => v[0],
        o => panic!("the earlier best is not feasible here: {o:?}"),
    };
    assert!(m.signed(before_any) <= m.signed(here), "the transferred best is known before spending budget");
    let _ = earlier_best;
    warm.run_to_end();
    assert_eq!(warm.evaluations(), 1, "warm trials cost no budget");
    assert!(m.signed(warm.best_value(0).unwrap()) <= m.signed(here));
}

#[test]
fn warm_start_after_evaluating_is_refused() {
    let mut run = Run::new(&scenario(3, 5)).unwrap();
    run.step(1);
    assert!(run.warm_start(&[]).unwrap_err().contains("before the first evaluation"));
}

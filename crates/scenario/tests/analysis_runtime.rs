//! Runtime: the monitor detects the breach the spike causes, the warm-started re-tune fixes or
//! reduces it, and the whole timeline is deterministic.

use tunelab_scenario::runtime::simulate_runtime;
use tunelab_scenario::{Scenario, Stage};

fn scenario() -> Scenario {
    let mut s = Scenario::default(); // llama-2-7b on 910B2
    s.stage = Stage::Runtime;
    s.budget = 48;
    s.seed = 3;
    s
}

#[test]
fn spike_breach_is_detected_and_retuning_helps() {
    let s = scenario();
    let t = simulate_runtime(&s).unwrap();
    println!("peak {:.2} req/s, configs {:#?}", t.peak_rps, t.configs);
    for e in &t.events {
        println!("{e:?}");
    }
    assert_eq!(t.steps.len(), 48);
    // The load rises through the day to the spike (19:00-21:00, steps 38-41), past what the
    // first configuration can take under the SLO (with the scheduler, Poisson bursts breach
    // the p90 TTFT before the spike itself): the monitor sees it and re-tunes, and the spike
    // is then served within the SLO or re-tuned for again.
    let spike = t.events.iter().find(|e| e.kind == "breach" && e.step < 42).expect("the rising load causes a breach by the spike");
    assert!((38..42).all(|i| !t.steps[i].breach || t.events.iter().any(|e| e.step == i)));
    assert!(spike.warm_trials > 0, "re-tune is warm-started");
    for e in t.events.iter().filter(|e| e.kind == "breach") {
        let after = &t.steps[e.step];
        if e.fixed {
            assert!(!after.breach, "{e:?} {after:?}");
        } else {
            // Not fixed: the re-tune must at least have changed the configuration.
            assert_ne!(e.from, e.to, "{e:?}");
        }
    }
    // Every breach triggered a re-tune, and no step breached before the first one.
    let first = t.events.iter().map(|e| e.step).min().unwrap();
    assert!(t.steps[..first].iter().all(|x| !x.breach));
    assert!(t.steps.iter().filter(|x| x.breach).all(|x| t.events.iter().any(|e| e.step == x.step)));
}

#[test]
fn runtime_is_deterministic_and_checks_its_options() {
    let s = scenario();
    assert_eq!(simulate_runtime(&s).unwrap(), simulate_runtime(&s).unwrap());
    let mut bad = scenario();
    bad.runtime.trace = tunelab_scenario::runtime::TraceSpec::Name("weekly".into());
    assert!(simulate_runtime(&bad).unwrap_err().contains("unknown trace"));
    bad.runtime.trace = tunelab_scenario::runtime::TraceSpec::Loads(vec![0.5, 2.0]);
    assert!(simulate_runtime(&bad).is_err());
    let mut st = tunelab_scenario::runtime::setup(&s).ok().expect("runtime stage builds");
    let out = st.objective.evaluate(&st.baseline.clone());
    assert!(matches!(out, tunelab_search::Outcome::Ok(_) | tunelab_search::Outcome::Infeasible(_)));
}


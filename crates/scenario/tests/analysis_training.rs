//! Training stage: memory falls with ZeRO stage and recomputation, MFU is a fraction, the
//! pipeline bubble follows (pp-1)/(m+pp-1), out-of-memory points say why, and the learning-rate
//! advice is labelled as an empirical fit.

use tunelab_scenario::training::{decode, setup, simulate, TrainPoint};
use tunelab_scenario::{Scenario, Stage};
use tunelab_search::{Config, Outcome, Value};

fn scenario() -> Scenario {
    let mut s = Scenario::default();
    s.stage = Stage::Training;
    s.workload.seq_len = 4096;
    s.workload.global_batch = 64;
    s
}

fn point(tp: i64, pp: i64, dp: i64, mb: i64, rc: &str, zero: &str) -> Config {
    Config(vec![Value::Int(tp), Value::Int(pp), Value::Int(dp), Value::Int(mb), rc.into(), zero.into(), "off".into(), "bf16".into(), Value::Int(1), Value::Int(1), Value::Int(1)])
}

#[test]
fn memory_falls_with_zero_and_recompute() {
    let s = scenario();
    let mut st = setup(&s).unwrap();
    let names = st.space.names().to_vec();
    assert_eq!(names.len(), 11);
    let mem = |c: &Config| {
        let (model, device, _) = tunelab_scenario::context::resolve(&s).unwrap();
        let p = decode(&names, c, 64).unwrap();
        simulate(&model, &device, &p, 4096, 64, 8).map(|r| r.memory_gib).unwrap_or_else(|e| {
            // Out of memory is fine for the test of ordering: read the figure from the reason.
            assert!(e.contains("out of memory"), "{e}");
            e.split_whitespace().nth(3).and_then(|x| x.parse().ok()).unwrap()
        })
    };
    let z: Vec<f64> = ["zero0", "zero1", "zero2", "zero3"].iter().map(|z| mem(&point(1, 1, 8, 1, "none", z))).collect();
    assert!(z[0] > z[1] && z[1] > z[2] && z[2] > z[3], "ZeRO memory {z:?}");
    let r: Vec<f64> = ["none", "selective", "full"].iter().map(|r| mem(&point(1, 1, 8, 1, r, "zero1"))).collect();
    // With flash attention the scores are never stored, so selective recomputation (which
    // recomputes exactly them, Korthikanti et al. 2022) saves nothing more; full saves a lot.
    assert!(r[0] >= r[1] && r[1] > r[2], "recompute memory {r:?}");
    // The objective marks a point that cannot fit as infeasible, with the reason.
    match st.objective.evaluate(&point(1, 1, 8, 8, "none", "zero0")) {
        Outcome::Infeasible(r) => assert!(r.contains("out of memory") && r.contains("GiB"), "{r}"),
        o => panic!("expected out of memory, got {o:?}"),
    }
}

#[test]
fn mfu_is_a_fraction_and_bubble_follows_the_schedule() {
    let s = scenario();
    let (model, device, _) = tunelab_scenario::context::resolve(&s).unwrap();
    let st = setup(&s).unwrap();
    let names = st.space.names().to_vec();
    let p: TrainPoint = decode(&names, &point(2, 2, 2, 1, "selective", "zero1"), 64).unwrap();
    assert_eq!(p.train.grad_accum, 32);
    let r = simulate(&model, &device, &p, 4096, 64, 8).unwrap();
    assert!(r.mfu > 0.0 && r.mfu < 1.0, "MFU {}", r.mfu);
    assert!((r.bubble_fraction - 1.0 / 33.0).abs() < 1e-12);
    assert!(r.tokens_per_s > 0.0 && r.step_time_ms > 0.0);
    // Wrong products and uneven batches are infeasible with reasons.
    let bad = decode(&names, &point(2, 2, 4, 1, "none", "zero1"), 64).unwrap();
    assert!(simulate(&model, &device, &bad, 4096, 64, 8).unwrap_err().contains("chips"));
    assert!(st.space.check(&point(2, 2, 4, 1, "none", "zero1")).is_err());
    assert!(st.notes.iter().any(|n| n.contains("empirical fit") && n.contains("not a simulation")));
}

#[test]
fn training_study_runs_and_baseline_is_in_space() {
    let mut s = scenario();
    s.budget = 12;
    let mut st = setup(&s).unwrap();
    assert!(st.space.contains(&st.baseline));
    let out = st.objective.evaluate(&st.baseline.clone());
    assert!(matches!(out, Outcome::Ok(_) | Outcome::Infeasible(_)));
    s.training.chips = 0;
    assert!(setup(&s).err().unwrap().contains("chips"));
}

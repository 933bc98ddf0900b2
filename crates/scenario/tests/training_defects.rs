//! Regression tests for the training stage's defects (issue 13 #1, #7, #11; issue 9's
//! accumulation accounting and the sequence-parallel message). Each failed before its fix.

use tunelab_scenario::training::{decode, setup, simulate, PARAMS};
use tunelab_scenario::{Scenario, Stage};
use tunelab_search::{Config, Value};

fn names() -> Vec<String> {
    PARAMS.iter().map(|s| s.to_string()).collect()
}

/// Issue 13 #1: a 10^7-level micro-batch range with no feasible baseline used to walk the whole
/// product space (1.9 s per 10^3 levels); now the range is refused at setup with its name.
#[test]
fn huge_micro_batch_range_is_refused_not_walked() {
    let text = r#"{"stage":"training","training":{"chips":8},"space":{"micro_batch":{"low":3,"high":20000001,"step":2}},"budget":10}"#;
    let s = Scenario::from_json(text).unwrap();
    let e = setup(&s).err().expect("refused");
    assert!(e.contains("space.micro_batch"), "{e}");
    // A modest range with no feasible point is a clear setup error too, not a walk.
    let text = r#"{"stage":"training","training":{"chips":8},"workload":{"global_batch":256},"space":{"micro_batch":{"low":3,"high":4001,"step":2}},"budget":10}"#;
    let e = setup(&Scenario::from_json(text).unwrap()).err().expect("no feasible point");
    assert!(e.contains("no configuration") && e.contains("micro_batch"), "{e}");
}

/// Issue 13 #7: a micro-batch override of -4 was accepted and reported as the best with the
/// micro-batch-1 numbers.
#[test]
fn negative_or_zero_overrides_are_refused() {
    for (name, v) in [("micro_batch", "-4"), ("micro_batch", "0"), ("tp", "-2"), ("cp", "0"), ("vpp", "-1")] {
        let text = format!(r#"{{"stage":"training","space":{{"{name}":{{"fixed":{v}}}}}}}"#);
        let e = setup(&Scenario::from_json(&text).unwrap()).err().unwrap_or_else(|| panic!("{name}={v} accepted"));
        assert!(e.contains(&format!("space.{name}")), "{e}");
    }
    let e = setup(&Scenario::from_json(r#"{"stage":"training","space":{"recompute":{"choices":["sometimes"]}}}"#).unwrap()).err().unwrap();
    assert!(e.contains("space.recompute") && e.contains("sometimes"), "{e}");
    // decode itself refuses a negative value instead of clamping it to 1.
    let c = Config(vec![Value::Int(1), Value::Int(1), Value::Int(8), Value::Int(-4)]);
    assert!(decode(&names(), &c, 64).unwrap_err().contains("micro_batch"));
}

/// Issue 13 #11: sequence lengths the workload refuses must be refused by scenario validation.
#[test]
fn one_sequence_length_limit() {
    for seq in [4_194_305i64, 9_999_999] {
        let text = format!(r#"{{"stage":"training","workload":{{"seq_len":{seq}}}}}"#);
        let e = Scenario::from_json(&text).err().unwrap_or_else(|| panic!("seq_len {seq} accepted"));
        assert!(e.contains("workload.seq_len"), "{e}");
    }
    assert!(Scenario::from_json(r#"{"stage":"training","workload":{"seq_len":4194304}}"#).is_ok());
}

/// Sequence parallelism at tp = 1 says why it is refused (it used to surface as "the default
/// configuration is outside the tuned space").
#[test]
fn sequence_parallel_at_tp1_names_the_reason() {
    let mut s = Scenario { stage: Stage::Training, ..Scenario::default() };
    s.workload.global_batch = 64;
    let st = setup(&s).unwrap();
    let (model, device, _) = tunelab_scenario::context::resolve(&s).unwrap();
    let c = Config(vec![Value::Int(1), Value::Int(1), Value::Int(8), Value::Int(1), "full".into(), "zero1".into(), "on".into(), "bf16".into(), Value::Int(1), Value::Int(1), Value::Int(1)]);
    let p = decode(st.space.names(), &c, 64).unwrap();
    let e = simulate(&model, &device, &p, 4096, 64, 8).unwrap_err();
    assert!(e.contains("tp > 1") && e.contains("sequence parallel"), "{e}");
}

/// Issue 9: with gradient accumulation the exposed data-parallel communication jumped
/// 0 -> 31 -> 1370 ms for accumulation 1 / 8 / 32 (all micro-batches' reduce-scatters against the
/// last backward). Per micro-batch accounting keeps it flat for every sharding.
#[test]
fn exposed_dp_communication_does_not_grow_with_accumulation() {
    let s = Scenario { stage: Stage::Training, ..Scenario::default() };
    let st = setup(&s).unwrap();
    let (model, device, _) = tunelab_scenario::context::resolve(&s).unwrap();
    for zero in ["zero0", "zero1", "zero2", "distributed_optimizer"] {
        let exposed: Vec<f64> = [1i64, 8, 32]
            .iter()
            .map(|&accum| {
                let gb = 4 * accum as u64;
                let c = Config(vec![Value::Int(2), Value::Int(1), Value::Int(4), Value::Int(1), "full".into(), zero.into(), "off".into(), "bf16".into(), Value::Int(1), Value::Int(1), Value::Int(1)]);
                let p = decode(st.space.names(), &c, gb).unwrap();
                assert_eq!(p.train.grad_accum, accum as u64);
                simulate(&model, &device, &p, 4096, gb, 8).unwrap().dp_comm_exposed_ms
            })
            .collect();
        let per_mb = |i: usize, m: f64| exposed[i] / m;
        // Once-per-step syncs: flat; ZeRO-2's per-micro-batch syncs: linear in m at most.
        assert!(per_mb(2, if zero == "zero2" { 32.0 } else { 1.0 }) <= per_mb(0, 1.0) + 1e-9, "{zero}: {exposed:?}");
    }
}

/// Issue 9: ZeRO-3 parameter gathers counted as free whenever they totalled less than compute.
/// Prefetching hides a layer's gather behind the previous layer only, so each pass's first
/// gather is exposed.
#[test]
fn zero3_gathers_are_not_free() {
    let s = Scenario { stage: Stage::Training, ..Scenario::default() };
    let st = setup(&s).unwrap();
    let (model, device, _) = tunelab_scenario::context::resolve(&s).unwrap();
    let at = |zero: &str| {
        let c = Config(vec![Value::Int(1), Value::Int(1), Value::Int(8), Value::Int(1), "full".into(), zero.into(), "off".into(), "bf16".into(), Value::Int(1), Value::Int(1), Value::Int(1)]);
        let p = decode(st.space.names(), &c, 64).unwrap();
        simulate(&model, &device, &p, 4096, 64, 8).unwrap()
    };
    let z3 = at("zero3");
    assert!(z3.dp_comm_exposed_ms > 0.0, "{}", z3.dp_comm_exposed_ms);
    assert!(z3.overlap_note.contains("first layer"), "{}", z3.overlap_note);
}

//! Bad input to the analysis modules gives a clear message or a marked cell, never a panic.

use tunelab_scenario::*;

#[test]
fn explore_marks_out_of_memory_and_rejects_bad_configs() {
    // The static simple mode holds every sequence's whole KV cache at once, so big batches run
    // out of memory (the scheduler would only admit fewer sequences).
    let mut s = Scenario::default();
    s.deployment.serving.mode = "static".into();
    let h = explore::heatmap(&s, "batch", "tp", None).unwrap();
    assert!(h.cells.iter().flatten().filter_map(|c| c.reason.as_deref()).any(|r| r.contains("out of memory")));
    let d = explore::point_detail(&s, &tunelab_search::Config(vec![])).unwrap();
    assert!(d.infeasible.is_some());
    let mut o = Scenario::default();
    o.stage = Stage::Operator;
    let st = stages::setup(&o).unwrap();
    let n = st.space.names().to_vec();
    assert!(explore::heatmap(&o, &n[0], &n[1], None).is_ok());
}

#[test]
fn absurd_workloads_and_options_are_messages() {
    let mut w = Scenario::default();
    w.workload.batch = 1_000_000;
    let d = diagnosis::diagnose(&w, None, Default::default()).unwrap();
    assert!(d.infeasible.unwrap().contains("out of memory"));
    let mut r = Scenario::default();
    r.stage = Stage::Runtime;
    r.runtime.peak_rps = Some(1e300);
    r.runtime.trace = runtime::TraceSpec::Loads(vec![1.0, 0.5]);
    let t = runtime::simulate_runtime(&r).unwrap();
    assert!(t.steps[0].breach);
    r.runtime = Default::default();
    r.runtime.peak_rps = Some(-1.0);
    assert!(runtime::simulate_runtime(&r).unwrap_err().contains("positive"));
    // Typed options: a wrong type is refused when the scenario is read, naming the field.
    let e = Scenario::from_json(r#"{"stage": "runtime", "runtime": {"percentile": "x"}}"#).unwrap_err();
    assert!(e.contains("runtime"), "{e}");
    let mut tr = Scenario::default();
    tr.stage = Stage::Training;
    tr.training.chips = 3;
    assert!(stages::setup(&tr).is_ok());
    tr.training.chips = 4096;
    tr.training.micro_batches = vec![1_000_000];
    // No micro-batch of 10^6 divides the global batch of 256: said at setup, not searched for.
    assert!(stages::setup(&tr).err().unwrap().contains("no configuration"));
    tr.model = scenario::ModelRef::Id("sd15-unet".into());
    assert!(stages::setup(&tr).err().unwrap().contains("operator graph"));
    let bad = impact::Change { precision: Some("int4".into()), ..Default::default() };
    assert!(impact::analyse(&w, &bad, Default::default()).unwrap_err().contains("int4"));
}

#[test]
fn compatibility_names_the_problem() {
    let s = Scenario::default();
    let base = stages::setup(&s).unwrap().baseline;
    let small = guards::check_compatibility(&s, &base, "310B1").unwrap();
    assert!(!small.compatible && small.problems[0].contains("out of memory"), "{small:?}");
    let same = guards::check_compatibility(&s, &base, "910B2").unwrap();
    assert!(same.compatible && !same.metrics.is_empty());
    assert!(guards::check_compatibility(&s, &base, "nope").unwrap_err().contains("unknown device"));
}

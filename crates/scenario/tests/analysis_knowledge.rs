//! Knowledge base: fingerprints, similarity, warm start, packages with checksums, corrupt stores.

use tunelab_scenario::knowledge::*;
use tunelab_search::{Config, Metric, Param, Space, Trial, TrialState, Value};

fn fp(model: &str, chip: &str, stage: &str) -> Fingerprint {
    Fingerprint { model: model.into(), family: "llm".into(), params_b: 7.0, chip: chip.into(), stage: stage.into() }
}

fn case(seed: u64) -> Case {
    let trials = (0..6)
        .map(|i| Trial {
            id: i,
            config: Config(vec![Value::Int(1 << i), Value::Str(if i % 2 == 0 { "fp16" } else { "w8a16" }.into())]),
            state: if i == 5 { TrialState::Infeasible } else { TrialState::Ok },
            values: if i == 5 { vec![] } else { vec![10.0 - i as f64 * 0.37, 3.25 * i as f64] },
            reason: (i == 5).then(|| "out of memory".to_string()),
            warm: false,
            evaluation: i + 1,
        })
        .collect();
    Case {
        fingerprint: fp("Llama-2-7B", "910B2", "deployment"),
        title: "test".into(),
        scenario: serde_json::json!({"version": 1, "seed": seed, "stage": "deployment"}),
        seed,
        param_names: vec!["batch".into(), "precision".into()],
        metrics: vec![Metric::minimize("tpot_ms", "ms"), Metric::minimize("memory_per_chip_gib", "GiB")],
        trials,
        best_value: Some(10.0 - 4.0 * 0.37),
        best_config: None,
    }
}

#[test]
fn similarity_ranks_model_and_chip() {
    let a = fp("Llama-2-7B", "910B2", "deployment");
    assert!((a.similarity(&a) - 1.0).abs() < 1e-12);
    assert!(a.similarity(&fp("Llama-2-7B", "910B3", "deployment")) > a.similarity(&fp("Llama-2-7B", "310P3", "deployment")));
    assert_eq!(a.similarity(&fp("Llama-2-7B", "910B2", "training")), 0.0);
    let mut kb = KnowledgeBase::new();
    kb.add(case(1));
    assert_eq!(kb.similar(&fp("Qwen2.5-7B", "910B3", "deployment"), 0.5).len(), 1);
    assert!(kb.similar(&fp("Llama-2-7B", "910B2", "operator"), 0.5).is_empty());
}

#[test]
fn warm_trials_are_remapped_by_name() {
    let mut kb = KnowledgeBase::new();
    kb.add(case(1));
    // The new space lists the parameters in the other order and allows only batch <= 8.
    let space = Space::new(
        vec![Param::categorical("precision", vec!["fp16".into(), "w8a16".into()]), Param::pow2("batch", 1, 8)],
        &[],
    )
    .unwrap();
    let metrics = vec![Metric::minimize("tpot_ms", "ms")];
    let warm = kb.warm_trials(&fp("Llama-2-7B", "910B2", "deployment"), &space, &metrics, 100);
    assert_eq!(warm.len(), 4);
    assert_eq!(warm[1].config, Config(vec![Value::Str("w8a16".into()), Value::Int(2)]));
    assert_eq!(warm[1].values, vec![10.0 - 0.37]);
    let mut study = tunelab_search::Study::new(space, metrics, tunelab_search::StudyOptions::budget(4)).unwrap();
    assert_eq!(study.warm_start(&warm), 4);
}

#[test]
fn package_round_trip_and_tamper_detection() {
    let c = case(42);
    let text = export_package(&c);
    let p = import_package(&text).unwrap();
    assert_eq!(p.case, c);
    assert!(same_trials(&p.case.trials, &c.trials));
    assert!(p.checksum.starts_with("fnv1a64:"));
    // Exporting again gives the same bytes (canonical, deterministic).
    assert_eq!(export_package(&p.case), text);

    let tampered = text.replacen("out of memory", "fits fine", 1);
    assert!(import_package(&tampered).unwrap_err().contains("checksum"));
    let tampered = text.replacen("\"seed\": 42", "\"seed\": 43", 1);
    assert_ne!(tampered, text);
    assert!(import_package(&tampered).unwrap_err().contains("checksum"));
    assert!(import_package("{\"format\": 3}").unwrap_err().contains("malformed"));
    assert!(import_package("").is_err());
    let foreign = text.replacen(PACKAGE_FORMAT, "other/9", 1);
    assert!(import_package(&foreign).unwrap_err().contains("format"));
}

#[test]
fn corrupt_store_is_set_aside_not_fatal() {
    let mut kb = KnowledgeBase::new();
    kb.add(case(1));
    kb.add(case(1)); // same fingerprint and seed: replaced, not duplicated
    kb.add(case(2));
    assert_eq!(kb.cases.len(), 2);
    let loaded = KnowledgeBase::load(&kb.to_json());
    assert_eq!(loaded.kb, kb);
    assert!(loaded.set_aside.is_none());
    let bad = KnowledgeBase::load("{\"cases\": [1, 2");
    assert!(bad.kb.cases.is_empty());
    let (why, text) = bad.set_aside.unwrap();
    assert!(why.contains("corrupt"));
    assert_eq!(text, "{\"cases\": [1, 2");
    assert!(KnowledgeBase::load("").set_aside.is_none());
}

#[test]
fn checksum_is_canonical_fnv() {
    // Published FNV-1a 64 test vectors.
    assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
    assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
    let a: serde_json::Value = serde_json::from_str(r#"{"b":1,"a":[2,{"d":3,"c":4}]}"#).unwrap();
    assert_eq!(canonical_json(&a), r#"{"a":[2,{"c":4,"d":3}],"b":1}"#);
}

#[test]
fn a_real_run_round_trips_and_reproduces_exactly() {
    use tunelab_scenario::cases::{case_from_run, fingerprint_of, reproduce};
    let mut s = tunelab_scenario::Scenario::default();
    s.stage = tunelab_scenario::Stage::Training;
    s.workload.global_batch = 64;
    s.budget = 8;
    s.seed = 7;
    let mut run = tunelab_scenario::Run::new(&s).unwrap();
    run.run_to_end();
    let case = case_from_run(&run, "llama training").unwrap();
    assert_eq!(case.fingerprint.chip, "910B2");
    assert_eq!(case.fingerprint.family, "llm");
    assert_eq!(case.trials.len(), 8);
    let text = export_package(&case);
    let p = import_package(&text).unwrap();
    let r = reproduce(&p).unwrap();
    assert!(r.identical, "{}", r.message);
    // Edited trial values no longer match the checksum.
    let t = case.trials.iter().find(|t| t.is_ok()).expect("an ok trial");
    let v = serde_json::to_string(&t.values[0]).unwrap();
    let tampered = text.replacen(&v, "1.0", 1);
    assert_ne!(tampered, text);
    assert!(import_package(&tampered).unwrap_err().contains("modified"));
    // Warm start of the same problem from the knowledge base.
    let mut kb = KnowledgeBase::new();
    kb.add(case);
    let fp = fingerprint_of(&s).unwrap();
    let warm = kb.warm_trials(&fp, run.space(), run.metrics(), 100);
    assert_eq!(warm.len(), 8);
}

#[test]
fn template_applies_to_a_scenario() {
    use tunelab_scenario::templates::{apply_template, pick_template};
    let mut s = tunelab_scenario::Scenario::default();
    let t = pick_template("dense_llm", "910B2", "cloud");
    assert_eq!(t.name, "llm-910b-cloud");
    apply_template(&t, &mut s, Some(64.0)).unwrap();
    assert_eq!(s.objectives[0].metric, "tokens_per_s_per_chip");
    assert_eq!(s.constraints.max_memory_gib, Some(0.9 * 64.0));
    assert_eq!(s.budget, t.budget);
    assert!(s.operator.fusion);
}

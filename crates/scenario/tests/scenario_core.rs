//! The scenario core: parsing and validation, the URL codec, runs of every bundled scenario,
//! determinism, bounded stepping, and bad input that must end in a clear error.

use tunelab_scenario::run::lane_rng;
use tunelab_scenario::scenario::{ModelRef, Stage};
use tunelab_scenario::{bundled_scenarios, format_best, url, Run, Scenario};

fn small(mut s: Scenario, budget: usize) -> Scenario {
    s.budget = budget;
    s
}

fn run_all(s: &Scenario) -> Run {
    let mut r = Run::new(s).unwrap_or_else(|e| panic!("{}: {e}", s.name));
    let mut guard = 0;
    while !r.is_done() {
        r.step(64);
        guard += 1;
        assert!(guard < 100_000, "run did not finish");
    }
    r
}

#[test]
fn empty_object_is_the_default_scenario() {
    let s = Scenario::from_json("{}").unwrap();
    assert_eq!(s, Scenario::default());
    assert_eq!(s.stage, Stage::Deployment);
    // Unknown fields are ignored so that newer links still open.
    let s = Scenario::from_json(r#"{"version": 1, "seed": 5, "some_future_field": [1, 2]}"#).unwrap();
    assert_eq!(s.seed, 5);
}

#[test]
fn type_errors_name_the_field() {
    let e = Scenario::from_json(r#"{"workload": {"batch": "eight"}}"#).unwrap_err();
    assert!(e.contains("workload.batch"), "{e}");
    let e = Scenario::from_json(r#"{"budget": -3}"#).unwrap_err();
    assert!(e.contains("budget"), "{e}");
    let e = Scenario::from_json(r#"{"stage": "compile"}"#).unwrap_err();
    assert!(e.contains("stage"), "{e}");
    let e = Scenario::from_json(r#"{"workload": {"batch": -4}}"#).unwrap_err();
    assert!(e.contains("workload.batch") && e.contains("positive"), "{e}");
    let e = Scenario::from_json(r#"{"version": 7}"#).unwrap_err();
    assert!(e.contains("version"), "{e}");
    let e = Scenario::from_json(r#"{"strategy": {"name": "magic"}}"#).unwrap_err();
    assert!(e.contains("strategy.name"), "{e}");
    assert!(Scenario::from_json("not json").is_err());
    assert!(Scenario::from_json("[]").is_err());
}

#[test]
fn bundled_scenarios_parse_and_round_trip_through_the_url() {
    let all = bundled_scenarios();
    assert!(all.len() >= 3);
    for (id, s) in all {
        let s = s.unwrap_or_else(|e| panic!("{id}: {e}"));
        let f = url::encode(&s);
        assert_eq!(url::decode(&f).unwrap(), s, "{id}");
        let again = Scenario::from_json(&s.to_json()).unwrap();
        assert_eq!(again, s, "{id}: JSON round trip");
    }
}

#[test]
fn hostile_fragments_never_panic() {
    let mut junk = vec![String::new(), "#v1.".into(), "v1.%%%".into(), "v0.abc".into(), "<script>alert(1)</script>".into()];
    junk.push(format!("v1.{}", "_-".repeat(70_000)));
    junk.push(url::encode_json("{\"workload\": {\"batch\": -1, \"dynamic_batches\": []}}"));
    junk.push(url::encode_json("{\"budget\": 100000000}"));
    junk.push(url::encode_json("\u{0}\u{1}"));
    for j in &junk {
        assert!(url::decode(j).is_err(), "{j:.40}");
    }
    // A script in a name is data, carried as text.
    let s = Scenario { name: "<img src=x onerror=alert(1)>".into(), ..Scenario::default() };
    assert_eq!(url::decode(&url::encode(&s)).unwrap().name, s.name);
}

#[test]
fn every_bundled_scenario_runs_and_improves_on_its_baseline() {
    for (id, s) in bundled_scenarios() {
        let s = small(s.unwrap(), 60);
        let r = run_all(&s);
        let rep = r.report();
        let best = rep.best.unwrap_or_else(|| panic!("{id}: no feasible configuration"));
        let m = &r.metrics()[0];
        if let tunelab_search::Outcome::Ok(before) = r.baseline() {
            assert!(m.signed(best) <= m.signed(before[0]), "{id}: best {best} worse than baseline {}", before[0]);
        }
        assert!(!rep.best_config.is_empty(), "{id}");
        let json: serde_json::Value = serde_json::from_str(&rep.to_json()).unwrap();
        assert_eq!(json["best"].to_string(), format_best(best), "{id}");
        assert!(!tunelab_scenario::report::trials_csv(&r).is_empty());
    }
}

#[test]
fn same_seed_gives_identical_trials_and_reports() {
    for (_, s) in bundled_scenarios() {
        let s = small(s.unwrap(), 40);
        let (a, b) = (run_all(&s), run_all(&s));
        for i in 0..a.lanes().len() {
            assert_eq!(a.trials(i), b.trials(i));
        }
        assert_eq!(a.report(), b.report());
    }
    let s = small(tunelab_scenario::bundled_scenario("llama2-7b-910B2-deployment").unwrap(), 40);
    let other = Scenario { seed: s.seed + 1, ..s.clone() };
    assert_ne!(run_all(&s).trials(0), run_all(&other).trials(0), "different seeds should differ");
    assert_ne!(lane_rng(1, 0).next_u64(), lane_rng(1, 1).next_u64());
}

#[test]
fn step_is_bounded_and_progress_counts() {
    let s = small(tunelab_scenario::bundled_scenario("llama2-7b-910B2-compare").unwrap(), 20);
    let mut r = Run::new(&s).unwrap();
    let mut last = 0;
    while !r.is_done() {
        let p = r.step(1);
        assert!(p.evaluations <= last + 1, "one step, at most one evaluation");
        last = p.evaluations;
        assert!(p.fraction() <= 1.0);
    }
    assert_eq!(r.evaluations(), 60);
    let report = r.report();
    assert_eq!(report.strategies.len(), 3);
    assert!(!r.pareto(0, 0, 1).is_empty());
}

#[test]
fn deployment_report_exports_serving_configs() {
    let s = small(tunelab_scenario::bundled_scenario("llama2-7b-910B2-deployment").unwrap(), 50);
    let rep = run_all(&s).report();
    let d = rep.deployment.expect("deployment exports");
    assert!(d.vllm_args.iter().any(|a| a == "--tensor-parallel-size"));
    assert!(d.mindie_config["BackendConfig"]["ScheduleConfig"]["maxBatchSize"].is_i64());
    assert!(rep.comparison.iter().any(|c| c.metric == "ttft_ms"));
}

#[test]
fn the_auto_tune_configuration_maps_to_the_operator_stage() {
    let text = r#"{"auto_tune_mode": "operator", "model": "llama-2-7b", "input_shape": [-1, 256],
        "num_runs": 50, "optimization_options": {"algorithm": "GA", "loop_unroll": false},
        "precision_constraints": {"max_relative_error": 0.02},
        "local_search": {"op_names": ["layer.mlp.down_proj"], "search_intensity": "high"}}"#;
    let s = Scenario::from_json(text).unwrap();
    assert_eq!(s.stage, Stage::Operator);
    assert_eq!(s.workload.batch, -1);
    assert_eq!(s.budget, 50);
    assert_eq!(s.strategy.name, "genetic");
    assert!(!s.operator.loop_unroll);
    assert_eq!(s.operator.search_intensity, 1.0);
    let r = run_all(&s);
    // Main budget plus the focused search (intensity 1: the budget again).
    assert_eq!(r.evaluations(), 100);
    let bad = Scenario::from_json(r#"{"auto_tune_mode": "operator", "input_shape": [0, 16]}"#).unwrap_err();
    assert!(bad.contains("input_shape"), "{bad}");
    let missing = Scenario { operator: tunelab_scenario::scenario::OperatorOptions { local_search_ops: vec!["nope".into()], search_intensity: 0.5, ..Default::default() }, stage: Stage::Operator, ..Scenario::default() };
    assert!(Run::new(&missing).err().unwrap().contains("nope"));
}

fn inline(model: serde_json::Value) -> Scenario {
    Scenario { model: ModelRef::Inline(model), budget: 20, ..Scenario::default() }
}

#[test]
fn bad_models_and_constraints_are_clear_errors() {
    let base = || serde_json::json!({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000});
    let mut zero = base();
    zero["num_hidden_layers"] = 0.into();
    let e = Run::new(&inline(zero)).err().unwrap();
    assert!(e.contains("layers"), "{e}");
    let mut huge = base();
    huge["hidden_size"] = serde_json::json!(1_000_000_000_000u64);
    let e = Run::new(&inline(huge)).err().unwrap();
    assert!(e.contains("hidden"), "{e}");
    // ~7.5 trillion parameters: fits no chip even split eight ways in INT8.
    let mut giant = base();
    giant["hidden_size"] = 65536.into();
    giant["intermediate_size"] = 262144.into();
    giant["num_hidden_layers"] = 512.into();
    giant["num_attention_heads"] = 512.into();
    giant["num_key_value_heads"] = 512.into();
    let e = Run::new(&inline(giant)).err().unwrap();
    assert!(e.contains("cannot fit"), "{e}");
    let s = Scenario { model: ModelRef::Id("gpt-17".into()), ..Scenario::default() };
    assert!(Run::new(&s).err().unwrap().contains("gpt-17"));
    // An unmeetable service level: every point infeasible, with the reason, and the run ends.
    let mut s = Scenario { budget: 30, ..Scenario::default() };
    s.constraints.max_ttft_ms = Some(0.001);
    let r = run_all(&s);
    let rep = r.report();
    assert!(rep.best.is_none());
    assert!(r.trials(0).iter().all(|t| t.reason.as_deref().is_some_and(|why| why.contains("TTFT") || why.contains("memory"))));
    let mut s = Scenario::default();
    s.constraints.max_rel_error = Some(-1.0);
    assert!(Run::new(&s).err().unwrap().contains("max_rel_error"));
    let s = Scenario { objectives: vec![tunelab_scenario::scenario::ObjectiveSpec { metric: "speed".into(), priority: 1.0, direction: None }], ..Scenario::default() };
    assert!(Run::new(&s).err().unwrap().contains("speed"));
}

#[test]
fn format_best_is_serde_jsons_number() {
    for v in [38.7, 1.0, 0.1 + 0.2, 12345.678901234, 1e-7] {
        assert_eq!(format_best(v), serde_json::json!({ "b": v })["b"].to_string());
    }
    assert_eq!(format_best(f64::NAN), "null");
}

#[test]
fn space_overrides_and_goal_priorities_apply() {
    let mut s = small(tunelab_scenario::bundled_scenario("llama2-7b-910B2-deployment").unwrap(), 30);
    s.space.insert("precision".into(), tunelab_scenario::scenario::SpaceOverride { fixed: Some("bf16".into()), ..Default::default() });
    s.space.insert("batch".into(), tunelab_scenario::scenario::SpaceOverride { choices: Some(vec![4.into(), 16.into()]), ..Default::default() });
    s.objectives = vec![
        tunelab_scenario::scenario::ObjectiveSpec { metric: "energy_j_per_token".into(), priority: 5.0, direction: None },
        tunelab_scenario::scenario::ObjectiveSpec { metric: "tokens_per_s".into(), priority: 1.0, direction: None },
    ];
    let r = run_all(&s);
    assert_eq!(r.metrics()[0].name, "energy_j_per_token");
    assert_eq!(r.metrics()[1].name, "tokens_per_s");
    let (pi, bi) = (r.space().index_of("precision").unwrap(), r.space().index_of("batch").unwrap());
    for t in r.trials(0).iter().filter(|t| !t.warm) {
        assert_eq!(t.config.0[pi].as_str(), Some("bf16"));
        assert!(matches!(t.config.0[bi].as_i64(), Some(4 | 16)));
    }
    let mut bad = Scenario::default();
    bad.space.insert("warp_size".into(), Default::default());
    assert!(Run::new(&bad).err().unwrap().contains("space.warp_size"));
}

/// Replaces one leaf of a JSON document, chosen by `pick`, with a hostile value.
fn mutate(v: &mut serde_json::Value, pick: &mut u64, bad: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Object(m) => m.values_mut().any(|x| mutate(x, pick, bad)),
        serde_json::Value::Array(a) => a.iter_mut().any(|x| mutate(x, pick, bad)),
        leaf => {
            if *pick == 0 {
                *leaf = bad.clone();
                return true;
            }
            *pick -= 1;
            false
        }
    }
}

#[test]
fn mutated_scenarios_never_panic() {
    let hostile = [
        serde_json::json!(-1), serde_json::json!(0), serde_json::json!(1e300), serde_json::json!(-1e300),
        serde_json::json!(u64::MAX), serde_json::json!("<script>x</script>"), serde_json::json!(null),
        serde_json::json!([]), serde_json::json!({}), serde_json::json!(true), serde_json::json!(0.5),
    ];
    let mut rng = tunelab_search::Rng::seed_from_u64(99);
    for (id, s) in bundled_scenarios() {
        let base: serde_json::Value = serde_json::to_value(s.unwrap()).unwrap();
        for _ in 0..40 {
            let mut v = base.clone();
            let mut pick = rng.below(40) as u64;
            let bad = &hostile[rng.below(hostile.len())];
            mutate(&mut v, &mut pick, bad);
            if let Ok(mut s) = Scenario::from_value(v) {
                s.budget = s.budget.min(10);
                if let Ok(mut r) = Run::new(&s) {
                    r.step(10);
                    let _ = r.report().to_json();
                }
            }
        }
        let _ = id;
    }
}

#[test]
fn tiny_budgets_and_empty_spaces_end_cleanly() {
    for budget in [1, 2, 3] {
        let s = small(tunelab_scenario::bundled_scenario("qwen2.5-7b-910B2-operator").unwrap(), budget);
        let r = run_all(&s);
        assert!(r.evaluations() <= budget);
    }
    let mut s = small(tunelab_scenario::bundled_scenario("qwen2.5-7b-910B2-operator").unwrap(), 5);
    s.operator.tiling = false;
    s.operator.fusion = false;
    s.operator.epilogue_fusion = false;
    assert!(Run::new(&s).err().unwrap().contains("no parameters"));
}

//! One story everywhere: the report's best, the diagnosis of the best configuration and its
//! point detail give the same goal value to the last bit (deployment and operator stages); the
//! engine breakdown sums to the stage's own step time; the header title follows the scenario;
//! exports carry every strategy's trials and only documented MindIE fields / vLLM flags; every
//! public analysis module has a caller in the app or the CLI.

use tunelab_scenario::diagnosis::{diagnose, Weights};
use tunelab_scenario::explore::point_detail;
use tunelab_scenario::report::{trials_csv, MINDIE_FIELDS, VLLM_FLAGS};
use tunelab_scenario::scenario::{DeviceRef, ModelRef};
use tunelab_scenario::{context, Run, Scenario, Stage};

fn deployment(budget: usize) -> Scenario {
    let mut s = Scenario::default();
    s.stage = Stage::Deployment;
    s.budget = budget;
    s.workload.batch = 16;
    s
}

fn finished(s: &Scenario) -> Run {
    let mut r = Run::new(s).unwrap();
    r.run_to_end();
    r
}

fn same_everywhere(s: &Scenario) {
    let run = finished(s);
    let report = run.report();
    let (_, best) = run.overall_best().expect("a feasible best");
    let d = diagnose(s, Some(&best.config), Weights::default()).unwrap();
    assert_eq!(d.goal, report.metric);
    assert_eq!(d.goal_value.map(f64::to_bits), report.best.map(f64::to_bits), "diagnosis {:?} vs report {:?}", d.goal_value, report.best);
    assert_eq!(tunelab_scenario::format_best(d.goal_value.unwrap()), tunelab_scenario::format_best(report.best.unwrap()));
    let p = point_detail(s, &best.config).unwrap();
    assert!(p.infeasible.is_none(), "{:?}", p.infeasible);
    // The app's detail when a run stops (the run's own stage, the trial's recorded outcome)
    // is the same detail, bit for bit.
    let mut again = finished(s);
    assert_eq!(again.detail(&best.config).unwrap(), p);
    assert_eq!(p.metrics[0].1.to_bits(), report.best.unwrap().to_bits());
    // Every metric of the report's "after" column equals the diagnosis's.
    for (c, m) in report.comparison.iter().zip(&d.metrics) {
        assert_eq!(c.metric, m.name);
        assert_eq!(c.after.map(f64::to_bits), Some(m.value.to_bits()), "{}", c.metric);
    }
    println!("{}: best {} = diagnosis {} ({}; {})", s.stage.name(), report.best.unwrap(), d.goal_value.unwrap(), d.simulated, d.phase_why);
}

#[test]
fn deployment_diagnosis_equals_report() {
    let s = deployment(40);
    same_everywhere(&s);
    // The breakdown shows the dominant phase in the best configuration's launch mode.
    let run = finished(&s);
    let (_, best) = run.overall_best().unwrap();
    let d = diagnose(&s, Some(&best.config), Weights::default()).unwrap();
    let launch = best.config.0[run.space().index_of("launch").unwrap()].as_str().unwrap().to_string();
    assert!(d.simulated.contains(&format!("{launch} launch")), "{} vs {launch}", d.simulated);
    assert!(d.step_ms > 0.0 && !d.phase_why.is_empty());
}

#[test]
fn operator_diagnosis_equals_report_at_tuned_tilings() {
    let mut s = Scenario::default();
    s.stage = Stage::Operator;
    s.budget = 30;
    same_everywhere(&s);
    let run = finished(&s);
    let (_, best) = run.overall_best().unwrap();
    let p = point_detail(&s, &best.config).unwrap();
    // The per-operator times sum, in the objective's order, to its model time exactly.
    assert_eq!(p.total_ms.to_bits(), p.metrics.iter().find(|m| m.0 == "model_time_ms").unwrap().1.to_bits());
    // Tuned tilings differ from the default: the baseline's detail is slower or equal.
    let base = point_detail(&s, run.baseline_config()).unwrap();
    assert!(base.total_ms >= p.total_ms);
    let d = diagnose(&s, Some(&best.config), Weights::default()).unwrap();
    let names = run.space().names();
    for sg in d.suggestions.iter().chain(&d.trade_offs).chain(&d.blocked) {
        assert!(names.contains(&sg.param), "{} is not an operator-stage parameter", sg.param);
    }
}

#[test]
fn title_follows_model_chip_stage_and_goal() {
    let mut s = deployment(10);
    s.model = ModelRef::Id("qwen2.5-7b".into());
    s.device = DeviceRef::Name("910B4".into());
    let t = context::title(&s);
    assert!(t.contains("qwen2.5-7b") && t.contains("910B4") && t.contains("deployment"), "{t}");
    s.objectives = vec![tunelab_scenario::scenario::ObjectiveSpec { metric: "ttft_ms".into(), priority: 1.0, direction: None }];
    assert!(context::title(&s).contains("minimise time to first token"), "{}", context::title(&s));
    s.model = ModelRef::Inline(serde_json::json!({"_name_or_path": "org/My-Model-3B", "model_type": "llama"}));
    assert!(context::title(&s).starts_with("My-Model-3B (own config) on 910B4"), "{}", context::title(&s));
}

#[test]
fn csv_has_every_strategy_and_deployment_configs_are_documented() {
    let mut s = deployment(12);
    s.compare = vec![tunelab_scenario::scenario::StrategySpec { name: "random".into(), options: serde_json::json!({}) }];
    if s.strategy.name == "random" {
        s.compare[0].name = "annealing".into();
    }
    let run = finished(&s);
    let csv = trials_csv(&run);
    let rows: Vec<&str> = csv.lines().collect();
    let total: usize = (0..run.lanes().len()).map(|i| run.trials(i).len()).sum();
    assert_eq!(rows.len() - 1, total);
    assert!(rows[0].starts_with("strategy,"));
    for l in run.lanes() {
        assert!(rows.iter().any(|r| r.starts_with(&format!("{},", l.spec.name))), "{} missing", l.spec.name);
    }
    let d = run.report().deployment.expect("deployment export");
    fn walk(v: &serde_json::Value, section: &str) {
        let Some(o) = v.as_object() else {
            if let Some(a) = v.as_array() {
                a.iter().for_each(|x| walk(x, section));
            }
            return;
        };
        let allowed = MINDIE_FIELDS.iter().find(|(s, _)| *s == section).map(|x| x.1).unwrap_or_else(|| panic!("section {section} not documented"));
        for (k, x) in o {
            assert!(allowed.contains(&k.as_str()), "MindIE field {section}.{k} is not documented");
            if x.is_object() || x.as_array().is_some_and(|a| a.iter().any(|e| e.is_object())) {
                walk(x, k);
            }
        }
    }
    walk(&d.mindie_config, "");
    for bad in ["graphMode", "kvCacheMemoryFraction", "memoryStrategy", "quantization"] {
        assert!(!d.mindie_config.to_string().contains(bad), "{bad}");
    }
    assert!(d.mindie_config["BackendConfig"]["ModelDeployConfig"]["ModelConfig"][0]["npuMemSize"].as_i64().unwrap() >= 1);
    assert!(!d.mindie_notes.is_empty());
    for a in d.vllm_args.iter().filter(|a| a.starts_with("--")) {
        assert!(VLLM_FLAGS.contains(&a.as_str()), "vLLM flag {a} is not documented");
    }
}

#[test]
fn every_public_analysis_module_has_a_caller_outside_tests() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut text = String::new();
    fn read_all(dir: &std::path::Path, out: &mut String) {
        let Ok(rd) = std::fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                read_all(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    read_all(&root.join("src"), &mut text);
    read_all(&root.join("crates/cli/src"), &mut text);
    for (module, call) in [("diagnosis", "diagnosis::"), ("explore", "explore::"), ("impact", "impact::"), ("guards", "guards::"), ("train_diagnosis", "train_diagnosis::"), ("metrics", "metrics::")] {
        assert!(text.contains(call), "the public analysis module `{module}` has no caller in the app or the CLI");
    }
}

/// "Where the time goes" lists the step the headline numbers come from: for every bundled
/// serving scenario, both phases' operators, listed at the step's exact sizes by the stage's own
/// pricer, add up to the device time that pricer gives the step through its grid tables (which
/// interpolate between sizes half an octave apart, hence the tolerance), and the wall time
/// with the engine's host work is no less.
#[test]
fn every_bundled_serving_breakdown_adds_up_to_the_priced_step() {
    use tunelab_scenario::stages::serving::Phase;
    let mut checked = 0;
    for (name, s) in tunelab_scenario::bundled_scenarios() {
        let s = s.unwrap_or_else(|e| panic!("{name}: {e}"));
        if !matches!(s.stage, Stage::Deployment | Stage::Runtime) {
            continue;
        }
        let st = tunelab_scenario::stages::setup(&s).unwrap_or_else(|e| panic!("{name}: {e}"));
        for phase in [Phase::Prefill, Phase::Decode] {
            let step = match tunelab_scenario::stages::deployment::step_operators(&s, st.space.names(), &st.baseline, phase, None) {
                Ok(step) => step,
                // A baseline the stage itself finds infeasible has no step to list.
                Err(e) => {
                    println!("{name} {phase:?}: {e}");
                    continue;
                }
            };
            let listed = step.ops.iter().map(|o| o.time_us).sum::<f64>() / 1e3;
            println!("{name} {phase:?}: listed {listed:.3} ms, priced {:.3} ms device, {:.3} ms with host work", step.device_ms, step.wall_ms);
            // Exact where the step's sizes are grid points; elsewhere the interpolation's error,
            // which the bundled scenarios put at 5.2% at most (Phi-4-mini's decode attention,
            // whose 576-token caches fill five 128-token blocks).
            assert!((listed / step.device_ms - 1.0).abs() < 0.06, "{name} {phase:?}: listed {listed} ms vs priced {} ms", step.device_ms);
            assert!(step.wall_ms >= step.device_ms, "{name} {phase:?}");
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} steps checked");
}

/// A training step's "where the time goes" is the step the stage prices: for every bundled
/// training scenario (and a LLaVA finetune whose samples average fewer tokens than the maximum,
/// with its vision tower frozen), the detail's wall time is the stage's step time, its label
/// names the stage's sequence length, and its operators' device time never exceeds the step's
/// compute. Before, the detail priced its own step at the maximum length without the framework's
/// options: 11350 ms of operators listed for a 4522 ms step.
#[test]
fn every_bundled_training_breakdown_is_the_step_the_stage_prices() {
    let llava = r#"{"stage": "training", "model": "llava-1.5-7b", "device": "910B2",
        "workload": {"global_batch": 128, "micro_batch": 16, "seq_len": 2048},
        "training": {"chips": 8, "framework": "deepspeed", "frozen": ["vision"], "mean_seq_len": 1024},
        "space": {"dp": {"fixed": 8}, "micro_batch": {"fixed": 16}, "optimizer_sharding": {"fixed": "zero3"}, "pp": {"fixed": 1},
                  "precision": {"fixed": "bf16"}, "recompute": {"fixed": "full"}, "tp": {"fixed": 1}}}"#;
    let mut all: Vec<(String, Scenario)> = tunelab_scenario::bundled_scenarios().into_iter().map(|(n, s)| (n.to_string(), s.unwrap())).collect();
    all.push(("llava finetune".into(), Scenario::from_json(llava).unwrap()));
    let mut checked = 0;
    for (name, s) in all.iter().filter(|(_, s)| s.stage == Stage::Training) {
        let mut st = tunelab_scenario::stages::setup(s).unwrap_or_else(|e| panic!("{name}: {e}"));
        let names = st.space.names().to_vec();
        let values = match st.objective.evaluate(&st.baseline) {
            tunelab_search::Outcome::Ok(v) => v,
            o => panic!("{name}: {o:?}"),
        };
        let metrics: Vec<(String, f64, String)> = st.metrics.iter().zip(&values).map(|(m, v)| (m.name.clone(), *v, m.unit.clone())).collect();
        let step_ms = metrics.iter().find(|m| m.0 == "step_time_ms").unwrap().1;
        let b = tunelab_scenario::explore::breakdown(s, &names, &st.baseline, &metrics).unwrap_or_else(|e| panic!("{name}: {e}"));
        let compute: f64 = b.ops.iter().filter(|o| !o.name.starts_with("dp.") && !o.name.starts_with("optimizer.")).map(|o| o.time_us).sum::<f64>() / 1e3;
        println!("{name}: {} -> operators {:.1} ms, compute {compute:.1} ms, step {step_ms:.1} ms", b.label, b.total_ms);
        assert_eq!(b.wall_ms, Some(step_ms), "{name}: the detail's step is the stage's");
        assert!(b.label.contains(&format!("the step takes {} ms", tunelab_scenario::spec::metrics::fmt4(step_ms))), "{name}: {}", b.label);
        assert!(compute <= step_ms * (1.0 + 1e-9), "{name}: {compute} ms of compute listed for a {step_ms} ms step");
        checked += 1;
        if name == "llava finetune" {
            // 1024 tokens a sample, 576 of them the image's: the text runs 448.
            assert!(b.label.contains("one micro-batch of 16 x 448 tokens"), "{}", b.label);
            assert!(b.ops.iter().all(|o| !(o.name.starts_with("vision.layer") && o.name.contains("bwd_weight"))), "a frozen vision tower has no weight gradients");
            assert!(b.ops.iter().any(|o| o.name == "dp.zero3_param_allgather"), "ZeRO-3 gathers its parameters");
        }
    }
    assert!(checked >= 4, "only {checked} training steps checked");
}

//! Capacity (issue 45): the goal that searches the sustained rate, the load-bound statement,
//! the workload spread, launches that start (checked against the release's argument list) and
//! the plan.

use std::collections::BTreeMap;
use tunelab_scenario::report::export_for;
use tunelab_scenario::analyses::plan::{plan, PlanRequest};
use tunelab_scenario::{bundled_scenario, bundled_scenarios, Run, Scenario, Stage};
use tunelab_search::{Config, Outcome, Value};

/// The run's configuration with `set` (name -> value) over its baseline.
fn config(run: &Run, set: &[(&str, Value)]) -> Config {
    let names = run.space().names().to_vec();
    let mut c = run.baseline_config().clone();
    for (n, v) in set {
        let i = names.iter().position(|x| x == n).unwrap_or_else(|| panic!("no parameter {n}"));
        c.0[i] = v.clone();
    }
    c
}

fn metric(run: &Run, o: &Outcome, name: &str) -> f64 {
    let i = run.metrics().iter().position(|m| m.name == name).unwrap_or_else(|| panic!("no metric {name}"));
    match o {
        Outcome::Ok(v) => v[i],
        other => panic!("{other:?}"),
    }
}

fn deepseek(requests: usize) -> Scenario {
    let mut s = bundled_scenario("deepseek-v3-2xA3-deployment").unwrap();
    s.deployment.serving.requests = requests;
    s
}

const BEST: [(&str, i64); 3] = [("max_num_batched_tokens", 16384), ("num_speculative_tokens", 3), ("redundant_experts", 32)];

fn at_batch(run: &mut Run, batch: i64) -> Outcome {
    let mut set: Vec<(&str, Value)> = BEST.iter().map(|(n, v)| (*n, Value::Int(*v))).collect();
    set.push(("batch", Value::Int(batch)));
    let c = config(run, &set);
    run.evaluate(&c)
}

#[test]
fn the_old_goal_measured_the_load_and_the_capacity_goal_measures_the_configuration() {
    // The issue's reproduction: at 8 req/s the throughput goal gave batch 8 and 128 the same
    // tokens/s per chip, and nothing said it was the load's.
    let mut old = deepseek(400);
    old.objectives = vec![serde_json::from_str(r#"{"metric":"tokens_per_s_per_chip","priority":2}"#).unwrap()];
    old.constraints.max_ttft_ms = None;
    let mut run = Run::new(&old).unwrap();
    let (a, b) = (at_batch(&mut run, 8), at_batch(&mut run, 128));
    assert_eq!(metric(&run, &a, "tokens_per_s_per_chip"), metric(&run, &b, "tokens_per_s_per_chip"));
    let named: Vec<(String, f64)> = run.metrics().iter().map(|m| m.name.clone()).zip(match &a { Outcome::Ok(v) => v.clone(), _ => vec![] }).collect();
    let why = tunelab_scenario::stages::capacity::load_bound(&old, &named).expect("the load-bound result says so");
    assert!(why.contains("Poisson 8 req/s") && why.contains("capacity_tokens_per_s_per_chip"), "{why}");
    // The capacity goal tells them apart: a batch of 8 per rank sustains a lower rate.
    let s = deepseek(1600);
    let mut run = Run::new(&s).unwrap();
    assert_eq!(run.metrics()[0].name, "capacity_tokens_per_s_per_chip");
    let (a, b) = (at_batch(&mut run, 8), at_batch(&mut run, 128));
    let (ra, rb) = (metric(&run, &a, "capacity_rps"), metric(&run, &b, "capacity_rps"));
    assert!(rb > 1.1 * ra, "batch 8: {ra} req/s, batch 128: {rb} req/s");
    // At its capacity every metric is within the limits, and capacity mode is never load-bound.
    assert!(metric(&run, &b, "ttft_ms") <= 3000.0 && metric(&run, &b, "tpot_ms") <= 100.0);
    let named: Vec<(String, f64)> = run.metrics().iter().map(|m| m.name.clone()).zip(match &b { Outcome::Ok(v) => v.clone(), _ => vec![] }).collect();
    assert!(tunelab_scenario::stages::capacity::load_bound(&s, &named).is_none());
}

#[test]
fn capacity_is_deterministic_and_every_configuration_sees_the_same_requests() {
    let s = deepseek(800);
    let (mut r1, mut r2) = (Run::new(&s).unwrap(), Run::new(&s).unwrap());
    // Another configuration priced first must not change this one's result (same sample).
    let _ = at_batch(&mut r2, 8);
    let (a, b) = (at_batch(&mut r1, 64), at_batch(&mut r2, 64));
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

#[test]
fn a_studys_capacity_values_are_what_a_fresh_evaluation_prints() {
    // The study starts each rate search at the previous configuration's answer (and, with many
    // requests per rank, on a quarter of the sample first); the answer is the rate grid's, so a
    // configuration priced alone (`tunelab eval`, the app's detail) prints the study's numbers.
    let mut s = deepseek(1600);
    s.budget = 30;
    let mut run = Run::new(&s).unwrap();
    run.run_to_end();
    let trials: Vec<_> = run.trials(0).iter().filter(|t| t.state == tunelab_search::TrialState::Ok).cloned().collect();
    assert!(trials.len() >= 3, "{} feasible trials", trials.len());
    for t in &trials {
        let mut fresh = Run::new(&s).unwrap();
        match fresh.evaluate(&t.config) {
            Outcome::Ok(v) => assert_eq!(v, t.values, "{:?}", t.config),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_plan_with_one_feasible_configuration_still_shows_runner_ups_with_what_they_miss() {
    // The issue's target request, scaled down: 4 A3 nodes, tight limits; only a large layout
    // passes, and the sizes under it show their closest configuration and its miss.
    let req = PlanRequest::from_json(r#"{"model":"deepseek-v3","rate":20,"input_len":2048,"output_len":512,"max_ttft_ms":2000,"max_tpot_ms":50,"hardware":[{"device":"910C","nodes":4}],"requests":100,"budget":12}"#).unwrap();
    let p = plan(&req).unwrap();
    let misses: Vec<_> = p.runner_ups.iter().filter(|r| r.misses.is_some()).collect();
    assert!(!misses.is_empty(), "{}", p.to_text());
    assert!(p.to_text().contains("near-miss (misses p90"), "{}", p.to_text());
}

#[test]
fn the_capacity_goal_needs_a_ttft_limit_and_an_open_stream() {
    let mut s = deepseek(400);
    s.constraints.max_ttft_ms = None;
    let e = Run::new(&s).err().expect("no TTFT limit");
    assert!(e.contains("constraints.max_ttft_ms"), "{e}");
    let mut s = deepseek(400);
    s.deployment.serving.arrival = "closed".into();
    let e = Run::new(&s).err().expect("closed loop");
    assert!(e.contains("deployment.serving.arrival"), "{e}");
}

#[test]
fn a_change_within_the_workload_spread_is_not_called_a_gain() {
    let mut s = bundled_scenario("phi4-mini-910B2-sharegpt").unwrap();
    s.budget = 6;
    let mut run = Run::new(&s).unwrap();
    run.run_to_end();
    let (_, best) = run.overall_best().expect("a feasible configuration");
    let spread = tunelab_scenario::stages::capacity::spread::headline(&s, run.space().names(), &best.config).unwrap().expect("a serving scenario has a spread");
    assert_eq!(spread.samples.len(), 5);
    assert_eq!(spread.samples[0].1, best.value(), "the first sample is the study's own");
    assert!(spread.min <= spread.mean && spread.mean <= spread.max);
    let report = run.report();
    let goal = report.metric.clone();
    let change = report.comparison.iter().find(|c| c.metric == goal).and_then(|c| c.change_pct).unwrap_or(0.0);
    let wide = tunelab_scenario::stages::capacity::spread::Spread { half_range_pct: change.abs() + 1.0, ..spread.clone() };
    let r = report.clone().with_spread(Some(wide));
    assert!(r.comparison.iter().find(|c| c.metric == goal).unwrap().within_spread);
    assert!(r.to_text().contains("workload spread"));
    let narrow = tunelab_scenario::stages::capacity::spread::Spread { half_range_pct: 0.0, ..spread };
    let r = report.with_spread(Some(narrow));
    assert!(!r.comparison.iter().find(|c| c.metric == goal).unwrap().within_spread || change == 0.0);
}

/// Every bundled argument list, read from assets/engines/flags/ itself (not through the crate).
fn list_files() -> Vec<(String, serde_json::Value)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/engines/flags");
    let mut out: Vec<(String, serde_json::Value)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().to_string(), serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_argument_list_parses_and_names_its_sources() {
    use tunelab_scenario::stages::scale::flags;
    let files = list_files();
    assert_eq!(files.len(), flags::all().len(), "every file in assets/engines/flags/ is bundled and parses");
    for (name, v) in &files {
        for key in ["flags", "additional_config", "fields", "deprecated"] {
            for (f, src) in v[key].as_object().into_iter().flatten() {
                assert!(src.as_str().is_some_and(|s| s.len() > 20), "{name}: {key} {f} names its source");
                if key == "flags" || key == "deprecated" {
                    assert!(f.starts_with("--"), "{name}: {f}");
                }
            }
        }
        let list = &flags::all().iter().find(|(n, _)| n == name).unwrap().1;
        for (feature, f) in &list.features {
            assert!(f.source.len() > 20, "{name}: feature {feature} names its source");
            for a in f.args.iter().filter(|a| a.starts_with("--")) {
                assert!(list.has(a), "{name}: feature {feature} writes {a}, not an argument of the release");
            }
            for p in f.additional_config.as_ref().map(flags::paths).unwrap_or_default() {
                assert!(list.additional_config.contains_key(&p), "{name}: feature {feature} writes additional_config {p}, not listed");
            }
        }
    }
    // The lists are the releases' real parsers: the full vLLM 0.23.0 list has far more than the
    // flags Tunelab writes, and SGLang 0.5.23 dropped --enable-dp-attention for --attn-dp-size.
    let (v23, exact) = flags::for_release("vllm-ascend", "0.23").unwrap();
    assert!(exact && v23.flags.len() > 200, "{}", v23.flags.len());
    let (sg, _) = flags::for_release("sglang", &flags::newest("sglang")).unwrap();
    assert!(sg.has("--attn-dp-size") && !sg.has("--enable-dp-attention") && sg.deprecated.contains_key("--enable-dp-attention"));
}
/// Configurations of a scenario worth exporting: the baseline and, over a cluster, EPLB and
/// every listed disaggregated layout.
fn configs(s: &Scenario) -> Vec<BTreeMap<String, Value>> {
    let run = Run::new(s).unwrap_or_else(|e| panic!("{}: {e}", s.name));
    let names = run.space().names().to_vec();
    let base: BTreeMap<String, Value> = names.iter().cloned().zip(run.baseline_config().0.iter().cloned()).collect();
    let mut out = vec![base.clone()];
    if let Some(p) = run.space().params().iter().find(|p| p.name == "redundant_experts") {
        for i in 0..p.levels().unwrap_or(0) {
            let mut c = base.clone();
            c.insert("redundant_experts".into(), p.level_value(i));
            out.push(c);
        }
    }
    // Context and pipeline parallelism (each level over the baseline): their flags are
    // release-dependent (vLLM 0.9.1 has no --decode-context-parallel-size).
    for name in ["decode_cp", "prefill_cp", "pp"] {
        if let Some(p) = run.space().params().iter().find(|p| p.name == name) {
            for i in 0..p.levels().unwrap_or(0) {
                let mut c = base.clone();
                c.insert(name.into(), p.level_value(i));
                out.push(c);
            }
        }
    }
    if let Some(p) = run.space().params().iter().find(|p| p.name == "pd") {
        // Every disaggregated layout the stage accepts with a decode side of dp 2.
        let chips = s.deployment.cluster.as_ref().map_or(0, |c| c.nodes) * 16;
        for i in 0..p.levels().unwrap_or(0) {
            let Some(pd) = p.level_value(i).as_str().and_then(|l| tunelab_scenario::spec::cluster::parse_layout(l).ok().flatten()) else { continue };
            let mut c = base.clone();
            c.insert("pd".into(), p.level_value(i));
            c.insert("dp".into(), Value::Int(2));
            let int = |k: &str| c.get(k).and_then(Value::as_i64).unwrap_or(1) as u64;
            let k = tunelab_scenario::stages::scale::ScaleKnobs { dp: 2, redundant: 0, pd: Some(pd), prefill_tp: int("prefill_tp"), ..Default::default() };
            if tunelab_scenario::stages::scale::layout_error(chips, int("tp"), &k, 0).is_none() {
                out.push(c);
            }
        }
    }
    out
}

/// The `--additional-config` JSON keys a command writes (dotted paths).
fn additional_keys(cmd: &[String]) -> Vec<String> {
    let Some(i) = cmd.iter().position(|a| a == "--additional-config") else { return Vec::new() };
    let v: serde_json::Value = serde_json::from_str(cmd[i + 1].trim_matches('\'')).unwrap_or_else(|e| panic!("{}: {e}", cmd[i + 1]));
    tunelab_scenario::stages::scale::flags::paths(&v)
}

#[test]
fn every_bundled_serving_scenarios_launch_uses_only_the_releases_flags_and_starts_the_whole_layout() {
    use tunelab_scenario::stages::scale::flags::{self, Targets};
    let releases = tunelab_scenario::spec::options::releases::all();
    let vllm_releases: Vec<String> = releases["vllm-ascend"].releases.keys().cloned().collect();
    let mindie_releases: Vec<String> = releases["mindie"].releases.keys().cloned().collect();
    let mut checked = 0;
    let mut seen_releases = std::collections::BTreeSet::new();
    for (id, s) in bundled_scenarios() {
        let s = s.unwrap_or_else(|e| panic!("{id}: {e}"));
        if s.stage != Stage::Deployment {
            continue;
        }
        for best in configs(&s) {
            // Every vLLM-Ascend release of assets/engines/releases.json, each MindIE release beside
            // one of them, and SGLang's newest list.
            for (k, vr) in vllm_releases.iter().enumerate() {
                let t = Targets { vllm_ascend: vr.clone(), mindie: mindie_releases[k % mindie_releases.len()].clone(), sglang: flags::newest("sglang") };
                let d = tunelab_scenario::report::export_with(&s, &best, &t);
                let (list, exact) = flags::for_release("vllm-ascend", vr).unwrap();
                if exact {
                    seen_releases.insert(vr.clone());
                }
                let l = &d.launch;
                for n in l.nodes.iter().filter(|n| n.role != "proxy" && n.command.first().map(String::as_str) == Some("vllm")) {
                    for a in n.command.iter().filter(|a| a.starts_with("--")) {
                        assert!(list.has(a), "{id}: {a} is not an argument of {} (node {} {})", list.release, n.node, n.role);
                    }
                    for p in additional_keys(&n.command) {
                        assert!(list.additional_config.contains_key(&p), "{id}: --additional-config {p} is not a key of {}", list.release);
                    }
                    // EPLB as the release runs it: its environment on the node, never Model
                    // Runner V2's, which no bundled release runs EPLB with.
                    assert!(!n.env.iter().any(|(k, _)| k == "VLLM_USE_V2_MODEL_RUNNER"), "{id}");
                    if additional_keys(&n.command).iter().any(|p| p.ends_with("dynamic_eplb")) {
                        assert!(n.env.iter().any(|(k, v)| k == "DYNAMIC_EPLB" && v == "true"), "{id}: node {} lacks DYNAMIC_EPLB=true", n.node);
                    }
                }
                for a in d.vllm_args.iter().filter(|a| a.starts_with("--")) {
                    assert!(list.has(a), "{id}: {a} is not an argument of {}", list.release);
                }
                // Redundant experts are launched, or said not to be.
                let red = best.get("redundant_experts").and_then(Value::as_i64).unwrap_or(0);
                if red > 0 {
                    let text = l.to_text();
                    assert!(text.contains(&format!("{red}")) && (text.contains("dynamic_eplb") || d.mindie_notes.iter().any(|n| n.contains("EPLB"))), "{id} {vr}: {text}");
                }
                // --max-model-len covers the longest request of the workload.
                let serve = l.nodes.iter().find(|n| n.command.get(1).map(String::as_str) == Some("serve")).expect("a vllm serve");
                let i = serve.command.iter().position(|a| a == "--max-model-len").unwrap();
                let len: u64 = serve.command[i + 1].parse().unwrap();
                assert!(len >= l.max_model_len, "{id}: --max-model-len {len} < longest request {}", l.max_model_len);
                assert!(l.max_model_len >= (s.workload.input_len + s.workload.output_len) as u64 || s.deployment.serving.length_distribution != "fixed");
                // An INT8 KV cache is read through --quantization ascend.
                if s.deployment.serving.kv_cache_dtype == "int8" {
                    assert!(d.vllm_args.windows(2).any(|w| w[0] == "--quantization" && w[1] == "ascend"), "{id}");
                }
                // Every node of the cluster runs something; MindIE's layout is the real one and
                // its config holds only the release's fields.
                let nodes = s.deployment.cluster.as_ref().map_or(1, |c| c.nodes);
                for k in 0..nodes {
                    assert!(l.nodes.iter().any(|n| n.node == k), "{id}: node {k} has no command");
                }
                let (mlist, _) = flags::for_release("mindie", &t.mindie).unwrap();
                for p in flags::paths(&d.mindie_config) {
                    assert!(mlist.fields.contains_key(&p), "{id}: config.json {p} is not a field of {}", mlist.release);
                }
                // MindIE lets every request of the workload run to its end.
                let iters = d.mindie_config["BackendConfig"]["ScheduleConfig"]["maxIterTimes"].as_u64().unwrap();
                assert!(iters >= tunelab_scenario::stages::scale::launch::longest_output(&s), "{id}: maxIterTimes {iters}");
                assert!(d.mindie_config["BackendConfig"]["ModelDeployConfig"]["maxSeqLen"].as_u64().unwrap() >= l.max_model_len, "{id}");
                let chips_per_node = d.mindie_config["BackendConfig"]["npuDeviceIds"][0].as_array().unwrap().len() as u64;
                assert_eq!(d.mindie_config["BackendConfig"]["ModelDeployConfig"]["ModelConfig"][0]["worldSize"].as_u64().unwrap(), chips_per_node, "{id}");
                if nodes > 1 {
                    assert_eq!(d.mindie_config["BackendConfig"]["multiNodesInferEnabled"], serde_json::json!(true));
                    assert_eq!(l.mindie_rank_table.as_ref().unwrap()["server_list"].as_array().unwrap().len() as u64, nodes, "{id}");
                }
                // SGLang: its release's flags only, none deprecated, every node of the layout.
                let (sg, _) = flags::for_release("sglang", &t.sglang).unwrap();
                assert!(!d.sglang.nodes.is_empty(), "{id}: an SGLang launch");
                // A disaggregated layout: prefill and decode servers, and the router in front.
                if best.get("pd").and_then(Value::as_str).and_then(|l| tunelab_scenario::spec::cluster::parse_layout(l).ok().flatten()).is_some() {
                    let modes: Vec<&str> = d.sglang.nodes.iter().filter_map(|n| n.command.iter().position(|a| a == "--disaggregation-mode").map(|i| n.command[i + 1].as_str())).collect();
                    assert!(modes.contains(&"prefill") && modes.contains(&"decode"), "{id}: {modes:?}");
                    assert!(d.sglang.nodes.iter().any(|n| n.role == "router" && n.command.iter().any(|a| a == "--pd-disaggregation")), "{id}: a router");
                    for k in 0..s.deployment.cluster.as_ref().map_or(1, |c| c.nodes) {
                        assert!(d.sglang.nodes.iter().any(|n| n.node == k && n.role != "router"), "{id}: node {k} has no SGLang server");
                    }
                }
                for n in d.sglang.nodes.iter().filter(|n| n.command.iter().any(|a| a == "sglang.launch_server")) {
                    for a in n.command.iter().filter(|a| a.starts_with("--")) {
                        assert!(sg.has(a) && !sg.deprecated.contains_key(a), "{id}: {a} is not an argument of {}", sg.release);
                    }
                    let c = n.command.iter().position(|a| a == "--context-length").unwrap();
                    assert!(n.command[c + 1].parse::<u64>().unwrap() >= l.max_model_len, "{id}");
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 10 * vllm_releases.len(), "{checked}");
    // Every vLLM-Ascend release has its own list (none checked against another release's).
    assert_eq!(seen_releases.len(), vllm_releases.len(), "{seen_releases:?}");
}

#[test]
fn two_nodes_of_data_parallel_ranks_get_a_head_and_a_headless_command() {
    let s = deepseek(400);
    let mut best: BTreeMap<String, Value> = BTreeMap::new();
    for (k, v) in [("tp", 1), ("dp", 32), ("batch", 16), ("redundant_experts", 32), ("num_speculative_tokens", 1)] {
        best.insert(k.into(), Value::Int(v));
    }
    best.insert("expert_parallel".into(), Value::Str("on".into()));
    best.insert("precision".into(), Value::Str("w8a8".into()));
    let l = export_for(&s, &best).launch;
    let serves: Vec<_> = l.nodes.iter().filter(|n| n.command.get(1).map(String::as_str) == Some("serve")).collect();
    assert_eq!(serves.len(), 2, "{}", l.to_text());
    assert!(!serves[0].command.iter().any(|a| a == "--headless"));
    let w = &serves[1].command;
    let i = w.iter().position(|a| a == "--data-parallel-start-rank").unwrap();
    assert_eq!((w.contains(&"--headless".to_string()), w[i + 1].as_str()), (true, "16"));
    // EPLB as vLLM-Ascend 0.23 (the baseline) runs it: its own dynamic EPLB (DYNAMIC_EPLB=true
    // and --additional-config eplb_config), on both nodes.
    assert!(l.to_text().contains("export DYNAMIC_EPLB=true"), "{}", l.to_text());
    assert!(serves.iter().all(|n| additional_keys(&n.command).contains(&"eplb_config.num_redundant_experts".to_string())));
    assert!(!l.to_text().contains("VLLM_USE_V2_MODEL_RUNNER"));
}

#[test]
fn a_plan_finds_the_fewest_chips_with_runner_ups_and_bad_requests_name_the_field() {
    let req = PlanRequest::from_json(r#"{"model":"qwen2.5-7b","rate":4,"input_len":512,"output_len":128,"max_ttft_ms":2000,"max_tpot_ms":60,"hardware":[{"device":"910B2","nodes":2}],"requests":60,"budget":8}"#).unwrap();
    let p = plan(&req).unwrap();
    let best = p.best.as_ref().expect("a plan");
    assert!(best.ttft_ms <= 2000.0 && best.tpot_ms <= 60.0);
    assert!(best.chips >= 1 && !p.tried.is_empty() && !best.layout.is_empty());
    for r in &p.runner_ups {
        match &r.misses {
            // A runner-up within the limits is another layout of the plan's size or a larger one.
            None => assert!(r.chips >= best.chips && r.ttft_ms <= 2000.0 && r.tpot_ms <= 60.0),
            // A near-miss says what it misses, and it does miss it.
            Some(m) => assert!((m.contains("TTFT") && r.ttft_ms > 2000.0) || (m.contains("TPOT") && r.tpot_ms > 60.0), "{m}"),
        }
    }
    // The same request gives the same plan (deterministic).
    assert_eq!(plan(&req).unwrap(), p);
    for (bad, field) in [
        (r#"{"model":"qwen2.5-7b","rate":0,"max_ttft_ms":1,"max_tpot_ms":1,"hardware":[{"device":"910B2","nodes":1}]}"#, "plan.rate"),
        (r#"{"model":"qwen2.5-7b","rate":1,"max_ttft_ms":1,"max_tpot_ms":1,"hardware":[]}"#, "plan.hardware"),
        (r#"{"model":"qwen2.5-7b","rate":1,"max_ttft_ms":1,"max_tpot_ms":1,"hardware":[{"device":"910B2","nodes":1}],"ttft":3}"#, "unknown field"),
        (r#"{"model":"qwen2.5-7b","rate":1,"max_ttft_ms":1,"max_tpot_ms":1,"goal":"cost","hardware":[{"device":"910B2","nodes":1}]}"#, "price_per_chip_hour"),
    ] {
        let e = PlanRequest::from_json(bad).unwrap_err();
        assert!(e.contains(field), "{bad}: {e}");
    }
}

/// A small model on 32 data-parallel ranks at batch 128: each rank serves 100 of the 3,200
/// requests, fewer than it holds at once.
fn small_on_32_ranks() -> (Run, Config) {
    let mut v = serde_json::to_value(bundled_scenario("deepseek-v3-2xA3-deployment").unwrap()).unwrap();
    v["model"] = "phi-4-mini-instruct".into();
    v["deployment"]["serving"].as_object_mut().unwrap().remove("speculative");
    v["deployment"]["cluster"].as_object_mut().unwrap().remove("redundant_experts");
    let s = Scenario::from_json(&v.to_string()).unwrap();
    let run = Run::new(&s).unwrap();
    let c = config(&run, &[("tp", Value::Int(1)), ("dp", Value::Int(32)), ("batch", Value::Int(128)), ("max_num_batched_tokens", Value::Int(16384))]);
    (run, c)
}

#[test]
fn a_sample_smaller_than_what_the_ranks_hold_at_once_is_not_reported_as_a_sustained_rate() {
    let (mut run, c) = small_on_32_ranks();
    let o = run.evaluate(&c);
    let (rate, e2e_ms, tpot_mean_ms) = (metric(&run, &o, "capacity_rps"), metric(&run, &o, "e2e_mean_ms"), metric(&run, &o, "tpot_mean_ms"));
    let s = run.scenario().clone();
    let n = s.deployment.serving.requests as f64;
    // Little's law: no more requests in flight at once than the sample holds (the search took a
    // burst of the whole sample, 5,905 req/s, for capacity before).
    assert!(rate * e2e_ms / 1e3 <= n, "{rate} req/s x {e2e_ms} ms in flight > {n} requests");
    // And no more tokens per second than 32 ranks of 128 decoding sequences can emit at the
    // run's own TPOT (the burst answer claimed ten times that).
    let tokens_per_s = metric(&run, &o, "capacity_tokens_per_s_per_chip") * 32.0;
    let decode_bound = 32.0 * 128.0 / (tpot_mean_ms / 1e3);
    assert!(tokens_per_s <= decode_bound, "{rate} req/s = {tokens_per_s} tokens/s beyond the decode slots' {decode_bound} tokens/s");
    // What stopped the search is said (report, diagnosis and `tunelab eval` print this note).
    let named: Vec<(String, f64)> = match &o {
        Outcome::Ok(v) => run.metrics().iter().map(|m| m.name.clone()).zip(v.iter().copied()).collect(),
        other => panic!("{other:?}"),
    };
    if rate * e2e_ms / 1e3 > 0.8 * n {
        let note = tunelab_scenario::stages::capacity::bound_note(&s, &named).expect("a note when the sample bounds the answer");
        assert!(note.contains("bound by the sample") && note.contains("deployment.serving.requests"), "{note}");
    }
}

#[test]
fn a_capacity_at_the_searchs_ceiling_is_said_to_be_a_lower_bound() {
    let s = bundled_scenario("deepseek-v3-2xA3-deployment").unwrap();
    let ceiling = 8.0 * 4096.0;
    let named = vec![("capacity_rps".to_string(), ceiling), ("e2e_mean_ms".to_string(), 1.0)];
    let note = tunelab_scenario::stages::capacity::bound_note(&s, &named).expect("a note at the ceiling");
    assert!(note.starts_with("capacity above 32768.0 req/s") && note.contains("lower bound"), "{note}");
    // Far from the ceiling and from the sample's bound: nothing to say.
    let named = vec![("capacity_rps".to_string(), 20.0), ("e2e_mean_ms".to_string(), 30_000.0)];
    assert_eq!(tunelab_scenario::stages::capacity::bound_note(&s, &named), None);
}

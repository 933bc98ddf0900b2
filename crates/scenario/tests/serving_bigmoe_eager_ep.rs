//! Eager steps whose MoE layers exchange tokens across expert-parallel ranks (MC2 or
//! all-to-all) run part of the shorter of host and device work in series with the longer
//! (`scheduler::a2a_sync::ep_serial_share`; vllm-ascend `eager_ep_serial_share` in
//! assets/constants/serving-host.json, a fit in [0, 1]). Kimi-K2-Thinking W4A16 on one A3 node,
//! TP16 + EP16, vLLM-Ascend v0.20.2rc1, max-num-seqs 12 (graphs for 1, 2, 4 and 8 sequences):
//! set 3's sweep measures 222 ms per token at 12 running sequences (concurrency 16), decoded
//! eagerly, against 121 ms of eager dispatch and 103 ms of device time priced for the step; the
//! plain race gave 123 ms.

mod common;
use tunelab_scenario::serving::Phase;
use tunelab_scenario::stages::deployment::step_operators;
use tunelab_scenario::Scenario;

fn kimi(device: &str, nodes: u64, ep: &str, concurrency: u64, costs: serde_json::Value) -> Scenario {
    Scenario::from_value(kimi_value(device, nodes, ep, concurrency, costs)).unwrap_or_else(|e| panic!("{e}"))
}

fn kimi_value(device: &str, nodes: u64, ep: &str, concurrency: u64, costs: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "name": "kimi-k2-eager-ep", "stage": "deployment", "model": "kimi-k2", "device": device, "budget": 1,
        "deployment": {
            "cluster": {"nodes": nodes}, "precisions": ["w4a16"], "tile_operators": false,
            "serving": {"arrival": "burst", "block_size": 128, "engine": "vllm-ascend", "engine_version": "0.20", "hccl_expansion": "aiv",
                        "length_distribution": "fixed", "mode": "scheduler", "max_concurrency": concurrency, "requests": 2 * concurrency,
                        "host_costs": costs}
        },
        "space": {"batch": {"fixed": 12}, "chunked_prefill": {"fixed": "on"}, "dp": {"fixed": 1}, "expert_parallel": {"fixed": ep}, "launch": {"fixed": "graph"},
                  "max_num_batched_tokens": {"fixed": 8192}, "precision": {"fixed": "w4a16"}, "tp": {"fixed": 16}},
        "workload": {"batch": 12, "input_len": 1024, "output_len": 256}
    })
}

const LINE: &str = "host and device in series, eager step with an expert-parallel exchange";

fn decode(s: &Scenario, seqs: f64) -> tunelab_scenario::stages::deployment::StepOperators {
    let (names, c) = common::configured(s, &[]).unwrap_or_else(|e| panic!("{e}"));
    step_operators(s, &names, &c, Phase::Decode, Some(seqs)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn an_eager_decode_above_the_captured_sizes_adds_host_and_device_and_names_it() {
    let s = kimi("910C", 1, "on", 16, serde_json::json!({}));
    // 12 sequences: above the largest captured graph (8), so eager, and within MC2's capacity.
    let st = decode(&s, 12.0);
    eprintln!("{}\nwall {:.1} ms, device {:.1} ms", st.what, st.wall_ms, st.device_ms);
    assert!(st.ops.iter().any(|o| o.name.ends_with("ep.dispatch_mc2")), "decode of 12 should take MC2");
    let at = st.what.find(LINE).unwrap_or_else(|| panic!("no '{LINE}' line: {}", st.what));
    assert!(st.what[at..].contains("1 of the shorter side"), "{}", &st.what[at..]);
    // Measured 222 ms per token at 12 running sequences; the race alone gave 123 ms.
    assert!((180.0..260.0).contains(&st.wall_ms), "eager decode step of 12: {:.1} ms (measured 222)", st.wall_ms);
    // A captured step of 8 is untouched: no line, the graph's price.
    let g = decode(&s, 8.0);
    assert!(!g.what.contains(LINE), "{}", g.what);
    assert!(g.wall_ms < 110.0, "graph step of 8: {:.1} ms (measured TPOT 87)", g.wall_ms);
}

#[test]
fn the_sweeps_concurrency_16_tpot_follows_the_eager_steps() {
    // 16 clients against max-num-seqs 12: 12 decode at a time, eagerly.
    let tpot = common::serve_with(&kimi("910C", 1, "on", 16, serde_json::json!({})), &[]).unwrap_or_else(|e| panic!("{e}")).tpot_ms.mean;
    eprintln!("Kimi-K2 A3 TP16 EP16 c16 TPOT {tpot:.1} ms (measured 222.1)");
    assert!((180.0..265.0).contains(&tpot), "c16 TPOT {tpot:.1} ms (measured 222.1)");
}

#[test]
fn a_scenario_sets_the_share_and_a_value_outside_its_bound_is_refused_by_name() {
    // Share 0: the plain race, as before the field.
    let s0 = kimi("910C", 1, "on", 16, serde_json::json!({"eager_ep_serial_share": 0.0}));
    let st = decode(&s0, 12.0);
    assert!(!st.what.contains(LINE), "{}", st.what);
    assert!(st.wall_ms < 140.0, "share 0: {:.1} ms", st.wall_ms);
    let half = decode(&kimi("910C", 1, "on", 16, serde_json::json!({"eager_ep_serial_share": 0.5})), 12.0);
    assert!(half.what.contains("0.5 of the shorter side") && half.wall_ms > st.wall_ms + 30.0, "{}", half.what);
    // Refused when the scenario is read, naming the field and its bound.
    let e = Scenario::from_value(kimi_value("910C", 1, "on", 16, serde_json::json!({"eager_ep_serial_share": 1.5}))).err().unwrap_or_else(|| panic!("1.5 should be refused"));
    assert!(e.contains("host_costs.eager_ep_serial_share") && e.contains("[0, 1]"), "{e}");
}

#[test]
fn without_expert_parallelism_the_all_gather_path_keeps_the_race() {
    // Kimi-K2.6's reading: 16 A2 chips, TP16 without EP (the all-gather path), eager.
    let s = kimi("910B2", 2, "off", 4, serde_json::json!({}));
    let st = decode(&s, 12.0);
    assert!(!st.what.contains(LINE), "{}", st.what);
}

#[test]
fn the_diagnosis_says_the_eager_step_runs_host_and_device_in_series() {
    use tunelab_scenario::diagnosis::{diagnose, Weights};
    let s = kimi("910C", 1, "on", 16, serde_json::json!({}));
    let d = diagnose(&s, None, Weights::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        d.cause_chain.iter().any(|c| c.starts_with("the decode step runs eagerly with an expert-parallel MoE exchange") && c.contains("eager_ep_serial_share")),
        "{:#?}",
        d.cause_chain
    );
    // Share 0 (the plain race): no such sentence.
    let d0 = diagnose(&kimi("910C", 1, "on", 16, serde_json::json!({"eager_ep_serial_share": 0.0})), None, Weights::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(!d0.cause_chain.iter().any(|c| c.contains("eager_ep_serial_share")), "{:#?}", d0.cause_chain);
}

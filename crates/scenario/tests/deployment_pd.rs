//! Prefill-decode layouts as they are deployed (issue 42, item 1): a concurrency cap and request
//! admission couple the two sides (waiting for a decode slot is queueing, in TTFT and e2e, not
//! TPOT); each side spreads the experts over its own instance (its own EP); and the prefill
//! side may run on its own chip (prefill on A3, decode on A2) with the KV cache priced on the
//! RoCE link between the two systems.

mod common;
use tunelab_scenario::bundled::bundled_scenario;
use tunelab_scenario::stages::scheduler::ServingStats;
use tunelab_scenario::stages::setup;
use tunelab_scenario::Scenario;
use tunelab_search::Value;

fn pd() -> Scenario {
    let mut s = bundled_scenario("qwen3-235b-2xA3-pd-compare").unwrap();
    s.constraints = Default::default();
    s.deployment.serving.requests = 160;
    s
}

/// Serves the configuration given by name (others at the baseline).
fn run(s: &Scenario, set: &[(&str, Value)]) -> Result<ServingStats, String> {
    common::serve_with(s, set)
}

fn i(x: i64) -> Value {
    Value::Int(x)
}

fn st(x: &str) -> Value {
    Value::Str(x.into())
}

fn one_p_one_d() -> Vec<(&'static str, Value)> {
    vec![("pd", st("1P1D")), ("tp", i(4)), ("dp", i(4)), ("prefill_tp", i(4)), ("batch", i(32))]
}

#[test]
fn a_concurrency_cap_changes_a_pd_layout_and_one_above_the_requests_does_not() {
    let at = |cap: Option<u64>| {
        let mut s = pd();
        s.deployment.serving.max_concurrency = cap;
        run(&s, &one_p_one_d()).unwrap()
    };
    let (none, eight, wide) = (at(None), at(Some(8)), at(Some(700)));
    // A cap above the request count never binds: the same run.
    assert_eq!(none.ttft_ms.p90, wide.ttft_ms.p90);
    assert_eq!(none.output_tokens_per_s, wide.output_tokens_per_s);
    // Eight in flight: fewer sequences per decode step, so less throughput and faster tokens.
    assert!(eight.output_tokens_per_s < none.output_tokens_per_s * 0.9, "cap 8: {} tok/s, uncapped {}", eight.output_tokens_per_s, none.output_tokens_per_s);
    assert!(eight.mean_batch < none.mean_batch, "cap 8 batch {} vs {}", eight.mean_batch, none.mean_batch);
    assert!(eight.e2e_ms.p50 > 0.0 && none.e2e_ms.p50 >= none.ttft_ms.p50);
}

#[test]
fn waiting_for_a_decode_slot_is_queueing_not_tpot() {
    // Every request at once, at most 4 sequences per decode rank: most wait for a slot.
    let mut s = pd();
    s.deployment.serving.arrival = "burst".into();
    s.deployment.serving.requests = 64;
    s.deployment.batches = vec![4, 16, 32];
    let burst = run(&s, &[("pd", st("1P1D")), ("tp", i(4)), ("dp", i(4)), ("prefill_tp", i(4)), ("batch", i(4))]).unwrap();
    // The same decode rank fully loaded at 4 sequences, without anyone waiting for a slot:
    // TPOT is the step time at 4 sequences in both.
    let mut light = pd();
    light.deployment.serving.arrival = "burst".into();
    light.deployment.serving.requests = 16;
    light.deployment.batches = vec![4, 16, 32];
    let one = run(&light, &[("pd", st("1P1D")), ("tp", i(4)), ("dp", i(4)), ("prefill_tp", i(4)), ("batch", i(4))]).unwrap();
    assert!(burst.tpot_ms.p90 < one.tpot_ms.p90 * 1.2, "burst TPOT p90 {} vs no-wait {}", burst.tpot_ms.p90, one.tpot_ms.p90);
    // The wait is in the queue and in TTFT.
    assert!(burst.queue_ms.p90 > 5.0 * one.queue_ms.p90.max(1.0), "queue p90 {} vs {}", burst.queue_ms.p90, one.queue_ms.p90);
    assert!(burst.ttft_ms.p90 > burst.tpot_ms.p90 * 64.0, "TTFT p90 {} should hold the wait for a slot", burst.ttft_ms.p90);
}

fn deepseek_three_nodes() -> Scenario {
    // Its latency limits stay: the scenario's capacity goal is measured against them.
    let mut s = bundled_scenario("deepseek-v3-2xA3-deployment").unwrap();
    let c = s.deployment.cluster.as_mut().unwrap();
    c.nodes = 3;
    c.disaggregation = vec!["1P1D".into()];
    c.data_parallel = vec![];
    c.prefill_tp = vec![8];
    c.redundant_experts = vec![0];
    s.deployment.tensor_parallel = vec![1, 4, 8];
    s.deployment.serving.requests = 48;
    s
}

#[test]
fn a_three_node_pd_layout_takes_its_own_ep_on_each_side() {
    // 48 dies: decode tp 1 x dp 32 (EP 32) on two nodes, prefill tp 8 x dp 2 (EP 16) on one.
    // 48 divides none of DeepSeek-V3's 256 experts evenly, and neither side uses it.
    let s = deepseek_three_nodes();
    let r = run(&s, &[("pd", st("1P1D")), ("tp", i(1)), ("dp", i(32)), ("prefill_tp", i(8)), ("expert_parallel", st("on")), ("precision", st("w8a8")), ("batch", i(16))]);
    let r = r.unwrap_or_else(|e| panic!("the 3-node layout should serve: {e}"));
    assert!(r.tpot_ms.p50 > 0.0 && r.ttft_ms.p50 > 0.0);
}

#[test]
fn heterogeneous_pd_prefills_on_a3_and_decodes_on_a2_over_roce() {
    let mut s = pd();
    s.device = tunelab_scenario::scenario::DeviceRef::Name("910B2".into());
    s.deployment.tensor_parallel = vec![8];
    let c = s.deployment.cluster.as_mut().unwrap();
    c.nodes = 1;
    c.disaggregation = vec!["1P1D".into()];
    c.prefill_tp = vec![8, 16];
    c.prefill_device = Some("910C".into());
    c.prefill_nodes = Some(1);
    let st_ = setup(&s).unwrap_or_else(|e| panic!("{e}"));
    assert!(st_.notes.iter().any(|n| n.contains("heterogeneous") && n.contains("910C")), "{:?}", st_.notes);
    let het = run(&s, &[("pd", st("1P1D")), ("tp", i(8)), ("dp", i(1)), ("prefill_tp", i(8)), ("batch", i(32))]).unwrap_or_else(|e| panic!("{e}"));
    assert!(het.ttft_ms.p50 > 0.0 && het.tpot_ms.p50 > 0.0);
    // Decode must fill its own node; the prefill side must split into whole instances.
    let bad = run(&s, &[("pd", st("1P1D")), ("tp", i(8)), ("dp", i(1)), ("prefill_tp", i(16)), ("batch", i(32))]);
    assert!(bad.is_ok(), "16 dies make one prefill instance of tp 16: {bad:?}");
    // Bad fields name themselves.
    let mut v: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
    v["deployment"]["cluster"]["prefill_device"] = serde_json::json!("910Z");
    let e = Scenario::from_json(&v.to_string()).and_then(|s| setup(&s).map(|_| ())).unwrap_err();
    assert!(e.contains("deployment.cluster.prefill_device"), "{e}");
    // An old link (no prefill_device) serialises without the new fields.
    assert!(!pd().to_json().contains("prefill_device"));
}

#[test]
fn a_long_prompt_prefills_faster_through_a_pipeline_and_faster_still_with_dynamic_chunks() {
    // One 64K prompt on a prefill instance of tp 8 x pp 2 (16 dies), decode tp 4 x dp 4.
    let mut s = pd();
    s.deployment.serving.arrival = "burst".into();
    s.deployment.serving.requests = 1;
    s.deployment.serving.length_distribution = "fixed".into();
    s.deployment.serving.max_num_batched_tokens = vec![16384];
    s.workload.input_len = 65536;
    s.workload.output_len = 2;
    let c = s.deployment.cluster.as_mut().unwrap();
    c.disaggregation = vec!["1P1D".into()];
    c.prefill_tp = vec![8];
    c.prefill_pp = vec![2, 1];
    let at = |pp: i64, chunking: &str| {
        let r = run(&s, &[("pd", st("1P1D")), ("tp", i(4)), ("dp", i(4)), ("prefill_tp", i(8)), ("prefill_pp", i(pp)), ("prefill_chunking", st(chunking)), ("batch", i(8))]);
        r.unwrap_or_else(|e| panic!("pp {pp} {chunking}: {e}")).ttft_ms.p50
    };
    let (dynamic, fixed, flat) = (at(2, "dynamic"), at(2, "static"), at(1, "static"));
    eprintln!("64K prompt TTFT: pp2 dynamic {dynamic:.0} ms, pp2 static {fixed:.0} ms, pp1 {flat:.0} ms");
    assert!(dynamic < fixed, "dynamic chunks {dynamic} ms vs static {fixed} ms");
    assert!(fixed < flat, "two stages {fixed} ms vs one {flat} ms");
    // A pipeline without a disaggregated layout is refused by name.
    let mut bad = pd();
    let c = bad.deployment.cluster.as_mut().unwrap();
    c.disaggregation = vec!["colocated".into()];
    c.prefill_pp = vec![2];
    assert!(setup(&bad).err().unwrap_or_default().contains("deployment.cluster.prefill_pp"));
}

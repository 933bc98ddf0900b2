//! Load that moves the step (issue 43 §3): a decode step of a big MoE costs more as more
//! requests share it. Kimi-K2-Thinking W4A16 on one A3 node (TP16 + EP16, vLLM-Ascend
//! v0.20.2rc1, max-num-seqs 12: graphs for 1, 2, 4 and 8 sequences), the launch of set 3's
//! concurrency sweep (srv-vllm-kimi-k2-thinking-a3-tp16-concurrency-sweep): measured TPOT 57.7 ms
//! at one request and 87.4 ms at eight (1.51x). Before, the step was priced at the engine's
//! per-layer host floor whatever the batch (59.5 -> 59.9 ms, 1.01x): each touched expert's
//! weights were read packed, about 22 MB, while the library's grouped matmul dequantises them
//! into a 16-bit workspace first (assets/kernels/libraries.json `grouped_matmul_antiquant`), so
//! the device time grows with the experts the busiest EP rank runs and passes the host floor.

mod common;
use tunelab_scenario::serving::Phase;
use tunelab_scenario::Scenario;

/// The set-3 row's scenario at `concurrency` (10 requests per client, as the row's variants).
fn kimi(concurrency: u64) -> Scenario {
    kimi_at(concurrency, "w4a16")
}

fn kimi_at(concurrency: u64, precision: &str) -> Scenario {
    let v = serde_json::json!({
        "name": "kimi-k2-thinking-a3-tp16", "stage": "deployment", "model": "kimi-k2", "device": "910C", "budget": 1,
        "deployment": {
            "cluster": {"nodes": 1}, "precisions": [precision], "tile_operators": false,
            "serving": {"arrival": "burst", "block_size": 128, "engine": "vllm-ascend", "engine_version": "0.20", "hccl_expansion": "aiv",
                        "length_distribution": "fixed", "mode": "scheduler", "max_concurrency": concurrency, "requests": 10 * concurrency}
        },
        "space": {"batch": {"fixed": 12}, "chunked_prefill": {"fixed": "on"}, "dp": {"fixed": 1}, "expert_parallel": {"fixed": "on"}, "launch": {"fixed": "graph"},
                  "max_num_batched_tokens": {"fixed": 8192}, "precision": {"fixed": precision}, "tp": {"fixed": 16}},
        "workload": {"batch": 12, "input_len": 1024, "output_len": 1024}
    });
    Scenario::from_value(v).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn kimi_k2_decode_slows_with_concurrency_as_measured() {
    let tpot = |c: u64| common::serve_with(&kimi(c), &[]).unwrap_or_else(|e| panic!("{e}")).tpot_ms.mean;
    let (one, two, four, eight) = (tpot(1), tpot(2), tpot(4), tpot(8));
    eprintln!("Kimi-K2 A3 TP16 EP16 TPOT mean: c1 {one:.1}, c2 {two:.1}, c4 {four:.1}, c8 {eight:.1} ms (measured 57.7, 60.3, 70.0, 87.4)");
    assert!(one <= two && two <= four && four <= eight, "TPOT must not fall with load: {one:.1} {two:.1} {four:.1} {eight:.1}");
    assert!(eight / one >= 1.3, "TPOT c8 / c1 = {:.2} (measured 1.51): the sweep comes out flat", eight / one);
    // Not past the measurement either: the c1 step is the host floor, c8 within 25% of 87.4 ms.
    assert!((45.0..75.0).contains(&one), "c1 TPOT {one:.1} ms (measured 57.7)");
    assert!((65.0..110.0).contains(&eight), "c8 TPOT {eight:.1} ms (measured 87.4)");
}

#[test]
fn the_step_lists_its_dequantised_experts_and_they_grow_with_the_batch() {
    use tunelab_scenario::stages::deployment::{step_operators, StepOperators};
    // One decode step at 1 and at 8 running sequences: the grouped matmul's workspace
    // dequantisation is listed as its own operators, over the experts the busiest rank runs
    // (about 2 of its 24 for one token, 7 for eight).
    let s = kimi(8);
    let (names, c) = common::configured(&s, &[]).unwrap_or_else(|e| panic!("{e}"));
    let at = |r: f64| step_operators(&s, &names, &c, Phase::Decode, Some(r)).unwrap_or_else(|e| panic!("{e}"));
    let deq = |st: &StepOperators| st.ops.iter().filter(|o| o.name.ends_with(".antiquant")).map(|o| o.time_us).sum::<f64>();
    let (one, eight) = (at(1.0), at(8.0));
    eprintln!("antiquant {:.2} -> {:.2} ms, device {:.2} -> {:.2} ms, wall {:.2} -> {:.2} ms", deq(&one) / 1e3, deq(&eight) / 1e3, one.device_ms, eight.device_ms, one.wall_ms, eight.wall_ms);
    assert!(deq(&one) > 0.0, "no antiquant operator in the W4A16 decode step");
    assert!(deq(&eight) >= 2.5 * deq(&one), "dequantised experts {:.2} -> {:.2} ms from 1 to 8 sequences", deq(&one) / 1e3, deq(&eight) / 1e3);
    assert!(eight.device_ms > 1.5 * one.device_ms, "device {:.2} -> {:.2} ms", one.device_ms, eight.device_ms);
    // W8A8 experts run the cube on INT8 directly: nothing to dequantise.
    let w8 = kimi_at(8, "w8a8");
    let (n2, c2) = common::configured(&w8, &[]).unwrap_or_else(|e| panic!("{e}"));
    let st = step_operators(&w8, &n2, &c2, Phase::Decode, Some(8.0)).unwrap_or_else(|e| panic!("{e}"));
    assert!(st.ops.iter().any(|o| o.name.contains("moe.experts.")), "the W8A8 step has its experts");
    assert_eq!(deq(&st), 0.0, "W8A8 dequantises nothing");
}

#[test]
fn the_breakdown_and_the_diagnosis_name_the_load_terms() {
    use tunelab_scenario::diagnosis::{diagnose, Weights};
    use tunelab_scenario::stages::deployment::step_operators;
    // The operator breakdown's label (Explore's detail, `tunelab eval --ops`) carries the named
    // load lines of the step the stage prices.
    let s = kimi(8);
    let (names, c) = common::configured(&s, &[]).unwrap_or_else(|e| panic!("{e}"));
    let st = step_operators(&s, &names, &c, Phase::Decode, Some(8.0)).unwrap_or_else(|e| panic!("{e}"));
    assert!(st.what.contains("experts touched: 7 of the busiest EP rank's 24 per layer (of 16 ranks)"), "{}", st.what);
    assert!(st.what.contains("dequantising W4A16 weights"), "{}", st.what);
    assert!(st.what.contains("61 layers x 950 us") && st.what.contains("the device is the longer"), "{}", st.what);
    assert!(st.what.contains("8 sequences x 50 us"), "{}", st.what);
    // At one sequence the host floor is the longer.
    let one = step_operators(&s, &names, &c, Phase::Decode, Some(1.0)).unwrap_or_else(|e| panic!("{e}"));
    assert!(one.what.contains("experts touched: 2 of") && one.what.contains("the host is the longer"), "{}", one.what);
    // The diagnosis says that load drives the decode step.
    let d = diagnose(&s, None, Weights::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(d.cause_chain.iter().any(|c| c.starts_with("load drives the decode step") && c.contains("dequantising")), "{:#?}", d.cause_chain);
}

//! vLLM-Ascend's all-to-all MoE dispatcher reads its split sizes back on the host twice per MoE
//! layer (v0.20.2rc1 token_dispatcher.py `TokenDispatcherWithAll2AllV._preprocess`; source A2A1
//! of assets/constants/serving-host.json), and on A3 a step above the MC2 capacity takes it
//! (`select_moe_comm_method`). After each read the device idles until the host launches its
//! next eager collective: the step pays, per MoE layer, 2 x (eager_host_us_per_collective + one
//! launch). Kimi-K2-Thinking W4A16 on one A3 node, TP16 + EP16, max-num-seqs 12 (the launch of
//! set 3's sweep): a 1024-token prefill step takes the all-to-all, a decode step of 8 takes MC2.

mod common;
use tunelab_scenario::serving::Phase;
use tunelab_scenario::stages::deployment::step_operators;
use tunelab_scenario::Scenario;

fn kimi(device: &str, nodes: u64) -> Scenario {
    let v = serde_json::json!({
        "name": "kimi-k2-a2a", "stage": "deployment", "model": "kimi-k2", "device": device, "budget": 1,
        "deployment": {
            "cluster": {"nodes": nodes}, "precisions": ["w4a16"], "tile_operators": false,
            "serving": {"arrival": "burst", "block_size": 128, "engine": "vllm-ascend", "engine_version": "0.20", "hccl_expansion": "aiv",
                        "length_distribution": "fixed", "mode": "scheduler", "max_concurrency": 1, "requests": 4}
        },
        "space": {"batch": {"fixed": 12}, "chunked_prefill": {"fixed": "on"}, "dp": {"fixed": 1}, "expert_parallel": {"fixed": "on"}, "launch": {"fixed": "graph"},
                  "max_num_batched_tokens": {"fixed": 8192}, "precision": {"fixed": "w4a16"}, "tp": {"fixed": 16}},
        "workload": {"batch": 12, "input_len": 1024, "output_len": 64}
    });
    Scenario::from_value(v).unwrap_or_else(|e| panic!("{e}"))
}

const LINE: &str = "host syncs of the all-to-all MoE dispatcher";

#[test]
fn an_a3_prefill_above_the_mc2_capacity_pays_the_dispatchers_host_syncs() {
    let s = kimi("910C", 1);
    let (names, c) = common::configured(&s, &[]).unwrap_or_else(|e| panic!("{e}"));
    let pre = step_operators(&s, &names, &c, Phase::Prefill, None).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{}", pre.what);
    assert!(pre.ops.iter().any(|o| o.name.ends_with("ep.dispatch_all_to_all")), "the 1024-token prefill should take the all-to-all exchange");
    // Kimi-K2: 61 layers, the first dense: 60 MoE layers, 2 syncs each, 150 us + the 910C's launch.
    let at = pre.what.find(LINE).unwrap_or_else(|| panic!("no '{LINE}' line: {}", pre.what));
    let line = &pre.what[at..];
    assert!(line.contains("60 MoE layers x 2 x ("), "{line}");
    // The syncs lengthen the device's side of the race: the prefill step, device-bound, takes at
    // least its device time plus 60 x 2 x 150 us.
    assert!(pre.wall_ms >= pre.device_ms + 60.0 * 2.0 * 0.150, "wall {:.2} ms, device {:.2} ms", pre.wall_ms, pre.device_ms);
    // A decode step of 8 runs MC2 (within the capacity the captured graphs set): no sync.
    let dec = step_operators(&s, &names, &c, Phase::Decode, Some(8.0)).unwrap_or_else(|e| panic!("{e}"));
    assert!(dec.ops.iter().any(|o| o.name.ends_with("ep.dispatch_mc2")), "decode of 8 should take MC2");
    assert!(!dec.what.contains(LINE), "{}", dec.what);
}

#[test]
fn the_all_gather_path_on_a2_reads_nothing_back() {
    // Two A2 nodes at TP16 with EP: above the MC2 capacity A2 takes the all-gather dispatcher,
    // which has no split sizes to read.
    let s = kimi("910B2", 2);
    let (names, c) = common::configured(&s, &[]).unwrap_or_else(|e| panic!("{e}"));
    let pre = step_operators(&s, &names, &c, Phase::Prefill, None).unwrap_or_else(|e| panic!("{e}"));
    assert!(pre.ops.iter().any(|o| o.name.ends_with("ep.dispatch_allgather")), "A2 prefill should take the all-gather path");
    assert!(!pre.what.contains(LINE), "{}", pre.what);
}

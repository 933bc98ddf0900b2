//! The operator stage prices a DeepEP normal-mode exchange with its waits for the latest peer
//! (`tunelab_sim::cost::moe_comm::peer_wait_us`) and says so in the run's notes, which
//! `tunelab eval` prints and the app's report lists. Set 3's normal-mode rows fall from 146 to
//! 57 GB/s (dispatch) between EP8 and EP128 at the same bytes per rank.
//! Run: cargo test -p tunelab-scenario --test operator_peer_wait

mod common;

use common::baseline_and_notes as price;
use serde_json::json;
use tunelab_scenario::Scenario;

fn exchange(phase: &str, form: &str, ranks: u64) -> Scenario {
    let link = if ranks > 16 { "super_pod" } else { "hccs" };
    let dtype = if phase == "dispatch" { "int8" } else { "bf16" };
    Scenario::from_value(json!({
        "name": "deepep", "stage": "operator", "device": "910C", "budget": 4,
        "model": {"format": "tunelab-graph", "name": "g", "family": "custom", "dtype": dtype, "ops": [
            {"name": format!("moe_{phase}"), "op": {"op": "moe_comm", "phase": phase, "form": form, "tokens": 4096, "hidden": 7168, "top_k": 8, "ranks": ranks, "dtype": dtype, "link": link}}]},
        "operator": {"phase": "both", "tiling": true, "fusion": false, "epilogue_fusion": false, "loop_unroll": false, "memory_reuse": false},
        "workload": {"batch": 1},
    }))
    .unwrap()
}


#[test]
fn a_normal_dispatch_waits_for_its_peers_and_the_run_says_so() {
    let (t8, n8) = price(&exchange("dispatch", "deepep_normal", 8));
    let (t128, n128) = price(&exchange("dispatch", "deepep_normal", 128));
    // Same bytes per rank: the benchmark's rate is the rows' BF16 bytes over the time.
    let rate = |ms: f64| 4096.0 * 8.0 * 7168.0 * 2.0 / (ms * 1.0e6);
    eprintln!("normal dispatch EP8 {:.0} GB/s, EP128 {:.0} GB/s (measured 146, 57)", rate(t8), rate(t128));
    assert!(rate(t128) < 0.7 * rate(t8), "EP128 {:.0} vs EP8 {:.0} GB/s", rate(t128), rate(t8));
    let line = n128.iter().find(|n| n.contains("waits for its latest peer")).unwrap_or_else(|| panic!("no peer-wait note: {n128:?}"));
    assert!(line.contains("EP128") && line.contains("127 peers") && line.contains("moe_dispatch"), "{line}");
    assert!(n8.iter().any(|n| n.contains("7 peers")), "{n8:?}");
}

#[test]
fn the_low_latency_mode_carries_no_peer_wait_and_its_dispatch_names_its_window_copy() {
    let (_, notes) = price(&exchange("combine", "deepep_low_latency", 32));
    assert!(!notes.iter().any(|n| n.contains("latest peer") || n.contains("window")), "{notes:?}");
    let (_, notes) = price(&exchange("dispatch", "deepep_low_latency", 16));
    let line = notes.iter().find(|n| n.contains("from its window")).unwrap_or_else(|| panic!("no window-copy note: {notes:?}"));
    assert!(line.contains("32768 rows") && line.contains("deepep_low_latency"), "{line}");
}

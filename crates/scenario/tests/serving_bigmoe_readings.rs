//! Issue 43, sixth pass: set 3's big-MoE serving rows read from their sources' own consistent
//! figures (scripts/convert_set3_serving.py writes assets/measurements/ascend-set3.json; each
//! row's conversion_note names the reading and the one it replaced). Each test prices the row as
//! `tunelab fidelity` does (`evidence::fidelity::evaluate`) and then the reading it replaced,
//! which the source's figures refute.

use std::collections::BTreeMap;
use tunelab_scenario::evidence::fidelity::{evaluate, rows::MeasurementSet};

const SET3: &str = include_str!("../../../assets/measurements/ascend-set3.json");

/// The set-3 row `id` alone, after `edit`.
fn row(id: &str, edit: impl Fn(&mut serde_json::Value)) -> MeasurementSet {
    let mut v: serde_json::Value = serde_json::from_str(SET3).unwrap();
    let mut r = v["rows"].as_array().unwrap().iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("no row {id}")).clone();
    edit(&mut r);
    v["rows"] = serde_json::json!([r]);
    MeasurementSet::from_json(&v.to_string()).unwrap_or_else(|e| panic!("{e}"))
}

/// (measured, predicted) of each compared metric.
fn priced(set: &MeasurementSet) -> BTreeMap<String, (f64, f64)> {
    // Listed-only values (a peak, a total rate) come back as unexpressed with their reason; a
    // metric the row compares and the stage cannot price is missing below and fails `err`.
    let r = evaluate(set, &BTreeMap::new(), None);
    r.rows.iter().map(|c| (c.metric.clone(), (c.measured, c.predicted))).collect()
}

fn err(m: &BTreeMap<String, (f64, f64)>, k: &str) -> f64 {
    let (meas, pred) = m.get(k).unwrap_or_else(|| panic!("no {k} in {m:?}"));
    pred / meas - 1.0
}

#[test]
fn kimi_k26_is_read_as_four_requests_in_flight_which_its_figures_give() {
    const ID: &str = "srv-vllm-kimi-k2.6-w4a16-16x910b-c64";
    // The figures as published agree only with ~4 in flight: 46.58 x (0.691 + 127 x 0.083) / 128.
    let in_flight = 46.58 * (0.691 + 127.0 * 0.083) / 128.0;
    assert!((3.5..4.5).contains(&in_flight), "{in_flight}");
    let as_read = priced(&row(ID, |_| {}));
    let (tps, tpot, ttft) = (err(&as_read, "output_tps"), err(&as_read, "mean_TPOT"), err(&as_read, "mean_TTFT"));
    eprintln!("Kimi-K2.6 c64 as a closed loop of 4: output {:+.0}%, TPOT {:+.0}%, TTFT {:+.0}%", tps * 100.0, tpot * 100.0, ttft * 100.0);
    for (what, e) in [("output rate", tps), ("TPOT", tpot), ("TTFT", ttft)] {
        assert!(e.abs() < 0.35, "{what} {:+.0}% as read", e * 100.0);
    }
    // The replaced reading, 64 requests in flight at once: several times the stated output rate.
    let sixty_four = priced(&row(ID, |r| {
        r["scenario"]["deployment"]["serving"] = serde_json::json!({"mode": "scheduler", "engine": "vllm-ascend", "arrival": "burst",
            "max_concurrency": 64, "requests": 64, "length_distribution": "fixed", "block_size": 128});
    }));
    let e64 = err(&sixty_four, "output_tps");
    eprintln!("the same row at 64 in flight: output {:+.0}%", e64 * 100.0);
    assert!(e64 > 2.0, "64 in flight predicts {:+.0}% of the stated output rate: the reading it replaced should not hold", e64 * 100.0);
}

#[test]
fn minimax_a3_is_read_as_the_docs_a3_launch() {
    const ID: &str = "srv-vllm-minimax-m2.5-a3-3.5k1k-bs217";
    let as_read = priced(&row(ID, |_| {}));
    let (tps, tpot) = (err(&as_read, "output_tps"), err(&as_read, "mean_TPOT"));
    eprintln!("MiniMax-M2.5 A3 bs217 as TP4 x DP4 + EAGLE-3: output {:+.0}%, TPOT {:+.0}%", tps * 100.0, tpot * 100.0);
    assert!(tps.abs() < 0.3, "output rate {:+.0}%", tps * 100.0);
    assert!(tpot.abs() < 0.4, "TPOT {:+.0}%", tpot * 100.0);
    // The replaced reading (the section header's TP16, bf16, no speculation, vLLM's 256
    // sequences and 2048 tokens per step): decode far slower than measured.
    let header = priced(&row(ID, |r| {
        let d = &mut r["scenario"]["deployment"];
        d["cluster"] = serde_json::json!({"nodes": 1});
        d["precisions"] = serde_json::json!(["bf16"]);
        d["serving"] = serde_json::json!({"mode": "scheduler", "engine": "vllm-ascend", "arrival": "burst", "max_concurrency": 217, "requests": 217,
            "length_distribution": "fixed", "block_size": 128});
        r["scenario"]["space"] = serde_json::json!({"batch": {"fixed": 256}, "precision": {"fixed": "bf16"}, "tp": {"fixed": 16}, "dp": {"fixed": 1},
            "launch": {"fixed": "graph"}, "max_num_batched_tokens": {"fixed": 2048}, "chunked_prefill": {"fixed": "on"}, "expert_parallel": {"fixed": "on"}});
        r["scenario"]["workload"]["batch"] = serde_json::json!(256);
    }));
    let old = err(&header, "mean_TPOT");
    eprintln!("the header's TP16 bf16 reading: TPOT {:+.0}%", old * 100.0);
    assert!(old > 0.8, "TP16 bf16 without speculation prices TPOT {:+.0}%", old * 100.0);
}

#[test]
fn deepseek_v31_2p1d_counts_a_card_as_the_910c_package() {
    const ID: &str = "srv-vllm-deepseek-v3.1-a3-2p1d-3.5k1.5k";
    let set = row(ID, |_| {});
    let v = set.rows[0].values.iter().find(|v| v.metric == "output_tps_per_card").unwrap();
    assert_eq!(v.copies, Some(2), "a card is two 910C dies: the per-die prediction doubled");
    // Per die over all 64 dies, 478 tok/s at 48.82 ms TPOT needs more sequences in flight than
    // the decode side's 32 DP ranks x 28 slots hold; per card (32 packages) it fits.
    let slots = 32.0 * 28.0;
    let in_flight = |cards: f64| 478.0 * cards * 48.82e-3;
    assert!(in_flight(64.0) > slots && in_flight(32.0) < slots, "{} / {} against {slots}", in_flight(64.0), in_flight(32.0));
}

//! Time to first token under a burst (issue 43): where it goes, and SGLang's hand-off.
//! - The TTFT split (front end, queueing, prefill, host, hand-off) adds up to the mean TTFT the
//!   stage reports, and reaches the Explore detail (`tunelab eval`, the app) and the diagnosis.
//! - SGLang's overlap loop hands the first tokens of a prefill batch out only when the launch
//!   of the next step returns (serving-host.json `results_after_next_launch`): a burst of five
//!   prefill batches gets its median first token with the fourth batch's successor, 4/5 of the
//!   way to the last, as the source's 120 x 2000-token run measures (18.16 / 22.68 s = 0.80);
//!   at each batch's own end it would be 3/5. vLLM-Ascend hands tokens out as steps end.

use tunelab_scenario::scenario::Scenario;
use tunelab_scenario::scheduler::ServingStats;

/// A burst of 10 prompts of 2000 tokens whose prefill budget holds two at a time (five prefill
/// batches, chunked prefill off), on `engine`.
fn burst(engine: &str) -> Scenario {
    let text = format!(
        r#"{{"stage": "deployment", "model": "qwen2.5-7b", "device": "910B2", "seed": 1, "budget": 1,
        "workload": {{"batch": 16, "input_len": 2000, "output_len": 16}},
        "deployment": {{"tile_operators": false, "serving": {{"mode": "scheduler", "engine": "{engine}", "arrival": "burst", "requests": 10, "length_distribution": "fixed"}}}},
        "space": {{"batch": {{"fixed": 16}}, "tp": {{"fixed": 1}}, "precision": {{"fixed": "bf16"}}, "launch": {{"fixed": "graph"}},
                  "chunked_prefill": {{"fixed": "off"}}, "max_num_batched_tokens": {{"fixed": 4000}}}}}}"#
    );
    Scenario::from_json(&text).unwrap_or_else(|e| panic!("{e}"))
}

fn served(s: &Scenario) -> (ServingStats, Vec<String>, tunelab_search::Config) {
    let st = tunelab_scenario::setup(s).unwrap();
    let names = st.space.names().to_vec();
    let c = st.baseline.clone();
    (tunelab_scenario::stages::deployment::serve(s, &names, &c).unwrap_or_else(|e| panic!("{e}")), names, c)
}

#[test]
fn the_split_adds_up_to_the_mean_ttft() {
    for engine in ["sglang", "vllm-ascend", "mindie", "generic"] {
        let (st, _, _) = served(&burst(engine));
        let t = st.ttft_split;
        assert_eq!(t.requests, 10, "{engine}");
        let sum = t.frontend_ms + t.queue_ms + t.prefill_ms + t.handoff_ms;
        assert!((sum - st.ttft_ms.mean).abs() <= 1e-6 * st.ttft_ms.mean, "{engine}: parts {sum} ms, mean TTFT {} ms", st.ttft_ms.mean);
        assert!(t.host_ms >= 0.0 && t.host_ms <= t.prefill_ms, "{engine}: {t:?}");
        // A burst of five prefill batches waits mostly behind the other prompts' batches.
        assert!(t.queue_ms > t.prefill_ms - t.host_ms, "{engine}: {t:?}");
    }
}

#[test]
fn sglang_hands_a_prefill_batch_first_tokens_out_with_the_next_batch() {
    let (sg, _, _) = served(&burst("sglang"));
    let (vl, _, _) = served(&burst("vllm-ascend"));
    assert!(sg.ttft_split.handoff_ms > 0.0, "{:?}", sg.ttft_split);
    assert_eq!(vl.ttft_split.handoff_ms, 0.0, "{:?}", vl.ttft_split);
    // Five batches: first tokens at the ends of batches 2, 3, 4, 5, 5 (SGLang) against 1..5.
    let r = sg.ttft_ms.p50 / sg.ttft_ms.p99;
    assert!((0.74..0.86).contains(&r), "SGLang median / p99 TTFT {r} (source's 0.80)");
    let r = vl.ttft_ms.p50 / vl.ttft_ms.p99;
    assert!(r < 0.7, "vLLM-Ascend median / p99 TTFT {r}: each batch's tokens go out at its end");
    // The hand-off does not move the decode: TPOT within a step's rounding.
    assert!(sg.tpot_ms.p50 > 0.0);
}

#[test]
fn the_split_reaches_the_detail_and_the_diagnosis() {
    let s = burst("sglang");
    let (_, _, c) = served(&s);
    let d = tunelab_scenario::explore::point_detail(&s, &c).unwrap();
    for part in ["time to first token", "front end", "queueing", "prefill", "host", "hand-off"] {
        assert!(d.ttft.iter().any(|l| l.starts_with(part)), "no '{part}' line in {:?}", d.ttft);
    }
    let diag = tunelab_scenario::diagnosis::diagnose(&s, None, tunelab_scenario::diagnosis::Weights::default()).unwrap();
    assert!(diag.cause_chain.iter().any(|l| l.starts_with("queueing dominates time to first token")), "{:?}", diag.cause_chain);
    // A lone request does not queue: no such sentence, and the split still adds up.
    let mut one = s.clone();
    one.deployment.serving.requests = 1;
    let diag = tunelab_scenario::diagnosis::diagnose(&one, None, tunelab_scenario::diagnosis::Weights::default()).unwrap();
    assert!(!diag.cause_chain.iter().any(|l| l.contains("queueing dominates")), "{:?}", diag.cause_chain);
}

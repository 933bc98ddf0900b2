//! Decode context parallel on the prefill instances (issue 42, "DCP in the prefill instance"):
//! vLLM-Ascend's 1M-context PD layout runs its prefill instance at TP8 with
//! `--decode-context-parallel-size 8` (GLM5.2.md, "1M Context Deployment"). DeepSeek-V3 on two
//! A3 nodes, 1P1D with TP8 prefill and decode sides (decode with DCP8): DCP8 keeps an eighth of a prompt's cache per prefill
//! rank; a chunk after the first gathers the earlier context's shards, a small price beside
//! attention.

use tunelab_scenario::bundled::bundled_scenario;
use tunelab_scenario::stages::setup;
use tunelab_scenario::Scenario;
use tunelab_search::Value;

mod common;

fn scenario(input: i64, dcp: &[i64]) -> Scenario {
    let mut s = bundled_scenario("deepseek-v3-2xA3-deployment").unwrap();
    s.constraints = Default::default();
    s.objectives = vec![tunelab_scenario::spec::scenario::ObjectiveSpec { metric: "ttft_ms".into(), priority: 1.0, direction: None }];
    s.deployment.serving.arrival = "burst".into();
    s.deployment.serving.requests = 1;
    s.deployment.serving.length_distribution = "fixed".into();
    s.deployment.serving.max_num_batched_tokens = vec![16384];
    s.deployment.serving.speculative = None;
    s.workload.input_len = input;
    s.workload.output_len = 2;
    let c = s.deployment.cluster.as_mut().unwrap();
    c.disaggregation = vec!["1P1D".into()];
    c.prefill_tp = vec![8];
    c.prefill_dcp = dcp.to_vec();
    // The decode side holds long contexts with its own DCP (tp 8, dcp 8).
    c.decode_cp = vec![8];
    s
}

fn i(x: i64) -> Value {
    Value::Int(x)
}

fn set(dcp: i64) -> Vec<(&'static str, Value)> {
    vec![("pd", Value::Str("1P1D".into())), ("tp", i(8)), ("dp", i(2)), ("decode_cp", i(8)), ("expert_parallel", Value::Str("on".into())), ("prefill_tp", i(8)), ("prefill_dcp", i(dcp)), ("batch", i(8)), ("precision", Value::Str("w8a8".into()))]
}

#[test]
fn dcp8_shards_a_long_prompt_s_cache_on_the_prefill_rank_at_a_small_price() {
    // With DCP the prefill rank holds the longest prompt's cache sharded eight ways: a 512K
    // prompt is served on TP8 ranks.
    let fits = common::serve_with(&scenario(524288, &[1, 8]), &set(8)).unwrap_or_else(|e| panic!("512K with prefill_dcp 8: {e}"));
    eprintln!("DeepSeek-V3, 512K-token prompt, TP8 prefill with DCP8: TTFT {:.1} s", fits.ttft_ms.p50 / 1e3);
    // A 64K prompt in one prefill step: the chunk's own keys and values are local, nothing is
    // gathered, the TTFT is the same.
    let a = common::serve_with(&scenario(65536, &[1, 8]), &set(1)).unwrap().ttft_ms.p50;
    let b = common::serve_with(&scenario(65536, &[1, 8]), &set(8)).unwrap().ttft_ms.p50;
    assert!((a - b).abs() < 1e-6 * a, "{a} vs {b}");
    // Cut into 16K chunks through a two-stage pipelined prefill (static chunks), every chunk
    // after the first gathers the earlier context's shards at every layer: DCP costs more, a
    // fraction of the prefill, not a multiple.
    let mut piped = scenario(65536, &[1, 8]);
    let c = piped.deployment.cluster.as_mut().unwrap();
    c.prefill_pp = vec![2];
    c.prefill_chunking = vec!["static".into()];
    let at = |d: i64| {
        let mut v = set(d);
        v.extend([("prefill_pp", i(2)), ("prefill_chunking", Value::Str("static".into()))]);
        common::serve_with(&piped, &v).unwrap_or_else(|e| panic!("{e}")).ttft_ms.p50
    };
    let (c1, c8) = (at(1), at(8));
    eprintln!("64K-token prompt in 16K chunks over a TP8 x PP2 prefill: TTFT {c1:.0} ms without DCP, {c8:.0} ms with DCP8 (one step: {a:.0} ms)");
    assert!(c8 > c1 && c8 < c1 * 1.5, "{c8} vs {c1}");
}

#[test]
fn prefill_dcp_is_refused_by_name_where_it_cannot_run() {
    // Co-located: the field names itself.
    let mut s = scenario(4096, &[2]);
    s.deployment.cluster.as_mut().unwrap().disaggregation = vec!["colocated".into()];
    assert!(setup(&s).err().unwrap_or_default().contains("deployment.cluster.prefill_dcp"));
    let e = setup(&scenario(4096, &[0])).err().unwrap_or_default();
    assert!(e.contains("deployment.cluster.prefill_dcp"), "{e}");
    // A size that does not divide the prefill TP (MLA: tp % dcp == 0).
    let e = common::serve_with(&scenario(4096, &[3]), &set(3)).unwrap_err();
    assert!(e.contains("prefill side") && e.contains("context parallel 3"), "{e}");
    // Old scenarios carry no such key and the stage has no such parameter.
    let old = scenario(4096, &[]);
    assert!(!old.to_json().contains("prefill_dcp"));
    assert!(!setup(&old).unwrap().space.names().iter().any(|n| n == "prefill_dcp"));
}

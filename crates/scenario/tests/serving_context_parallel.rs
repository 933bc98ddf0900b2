//! Context parallelism in serving (issue 42, item 1): prefill context parallel on the prefill
//! instances of a PD layout (vLLM `--prefill-context-parallel-size`) cuts a long prompt's TTFT
//! by splitting its tokens over more chips; decode context parallel (vLLM
//! `--decode-context-parallel-size`) shards the KV cache over the TP group, so a decode step
//! reads less of it per chip and a rank holds more tokens.

use tunelab_scenario::bundled::bundled_scenario;
use tunelab_scenario::stages::scheduler::ServingStats;
use tunelab_scenario::stages::setup;
use tunelab_scenario::Scenario;
use tunelab_search::Value;

mod common;

/// Qwen3-235B-A22B on two Atlas 800 A3 nodes (32 dies), one long prompt.
fn long(input: u64, output: u64) -> Scenario {
    let mut s = bundled_scenario("qwen3-235b-2xA3-pd-compare").unwrap();
    s.constraints = Default::default();
    s.deployment.serving.arrival = "burst".into();
    s.deployment.serving.requests = 1;
    s.deployment.serving.length_distribution = "fixed".into();
    s.deployment.serving.max_num_batched_tokens = vec![16384];
    s.workload.input_len = input as i64;
    s.workload.output_len = output as i64;
    let c = s.deployment.cluster.as_mut().unwrap();
    c.disaggregation = vec!["1P1D".into()];
    s
}

fn run(s: &Scenario, set: &[(&str, Value)]) -> Result<ServingStats, String> {
    common::serve_with(s, set)
}

fn i(x: i64) -> Value {
    Value::Int(x)
}

fn st(x: &str) -> Value {
    Value::Str(x.into())
}

#[test]
fn a_128k_prompt_prefills_several_times_faster_over_four_context_parallel_ranks() {
    // Decode: tp 4 x dp 4 (16 dies); prefill: the other 16 dies as tp 4 x pcp 4, or tp 4 with no
    // PCP (four ranks, of which the one prompt uses one).
    let mut s = long(131072, 2);
    let c = s.deployment.cluster.as_mut().unwrap();
    c.prefill_tp = vec![4];
    c.prefill_cp = vec![4, 2, 1];
    let at = |pcp: i64| {
        let r = run(&s, &[("pd", st("1P1D")), ("tp", i(4)), ("dp", i(4)), ("prefill_tp", i(4)), ("prefill_cp", i(pcp)), ("batch", i(8))]);
        r.unwrap_or_else(|e| panic!("pcp {pcp}: {e}")).ttft_ms.p50
    };
    let (one, two, four) = (at(1), at(2), at(4));
    eprintln!("128K prompt TTFT on tp4 prefill: pcp1 {one:.0} ms, pcp2 {two:.0} ms, pcp4 {four:.0} ms");
    // Attention is quadratic and dominates at 128K: four ranks take about a quarter of it each,
    // less the all-gather of the keys and values at every layer.
    assert!(two < one * 0.65, "pcp2 {two} ms vs pcp1 {one} ms");
    assert!(four < one * 0.4 && four > one * 0.2, "pcp4 {four} ms vs pcp1 {one} ms: expected 2.5-5x faster");
    // A layout whose prefill share does not split into tp x pcp groups says so.
    let mut odd = s.clone();
    odd.deployment.cluster.as_mut().unwrap().prefill_cp = vec![3];
    let e = run(&odd, &[("pd", st("1P1D")), ("tp", i(4)), ("dp", i(4)), ("prefill_tp", i(4)), ("prefill_cp", i(3))]).unwrap_err();
    assert!(e.contains("prefill_cp"), "{e}");
}

#[test]
fn prefill_context_parallel_without_a_pd_layout_is_refused_by_name() {
    let mut s = long(4096, 2);
    let c = s.deployment.cluster.as_mut().unwrap();
    c.disaggregation = vec!["colocated".into()];
    c.prefill_cp = vec![2];
    assert!(setup(&s).err().unwrap_or_default().contains("deployment.cluster.prefill_cp"));
    let mut big = long(4096, 2);
    big.deployment.cluster.as_mut().unwrap().decode_cp = vec![0];
    assert!(setup(&big).err().unwrap_or_default().contains("deployment.cluster.decode_cp"));
    // An old scenario serialises without the new fields.
    assert!(!long(4096, 2).to_json().contains("_cp"));
}

#[test]
fn decode_context_parallel_holds_twice_the_cache_and_costs_a_little_at_batch_one() {
    // Decode tp 8 x dp 2 (Qwen3-235B has 4 KV heads: two copies of each over tp 8, so dcp 2 fits).
    let mut s = long(32768, 64);
    let c = s.deployment.cluster.as_mut().unwrap();
    c.prefill_tp = vec![8];
    c.decode_cp = vec![1, 2];
    let set = |dcp: i64, tp: i64, dp: i64, batch: i64| vec![("pd", st("1P1D")), ("tp", i(tp)), ("dp", i(dp)), ("prefill_tp", i(8)), ("decode_cp", i(dcp)), ("batch", i(batch))];
    // One request: the shard halves the cache read, but three collectives per layer cost more
    // (vLLM-Ascend's tutorial keeps DCP off its decode node for that reason).
    let (one, two) = (run(&s, &set(1, 8, 2, 8)).unwrap(), run(&s, &set(2, 8, 2, 8)).unwrap());
    eprintln!("one 32K request, decode tp8: dcp1 TPOT {:.2} ms, dcp2 {:.2} ms", one.tpot_ms.p50, two.tpot_ms.p50);
    assert!(two.tpot_ms.p50 > one.tpot_ms.p50 && two.tpot_ms.p50 < one.tpot_ms.p50 * 1.5, "dcp2 {} vs dcp1 {}", two.tpot_ms.p50, one.tpot_ms.p50);
    // The prompt's prefill is the same (DCP is the decode side's); each decode chip receives
    // only its shard of the pushed cache, so the first token comes no later.
    assert!(two.ttft_ms.p50 <= one.ttft_ms.p50 && two.ttft_ms.p50 > one.ttft_ms.p50 * 0.9, "TTFT dcp2 {} vs dcp1 {}", two.ttft_ms.p50, one.ttft_ms.p50);
    // Many long requests at max_num_seqs 32: the cache, not the batch limit, bounds a rank
    // without DCP; sharded, a rank holds twice the tokens and runs more sequences at once.
    s.deployment.serving.requests = 48;
    (s.workload.input_len, s.workload.output_len) = (65536, 4096);
    let (one, two) = (run(&s, &set(1, 8, 2, 32)).unwrap(), run(&s, &set(2, 8, 2, 32)).unwrap());
    eprintln!("48 requests of 64K in, 4K out, decode tp8 batch 32: dcp1 {:.0} tok/s (mean batch {:.1}), dcp2 {:.0} tok/s (mean batch {:.1})", one.output_tokens_per_s, one.mean_batch, two.output_tokens_per_s, two.mean_batch);
    assert!(two.mean_batch > one.mean_batch * 1.3, "dcp2 batch {} vs dcp1 {}", two.mean_batch, one.mean_batch);
    assert!(two.output_tokens_per_s > one.output_tokens_per_s, "dcp2 {} tok/s vs dcp1 {}", two.output_tokens_per_s, one.output_tokens_per_s);
    // tp 4 holds one copy of each KV head: nothing to shard.
    let e = run(&s, &set(2, 4, 4, 8)).unwrap_err();
    assert!(e.contains("decode context parallel") && e.contains("kv_heads"), "{e}");
}

#[test]
fn the_launch_export_carries_the_context_and_pipeline_parallel_flags() {
    let cmd = |s: &Scenario, set: &[(&str, Value)]| -> String {
        let best: std::collections::BTreeMap<String, Value> = set.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        let e = tunelab_scenario::analyses::report_export::export_for(s, &best);
        e.launch.nodes.iter().map(|n| n.command.join(" ")).collect::<Vec<_>>().join("\n")
    };
    // 1P1D: PCP on the prefill instance, DCP (with the KV transfer's interleave) on decode.
    let mut s = long(4096, 2);
    s.deployment.cluster.as_mut().unwrap().prefill_cp = vec![4];
    s.deployment.cluster.as_mut().unwrap().decode_cp = vec![2];
    let pd = cmd(&s, &[("pd", st("1P1D")), ("tp", i(8)), ("dp", i(2)), ("prefill_tp", i(4)), ("prefill_cp", i(4)), ("decode_cp", i(2))]);
    let prefill = pd.lines().find(|l| l.contains("kv_producer")).unwrap_or_default();
    let decode = pd.lines().find(|l| l.contains("kv_consumer")).unwrap_or_default();
    assert!(prefill.contains("--prefill-context-parallel-size 4") && !prefill.contains("--decode-context-parallel-size"), "{pd}");
    assert!(decode.contains("--decode-context-parallel-size 2 --cp-kv-cache-interleave-size 128") && !decode.contains("--prefill-context"), "{pd}");
    // Co-located pipeline stages.
    let mut c = long(4096, 2);
    c.deployment.cluster.as_mut().unwrap().disaggregation = vec!["colocated".into()];
    c.deployment.cluster.as_mut().unwrap().pipeline_parallel = vec![2];
    let co = cmd(&c, &[("tp", i(16)), ("dp", i(1)), ("pp", i(2))]);
    assert!(co.contains("--pipeline-parallel-size 2"), "{co}");
    // Without the options no such flag appears.
    let plain = cmd(&long(4096, 2), &[("pd", st("1P1D")), ("tp", i(8)), ("dp", i(2)), ("prefill_tp", i(8))]);
    assert!(!plain.contains("context-parallel") && !plain.contains("pipeline-parallel"), "{plain}");
}

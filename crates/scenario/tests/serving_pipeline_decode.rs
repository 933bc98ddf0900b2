//! Pipeline parallelism for co-located serving (issue 42, item 1): a rank of tp x pp chips over
//! two Atlas 800 A2 nodes, its layers in two stages, the running sequences as micro-batches.
//! One sequence cannot fill two stages (the bubble: no faster than one rank of tp chips, plus
//! the transfer between the nodes); a full batch keeps both stages busy and serves about as
//! much as two data-parallel ranks on the same chips.

use tunelab_scenario::bundled::bundled_scenario;
use tunelab_scenario::spec::cluster::ClusterOptions;
use tunelab_scenario::stages::scheduler::ServingStats;
use tunelab_scenario::stages::setup;
use tunelab_scenario::Scenario;
use tunelab_search::Value;

mod common;

/// Llama-2-7B on 2 Atlas 800 A2 nodes (16 chips), tp 8, pp 1 or 2.
fn two_nodes() -> Scenario {
    let mut s = bundled_scenario("llama2-7b-910B2-deployment").unwrap();
    s.constraints = Default::default();
    s.deployment.tensor_parallel = vec![8];
    s.deployment.cluster = Some(ClusterOptions { nodes: 2, pipeline_parallel: vec![2, 1], ..Default::default() });
    s.workload.input_len = 512;
    s.workload.output_len = 128;
    s.deployment.serving.length_distribution = "fixed".into();
    s
}

fn run(s: &Scenario, set: &[(&str, Value)]) -> Result<ServingStats, String> {
    common::serve_with(s, set)
}

fn layout(pp: i64, batch: i64) -> Vec<(&'static str, Value)> {
    vec![("tp", Value::Int(8)), ("pp", Value::Int(pp)), ("dp", Value::Int(2 / pp)), ("batch", Value::Int(batch))]
}

#[test]
fn one_sequence_pays_the_pipeline_bubble_and_a_full_batch_fills_the_stages() {
    let mut one = two_nodes();
    one.deployment.serving.arrival = "burst".into();
    one.deployment.serving.requests = 1;
    let (dp2, pp2) = (run(&one, &layout(1, 8)).unwrap(), run(&one, &layout(2, 8)).unwrap());
    eprintln!("one request: TPOT tp8 x dp2 {:.2} ms, tp8 x pp2 {:.2} ms", dp2.tpot_ms.p50, pp2.tpot_ms.p50);
    // Each token crosses both stages in turn and the activations cross the nodes: no faster.
    assert!(pp2.tpot_ms.p50 >= dp2.tpot_ms.p50 && pp2.tpot_ms.p50 < dp2.tpot_ms.p50 * 1.5, "pp2 {} vs dp2 {}", pp2.tpot_ms.p50, dp2.tpot_ms.p50);
    // 64 clients, as many running sequences on the 16 chips either way (max_num_seqs 32 on
    // each of two DP ranks, or 64 on the one pipelined rank, vLLM V1's one scheduler): two
    // micro-batches of 32 keep both stages busy.
    let mut busy = two_nodes();
    busy.deployment.serving.arrival = "closed".into();
    busy.deployment.serving.concurrency = Some(64);
    busy.deployment.serving.requests = 256;
    let (dp2, pp2) = (run(&busy, &layout(1, 32)).unwrap(), run(&busy, &layout(2, 64)).unwrap());
    eprintln!("64 clients: tp8 x dp2 {:.0} tok/s, tp8 x pp2 {:.0} tok/s", dp2.output_tokens_per_s, pp2.output_tokens_per_s);
    assert!(pp2.output_tokens_per_s > 0.8 * dp2.output_tokens_per_s, "pp2 {} tok/s vs dp2 {}", pp2.output_tokens_per_s, dp2.output_tokens_per_s);
    // A layout that does not fill the chips says so; a PD layout refuses pipeline_parallel.
    let e = run(&busy, &[("tp", Value::Int(8)), ("pp", Value::Int(2)), ("dp", Value::Int(2))]).unwrap_err();
    assert!(e.contains("tp x dp x pp"), "{e}");
    let mut pd = two_nodes();
    pd.deployment.cluster.as_mut().unwrap().disaggregation = vec!["1P1D".into()];
    assert!(setup(&pd).err().unwrap_or_default().contains("deployment.cluster.pipeline_parallel"));
    // An old scenario serialises without the field.
    assert!(!bundled_scenario("llama2-7b-910B2-deployment").unwrap().to_json().contains("pipeline_parallel"));
}

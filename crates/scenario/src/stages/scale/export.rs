//! The vLLM-Ascend arguments of a large-scale deployment (data parallelism over nodes, EPLB,
//! prefill-decode disaggregation), each flag from vLLM's documentation:
//! - `--data-parallel-size`, `--data-parallel-size-local`, `--data-parallel-address`,
//!   `--data-parallel-rpc-port`, `--data-parallel-start-rank`, `--headless`: vLLM docs,
//!   serving/data_parallel_deployment.md ("--max-num-seqs applies per DP rank");
//! - EPLB: as the target release launches it (`stages::scale::flags`, the list's `eplb`
//!   feature: vLLM-Ascend 0.11 and 0.23 run their own dynamic EPLB through `--additional-config`
//!   and `DYNAMIC_EPLB=true`);
//! - `--kv-transfer-config` with vLLM-Ascend's `MooncakeConnector` (the decode side pulls the
//!   KV cache): vLLM-Ascend docs, developer_guide disaggregated_prefill.

use crate::scenario::Scenario;
use tunelab_search::Value;
use std::collections::BTreeMap;

/// The flags this module writes (for the report's documented-flags list).
pub const FLAGS: &[&str] = &["--data-parallel-size", "--data-parallel-size-local", "--data-parallel-address", "--data-parallel-rpc-port", "--data-parallel-start-rank", "--headless", "--additional-config", "--kv-transfer-config"];

/// Extra `vllm serve` arguments (JSON values single-quoted for the shell, as the report joins
/// them into one command line) (for the head node, or the decode instance when disaggregated)
/// and notes on what runs where.
pub fn vllm_args(s: &Scenario, best: &BTreeMap<String, Value>) -> (Vec<String>, Vec<String>) {
    let (mut args, mut notes) = (Vec::new(), Vec::new());
    let Some(c) = &s.deployment.cluster else { return (args, notes) };
    let int = |k: &str, d: i64| best.get(k).and_then(Value::as_i64).unwrap_or(d);
    let (tp, dp) = (int("tp", 1).max(1), int("dp", 1).max(1));
    let node_chips = crate::context::resolve(s).map(|(_, d, _)| d.node_chips.max(1) as i64).unwrap_or(8);
    let pd = best.get("pd").and_then(Value::as_str).and_then(|l| crate::spec::cluster::parse_layout(l).ok().flatten());
    if dp > 1 {
        let local = (node_chips / tp).clamp(1, dp);
        args.extend(["--data-parallel-size".into(), dp.to_string()]);
        if dp > local {
            args.extend(["--data-parallel-size-local".into(), local.to_string(), "--data-parallel-address".into(), "HEAD_NODE_IP".into(), "--data-parallel-rpc-port".into(), "13345".into()]);
            let nodes = (dp + local - 1) / local;
            for n in 1..nodes {
                notes.push(format!(
                    "vLLM-Ascend node {n} of {nodes}: the same command with --headless --data-parallel-start-rank {} (DP ranks {}..{} of {dp}, {local} per node of {node_chips} chips)",
                    n * local,
                    n * local,
                    ((n + 1) * local).min(dp) - 1
                ));
            }
        }
    }
    // EPLB (`redundant_experts`) is launched as the target release does it, from its argument
    // list's `eplb` feature (`stages::scale::flags`; `analyses::report_export`).
    if let Some((x, y)) = pd {
        let ptp = int("prefill_tp", tp);
        args.extend(["--kv-transfer-config".into(), "'{\"kv_connector\":\"MooncakeConnector\",\"kv_role\":\"kv_consumer\"}'".into()]);
        notes.push(format!(
            "prefill-decode disaggregation {x}P{y}D on {} node(s): the command is a decode instance's (tp {tp} x dp {dp}); each of the {x} prefill instance(s) runs the same model with --tensor-parallel-size {ptp} and --kv-transfer-config '{{\"kv_connector\":\"MooncakeConnector\",\"kv_role\":\"kv_producer\"}}', behind a proxy that sends prompts to prefill and decoding to decode",
            c.nodes
        ));
    }
    (args, notes)
}

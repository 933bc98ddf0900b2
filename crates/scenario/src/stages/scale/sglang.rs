//! The SGLang launch of a tuned deployment, node by node: `python -m sglang.launch_server` with
//! the release's own flags only (`stages::scale::flags`, assets/engines/flags/sglang-*.json,
//! each flag's source there). The layout:
//! - tensor parallelism over `tp` chips per DP rank and `dp` ranks: with expert parallelism on a
//!   MoE model, SGLang's attention data parallelism (`--tp-size` tp x dp, `--attn-dp-size` dp,
//!   `--ep-size` tp x dp: the FFN/experts over the whole group, attention per rank, as vLLM's
//!   DP x TP with `--enable-expert-parallel`); otherwise `--dp-size` replicas of `--tp-size` tp;
//! - several nodes: `--nnodes`, `--node-rank`, `--dist-init-addr $NODE0_IP:5757` on each node
//!   (SGLang 0.5.23 fields/parallel.py Parallel.nnodes, node_rank, dist_init_addr);
//! - `--max-running-requests` is the server's whole limit (SGLang divides it over the
//!   attention-DP ranks: lora_manager.py `max_running_requests // attn_dp_size`), so it is the
//!   tuned batch per rank times the ranks.
//! What has no SGLang flag in the release, or is not mapped here (prefill-decode
//! disaggregation's proxy, an INT8 KV cache), is said in the notes and not written.

use super::flags;
use super::launch::{Launch, NodeLaunch};
use crate::spec::scenario::{ModelRef, Scenario};
use std::collections::BTreeMap;
use tunelab_search::Value;

/// The SGLang launch of `best` for release `version` (an empty launch with a note when no list
/// of the release is bundled).
pub fn launch(s: &Scenario, best: &BTreeMap<String, Value>, version: &str) -> Launch {
    let Some((list, exact)) = flags::for_release("sglang", version) else {
        return Launch { notes: vec![format!("SGLang {version}: no argument list is bundled (assets/engines/flags/), so no SGLang launch is written")], ..Default::default() };
    };
    let int = |k: &str, d: i64| best.get(k).and_then(Value::as_i64).unwrap_or(d).max(0) as u64;
    let text = |k: &str, d: &str| best.get(k).and_then(|v| v.as_str().map(String::from)).unwrap_or_else(|| d.to_string());
    let (tp, dp) = (int("tp", 1).max(1), int("dp", 1).max(1));
    let batch = int("batch", s.workload.batch.max(1) as i64).max(1);
    let mut notes = Vec::new();
    if !exact {
        notes.push(format!("SGLang {version}: no argument list of this release is bundled; written for {}", list.release));
    }
    let model = match &s.model {
        ModelRef::Id(id) if !id.trim_start().starts_with('{') => id.clone(),
        _ => "MODEL_PATH".into(),
    };
    let max_len = super::launch::longest_request(s);
    let ep_on = best.get("expert_parallel").and_then(Value::as_str) == Some("on");
    let kv = best.get("kv_cache_fraction").and_then(Value::as_f64).unwrap_or(0.9);
    let mut a: Vec<String> = vec!["python".into(), "-m".into(), "sglang.launch_server".into(), "--model-path".into(), model, "--device".into(), "npu".into(), "--attention-backend".into(), "ascend".into()];
    let mut push = |xs: &[&str]| a.extend(xs.iter().map(|x| x.to_string()));
    if ep_on && dp > 1 {
        let world = (tp * dp).to_string();
        push(&["--tp-size", &world, "--attn-dp-size", &dp.to_string(), "--ep-size", &world]);
    } else {
        push(&["--tp-size", &tp.to_string()]);
        if dp > 1 {
            push(&["--dp-size", &dp.to_string()]);
        }
        if ep_on {
            push(&["--ep-size", &tp.to_string()]);
        }
    }
    // DeepEP (deployment.serving.deepep_mode): SGLang's a2a backend for the experts' tokens.
    if let (Some(m), true) = (&s.deployment.serving.deepep_mode, ep_on) {
        push(&["--moe-a2a-backend", "deepep", "--deepep-mode", m]);
    }
    let running = (batch * if ep_on && dp > 1 { dp } else { 1 }).to_string();
    push(&["--max-running-requests", &running, "--context-length", &max_len.to_string(), "--mem-fraction-static", &format!("{kv}")]);
    if let Some(t) = best.get("max_num_batched_tokens").and_then(Value::as_i64) {
        let t = t.max(1).to_string();
        push(&["--chunked-prefill-size", &t, "--max-prefill-tokens", &t]);
    }
    match text("precision", "fp16").as_str() {
        "bf16" => push(&["--dtype", "bfloat16"]),
        "w8a8" | "w8a16" | "w4a16" | "w4a8" | "w4a4" => push(&["--dtype", "float16", "--quantization", "modelslim"]),
        _ => push(&["--dtype", "float16"]),
    }
    if text("launch", "graph") == "eager" {
        push(&["--cuda-graph-backend-decode", "disabled", "--cuda-graph-backend-prefill", "disabled"]);
    }
    let spec_k = int("num_speculative_tokens", 0);
    if let (Some(o), true) = (&s.deployment.serving.speculative, spec_k > 0) {
        let alg = match o.method.as_str() {
            "mtp" => "NEXTN",
            "eagle3" => "EAGLE3",
            _ => "EAGLE",
        };
        push(&["--speculative-algorithm", alg, "--speculative-num-steps", &spec_k.to_string(), "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", &(spec_k + 1).to_string()]);
        if o.method != "mtp" {
            push(&["--speculative-draft-model-path", "DRAFT_MODEL_PATH"]);
        }
    }
    let red = int("redundant_experts", 0);
    if red > 0 {
        match list.feature("eplb", red) {
            Some(f) => a.extend(f.args),
            None => notes.push(format!("EPLB: {} has no launch for it, so the command runs without redundant experts", list.release)),
        }
    }
    if s.deployment.serving.kv_cache_dtype == "int8" {
        notes.push(format!("INT8 KV cache: {}'s --kv-cache-dtype offers no int8, so the command keeps the model's KV type (the prediction assumed INT8)", list.release));
    }
    if s.deployment.serving.prefix_cache_hit_rate <= 0.0 {
        notes.push("SGLang's radix (prefix) cache is on by default; the simulated workload shares no prefixes, so it changes nothing".into());
    }
    if best.get("pd").and_then(Value::as_str).is_some_and(|p| p != "off" && p != "colocated") {
        notes.push("prefill-decode disaggregation: SGLang runs it with --disaggregation-mode prefill/decode and its router; this export writes the co-located command only (use the vLLM-Ascend launch for the disaggregated layout)".into());
    }
    let mut a = flags::keep_known(a, list, &mut notes);
    let node_chips = crate::stages::context::resolve(s).map(|(_, d, _)| d.node_chips.max(1) as u64).unwrap_or(8);
    let nodes = s.deployment.cluster.as_ref().map_or(1, |c| c.nodes.max(1)).min((tp * dp).div_ceil(node_chips).max(1));
    let mut out = Vec::new();
    if nodes <= 1 {
        out.push(NodeLaunch { node: 0, role: "serve".into(), env: Vec::new(), command: a });
    } else {
        a.extend(["--nnodes".into(), nodes.to_string(), "--dist-init-addr".into(), "$NODE0_IP:5757".into()]);
        for n in 0..nodes {
            let mut c = a.clone();
            c.extend(["--node-rank".into(), n.to_string()]);
            if n == 0 {
                c.extend(["--host".into(), "0.0.0.0".into(), "--port".into(), "30000".into()]);
            }
            out.push(NodeLaunch { node: n, role: if n == 0 { "serve".into() } else { format!("serve (node rank {n})") }, env: Vec::new(), command: c });
        }
        notes.push("placeholders: $NODE0_IP is node 0's address (the process group's rendezvous); clients talk to node 0 on port 30000".into());
    }
    notes.push(format!("written for {} (its arguments: assets/engines/flags/)", list.release));
    Launch { nodes: out, mindie_config: serde_json::Value::Null, mindie_rank_table: None, max_model_len: max_len, notes }
}

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
//! - prefill-decode disaggregation: prefill and decode servers and the router (`pd_launch`).
//! What has no SGLang flag in the release, or is not mapped here (an INT8 KV cache), is said
//! in the notes and not written.

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
    let head: Vec<String> = ["python", "-m", "sglang.launch_server", "--model-path", &model, "--device", "npu", "--attention-backend", "ascend"].iter().map(|x| x.to_string()).collect();
    // The parallel layout of one server of tp x dp chips, and its whole running-request limit.
    let parallel = |tp: u64, dp: u64| -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        let mut push = |xs: &[&str]| v.extend(xs.iter().map(|x| x.to_string()));
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
        v
    };
    let running = |dp: u64| vec!["--max-running-requests".to_string(), (batch * if ep_on && dp > 1 { dp } else { 1 }).to_string()];
    // DeepEP (deployment.serving.deepep_mode): SGLang's a2a backend for the experts' tokens.
    let deepep: Vec<String> = match (&s.deployment.serving.deepep_mode, ep_on) {
        (Some(m), true) => ["--moe-a2a-backend", "deepep", "--deepep-mode", m].iter().map(|x| x.to_string()).collect(),
        _ => Vec::new(),
    };
    // The flags every server shares after its running-request limit.
    let mut a: Vec<String> = Vec::new();
    let mut push = |xs: &[&str]| a.extend(xs.iter().map(|x| x.to_string()));
    push(&["--context-length", &max_len.to_string(), "--mem-fraction-static", &format!("{kv}")]);
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
    // One server's command: its head, parallel layout, the shared flags (DeepEP first, as the
    // co-located command always wrote them) and its running-request limit.
    let server = |tp: u64, dp: u64| -> Vec<String> { [head.clone(), parallel(tp, dp), deepep.clone(), running(dp), a.clone()].concat() };
    let node_chips = crate::stages::context::resolve(s).map(|(_, d, _)| d.node_chips.max(1) as u64).unwrap_or(8);
    if let Some((x, y)) = best.get("pd").and_then(Value::as_str).and_then(|l| crate::spec::cluster::parse_layout(l).ok().flatten()) {
        let nodes_total = s.deployment.cluster.as_ref().map_or(1, |c| c.nodes.max(1));
        let ptp = int("prefill_tp", tp as i64).max(1);
        return pd_launch(PdLayout { x, y, tp, dp, ptp, node_chips, chips: nodes_total * node_chips }, &server, list, max_len, notes);
    }
    let mut a = flags::keep_known(server(tp, dp), list, &mut notes);
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

/// A prefill-decode disaggregated layout as SGLang launches it: `x` prefill servers sharing the
/// chips the `y` decode servers of tp x dp leave, each of `ptp` chips per DP rank.
struct PdLayout {
    x: u64,
    y: u64,
    tp: u64,
    dp: u64,
    ptp: u64,
    node_chips: u64,
    chips: u64,
}

/// SGLang's prefill-decode disaggregation, node by node (sgl-project/sglang
/// docs/advanced_features/pd_disaggregation.md, its ASCEND section: `--disaggregation-mode
/// prefill|decode --disaggregation-transfer-backend ascend` on every server, the mf_adapter
/// store's address in `ASCEND_MF_STORE_URL`, and the router `python -m
/// sglang_router.launch_router --pd-disaggregation --prefill URL BOOTSTRAP_PORT --decode URL`
/// in front (docs/advanced_features/router.md: a prefill entry takes its bootstrap port)).
/// Servers get chips in order, the prefill ones first, as the vLLM-Ascend launch hands them
/// out; a server spanning nodes gets `--nnodes`, `--node-rank` and `--dist-init-addr` on each.
/// Only `launch_server` flags of the release are written (the router is another program).
fn pd_launch(l: PdLayout, server: &dyn Fn(u64, u64) -> Vec<String>, list: &flags::ArgList, max_len: u64, mut notes: Vec<String>) -> Launch {
    let PdLayout { x, y, tp, dp, ptp, node_chips, chips } = l;
    let per_prefill = (chips.saturating_sub(y * tp * dp) / x.max(1)).max(1);
    let pdp = (per_prefill / ptp).max(1);
    let env = vec![("ASCEND_MF_STORE_URL".to_string(), "tcp://$NODE0_IP:6650".to_string())];
    let mut out = Vec::new();
    let (mut chip, mut prefills, mut decodes) = (0u64, Vec::new(), Vec::new());
    let place = |role: String, mut cmd: Vec<String>, width: u64, port: u64, out: &mut Vec<NodeLaunch>, chip: &mut u64| -> String {
        let first = *chip / node_chips;
        let host = format!("$NODE{first}_IP");
        if *chip % node_chips != 0 {
            cmd.extend(["--base-gpu-id".into(), (*chip % node_chips).to_string()]);
        }
        cmd.extend(["--host".into(), host.clone(), "--port".into(), port.to_string()]);
        let nodes = width.div_ceil(node_chips).max(1);
        if nodes > 1 {
            cmd.extend(["--nnodes".into(), nodes.to_string(), "--dist-init-addr".into(), format!("{host}:5757")]);
            for n in 0..nodes {
                let mut c = cmd.clone();
                c.extend(["--node-rank".into(), n.to_string()]);
                out.push(NodeLaunch { node: first + n, role: format!("{role} (node rank {n})"), env: env.clone(), command: c });
            }
        } else {
            out.push(NodeLaunch { node: first, role: role.clone(), env: env.clone(), command: cmd });
        }
        *chip += width;
        host
    };
    for i in 0..x {
        let mut cmd = flags::keep_known(server(ptp, pdp), list, &mut notes);
        let boot = 8998 + i;
        cmd.extend(["--disaggregation-mode".into(), "prefill".into(), "--disaggregation-transfer-backend".into(), "ascend".into(), "--disaggregation-bootstrap-port".into(), boot.to_string()]);
        let port = 30000 + i;
        let start = chip;
        let host = place(format!("prefill {i}"), cmd, ptp * pdp, port, &mut out, &mut chip);
        chip = start + per_prefill;
        prefills.push((host, port, boot));
    }
    for j in 0..y {
        let mut cmd = flags::keep_known(server(tp, dp), list, &mut notes);
        cmd.extend(["--disaggregation-mode".into(), "decode".into(), "--disaggregation-transfer-backend".into(), "ascend".into()]);
        let port = 30100 + j;
        let host = place(format!("decode {j}"), cmd, tp * dp, port, &mut out, &mut chip);
        decodes.push((host, port));
    }
    let mut router: Vec<String> = ["python", "-m", "sglang_router.launch_router", "--pd-disaggregation"].iter().map(|x| x.to_string()).collect();
    for (h, p, b) in &prefills {
        router.extend(["--prefill".into(), format!("http://{h}:{p}"), b.to_string()]);
    }
    for (h, p) in &decodes {
        router.extend(["--decode".into(), format!("http://{h}:{p}")]);
    }
    router.extend(["--host".into(), "0.0.0.0".into(), "--port".into(), "8000".into()]);
    out.push(NodeLaunch { node: 0, role: "router".into(), env: Vec::new(), command: router });
    notes.push(format!("{x}P{y}D: {x} prefill server(s) of tp {ptp} x dp {pdp} and {y} decode server(s) of tp {tp} x dp {dp}, each with --disaggregation-mode and the ascend transfer backend (mf_adapter: every server needs ASCEND_MF_STORE_URL, the store on node 0, any free port there; and ASCEND_NPU_PHY_ID in a container); the router (python -m sglang_router.launch_router, from the sglang-router package) sends each prompt to a prefill server with its bootstrap port and the decoding to a decode server; clients talk to the router on port 8000 (sgl-project/sglang docs/advanced_features/pd_disaggregation.md, router.md)"));
    notes.push("placeholders: $NODEn_IP is node n's address".into());
    notes.push(format!("written for {} (its arguments: assets/engines/flags/); the router's arguments are sglang-router's, not checked against that list", list.release));
    Launch { nodes: out, mindie_config: serde_json::Value::Null, mindie_rank_table: None, max_model_len: max_len, notes }
}

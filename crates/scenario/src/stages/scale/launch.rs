//! A complete launch of a deployment's whole layout, node by node: each node's environment and
//! `vllm serve` command (ranks, addresses and ports as placeholders), the disaggregated
//! layout's proxy, and for MindIE the per-node config.json fields and the multi-node rank table.
//!
//! Sources of what is written (no flag is written that the target release lacks: the test
//! `export_flags` checks every bundled scenario's launch against `assets/engines/flags/`):
//! - data parallelism over nodes (`--data-parallel-size-local`, `--data-parallel-address`,
//!   `--data-parallel-rpc-port`, `--data-parallel-start-rank`, `--headless`): vLLM docs,
//!   serving/data_parallel_deployment.md;
//! - EPLB and the other release-dependent features: the environment and arguments the target
//!   release's argument list gives (`stages::scale::flags`; vLLM-Ascend 0.11 and 0.23:
//!   `DYNAMIC_EPLB=true` and `--additional-config`, not Model Runner V2's `--enable-eplb`,
//!   which only later vLLM-Ascend runs);
//! - prefill-decode disaggregation with the Mooncake connector: the environment
//!   (`HCCL_IF_IP`, `GLOO_SOCKET_IFNAME`, `TP_SOCKET_IFNAME`, `HCCL_SOCKET_IFNAME`,
//!   `ASCEND_RT_VISIBLE_DEVICES`), the `--kv-transfer-config` fields and the proxy
//!   (`load_balance_proxy_server_example.py --prefiller-hosts ... --decoder-hosts ...`):
//!   vllm-project/vllm-ascend examples/disaggregated_prefill_v1/mooncake_connector_deployment_guide.md
//!   (commit 1653f1d4916df0cabb5bd26476340d1128cb9373);
//! - MindIE multi-node: `multiNodesInferEnabled`, `RANKTABLEFILE`, `MIES_CONTAINER_IP`
//!   (hiascend.com MindIE 2.3.0 "Multi-Node Inference", mindie_instg_0027); the rank table in
//!   HCCL's format (CANN 8.2.RC1 HCCL guide, "ranktable文件配置资源信息", hcclug_000014).

use crate::spec::scenario::Scenario;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tunelab_search::Value;

/// One process to start on one node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeLaunch {
    /// Node index in the layout (0-based) and its role ("serve", "serve (headless)", "prefill
    /// 0", "decode 0", "proxy").
    pub node: u64,
    pub role: String,
    /// Environment variables, in order.
    pub env: Vec<(String, String)>,
    /// The command line (program first).
    pub command: Vec<String>,
}

/// The whole launch.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Launch {
    pub nodes: Vec<NodeLaunch>,
    /// MindIE: config.json fields per node (the same on every node) and the rank table of a
    /// multi-node layout.
    pub mindie_config: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mindie_rank_table: Option<serde_json::Value>,
    /// The longest request the workload sends (prompt + output), what --max-model-len covers.
    pub max_model_len: u64,
    pub notes: Vec<String>,
}

/// The longest request of the scenario's workload, prompt plus output (the sample the
/// simulation serves, image tokens included), so the engine admits every request.
pub fn longest_request(s: &Scenario) -> u64 {
    let (model, _, _) = match crate::stages::context::resolve(s) {
        Ok(x) => x,
        Err(_) => return (s.workload.input_len.max(1) + s.workload.output_len.max(0)) as u64,
    };
    let mut model = model;
    let spec = &s.deployment.serving;
    let _ = crate::stages::serving_features::stage::apply_image_size(&mut model, spec);
    let extra = model.media_tokens();
    let input = s.workload.input_len.max(1) as u64;
    let output = crate::stages::serving_features::stage::output_len(&model, s.workload.output_len.max(1) as u64);
    if spec.is_static() {
        return input + extra + output;
    }
    crate::stages::scheduler::requests(spec, input, output, extra, s.seed).iter().map(|r| r.input + r.output).max().unwrap_or(input + extra + output)
}

/// The longest prompt of the scenario's workload (image tokens included).
pub fn longest_prompt(s: &Scenario) -> u64 {
    let Ok((mut model, _, _)) = crate::stages::context::resolve(s) else { return s.workload.input_len.max(1) as u64 };
    let spec = &s.deployment.serving;
    let _ = crate::stages::serving_features::stage::apply_image_size(&mut model, spec);
    let extra = model.media_tokens();
    let input = s.workload.input_len.max(1) as u64;
    if spec.is_static() {
        return input + extra;
    }
    let output = s.workload.output_len.max(1) as u64;
    crate::stages::scheduler::requests(spec, input, output, extra, s.seed).iter().map(|r| r.input).max().unwrap_or(input + extra)
}

/// The longest output of the scenario's workload (what MindIE's maxIterTimes must allow, or the
/// longer requests are cut short).
pub fn longest_output(s: &Scenario) -> u64 {
    let Ok((model, _, _)) = crate::stages::context::resolve(s) else { return s.workload.output_len.max(1) as u64 };
    let spec = &s.deployment.serving;
    let output = crate::stages::serving_features::stage::output_len(&model, s.workload.output_len.max(1) as u64);
    if spec.is_static() {
        return output;
    }
    let input = s.workload.input_len.max(1) as u64;
    crate::stages::scheduler::requests(spec, input, output, 0, s.seed).iter().map(|r| r.output).max().unwrap_or(output)
}

fn chips_per_node(s: &Scenario) -> u64 {
    crate::stages::context::resolve(s).map(|(_, d, _)| d.node_chips.max(1) as u64).unwrap_or(8)
}

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// The launch of configuration `best` (parameter -> value) of a deployment scenario.
/// `base_args`: the `vllm serve` arguments every instance shares (model first), from the
/// report's export (the release's EPLB arguments included); `feature_env`: the environment the
/// release's features need on every node (`stages::scale::flags`); data-parallel and
/// disaggregation arguments are added here per node.
pub fn launch_with(s: &Scenario, best: &BTreeMap<String, Value>, base_args: &[String], mindie: serde_json::Value, feature_env: &[(String, String)]) -> Launch {
    let int = |k: &str, d: i64| best.get(k).and_then(Value::as_i64).unwrap_or(d).max(0) as u64;
    let (tp, dp) = (int("tp", 1).max(1), int("dp", 1).max(1));
    let node_chips = chips_per_node(s);
    let nodes_total = s.deployment.cluster.as_ref().map_or(1, |c| c.nodes.max(1));
    let pd = best.get("pd").and_then(Value::as_str).and_then(|l| crate::spec::cluster::parse_layout(l).ok().flatten());
    let mut common_env: Vec<(String, String)> = feature_env.to_vec();
    if s.deployment.serving.hccl_expansion == "aiv" {
        common_env.push(("HCCL_OP_EXPANSION_MODE".into(), "AIV".into()));
    }
    if nodes_total > 1 {
        common_env.extend(env(&[("HCCL_IF_IP", "$NODE_IP"), ("GLOO_SOCKET_IFNAME", "$NIC_NAME"), ("TP_SOCKET_IFNAME", "$NIC_NAME"), ("HCCL_SOCKET_IFNAME", "$NIC_NAME")]));
    }
    let extra: Vec<String> = Vec::new();
    // Context parallel (vLLM-Ascend's context parallel guide): DCP on the decode side (or the
    // colocated engine), PCP on the prefill instances.
    let (pcp, dcp) = (int("prefill_cp", 1).max(1), int("decode_cp", 1).max(1));
    let mut dcp_args: Vec<String> = Vec::new();
    if dcp > 1 {
        dcp_args.extend(["--decode-context-parallel-size".into(), dcp.to_string()]);
        if pd.is_some() {
            // With a KV transfer the interleave is the cache's block size (default 128).
            dcp_args.extend(["--cp-kv-cache-interleave-size".into(), s.deployment.serving.block_size.max(1).to_string()]);
        }
    }
    let mut notes = Vec::new();
    let mut out = Vec::new();
    match pd {
        None => {
            // A co-located rank of tp x pp chips (vLLM --pipeline-parallel-size; over nodes it
            // runs through Ray, as a tensor-parallel group over nodes does).
            let pp = int("pp", 1).max(1);
            let pp_args: Vec<String> = if pp > 1 { vec!["--pipeline-parallel-size".into(), pp.to_string()] } else { Vec::new() };
            instance(&mut out, "serve", 0, tp * pp, dp, node_chips, &common_env, base_args, &[extra.clone(), dcp_args.clone(), pp_args].concat(), 8000, 13345, None)
        }
        Some((x, y)) => {
            let chips = nodes_total * node_chips;
            let decode_chips = tp * dp;
            let left = chips.saturating_sub(y * decode_chips);
            let per_prefill = (left / x.max(1)).max(1);
            let ptp = int("prefill_tp", tp as i64).max(1);
            // A prefill rank of ptp x pcp chips (PCP adds ranks: world = tp x pcp per DP rank).
            let pdp = (per_prefill / ptp / pcp).max(1);
            let mut pcp_args: Vec<String> = if pcp > 1 { vec!["--prefill-context-parallel-size".into(), pcp.to_string()] } else { Vec::new() };
            // DCP on the prefill instances (vLLM-Ascend's 1M-context PD layout; the interleave is
            // the cache's block size for the KV transfer, as on the decode side).
            let pdcp = int("prefill_dcp", 1).max(1);
            if pdcp > 1 {
                pcp_args.extend(["--decode-context-parallel-size".into(), pdcp.to_string(), "--cp-kv-cache-interleave-size".into(), s.deployment.serving.block_size.max(1).to_string()]);
            }
            let kv = |role: &str, id: u64| {
                format!(
                    "'{{\"kv_connector\":\"MooncakeConnectorV1\",\"kv_buffer_device\":\"npu\",\"kv_role\":\"{role}\",\"kv_parallel_size\":1,\"kv_port\":\"{}\",\"engine_id\":\"{id}\",\"kv_rank\":{id},\"kv_connector_extra_config\":{{\"prefill\":{{\"dp_size\":{pdp},\"tp_size\":{ptp}}},\"decode\":{{\"dp_size\":{dp},\"tp_size\":{tp}}}}}}}'",
                    20001 + id
                )
            };
            // No kv_connector_module_path: both releases register MooncakeConnectorV1 by name
            // (vllm-ascend v0.11.0 vllm_ascend/distributed/__init__.py, v0.23.0
            // vllm_ascend/distributed/kv_transfer/__init__.py), and the module moved between them
            // (v0.23.0's mooncake_connector_deployment_guide.md writes none).
            // Chips are handed out in order: the prefill instances first, then the decode ones.
            let mut chip = 0;
            let (mut p_hosts, mut d_hosts) = (Vec::new(), Vec::new());
            for i in 0..x {
                let mut args = base_args.to_vec();
                set_tp(&mut args, ptp);
                let port = 8100 + i;
                instance(&mut out, &format!("prefill {i}"), chip, ptp * pcp, pdp, node_chips, &common_env, &args, &[extra.clone(), pcp_args.clone(), vec!["--kv-transfer-config".into(), kv("kv_producer", i)]].concat(), port, 9100 + i, Some(chip % node_chips));
                p_hosts.push((format!("$NODE{}_IP", chip / node_chips), port));
                chip += per_prefill;
            }
            for j in 0..y {
                let port = 8200 + j;
                instance(&mut out, &format!("decode {j}"), chip, tp, dp, node_chips, &common_env, base_args, &[extra.clone(), dcp_args.clone(), vec!["--kv-transfer-config".into(), kv("kv_consumer", x + j)]].concat(), port, 9200 + j, Some(chip % node_chips));
                d_hosts.push((format!("$NODE{}_IP", chip / node_chips), port));
                chip += decode_chips;
            }
            let mut proxy = vec!["python".to_string(), "load_balance_proxy_server_example.py".into(), "--host".into(), "0.0.0.0".into(), "--prefiller-hosts".into()];
            proxy.extend(p_hosts.iter().map(|h| h.0.clone()));
            proxy.push("--prefiller-ports".into());
            proxy.extend(p_hosts.iter().map(|h| h.1.to_string()));
            proxy.push("--decoder-hosts".into());
            proxy.extend(d_hosts.iter().map(|h| h.0.clone()));
            proxy.push("--decoder-ports".into());
            proxy.extend(d_hosts.iter().map(|h| h.1.to_string()));
            out.push(NodeLaunch { node: 0, role: "proxy".into(), env: Vec::new(), command: proxy });
            notes.push(format!("{x}P{y}D: {x} prefill instance(s) of tp {ptp} x dp {pdp} and {y} decode instance(s) of tp {tp} x dp {dp}; the proxy (vllm-ascend examples/disaggregated_prefill_v1/load_balance_proxy_server_example.py) sends each prompt to a prefill instance and its decoding to a decode instance; clients talk to the proxy on port 8000"));
        }
    }
    if pcp > 1 {
        notes.push(format!("--prefill-context-parallel-size {pcp}: each prefill rank spans tp x pcp = {} chips; recent vLLM-Ascend releases run PCP on ModelRunner V2 only (VLLM_USE_V2_MODEL_RUNNER=1, eager prefill): check the release's context parallel guide", int("prefill_tp", tp as i64).max(1) * pcp));
    }
    if nodes_total > 1 {
        notes.push("placeholders: $NODEk_IP is node k's address, $NODE_IP the address of the node the command runs on, $NIC_NAME its network interface (ip addr); every node needs the same model path and vLLM-Ascend release".into());
    }
    let (mindie_config, mindie_rank_table) = mindie_layout(mindie, nodes_total, node_chips, tp * dp);
    Launch { nodes: out, mindie_config, mindie_rank_table, max_model_len: longest_request(s), notes }
}

/// Replaces --tensor-parallel-size's value.
fn set_tp(args: &mut [String], tp: u64) {
    if let Some(i) = args.iter().position(|a| a == "--tensor-parallel-size") {
        if let Some(v) = args.get_mut(i + 1) {
            *v = tp.to_string();
        }
    }
}

/// One engine instance of tp x dp chips starting at global chip `first`: one process per node
/// it spans (data parallelism over nodes), or one process when it fits in a node.
#[allow(clippy::too_many_arguments)]
fn instance(out: &mut Vec<NodeLaunch>, role: &str, first: u64, tp: u64, dp: u64, node_chips: u64, common_env: &[(String, String)], base: &[String], extra: &[String], port: u64, rpc: u64, visible_from: Option<u64>) {
    let chips = tp * dp;
    let first_node = first / node_chips;
    let mut args: Vec<String> = vec!["vllm".into(), "serve".into()];
    args.extend(base.iter().cloned());
    args.extend(extra.iter().cloned());
    if visible_from.is_some() || role != "serve" {
        args.extend(["--port".into(), port.to_string()]);
    }
    let visible = |from: u64, n: u64| (from..from + n).map(|c| c.to_string()).collect::<Vec<_>>().join(",");
    if chips <= node_chips || tp > node_chips {
        let mut env = common_env.to_vec();
        if let Some(v) = visible_from {
            env.push(("ASCEND_RT_VISIBLE_DEVICES".into(), visible(v, chips.min(node_chips))));
        }
        if dp > 1 {
            args.extend(["--data-parallel-size".into(), dp.to_string()]);
        }
        if tp > node_chips {
            // One tensor-parallel group over nodes: vLLM runs it through a Ray cluster.
            args.extend(["--distributed-executor-backend".into(), "ray".into()]);
            for n in 1..chips.div_ceil(node_chips) {
                out.push(NodeLaunch { node: first_node + n, role: format!("{role} (ray worker)"), env: env.clone(), command: vec!["ray".into(), "start".into(), "--address".into(), format!("$NODE{first_node}_IP:6379")] });
            }
            out.push(NodeLaunch { node: first_node, role: format!("{role} (ray head)"), env: env.clone(), command: vec!["ray".into(), "start".into(), "--head".into(), "--port".into(), "6379".into()] });
        }
        out.push(NodeLaunch { node: first_node, role: role.into(), env, command: args });
        return;
    }
    // Data parallelism over nodes: `local` ranks per node, the first node's process serves the
    // API and the others run headless from their start rank.
    let local = (node_chips / tp).max(1);
    let nodes = dp.div_ceil(local);
    args.extend(["--data-parallel-size".into(), dp.to_string(), "--data-parallel-size-local".into(), local.to_string(), "--data-parallel-address".into(), format!("$NODE{first_node}_IP"), "--data-parallel-rpc-port".into(), rpc.to_string()]);
    for n in 0..nodes {
        let mut cmd = args.clone();
        let mut env = common_env.to_vec();
        if visible_from.is_some() {
            env.push(("ASCEND_RT_VISIBLE_DEVICES".into(), visible(0, node_chips)));
        }
        let r = if n == 0 {
            role.to_string()
        } else {
            cmd.extend(["--headless".into(), "--data-parallel-start-rank".into(), (n * local).to_string()]);
            format!("{role} (headless, DP ranks {}..{})", n * local, ((n + 1) * local).min(dp) - 1)
        };
        out.push(NodeLaunch { node: first_node + n, role: r, env, command: cmd });
    }
}

/// MindIE's per-node config.json fields and, over several nodes, the rank table.
fn mindie_layout(mut cfg: serde_json::Value, nodes: u64, node_chips: u64, chips: u64) -> (serde_json::Value, Option<serde_json::Value>) {
    let per_node = chips.min(node_chips).max(1);
    let ids: Vec<u64> = (0..per_node).collect();
    if let Some(b) = cfg.get_mut("BackendConfig") {
        b["npuDeviceIds"] = serde_json::json!([ids]);
        b["multiNodesInferEnabled"] = serde_json::json!(nodes > 1);
        if let Some(m) = b.pointer_mut("/ModelDeployConfig/ModelConfig/0") {
            m["worldSize"] = serde_json::json!(per_node);
        }
    }
    if nodes <= 1 {
        return (cfg, None);
    }
    let servers: Vec<serde_json::Value> = (0..nodes)
        .map(|n| {
            let devs: Vec<serde_json::Value> = (0..per_node).map(|d| serde_json::json!({ "device_id": d.to_string(), "device_ip": format!("$NODE{n}_DEVICE{d}_IP"), "rank_id": (n * per_node + d).to_string() })).collect();
            serde_json::json!({ "server_id": format!("$NODE{n}_IP"), "container_ip": format!("$NODE{n}_IP"), "device": devs })
        })
        .collect();
    (cfg, Some(serde_json::json!({ "version": "1.0", "server_count": nodes.to_string(), "server_list": servers, "status": "completed" })))
}

impl Launch {
    /// Shell text: one block per node.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for n in &self.nodes {
            out.push_str(&format!("# node {} ({})\n", n.node, n.role));
            for (k, v) in &n.env {
                out.push_str(&format!("export {k}={v}\n"));
            }
            out.push_str(&n.command.join(" "));
            out.push_str("\n\n");
        }
        for n in &self.notes {
            out.push_str(&format!("# {n}\n"));
        }
        out
    }
}

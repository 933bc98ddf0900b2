//! The deployment export of a tuned serving configuration: the `vllm serve` arguments and the
//! MindIE Service config.json (documented fields only), and the whole layout's launch node by
//! node (`stages::scale::launch`). Moved out of `report.rs`, where it is re-exported.

use crate::spec::scenario::ModelRef;
use serde::Serialize;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use tunelab_search::Value;

/// Deployment settings for serving stacks.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct DeploymentExport {
    /// `vllm serve` arguments for vLLM-Ascend.
    pub vllm_args: Vec<String>,
    /// MindIE Service config.json with its documented fields only (`MINDIE_FIELDS`).
    pub mindie_config: Json,
    /// What has no MindIE field (precision, launch mode, ...), for a comment file beside it.
    pub mindie_notes: Vec<String>,
    /// The complete launch of the whole layout, node by node (`stages::scale::launch`).
    pub launch: crate::stages::scale::launch::Launch,
    /// The same layout launched with SGLang (`stages::scale::sglang`).
    #[serde(default)]
    pub sglang: crate::stages::scale::launch::Launch,
    /// The releases the export is written for (`deployment.serving.engine_version` for the
    /// scenario's own engine; `stages::scale::flags::Targets`).
    #[serde(default)]
    pub releases: crate::stages::scale::flags::Targets,
}

/// MindIE Service config.json fields Tunelab writes, by section, each documented in MindIE
/// Service's configuration reference (config.json, "BackendConfig" / "ModelDeployConfig" /
/// "ModelConfig" / "ScheduleConfig"; e.g. hiascend.com MindIE 2.0.RC2 mindie_llm0004 and
/// MindIE 1.0 mindie_service0285). Nothing else is emitted into the config; the rest goes to
/// the comment file.
pub const MINDIE_FIELDS: &[(&str, &[&str])] = &[
    ("", &["Version", "BackendConfig"]),
    ("BackendConfig", &["npuDeviceIds", "multiNodesInferEnabled", "ModelDeployConfig", "ScheduleConfig"]),
    ("ModelDeployConfig", &["maxSeqLen", "maxInputTokenLen", "truncation", "ModelConfig"]),
    ("ModelConfig", &["modelName", "modelWeightPath", "worldSize", "npuMemSize"]),
    ("ScheduleConfig", &["cacheBlockSize", "maxPrefillBatchSize", "maxPrefillTokens", "maxBatchSize", "maxIterTimes"]),
];

/// `vllm serve` flags Tunelab writes, each documented in vLLM's engine arguments
/// (docs.vllm.ai "Engine Arguments"); `--quantization ascend` is vLLM-Ascend's quantisation
/// method (vllm-ascend docs, "Quantization"); `--enable-expert-parallel` is vLLM's expert
/// parallelism for MoE models (https://docs.vllm.ai/en/latest/serving/expert_parallel_deployment.html).
/// `--speculative-config` takes vLLM-Ascend's methods "eagle", "eagle3" and "mtp" with
/// `num_speculative_tokens` (docs.vllm.ai/projects/ascend, "Speculative Decoding Guide");
/// `--enable-prefix-caching` is vLLM's engine argument for automatic prefix caching.
pub const VLLM_FLAGS: &[&str] = &[
    "--tensor-parallel-size", "--max-num-seqs", "--max-model-len", "--gpu-memory-utilization", "--dtype", "--quantization", "--enforce-eager", "--max-num-batched-tokens", "--enable-expert-parallel",
    // stages::scale::export::FLAGS (data parallelism over nodes, EPLB, disaggregation).
    "--data-parallel-size", "--data-parallel-size-local", "--data-parallel-address", "--data-parallel-rpc-port", "--data-parallel-start-rank", "--headless", "--enable-eplb", "--eplb-config", "--kv-transfer-config",
    // Speculative decoding and prefix caching (`deployment.serving`).
    "--speculative-config", "--enable-prefix-caching",
    // `deployment.serving.graph_mode`: vLLM's CompilationConfig.cudagraph_mode (PIECEWISE,
    // FULL_DECODE_ONLY; vLLM "CUDA Graphs" design doc, vLLM-Ascend "Graph Mode Guide").
    "--compilation-config",
    // The node-by-node launch (`stages::scale::launch`): each instance's port, and Ray for a
    // tensor-parallel group over nodes.
    "--port", "--distributed-executor-backend",
    // vLLM-Ascend's own options (EPLB, an INT8 KV cache on 0.11), as each release's argument
    // list's features say (assets/engines/flags/).
    "--additional-config",
];

/// MindIE's recommended KV-cache block size (ScheduleConfig.cacheBlockSize, range [1, 128]).
const MINDIE_CACHE_BLOCK: i64 = 128;

/// The deployment export of configuration `best` of a deployment scenario (what the report, a
/// plan and the export check write).
pub fn export_for(s: &crate::spec::scenario::Scenario, best: &BTreeMap<String, Value>) -> DeploymentExport {
    export_with(s, best, &crate::stages::scale::flags::Targets::of(s))
}

/// The export of configuration `best` for the releases `targets` (each engine's command or
/// config holds only what its release has: assets/engines/flags/).
pub fn export_with(s: &crate::spec::scenario::Scenario, best: &BTreeMap<String, Value>, targets: &crate::stages::scale::flags::Targets) -> DeploymentExport {
    use crate::stages::scale::flags;
    let (vlist, vexact) = flags::for_release("vllm-ascend", &targets.vllm_ascend).unwrap_or((&EMPTY_LIST, false));
    let mut release_notes: Vec<String> = Vec::new();
    if !vexact {
        release_notes.push(format!("vLLM-Ascend {}: no argument list of this release is bundled; the launch is checked against {}'s (assets/engines/flags/)", targets.vllm_ascend, vlist.release));
    }
    let mut additional = serde_json::Map::new();
    let mut feature_env: Vec<(String, String)> = Vec::new();
    let int = |k: &str, d: i64| best.get(k).and_then(Value::as_i64).unwrap_or(d);
    let text = |k: &str, d: &str| best.get(k).and_then(|v| v.as_str().map(String::from)).unwrap_or_else(|| d.to_string());
    let batch = int("batch", s.workload.batch.max(1));
    let tp = int("tp", 1);
    let precision = text("precision", "fp16");
    let kv = best.get("kv_cache_fraction").and_then(Value::as_f64).unwrap_or(0.9);
    let eager = text("launch", "graph") == "eager";
    let expert_parallel = best.get("expert_parallel").and_then(Value::as_str) == Some("on");
    // A vision-language prompt also holds its image's tokens.
    let image = crate::stages::context::resolve(s).ok().and_then(|(mut m, _, _)| {
        crate::stages::serving_features::stage::apply_image_size(&mut m, &s.deployment.serving).ok()?;
        Some(m.media_tokens() as i64)
    });
    let input = s.workload.input_len.max(1) + image.unwrap_or(0);
    // The workload's longest request, not its mean: a shorter limit rejects the longer ones.
    let max_len = (crate::stages::scale::launch::longest_request(s) as i64).max(input.saturating_add(s.workload.output_len));
    let model = match &s.model {
        ModelRef::Id(id) if !id.trim_start().starts_with('{') => id.clone(),
        _ => "MODEL_PATH".into(),
    };
    // The tuned step budget when the scheduler tuned one; else a static batch's whole prefill.
    let prefill_tokens = best.get("max_num_batched_tokens").and_then(Value::as_i64).unwrap_or_else(|| (batch as i64).saturating_mul(input as i64));
    let mut args = vec![
        model.clone(), "--tensor-parallel-size".into(), tp.to_string(), "--max-num-seqs".into(), batch.to_string(), "--max-model-len".into(), max_len.to_string(),
        "--gpu-memory-utilization".into(), format!("{kv}"), "--max-num-batched-tokens".into(), prefill_tokens.max(max_len as i64).to_string(),
    ];
    match precision.as_str() {
        "bf16" => args.extend(["--dtype".into(), "bfloat16".into()]),
        "w8a8" | "w8a16" | "w4a16" | "w4a8" | "w4a4" => args.extend(["--dtype".into(), "float16".into(), "--quantization".into(), "ascend".into()]),
        _ => args.extend(["--dtype".into(), "float16".into()]),
    }
    // An INT8 KV cache comes with msModelSlim's quantised weights, read by --quantization ascend
    // (and, on 0.11, named in --additional-config): as the release's `int8_kv` feature says.
    if s.deployment.serving.kv_cache_dtype == "int8" {
        match vlist.feature("int8_kv", 0) {
            Some(f) => {
                for w in f.args.chunks(2) {
                    if !args.iter().any(|a| a == &w[0]) {
                        args.extend(w.iter().cloned());
                    }
                }
                merge(&mut additional, f.additional_config.as_ref());
            }
            None => release_notes.push(format!("INT8 KV cache: {} has no launch for it in its argument list, so the command does not ask for one", vlist.release)),
        }
    }
    // EPLB (`redundant_experts`), as the release runs it: its environment on every node and its
    // arguments on every instance.
    let red = int("redundant_experts", 0).max(0) as u64;
    if red > 0 {
        match vlist.feature("eplb", red) {
            Some(f) => {
                args.extend(f.args.iter().cloned());
                merge(&mut additional, f.additional_config.as_ref());
                feature_env.extend(f.env.iter().map(|(k, v)| (k.clone(), v.clone())));
                release_notes.push(format!(
                    "EPLB with {red} redundant experts as {} runs it: {}--additional-config {} on every instance; vLLM-Ascend supports redundant experts on A3, not A2",
                    vlist.release,
                    f.env.iter().map(|(k, v)| format!("{k}={v} in the environment, ")).collect::<String>(),
                    f.additional_config.as_ref().map(|c| c.to_string()).unwrap_or_default()
                ));
            }
            None => release_notes.push(format!("EPLB ({red} redundant experts): {} has no launch for it in its argument list, so the command runs without redundant experts", vlist.release)),
        }
    }
    // Fine-grained TP under attention DP (`stages::scale::finegrained`), as the release spells it.
    let (ftp, ftp_notes) = crate::stages::scale::finegrained::additional_config(vlist, int("lmhead_tp", 1).max(1) as u64, int("embedding_tp", 1).max(1) as u64);
    merge(&mut additional, ftp.as_ref());
    release_notes.extend(ftp_notes);
    if eager {
        args.push("--enforce-eager".into());
    }
    if expert_parallel {
        args.push("--enable-expert-parallel".into());
    }
    // Data parallelism over nodes and disaggregation (`deployment.cluster`).
    let (scale_args, scale_notes) = crate::stages::scale::export::vllm_args(s, best);
    let serving = &s.deployment.serving;
    let spec_k = int("num_speculative_tokens", 0);
    if let (Some(o), true) = (&serving.speculative, spec_k > 0) {
        let mut cfg = serde_json::json!({ "method": o.method, "num_speculative_tokens": spec_k });
        if o.method != "mtp" {
            cfg["model"] = "DRAFT_MODEL_PATH".into();
        }
        // Quoted for the shell, as the other JSON-valued flags are.
        args.extend(["--speculative-config".into(), format!("'{cfg}'")]);
    }
    if serving.prefix_cache_hit_rate > 0.0 {
        args.push("--enable-prefix-caching".into());
    }
    let cudagraph_mode = match serving.graph_mode.as_str() {
        "piecewise" => Some("PIECEWISE"),
        "full_decode_only" => Some("FULL_DECODE_ONLY"),
        _ => None,
    };
    // As the release writes it (0.9 has no cudagraph_mode: its full graphs are full_cuda_graph).
    if let (Some(m), false) = (cudagraph_mode, eager) {
        let name = if m == "PIECEWISE" { "graph_piecewise" } else { "graph_full_decode_only" };
        match vlist.feature(name, 0) {
            Some(f) => args.extend(f.args),
            None => release_notes.push(format!("graph capture {m}: {} has no launch for it, so the engine's default capture runs", vlist.release)),
        }
    }
    if !additional.is_empty() {
        args.extend(["--additional-config".into(), format!("'{}'", Json::Object(additional))]);
    }
    // Only what the release has: the rest is said in the notes.
    let args = flags::keep_known(args, vlist, &mut release_notes);
    let scale_args = flags::keep_known(scale_args, vlist, &mut release_notes);
    // npuMemSize: GB of NPU memory per chip for the KV cache = the engine's share of the chip
    // less the weights and activations per chip (MindIE's -1 lets it decide; we give the figure).
    let npu_mem = crate::stages::context::resolve(s).ok().and_then(|(m, d, _)| {
        let p = crate::stages::serving::point_from_config(&best.keys().cloned().collect::<Vec<_>>(), &tunelab_search::Config(best.values().cloned().collect()), crate::stages::serving::default_point(s, &m));
        let w = crate::stages::serving::workload(crate::stages::serving::Phase::Decode, p.batch, input as u64, s.workload.output_len.max(1) as u64);
        let plan = p.plan();
        let opts = tunelab_sim::workload::GraphOptions { precision: p.precision, ..Default::default() };
        let mem = tunelab_sim::memory::memory_per_chip(&m, &w, &plan, &opts, None).ok()?;
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        let free = kv * crate::stages::context::memory_gib(&d) - gib(mem.weights) - gib(mem.activations);
        Some(libm::floor(free).max(1.0) as i64)
    });
    let mindie = json!({
        "Version": "1.0.0",
        "BackendConfig": {
            "npuDeviceIds": [(0..tp.clamp(1, 64)).collect::<Vec<i64>>()],
            "ModelDeployConfig": {
                "maxSeqLen": max_len,
                "maxInputTokenLen": (crate::stages::scale::launch::longest_prompt(s) as i64).max(input),
                "truncation": false,
                "ModelConfig": [{ "modelName": model, "modelWeightPath": "MODEL_PATH", "worldSize": tp, "npuMemSize": npu_mem.unwrap_or(-1) }],
            },
            "ScheduleConfig": {
                "cacheBlockSize": MINDIE_CACHE_BLOCK,
                "maxPrefillBatchSize": batch,
                "maxPrefillTokens": prefill_tokens.max(max_len as i64),
                "maxBatchSize": batch,
                // The longest output of the workload, not its mean: MindIE stops a request there.
                "maxIterTimes": (crate::stages::scale::launch::longest_output(s) as i64).max(s.workload.output_len.max(1)),
            },
        }
    });
    let mut notes = vec![
        "Generated by Tunelab from a simulated tuning (analytic device model, not a measurement). Merge these fields into your MindIE Service config.json; ServerConfig and LogConfig are yours to keep.".to_string(),
        format!("precision {precision}: MindIE takes quantised weights from the weight directory (quantise with msModelSlim); config.json has no precision field"),
        format!("launch {}: MindIE's graph mode is chosen by the model backend, not by config.json", if eager { "eager" } else { "graph" }),
        format!("KV-cache share of the chip {kv}: written as npuMemSize = {} GB (engine share less weights and activations per chip)", npu_mem.map(|x| x.to_string()).unwrap_or_else(|| "-1 (auto)".into())),
    ];
    if expert_parallel {
        let ep = tp * int("dp", 1).max(1);
        notes.push(format!("expert parallelism on (vLLM --enable-expert-parallel: the routed experts spread whole over the {ep} chips, ep = {ep}, tokens exchanged by all-to-all): not written into config.json, none of the documented MindIE fields Tunelab writes carries it"));
    }
    notes.extend(scale_notes);
    notes.extend(release_notes);
    if spec_k > 0 {
        if let Some(o) = &serving.speculative {
            notes.push(format!("speculative decoding ({}, {spec_k} draft tokens): MindIE configures it through the model backend's plugin settings, not the config.json fields Tunelab writes; vLLM: --speculative-config", o.method));
        }
    }
    if serving.kv_cache_dtype == "int8" {
        notes.push("INT8 KV cache (C8): comes with the msModelSlim quantised weights (their KV-cache quantisation); vLLM-Ascend reads it with --quantization ascend, no separate flag".into());
    }
    if serving.hccl_expansion == "aiv" {
        notes.push("HCCL_OP_EXPANSION_MODE=AIV: an environment variable of the serving processes (vLLM-Ascend and MindIE alike), not a config.json field or a vllm serve flag; set it before launching".into());
    }
    if let Some(c) = serving.max_concurrency {
        notes.push(format!("max concurrency {c}: a property of the benchmark client (--max-concurrency), not of the server"));
    }
    if let Some(m) = best.get("memory_strategy") {
        notes.push(format!("memory strategy {m}: no MindIE field; MindIE allocates the KV cache in blocks of cacheBlockSize tokens"));
    }
    // The whole layout, node by node (scale-out arguments per node, not in `vllm_args`).
    let launch = crate::stages::scale::launch::launch_with(s, best, &args, mindie.clone(), &feature_env);
    let mut launch = launch;
    // The per-node arguments the launch adds (data parallelism over nodes, disaggregation,
    // context and pipeline parallelism) pass the same release check as the shared ones.
    let mut node_notes = Vec::new();
    for n in launch.nodes.iter_mut().filter(|n| n.command.first().map(String::as_str) == Some("vllm")) {
        n.command = flags::keep_known(std::mem::take(&mut n.command), vlist, &mut node_notes);
    }
    node_notes.sort();
    node_notes.dedup();
    launch.notes.extend(node_notes);
    launch.notes.push(format!("written for {} (deployment.serving.engine_version; its arguments: assets/engines/flags/)", vlist.release));
    // MindIE: only the fields the release documents.
    let mut mindie = launch.mindie_config.clone();
    if let Some((mlist, _)) = flags::for_release("mindie", &targets.mindie) {
        for p in flags::paths(&mindie) {
            if !mlist.fields.contains_key(&p) {
                remove_path(&mut mindie, &p);
                notes.push(format!("{p}: not a config.json field of {}, left out", mlist.release));
            }
        }
        notes.push(format!("config.json fields written for {} (assets/engines/flags/)", mlist.release));
    }
    launch.mindie_config = mindie.clone();
    let sglang = crate::stages::scale::sglang::launch(s, best, &targets.sglang);
    let vllm_args = [args, scale_args].concat();
    DeploymentExport { vllm_args, mindie_config: mindie, mindie_notes: notes, launch, sglang, releases: targets.clone() }
}

/// An empty list (no bundled list of the engine: nothing is dropped silently, every flag is
/// said in the notes).
static EMPTY_LIST: crate::stages::scale::flags::ArgList = crate::stages::scale::flags::ArgList {
    schema: String::new(),
    engine: String::new(),
    engine_versions: Vec::new(),
    release: String::new(),
    program: String::new(),
    scope: String::new(),
    flags: BTreeMap::new(),
    deprecated: BTreeMap::new(),
    additional_config: BTreeMap::new(),
    fields: BTreeMap::new(),
    features: BTreeMap::new(),
};

/// Merges a feature's `--additional-config` keys (objects merged key by key).
fn merge(into: &mut serde_json::Map<String, Json>, add: Option<&Json>) {
    let Some(Json::Object(m)) = add else { return };
    for (k, v) in m {
        match (into.get_mut(k), v) {
            (Some(Json::Object(a)), Json::Object(_)) => merge(a, Some(v)),
            _ => {
                into.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Removes the dotted path `p` (in every element of the arrays on the way).
fn remove_path(v: &mut Json, p: &str) {
    let (head, rest) = p.split_once('.').map_or((p, None), |(h, r)| (h, Some(r)));
    match v {
        Json::Object(m) => match rest {
            None => {
                m.remove(head);
            }
            Some(r) => {
                if let Some(x) = m.get_mut(head) {
                    remove_path(x, r);
                }
            }
        },
        Json::Array(a) => a.iter_mut().for_each(|x| remove_path(x, p)),
        _ => {}
    }
}

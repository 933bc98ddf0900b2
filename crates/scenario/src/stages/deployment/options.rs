//! What one deployment step's operator graph is built with (`tunelab_sim::workload::GraphOptions`),
//! shared by the stage's step pricers and the operator breakdown behind the diagnosis and
//! Explore, so both price the same operators.

use crate::spec::scenario::Scenario;
use crate::stages::scheduler::price::HostCosts;
use tunelab_sim::workload::DeepepMode;
use crate::stages::scheduler::ServingSpec;
use tunelab_sim::model::ModelDesc;
use tunelab_sim::workload::GraphOptions;
use tunelab_sim::Precision;

/// The graph options one step of the deployment stage is priced with: the serving features'
/// (precision, KV-cache type, attention, OM runtime), the cluster's MoE imbalance, the engine's
/// own encoder composition and where its collectives' task lists are built. The stage's step
/// pricers and the operator breakdown (diagnosis, explore) both take them from here, so the
/// breakdown's operators add up to what the stage priced.
pub fn step_graph_options(spec: &ServingSpec, host: &HostCosts, model: &ModelDesc, moe_imbalance: f64, precision: Precision, graph_launch: bool) -> GraphOptions {
    let mut o = crate::stages::serving_features::stage::graph_options(spec, precision);
    o.moe_imbalance = moe_imbalance;
    if host.encoder_separate_ops && !o.om_model && crate::stages::serving_features::is_encoder(model) {
        // The engine's own encoder model (MindIE's ATB BERT): separate Q/K/V, GELU, Add and
        // LayerNorm kernels (serving-host.json, encoder_graph).
        o.fuse_epilogues = false;
        o.split_qkv = true;
    }
    o.collectives_pre_expanded = collectives_pre_expanded(spec, host, graph_launch);
    // A checkpoint quantised per layer group: the routed experts at their own precision
    // (validated by `ServingSpec::validate`; dense models are refused in setup).
    o.expert_precision = spec.expert_precision.as_deref().and_then(|p| Precision::parse(p).ok());
    o
}

/// Whether a step's collectives have their task lists built before they run: a graph-launched
/// step of an engine that compiles a static graph (serving-host.json, collectives: HCCL
/// expanded them at compile time), or any step with HCCL_OP_EXPANSION_MODE=AIV (the vector
/// cores build them at once). The step pricers are kept apart by it.
pub(super) fn collectives_pre_expanded(spec: &ServingSpec, host: &HostCosts, graph_launch: bool) -> bool {
    (host.collectives_pre_expanded && graph_launch) || spec.hccl_expansion == "aiv"
}

/// Cache length a decode step's attention reads when the engine allocates each sequence's KV
/// cache at the longest length it may reach and reads all of it (`HostCosts::
/// decode_reads_allocated`, torchair's fixed KV cache); 0 otherwise (the tokens cached so far).
/// The static batch allocates prompt plus output (`tokens`, plus a vision model's image
/// tokens); the scheduler the longest request (`longest`). The stage's step pricers and the
/// operator breakdown both take it from here.
pub fn allocated_ctx(spec: &ServingSpec, host: &HostCosts, model: &ModelDesc, tokens: u64, longest: impl FnOnce() -> u64) -> u64 {
    if !host.decode_reads_allocated {
        0
    } else if spec.is_static() {
        tokens + model.media_tokens()
    } else {
        longest()
    }
}

/// The MoE routing imbalance a scenario's deployment is priced with: the cluster's setting or
/// the scale constants' (1.0, balanced, without a cluster).
pub fn moe_imbalance(s: &Scenario) -> f64 {
    s.deployment.cluster.as_ref().map_or(1.0, |o| o.moe_imbalance.unwrap_or(crate::stages::scale::constants().moe_imbalance))
}

/// The MoE token exchange an expert-parallel serving step runs, as the engine picks it per step
/// (`tunelab_sim::workload::ServingMoeComm`; scale-serving.json, mc2_tokens_capacity, V2):
/// vLLM-Ascend (and its torchair mode) and MindIE run MC2 dispatch/combine for a step of at most
/// the MC2 capacity of tokens per data-parallel rank (decode), all-to-all above it on A3 and the
/// all-gather dispatcher on A2 (where MC2 also needs 16 or more EP ranks). Other engines (and a
/// dense model) keep the plain all-to-all collectives. `capacity` is `mc2_capacity`'s.
pub fn moe_comm(spec: &ServingSpec, device: &tunelab_sim::Device, model: &ModelDesc, capacity: u64) -> Option<tunelab_sim::workload::ServingMoeComm> {
    let moe = model.llm.as_ref().is_some_and(|t| t.moe.is_some());
    let deepep = match spec.deepep_mode.as_deref() {
        Some("auto") => DeepepMode::Auto,
        Some("normal") => DeepepMode::Normal,
        Some("low_latency") => DeepepMode::LowLatency,
        _ => DeepepMode::Off,
    };
    if moe && deepep != DeepepMode::Off {
        // SGLang with DeepEP: `capacity` is its decode batch's tokens (`mc2_capacity`).
        return Some(tunelab_sim::workload::ServingMoeComm { mc2_capacity: capacity, a2: device.dies_per_package <= 1, a2_max_experts_per_rank: 0, deepep });
    }
    if !moe || !matches!(spec.engine.as_str(), "vllm-ascend" | "torchair" | "mindie") {
        return None;
    }
    // An A3 die shares its package with another (910C); A2 chips are one die each.
    let a2 = device.dies_per_package <= 1;
    Some(tunelab_sim::workload::ServingMoeComm { mc2_capacity: capacity, a2, a2_max_experts_per_rank: crate::stages::scale::constants().a2_mc2_max_experts_per_rank, deepep })
}

/// The MC2 token capacity of a step per data-parallel rank. vLLM-Ascend ties it to the release's
/// capture (`set_mc2_tokens_capacity`, V2): the largest captured graph's tokens when the launch
/// captures graphs, else max_num_seqs x (1 + draft tokens) (the eager decode's most tokens),
/// split over the TP ranks, each share capped at the per-rank limit (`_MC2_TOKENS_PER_RANK_LIMIT`,
/// 512: scale-serving.json's mc2_tokens_capacity) and the whole a multiple of tp. torchair and
/// MindIE keep the per-rank limit itself, rounded up to whole TP shares (their capacity does not
/// follow a capture list).
pub fn mc2_capacity(spec: &ServingSpec, host: &HostCosts, max_num_seqs: u64, draft_tokens: u64, budget: u64, graph_launch: bool, tp: u64) -> u64 {
    let tp = tp.max(1);
    let limit = crate::stages::scale::constants().mc2_tokens_capacity;
    if spec.deepep_mode.is_some() {
        // SGLang's DeepEP `auto`: a decode batch, at most max_num_seqs x (1 + draft tokens).
        return max_num_seqs.saturating_mul(1 + draft_tokens);
    }
    if spec.engine != "vllm-ascend" {
        return limit.div_ceil(tp) * tp;
    }
    let query_len = 1 + draft_tokens;
    let most = if graph_launch {
        host.capture_tokens(max_num_seqs, query_len, budget).unwrap_or_else(|| host.graph_capture_max_batch.saturating_mul(query_len))
    } else {
        max_num_seqs.saturating_mul(query_len)
    };
    most.max(1).div_ceil(tp).min(limit) * tp
}

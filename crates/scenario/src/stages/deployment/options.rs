//! What one deployment step's operator graph is built with (`tunelab_sim::workload::GraphOptions`),
//! shared by the stage's step pricers and the operator breakdown behind the diagnosis and
//! Explore, so both price the same operators.

use crate::spec::scenario::Scenario;
use crate::stages::scheduler::price::HostCosts;
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
/// dense model) keep the plain all-to-all collectives. The capacity is rounded up to a whole
/// number of tensor-parallel shares, as the engine pads it.
pub fn moe_comm(spec: &ServingSpec, device: &tunelab_sim::Device, model: &ModelDesc, tp: u64) -> Option<tunelab_sim::workload::ServingMoeComm> {
    let moe = model.llm.as_ref().is_some_and(|t| t.moe.is_some());
    if !moe || !matches!(spec.engine.as_str(), "vllm-ascend" | "torchair" | "mindie") {
        return None;
    }
    let tp = tp.max(1);
    let cap = crate::stages::scale::constants().mc2_tokens_capacity.div_ceil(tp) * tp;
    // An A3 die shares its package with another (910C); A2 chips are one die each.
    let a2 = device.dies_per_package <= 1;
    Some(tunelab_sim::workload::ServingMoeComm { mc2_capacity: cap, a2 })
}

//! An engine's offline encoder benchmark: the static batch of an encoder (embeddings, rerankers)
//! timed the way the engine's own example measures it, not as a serving step.
//!
//! MindIE-LLM's BGE and bge-reranker examples (serving-host.json source M4: examples/atb_models/
//! examples/models/embedding/test.py `performance_test`) time, per batch, one call of the model
//! from a Python loop (the ATB `bert_EncoderModel` for the accelerated version, an ais_bench
//! `InferSession` in `dymshape` mode for the OM model) plus the normalize and the copy of the
//! output to the host. MindIE's text generator (scheduler pass, input preparation, sampler,
//! postprocess: `step_host_us`, and its per-sequence part `step_host_us_per_seq`) never runs
//! there. The engine block's `offline_call_host_us` is the host work of that call instead, and
//! the per-sequence part is zero (the inputs are generated once, before the timed loop).
//!
//! Why it matters beyond those rows: priced with the text generator's cost, the BGE rows were
//! evidence for `step_host_us`, and a leave-one-source-out refit without the Qwen1.5-7B MindIE
//! serving rows moved that cost by what the encoder rows wanted.

use crate::stages::scheduler::price::HostCosts;
use crate::stages::scheduler::ServingSpec;
use tunelab_sim::model::ModelDesc;

/// Whether a scenario is priced as the engine's offline encoder benchmark: a static batch of an
/// encoder under an engine that has one (`offline_call_host_us` > 0).
pub fn applies(spec: &ServingSpec, host: &HostCosts, model: &ModelDesc) -> bool {
    spec.is_static() && host.offline_call_host_us > 0.0 && crate::stages::serving_features::is_encoder(model)
}

/// The host costs a step is priced with: the engine's, or the offline benchmark's call in place
/// of the text generator's step where `applies`.
pub fn host(spec: &ServingSpec, model: &ModelDesc, mut host: HostCosts) -> HostCosts {
    if applies(spec, &host, model) {
        host.step_host_us = host.offline_call_host_us;
        host.step_host_us_per_seq = 0.0;
        host.offline_call = true;
    }
    host
}

/// The note the stage prints (CLI `eval` / `run`, the app's report) when it applies.
pub fn note(spec: &ServingSpec, model: &ModelDesc) -> Option<String> {
    let h = spec.host().ok()?;
    applies(spec, &h, model).then(|| {
        format!(
            "{} offline encoder benchmark (MindIE-LLM embedding test.py): each batch is one model call from a Python loop, timed with the normalize and the copy of the output to the host; no text generator, scheduler or sampler, so the step carries the call's {:.1} ms of host work in series (offline_call_host_us, assets/constants/serving-host.json) instead of the engine's per-step {:.1} ms and per-sequence {} us",
            spec.engine,
            h.offline_call_host_us / 1e3,
            h.step_host_us / 1e3,
            h.step_host_us_per_seq
        )
    })
}

/// Whether an OM model's graph carries ATC's ND <-> NZ TransData around its matmuls: the OM
/// runtime on a chip whose cube reads only FRACTAL_NZ (the coupled 910 and 310P parts; MindIE-
/// LLM@8b4871ad atb_llm/utils/initial.py `NPUSocInfo.need_nz`, soc versions 100-105 and
/// 200-205). The A2/A3 parts' matmuls take ND directly. See `tunelab_sim::workload::onnx_om`.
pub fn om_nz_transdata(opts: &tunelab_sim::workload::GraphOptions, device: &tunelab_sim::device::Device) -> bool {
    opts.om_model && device.arch == tunelab_sim::device::Arch::Coupled
}

/// The note the stage prints when an OM model runs on an NZ-only cube (`om_nz_transdata`).
pub fn nz_note(spec: &ServingSpec, device: &tunelab_sim::device::Device) -> Option<String> {
    (spec.runtime == "om" && device.arch == tunelab_sim::device::Arch::Coupled).then(|| {
        format!(
            "{}'s cube reads only the FRACTAL_NZ layout: the OM model runs ATC's TransData kernels (ND <-> NZ, a read and a write each) for Q, K, V and the context around the heads' reshape (layer.attn.heads.nd_to_nz / nz_to_nd) and for the scores and probabilities between the batch matmuls and the softmax (inside layer.attn.core); an A2/A3 cube reads ND and runs none",
            device.name
        )
    })
}

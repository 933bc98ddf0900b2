//! What the deployment stage asks of the serving features: extra space parameters and notes,
//! graph options (the KV type), the draft's pricer, memory that does not grow with the
//! context, and an encoder's single forward.

use crate::graphcost::TileMode;
use crate::scheduler::price::{HostCosts, SpecPricing, StepPricer};
use crate::scheduler::ServingSpec;
use tunelab_search::{Param, Value};
use tunelab_sim::device::Device;
use tunelab_sim::memory::recurrent_state_bytes;
use tunelab_sim::model::ModelDesc;
use tunelab_sim::workload::{GraphOptions, ParallelPlan};
use tunelab_sim::Precision;

/// Adds the features' parameters to the deployment space (after the stage's own) and says what
/// they model; errors name the field that cannot apply to this model.
pub fn extend(model: &ModelDesc, spec: &ServingSpec, params: &mut Vec<Param>, notes: &mut Vec<String>) -> Result<(), String> {
    let t = model.llm.as_ref();
    if super::is_encoder(model) {
        if spec.speculative.is_some() {
            return Err(format!("deployment.serving.speculative: '{}' is an encoder (one forward per request, nothing to decode)", model.name));
        }
        notes.push(format!("'{}' is a bidirectional encoder: a request is one forward over its tokens (no decoding); throughput is sequences/s (requests_per_s)", model.name));
    }
    if let Some(la) = t.and_then(|t| t.linear_attention.map(|l| (l, t.layers))) {
        notes.push(format!(
            "hybrid attention: {} of {} layers are Gated DeltaNet linear attention with a fixed recurrent state per sequence (no KV cache); the other {} keep a KV cache",
            la.0.layers, la.1, la.1 - la.0.layers
        ));
    }
    if spec.kv_cache_dtype == "int8" {
        notes.push("INT8 KV cache (C8): the cache holds 1 byte per element, decode attention reads half the bytes of a 16-bit cache and dequantises on the fly".into());
    }
    if spec.runtime == "om" {
        notes.push("offline OM model (ATC from ONNX, mixed_float16): attention as the export's MatMul, Div, Add mask, Softmax, MatMul with the scores in device memory, the mask add, softmax and LayerNorms in fp32 between casts, GELU and residual adds as separate kernels".into());
    } else if spec.attention == "unfused" {
        notes.push("unfused attention: QK^T, softmax and PV as separate kernels with the scores in device memory".into());
    }
    if spec.prefix_cache_hit_rate > 0.0 {
        notes.push(format!("prefix cache: {:.0}% of each prompt's tokens are found cached and not recomputed (attention still reads them)", spec.prefix_cache_hit_rate * 100.0));
    }
    if let Some(o) = &spec.speculative {
        let k0 = o.num_speculative_tokens.first().copied().unwrap_or(1).max(1) as u64;
        let s = super::speculative::resolve(spec, k0)?.ok_or("deployment.serving.speculative: not resolved")?;
        s.draft_model(model).map_err(|e| format!("deployment.serving.speculative: {e}"))?;
        let (_, why) = super::speculative::acceptance(spec)?.unwrap_or((0.0, String::new()));
        // Every number of draft tokens the space offers, so the note holds for whichever one a
        // configuration uses (the diagnosis names the priced one's yield).
        let mut yields = Vec::new();
        for k in super::speculative::token_levels(spec) {
            if let Some(r) = super::speculative::resolve(spec, k.max(1) as u64)? {
                yields.push(format!("{k} draft token{} yield{} {:.2}", if k == 1 { "" } else { "s" }, if k == 1 { "s" } else { "" }, r.tokens_per_step()));
            }
        }
        notes.push(format!(
            "speculative decoding ({}): acceptance {:.3} per draft token ({why}); tokens per verify step: {}; TPOT is per accepted token",
            s.method.name(),
            s.acceptance_rate,
            yields.join(", ")
        ));
        params.push(Param::categorical("num_speculative_tokens", super::speculative::token_levels(spec).into_iter().map(Value::Int).collect()));
    }
    Ok(())
}

/// Tokens a request generates: an encoder's is its one result.
pub fn output_len(model: &ModelDesc, output: u64) -> u64 {
    if super::is_encoder(model) { 1 } else { output }
}

/// Graph options of a configuration: its precision, the spec's KV type and its runtime (an OM
/// model runs unfused attention and separate epilogues).
pub fn graph_options(spec: &ServingSpec, precision: Precision) -> GraphOptions {
    let om = spec.runtime == "om";
    GraphOptions {
        precision,
        kv_dtype: super::kv_dtype(&spec.kv_cache_dtype),
        flash_attention: spec.attention != "unfused" && !om,
        fuse_epilogues: !om,
        om_model: om,
        ..GraphOptions::default()
    }
}

/// The speculative pricing for `k` draft tokens (None: off or k = 0). The draft runs unquantised
/// in the activation type on the target's chips (SGLang and vLLM shard it with the same TP).
#[allow(clippy::too_many_arguments)]
pub fn spec_pricing(model: &ModelDesc, device: &Device, spec: &ServingSpec, k: u64, plan: ParallelPlan, opts: GraphOptions, mode: TileMode, host: HostCosts) -> Result<Option<SpecPricing>, String> {
    if k == 0 {
        return Ok(None);
    }
    let Some(s) = super::speculative::resolve(spec, k)? else { return Ok(None) };
    let draft = s.draft_model(model)?;
    let dopts = GraphOptions { precision: draft_precision(opts.precision), ..opts };
    // An EAGLE draft is one dense layer sharded by the target's TP; an MTP layer is one of the
    // target's own layers and is sharded as they are (its experts over the same EP ranks).
    let dplan = if s.method == tunelab_sim::workload::speculative::SpecMethod::Mtp { ParallelPlan { pp: 1, ..plan } } else { ParallelPlan { tp: plan.tp, ..ParallelPlan::default() } };
    let p = StepPricer::new(draft, device.clone(), dplan, dopts, mode, host);
    Ok(Some(SpecPricing { k, tokens_per_step: s.tokens_per_step(), fc_in: s.method.fc_inputs(), draft: Box::new(p) }))
}

/// Sets a speculative pricing to `k` draft tokens, keeping its draft pricer (whose memo does
/// not depend on k). The setting was checked in setup, so resolving cannot fail here; if it
/// did, the pricing is left as it was.
pub fn retune(spec: &ServingSpec, k: u64, sp: &mut SpecPricing) {
    if let Ok(Some(s)) = super::speculative::resolve(spec, k) {
        sp.k = k;
        sp.tokens_per_step = s.tokens_per_step();
    }
}

fn draft_precision(p: Precision) -> Precision {
    if p.quantised() { if p.activation() == tunelab_sim::DType::Bf16 { Precision::Bf16 } else { Precision::Fp16 } } else { p }
}

/// Bytes per chip that stay whatever the context: `batch` sequences' recurrent state
/// (linear-attention layers) and the draft's weights with speculative decoding.
pub fn fixed_bytes(model: &ModelDesc, spec: &ServingSpec, plan: &ParallelPlan, opts: &GraphOptions, batch: u64, k: u64) -> f64 {
    let state = recurrent_state_bytes(model, plan, opts, batch) as f64;
    let draft = if k > 0 {
        super::speculative::resolve(spec, k).ok().flatten().and_then(|s| s.draft_model(model).ok()).map_or(0.0, |d| {
            let Some(t) = d.llm.as_ref() else { return 0.0 };
            // A MoE draft (an MTP layer of DeepSeek-V3) keeps its routed experts where the
            // target keeps its own: spread over the expert-parallel ranks, the rest over tp.
            let experts = t.moe.as_ref().map_or(0, |m| (t.layers - m.dense_layers.min(t.layers)) * m.experts * 3 * t.hidden * m.expert_intermediate);
            let dense = t.params().total.saturating_sub(experts);
            let ep = if plan.ep > 1 { plan.ep } else { plan.tp.max(1) };
            (dense as f64 / plan.tp.max(1) as f64 + experts as f64 / ep as f64) * opts.vector_dtype().bytes() as f64
        })
    } else {
        0.0
    };
    state + draft
}

/// Sets the images each request carries (`deployment.serving.images_per_request`, then
/// `image_size`) on a model with a vision tower; a text model, an image size for requests that
/// carry no image, or a fixed-size tower is refused, named.
pub fn apply_image_size(model: &mut ModelDesc, spec: &ServingSpec) -> Result<(), String> {
    let name = model.name.clone();
    if let Some(n) = spec.images_per_request {
        match model.vision.as_mut() {
            Some(v) => v.images = n,
            None if n == 0 => {}
            None => return Err(format!("deployment.serving.images_per_request: '{name}' has no vision tower (it reads text only)")),
        }
    }
    if let Some(sec) = spec.audio_seconds.filter(|s| *s > 0.0) {
        let a = model.llm.as_mut().and_then(|t| t.audio.as_mut()).ok_or_else(|| format!("deployment.serving.audio_seconds: '{name}' has no audio tower"))?;
        // Whisper-style encoders pad each window to 30 s.
        a.windows = (sec / 30.0).ceil() as u64;
    }
    let Some(px) = spec.image_size else { return Ok(()) };
    if model.vision.as_ref().is_some_and(|v| v.images == 0) {
        return Err(format!("deployment.serving.image_size: requests to '{name}' carry no image (deployment.serving.images_per_request is 0{}); set images_per_request to price its vision tower", if spec.images_per_request.is_none() { " by default" } else { "" }));
    }
    let v = model.vision.as_mut().ok_or_else(|| format!("deployment.serving.image_size: '{name}' has no vision tower"))?;
    if v.class_token {
        return Err(format!("deployment.serving.image_size: '{name}' takes fixed {0} x {0} images (a CLIP tower)", v.image_size));
    }
    let unit = v.patch_size.max(1) * v.merge.max(1);
    if px < unit {
        return Err(format!("deployment.serving.image_size: {px} is smaller than one merged patch ({unit} pixels)"));
    }
    // The processor resizes to a multiple of patch x merge pixels.
    v.image_size = px / unit * unit;
    Ok(())
}

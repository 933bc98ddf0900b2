//! Serving features inside the Serving section (`deployment.serving`): speculative decoding
//! (method, draft tokens, acceptance), the KV-cache type (C8), a prefix-cache hit rate, a
//! bundled dataset's lengths, a cap on requests in flight, the attention kernels, the image size of
//! a vision-language request and how graph launch captures a step. Every edit
//! goes through the scenario's validation, so a bad value is refused with the field's name and
//! a good one travels in the link.

use crate::state::Ctx;
use leptos::prelude::*;
use tunelab_scenario::Scenario;

fn opt_f64(t: &str, what: &str) -> Result<Option<f64>, String> {
    if t.is_empty() { Ok(None) } else { t.parse::<f64>().map(Some).map_err(|_| format!("{what} (or empty)")) }
}

fn set_method(s: &mut Scenario, v: String) {
    let sv = &mut s.deployment.serving;
    if v == "off" {
        sv.speculative = None;
    } else {
        let mut o = sv.speculative.take().unwrap_or_default();
        o.method = v;
        sv.speculative = Some(o);
    }
}

/// The features block of the serving panel.
#[component]
pub fn ServingFeaturesPanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let select = move |label, id, title, options, get, set| super::fields::select(ctx, label, id, title, options, get, set);
    let number = move |label, id, title, placeholder, get, set| super::fields::number(ctx, label, id, title, placeholder, get, set);
    let pair = |v: &[&str]| v.iter().map(|x| (x.to_string(), x.to_string())).collect::<Vec<_>>();
    let spec_on = move || ctx.scenario.with(|s| s.deployment.serving.speculative.is_some());
    let datasets = || {
        let mut v = vec![(String::new(), "workload lengths".to_string())];
        v.extend(tunelab_sim::workload::datasets::names().into_iter().map(|d| (d.clone(), d)));
        v
    };
    let releases = || {
        let mut v = vec![(String::new(), "baseline".to_string())];
        for (engine, e) in tunelab_scenario::spec::options::releases::all() {
            v.extend(e.releases.keys().map(|r| (r.clone(), format!("{engine} {r}"))));
        }
        v
    };
    view! {
        <fieldset class="serving-features" data-testid="serving-features">
            <legend>"Features"</legend>
            {select("Speculative decoding", "serving-spec-method", "A draft proposes tokens, the model verifies k + 1 positions in one step: eagle / eagle3 (a one-layer draft) or mtp (the checkpoint's own next-token layers). TPOT is then per accepted token.",
                pair(&["off", "eagle", "eagle3", "mtp"]),
                |s| s.deployment.serving.speculative.as_ref().map_or("off".into(), |o| o.method.clone()), set_method)}
            <Show when=spec_on>
                {number("Draft tokens", "serving-spec-k", "num_speculative_tokens values the tune considers, comma-separated (the first is the baseline)", "3",
                    |s| s.deployment.serving.speculative.as_ref().map(|o| o.num_speculative_tokens.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ")).unwrap_or_default(),
                    |s, t| { let v = t.split(',').map(str::trim).filter(|x| !x.is_empty()).map(|x| x.parse::<i64>().map_err(|_| format!("'{x}' is not a whole number"))).collect::<Result<Vec<_>, _>>()?; s.deployment.serving.speculative.get_or_insert_with(Default::default).num_speculative_tokens = v; Ok(()) })}
                {number("Acceptance rate", "serving-spec-accept", "Chance a draft token is accepted, 0..1 (empty: the accept length below, else the published default for the dataset)", "published default",
                    |s| s.deployment.serving.speculative.as_ref().and_then(|o| o.acceptance_rate).map(|a| a.to_string()).unwrap_or_default(),
                    |s, t| { s.deployment.serving.speculative.get_or_insert_with(Default::default).acceptance_rate = opt_f64(t, "a probability 0..1")?; Ok(()) })}
                {number("Accept length", "serving-spec-length", "Mean tokens per verify step (as SGLang and vLLM log it) at the first number of draft tokens; the acceptance rate is solved from it", "",
                    |s| s.deployment.serving.speculative.as_ref().and_then(|o| o.accept_length).map(|a| a.to_string()).unwrap_or_default(),
                    |s, t| { s.deployment.serving.speculative.get_or_insert_with(Default::default).accept_length = opt_f64(t, "tokens per step")?; Ok(()) })}
            </Show>
            {select("KV cache", "serving-kv-dtype", "auto: the activation type; int8: an INT8 KV cache (C8), half the bytes per token",
                pair(&["auto", "int8"]), |s| s.deployment.serving.kv_cache_dtype.clone(), |s, v| s.deployment.serving.kv_cache_dtype = v)}
            {number("Prefix-cache hit rate", "serving-prefix-hit", "Share of each prompt's tokens already cached, [0, 1)", "0",
                |s| s.deployment.serving.prefix_cache_hit_rate.to_string(),
                |s, t| { s.deployment.serving.prefix_cache_hit_rate = t.parse().map_err(|_| "a share in [0, 1)".to_string())?; Ok(()) })}
            {select("Dataset", "serving-dataset", "Request lengths from a public dataset's published statistics (assets/workloads/datasets.json) instead of the workload's means",
                datasets(), |s| s.deployment.serving.dataset.clone(), |s, v| s.deployment.serving.dataset = v)}
            {number("Max concurrency", "serving-max-concurrency", "Most requests in flight for poisson, burst or trace arrivals (a benchmark's --max-concurrency); empty: no cap", "no cap",
                |s| s.deployment.serving.max_concurrency.map(|c| c.to_string()).unwrap_or_default(),
                |s, t| { s.deployment.serving.max_concurrency = if t.is_empty() { None } else { Some(t.parse().map_err(|_| "a whole number of requests (or empty)".to_string())?) }; Ok(()) })}
            {select("Attention", "serving-attention", "flash: fused attention kernels; unfused: an offline OM model's BatchMatMul, Softmax, BatchMatMul with the scores in device memory",
                pair(&["flash", "unfused"]), |s| s.deployment.serving.attention.clone(), |s, v| s.deployment.serving.attention = v)}
            {select("Runtime", "serving-runtime", "om: an offline OM model from ONNX (MindIE's BGE offline path)",
                pair(&["engine", "om"]), |s| s.deployment.serving.runtime.clone(), |s, v| s.deployment.serving.runtime = v)}
            {number("Image size", "serving-image-size", "Pixels per side of the image each request carries, for a vision tower that takes any resolution (Qwen2.5-VL, Qwen3-VL); empty: the model's default (448)", "model default",
                |s| s.deployment.serving.image_size.map(|c| c.to_string()).unwrap_or_default(),
                |s, t| { s.deployment.serving.image_size = if t.is_empty() { None } else { Some(t.parse().map_err(|_| "a whole number of pixels (or empty)".to_string())?) }; Ok(()) })}
            {number("Images per request", "serving-images-per-request", "Images each request carries, for a model with a vision tower (0-64): each is encoded in prefill and adds its tokens to the prompt; empty: the model's default (one for vision-language models, none for Qwen3.5 / 3.6, whose tower is then not loaded)", "model default",
                |s| s.deployment.serving.images_per_request.map(|c| c.to_string()).unwrap_or_default(),
                |s, t| { s.deployment.serving.images_per_request = if t.is_empty() { None } else { Some(t.parse().map_err(|_| "a whole number of images (or empty)".to_string())?) }; Ok(()) })}
            {number("Audio seconds per request", "serving-audio-seconds", "Seconds of audio each request carries, for a model with an audio tower (Voxtral, Qwen-Omni; 0-3600): rounded up to 30 s windows, each encoded in prefill, its tokens added to the prompt; empty: none", "none",
                |s| s.deployment.serving.audio_seconds.map(|c| c.to_string()).unwrap_or_default(),
                |s, t| { s.deployment.serving.audio_seconds = if t.is_empty() { None } else { Some(t.parse().map_err(|_| "a number of seconds (or empty)".to_string())?) }; Ok(()) })}
            {select("Graph capture", "serving-graph-mode", "How a graph-launched decode step is captured: auto (the engine's default: vLLM-Ascend piecewise), piecewise (attention runs eagerly between captured pieces; the host works per layer), full_decode_only (one graph per decode step; vLLM --compilation-config cudagraph_mode)",
                pair(&["auto", "piecewise", "full_decode_only"]), |s| s.deployment.serving.graph_mode.clone(), |s, v| s.deployment.serving.graph_mode = v)}
            {select("Engine release", "serving-engine-version", "The serving engine's release (assets/engines/releases.json): its defaults (graph capture, async scheduling, chunked prefill, token budget) and host costs; baseline: the release serving-host.json describes (what a link without one prices)",
                releases(), |s| s.deployment.serving.engine_version.clone(), |s, v| s.deployment.serving.engine_version = v)}
            {select("Expert precision", "serving-expert-precision", "A mixture-of-experts checkpoint quantised per layer group: its routed experts at this precision (e.g. w4a8 experts under w8a8 attention and shared layers, msModelSlim's mixed description), the tuned precision for every other layer; same: one precision",
                vec![(String::new(), "same".to_string()), ("w4a8".into(), "w4a8".into()), ("w8a8".into(), "w8a8".into()), ("w4a16".into(), "w4a16".into()), ("w8a16".into(), "w8a16".into()), ("bf16".into(), "bf16".into())],
                |s| s.deployment.serving.expert_precision.clone().unwrap_or_default(), |s, v| s.deployment.serving.expert_precision = (!v.is_empty()).then_some(v))}
            {select("HCCL expansion", "serving-hccl-expansion", "Where HCCL builds each collective's tasks (HCCL_OP_EXPANSION_MODE): auto (per call, one task to each peer; torchair's compiled graphs at compile time), aiv (the vector cores, at once: an all-reduce inside an A2 node pays the mesh's two steps)",
                pair(&["auto", "aiv"]), |s| s.deployment.serving.hccl_expansion.clone(), |s, v| s.deployment.serving.hccl_expansion = v)}
            {select("DeepEP (SGLang)", "serving-deepep-mode", "SGLang's DeepEP exchange of the experts' tokens (--moe-a2a-backend deepep --deepep-mode; engine sglang, with expert parallelism): auto (low-latency kernels for a decode batch, normal for a prefill), normal, low_latency; off: SGLang's default exchange",
                vec![(String::new(), "off".to_string()), ("auto".into(), "auto".into()), ("normal".into(), "normal".into()), ("low_latency".into(), "low_latency".into())],
                |s| s.deployment.serving.deepep_mode.clone().unwrap_or_default(), |s, v| s.deployment.serving.deepep_mode = (!v.is_empty()).then_some(v))}
        </fieldset>
    }
}

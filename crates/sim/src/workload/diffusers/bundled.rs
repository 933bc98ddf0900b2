//! The bundled diffusers configs, compiled in (`json_asset!`) so they work in WebAssembly.
//! `pipelines.json` says which component configs (diffusers config.json files copied from the
//! Hugging Face repositories named in `source`) make up each pipeline, the prompt length each
//! text encoder runs at (the tokenizer's max_length in the pipeline), and the pipeline's default
//! call (height, width, frames, steps, classifier-free guidance as its __call__ defaults; Flux.1-dev
//! is guidance-distilled: a guidance embedding, no CFG batch). Its own `about` stays short: the
//! page carries the file.

use serde_json::Value;

/// The pipeline index (`assets/models/diffusers/pipelines.json`).
const PIPELINES: &str = crate::json_asset!("../../../../../assets/models/diffusers/pipelines.json");

/// (component path, config.json) for every bundled component.
const COMPONENTS: [(&str, &str); 48] = [
    ("flux.1-dev/text_encoder", crate::json_asset!("../../../../../assets/models/diffusers/flux.1-dev/text_encoder/config.json")),
    ("flux.1-dev/text_encoder_2", crate::json_asset!("../../../../../assets/models/diffusers/flux.1-dev/text_encoder_2/config.json")),
    ("flux.1-dev/transformer", crate::json_asset!("../../../../../assets/models/diffusers/flux.1-dev/transformer/config.json")),
    ("flux.1-dev/vae", crate::json_asset!("../../../../../assets/models/diffusers/flux.1-dev/vae/config.json")),
    ("flux.2-dev/text_encoder", crate::json_asset!("../../../../../assets/models/diffusers/flux.2-dev/text_encoder/config.json")),
    ("flux.2-dev/transformer", crate::json_asset!("../../../../../assets/models/diffusers/flux.2-dev/transformer/config.json")),
    ("flux.2-dev/vae", crate::json_asset!("../../../../../assets/models/diffusers/flux.2-dev/vae/config.json")),
    ("hidream-i1-full/transformer", crate::json_asset!("../../../../../assets/models/diffusers/hidream-i1-full/transformer/config.json")),
    ("hunyuanvideo/transformer", crate::json_asset!("../../../../../assets/models/diffusers/hunyuanvideo/transformer/config.json")),
    ("hunyuanvideo/vae", crate::json_asset!("../../../../../assets/models/diffusers/hunyuanvideo/vae/config.json")),
    // Llama-3.1-8B-Instruct's shape for HiDream-I1's fourth encoder, and LLaVA-Llama-3-8B's
    // language model for HunyuanVideo's first (see pipelines.json).
    ("llama-3-8b", crate::json_asset!("../../../../../assets/models/llama-3-8b.config.json")),
    ("qwen-image/text_encoder", crate::json_asset!("../../../../../assets/models/diffusers/qwen-image/text_encoder/config.json")),
    ("qwen-image/transformer", crate::json_asset!("../../../../../assets/models/diffusers/qwen-image/transformer/config.json")),
    ("qwen-image/vae", crate::json_asset!("../../../../../assets/models/diffusers/qwen-image/vae/config.json")),
    ("sana-1600m-1024px/text_encoder", crate::json_asset!("../../../../../assets/models/diffusers/sana-1600m-1024px/text_encoder/config.json")),
    ("sana-1600m-1024px/transformer", crate::json_asset!("../../../../../assets/models/diffusers/sana-1600m-1024px/transformer/config.json")),
    ("sana-1600m-1024px/vae", crate::json_asset!("../../../../../assets/models/diffusers/sana-1600m-1024px/vae/config.json")),
    ("sd1.5/text_encoder", crate::json_asset!("../../../../../assets/models/diffusers/sd1.5/text_encoder/config.json")),
    ("sd1.5/unet", crate::json_asset!("../../../../../assets/models/diffusers/sd1.5/unet/config.json")),
    ("sd1.5/vae", crate::json_asset!("../../../../../assets/models/diffusers/sd1.5/vae/config.json")),
    ("sd2.1-base/text_encoder", crate::json_asset!("../../../../../assets/models/diffusers/sd2.1-base/text_encoder/config.json")),
    ("sd2.1-base/unet", crate::json_asset!("../../../../../assets/models/diffusers/sd2.1-base/unet/config.json")),
    ("sd2.1-base/vae", crate::json_asset!("../../../../../assets/models/diffusers/sd2.1-base/vae/config.json")),
    ("sd2.1/text_encoder", crate::json_asset!("../../../../../assets/models/diffusers/sd2.1/text_encoder/config.json")),
    ("sd2.1/unet", crate::json_asset!("../../../../../assets/models/diffusers/sd2.1/unet/config.json")),
    ("sd2.1/vae", crate::json_asset!("../../../../../assets/models/diffusers/sd2.1/vae/config.json")),
    ("sd3.5-large/text_encoder", crate::json_asset!("../../../../../assets/models/diffusers/sd3.5-large/text_encoder/config.json")),
    ("sd3.5-large/text_encoder_2", crate::json_asset!("../../../../../assets/models/diffusers/sd3.5-large/text_encoder_2/config.json")),
    ("sd3.5-large/text_encoder_3", crate::json_asset!("../../../../../assets/models/diffusers/sd3.5-large/text_encoder_3/config.json")),
    ("sd3.5-large/transformer", crate::json_asset!("../../../../../assets/models/diffusers/sd3.5-large/transformer/config.json")),
    ("sd3.5-large/vae", crate::json_asset!("../../../../../assets/models/diffusers/sd3.5-large/vae/config.json")),
    ("sd3.5-medium/text_encoder", crate::json_asset!("../../../../../assets/models/diffusers/sd3.5-medium/text_encoder/config.json")),
    ("sd3.5-medium/text_encoder_2", crate::json_asset!("../../../../../assets/models/diffusers/sd3.5-medium/text_encoder_2/config.json")),
    ("sd3.5-medium/text_encoder_3", crate::json_asset!("../../../../../assets/models/diffusers/sd3.5-medium/text_encoder_3/config.json")),
    ("sd3.5-medium/transformer", crate::json_asset!("../../../../../assets/models/diffusers/sd3.5-medium/transformer/config.json")),
    ("sd3.5-medium/vae", crate::json_asset!("../../../../../assets/models/diffusers/sd3.5-medium/vae/config.json")),
    ("sdxl/text_encoder", crate::json_asset!("../../../../../assets/models/diffusers/sdxl/text_encoder/config.json")),
    ("sdxl/text_encoder_2", crate::json_asset!("../../../../../assets/models/diffusers/sdxl/text_encoder_2/config.json")),
    ("sdxl/unet", crate::json_asset!("../../../../../assets/models/diffusers/sdxl/unet/config.json")),
    ("sdxl/vae", crate::json_asset!("../../../../../assets/models/diffusers/sdxl/vae/config.json")),
    ("wan2.1-t2v-1.3b/text_encoder", crate::json_asset!("../../../../../assets/models/diffusers/wan2.1-t2v-1.3b/text_encoder/config.json")),
    ("wan2.1-t2v-1.3b/transformer", crate::json_asset!("../../../../../assets/models/diffusers/wan2.1-t2v-1.3b/transformer/config.json")),
    ("wan2.1-t2v-1.3b/vae", crate::json_asset!("../../../../../assets/models/diffusers/wan2.1-t2v-1.3b/vae/config.json")),
    ("wan2.1-t2v-14b/text_encoder", crate::json_asset!("../../../../../assets/models/diffusers/wan2.1-t2v-14b/text_encoder/config.json")),
    ("wan2.1-t2v-14b/transformer", crate::json_asset!("../../../../../assets/models/diffusers/wan2.1-t2v-14b/transformer/config.json")),
    ("wan2.1-t2v-14b/vae", crate::json_asset!("../../../../../assets/models/diffusers/wan2.1-t2v-14b/vae/config.json")),
    ("wan2.2-t2v-a14b/transformer", crate::json_asset!("../../../../../assets/models/diffusers/wan2.2-t2v-a14b/transformer/config.json")),
    ("wan2.2-t2v-a14b/transformer_2", crate::json_asset!("../../../../../assets/models/diffusers/wan2.2-t2v-a14b/transformer_2/config.json")),
];

/// A bundled component's config by path ("sdxl/unet").
pub fn component_config(path: &str) -> Option<Value> {
    COMPONENTS.iter().find(|(p, _)| *p == path).and_then(|(_, t)| serde_json::from_str(t).ok())
}

fn index() -> Vec<Value> {
    serde_json::from_str::<Value>(PIPELINES).ok().and_then(|v| v.get("pipelines").and_then(|p| p.as_array()).cloned()).unwrap_or_default()
}

/// Ids of the bundled pipelines.
pub fn bundled_pipeline_ids() -> Vec<String> {
    index().iter().filter_map(|p| p.get("id").and_then(|i| i.as_str()).map(String::from)).collect()
}

/// A bundled pipeline as pipeline JSON (components by path), by id.
pub fn bundled_pipeline_json(id: &str) -> Option<String> {
    let want = id.trim().to_ascii_lowercase();
    let p = index().into_iter().find(|p| p.get("id").and_then(|i| i.as_str()) == Some(want.as_str()))?;
    let mut o = p.as_object()?.clone();
    o.insert("format".into(), Value::String("tunelab-pipeline".into()));
    Some(Value::Object(o).to_string())
}

/// Display name and source of a bundled pipeline.
pub fn bundled_pipeline_info(id: &str) -> Option<(String, String)> {
    let p = index().into_iter().find(|p| p.get("id").and_then(|i| i.as_str()) == Some(id))?;
    Some((p.get("name")?.as_str()?.to_string(), p.get("source")?.as_str()?.to_string()))
}

/// What a bundled pipeline approximates ("part: how"), by the model name its descriptions carry
/// (the pipeline's display name, which training and denoiser descriptions start with), from
/// `pipelines.json`'s `approximations`; empty for other names.
pub fn pipeline_approximations(model_name: &str) -> Vec<String> {
    index()
        .into_iter()
        .filter(|p| p.get("name").and_then(|n| n.as_str()).is_some_and(|n| model_name == n || model_name.starts_with(&format!("{n} ("))))
        .flat_map(|p| p.get("approximations").and_then(|a| a.as_array()).cloned().unwrap_or_default())
        .filter_map(|a| a.as_str().map(String::from))
        .collect()
}

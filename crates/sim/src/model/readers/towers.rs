//! Vision towers of the multimodal wrappers, read from `vision_config` under the names the
//! families use: depth (`depth`, `num_hidden_layers`, `num_layers`), width (`hidden_size`,
//! `embed_dim`, `width`), heads (`num_heads`, `num_attention_heads`), MLP width
//! (`intermediate_size`, or `mlp_ratio` x width), `patch_size`, `image_size`, and the merge of
//! patches into LLM tokens (`spatial_merge_size`; InternVL's `downsample_ratio` 0.5 = 2 x 2;
//! Gemma 3's `mm_tokens_per_image`; LFM2-VL / Idefics `downsample_factor` / `scale_factor`).
//!
//! What is modelled and how (listed on the model as approximation notes): every block as full
//! bidirectional attention over one image's patches; the projector as a two-layer MLP from the
//! merged patch features to the language model's width (Qwen-VL's merger shape), or, for
//! towers that pool instead of concatenating (Gemma 3), one linear layer from the merged width.

use super::super::hf::{opt_u64, pick};
use crate::model::vl::DEFAULT_IMAGE_SIZE;
use crate::model::{MlpKind, NormKind, TransformerDesc, VisionDesc};
use serde_json::{Map, Value};

type Obj = Map<String, Value>;

/// The vision tower of a wrapper config (`vis` = its `vision_config`, `top` the wrapper), for
/// a language model `text_hidden` wide; notes go to `approx`.
pub fn vision(top: &Obj, vis: &Obj, model_type: &str, text_hidden: u64, approx: &mut Vec<String>) -> Result<VisionDesc, String> {
    let p = "vision_config.";
    let depth = pick(vis, &["depth", "num_hidden_layers", "num_layers", "layers", "vt_num_hidden_layers"], p)?.map(|(v, _)| v).ok_or_else(|| format!("missing field '{p}depth' or '{p}num_hidden_layers' (the vision tower's blocks)"))?;
    let hidden = pick(vis, &["hidden_size", "embed_dim", "width", "vt_hidden_size"], p)?.map(|(v, _)| v).ok_or_else(|| format!("missing field '{p}hidden_size' (the vision tower's width)"))?;
    let heads = pick(vis, &["num_heads", "num_attention_heads", "heads", "vt_num_attention_heads"], p)?.map(|(v, _)| v).ok_or_else(|| format!("missing field '{p}num_heads' or '{p}num_attention_heads'"))?;
    // Attention wider than the residual (Kimi-K3's MoonViT: `qkv_hidden_size` 1536 = 12 heads of
    // 128 over a 1024-wide tower): the heads divide that width instead.
    let qkv = opt_u64(vis, "qkv_hidden_size", p)?.filter(|q| *q > 0);
    let attn_width = qkv.unwrap_or(hidden);
    if heads == 0 || attn_width % heads != 0 {
        return Err(format!("field '{p}num_heads' = {heads} must divide the vision width {attn_width}"));
    }
    let inter = match pick(vis, &["intermediate_size", "mlp_dim", "vt_intermediate_size"], p)? {
        Some((v, _)) => v,
        None => {
            let ratio = vis.get("mlp_ratio").and_then(Value::as_f64).unwrap_or(4.0);
            (ratio * hidden as f64) as u64
        }
    };
    let patch = opt_u64(vis, "patch_size", p)?.unwrap_or(14).max(1);
    let act = vis.get("hidden_act").and_then(Value::as_str).unwrap_or("gelu");
    let (mlp, norm) = if act == "silu" { (MlpKind::SwiGlu, NormKind::RmsNorm) } else { (MlpKind::Gelu, NormKind::LayerNorm) };
    let fixed_image = opt_u64(vis, "image_size", p)?;
    let image = fixed_image.filter(|s| *s >= patch && *s <= 4096).unwrap_or(DEFAULT_IMAGE_SIZE);
    let side = image / patch;
    // Patches per LLM token side.
    let ratio = |k: &str| top.get(k).or_else(|| vis.get(k)).and_then(Value::as_f64);
    let merge = if let Some(m) = opt_u64(vis, "spatial_merge_size", p)?.or(opt_u64(top, "spatial_merge_size", "")?) {
        m
    } else if let Some(k) = vis.get("merge_kernel_size").and_then(Value::as_array).and_then(|a| a.first()).and_then(Value::as_u64).filter(|k| *k > 0) {
        // Kimi-VL / Kimi-K2.5's MoonViT: patches merged in [k, k] kernels.
        k
    } else if let Some(r) = ratio("downsample_ratio").filter(|r| *r > 0.0 && *r < 1.0) {
        (1.0 / r).round() as u64
    } else if let Some(tok) = opt_u64(top, "mm_tokens_per_image", "")?.filter(|t| *t > 0) {
        let per_side = (tok as f64).sqrt().round() as u64;
        (side / per_side.max(1)).max(1)
    } else if let Some(f) = opt_u64(top, "downsample_factor", "")?.or(opt_u64(top, "scale_factor", "")?) {
        f
    } else {
        1
    }
    .max(1);
    let pooled = opt_u64(top, "mm_tokens_per_image", "")?.is_some();
    let mut encoder = TransformerDesc::vision_tower(depth, hidden, heads, inter, mlp, norm, 1 << 16);
    if let Some(q) = qkv {
        encoder.head_dim = q / heads;
        approx.push(format!("vision tower ({model_type}): attention {q} wide ({heads} heads of {}) over a {hidden}-wide residual (qkv_hidden_size)", q / heads));
    }
    let mut v = VisionDesc { encoder, image_size: image, patch_size: patch, channels: opt_u64(vis, "num_channels", p)?.or(opt_u64(vis, "in_channels", p)?).unwrap_or(3), projector_hidden: if pooled { 0 } else { hidden * merge * merge }, merge, class_token: false, deepstack: 0, images: 1 };
    if fixed_image.is_none() {
        v.image_size = DEFAULT_IMAGE_SIZE;
        approx.push(format!("vision tower ({model_type}): dynamic resolution; each request carries one {DEFAULT_IMAGE_SIZE} x {DEFAULT_IMAGE_SIZE} image by default (deployment.serving.image_size sets it)"));
    }
    approx.push(format!(
        "vision tower ({model_type}): {depth} blocks {hidden} wide from vision_config, each full attention over the image's {} patches; the projector as {} into the language model's {text_hidden}; position embeddings and norms of the tower not counted",
        side * side,
        if pooled { "one linear layer from the pooled patches" } else { "a two-layer MLP from the merged patches" }
    ));
    Ok(v)
}

/// The audio encoder of a wrapper config (`audio_config`), Whisper-style (`super::super::audio`),
/// feeding a language model `text_hidden` wide; notes go to `approx`. None without one.
pub fn audio(obj: &Obj, model_type: &str, text_hidden: u64, approx: &mut Vec<String>) -> Result<Option<crate::model::audio::AudioDesc>, String> {
    let a = match obj.get("audio_config") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(a)) => a,
        Some(v) => return Err(format!("field 'audio_config' has the wrong type: expected an object with the audio encoder's widths, got {v}")),
    };
    let p = "audio_config.";
    let need = |names: &[&str], what: &str| -> Result<u64, String> {
        pick(a, names, p)?.map(|(v, _)| v).ok_or_else(|| format!("missing field '{p}{}' ({what})", names[0]))
    };
    let layers = need(&["num_hidden_layers", "encoder_layers"], "the audio encoder's blocks")?;
    let hidden = need(&["hidden_size", "d_model"], "the audio encoder's width")?;
    let heads = need(&["num_attention_heads", "encoder_attention_heads"], "its heads")?;
    if heads == 0 || hidden % heads != 0 {
        return Err(format!("field '{p}num_attention_heads' = {heads} must divide the audio width {hidden}"));
    }
    let ffn = need(&["intermediate_size", "encoder_ffn_dim"], "its MLP width")?;
    let mel = opt_u64(a, "num_mel_bins", p)?.unwrap_or(128);
    let frames = opt_u64(a, "max_source_positions", p)?.unwrap_or(1500);
    let mut d = crate::model::audio::AudioDesc::whisper(layers, hidden, heads, ffn, mel, frames);
    let projector = if model_type == "voxtral" {
        // VoxtralMultiModalProjector: 4 frames concatenated (audio intermediate_size wide) ->
        // text width -> text width, no biases.
        d.projector_in = ffn;
        d.projector_hidden = text_hidden;
        d.projector_out = text_hidden;
        d.projector_bias = false;
        format!("two linears {ffn} -> {text_hidden} -> {text_hidden} (4 frames per token)")
    } else if let Some(out) = opt_u64(a, "output_dim", p)? {
        d.projector_out = out;
        let audio_type = a.get("model_type").and_then(Value::as_str).unwrap_or("");
        if matches!(audio_type, "qwen2_5_omni_audio_encoder" | "qwen2_audio_encoder") || matches!(model_type, "qwen2_5_omni" | "qwen2_5_omni_thinker" | "qwen2_audio") {
            // transformers Qwen2_5OmniAudioEncoder / Qwen2AudioEncoder: AvgPool1d(2, stride 2)
            // after the blocks, then ln_post and proj; Qwen2.5-Omni's positions are sinusoids.
            d.pool = 2;
            d.sinusoidal_positions = audio_type == "qwen2_5_omni_audio_encoder" || model_type.starts_with("qwen2_5_omni");
            format!("2 frames averaged into each token (avg_pooler, {} tokens per 30 s), then one linear to output_dim {out}", frames / 2)
        } else {
            if audio_type == "qwen3_omni_moe_audio_encoder" {
                approx.push(format!("audio tower ({model_type}): Qwen3-Omni's audio encoder (its 2-D convolution downsampling stem and windowed attention) is read as a Whisper-style encoder of the same blocks over {frames} frames per 30 s; its stem and its tokens per second are not its own"));
            }
            format!("one linear to output_dim {out}")
        }
    } else {
        d.projector_out = text_hidden;
        format!("one linear to the language model's {text_hidden}")
    };
    approx.push(format!(
        "audio tower ({model_type}): a Whisper-style encoder of {layers} blocks {hidden} wide over {frames} frames per 30 s from audio_config, projector as {projector}; counted and held in memory, not priced per request (requests carry text and images only)"
    ));
    Ok(Some(d))
}

//! Qwen's vision-language configs (issue 22, section 7): Qwen2.5-VL and Qwen3-VL (a ViT over
//! 14- or 16-pixel patches, 2 x 2 patches merged into one LLM token by an MLP), and the thinker
//! of Qwen2.5-Omni read for its language model (text-only prompts).
//!
//! Field names follow transformers' Qwen2_5_VLVisionConfig / Qwen3VLVisionConfig (`depth`,
//! `hidden_size`, `intermediate_size`, `num_heads`, `patch_size`, `spatial_merge_size`,
//! `out_hidden_size`, `in_channels`/`in_chans`, `hidden_act`) and Qwen2_5OmniConfig
//! (`thinker_config.text_config`).
//!
//! What is modelled: every ViT block as full bidirectional attention over the image's patches
//! (Qwen2.5-VL attends within 112-pixel windows in all but its `fullatt_block_indexes`, so this
//! is an upper bound on its attention work, which is a small share at the default image size),
//! Qwen2.5-VL's SwiGLU MLP and RMSNorm (silu) or Qwen3-VL's GELU MLP and LayerNorm, and the
//! patch merger (Linear(4h, 4h), GELU, Linear(4h, text hidden)) on one row per LLM token.
//! Qwen3-VL's DeepStack: one more merger of the same shape per `deepstack_visual_indexes` entry
//! (`VisionDesc::deepstack`), fed from that ViT block; adding its output to an early LLM
//! layer's hidden states is an elementwise add, not costed.
//! Not modelled: video (temporal patches), Qwen3-VL's learned position embeddings
//! (`num_position_embeddings` x hidden, 2.4M parameters in the 4B, interpolated per image).

use super::{MlpKind, NormKind, TransformerDesc, VisionDesc};
use serde_json::{Map, Value};

type Obj = Map<String, Value>;

/// Pixels per side of the image a request carries when the scenario names none: the towers
/// take any resolution (min_pixels / max_pixels in the processor); 448 x 448 is 1,024 patches
/// of 14 pixels, 256 LLM tokens (assumption: a mid-size image; `deployment.serving.image_size`
/// sets it).
pub const DEFAULT_IMAGE_SIZE: u64 = 448;

fn num(obj: &Obj, key: &str, p: &str) -> Result<Option<u64>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_u64().filter(|n| *n > 0 && *n <= 1 << 20).map(Some).ok_or_else(|| format!("field '{p}{key}' must be a positive whole number, got {v}")),
    }
}

fn req(obj: &Obj, key: &str, p: &str) -> Result<u64, String> {
    num(obj, key, p)?.ok_or_else(|| format!("missing field '{p}{key}'"))
}

/// The vision tower of a Qwen2.5-VL / Qwen3-VL config, feeding an LLM of width `text_hidden`.
pub fn qwen_vision(vis: &Obj, text_hidden: u64, warnings: &mut Vec<String>) -> Result<VisionDesc, String> {
    let p = "vision_config.";
    let hidden = req(vis, "hidden_size", p)?;
    let heads = req(vis, "num_heads", p)?;
    if hidden % heads != 0 {
        return Err(format!("field '{p}num_heads' = {heads} must divide '{p}hidden_size' = {hidden}"));
    }
    let act = vis.get("hidden_act").and_then(Value::as_str).unwrap_or("silu");
    // Qwen2.5-VL: gated (gate/up/down) MLP with SiLU and RMSNorm; Qwen3-VL: fc1/fc2 with GELU
    // and LayerNorm.
    let (mlp, norm) = if act == "silu" { (MlpKind::SwiGlu, NormKind::RmsNorm) } else { (MlpKind::Gelu, NormKind::LayerNorm) };
    let out = num(vis, "out_hidden_size", p)?.unwrap_or(text_hidden);
    if out != text_hidden {
        warnings.push(format!("{p}out_hidden_size {out} differs from the language model's hidden size {text_hidden}: the merger is costed into {text_hidden}"));
    }
    let merge = num(vis, "spatial_merge_size", p)?.unwrap_or(2);
    let patch = req(vis, "patch_size", p)?;
    let channels = match num(vis, "in_channels", p)? {
        Some(c) => c,
        None => num(vis, "in_chans", p)?.unwrap_or(3),
    };
    let depth = req(vis, "depth", p)?;
    let encoder = TransformerDesc::vision_tower(depth, hidden, heads, req(vis, "intermediate_size", p)?, mlp, norm, 1 << 16);
    let deepstack = deepstack(vis, depth, p)?;
    // Qwen2.5-VL attends within windows in most blocks (`fullatt_block_indexes` lists the
    // others); Qwen3-VL's blocks all attend over the whole image.
    let attention = if vis.contains_key("fullatt_block_indexes") || vis.contains_key("window_size") { "windowed attention costed as full" } else { "full attention in every block" };
    warnings.push(format!(
        "dynamic-resolution vision tower: by default each request carries one {DEFAULT_IMAGE_SIZE} x {DEFAULT_IMAGE_SIZE} image ({} patches, {} LLM tokens; deployment.serving.image_size sets it); {attention}",
        (DEFAULT_IMAGE_SIZE / patch).pow(2),
        (DEFAULT_IMAGE_SIZE / patch).pow(2) / (merge * merge)
    ));
    Ok(VisionDesc { encoder, image_size: DEFAULT_IMAGE_SIZE, patch_size: patch, channels, projector_hidden: hidden * merge * merge, merge, class_token: false, deepstack, images: 1 })
}

/// Qwen3-VL's DeepStack mergers: one per `deepstack_visual_indexes` entry, each a ViT block
/// index below `depth` (0 when the field is absent).
fn deepstack(vis: &Obj, depth: u64, p: &str) -> Result<u64, String> {
    let key = "deepstack_visual_indexes";
    let list = match vis.get(key) {
        None | Some(Value::Null) => return Ok(0),
        Some(Value::Array(a)) => a,
        Some(v) => return Err(format!("field '{p}{key}' must be a list of block indexes, got {v}")),
    };
    for v in list {
        if !v.as_u64().is_some_and(|i| i < depth) {
            return Err(format!("field '{p}{key}' lists {v}: each entry must be a block index below '{p}depth' = {depth}"));
        }
    }
    Ok(list.len() as u64)
}

/// The text model's object of a Qwen VL config: `text_config` (transformers >= 4.53 saves it
/// there) or the top level (the checkpoints' own config.json).
pub fn text_object(obj: &Obj) -> (&Obj, &'static str) {
    match obj.get("text_config").and_then(Value::as_object) {
        Some(t) => (t, "text_config."),
        None => (obj, ""),
    }
}

/// Qwen2.5-Omni's thinker: its language model's config (`thinker_config.text_config`).
pub fn omni_thinker_text(obj: &Obj) -> Result<&Obj, String> {
    obj.get("thinker_config")
        .and_then(Value::as_object)
        .ok_or_else(|| "missing field 'thinker_config'".to_string())?
        .get("text_config")
        .and_then(Value::as_object)
        .ok_or_else(|| "missing field 'thinker_config.text_config'".to_string())
}

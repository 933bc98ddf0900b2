//! Hugging Face encoders: BERT-style bidirectional encoders and the CLIP vision tower of LLaVA
//! configs (split from `model/hf.rs`, unchanged).

use super::hf::{opt_u64, req_u64};
use super::{MlpKind, NormKind, TransformerDesc};
use serde_json::{Map, Value};

type Obj = Map<String, Value>;

/// A BERT-style bidirectional encoder (BertModel, XLMRobertaModel): post-LayerNorm blocks with
/// biased projections, GELU MLP, token + position + type embeddings, a pooler instead of an LM
/// head.
pub(super) fn encoder(obj: &Obj, warnings: &mut Vec<String>) -> Result<TransformerDesc, String> {
    let hidden = req_u64(obj, "hidden_size", "")?;
    let heads = req_u64(obj, "num_attention_heads", "")?;
    if heads == 0 || hidden % heads != 0 {
        return Err(format!("field 'num_attention_heads' = {heads} must divide 'hidden_size' = {hidden}"));
    }
    let act = obj.get("hidden_act").and_then(Value::as_str).unwrap_or("gelu");
    if !act.starts_with("gelu") {
        warnings.push(format!("hidden_act '{act}': costed as GELU"));
    }
    Ok(TransformerDesc {
        layers: req_u64(obj, "num_hidden_layers", "")?,
        hidden,
        heads,
        kv_heads: heads,
        head_dim: hidden / heads,
        intermediate: req_u64(obj, "intermediate_size", "")?,
        vocab: req_u64(obj, "vocab_size", "")?,
        tied_embeddings: true,
        mlp: MlpKind::Gelu,
        norm: NormKind::LayerNorm,
        qkv_bias: true,
        max_position: opt_u64(obj, "max_position_embeddings", "")?.unwrap_or(512),
        moe: None,
        qk_norm: false,
        sliding_window: None,
        mla: None,
        linear_attention: None,
        encoder: true,
        ..TransformerDesc::default()
    })
}

/// Parses a CLIP vision tower config (LlavaConfig.vision_config).
pub(super) fn clip_vision(obj: &Obj) -> Result<(TransformerDesc, u64, u64, u64), String> {
    let p = "vision_config.";
    let hidden = req_u64(obj, "hidden_size", p)?;
    let heads = req_u64(obj, "num_attention_heads", p)?;
    if heads == 0 || hidden % heads != 0 {
        return Err(format!(
            "field '{p}num_attention_heads' = {heads} must divide '{p}hidden_size' = {hidden}"
        ));
    }
    let enc = TransformerDesc::vision_tower(req_u64(obj, "num_hidden_layers", p)?, hidden, heads, req_u64(obj, "intermediate_size", p)?, MlpKind::Gelu, NormKind::LayerNorm, 4096);
    let image = req_u64(obj, "image_size", p)?;
    let patch = req_u64(obj, "patch_size", p)?;
    let channels = opt_u64(obj, "num_channels", p)?.unwrap_or(3);
    Ok((enc, image, patch, channels))
}

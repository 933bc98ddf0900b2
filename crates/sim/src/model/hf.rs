//! Hugging Face `config.json` -> `ModelDesc`.
//!
//! Field names follow the `transformers` configuration classes (LlamaConfig, MistralConfig,
//! Qwen2Config, Qwen3Config, MixtralConfig, Qwen2MoeConfig, Qwen3MoeConfig, LlavaConfig,
//! CLIPVisionConfig). Sizes must be positive integers: a float, a negative number or a string is
//! rejected with the field's name rather than truncated.

use super::{
    LoadedModel, MlpKind, ModelDesc, ModelFamily, MoeDesc, NormKind, TransformerDesc, VisionDesc,
};
use crate::dtype::DType;
use serde_json::{Map, Value};

type Obj = Map<String, Value>;

/// Reads an optional non-negative integer field; `prefix` names the nesting in messages.
fn opt_u64(obj: &Obj, field: &str, prefix: &str) -> Result<Option<u64>, String> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            if let Some(v) = n.as_u64() {
                Ok(Some(v))
            } else if n.as_i64().is_some() {
                Err(format!("field '{prefix}{field}' = {n} must not be negative"))
            } else {
                Err(format!("field '{prefix}{field}' = {n} must be an integer"))
            }
        }
        Some(other) => Err(format!("field '{prefix}{field}' must be an integer, got {other}")),
    }
}

fn req_u64(obj: &Obj, field: &str, prefix: &str) -> Result<u64, String> {
    opt_u64(obj, field, prefix)?.ok_or_else(|| format!("missing field '{prefix}{field}'"))
}

fn opt_bool(obj: &Obj, field: &str) -> Option<bool> {
    obj.get(field).and_then(Value::as_bool)
}

/// The checkpoint dtype (`torch_dtype`, or `dtype` in newer configs).
fn dtype_of(obj: &Obj, warnings: &mut Vec<String>) -> DType {
    let s = obj.get("torch_dtype").or_else(|| obj.get("dtype")).and_then(Value::as_str);
    match s.map(DType::parse) {
        Some(Ok(d)) => d,
        Some(Err(e)) => {
            warnings.push(format!("{e}; assuming bf16"));
            DType::Bf16
        }
        None => {
            warnings.push("no torch_dtype given; assuming bf16".into());
            DType::Bf16
        }
    }
}

/// Model types read exactly; anything else is read with the same field names and a warning.
const KNOWN: [&str; 7] = ["llama", "mistral", "qwen2", "qwen3", "mixtral", "qwen2_moe", "qwen3_moe"];

/// Parses a decoder-only config (one of `KNOWN`, or an unknown type with the usual fields).
fn decoder(obj: &Obj, prefix: &str, warnings: &mut Vec<String>) -> Result<TransformerDesc, String> {
    let model_type = obj.get("model_type").and_then(Value::as_str).unwrap_or("");
    if !KNOWN.contains(&model_type) {
        let shown = if model_type.is_empty() { "(none)" } else { model_type };
        warnings.push(format!(
            "unknown model_type '{shown}': modelled as a standard decoder (attention + MLP) from \
             the usual config fields; check the parameter count"
        ));
    }
    let hidden = req_u64(obj, "hidden_size", prefix)?;
    let layers = req_u64(obj, "num_hidden_layers", prefix)?;
    let heads = req_u64(obj, "num_attention_heads", prefix)?;
    let vocab = req_u64(obj, "vocab_size", prefix)?;
    if heads == 0 {
        return Err(format!("field '{prefix}num_attention_heads' = 0 is out of range"));
    }
    let kv_heads = opt_u64(obj, "num_key_value_heads", prefix)?.unwrap_or(heads);
    let head_dim = match opt_u64(obj, "head_dim", prefix)? {
        Some(d) => d,
        None if hidden % heads == 0 => hidden / heads,
        None => {
            return Err(format!(
                "field '{prefix}hidden_size' = {hidden} is not divisible by \
                 '{prefix}num_attention_heads' = {heads} and no head_dim is given"
            ))
        }
    };
    // Qwen2 (and Qwen2-MoE) put a bias on q/k/v unconditionally; others say so explicitly.
    let qkv_bias = opt_bool(obj, "attention_bias")
        .unwrap_or(matches!(model_type, "qwen2" | "qwen2_moe"));
    let tied = opt_bool(obj, "tie_word_embeddings").unwrap_or(false);
    let max_position = opt_u64(obj, "max_position_embeddings", prefix)?.unwrap_or(4096);
    let dense_inter = opt_u64(obj, "intermediate_size", prefix)?;

    // Mixtral: num_local_experts; Qwen MoE: num_experts; DeepSeek: n_routed_experts.
    let mut experts = None;
    for field in ["num_local_experts", "num_experts", "n_routed_experts"] {
        if experts.is_none() {
            experts = opt_u64(obj, field, prefix)?;
        }
    }
    let moe = match experts {
        Some(experts) if experts > 1 => {
            let top_k = req_u64(obj, "num_experts_per_tok", prefix)?;
            // Mixtral sizes experts with intermediate_size; the Qwen MoEs with moe_intermediate_size.
            let expert_intermediate = match opt_u64(obj, "moe_intermediate_size", prefix)? {
                Some(v) => v,
                None => dense_inter
                    .ok_or_else(|| format!("missing field '{prefix}moe_intermediate_size'"))?,
            };
            let shared_intermediate = match opt_u64(obj, "shared_expert_intermediate_size", prefix)? {
                Some(v) => v,
                // DeepSeek: n_shared_experts experts of the routed width.
                None => opt_u64(obj, "n_shared_experts", prefix)?
                    .unwrap_or(0)
                    .saturating_mul(expert_intermediate),
            };
            // Qwen MoE: `mlp_only_layers` lists dense layers; `decoder_sparse_step` = s makes
            // every s-th layer sparse.
            let listed = obj
                .get("mlp_only_layers")
                .and_then(Value::as_array)
                .map_or(0, |a| a.len() as u64);
            let step = opt_u64(obj, "decoder_sparse_step", prefix)?.unwrap_or(1).max(1);
            let sparse_by_step = layers / step;
            let first_dense = opt_u64(obj, "first_k_dense_replace", prefix)?.unwrap_or(0);
            let dense_layers = layers
                .saturating_sub(sparse_by_step)
                .saturating_add(listed)
                .saturating_add(first_dense)
                .min(layers);
            Some(MoeDesc {
                experts,
                top_k,
                expert_intermediate,
                shared_intermediate,
                // Qwen2-MoE scales its shared expert by a sigmoid gate; DeepSeek does not.
                shared_gate: obj.contains_key("shared_expert_intermediate_size"),
                dense_layers,
            })
        }
        _ => None,
    };
    let intermediate = match (&moe, dense_inter) {
        (_, Some(v)) => v,
        (Some(_), None) => 0,
        (None, None) => return Err(format!("missing field '{prefix}intermediate_size'")),
    };
    if obj.contains_key("kv_lora_rank") || obj.contains_key("q_lora_rank") {
        warnings.push(
            "multi-head latent attention (kv_lora_rank) is not modelled: attention is costed as \
             grouped-query attention"
                .into(),
        );
    }
    if let Some(Value::Number(w)) = obj.get("sliding_window") {
        if opt_bool(obj, "use_sliding_window").unwrap_or(model_type == "mistral") {
            warnings.push(format!("sliding-window attention ({w}) is not modelled: full attention"));
        }
    }
    // Every supported decoder uses a gated (SwiGLU-style) MLP; say so if the config hints otherwise.
    let act = obj.get("hidden_act").and_then(Value::as_str).unwrap_or("silu");
    if act != "silu" {
        warnings.push(format!("hidden_act '{act}': costed as a gated MLP like SwiGLU"));
    }
    let mlp = MlpKind::SwiGlu;
    Ok(TransformerDesc {
        layers,
        hidden,
        heads,
        kv_heads,
        head_dim,
        intermediate,
        vocab,
        tied_embeddings: tied,
        mlp,
        norm: NormKind::RmsNorm,
        qkv_bias,
        max_position,
        moe,
    })
}

/// Parses a CLIP vision tower config (LlavaConfig.vision_config).
fn clip_vision(obj: &Obj) -> Result<(TransformerDesc, u64, u64, u64), String> {
    let p = "vision_config.";
    let hidden = req_u64(obj, "hidden_size", p)?;
    let heads = req_u64(obj, "num_attention_heads", p)?;
    if heads == 0 || hidden % heads != 0 {
        return Err(format!(
            "field '{p}num_attention_heads' = {heads} must divide '{p}hidden_size' = {hidden}"
        ));
    }
    let enc = TransformerDesc {
        layers: req_u64(obj, "num_hidden_layers", p)?,
        hidden,
        heads,
        kv_heads: heads,
        head_dim: hidden / heads,
        intermediate: req_u64(obj, "intermediate_size", p)?,
        vocab: 0,
        tied_embeddings: false,
        mlp: MlpKind::Gelu,
        norm: NormKind::LayerNorm,
        qkv_bias: true,
        max_position: 4096,
        moe: None,
    };
    let image = req_u64(obj, "image_size", p)?;
    let patch = req_u64(obj, "patch_size", p)?;
    let channels = opt_u64(obj, "num_channels", p)?.unwrap_or(3);
    Ok((enc, image, patch, channels))
}

fn name_of(obj: &Obj, fallback: &str) -> String {
    obj.get("_name_or_path")
        .or_else(|| obj.get("name"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            obj.get("architectures")
                .and_then(Value::as_array)
                .and_then(|a| a.first())
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| fallback.to_string())
}

/// Loads a Hugging Face config (decoder-only LLM, MoE LLM, or LLaVA-style multimodal).
pub fn load_hf(obj: &Obj) -> Result<LoadedModel, String> {
    let mut warnings = Vec::new();
    let dtype = dtype_of(obj, &mut warnings);
    let model_type = obj.get("model_type").and_then(Value::as_str).unwrap_or("");
    if model_type == "llava" {
        let text = obj
            .get("text_config")
            .and_then(Value::as_object)
            .ok_or_else(|| "missing field 'text_config'".to_string())?;
        let vis = obj
            .get("vision_config")
            .and_then(Value::as_object)
            .ok_or_else(|| "missing field 'vision_config'".to_string())?;
        let mut tw = Vec::new();
        let mut llm = decoder(text, "text_config.", &mut tw)?;
        warnings.extend(tw.into_iter().map(|w| format!("text_config: {w}")));
        if let Some(v) = opt_u64(obj, "vocab_size", "")? {
            llm.vocab = v;
        }
        let (encoder, image_size, patch_size, channels) = clip_vision(vis)?;
        // LLaVA-1.5 projector: Linear(vision_hidden, text_hidden), GELU, Linear(text, text).
        let projector_hidden = llm.hidden;
        let model = ModelDesc {
            name: name_of(obj, "llava"),
            family: ModelFamily::Multimodal,
            dtype,
            llm: Some(llm),
            vision: Some(VisionDesc { encoder, image_size, patch_size, channels, projector_hidden }),
            graph: Vec::new(),
        };
        return Ok(LoadedModel { model, warnings });
    }
    let llm = decoder(obj, "", &mut warnings)?;
    let family = if llm.moe.is_some() { ModelFamily::MoeLlm } else { ModelFamily::DenseLlm };
    let model = ModelDesc {
        name: name_of(obj, if model_type.is_empty() { "model" } else { model_type }),
        family,
        dtype,
        llm: Some(llm),
        vision: None,
        graph: Vec::new(),
    };
    Ok(LoadedModel { model, warnings })
}

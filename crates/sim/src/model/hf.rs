//! Hugging Face `config.json` -> `ModelDesc`.
//!
//! Field names follow the `transformers` configuration classes (LlamaConfig, MistralConfig,
//! Qwen2Config, Qwen3Config, MixtralConfig, Qwen2MoeConfig, Qwen3MoeConfig, LlavaConfig,
//! CLIPVisionConfig). Sizes must be positive integers: a float, a negative number or a string is
//! rejected with the field's name rather than truncated.

use super::{
    LinearAttention, LoadedModel, MlaDesc, MlpKind, ModelDesc, ModelFamily, MoeDesc, NormKind, SlidingWindow,
    TransformerDesc, VisionDesc,
};
use super::hf_encoders::{clip_vision, encoder};
pub use super::hf_keys::SUPPORTED_TYPES;
use super::hf_keys::{ENCODERS, IGNORED, KNOWN, READ, TEXT_WRAPPERS};
use crate::dtype::DType;
use serde_json::{Map, Value};

type Obj = Map<String, Value>;

/// Reads an optional non-negative integer field; `prefix` names the nesting in messages.
pub(super) fn opt_u64(obj: &Obj, field: &str, prefix: &str) -> Result<Option<u64>, String> {
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

pub(super) fn req_u64(obj: &Obj, field: &str, prefix: &str) -> Result<u64, String> {
    opt_u64(obj, field, prefix)?.ok_or_else(|| format!("missing field '{prefix}{field}'"))
}

pub(super) fn opt_bool(obj: &Obj, field: &str) -> Option<bool> {
    obj.get(field).and_then(Value::as_bool)
}

/// The checkpoint dtype (`torch_dtype`, or `dtype` in newer configs).
pub(super) fn dtype_of(obj: &Obj, warnings: &mut Vec<String>) -> DType {
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

/// The first of `names` present (a config family's own spelling), with the name found.
pub(super) fn pick<'a>(obj: &Obj, names: &[&'a str], prefix: &str) -> Result<Option<(u64, &'a str)>, String> {
    for n in names {
        if let Some(v) = opt_u64(obj, n, prefix)? {
            return Ok(Some((v, n)));
        }
    }
    Ok(None)
}

pub(super) fn req_any(obj: &Obj, names: &[&str], prefix: &str) -> Result<u64, String> {
    pick(obj, names, prefix)?.map(|(v, _)| v).ok_or_else(|| {
        let alts: Vec<String> = names.iter().map(|n| format!("'{prefix}{n}'")).collect();
        format!("missing field {}", alts.join(" or "))
    })
}

/// Parses a decoder-only config (one of `KNOWN`, or an unknown type with the usual fields).
pub(super) fn decoder(original: &Obj, prefix: &str, warnings: &mut Vec<String>) -> Result<TransformerDesc, String> {
    let model_type = original.get("model_type").and_then(Value::as_str).unwrap_or("");
    // A family's newer spelling of a per-layer list, rewritten into the one its reader reads.
    let upgraded = super::readers::upgrade(original, model_type, prefix)?;
    let original = upgraded.as_ref().unwrap_or(original);
    let normalized = super::readers::normalize(original, model_type, warnings)?;
    let obj = normalized.as_ref().unwrap_or(original);
    let generic = !KNOWN.contains(&model_type) && !super::readers::is_family(model_type);
    if generic {
        let shown = if model_type.is_empty() { "(none)" } else { model_type };
        warnings.push(format!(
            "unknown model_type '{shown}': modelled as a standard decoder (attention + MLP) from \
             the usual config fields; check the parameter count"
        ));
    }
    let mut t = decoder_fields(obj, model_type, prefix, warnings).map_err(|e| {
        if generic && e.starts_with("missing field") {
            let shown = if model_type.is_empty() { "(none)" } else { model_type };
            format!("model_type '{shown}' is not an architecture Tunelab reads (no reader of its own), and as a standard decoder it lacks a {}: supported families are listed in docs/models.md", &e["missing ".len()..])
        } else {
            e
        }
    })?;
    if generic {
        let shown = if model_type.is_empty() { "(none)" } else { model_type };
        t.approx.push(format!("whole model: model_type '{shown}' has no reader of its own; read as a standard decoder (attention + MLP per layer) from the usual fields"));
    }
    super::readers::finish(original, &mut t, model_type, prefix, warnings)?;
    Ok(t)
}

/// The fields every decoder family shares, under their usual names.
fn decoder_fields(obj: &Obj, model_type: &str, prefix: &str, warnings: &mut Vec<String>) -> Result<TransformerDesc, String> {
    let mut unknown: Vec<&str> =
        obj.keys().map(String::as_str).filter(|k| !READ.contains(k) && !IGNORED.contains(k)).collect();
    unknown.truncate(12);
    if !unknown.is_empty() {
        warnings.push(format!(
            "{prefix}config keys not modelled (check they do not change the model's size): {}",
            unknown.join(", ")
        ));
    }
    let hidden = req_u64(obj, "hidden_size", prefix)?;
    // ChatGLM spells layers, MLP width, vocabulary and context its own way.
    let layers = req_any(obj, &["num_hidden_layers", "num_layers"], prefix)?;
    let heads = req_u64(obj, "num_attention_heads", prefix)?;
    let vocab = req_any(obj, &["vocab_size", "padded_vocab_size"], prefix)?;
    if heads == 0 {
        return Err(format!("field '{prefix}num_attention_heads' = 0 is out of range"));
    }
    // ChatGLM: multi_query_group_num KV groups when multi_query_attention is on.
    let kv_heads = match opt_u64(obj, "num_key_value_heads", prefix)? {
        Some(v) => v,
        None if opt_bool(obj, "multi_query_attention").unwrap_or(false) => {
            req_u64(obj, "multi_query_group_num", prefix)?
        }
        None => heads,
    };
    let head_dim = match pick(obj, &["head_dim", "kv_channels"], prefix)? {
        Some((d, _)) => d,
        None if hidden % heads == 0 => hidden / heads,
        // Multi-head latent attention sizes its heads by qk_nope + qk_rope (Kimi K3: 96 heads
        // over 7168); head_dim is not used by it.
        None if opt_u64(obj, "kv_lora_rank", prefix)?.is_some_and(|r| r > 0) => {
            opt_u64(obj, "qk_nope_head_dim", prefix)?.unwrap_or(128) + opt_u64(obj, "qk_rope_head_dim", prefix)?.unwrap_or(64)
        }
        None => {
            return Err(format!(
                "field '{prefix}hidden_size' = {hidden} is not divisible by \
                 '{prefix}num_attention_heads' = {heads} and no head_dim is given"
            ))
        }
    };
    // Qwen (v1, c_attn), Qwen2 and Qwen2-MoE put a bias on q/k/v unconditionally; ChatGLM says
    // add_qkv_bias; Qwen3-Coder's config qkv_bias; others attention_bias.
    let qkv_bias = opt_bool(obj, "attention_bias")
        .or_else(|| opt_bool(obj, "add_qkv_bias"))
        .or_else(|| opt_bool(obj, "qkv_bias"))
        .unwrap_or(matches!(model_type, "qwen" | "qwen2" | "qwen2_moe" | "mimo"));
    let tied = opt_bool(obj, "tie_word_embeddings").unwrap_or(false);
    // ChatGLM and Qwen (v1) train at seq_length; Baichuan names it model_max_length.
    let max_position = pick(obj, &["max_position_embeddings", "seq_length", "model_max_length"], prefix)?
        .map_or(4096, |(v, _)| v);
    let mut dense_inter = pick(obj, &["intermediate_size", "ffn_hidden_size"], prefix)?.map(|(v, _)| v);
    if model_type == "qwen" {
        // Qwen (v1) gives twice the MLP width: w1 and w2 each take intermediate_size / 2.
        dense_inter = dense_inter.map(|v| v / 2);
    }

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
            // Shared experts under every name the families use: a width (Qwen2-MoE, Nemotron
            // 3), or a count of routed-width experts (DeepSeek / GLM / Kimi `n_shared_experts`,
            // Ling `num_shared_experts`, ERNIE `moe_num_shared_experts`).
            let shared_intermediate = match pick(obj, &["shared_expert_intermediate_size", "moe_shared_expert_intermediate_size"], prefix)? {
                Some((v, _)) => v,
                None => pick(obj, &["n_shared_experts", "num_shared_experts", "moe_num_shared_experts"], prefix)?
                    .map_or(0, |(v, _)| v)
                    .saturating_mul(expert_intermediate),
            };
            // Qwen MoE: `mlp_only_layers` lists dense layers; `decoder_sparse_step` = s makes
            // every s-th layer sparse; DeepSeek: the first `first_k_dense_replace` layers are
            // dense and then every `moe_layer_freq`-th.
            let listed = obj
                .get("mlp_only_layers")
                .and_then(Value::as_array)
                .map_or(0, |a| a.len() as u64);
            // A per-layer 0/1 `moe_layer_freq` list (MiMo-V2) is read by `readers::layers`.
            let freq: &[&str] = if obj.get("moe_layer_freq").is_some_and(Value::is_array) { &["decoder_sparse_step"] } else { &["decoder_sparse_step", "moe_layer_freq"] };
            let step = pick(obj, freq, prefix)?
                .map_or(1, |(v, _)| v)
                .max(1);
            let first_dense = opt_u64(obj, "first_k_dense_replace", prefix)?.unwrap_or(0);
            let sparse_by_step = layers.saturating_sub(first_dense) / step;
            let dense_layers = layers
                .saturating_sub(sparse_by_step)
                .saturating_add(listed)
                .min(layers);
            Some(MoeDesc {
                experts,
                top_k,
                expert_intermediate,
                shared_intermediate,
                // Qwen2-MoE scales its shared expert by a sigmoid gate; DeepSeek does not.
                shared_gate: obj.contains_key("shared_expert_intermediate_size"),
                dense_layers,
                latent: 0,
            })
        }
        _ => None,
    };
    let intermediate = match (&moe, dense_inter) {
        (_, Some(v)) => v,
        (Some(_), None) => 0,
        (None, None) => return Err(format!("missing field '{prefix}intermediate_size'")),
    };
    let mla = if obj.contains_key("kv_lora_rank") {
        let m = MlaDesc {
            q_lora_rank: opt_u64(obj, "q_lora_rank", prefix)?.unwrap_or(0),
            kv_lora_rank: req_u64(obj, "kv_lora_rank", prefix)?,
            qk_nope_head_dim: req_u64(obj, "qk_nope_head_dim", prefix)?,
            qk_rope_head_dim: req_u64(obj, "qk_rope_head_dim", prefix)?,
            v_head_dim: req_u64(obj, "v_head_dim", prefix)?,
            sparse: crate::workload::sparse_attention::DsaDesc::from_hf_object(obj, prefix, max_position)?,
        };
        Some(m)
    } else {
        if obj.contains_key("index_topk") {
            return Err(format!("field '{prefix}index_topk': sparse attention is modelled on multi-head latent attention, and this config has no '{prefix}kv_lora_rank'"));
        }
        None
    };
    // With MLA the attention core works on (nope + rope) query/key and v_head_dim values; its
    // head_dim is their mean, which gives the two matmuls' FLOPs exactly.
    let head_dim = match &mla {
        Some(m) => (m.qk_dim() + m.v_head_dim).div_ceil(2),
        None => head_dim,
    };
    let sliding_window = match obj.get("sliding_window") {
        Some(Value::Number(_)) => {
            let w = req_u64(obj, "sliding_window", prefix)?;
            // Mistral always slides; Qwen2 only with use_sliding_window, and then only in the
            // layers from max_window_layers on.
            let on = opt_bool(obj, "use_sliding_window").unwrap_or(model_type == "mistral");
            let full = if model_type == "mistral" { 0 } else { opt_u64(obj, "max_window_layers", prefix)?.unwrap_or(0) };
            let sliding = layers.saturating_sub(full);
            if on && w > 0 && sliding > 0 {
                Some(SlidingWindow { window: w, layers: sliding })
            } else {
                None
            }
        }
        _ => None,
    };
    // Every supported decoder uses a gated (SwiGLU-style) MLP; say so if the config hints otherwise.
    let act = obj.get("hidden_act").and_then(Value::as_str).unwrap_or("silu");
    if act != "silu" && act != "swiglu" {
        warnings.push(format!("hidden_act '{act}': costed as a gated MLP like SwiGLU"));
    }
    if model_type == "baichuan" && hidden >= 5120 {
        warnings.push(
            "Baichuan-13B attends with ALiBi position biases: costed as flash attention with \
             rotary embeddings (the same matmul work)"
                .into(),
        );
    }
    // The checkpoint's MTP layers: the draft of speculative decoding's "mtp" method.
    let mtp_layers = crate::workload::mtp::MtpDesc::from_hf_object(obj)?.map_or(0, |m| m.layers);
    let linear_attention = linear_attention(obj, layers, prefix)?;
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
        qk_norm: matches!(model_type, "qwen3" | "qwen3_moe" | "qwen3_vl" | "qwen3_vl_text"),
        sliding_window,
        mla,
        linear_attention,
        encoder: false,
        attn_output_gate: opt_bool(obj, "attn_output_gate").unwrap_or(false),
        mtp_layers,
        ..TransformerDesc::default()
    })
}

/// The linear-attention layers of a hybrid config (Qwen3-Next, Qwen3.5): counted from
/// `layer_types` ("linear_attention" / "full_attention"), else from `full_attention_interval`
/// (every n-th layer full); None when the config has no `linear_*` widths.
fn linear_attention(obj: &Obj, layers: u64, prefix: &str) -> Result<Option<LinearAttention>, String> {
    let Some(key_heads) = opt_u64(obj, "linear_num_key_heads", prefix)? else { return Ok(None) };
    let lin = match obj.get("layer_types") {
        Some(Value::Array(a)) => {
            if a.len() as u64 != layers {
                return Err(format!("field '{prefix}layer_types' lists {} layers, but '{prefix}num_hidden_layers' = {layers}", a.len()));
            }
            let mut n = 0;
            for (i, t) in a.iter().enumerate() {
                match t.as_str() {
                    Some("linear_attention") => n += 1,
                    Some("full_attention") | Some("sliding_attention") => {}
                    _ => return Err(format!("field '{prefix}layer_types[{i}]' = {t}: expected \"linear_attention\" or \"full_attention\"")),
                }
            }
            n
        }
        Some(other) => return Err(format!("field '{prefix}layer_types' must be a list, got {other}")),
        None => {
            let every = opt_u64(obj, "full_attention_interval", prefix)?.unwrap_or(4).max(1);
            layers - layers / every
        }
    };
    let la = LinearAttention {
        layers: lin,
        key_heads,
        value_heads: req_u64(obj, "linear_num_value_heads", prefix)?,
        key_head_dim: req_u64(obj, "linear_key_head_dim", prefix)?,
        value_head_dim: req_u64(obj, "linear_value_head_dim", prefix)?,
        conv_kernel: opt_u64(obj, "linear_conv_kernel_dim", prefix)?.unwrap_or(4),
    };
    if la.key_heads == 0 || la.value_heads == 0 || la.key_head_dim == 0 || la.value_head_dim == 0 {
        return Err(format!("fields '{prefix}linear_num_key_heads', 'linear_num_value_heads', 'linear_key_head_dim' and 'linear_value_head_dim' must be positive"));
    }
    if la.value_heads % la.key_heads != 0 {
        return Err(format!("field '{prefix}linear_num_value_heads' = {} must be a multiple of '{prefix}linear_num_key_heads' = {}", la.value_heads, la.key_heads));
    }
    Ok(if lin > 0 { Some(la) } else { None })
}

pub(super) fn name_of(obj: &Obj, fallback: &str) -> String {
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
    // SGLang's DeepSeek-V4 checkpoints name their reference type (`deepseek_ref`) and the
    // architecture DeepseekV4ForCausalLM: the same config, read by the DeepSeek-V4 reader.
    let v4 = obj.get("model_type").and_then(Value::as_str) == Some("deepseek_ref")
        && obj.get("architectures").and_then(Value::as_array).is_some_and(|a| a.iter().any(|x| x.as_str() == Some("DeepseekV4ForCausalLM")));
    if v4 {
        let mut o = obj.clone();
        o.insert("model_type".into(), Value::from("deepseek_v4"));
        let mut l = load_hf(&o)?;
        l.warnings.push("model_type 'deepseek_ref' with architecture DeepseekV4ForCausalLM: read as deepseek_v4".into());
        return Ok(l);
    }
    let mut warnings = Vec::new();
    let dtype = dtype_of(obj, &mut warnings);
    let model_type = obj.get("model_type").and_then(Value::as_str).unwrap_or("");
    if model_type == "llava" {
        let text = super::readers::required_object(obj, "text_config")?;
        let vis = super::readers::required_object(obj, "vision_config")?;
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
            vision: Some(VisionDesc { encoder, image_size, patch_size, channels, projector_hidden, merge: 1, class_token: true, deepstack: 0, images: 1 }),
            graph: Vec::new(),
        };
        return Ok(LoadedModel { model, warnings });
    }
    if matches!(model_type, "qwen2_5_vl" | "qwen3_vl") {
        // A Qwen2 / Qwen3 decoder fed by a ViT whose patches merge 2 x 2 into LLM tokens.
        let (text, prefix) = super::vl::text_object(obj);
        let mut tw = Vec::new();
        let llm = decoder(text, prefix, &mut tw)?;
        warnings.extend(tw.into_iter().filter(|w| !w.contains("config keys not modelled")).map(|w| format!("{prefix}{w}")));
        let vis = super::readers::required_object(obj, "vision_config")?;
        let vision = super::vl::qwen_vision(vis, llm.hidden, &mut warnings)?;
        // Qwen3-VL's checkpoints give the type only in text_config ("dtype").
        let dtype = if obj.contains_key("torch_dtype") || obj.contains_key("dtype") || !(text.contains_key("torch_dtype") || text.contains_key("dtype")) {
            dtype
        } else {
            warnings.retain(|w| !w.contains("torch_dtype"));
            dtype_of(text, &mut warnings)
        };
        let model = ModelDesc { name: name_of(obj, model_type), family: ModelFamily::Multimodal, dtype, llm: Some(llm), vision: Some(vision), graph: Vec::new() };
        return Ok(LoadedModel { model, warnings });
    }
    if model_type == "qwen2_5_omni" {
        // The thinker: its language model, and its vision (Qwen2.5-VL's ViT) and audio
        // (Whisper-style, 2:1 pooled) towers from `thinker_config`, counted and held; requests
        // carry text unless the scenario gives images or audio. The talker (speech out) and
        // token2wav are not costed (a text answer).
        let text = super::vl::omni_thinker_text(obj)?;
        let thinker = obj.get("thinker_config").and_then(Value::as_object).ok_or_else(|| "missing field 'thinker_config'".to_string())?;
        let mut tw = Vec::new();
        let mut llm = decoder(text, "thinker_config.text_config.", &mut tw)?;
        warnings.extend(tw.into_iter().filter(|w| !w.contains("config keys not modelled")).map(|w| format!("thinker_config.text_config: {w}")));
        let vision = match super::readers::object_field(thinker, "vision_config")? {
            Some(vis) => {
                let mut notes = Vec::new();
                let mut v = super::vl::qwen_vision(vis, llm.hidden, &mut notes)?;
                v.images = 0;
                llm.approx.extend(notes.into_iter().filter(|n| !n.contains("each request carries")));
                llm.approx.push(format!("vision tower ({model_type}): counted in the parameters; requests carry no image by default, so it is neither loaded nor priced (deployment.serving.images_per_request sets the images per request)"));
                Some(v)
            }
            None => None,
        };
        let text_hidden = llm.hidden;
        llm.audio = super::readers::towers::audio(thinker, model_type, text_hidden, &mut llm.approx)?.map(Box::new);
        llm.approx.push(format!("{model_type}: the talker (speech output) and token2wav are not costed: the model answers in text"));
        warnings.push(format!("{model_type}: read as its thinker (language model, and the vision and audio towers its thinker_config gives); the talker and token2wav are not costed"));
        let family = if vision.is_some() { ModelFamily::Multimodal } else if llm.moe.is_some() { ModelFamily::MoeLlm } else { ModelFamily::DenseLlm };
        let model = ModelDesc { name: name_of(obj, model_type), family, dtype, llm: Some(llm), vision, graph: Vec::new() };
        return Ok(LoadedModel { model, warnings });
    }
    if ENCODERS.contains(&model_type) {
        // These checkpoints predate torch_dtype: transformers loads them in float32.
        let dtype = if obj.contains_key("torch_dtype") || obj.contains_key("dtype") { dtype } else { warnings.retain(|w| !w.contains("torch_dtype")); DType::Fp32 };
        let llm = encoder(obj, &mut warnings)?;
        let model = ModelDesc { name: name_of(obj, model_type), family: ModelFamily::Encoder, dtype, llm: Some(llm), vision: None, graph: Vec::new() };
        return Ok(LoadedModel { model, warnings });
    }
    if TEXT_WRAPPERS.contains(&model_type) {
        let text = super::readers::required_object(obj, "text_config")?;
        let mut tw = Vec::new();
        let mut llm = decoder(text, "text_config.", &mut tw)?;
        warnings.extend(tw.into_iter().map(|w| format!("text_config: {w}")));
        // The vision tower is read and counted, but requests carry no image unless the
        // scenario says so (`deployment.serving.images_per_request`): the bundled Qwen3.5
        // scenarios are text-only and keep their numbers (the tower is then neither loaded nor
        // priced, `ModelDesc::active_vision`).
        let vision = match super::readers::object_field(obj, "vision_config")? {
            Some(vis) => {
                let mut notes = Vec::new();
                let mut v = super::readers::towers::vision(obj, vis, model_type, llm.hidden, &mut notes)?;
                v.images = 0;
                llm.approx.extend(notes.into_iter().filter(|n| !n.contains("each request carries")));
                llm.approx.push(format!("vision tower ({model_type}): counted in the parameters; requests carry no image by default, so it is neither loaded nor priced (deployment.serving.images_per_request sets the images per request)"));
                Some(v)
            }
            None => None,
        };
        // Like Qwen3-VL, Qwen3.5-397B-A17B gives its type only in text_config ("dtype"): the
        // top level's "no torch_dtype" guess is dropped when text_config states it.
        let dtype = if obj.contains_key("torch_dtype") || obj.contains_key("dtype") {
            dtype
        } else {
            warnings.retain(|w| !w.contains("torch_dtype"));
            dtype_of(text, &mut warnings)
        };
        let family = if llm.moe.is_some() { ModelFamily::MoeLlm } else { ModelFamily::DenseLlm };
        let model = ModelDesc { name: name_of(obj, model_type), family, dtype, llm: Some(llm), vision, graph: Vec::new() };
        return Ok(LoadedModel { model, warnings });
    }
    // A wrapper read by its language model: no width of its own, or a known wrapper type that
    // repeats the text width at the top (Voxtral's `hidden_size`).
    if !obj.contains_key("hidden_size") || (super::readers::WRAPPER_TYPES.contains(&model_type) && !obj.contains_key("num_hidden_layers")) {
        if let Some((text, prefix)) = super::readers::text_part(obj) {
            return super::readers::wrapper(obj, text, prefix, model_type, dtype, warnings);
        }
        let shown = if model_type.is_empty() { "(none)" } else { model_type };
        let hint = if obj.contains_key("d_model") { " (an encoder-decoder or speech model: its width is 'd_model')" } else { "" };
        return Err(format!("model_type '{shown}': no language model found in this config (no 'hidden_size', 'text_config' or 'llm_config'){hint}; Tunelab reads decoder LLMs, their multimodal wrappers and BERT-style encoders (docs/models.md)"));
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


//! One reader per model family, as the inference engines keep a model registry (vLLM's
//! `model_executor/models/registry.py`, SGLang's `srt/models`): each family's config spelling
//! is mapped onto the layer stack here, and the generic decoder (`super::hf::decoder`) reads
//! the widths every family shares. An unknown `model_type` falls back to that generic decoder
//! and says so (an approximation note on the model).
//!
//! The families' own files: `families` (gpt-oss, Gemma 2/3, Llama 4, ERNIE 4.5, Hunyuan, GLM,
//! MiniMax, MiMo: key spellings and per-layer rules), `nemotron_h` (Mamba-2 hybrids), `lfm2`
//! (short-conv hybrids), `towers` (vision and audio towers of multimodal wrappers), `layers`
//! (per-layer lists -> stack), `pyjson` (Python's Infinity / NaN).

pub mod deepseek_v4;
pub mod families;
pub mod gemma4;
pub mod layers;
pub mod lfm2;
pub mod minimax_m3;
pub mod nemotron_h;
pub mod nemotron_nas;
pub mod pyjson;
pub mod towers;

use crate::dtype::DType;
use crate::model::{LoadedModel, ModelDesc, ModelFamily, TransformerDesc};
use serde_json::{Map, Value};

type Obj = Map<String, Value>;

/// Decoder model types a family reader (or the generic decoder, for the older families) reads
/// exactly, beyond `hf::KNOWN`.
pub const FAMILY_TYPES: &[&str] = &[
    "gpt_oss", "gemma2", "gemma3_text", "gemma3n_text", "llama4_text", "nemotron_h", "lfm2", "glm4_moe", "glm4",
    "ernie4_5", "ernie4_5_moe", "hunyuan_v1_moe", "hunyuan_v1_dense", "mimo", "minimax_m2",
    "deepseek_v31", "qwen3_vl_moe_text", "qwen3_omni_moe_text", "mistral", "ministral", "ministral3", "seed_oss", "olmo2", "olmo3",
    "granite", "exaone4", "smollm3", "arcee", "dots1", "bailing_moe",
    // GLM-5: DeepSeek-V3.2's layout (MLA + DSA indexer, shared + routed experts).
    "glm_moe_dsa", "nemotron-nas", "mimo_v2_flash",
    // MiniMax-Text-01 / M1: lightning + softmax attention hybrids (`families`).
    "minimax", "minimax_text_01", "minimax_m1",
    // Step-3's language model (multi-matrix factorisation attention).
    "step3_text", "step3v_text",
    // Step-3.7-Flash: sliding (512) / full attention 3 : 1, dense then MoE layers, MTP.
    "step3p7",
    // GLM-4.1V / GLM-4.5V language models (Glm4vTextConfig: GLM-4's layout; Glm4vMoeTextConfig:
    // GLM-4.5's MoE layout), under the glm4v / glm4v_moe wrappers.
    "glm4v_text", "glm4v_moe_text",
    // DeepSeek-V4: compressed sparse / heavily compressed attention by layer, shared-KV MQA.
    "deepseek_v4",
    // MiniMax-M3: MiniMax Sparse Attention layers, dense then MoE layers.
    "minimax_m3",
    // Gemma 4: local / global layers with their own widths, MoE beside a dense MLP.
    "gemma4_text",
    // Kimi Linear (KDA + MLA hybrids) and LongCat-Flash (two attentions, two MLPs and a
    // shortcut MoE per layer).
    "kimi_linear", "longcat_flash",
];

/// Multimodal wrappers: the language model sits under `text_config` (or InternVL's
/// `llm_config`), towers under `vision_config` / `audio_config`.
pub const WRAPPER_TYPES: &[&str] = &[
    "gemma3", "gemma3n", "llama4", "mistral3", "glm4v", "glm4v_moe", "kimi_vl", "internvl_chat", "internvl", "qwen3_vl_moe",
    "qwen3_omni_moe", "llava_next", "llava_onevision", "idefics3", "smolvlm", "paligemma", "aya_vision", "step3_vl", "step3vl",
    "minicpmv", "phi4_multimodal", "lfm2_vl", "qwen2_vl", "kimi_k25", "voxtral", "minimax_vl_01", "kimi_k3", "gemma4", "minimax_m3_vl",
];

/// Whether the generic decoder reads this decoder type exactly (no fallback note).
pub fn is_family(model_type: &str) -> bool {
    FAMILY_TYPES.contains(&model_type)
}

/// A family's newer spelling of a per-layer list rewritten into the one its reader reads
/// (None: read as is). Nemotron 3 Ultra / 3.5 (transformers 5's NemotronHConfig) list each
/// layer's block in `layers_block_type` (`mamba`, `attention`, `mlp`, `moe`) instead of the
/// `hybrid_override_pattern` string (`M`, `*`, `-`, `E`), and may leave `num_hidden_layers` to
/// the list's length.
pub fn upgrade(obj: &Obj, model_type: &str, prefix: &str) -> Result<Option<Obj>, String> {
    if model_type == "kimi_linear" {
        return families::kimi_linear_upgrade(obj).map(Some);
    }
    if model_type != "nemotron_h" || obj.contains_key("hybrid_override_pattern") {
        return Ok(None);
    }
    let Some(v) = obj.get("layers_block_type") else { return Ok(None) };
    let Some(a) = v.as_array() else {
        return Err(format!("field '{prefix}layers_block_type' must be a list with one block name per layer, got {v}"));
    };
    let mut p = String::new();
    for (i, e) in a.iter().enumerate() {
        p.push(match e.as_str() {
            Some("mamba") => 'M',
            Some("attention") => '*',
            Some("mlp") => '-',
            Some("moe") => 'E',
            _ => return Err(format!("field '{prefix}layers_block_type[{i}]' = {e}: expected mamba, attention, mlp or moe")),
        });
    }
    let mut o = obj.clone();
    match o.get("num_hidden_layers").and_then(Value::as_u64) {
        Some(n) if n != a.len() as u64 => {
            return Err(format!("field '{prefix}layers_block_type' lists {} layers, but the model has {n} ('{prefix}num_hidden_layers')", a.len()));
        }
        Some(_) => {}
        None => {
            o.insert("num_hidden_layers".into(), Value::from(a.len() as u64));
        }
    }
    o.insert("hybrid_override_pattern".into(), Value::String(p));
    o.remove("layers_block_type");
    Ok(Some(o))
}

/// A family's config rewritten into the generic decoder's spelling (None: read as is).
pub fn normalize(obj: &Obj, model_type: &str, warnings: &mut Vec<String>) -> Result<Option<Obj>, String> {
    match model_type {
        "nemotron_h" => nemotron_h::normalize(obj).map(Some),
        "lfm2" => lfm2::normalize(obj).map(Some),
        "nemotron-nas" => nemotron_nas::normalize(obj, warnings).map(Some),
        "deepseek_v4" => deepseek_v4::normalize(obj).map(Some),
        "minimax_m3" => minimax_m3::normalize(obj).map(Some),
        "gemma4_text" => gemma4::normalize(obj).map(Some),
        _ => families::normalize(obj, model_type, warnings),
    }
}

/// After the generic read: the family's mechanisms (per-layer stack, Mamba-2 widths, MLP kind,
/// checkpoint format, notes).
pub fn finish(obj: &Obj, t: &mut TransformerDesc, model_type: &str, prefix: &str, warnings: &mut Vec<String>) -> Result<(), String> {
    match model_type {
        "nemotron_h" => nemotron_h::finish(obj, t, prefix)?,
        "lfm2" => lfm2::finish(obj, t, prefix)?,
        "deepseek_v4" => deepseek_v4::finish(obj, t, prefix)?,
        "minimax_m3" => minimax_m3::finish(obj, t, prefix),
        "gemma4_text" => gemma4::finish(obj, t, prefix, warnings)?,
        _ => families::finish(obj, t, model_type, prefix, warnings)?,
    }
    if model_type == "nemotron-nas" {
        let (mixers, ffns) = nemotron_nas::layers(obj, prefix, &mut t.approx)?;
        layers::install(t, Some(mixers), Some(ffns));
    } else {
        let mixers = layers::mixers(obj, t, model_type, prefix)?;
        let ffns = layers::ffns(obj, t, prefix)?;
        layers::install(t, mixers, ffns);
    }
    if let Some(q) = obj.get("quantization_config").and_then(|q| q.get("quant_method")).and_then(Value::as_str) {
        t.checkpoint_quant = Some(q.to_string());
    }
    let unused = unused_keys(obj, t, model_type, prefix);
    t.approx.extend(unused);
    Ok(())
}

/// A config's nested object `key` (`vision_config`, `text_config`): None when absent or null;
/// a value of another type is an error that says so ("wrong type", not "missing": issue 44).
pub fn object_field<'a>(obj: &'a Obj, key: &str) -> Result<Option<&'a Obj>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(v) => {
            let kind = match v {
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                Value::Array(_) => "an array",
                _ => "another type",
            };
            Err(format!("{key}: wrong type: expected an object (a nested config), got {kind}"))
        }
    }
}

/// A required nested object: missing and wrong type are told apart.
pub fn required_object<'a>(obj: &'a Obj, key: &str) -> Result<&'a Obj, String> {
    object_field(obj, key)?.ok_or_else(|| format!("missing field '{key}'"))
}

/// Attention, MoE and MTP keys that could change the cost but that the reading of this family
/// left without effect, each once as "not used by the model" (an approximation note: the
/// banner, `tunelab eval` and fidelity rows show it). Tokenizer and numerics keys are never
/// listed.
fn unused_keys(obj: &Obj, t: &TransformerDesc, model_type: &str, prefix: &str) -> Vec<String> {
    use crate::model::Mixer;
    let num = |k: &str| obj.get(k).and_then(Value::as_u64).filter(|v| *v > 0);
    let runs = t.runs();
    let mut out = Vec::new();
    let mut note = |k: &str, v: u64, what: &str| out.push(format!("config: '{prefix}{k}' = {v} is not used by the model ({what})"));
    let windows = runs.iter().any(|r| matches!(r.mixer, Mixer::Attention { window, .. } if window > 0));
    let chunks = runs.iter().any(|r| matches!(r.mixer, Mixer::Attention { chunk, .. } if chunk > 0));
    if let Some(w) = num("sliding_window") {
        let off = obj.get("use_sliding_window").and_then(Value::as_bool) == Some(false);
        // A window no shorter than the context changes nothing (Phi-4-mini's 262144).
        if !windows && !off && t.layers > 0 && w < t.max_position {
            note("sliding_window", w, "no layer of this reading attends within a window: every attention layer is priced over the whole context");
        }
    }
    if let Some(c) = num("attention_chunk_size") {
        if !chunks && model_type != "mimo_v2_flash" {
            note("attention_chunk_size", c, "no layer of this reading attends in chunks");
        }
    }
    if let Some(k) = num("num_experts_per_tok").or_else(|| num("moe_k")).or_else(|| num("moe_topk")) {
        if t.moe.is_none() {
            note("num_experts_per_tok", k, "the model is read without experts");
        }
    }
    if let Some(r) = num("q_lora_rank") {
        if t.mla.is_none() && t.q_bottleneck == 0 {
            note("q_lora_rank", r, "queries are read as full-rank projections");
        }
    }
    if let Some(k) = num("index_topk") {
        if t.mla.as_ref().is_none_or(|m| m.sparse.is_none()) && !runs.iter().any(|r| matches!(r.mixer, Mixer::Attention { topk, .. } if topk > 0)) {
            note("index_topk", k, "attention is priced dense");
        }
    }
    for k in ["num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_modules"] {
        if let Some(n) = num(k) {
            if t.mtp_layers == 0 {
                note(k, n, "the checkpoint's MTP layers are neither counted nor held; speculative decoding's 'mtp' method has no draft from it");
            }
        }
    }
    out
}

/// The language model's object of a multimodal wrapper and its prefix: `text_config`,
/// `llm_config` (InternVL) or `thinker_config.text_config` (Qwen omni).
pub fn text_part(obj: &Obj) -> Option<(&Obj, &'static str)> {
    if let Some(t) = obj.get("text_config").and_then(Value::as_object) {
        return Some((t, "text_config."));
    }
    if let Some(t) = obj.get("llm_config").and_then(Value::as_object) {
        return Some((t, "llm_config."));
    }
    if let Some(t) = obj.get("thinker_config").and_then(|t| t.get("text_config")).and_then(Value::as_object) {
        return Some((t, "thinker_config.text_config."));
    }
    None
}

/// A multimodal wrapper of any family: the language model from its `text_config` (or
/// `llm_config`), the vision tower from `vision_config` (`super::readers::towers`), an audio
/// tower named in a note.
pub(super) fn wrapper(obj: &Obj, text: &Obj, prefix: &str, model_type: &str, dtype: DType, mut warnings: Vec<String>) -> Result<LoadedModel, String> {
    let mut tw = Vec::new();
    // MiniMax-M3's VL checkpoint leaves its language model's type out (its architecture,
    // MiniMaxM3SparseForCausalLM, says it): the MiniMax-M3 reader reads it.
    let typed;
    let text = if model_type == "minimax_m3_vl" && !text.contains_key("model_type") {
        let mut t = text.clone();
        t.insert("model_type".into(), Value::from("minimax_m3"));
        typed = t;
        &typed
    } else {
        text
    };
    let mut llm = super::hf::decoder(text, prefix, &mut tw)?;
    warnings.extend(tw.into_iter().map(|w| format!("{prefix}{w}")));
    // Qwen omni configs keep their towers beside the language model, in `thinker_config`.
    let towers_obj = match obj.get("thinker_config") {
        Some(Value::Object(t)) if text_part(obj).is_some_and(|(_, p)| p.starts_with("thinker_config")) => t,
        _ => obj,
    };
    let vision = match object_field(towers_obj, "vision_config")? {
        Some(vis) => Some(towers::vision(towers_obj, vis, model_type, llm.hidden, &mut llm.approx)?),
        None => None,
    };
    let text_hidden = llm.hidden;
    llm.audio = towers::audio(towers_obj, model_type, text_hidden, &mut llm.approx)?.map(Box::new);
    // Wrappers often give the type only in the text part.
    let dtype = if obj.contains_key("torch_dtype") || obj.contains_key("dtype") || !(text.contains_key("torch_dtype") || text.contains_key("dtype")) {
        dtype
    } else {
        warnings.retain(|w| !w.contains("torch_dtype"));
        super::hf::dtype_of(text, &mut warnings)
    };
    let family = if vision.is_some() { ModelFamily::Multimodal } else if llm.moe.is_some() { ModelFamily::MoeLlm } else { ModelFamily::DenseLlm };
    let model = ModelDesc { name: super::hf::name_of(obj, if model_type.is_empty() { "model" } else { model_type }), family, dtype, llm: Some(llm), vision, graph: Vec::new() };
    Ok(LoadedModel { model, warnings })
}

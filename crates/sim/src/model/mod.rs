//! Model descriptions: what a model *is* (layer counts, widths, experts), independent of how it
//! runs. `load_model` turns a Hugging Face `config.json`, a Tunelab operator-graph JSON or a
//! serialised `ModelDesc` into a validated `ModelDesc`; `workload::build_graph` turns it into the
//! per-chip operator list the device model costs.
//!
//! Why plain data with optional parts: a decoder LLM, a vision encoder feeding an LLM, and a
//! diffusion UNet share little structure. Transformers are described by a handful of widths
//! (that is all a Hugging Face config gives), anything else by an explicit operator list.

pub mod audio;
mod bundled;
pub mod compressor;
pub mod graph;
pub mod hf;
mod hf_encoders;
mod hf_keys;
mod identity;
mod layer_widths;
mod params;
mod vision_desc;
mod widths;
pub mod readers;
pub mod stack;
mod validate;
pub mod vl;

use crate::dtype::DType;
use serde::{Deserialize, Serialize};

pub use bundled::{bundled_model_ids, bundled_model_text, bundled_models, load_bundled};
pub use graph::{GraphOpDesc, OpClass};
pub use hf::SUPPORTED_TYPES;
pub use stack::{Ffn, LayerRun, Mamba2Desc, Mixer};
pub use vision_desc::VisionDesc;
pub use widths::{LinearAttention, MlaDesc, SlidingWindow};
pub use identity::{Identity, WeightBytes};
pub use validate::{validate, validate_transformer, MAX_EXPERTS, MAX_PARAMS, MAX_HEADS, MAX_LAYERS, MAX_VOCAB, MAX_WIDTH};

/// What kind of model this is; templates and stages key on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelFamily {
    /// Dense decoder-only language model.
    DenseLlm,
    /// Mixture-of-experts decoder-only language model.
    MoeLlm,
    /// Text-to-image diffusion (the denoising network).
    Diffusion,
    /// An image encoder feeding a language model.
    Multimodal,
    /// Anything else, given as an operator graph.
    Custom,
    /// A bidirectional text encoder (BERT, XLM-R: embedding and reranker models).
    Encoder,
}

impl ModelFamily {
    /// Lower-case name as used in templates.
    pub fn name(self) -> &'static str {
        match self {
            ModelFamily::DenseLlm => "dense_llm",
            ModelFamily::MoeLlm => "moe_llm",
            ModelFamily::Diffusion => "diffusion",
            ModelFamily::Multimodal => "multimodal",
            ModelFamily::Custom => "custom",
            ModelFamily::Encoder => "encoder",
        }
    }
}

/// Feed-forward flavour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MlpKind {
    /// Gated SiLU (LLaMA family): gate and up projections, then down.
    #[default]
    SwiGlu,
    /// Plain GELU MLP (CLIP / ViT / GPT): up, GELU, down.
    Gelu,
    /// Squared-ReLU MLP without a gate or biases (Nemotron-H's `relu2`): up, relu^2, down.
    Relu2,
}

/// Normalisation flavour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NormKind {
    #[default]
    RmsNorm,
    LayerNorm,
}

/// Mixture-of-experts feed-forward.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MoeDesc {
    /// Routed experts per MoE layer.
    pub experts: u64,
    /// Experts each token is routed to.
    pub top_k: u64,
    /// Intermediate width of one routed expert.
    pub expert_intermediate: u64,
    /// Shared (always-active) experts' total intermediate width; 0 if none (Qwen2-MoE has one).
    #[serde(default)]
    pub shared_intermediate: u64,
    /// Whether a sigmoid gate (hidden -> 1) scales the shared expert (Qwen2-MoE).
    #[serde(default)]
    pub shared_gate: bool,
    /// Layers that use a dense MLP of `TransformerDesc::intermediate` instead (e.g. Qwen
    /// `mlp_only_layers`); the rest are MoE layers.
    #[serde(default)]
    pub dense_layers: u64,
    /// Latent MoE (Nemotron 3 Super, `moe_latent_size`): tokens are projected into this width
    /// before routing and the experts work in it (their all-to-all moves latent rows); 0: the
    /// experts work at the hidden width.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub latent: u64,
}

/// A transformer stack: a decoder LLM or a ViT-style encoder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransformerDesc {
    pub layers: u64,
    pub hidden: u64,
    /// Query heads.
    pub heads: u64,
    /// Key/value heads (< heads: grouped-query attention).
    pub kv_heads: u64,
    pub head_dim: u64,
    /// Dense MLP intermediate width.
    pub intermediate: u64,
    /// Vocabulary size (0 for an encoder without token embeddings).
    pub vocab: u64,
    #[serde(default)]
    pub tied_embeddings: bool,
    #[serde(default)]
    pub mlp: MlpKind,
    #[serde(default)]
    pub norm: NormKind,
    /// Bias on the q/k/v projections (Qwen2).
    #[serde(default)]
    pub qkv_bias: bool,
    /// Longest sequence the model supports (static allocation reserves for it).
    #[serde(default = "default_max_pos")]
    pub max_position: u64,
    #[serde(default)]
    pub moe: Option<MoeDesc>,
    /// RMSNorm over each query and key head before rotary (Qwen3).
    #[serde(default)]
    pub qk_norm: bool,
    /// Sliding-window attention (Mistral; Qwen2 with `use_sliding_window`).
    #[serde(default)]
    pub sliding_window: Option<SlidingWindow>,
    /// Multi-head latent attention (DeepSeek-V2/V3) instead of grouped-query attention.
    #[serde(default)]
    pub mla: Option<MlaDesc>,
    /// Layers whose token mixer is linear attention (Gated DeltaNet in Qwen3-Next and Qwen3.5,
    /// read from `layer_types`): a fixed-size recurrent state per sequence instead of a KV
    /// cache (`crate::workload::linear_attention`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linear_attention: Option<LinearAttention>,
    /// A bidirectional encoder (BERT, XLM-R: embeddings and rerankers): every token attends to
    /// every token, no KV cache, no decoding; the head is a pooler instead of an LM head.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub encoder: bool,
    /// A sigmoid gate on the attention output, computed by q_proj (twice as wide: queries and
    /// gate), as Qwen3-Next and Qwen3.5's full-attention layers do (`attn_output_gate`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub attn_output_gate: bool,
    /// Multi-token-prediction layers the checkpoint carries (`num_nextn_predict_layers` in
    /// DeepSeek-V3, `mtp_num_hidden_layers` in Qwen3-Next; 0: none): the draft of speculative
    /// decoding's "mtp" method (`crate::workload::mtp`). Not part of the main forward.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub mtp_layers: u64,
    /// The layers as runs of identical layers (`stack`); empty: derived from the overlays above
    /// (every description written before the stack existed). See `TransformerDesc::runs`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<LayerRun>,
    /// The widths of the stack's Mamba-2 mixers (Nemotron-H), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mamba: Option<Mamba2Desc>,
    /// What the reader approximated, one note per part ("part: how"), shown with the model's
    /// identity (`ModelDesc::approximations`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approx: Vec<String>,
    /// The checkpoint's own weight format when it is not its `torch_dtype` (gpt-oss's MXFP4
    /// experts, NVFP4 releases): `quantization_config.quant_method`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_quant: Option<String>,
    /// The audio encoder feeding this language model (a wrapper's `audio_config`: Voxtral,
    /// Qwen-Omni), counted and held like the vision tower (`audio::AudioDesc`); kept here
    /// rather than on `ModelDesc` so descriptions written before it still build unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio: Option<Box<audio::AudioDesc>>,
    /// A low-rank query (Step-3's multi-matrix factorisation attention, `share_q_dim`): the
    /// query is `wq(norm(q_down(x)))` through this width instead of one hidden -> heads x
    /// head_dim matrix (vLLM `step3_text.py`); 0: a full-rank query.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub q_bottleneck: u64,
    /// Keys and values are one projection and one cached row per KV head (DeepSeek-V4's
    /// shared-KV multi-query attention, `wkv`): one hidden -> kv_heads x head_dim matrix and
    /// kv_heads x head_dim cached elements per token, not two.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kv_shared: bool,
    /// A grouped low-rank output projection (DeepSeek-V4's `wo_a` / `wo_b`): the heads are
    /// split into `o_groups` groups, each projected to `o_lora_rank`, then all of them to the
    /// hidden width; 0: one heads x head_dim -> hidden matrix.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub o_groups: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub o_lora_rank: u64,
    /// The global (full-attention) layers' own KV heads, head width and shared keys/values
    /// (Gemma 4: `num_global_key_value_heads`, `global_head_dim`, `attention_k_eq_v`); 0 /
    /// false: the stack's (`layer_widths`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub global_kv_heads: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub global_head_dim: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub global_kv_shared: bool,
    /// DeepSeek-V4's KV compressors, lightning indexer and hyper-connections (`compressor`);
    /// None: the model has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compressor: Option<compressor::CompressorDesc>,
}

impl Default for TransformerDesc {
    fn default() -> Self {
        TransformerDesc {
            layers: 0,
            hidden: 0,
            heads: 0,
            kv_heads: 0,
            head_dim: 0,
            intermediate: 0,
            vocab: 0,
            tied_embeddings: false,
            mlp: MlpKind::SwiGlu,
            norm: NormKind::RmsNorm,
            qkv_bias: false,
            max_position: default_max_pos(),
            moe: None,
            qk_norm: false,
            sliding_window: None,
            mla: None,
            linear_attention: None,
            encoder: false,
            attn_output_gate: false,
            mtp_layers: 0,
            stack: Vec::new(),
            mamba: None,
            approx: Vec::new(),
            checkpoint_quant: None,
            audio: None,
            q_bottleneck: 0,
            kv_shared: false,
            o_groups: 0,
            o_lora_rank: 0,
            global_kv_heads: 0,
            global_head_dim: 0,
            global_kv_shared: false,
            compressor: None,
        }
    }
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

fn default_max_pos() -> u64 {
    4096
}

/// A model: a language model, optionally fed by a vision encoder, or an explicit operator graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelDesc {
    pub name: String,
    pub family: ModelFamily,
    /// The checkpoint's storage type (torch_dtype).
    pub dtype: DType,
    /// The language model (decoder stack), if any.
    #[serde(default)]
    pub llm: Option<TransformerDesc>,
    /// The image encoder of a multimodal model.
    #[serde(default)]
    pub vision: Option<VisionDesc>,
    /// Explicit operators for one sample (batch 1), used when there is no `llm`.
    #[serde(default)]
    pub graph: Vec<GraphOpDesc>,
}

impl ModelDesc {
    /// The vision tower when requests carry images (it is then loaded and priced); None for a
    /// text model or a tower left idle (`VisionDesc::images` 0: counted in the model's
    /// identity, neither held in memory nor priced).
    pub fn active_vision(&self) -> Option<&VisionDesc> {
        self.vision.as_ref().filter(|v| v.images > 0)
    }

    /// Parameters the serving or training run loads: all of `params().total` but an idle
    /// vision tower's (one whose requests carry no image is not loaded).
    pub fn loaded_params(&self) -> u64 {
        let p = self.params();
        match &self.vision {
            Some(v) if v.images == 0 => {
                let mut text = self.clone();
                text.vision = None;
                text.params().total
            }
            _ => p.total,
        }
    }

    /// The audio tower when requests carry audio (`audio::AudioDesc::windows` > 0).
    pub fn active_audio(&self) -> Option<&audio::AudioDesc> {
        self.llm.as_ref().and_then(|t| t.audio.as_deref()).filter(|a| a.windows > 0)
    }

    /// Tokens a request's images and audio add to its prompt (0 for text prompts).
    pub fn media_tokens(&self) -> u64 {
        self.vision.as_ref().map_or(0, |v| v.image_tokens()).saturating_add(self.active_audio().map_or(0, |a| a.tokens()))
    }
}

/// A model after loading, with anything the loader had to assume.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedModel {
    pub model: ModelDesc,
    /// Visible warnings (unknown model_type, ignored fields, assumed defaults).
    pub warnings: Vec<String>,
}

/// Parameter counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParamCount {
    /// All parameters.
    pub total: u64,
    /// Parameters touched per token (MoE: only top-k experts); equals `total` for dense models.
    pub active: u64,
}

/// Loads a model from JSON: a Hugging Face config.json (has `model_type` or `hidden_size`), an
/// operator graph (`"ops": [...]`), or a serialised `ModelDesc` (`"format": "tunelab-model"`).
pub fn load_model(json: &str) -> Result<LoadedModel, String> {
    // Python's json writes Infinity / NaN (Nemotron-H's time_step_limit): quoted first, so the
    // config parses and a size field holding one is refused by name.
    let quoted = if serde_json::from_str::<serde_json::Value>(json).is_err() { readers::pyjson::quote_non_finite(json) } else { None };
    let mut value: serde_json::Value =
        serde_json::from_str(quoted.as_deref().unwrap_or(json)).map_err(|e| format!("model JSON does not parse: {e}"))?;
    // A bare list is an operator graph.
    if value.is_array() {
        value = serde_json::json!({ "format": "tunelab-graph", "ops": value });
    }
    let obj = value
        .as_object()
        .ok_or_else(|| "model JSON must be an object".to_string())?;
    let format = obj.get("format").and_then(|f| f.as_str()).unwrap_or("");
    let loaded = if format == "tunelab-model" {
        let model: ModelDesc =
            serde_json::from_value(value.clone()).map_err(|e| format!("model description: {e}"))?;
        LoadedModel { model, warnings: Vec::new() }
    } else if format == "tunelab-graph" || obj.contains_key("ops") {
        graph::load_graph(obj)?
    } else if obj.contains_key("model_type") || obj.contains_key("hidden_size") {
        hf::load_hf(obj)?
    } else {
        return Err("unrecognised model JSON: expected a Hugging Face config.json (model_type, \
                    hidden_size, ...) or an operator graph (\"ops\": [...])"
            .to_string());
    };
    validate(&loaded.model)?;
    Ok(loaded)
}

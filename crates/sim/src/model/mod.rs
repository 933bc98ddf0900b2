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
pub mod graph;
pub mod hf;
mod identity;
mod layer_widths;
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
        }
    }
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

/// Linear-attention layers of a hybrid model (Gated DeltaNet, Yang et al. 2024,
/// arXiv:2412.06464; the Qwen3-Next / Qwen3.5 configs' `linear_*` fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinearAttention {
    /// How many of the model's layers are linear (the rest are full attention).
    pub layers: u64,
    pub key_heads: u64,
    pub value_heads: u64,
    pub key_head_dim: u64,
    pub value_head_dim: u64,
    /// Causal short convolution over q, k, v (`linear_conv_kernel_dim`).
    pub conv_kernel: u64,
}

impl LinearAttention {
    /// Width of q or k (all key heads), and of v or the output gate z (all value heads).
    pub fn key_dim(&self) -> u64 {
        self.key_heads * self.key_head_dim
    }
    pub fn value_dim(&self) -> u64 {
        self.value_heads * self.value_head_dim
    }
    /// Parameters of one linear-attention token mixer: in_proj_qkvz, in_proj_ba, the depthwise
    /// convolution, A_log and dt_bias, the gated norm and out_proj.
    pub fn params(&self, hidden: u64) -> u64 {
        let (k, v) = (self.key_dim(), self.value_dim());
        let conv_dim = 2 * k + v;
        hidden * (2 * k + 2 * v) + hidden * 2 * self.value_heads + conv_dim * self.conv_kernel + 2 * self.value_heads + self.value_head_dim + v * hidden
    }
    /// Recurrent-state elements per sequence per layer: the delta-rule state (one dk x dv
    /// matrix per value head) and the convolution's last kernel - 1 inputs.
    pub fn state_elems(&self) -> (u64, u64) {
        let conv_dim = 2 * self.key_dim() + self.value_dim();
        (self.value_heads * self.key_head_dim * self.value_head_dim, conv_dim * self.conv_kernel.saturating_sub(1))
    }
}

/// Sliding-window attention: each query sees at most `window` previous keys, in `layers` of the
/// model's layers (all of them for Mistral; Qwen2 keeps its first `max_window_layers` full).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlidingWindow {
    pub window: u64,
    pub layers: u64,
}

/// Multi-head latent attention (DeepSeek-V2, Liu et al. 2024, section 2.1): queries through an
/// optional low-rank bottleneck, keys and values from one compressed latent of `kv_lora_rank`
/// plus a shared rotary key of `qk_rope_head_dim`; the cache holds only latent + rotary key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MlaDesc {
    /// 0: queries are projected directly (DeepSeek-V2-Lite).
    #[serde(default)]
    pub q_lora_rank: u64,
    pub kv_lora_rank: u64,
    pub qk_nope_head_dim: u64,
    pub qk_rope_head_dim: u64,
    pub v_head_dim: u64,
    /// DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): a lightning indexer picks the keys
    /// each query attends to (`crate::workload::sparse_attention`); None: dense MLA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sparse: Option<crate::workload::sparse_attention::DsaDesc>,
}

impl MlaDesc {
    /// Query/key width per head (no-rotary part plus rotary part).
    pub fn qk_dim(&self) -> u64 {
        self.qk_nope_head_dim + self.qk_rope_head_dim
    }
    /// Cached elements per token per layer: the latent and the shared rotary key.
    pub fn cache_dim(&self) -> u64 {
        self.kv_lora_rank + self.qk_rope_head_dim
    }
    /// Cached elements per token per layer, the sparse-attention indexer's keys included.
    pub fn cached_elems(&self) -> u64 {
        self.cache_dim() + self.sparse.map_or(0, |s| s.index_head_dim)
    }
}

fn default_max_pos() -> u64 {
    4096
}

/// A ViT image encoder (e.g. CLIP ViT-L/14) and the projector into the LLM's embedding space.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VisionDesc {
    /// The encoder's transformer (vocab 0, LayerNorm, GELU MLP, bidirectional attention).
    pub encoder: TransformerDesc,
    pub image_size: u64,
    pub patch_size: u64,
    #[serde(default = "three")]
    pub channels: u64,
    /// Hidden width of the (two-layer, LLaVA-1.5 style) MLP projector; 0 = one linear layer.
    #[serde(default)]
    pub projector_hidden: u64,
    /// Patches merged into one LLM token per side (Qwen2.5-VL / Qwen3-VL `spatial_merge_size`:
    /// 2 = 2 x 2 patches per token, their features concatenated into the projector); 1: none.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub merge: u64,
    /// The encoder prepends a class token (CLIP); Qwen's ViT does not.
    #[serde(default = "yes", skip_serializing_if = "Clone::clone")]
    pub class_token: bool,
    /// Extra patch mergers of the projector's shape (Qwen3-VL's DeepStack: one per
    /// `deepstack_visual_indexes` entry, fed from an intermediate ViT block, its output added to
    /// an early LLM layer's hidden states); 0: none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub deepstack: u64,
    /// Images each request carries (`deployment.serving.images_per_request`): 1 for a
    /// description saved before the field existed (every request carried one image); 0 for a
    /// tower read but idle (Qwen3.5's wrapper: text-only prompts, the tower not loaded, as
    /// vLLM skips the encoder when `--limit-mm-per-prompt` allows no image).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub images: u64,
}

fn three() -> u64 {
    3
}

fn one() -> u64 {
    1
}

fn is_one(x: &u64) -> bool {
    *x == 1
}

fn yes() -> bool {
    true
}

impl VisionDesc {
    /// Patches the encoder sees per image (without the class token): (image / patch)^2.
    pub fn patches(&self) -> u64 {
        let side = self.image_size / self.patch_size.max(1);
        side.saturating_mul(side)
    }

    /// Tokens one image adds to the LLM's prompt: the patches, merged merge x merge.
    pub fn image_tokens_each(&self) -> u64 {
        self.patches() / self.merge.max(1).saturating_mul(self.merge.max(1))
    }

    /// Tokens a request's images add to its prompt (`images` x `image_tokens_each`; 0 when the
    /// requests carry none).
    pub fn image_tokens(&self) -> u64 {
        self.images.saturating_mul(self.image_tokens_each())
    }

    /// Projector-shaped mergers per image: the projector and the DeepStack mergers.
    pub fn mergers(&self) -> u64 {
        1 + self.deepstack
    }

    /// The encoder's sequence per image (patches plus the class token, if any).
    pub fn encoder_seq(&self) -> u64 {
        self.patches() + self.class_token as u64
    }
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

impl TransformerDesc {
    /// A ViT vision tower (LLaVA's CLIP, Qwen-VL's ViT): full multi-head attention with biased
    /// projections, no vocabulary, none of a decoder's variants (MoE, MLA, windows, MTP).
    pub fn vision_tower(layers: u64, hidden: u64, heads: u64, intermediate: u64, mlp: MlpKind, norm: NormKind, max_position: u64) -> TransformerDesc {
        TransformerDesc { layers, hidden, heads, kv_heads: heads, head_dim: hidden / heads, intermediate, mlp, norm, qkv_bias: true, max_position, ..TransformerDesc::default() }
    }

    /// Parameters of one attention block (q, k, v, o projections, biases if any).
    pub fn attention_params(&self) -> u64 {
        clamp(self.attention_params_wide())
    }
    fn attention_params_wide(&self) -> u128 {
        let h = u128::from(self.hidden);
        if let Some(m) = &self.mla {
            let heads = u128::from(self.heads);
            let (ql, kvl) = (u128::from(m.q_lora_rank), u128::from(m.kv_lora_rank));
            let qk = u128::from(m.qk_dim());
            // q: h -> q_lora (+ norm) -> heads x qk, or h -> heads x qk directly.
            let q = if ql > 0 { h * ql + ql + ql * heads * qk } else { h * heads * qk };
            // kv_a: h -> latent + rotary key (+ norm on the latent); kv_b: latent -> heads x (nope + v).
            let kv = h * (kvl + u128::from(m.qk_rope_head_dim)) + kvl
                + kvl * heads * u128::from(m.qk_nope_head_dim + m.v_head_dim);
            let o = heads * u128::from(m.v_head_dim) * h;
            let indexer = m.sparse.map_or(0, |s| s.params(self.hidden, m.q_lora_rank));
            return q + kv + o + u128::from(indexer);
        }
        self.gqa_params_wide()
    }
    /// Parameters of a dense MLP of width `inter`.
    pub fn mlp_params(&self, inter: u64) -> u64 {
        clamp(self.mlp_params_wide(inter))
    }
    /// Norm parameters of one layer (two norms; LayerNorm has a bias too).
    pub fn norm_params(&self) -> u64 {
        match self.norm {
            NormKind::RmsNorm => 2 * self.hidden,
            NormKind::LayerNorm => 4 * self.hidden,
        }
    }
    /// Layers that keep a KV cache (attention layers of the stack).
    pub fn attention_layers(&self) -> u64 {
        self.count_mixers(Mixer::is_attention)
    }
    /// KV-cache elements per token per layer (all KV heads): keys and values, or for MLA the
    /// latent plus the rotary key.
    pub fn kv_elems_per_token_layer(&self) -> u64 {
        match &self.mla {
            Some(m) => m.cached_elems(),
            None => self.kv_factor() * self.kv_heads * self.head_dim,
        }
    }
    /// Parameters of the attention output projection from `q` (heads x head_dim, or a chip's
    /// share of them over `tp`) to the hidden width: the grouped low-rank pair when the model
    /// has one (each chip holds its share of the groups and of the second matrix's input).
    pub fn o_proj_params(&self, q: u64, tp: u64) -> u64 {
        if self.o_groups > 0 && self.o_lora_rank > 0 {
            let g_here = self.o_groups.div_ceil(tp.max(1));
            q.saturating_mul(self.o_lora_rank).saturating_add(g_here.saturating_mul(self.o_lora_rank).saturating_mul(self.hidden))
        } else {
            q.saturating_mul(self.hidden)
        }
    }
    /// Projections and cached rows per KV head: 2 (keys and values), 1 when they are shared.
    pub fn kv_factor(&self) -> u64 {
        if self.kv_shared { 1 } else { 2 }
    }
    /// Layers with MoE feed-forward, and with a dense one.
    pub fn moe_and_dense_layers(&self) -> (u64, u64) {
        if !self.stack.is_empty() {
            let moe = self.stack.iter().filter(|r| r.ffn == Ffn::Moe).map(|r| r.count).sum();
            return (moe, self.layers.saturating_sub(moe));
        }
        match &self.moe {
            Some(m) => (self.layers - m.dense_layers.min(self.layers), m.dense_layers.min(self.layers)),
            None => (0, self.layers),
        }
    }
    /// Total and active parameters, embeddings and LM head included.
    pub fn params(&self) -> ParamCount {
        let (total, active) = self.params_wide();
        ParamCount { total: clamp(total), active: clamp(active) }
    }
    /// Parameter counts in 128 bits, so absurd descriptions are measured rather than
    /// overflowed: the sum over the stack's runs of mixer, feed-forward and norms.
    fn params_wide(&self) -> (u128, u128) {
        let h = u128::from(self.hidden);
        let (mut total, mut active) = (0u128, 0u128);
        for r in self.runs() {
            let n = u128::from(r.count);
            let common = self.mixer_params(&r.mixer) + u128::from(self.run_norm_params(&r));
            let (ft, fa) = self.ffn_params(&r.ffn);
            total += n * (common + ft);
            active += n * (common + fa);
        }
        let embed = u128::from(self.vocab) * h;
        let head = if self.tied_embeddings { 0 } else { embed };
        let fixed = embed + head + h; // + final norm
        (fixed + total, fixed + active)
    }
}

fn clamp(v: u128) -> u64 {
    u64::try_from(v).unwrap_or(u64::MAX)
}

impl ModelDesc {
    /// Total and active parameter counts.
    pub fn params(&self) -> ParamCount {
        let mut p = ParamCount::default();
        if let Some(t) = &self.llm {
            p = t.params();
        }
        if let Some(v) = &self.vision {
            let e = &v.encoder;
            let patch = v.channels * v.patch_size * v.patch_size * e.hidden;
            // Learned positions (and the class token) for CLIP; Qwen's ViT uses rotary positions.
            let pos = if v.class_token { (v.patches() + 1) * e.hidden + e.hidden } else { 0 };
            let llm_hidden = self.llm.as_ref().map_or(0, |t| t.hidden);
            let inp = e.hidden * v.merge.max(1) * v.merge.max(1);
            let proj = if v.projector_hidden > 0 {
                inp * v.projector_hidden + v.projector_hidden * llm_hidden
                    + v.projector_hidden + llm_hidden
            } else {
                inp * llm_hidden + llm_hidden
            };
            let c = e.params().total.saturating_add(patch + pos + proj.saturating_mul(v.mergers()));
            p.total = p.total.saturating_add(c);
            // An idle tower (requests carry no image) is in the checkpoint, not in a token's path.
            if v.images > 0 {
                p.active = p.active.saturating_add(c);
            }
        }
        if let Some(a) = self.llm.as_ref().and_then(|t| t.audio.as_ref()) {
            p.total = p.total.saturating_add(a.params());
            p.active = p.active.saturating_add(a.params());
        }
        let g = self.graph.iter().fold(0u64, |a, o| a.saturating_add(o.weight_params().saturating_mul(o.repeat)));
        p.total = p.total.saturating_add(g);
        p.active = p.active.saturating_add(g);
        p
    }

    /// Whether the model is a transformer language model (possibly multimodal).
    pub fn is_llm(&self) -> bool {
        self.llm.is_some()
    }

    /// KV-cache bytes per token of context for the whole model (all layers, all KV heads).
    pub fn kv_bytes_per_token(&self, kv_dtype: DType) -> u64 {
        self.llm.as_ref().filter(|t| !t.encoder).map_or(0, |t| {
            let elems = t.runs().iter().filter(|r| r.mixer.is_attention()).map(|r| r.count.saturating_mul(t.kv_elems_for(&r.mixer, 1))).fold(0u64, u64::saturating_add);
            elems.saturating_mul(kv_dtype.bytes())
        })
    }
}

//! Text encoders from their configs: CLIP text models (CLIP ViT-L/14, OpenCLIP ViT-H and
//! bigG as diffusers ships them: `CLIPTextModel` / `CLIPTextModelWithProjection`) and T5 / UMT5
//! encoders (`T5EncoderModel`, `UMT5EncoderModel`: RMSNorm, no biases, gated-GELU feed-forward),
//! and the decoder-only language models the pipelines of 2025-2026 read hidden states from
//! (Qwen2.5-VL for Qwen-Image, Mistral-Small-3.1 for FLUX.2, Llama-3.1 for HiDream, Gemma-2 for
//! Sana, Llama-3 for HunyuanVideo): their `text_config` when they wrap one, run as a causal
//! decoder over the prompt (RMSNorm, grouped-query attention, SwiGLU). The vision tower of a
//! multimodal encoder (Qwen2.5-VL reading the edit image in Qwen-Image-Edit) is not costed.

use super::cfg::{Cfg, MAX_LAYERS, MAX_WIDTH};
use super::emit::Emit;
use crate::model::OpClass;
use crate::op::{Epilogue, VectorKind};

/// A text encoder's shape.
#[derive(Clone, Debug, PartialEq)]
pub enum TextEncoder {
    /// `quick_gelu`: CLIP's x * sigmoid(1.702 x) (three eager kernels) instead of GELU.
    Clip { hidden: u64, inter: u64, heads: u64, layers: u64, projection: u64, quick_gelu: bool },
    T5 { d_model: u64, d_ff: u64, heads: u64, d_kv: u64, layers: u64, gated: bool },
    /// A decoder-only language model (its causal layers over the prompt).
    Llm { hidden: u64, inter: u64, heads: u64, kv_heads: u64, head_dim: u64, layers: u64 },
}

/// The `model_type`s read as decoder-only language-model encoders.
pub const LLM_TYPES: [&str; 12] = ["llama", "mistral", "mistral3", "qwen2", "qwen2_vl", "qwen2_5_vl", "qwen2_5_vl_text", "qwen3", "gemma", "gemma2", "gemma3", "gemma3_text"];

impl TextEncoder {
    pub fn parse(c: &Cfg) -> Result<TextEncoder, String> {
        let arch = c.v.get("architectures").and_then(|a| a.get(0)).and_then(|a| a.as_str()).unwrap_or("");
        let mt = c.str("model_type").unwrap_or("");
        if arch.starts_with("CLIPText") || mt == "clip_text_model" {
            let hidden = c.int("hidden_size", MAX_WIDTH)?;
            let heads = c.int("num_attention_heads", MAX_WIDTH)?;
            if hidden % heads != 0 {
                return Err(format!("{}.num_attention_heads: {heads} does not divide hidden_size {hidden}", c.what));
            }
            let projection = if arch == "CLIPTextModelWithProjection" { c.int_or("projection_dim", MAX_WIDTH, hidden)? } else { 0 };
            let quick_gelu = c.str("hidden_act").unwrap_or("quick_gelu") == "quick_gelu";
            return Ok(TextEncoder::Clip { hidden, inter: c.int("intermediate_size", MAX_WIDTH)?, heads, layers: c.int("num_hidden_layers", MAX_LAYERS)?, projection, quick_gelu });
        }
        if arch.starts_with("T5Encoder") || arch.starts_with("UMT5Encoder") || mt == "t5" || mt == "umt5" {
            let ff = c.str("feed_forward_proj").unwrap_or("relu");
            return Ok(TextEncoder::T5 {
                d_model: c.int("d_model", MAX_WIDTH)?,
                d_ff: c.int("d_ff", MAX_WIDTH)?,
                heads: c.int("num_heads", MAX_WIDTH)?,
                d_kv: c.int("d_kv", MAX_WIDTH)?,
                layers: c.int("num_layers", MAX_LAYERS)?,
                gated: ff.starts_with("gated"),
            });
        }
        if arch.ends_with("ForCausalLM") || arch.ends_with("ForConditionalGeneration") || arch.ends_with("Model") && LLM_TYPES.contains(&mt) || LLM_TYPES.contains(&mt) {
            // A wrapper keeps the language model under text_config (Mistral3, newer Qwen2.5-VL).
            let inner = c.v.get("text_config").filter(|t| t.is_object());
            let what = format!("{}{}", c.what, if inner.is_some() { ".text_config" } else { "" });
            let tc = Cfg { what: &what, v: inner.unwrap_or(c.v) };
            let hidden = tc.int("hidden_size", MAX_WIDTH)?;
            let heads = tc.int("num_attention_heads", MAX_WIDTH)?;
            let kv_heads = tc.int_or("num_key_value_heads", MAX_WIDTH, heads)?;
            if heads % kv_heads != 0 {
                return Err(format!("{what}.num_key_value_heads: {kv_heads} does not divide num_attention_heads {heads}"));
            }
            let head_dim = tc.int_or("head_dim", 1024, hidden / heads)?;
            return Ok(TextEncoder::Llm { hidden, inter: tc.int("intermediate_size", MAX_WIDTH)?, heads, kv_heads, head_dim, layers: tc.int("num_hidden_layers", MAX_LAYERS)? });
        }
        Err(format!("{}: a text encoder must be a CLIPTextModel(WithProjection), T5EncoderModel, UMT5EncoderModel or decoder-only language model (*ForCausalLM / *ForConditionalGeneration) config (architectures / model_type), got '{}'", c.what, if arch.is_empty() { mt } else { arch }))
    }

    /// Emits the encoder over `b` prompts of `t` tokens.
    pub fn build(&self, e: &mut Emit, b: u64, t: u64) {
        let tok = b * t;
        match *self {
            TextEncoder::Clip { hidden: h, inter, heads, layers: l, projection, quick_gelu } => {
                // As transformers' CLIPTextModel runs eagerly (sdpa attention): token and position
                // embeddings and their sum, the 4-D causal mask (full, triu, expand), then per
                // layer the kernels below; at batch 1-2 x 77 tokens every one of them is tiny, so
                // the encoder is bound by how many the host launches, which is why each is here.
                e.vector("embeddings", VectorKind::Gather, tok, h, OpClass::Embedding, 2);
                e.vector("embeddings.add", VectorKind::Elementwise, tok, h, OpClass::Embedding, 1);
                e.vector("causal_mask", VectorKind::Elementwise, b * t, t, OpClass::Attention, 3);
                e.norm("layer.ln1", VectorKind::LayerNorm, tok, h, l);
                // HF CLIPAttention: separate q_proj, k_proj, v_proj (three launches eagerly).
                for n in ["q_proj", "k_proj", "v_proj"] {
                    e.linear(&format!("layer.attn.{n}"), tok, h, h, Epilogue::Bias, OpClass::Attention, l);
                }
                e.attention("layer.attn.core", b, heads, t, t, h / heads, true, l);
                // transpose(1, 2).reshape: the heads back to tokens is a copy kernel.
                e.vector("layer.attn.merge_heads", VectorKind::Elementwise, tok, h, OpClass::Attention, l);
                e.linear("layer.attn.out", tok, h, h, Epilogue::ResidualAdd, OpClass::Attention, l);
                e.norm("layer.ln2", VectorKind::LayerNorm, tok, h, l);
                if quick_gelu {
                    e.linear("layer.mlp.fc1", tok, inter, h, Epilogue::Bias, OpClass::Mlp, l);
                    e.vector("layer.mlp.quick_gelu", VectorKind::Elementwise, tok, inter, OpClass::Mlp, 3 * l);
                } else {
                    e.linear("layer.mlp.fc1", tok, inter, h, Epilogue::BiasGelu, OpClass::Mlp, l);
                }
                e.linear("layer.mlp.fc2", tok, h, inter, Epilogue::ResidualAdd, OpClass::Mlp, l);
                e.norm("final_layer_norm", VectorKind::LayerNorm, tok, h, 1);
                // The pooled output: argmax of the ids, then an index into the last hidden state.
                e.vector("pooled", VectorKind::Gather, b, h, OpClass::Other, 2);
                if projection > 0 {
                    e.linear("text_projection", b, projection, h, Epilogue::None, OpClass::Other, 1);
                }
            }
            TextEncoder::T5 { d_model: h, d_ff, heads, d_kv, layers: l, gated } => {
                let inner = heads * d_kv;
                e.vector("embed_tokens", VectorKind::Gather, tok, h, OpClass::Embedding, 1);
                e.norm("block.ln_attn", VectorKind::RmsNorm, tok, h, l);
                // HF T5Attention: separate q, k, v projections.
                for n in ["q", "k", "v"] {
                    e.linear(&format!("block.attn.{n}"), tok, inner, h, Epilogue::None, OpClass::Attention, l);
                }
                e.attention("block.attn.core", b, heads, t, t, d_kv, false, l);
                e.linear("block.attn.o", tok, h, inner, Epilogue::ResidualAdd, OpClass::Attention, l);
                e.norm("block.ln_ff", VectorKind::RmsNorm, tok, h, l);
                if gated {
                    e.linear("block.ff.wi", tok, 2 * d_ff, h, Epilogue::None, OpClass::Mlp, l);
                    e.vector("block.ff.gated_gelu", VectorKind::SwiGlu, tok, d_ff, OpClass::Mlp, l);
                } else {
                    e.linear("block.ff.wi", tok, d_ff, h, Epilogue::None, OpClass::Mlp, l);
                    e.vector("block.ff.relu", VectorKind::Activation, tok, d_ff, OpClass::Mlp, l);
                }
                e.linear("block.ff.wo", tok, h, d_ff, Epilogue::ResidualAdd, OpClass::Mlp, l);
                e.norm("final_layer_norm", VectorKind::RmsNorm, tok, h, 1);
            }
            TextEncoder::Llm { hidden: h, inter, heads, kv_heads, head_dim, layers: l } => {
                let q = heads * head_dim;
                let kv = kv_heads * head_dim;
                e.vector("embed_tokens", VectorKind::Gather, tok, h, OpClass::Embedding, 1);
                e.norm("layer.input_norm", VectorKind::RmsNorm, tok, h, l);
                e.linear("layer.attn.qkv", tok, q + 2 * kv, h, Epilogue::Bias, OpClass::Attention, l);
                e.vector("layer.attn.rotary", VectorKind::Rotary, tok * 2, q, OpClass::Attention, l);
                e.attention_gqa("layer.attn.core", b, heads, kv_heads, t, t, head_dim, true, l);
                e.linear("layer.attn.o", tok, h, q, Epilogue::ResidualAdd, OpClass::Attention, l);
                e.norm("layer.post_attention_norm", VectorKind::RmsNorm, tok, h, l);
                e.linear("layer.mlp.gate_up", tok, 2 * inter, h, Epilogue::None, OpClass::Mlp, l);
                e.vector("layer.mlp.swiglu", VectorKind::SwiGlu, tok, inter, OpClass::Mlp, l);
                e.linear("layer.mlp.down", tok, h, inter, Epilogue::ResidualAdd, OpClass::Mlp, l);
                e.norm("norm", VectorKind::RmsNorm, tok, h, 1);
            }
        }
    }

    /// Output width (the denoiser's cross-attention input from this encoder).
    pub fn width(&self) -> u64 {
        match *self {
            TextEncoder::Clip { hidden, .. } => hidden,
            TextEncoder::T5 { d_model, .. } => d_model,
            TextEncoder::Llm { hidden, .. } => hidden,
        }
    }
}

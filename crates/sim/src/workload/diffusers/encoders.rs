//! Text encoders from their configs: CLIP text models (CLIP ViT-L/14, OpenCLIP ViT-H and
//! bigG as diffusers ships them: `CLIPTextModel` / `CLIPTextModelWithProjection`) and T5 / UMT5
//! encoders (`T5EncoderModel`, `UMT5EncoderModel`: RMSNorm, no biases, gated-GELU feed-forward).

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
}

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
        Err(format!("{}: a text encoder must be a CLIPTextModel(WithProjection), T5EncoderModel or UMT5EncoderModel config (architectures / model_type), got '{}'", c.what, if arch.is_empty() { mt } else { arch }))
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
        }
    }

    /// Output width (the denoiser's cross-attention input from this encoder).
    pub fn width(&self) -> u64 {
        match *self {
            TextEncoder::Clip { hidden, .. } => hidden,
            TextEncoder::T5 { d_model, .. } => d_model,
        }
    }
}

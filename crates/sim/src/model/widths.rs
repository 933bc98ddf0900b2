//! The widths of the token mixers other than grouped-query attention: Gated DeltaNet linear
//! attention, sliding windows and multi-head latent attention (split from `model/mod.rs`,
//! unchanged).

use serde::{Deserialize, Serialize};

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

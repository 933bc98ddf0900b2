//! The layer stack: a model is a list of runs of identical layers, each a token mixer and a
//! feed-forward block. Parameter count, weight bytes per chip, KV or recurrent-state memory and
//! the operator graph all walk this one list (`TransformerDesc::runs`), so a mechanism added to
//! a layer is counted, held and priced by construction.
//!
//! Why runs of the stack's own widths rather than a full description per layer: the 2025-2026
//! families interleave a handful of layer kinds (full / sliding / chunked attention, Gated
//! DeltaNet, Mamba-2, short convolution; dense, MoE or no MLP) over one set of widths, so a run
//! names its kinds and the widths stay on `TransformerDesc` (`mla`, `linear_attention`,
//! `mamba`, `moe`), which older code reads directly.
//!
//! A description serialised before the stack existed has an empty `stack`: its runs are derived
//! from the overlays it carries (`sliding_window`, `linear_attention`, `moe.dense_layers`),
//! shared out over the MLP kinds exactly as the graph builder always has, so old links price as
//! before.

use super::{MlpKind, NormKind, TransformerDesc};
use serde::{Deserialize, Serialize};

fn is_zero(x: &u64) -> bool {
    *x == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A layer's token mixer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Mixer {
    /// Softmax attention of the stack's widths (grouped-query, or MLA when `mla` is set).
    Attention {
        /// Keys each query sees at most (sliding window: Mistral, Gemma 3's local layers,
        /// gpt-oss's 128-token layers); 0: the whole context.
        #[serde(default, skip_serializing_if = "is_zero")]
        window: u64,
        /// Attention within aligned chunks of this many tokens (Llama 4's local layers,
        /// `attention_chunk_size`); 0: none.
        #[serde(default, skip_serializing_if = "is_zero")]
        chunk: u64,
        /// A learned sink logit per head joins the softmax (gpt-oss): one parameter per head,
        /// one more score per query row.
        #[serde(default, skip_serializing_if = "is_false")]
        sinks: bool,
        /// Compressed history (DeepSeek-V4's compressed sparse and heavily compressed
        /// attention, `compress_ratios`): beyond the raw `window`, every `compress` tokens are
        /// pooled into one cached row; 0: none. The layer caches `window` raw rows plus
        /// tokens / `compress` compressed ones.
        #[serde(default, skip_serializing_if = "is_zero")]
        compress: u64,
        /// Compressed rows an indexer selects per query (DeepSeek-V4's ratio-4 layers,
        /// `index_topk`); 0: every compressed row is attended.
        #[serde(default, skip_serializing_if = "is_zero")]
        topk: u64,
    },
    /// Gated DeltaNet linear attention of the stack's `linear_attention` widths.
    Linear,
    /// A Mamba-2 state-space mixer of the stack's `mamba` widths (Nemotron-H).
    Mamba2,
    /// A gated short causal convolution (LFM2): in_proj to B, C, x; depthwise conv of `kernel`
    /// taps; out_proj.
    ShortConv { kernel: u64 },
    /// No token mixer (an MLP-only layer of a hybrid pattern, Nemotron-H's `-` and `E`).
    None,
}

impl Mixer {
    /// Plain full attention.
    pub const FULL: Mixer = Mixer::Attention { window: 0, chunk: 0, sinks: false, compress: 0, topk: 0 };

    /// Whether this mixer keeps a KV cache.
    pub fn is_attention(&self) -> bool {
        matches!(self, Mixer::Attention { .. })
    }

    /// Tokens of context the mixer's cache holds for a sequence of `tokens` (attention only).
    pub fn cached_tokens(&self, tokens: u64) -> u64 {
        match *self {
            Mixer::Attention { window, chunk, compress, .. } => {
                let mut t = tokens;
                if compress > 0 {
                    // The raw window plus one pooled row per `compress` tokens.
                    let raw = tokens.min(window.max(1));
                    return raw.saturating_add(tokens.saturating_sub(raw) / compress);
                }
                if window > 0 {
                    t = t.min(window);
                }
                if chunk > 0 {
                    t = t.min(chunk);
                }
                t
            }
            _ => 0,
        }
    }

    /// A short name for notes and op names.
    pub fn label(&self) -> String {
        match *self {
            Mixer::Attention { window, chunk, sinks, compress, topk } => {
                let mut s = if compress == 1 && topk > 0 {
                    format!("block-sparse attention ({window}-token local window + top-{topk} keys by an index)")
                } else if compress > 0 {
                    let sel = if topk > 0 { format!(", top-{topk} rows by an indexer") } else { String::new() };
                    format!("compressed attention (1 row per {compress} tokens{sel}, {window}-token raw window)")
                } else if window > 0 {
                    format!("sliding-window attention ({window})")
                } else if chunk > 0 {
                    format!("chunked local attention ({chunk})")
                } else {
                    "full attention".to_string()
                };
                if sinks {
                    s.push_str(" with sinks");
                }
                s
            }
            Mixer::Linear => "Gated DeltaNet".into(),
            Mixer::Mamba2 => "Mamba-2".into(),
            Mixer::ShortConv { kernel } => format!("short conv ({kernel})"),
            Mixer::None => "no mixer".into(),
        }
    }
}

/// A layer's feed-forward block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ffn {
    /// A dense MLP of this intermediate width (the stack's `mlp` kind).
    Dense { intermediate: u64 },
    /// The stack's mixture of experts (`moe`).
    Moe,
    /// No MLP (a mixer-only layer of a hybrid pattern).
    None,
}

impl Ffn {
    /// Ordering key of a group in the graph: dense, MoE, none (the order the builder has always
    /// emitted dense and MoE layers in).
    pub fn group(&self) -> u8 {
        match self {
            Ffn::Dense { .. } => 0,
            Ffn::Moe => 1,
            Ffn::None => 2,
        }
    }
}

/// `count` consecutive (or, when derived from overlays, interchangeable) identical layers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerRun {
    pub count: u64,
    pub mixer: Mixer,
    pub ffn: Ffn,
}

/// A Mamba-2 mixer's widths (Dao and Gu 2024, "Transformers are SSMs", arXiv:2405.21060;
/// transformers' NemotronHMamba2Mixer): `heads` x `head_dim` inner channels, `groups` B/C
/// groups of `state` each, a depthwise causal conv of `conv_kernel` taps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mamba2Desc {
    pub heads: u64,
    pub head_dim: u64,
    pub state: u64,
    pub groups: u64,
    pub conv_kernel: u64,
    /// Chunk length of the SSD scan in prefill (`chunk_size`, 128 in Nemotron-H).
    #[serde(default = "default_chunk")]
    pub chunk: u64,
}

fn default_chunk() -> u64 {
    128
}

impl Mamba2Desc {
    /// Inner width (heads x head_dim).
    pub fn inner(&self) -> u64 {
        self.heads * self.head_dim
    }
    /// Channels the convolution runs over: x, B and C.
    pub fn conv_dim(&self) -> u64 {
        self.inner() + 2 * self.groups * self.state
    }
    /// in_proj output width: z, x, B, C and dt.
    pub fn in_proj(&self) -> u64 {
        2 * self.inner() + 2 * self.groups * self.state + self.heads
    }
    /// Parameters: in_proj, conv weight and bias, A_log, D, dt_bias, the gated norm, out_proj.
    pub fn params(&self, hidden: u64) -> u64 {
        hidden * self.in_proj() + self.conv_dim() * (self.conv_kernel + 1) + 3 * self.heads + self.inner() + self.inner() * hidden
    }
    /// Recurrent-state elements per sequence per layer: the SSM state (heads x head_dim x state,
    /// kept in FP32) and the convolution's last kernel - 1 inputs.
    pub fn state_elems(&self) -> (u64, u64) {
        (self.heads * self.head_dim * self.state, self.conv_dim() * self.conv_kernel.saturating_sub(1))
    }
}

/// Parameters of an LFM2 short-conv mixer of width `hidden` (in_proj to 3 h, depthwise conv,
/// out_proj; no biases).
pub fn short_conv_params(hidden: u64, kernel: u64) -> u64 {
    3 * hidden * hidden + hidden * kernel + hidden * hidden
}

fn ceil_div(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { a.div_ceil(b) }
}

impl TransformerDesc {
    /// The model's layers as runs: the explicit `stack` if the reader gave one, else derived
    /// from the overlays (see the module notes). Counts sum to `layers`.
    pub fn runs(&self) -> Vec<LayerRun> {
        if !self.stack.is_empty() {
            return self.stack.clone();
        }
        let total = self.layers;
        let (moe_layers, dense_layers) = self.moe_and_dense_layers();
        let mut runs = Vec::new();
        for (count, ffn) in [(dense_layers, Ffn::Dense { intermediate: self.intermediate }), (moe_layers, Ffn::Moe)] {
            if count == 0 {
                continue;
            }
            let lin = self.linear_attention.map_or(0, |la| ceil_div(la.layers.min(total).saturating_mul(count), total.max(1)).min(count));
            let (win, window) = self.sliding_window.map_or((0, 0), |w| (ceil_div(w.layers.saturating_mul(count), total.max(1)).min(count - lin), w.window));
            let full = count - lin - win;
            for (n, mixer) in [(full, Mixer::FULL), (win, Mixer::Attention { window, chunk: 0, sinks: false, compress: 0, topk: 0 }), (lin, Mixer::Linear)] {
                if n > 0 {
                    runs.push(LayerRun { count: n, mixer, ffn });
                }
            }
        }
        runs
    }

    /// Layers (of all runs) whose mixer is `pred`.
    pub fn count_mixers(&self, pred: impl Fn(&Mixer) -> bool) -> u64 {
        self.runs().iter().filter(|r| pred(&r.mixer)).map(|r| r.count).sum()
    }

    /// Parameters of one full (GQA) attention block of this stack's widths, in 128 bits.
    pub(super) fn gqa_params_wide(&self) -> u128 {
        let (h, d) = (u128::from(self.hidden), u128::from(self.head_dim));
        let qk_norm = if self.qk_norm { 2 * d } else { 0 };
        let q = u128::from(self.heads) * d;
        let kv = u128::from(self.kv_heads) * d;
        let bias = if self.qkv_bias { q + 2 * kv } else { 0 };
        let gate = if self.attn_output_gate { h * q } else { 0 };
        let r = u128::from(self.q_bottleneck);
        // A low-rank query: hidden -> r, its norm, r -> heads x head_dim.
        let q_proj = if r > 0 { h * r + r + r * q } else { h * q };
        let kvf = u128::from(self.kv_factor());
        let bias = if self.kv_shared && self.qkv_bias { q + kv } else { bias };
        let o = if self.o_groups > 0 && self.o_lora_rank > 0 {
            let (g, r) = (u128::from(self.o_groups), u128::from(self.o_lora_rank));
            q * r + g * r * h
        } else {
            q * h
        };
        q_proj + h * kvf * kv + o + bias + qk_norm + gate
    }

    /// Parameters of a token mixer of this stack.
    pub fn mixer_params(&self, m: &Mixer) -> u128 {
        let h = u128::from(self.hidden);
        match *m {
            Mixer::Attention { sinks, .. } => {
                if let Some(g) = self.attention_view(m) {
                    return g.mixer_params(m);
                }
                let (cs, cr) = self.compressor_params(m);
                self.attention_params_wide() + if sinks { u128::from(self.heads) } else { 0 } + u128::from(cs) + u128::from(cr)
            }
            Mixer::Linear => self.linear_attention.map_or(0, |la| u128::from(la.params(self.hidden))),
            Mixer::Mamba2 => self.mamba.map_or(0, |m| u128::from(m.params(self.hidden))),
            Mixer::ShortConv { kernel } => 4 * h * h + h * u128::from(kernel),
            Mixer::None => 0,
        }
    }

    /// Total and active parameters of a feed-forward block of this stack.
    pub fn ffn_params(&self, f: &Ffn) -> (u128, u128) {
        let h = u128::from(self.hidden);
        match *f {
            Ffn::Dense { intermediate } => {
                let p = self.mlp_params_wide(intermediate);
                (p, p)
            }
            Ffn::Moe => match &self.moe {
                Some(m) => {
                    let expert = u128::from(self.expert_params(m, m.expert_intermediate));
                    let shared = if m.shared_intermediate > 0 { self.mlp_params_wide(m.shared_intermediate) + if m.shared_gate { h } else { 0 } } else { 0 };
                    // A latent MoE projects into and out of its latent width around the experts.
                    let latent = 2 * h * u128::from(m.latent);
                    let base = h * u128::from(m.experts) + shared + latent;
                    (base + u128::from(m.experts) * expert, base + u128::from(m.top_k) * expert)
                }
                None => (0, 0),
            },
            Ffn::None => (0, 0),
        }
    }

    /// Norm parameters of a layer of this run: one per block present (LayerNorm has a bias).
    pub fn run_norm_params(&self, r: &LayerRun) -> u64 {
        let blocks = u64::from(r.mixer != Mixer::None) + u64::from(r.ffn != Ffn::None);
        let per = match self.norm {
            NormKind::RmsNorm => self.hidden,
            NormKind::LayerNorm => 2 * self.hidden,
        };
        // Older descriptions count two norms per layer whatever it holds. DeepSeek-V4's
        // hyper-connection mixers sit beside the norms, one per block (`compressor`).
        let norms = if blocks == 2 || self.stack.is_empty() { 2 * per } else { blocks * per };
        norms + self.hc_layer_params(if self.stack.is_empty() { 2 } else { blocks })
    }

    /// Parameters of one routed expert of width `inter` (at the latent width for a latent MoE).
    pub fn expert_params(&self, m: &super::MoeDesc, inter: u64) -> u64 {
        let w = u128::from(if m.latent > 0 { m.latent } else { self.hidden });
        let i = u128::from(inter);
        let p = match self.mlp {
            MlpKind::SwiGlu => 3 * w * i,
            MlpKind::Gelu => 2 * w * i + i + w,
            MlpKind::Relu2 => 2 * w * i,
        };
        u64::try_from(p).unwrap_or(u64::MAX)
    }

    /// Parameters of one dense MLP of width `inter` in 128 bits.
    pub(super) fn mlp_params_wide(&self, inter: u64) -> u128 {
        let (h, i) = (u128::from(self.hidden), u128::from(inter));
        match self.mlp {
            MlpKind::SwiGlu => 3 * h * i,
            MlpKind::Gelu => 2 * h * i + i + h,
            MlpKind::Relu2 => 2 * h * i,
        }
    }

    /// Layers whose mixer keeps a KV cache, and the tokens each holds for a `tokens`-long
    /// sequence, summed: the KV cache in layer-tokens.
    pub fn cached_layer_tokens(&self, tokens: u64) -> u64 {
        self.runs().iter().map(|r| r.count.saturating_mul(r.mixer.cached_tokens(tokens))).fold(0, u64::saturating_add)
    }
}

impl TransformerDesc {
    /// The runs that fall on a pipeline stage of `here` layers (all of them when `here` covers
    /// the model): MoE layers take their share rounded up and the other MLP kinds the rest (as
    /// the graph builder has always split them); inside each MLP kind, the layers whose mixer
    /// is not plain full attention take their share rounded up and full attention the rest.
    pub fn runs_here(&self, here: u64) -> Vec<LayerRun> {
        let runs = self.runs();
        if here >= self.layers {
            return runs;
        }
        let total = self.layers.max(1);
        let (moe, _) = self.moe_and_dense_layers();
        let moe_here = ceil_div(moe.saturating_mul(here), total).min(here);
        let mut groups: Vec<(Ffn, u64)> = Vec::new();
        for r in &runs {
            match groups.iter_mut().find(|g| g.0 == r.ffn) {
                Some(g) => g.1 += r.count,
                None => groups.push((r.ffn, r.count)),
            }
        }
        groups.sort_by_key(|g| g.0.group());
        let others = total.saturating_sub(moe).max(1);
        let last_other = groups.iter().rposition(|g| g.0 != Ffn::Moe);
        let mut left_other = here - moe_here;
        let mut out = Vec::new();
        for (gi, (ffn, count)) in groups.into_iter().enumerate() {
            let n_here = if ffn == Ffn::Moe {
                moe_here
            } else {
                let c = if Some(gi) == last_other { left_other } else { ceil_div(count.saturating_mul(here - moe_here), others).min(left_other) };
                left_other -= c;
                c
            };
            let mut members: Vec<LayerRun> = runs.iter().filter(|r| r.ffn == ffn).copied().collect();
            // Non-full mixers first (rounded up), full attention last (the remainder).
            members.sort_by_key(|r| r.mixer == Mixer::FULL);
            let (n, mut left) = (members.len(), n_here);
            for (i, r) in members.into_iter().enumerate() {
                let c = if i + 1 == n { left } else { ceil_div(r.count.saturating_mul(n_here), count.max(1)).min(left) };
                left -= c;
                if c > 0 {
                    out.push(LayerRun { count: c, ..r });
                }
            }
        }
        out
    }

    /// Parameters of a mixer on one chip of a `tp`-way tensor-parallel group, as (split linear
    /// weights, replicated small tensors); at tp = 1 they sum to `mixer_params`.
    pub fn mixer_chip_params(&self, m: &Mixer, tp: u64) -> (u64, u64) {
        let tp = tp.max(1);
        let h = self.hidden;
        match *m {
            Mixer::Attention { sinks, .. } => {
                if let Some(g) = self.attention_view(m) {
                    return g.mixer_chip_params(m, tp);
                }
                let sink = if sinks { self.heads / tp } else { 0 };
                if let Some(ml) = &self.mla {
                    // Per-head up-projections split tp-way (the shared down-projections are
                    // small); a sparse-attention indexer is replicated (vLLM's Indexer).
                    let idx = ml.sparse.map_or(0, |s| s.params(h, ml.q_lora_rank));
                    return ((self.attention_params() - idx) / tp + idx, sink);
                }
                let (hq, hkv, d) = (self.heads / tp, (self.kv_heads / tp).max(1), self.head_dim);
                let gate = if self.attn_output_gate { h * hq * d } else { 0 };
                let bias = if self.qkv_bias { (hq + 2 * hkv) * d } else { 0 };
                let qk_norm = if self.qk_norm { 2 * d } else { 0 };
                let r = self.q_bottleneck;
                // DeepSeek-V4's compressors (replicated) and indexer projections (split).
                let (cs, cr) = self.compressor_params(m);
                let extra = ceil_div(cs, tp) + cr;
                if r > 0 {
                    // Step-3: the query's down-projection and the single KV head replicated
                    // (vLLM's ReplicatedLinear qkv_proj), wq and o_proj split.
                    return (h * (r + self.kv_factor() * self.kv_heads * d) + r * hq * d + self.o_proj_params(hq * d, tp) + gate + extra, bias + qk_norm + sink + r);
                }
                (h * (hq + self.kv_factor() * hkv) * d + self.o_proj_params(hq * d, tp) + gate + extra, bias + qk_norm + sink)
            }
            Mixer::Linear => (self.linear_attention.map_or(0, |la| ceil_div(la.params(h), tp)), 0),
            Mixer::Mamba2 => (self.mamba.map_or(0, |mm| ceil_div(mm.params(h), tp)), 0),
            Mixer::ShortConv { kernel } => (ceil_div(4 * h * h, tp), h * kernel),
            Mixer::None => (0, 0),
        }
    }
}

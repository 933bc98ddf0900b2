//! Parameter counts and KV bytes per token of a model: one formula, walked over the layer stack
//! (split from `model/mod.rs`, unchanged).

use super::*;

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
    pub(super) fn attention_params_wide(&self) -> u128 {
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

//! Per-layer attention widths (Gemma 4): the global (full-attention) layers may have their own
//! KV heads, head width and shared keys/values (`num_global_key_value_heads`,
//! `global_head_dim`, `attention_k_eq_v`), the local (sliding-window) layers the stack's. The
//! parameter count, the weights a chip holds and the KV cache read a layer's widths through
//! `attention_view`, so each layer is counted and held at its own widths; the graph prices the
//! global layers' attention core at theirs (`workload::llm::stack`).

use super::{Mixer, TransformerDesc};

impl TransformerDesc {
    /// Whether this description gives its global attention layers widths of their own.
    pub fn has_global_widths(&self) -> bool {
        self.global_kv_heads > 0 || self.global_head_dim > 0 || self.global_kv_shared
    }

    /// Whether `m` is a global attention layer (full attention, no window, chunk or
    /// compression) of a description with global widths.
    pub fn is_global_layer(&self, m: &Mixer) -> bool {
        self.has_global_widths() && matches!(*m, Mixer::Attention { window: 0, chunk: 0, compress: 0, .. })
    }

    /// The description at layer `m`'s widths: the global ones for a global layer (None: the
    /// stack's own widths apply).
    pub fn attention_view(&self, m: &Mixer) -> Option<TransformerDesc> {
        if !self.is_global_layer(m) {
            return None;
        }
        let mut g = TransformerDesc { stack: Vec::new(), approx: Vec::new(), audio: None, ..self.clone() };
        if self.global_kv_heads > 0 {
            g.kv_heads = self.global_kv_heads;
        }
        if self.global_head_dim > 0 {
            g.head_dim = self.global_head_dim;
        }
        g.kv_shared = self.global_kv_shared || self.kv_shared;
        g.global_kv_heads = 0;
        g.global_head_dim = 0;
        g.global_kv_shared = false;
        Some(g)
    }

    /// KV-cache elements per token of one layer whose mixer is `m`, with `tp`-way tensor
    /// parallelism (GQA heads split, MLA's latent replicated): keys and values of its KV
    /// heads, or the shared row.
    pub fn kv_elems_for(&self, m: &Mixer, tp: u64) -> u64 {
        if let Some(ml) = &self.mla {
            return ml.cached_elems();
        }
        let v = self.attention_view(m);
        let t = v.as_ref().unwrap_or(self);
        t.kv_factor() * (t.kv_heads / tp.max(1)).max(1) * t.head_dim
    }
}

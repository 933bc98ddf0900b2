//! Gemma 4 (`gemma4_text` under the `gemma4` wrapper: 26B-A4B, 31B). Sources: the checkpoints'
//! config.json (NVIDIA aiconfigurator's copies) and the Gemma 4 model card (hybrid attention:
//! local sliding-window layers and global layers with unified keys and values; the 26B-A4B's
//! 128 experts, 8 routed per token, plus one shared).
//!
//! What is read as what:
//! - **Attention by layer** (`layer_types`): local layers attend within `sliding_window` at the
//!   stack's `num_key_value_heads` x `head_dim`; global layers at their own
//!   `num_global_key_value_heads` x `global_head_dim`, keys = values (`attention_k_eq_v`):
//!   `TransformerDesc::global_*`, counted, held and cached per layer (`layer_widths`).
//! - **MoE** (`enable_moe_block`): `num_experts` of `moe_intermediate_size`, top
//!   `top_k_experts`, and the layer's dense MLP (`intermediate_size`) beside them read as one
//!   always-on shared expert of that width.
//! - Tied embeddings, q/k norms, the gated GELU-tanh MLP (SwiGLU's three matrices), as Gemma 3.

use crate::model::TransformerDesc;
use serde_json::{Map, Value};

type Obj = Map<String, Value>;

/// Keys read here from the original, or numerics only (soft-capping, bidirectional attention
/// over images, RoPE by layer kind).
const OWN: &[&str] = &[
    "attention_k_eq_v", "enable_moe_block", "global_head_dim", "num_global_key_value_heads", "top_k_experts", "hidden_size_per_layer_input",
    "vocab_size_per_layer_input", "num_kv_shared_layers", "use_bidirectional_attention", "use_double_wide_mlp", "expert_intermediate_size",
    "final_logit_softcapping", "rope_parameters",
];

fn num(o: &Obj, k: &str) -> Option<u64> {
    o.get(k).and_then(Value::as_u64)
}

/// The config in the generic decoder's spelling.
pub fn normalize(obj: &Obj) -> Result<Obj, String> {
    let mut o = obj.clone();
    let moe = obj.get("enable_moe_block").and_then(Value::as_bool).unwrap_or(false);
    if moe {
        if let Some(k) = obj.get("top_k_experts").cloned() {
            o.insert("num_experts_per_tok".into(), k);
        }
        if let Some(w) = obj.get("intermediate_size").cloned() {
            o.insert("moe_shared_expert_intermediate_size".into(), w);
        }
    } else {
        for k in ["num_experts", "moe_intermediate_size"] {
            o.remove(k);
        }
    }
    for k in OWN {
        o.remove(*k);
    }
    Ok(o)
}

/// Gemma 4's mechanisms the generic read does not set, and the notes.
pub fn finish(obj: &Obj, t: &mut TransformerDesc, prefix: &str, warnings: &mut Vec<String>) -> Result<(), String> {
    t.tied_embeddings = obj.get("tie_word_embeddings").and_then(Value::as_bool).unwrap_or(true);
    t.qk_norm = true;
    warnings.retain(|w| !w.contains("hidden_act") && !w.contains("hidden_activation"));
    t.global_kv_heads = num(obj, "num_global_key_value_heads").unwrap_or(0);
    t.global_head_dim = num(obj, "global_head_dim").unwrap_or(0);
    t.global_kv_shared = obj.get("attention_k_eq_v").and_then(Value::as_bool).unwrap_or(false);
    if t.global_kv_heads > 0 && t.heads % t.global_kv_heads != 0 {
        return Err(format!("field '{prefix}num_global_key_value_heads' = {} must divide the {} query heads", t.global_kv_heads, t.heads));
    }
    if let Some(m) = t.moe.as_mut() {
        m.shared_gate = false;
        t.approx.push(format!("MoE: Gemma 4's dense MLP ({} wide) beside the {} experts read as one always-on shared expert of that width (the same matmuls)", m.shared_intermediate, m.experts));
    }
    // The global layers' own widths are counted, held, cached and priced (projections and
    // core) at them (`layer_widths`, `workload::llm::global_projections`): not an approximation.
    t.approx.push("MLP: Gemma's gated GELU-tanh costed as SwiGLU (the same three matrices; the activation is a vector op of the same size)".into());
    t.approx.push("norms: Gemma's four norms per layer counted as two (a few thousand parameters per layer)".into());
    if let Some(n) = num(obj, "num_kv_shared_layers").filter(|n| *n > 0) {
        t.approx.push(format!("attention: the last {n} layers reuse earlier layers' KV cache (num_kv_shared_layers): each is cached as its own (an upper bound)"));
    }
    if let Some(w) = num(obj, "hidden_size_per_layer_input").filter(|w| *w > 0) {
        t.approx.push(format!("embeddings: the per-layer input embeddings ({w} wide per layer) are not counted"));
    }
    Ok(())
}

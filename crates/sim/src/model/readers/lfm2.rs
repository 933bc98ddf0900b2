//! LFM2 (Liquid AI; transformers' Lfm2Config, vLLM `lfm2.py`): a hybrid of gated short
//! convolutions (`conv` layers: in_proj to B, C, x, a depthwise causal conv of `conv_L_cache`
//! taps, out_proj) and grouped-query attention (`full_attention`) by `layer_types` (older
//! configs: `full_attn_idxs`), each followed by a SwiGLU MLP whose width is
//! `intermediate_size` (or `block_ff_dim`), adjusted as Lfm2MLP does when
//! `block_auto_adjust_ff_dim`: 2/3 of it, times `block_ffn_dim_multiplier`, rounded up to
//! `block_multiple_of`. LFM2-MoE: `num_dense_layers` dense layers first, then experts.

use crate::model::TransformerDesc;
use serde_json::{Map, Value};

type Obj = Map<String, Value>;

const OWN: &[&str] = &[
    "block_dim", "block_ff_dim", "block_auto_adjust_ff_dim", "block_ffn_dim_multiplier", "block_multiple_of", "conv_L_cache",
    "conv_bias", "norm_eps", "full_attn_idxs", "num_dense_layers", "use_expert_bias", "block_use_swiglu", "block_norm_eps",
    "block_mlp_init_scale", "block_out_init_scale", "block_use_xavier_init", "block_dim_multiplier", "tie_embedding", "layer_types",
];

/// The MLP width the checkpoint has (Lfm2MLP's adjustment).
fn ff_width(obj: &Obj) -> Result<Option<u64>, String> {
    let Some(base) = obj.get("intermediate_size").or_else(|| obj.get("block_ff_dim")).and_then(Value::as_u64) else { return Ok(None) };
    if obj.get("block_auto_adjust_ff_dim").and_then(Value::as_bool) != Some(true) {
        return Ok(Some(base));
    }
    let mut ff = 2 * base / 3;
    if let Some(m) = obj.get("block_ffn_dim_multiplier").and_then(Value::as_f64) {
        ff = (m * ff as f64) as u64;
    }
    let multiple = obj.get("block_multiple_of").and_then(Value::as_u64).unwrap_or(256).max(1);
    Ok(Some(ff.div_ceil(multiple) * multiple))
}

pub fn normalize(obj: &Obj) -> Result<Obj, String> {
    let mut o = obj.clone();
    if let Some(w) = ff_width(obj)? {
        o.insert("intermediate_size".into(), Value::from(w));
    }
    if let Some(t) = obj.get("tie_embedding").cloned() {
        o.entry("tie_word_embeddings").or_insert(t);
    }
    if let Some(n) = obj.get("num_dense_layers").cloned() {
        o.insert("first_k_dense_replace".into(), n);
    }
    for k in OWN {
        o.remove(*k);
    }
    Ok(o)
}

pub fn finish(obj: &Obj, t: &mut TransformerDesc, prefix: &str) -> Result<(), String> {
    let _ = prefix;
    t.qk_norm = true;
    // LFM2 ties its embeddings unless the config says otherwise.
    t.tied_embeddings = obj.get("tie_word_embeddings").or_else(|| obj.get("tie_embedding")).and_then(Value::as_bool).unwrap_or(true);
    Ok(())
}

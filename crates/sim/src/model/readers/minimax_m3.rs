//! MiniMax-M3 (`minimax_m3`). Sources: the checkpoint's config.json (NVIDIA aiconfigurator's
//! copy) and the MiniMax-M3 model card (MiniMax Sparse Attention, MSA: a grouped-query
//! attention whose queries attend to the key blocks an index selects, arXiv:2606.13392).
//!
//! What is read as what:
//! - **Attention**: grouped-query softmax attention of `num_attention_heads` x `head_dim` over
//!   `num_key_value_heads`, a per-head query/key norm. The layers `sparse_attention_freq`
//!   marks are MSA: each query attends to its `sparse_local_block` local blocks and the
//!   `sparse_topk_blocks` blocks of `sparse_block_size` keys its index scores highest, while
//!   the whole KV cache is kept (`Mixer::Attention` with `compress` 1: every token a row, and
//!   `topk` rows selected beyond the local window).
//! - **MLP**: the first layers (`moe_layer_freq` 0) dense, `dense_intermediate_size` wide; the
//!   others MoE, `num_local_experts` of `moe_intermediate_size`, top `num_experts_per_tok`,
//!   and `n_shared_experts` always-on expert `shared_intermediate_size` wide (no gate).
//! - **MTP**: `num_nextn_predict_layers`.

use crate::model::{Mixer, TransformerDesc};
use serde_json::{Map, Value};

type Obj = Map<String, Value>;

/// Keys that shape numerics only (the clamped, scaled SwiGLU, Gemma-style norms, routing
/// bias and scaling, partial rotary) or are read here from the original.
const OWN: &[&str] = &[
    "sparse_attention_config", "dense_intermediate_size", "shared_intermediate_size", "swiglu_alpha", "swiglu_limit", "use_gemma_norm",
    "qk_norm_type", "use_routing_bias", "scoring_func", "routed_scaling_factor", "rotary_dim", "partial_rotary_factor",
    "attention_output_gate", "num_mtp_modules",
];

/// The config in the generic decoder's spelling.
pub fn normalize(obj: &Obj) -> Result<Obj, String> {
    let mut o = obj.clone();
    // The experts are `moe_intermediate_size` wide, or `intermediate_size` where a checkpoint
    // leaves the former out (the VL checkpoint's text_config); dense layers are
    // `dense_intermediate_size` wide.
    if !obj.contains_key("moe_intermediate_size") {
        if let Some(w) = obj.get("intermediate_size").cloned() {
            o.insert("moe_intermediate_size".into(), w);
        }
    }
    if let Some(w) = obj.get("dense_intermediate_size").cloned() {
        o.insert("intermediate_size".into(), w);
    }
    if let Some(w) = obj.get("shared_intermediate_size").cloned().filter(|w| w.as_u64().is_some_and(|x| x > 0)) {
        o.insert("moe_shared_expert_intermediate_size".into(), w);
        o.remove("n_shared_experts");
    }
    if obj.get("hidden_act").and_then(Value::as_str) == Some("swigluoai") {
        o.insert("hidden_act".into(), Value::from("silu"));
    }
    for k in OWN {
        o.remove(*k);
    }
    Ok(o)
}

fn cfg_u64(s: &Obj, k: &str, prefix: &str) -> Result<u64, String> {
    s.get(k).and_then(Value::as_u64).ok_or_else(|| format!("missing field '{prefix}sparse_attention_config.{k}' (a whole number)"))
}

/// Each layer's mixer: MSA where `sparse_attention_freq` is 1, full attention elsewhere.
pub fn mixers(obj: &Obj, n: u64, prefix: &str) -> Result<Option<Vec<Mixer>>, String> {
    let Some(s) = obj.get("sparse_attention_config").and_then(Value::as_object) else { return Ok(None) };
    if s.get("use_sparse_attention").and_then(Value::as_bool) == Some(false) {
        return Ok(None);
    }
    let block = cfg_u64(s, "sparse_block_size", prefix)?.max(1);
    let local = cfg_u64(s, "sparse_local_block", prefix)?;
    let topk = cfg_u64(s, "sparse_topk_blocks", prefix)?;
    let sparse = Mixer::Attention { window: local.max(1).saturating_mul(block), chunk: 0, sinks: false, compress: 1, topk: topk.saturating_mul(block).max(1) };
    let a = s.get("sparse_attention_freq").and_then(Value::as_array).ok_or_else(|| format!("missing field '{prefix}sparse_attention_config.sparse_attention_freq' (each layer's 0 / 1)"))?;
    if a.len() as u64 != n {
        return Err(format!("field '{prefix}sparse_attention_config.sparse_attention_freq' lists {} layers, but the model has {n} ('{prefix}num_hidden_layers')", a.len()));
    }
    let mut v = Vec::new();
    for (i, e) in a.iter().enumerate() {
        v.push(match e.as_u64() {
            Some(1) => sparse,
            Some(0) => Mixer::FULL,
            _ => return Err(format!("field '{prefix}sparse_attention_config.sparse_attention_freq[{i}]' = {e}: expected 0 (full attention) or 1 (sparse attention)")),
        });
    }
    Ok(Some(v))
}

/// The M3 mechanisms the generic read does not set, and the notes.
pub fn finish(obj: &Obj, t: &mut TransformerDesc, _prefix: &str) {
    if obj.get("use_qk_norm").and_then(Value::as_bool) == Some(true) {
        t.qk_norm = true;
    }
    if let Some(m) = t.moe.as_mut() {
        m.shared_gate = false;
    }
    if let Some(s) = obj.get("sparse_attention_config").and_then(Value::as_object) {
        let ih = s.get("sparse_num_index_heads").and_then(Value::as_u64).filter(|n| (1..=1024).contains(n)).unwrap_or(0);
        let id = s.get("sparse_index_dim").and_then(Value::as_u64).filter(|n| (1..=4096).contains(n)).unwrap_or(0);
        let block = s.get("sparse_block_size").and_then(Value::as_u64).unwrap_or(0);
        if ih > 0 && id > 0 {
            // The index is counted, held, cached and priced (`model::compressor`,
            // `workload::compressed_attention`).
            t.compressor = Some(crate::model::compressor::CompressorDesc { index_heads: ih, index_head_dim: id, hc_mult: 1, hc_sinkhorn_iters: 0 });
            t.approx.push(format!("attention: MiniMax Sparse Attention's block index ({ih} index heads of {id}, its cached key per token) is counted, held and priced as it scores every cached key per query; the max-per-{block}-token-block reduction and the top-block selection are priced as the scores' vector work"));
        } else {
            t.approx.push(format!("attention: MiniMax Sparse Attention's block index (sparse_num_index_heads / sparse_index_dim not given) is neither counted nor priced; the attention over the local and selected {block}-token blocks is, and the KV cache holds every token"));
        }
    }
    if obj.get("hidden_act").and_then(Value::as_str) == Some("swigluoai") {
        t.approx.push("MLP: the clamped, scaled SwiGLU (swigluoai: swiglu_alpha, swiglu_limit) is priced as SwiGLU (the same three matrices)".into());
    }
}

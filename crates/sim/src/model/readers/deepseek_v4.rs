//! DeepSeek-V4 (`deepseek_v4`: V4-Flash, V4-Pro). Sources: the checkpoints' config.json
//! (NVIDIA aiconfigurator's copies), the model card's architecture summary (as quoted by
//! antirez/ds4 `MODEL_CARD.md`) and the module shapes of Ascend msmodeling's builtin
//! `deepseek_v4.py` (`DeepseekV4SparseAttention`, `DeepseekV4DecoderLayer`).
//!
//! What is read as what:
//! - **Attention**: `num_attention_heads` query heads of `head_dim` (512) through a low-rank
//!   query (`wq_a` hidden -> `q_lora_rank`, its norm, `wq_b`: the Step-3 low-rank query of the
//!   stack), and one shared KV head (`wkv` hidden -> `head_dim`, keys = values: `kv_shared`),
//!   a learned sink per head (`attn_sink`).
//! - **Per-layer compression** (`compress_ratios`): 0 = the raw `sliding_window` (128) only;
//!   4 = compressed sparse attention (one pooled row per 4 tokens, the indexer's `index_topk`
//!   rows attended); 128 = heavily compressed attention (one row per 128 tokens, all attended).
//!   Each layer caches its raw window plus its pooled rows (`Mixer::Attention::compress`).
//! - **MoE** on every layer: `n_routed_experts` of `moe_intermediate_size`, top
//!   `num_experts_per_tok`, `n_shared_experts` always on (the generic DeepSeek reading).
//! - **MTP**: `num_nextn_predict_layers`.
//!
//! What is approximated is said in notes (`finish`).

use crate::model::{Mixer, TransformerDesc};
use serde_json::{Map, Value};

type Obj = Map<String, Value>;

/// Keys the generic read must not see (read here, or named in a note).
const OWN: &[&str] = &[
    "compress_ratios", "compress_rope_theta", "hc_eps", "hc_mult", "hc_sinkhorn_iters", "index_head_dim", "index_n_heads",
    "index_topk", "o_groups", "o_lora_rank", "q_lora_rank", "num_hash_layers", "swiglu_limit", "scoring_func", "expert_dtype",
    "sliding_window", "topk_method", "routed_scaling_factor", "norm_topk_prob",
];

fn num(o: &Obj, k: &str) -> Option<u64> {
    o.get(k).and_then(Value::as_u64)
}

/// The config in the generic decoder's spelling: the V4-only keys taken out (read in
/// `finish` / `mixers` from the original).
pub fn normalize(obj: &Obj) -> Result<Obj, String> {
    let mut o = obj.clone();
    for k in OWN {
        o.remove(*k);
    }
    Ok(o)
}

/// Each layer's mixer from `compress_ratios` (one entry per layer; V4-Flash lists one more,
/// its MTP layer's, which is not a decoder layer).
pub fn mixers(obj: &Obj, n: u64, prefix: &str) -> Result<Vec<Mixer>, String> {
    let window = num(obj, "sliding_window").filter(|w| *w > 0).ok_or_else(|| format!("field '{prefix}sliding_window' must be a positive window (DeepSeek-V4 keeps a raw window on every layer)"))?;
    let topk = num(obj, "index_topk").unwrap_or(0);
    let a = obj.get("compress_ratios").and_then(Value::as_array).ok_or_else(|| format!("missing field '{prefix}compress_ratios' (DeepSeek-V4 gives each layer's compression ratio)"))?;
    if (a.len() as u64) < n {
        return Err(format!("field '{prefix}compress_ratios' lists {} layers, but the model has {n} ('{prefix}num_hidden_layers')", a.len()));
    }
    let mut v = Vec::new();
    for (i, e) in a.iter().take(n as usize).enumerate() {
        let r = e.as_u64().filter(|r| *r <= 1 << 16).ok_or_else(|| format!("field '{prefix}compress_ratios[{i}]' = {e}: expected a whole compression ratio (0, 4 or 128)"))?;
        let sel = if r == 4 { topk } else { 0 };
        v.push(Mixer::Attention { window, chunk: 0, sinks: true, compress: r, topk: sel });
    }
    Ok(v)
}

/// The V4 mechanisms the generic read does not set, and the notes on what is approximated.
pub fn finish(obj: &Obj, t: &mut TransformerDesc, prefix: &str) -> Result<(), String> {
    let r = num(obj, "q_lora_rank").ok_or_else(|| format!("missing field '{prefix}q_lora_rank' (DeepSeek-V4's low-rank query)"))?;
    t.q_bottleneck = r;
    t.kv_shared = true;
    if let Some(m) = t.moe.as_mut() {
        m.shared_gate = false;
    }
    let h = t.hidden;
    if let (Some(g), Some(rank)) = (num(obj, "o_groups"), num(obj, "o_lora_rank")) {
        if g == 0 || t.heads % g != 0 {
            return Err(format!("field '{prefix}o_groups' = {g} must divide the {} query heads", t.heads));
        }
        // wo_a: each group's heads x head_dim / g -> rank; wo_b: g x rank -> hidden.
        t.o_groups = g;
        t.o_lora_rank = rank;
    }
    // The compressors, the indexer and the hyper-connections are counted, held and priced
    // (`model::compressor`, `workload::compressed_attention`).
    let ratio4 = obj.get("compress_ratios").and_then(Value::as_array).map_or(0, |a| a.iter().take(t.layers as usize).filter(|e| e.as_u64() == Some(4)).count());
    let hc = match obj.get("hc_mult") {
        None | Some(Value::Null) => 1,
        Some(v) => v.as_u64().filter(|m| (1..=64).contains(m)).ok_or_else(|| format!("field '{prefix}hc_mult' = {v}: expected the residual streams, a whole number from 1 to 64"))?,
    };
    let (index_heads, index_head_dim) = match (num(obj, "index_n_heads"), num(obj, "index_head_dim")) {
        (Some(a), Some(b)) if a > 0 && b > 0 && a <= 1024 && b <= 4096 => (a, b),
        _ if ratio4 == 0 || num(obj, "index_topk").unwrap_or(0) == 0 => (0, 0),
        _ => return Err(format!("fields '{prefix}index_n_heads' and '{prefix}index_head_dim' must give the indexer's heads and width (1..1024, 1..4096): {ratio4} layers select compressed rows by an indexer")),
    };
    let iters = match obj.get("hc_sinkhorn_iters") {
        None | Some(Value::Null) => 0,
        Some(v) => v.as_u64().filter(|n| *n <= 1000).ok_or_else(|| format!("field '{prefix}hc_sinkhorn_iters' = {v}: expected a whole number of iterations up to 1000"))?,
    };
    t.compressor = Some(crate::model::compressor::CompressorDesc { index_heads, index_head_dim, hc_mult: hc, hc_sinkhorn_iters: iters });
    t.approx.push(format!(
        "attention: the KV compressors and the {ratio4} ratio-4 layers' lightning indexer ({index_heads} heads of {index_head_dim}) are counted, held and priced (their projections, the indexer's scoring of the compressed keys, its cached keys); the compressors' softmax-gated pooling is priced as one vector pass over the projected rows, the indexer's Hadamard rotation and FP4 query quantisation are not priced (pointwise), and each sequence's incomplete compression window (at most ratio x 2 x head_dim FP32 per layer) is not held in memory"
    ));
    if hc > 1 {
        t.approx.push(format!(
            "residual: DeepSeek-V4's {hc} hyper-connection streams are counted ({} FP32 mixing parameters per layer), held and priced per block (the (2 + {hc}) x {hc} mixing matmul over {hc} x hidden, the Sinkhorn iterations and the streams' reads and writes); the output head's and the MTP block's own hc_head mixers ({} parameters each) are not counted",
            2 * (2 + hc) * hc * hc * h + 2 * ((2 + hc) * hc + 3),
            hc * hc * h + hc + 1
        ));
    }
    if let Some(n) = num(obj, "num_hash_layers").filter(|n| *n > 0) {
        t.approx.push(format!("MoE: the first {n} MoE layers pick their experts by a token-id table (hash routing, tid2eid) instead of the gate's top-k; the gate's scores still weight the chosen experts (msmodeling route_deepseek_v4_gate), so the gate and expert matmuls priced are the ones that run; the table ({n} x vocab x top-k expert ids) is not counted as parameters"));
    }
    if num(obj, "swiglu_limit").is_some() || obj.get("swiglu_limit").and_then(Value::as_f64).is_some() {
        t.approx.push("MoE: the clamped SwiGLU (swiglu_limit) is priced as SwiGLU (the clamp is an elementwise op of the same size)".into());
    }
    if let Some(e) = obj.get("expert_dtype").and_then(Value::as_str) {
        t.approx.push(format!("weights: the checkpoint keeps its routed experts in {e} (expert_dtype); they are priced at the scenario's expert precision (deployment.serving.expert_precision), the rest at its weight precision"));
    }
    Ok(())
}

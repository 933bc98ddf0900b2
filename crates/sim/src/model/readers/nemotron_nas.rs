//! Nemotron-NAS / DeciLM (`model_type` "nemotron-nas": Llama-3.3-Nemotron-Super-49B,
//! Llama-3.1-Nemotron-Ultra-253B; vLLM `nemotron_nas.py`, SGLang `nemotron_nas.py`, the
//! checkpoints' `modeling_decilm.py`): a Llama whose layers were pruned one by one by neural
//! architecture search, so `block_configs` gives every layer its own block:
//! - `attention.no_op`: the layer has no attention (no KV cache, no matmuls);
//!   `attention.n_heads_in_group`: query heads per KV head (KV heads = heads / it);
//!   `attention.window_length`: a sliding window of that many tokens;
//!   `attention.replace_with_linear`: one hidden x hidden linear instead of attention;
//! - `ffn.no_op`: no MLP; `ffn.ffn_mult`: the SwiGLU MLP's width,
//!   `round_up(int(2 * ffn_mult * hidden / 3), 256)` (DeciLM's `_ffn_mult_to_intermediate_size`);
//!   `ffn.replace_with_linear`: one hidden x hidden linear instead of the MLP.

use crate::model::{Ffn, Mixer};
use serde_json::{Map, Value};

type Obj = Map<String, Value>;

/// One layer's block as the stack sees it.
struct Block {
    attention: Option<Attn>,
    ffn: Option<u64>,
}

struct Attn {
    kv_heads: u64,
    window: u64,
}

/// DeciLM's MLP width for a multiplier: int(2 * mult * hidden / 3) rounded up to 256.
pub fn ffn_width(mult: f64, hidden: u64) -> u64 {
    let w = (2.0 * mult * hidden as f64 / 3.0) as u64;
    w.div_ceil(256) * 256
}

fn flag(o: &Obj, k: &str) -> bool {
    o.get(k).and_then(Value::as_bool).unwrap_or(false)
}

fn blocks(obj: &Obj, prefix: &str, notes: &mut Vec<String>) -> Result<Vec<Block>, String> {
    let list = obj.get("block_configs").and_then(Value::as_array).ok_or_else(|| format!("model_type 'nemotron-nas' needs '{prefix}block_configs' (one block per layer)"))?;
    let hidden = obj.get("hidden_size").and_then(Value::as_u64).ok_or_else(|| format!("missing field '{prefix}hidden_size'"))?;
    let heads = obj.get("num_attention_heads").and_then(Value::as_u64).filter(|h| *h > 0).ok_or_else(|| format!("missing field '{prefix}num_attention_heads'"))?;
    let mut out = Vec::new();
    let mut linear_attn = 0;
    for (i, b) in list.iter().enumerate() {
        let at = |k: &str| format!("{prefix}block_configs[{i}].{k}");
        let b = b.as_object().ok_or_else(|| format!("field '{}' must be an object with 'attention' and 'ffn'", at("")))?;
        let a = b.get("attention").and_then(Value::as_object).ok_or_else(|| format!("missing field '{}'", at("attention")))?;
        let f = b.get("ffn").and_then(Value::as_object).ok_or_else(|| format!("missing field '{}'", at("ffn")))?;
        let attention = if flag(a, "no_op") {
            None
        } else if flag(a, "replace_with_linear") {
            linear_attn += 1;
            None
        } else {
            let g = a.get("n_heads_in_group").and_then(Value::as_u64).filter(|g| *g > 0 && heads % *g == 0).ok_or_else(|| format!("field '{}' must be a positive divisor of the {heads} heads", at("attention.n_heads_in_group")))?;
            let window = match a.get("window_length") {
                None | Some(Value::Null) => 0,
                Some(v) => v.as_u64().ok_or_else(|| format!("field '{}' = {v} must be a whole number of tokens", at("attention.window_length")))?,
            };
            if a.get("num_sink_tokens").is_some_and(|v| !v.is_null()) {
                notes.push(format!("attention: {} (sink tokens) not modelled: that layer attends as a plain window", at("attention.num_sink_tokens")));
            }
            Some(Attn { kv_heads: heads / g, window })
        };
        let ffn = if flag(f, "no_op") {
            None
        } else if flag(f, "replace_with_linear") {
            // One hidden x hidden matrix: a SwiGLU of width hidden / 3 has the same parameters
            // and FLOPs (3 x hidden x hidden / 3).
            Some((hidden / 3).max(1))
        } else {
            let m = f.get("ffn_mult").and_then(Value::as_f64).filter(|m| *m > 0.0 && m.is_finite()).ok_or_else(|| format!("field '{}' must be a positive number", at("ffn.ffn_mult")))?;
            Some(ffn_width(m, hidden))
        };
        out.push(Block { attention, ffn });
    }
    if linear_attn > 0 {
        notes.push(format!("attention: {linear_attn} layers replace attention with one hidden x hidden linear (block_configs replace_with_linear); not counted or priced (hidden^2 parameters each)"));
    }
    if list.iter().any(|b| b.get("ffn").and_then(|f| f.get("replace_with_linear")).and_then(Value::as_bool) == Some(true)) {
        notes.push("MLP: layers whose MLP is one hidden x hidden linear (replace_with_linear) are costed as a SwiGLU of width hidden / 3 (the same parameters and FLOPs)".into());
    }
    Ok(out)
}

/// The config in the generic decoder's spelling: KV heads and MLP width of the commonest
/// block (the per-layer blocks go on the stack in `mixers` / `ffns`).
pub fn normalize(obj: &Obj, warnings: &mut Vec<String>) -> Result<Obj, String> {
    let mut notes = Vec::new();
    let bl = blocks(obj, "", &mut notes)?;
    if bl.len() as u64 != obj.get("num_hidden_layers").and_then(Value::as_u64).unwrap_or(0) {
        return Err(format!("field 'block_configs' lists {} blocks, but 'num_hidden_layers' is {}", bl.len(), obj.get("num_hidden_layers").cloned().unwrap_or(Value::Null)));
    }
    let mode = |v: Vec<u64>| -> Option<u64> {
        let mut c = std::collections::BTreeMap::new();
        for x in v {
            *c.entry(x).or_insert(0u64) += 1;
        }
        c.into_iter().max_by_key(|(_, n)| *n).map(|(x, _)| x)
    };
    let kv: Vec<u64> = bl.iter().filter_map(|b| b.attention.as_ref().map(|a| a.kv_heads)).collect();
    let kv_mode = mode(kv.clone()).unwrap_or(1);
    if kv.iter().any(|k| *k != kv_mode) {
        warnings.push(format!("block_configs: KV heads vary by layer; every attention layer costed with {kv_mode} KV heads (the commonest)"));
    }
    let mut o = obj.clone();
    o.insert("num_key_value_heads".into(), Value::from(kv_mode));
    o.insert("intermediate_size".into(), Value::from(mode(bl.iter().filter_map(|b| b.ffn).collect()).unwrap_or(0)));
    o.remove("block_configs");
    Ok(o)
}

/// Each layer's mixer and MLP from `block_configs`.
pub fn layers(obj: &Obj, prefix: &str, approx: &mut Vec<String>) -> Result<(Vec<Mixer>, Vec<Ffn>), String> {
    let bl = blocks(obj, prefix, approx)?;
    let mixers = bl.iter().map(|b| match &b.attention {
        Some(a) => Mixer::Attention { window: a.window, chunk: 0, sinks: false, compress: 0, topk: 0 },
        None => Mixer::None,
    }).collect();
    let ffns = bl.iter().map(|b| match b.ffn {
        Some(w) => Ffn::Dense { intermediate: w },
        None => Ffn::None,
    }).collect();
    Ok((mixers, ffns))
}

#[cfg(test)]
mod tests {
    use super::ffn_width;

    #[test]
    fn decilm_widths() {
        // Llama-3.3-70B's own MLP (ffn_mult 5.25 of 8192) and a pruned one.
        assert_eq!(ffn_width(5.25, 8192), 28672);
        assert_eq!(ffn_width(1.3125, 8192), 7168);
        assert_eq!(ffn_width(0.5, 8192), 2816);
    }
}

//! Per-layer lists of a config -> the layer stack: which token mixer and which feed-forward
//! block each layer has, from whichever spelling the family uses:
//! - mixers: `hybrid_override_pattern` (Nemotron-H: `M` Mamba-2, `*` attention, `-` MLP,
//!   `E` MoE), `layer_types` (gpt-oss, Gemma 3, Qwen3-Next / 3.5, LFM2: full / sliding /
//!   linear attention, conv), `sliding_window_pattern` (Gemma 3: every n-th layer global),
//!   Llama 4's `no_rope_layers` with `attention_chunk_size` (RoPE layers attend in chunks),
//!   `full_attention_interval` (Qwen3-Next), and the older overlays (Mistral's sliding window
//!   everywhere, Qwen2's `max_window_layers`);
//! - feed-forward: `mlp_only_layers` + `decoder_sparse_step` (Qwen MoE),
//!   `first_k_dense_replace` + `moe_layer_freq` as a number or a 0/1 list (DeepSeek, GLM,
//!   Kimi), `interleave_moe_layer_step` (Llama 4), `moe_layer_start_index` /
//!   `moe_layer_end_index` / `moe_layer_interval` (ERNIE 4.5).
//!
//! `install` stores the stack on the description only when the overlays cannot say it (a
//! description the overlays describe exactly keeps an empty stack, so it serialises and prices
//! as before), and keeps the overlays consistent with it for code that reads them.

use crate::model::{Ffn, LayerRun, Mixer, SlidingWindow, TransformerDesc};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

type Obj = Map<String, Value>;

fn list<'a>(obj: &'a Obj, key: &str, prefix: &str, layers: u64) -> Result<Option<&'a Vec<Value>>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => {
            if a.len() as u64 != layers {
                return Err(format!("field '{prefix}{key}' lists {} layers, but the model has {layers} ('{prefix}num_hidden_layers')", a.len()));
            }
            Ok(Some(a))
        }
        Some(v) => Err(format!("field '{prefix}{key}' must be a list with one entry per layer, got {v}")),
    }
}

fn uint(obj: &Obj, key: &str) -> Option<u64> {
    obj.get(key).and_then(Value::as_u64)
}

/// Each layer's token mixer, from the config's per-layer lists; None when it has none (the
/// overlays then say it).
pub fn mixers(obj: &Obj, t: &TransformerDesc, model_type: &str, prefix: &str) -> Result<Option<Vec<Mixer>>, String> {
    let n = t.layers;
    // Gemma3TextConfig's defaults: 4096-token windows, every 6th layer global.
    let gemma3 = model_type == "gemma3_text";
    let window = uint(obj, "sliding_window").unwrap_or(if gemma3 { 4096 } else { 0 });
    let sinks = model_type == "gpt_oss";
    let slide = Mixer::Attention { window, chunk: 0, sinks, compress: 0, topk: 0 };
    let full = Mixer::Attention { window: 0, chunk: 0, sinks, compress: 0, topk: 0 };
    if model_type == "deepseek_v4" {
        return super::deepseek_v4::mixers(obj, n, prefix).map(Some);
    }
    if model_type == "minimax_m3" {
        if let Some(v) = super::minimax_m3::mixers(obj, n, prefix)? {
            return Ok(Some(v));
        }
    }
    if model_type == "longcat_flash" {
        // [MLA + MoE], [no mixer + MLP], [MLA + MLP] per LongCat layer (`families`).
        return Ok(Some((0..n).map(|i| if i % 3 == 1 { Mixer::None } else { full }).collect()));
    }
    if let Some(Value::String(p)) = obj.get("hybrid_override_pattern") {
        if p.chars().count() as u64 != n {
            return Err(format!("field '{prefix}hybrid_override_pattern' has {} layers, but the model has {n} ('{prefix}num_hidden_layers')", p.chars().count()));
        }
        let mut v = Vec::new();
        for (i, c) in p.chars().enumerate() {
            v.push(match c {
                'M' => Mixer::Mamba2,
                '*' => full,
                '-' | 'E' => Mixer::None,
                other => return Err(format!("field '{prefix}hybrid_override_pattern' layer {i} is '{other}': expected M (Mamba-2), * (attention), - (MLP) or E (MoE)")),
            });
        }
        return Ok(Some(v));
    }
    if let (Some(a), true) = (list(obj, "hybrid_layer_pattern", prefix, n)?, model_type == "mimo_v2_flash") {
        // MiMo-V2-Flash: 1 = a sliding-window layer, 0 = a full one; each kind may add a
        // learned sink per head (`add_swa_attention_sink_bias`, `add_full_attention_sink_bias`).
        let b = |k: &str| obj.get(k).and_then(Value::as_bool).unwrap_or(false);
        if window == 0 {
            return Err(format!("field '{prefix}hybrid_layer_pattern' names sliding layers but '{prefix}sliding_window' is not a positive size"));
        }
        let slide = Mixer::Attention { window, chunk: 0, sinks: b("add_swa_attention_sink_bias"), compress: 0, topk: 0 };
        let full = Mixer::Attention { window: 0, chunk: 0, sinks: b("add_full_attention_sink_bias"), compress: 0, topk: 0 };
        let mut v = Vec::new();
        for (i, e) in a.iter().enumerate() {
            v.push(match e.as_u64() {
                Some(1) => slide,
                Some(0) => full,
                _ => return Err(format!("field '{prefix}hybrid_layer_pattern[{i}]' = {e}: expected 0 (full attention) or 1 (sliding window)")),
            });
        }
        return Ok(Some(v));
    }
    if let (Some(a), true, false) = (list(obj, "attn_type_list", prefix, n)?, matches!(model_type, "minimax" | "minimax_text_01" | "minimax_m1" | "minimax_m2"), obj.contains_key("layer_types")) {
        // MiniMax-Text-01 / M1: 0 = lightning (linear) attention, 1 = softmax attention.
        // MiniMax-M2.x lists 1 for every layer (all softmax); a lightning layer there would
        // have no widths (M2's reader sets none), so it is refused by name.
        let mut v = Vec::new();
        for (i, e) in a.iter().enumerate() {
            v.push(match e.as_u64() {
                Some(0) if t.linear_attention.is_none() => {
                    return Err(format!("field '{prefix}attn_type_list[{i}]' = 0 (lightning attention) in a {model_type} config: this family's reader has no lightning-attention widths (MiniMax-Text-01 / M1 have)"));
                }
                Some(0) => Mixer::Linear,
                Some(1) => full,
                _ => return Err(format!("field '{prefix}attn_type_list[{i}]' = {e}: expected 0 (lightning attention) or 1 (softmax attention)")),
            });
        }
        return Ok(Some(v));
    }
    if let Some(a) = list(obj, "layer_types", prefix, n)? {
        let kernel = uint(obj, "conv_L_cache").or_else(|| uint(obj, "conv_kernel")).unwrap_or(3);
        let chunk = uint(obj, "attention_chunk_size").unwrap_or(0);
        let mut v = Vec::new();
        for (i, e) in a.iter().enumerate() {
            v.push(match e.as_str() {
                // GLM-5.2: every layer DeepSeek sparse attention (MLA with the DSA indexer,
                // whose widths the MLA reading carries).
                Some("full_attention") | Some("attention") | Some("global") => full,
                Some("deepseek_sparse_attention") if t.mla.as_ref().is_some_and(|m| m.sparse.is_some()) => full,
                Some("sliding_attention") | Some("sliding_window") | Some("local") => {
                    if window == 0 {
                        return Err(format!("field '{prefix}layer_types[{i}]' is sliding_attention but '{prefix}sliding_window' is not a positive size"));
                    }
                    slide
                }
                Some("chunked_attention") if chunk > 0 => Mixer::Attention { window: 0, chunk, sinks, compress: 0, topk: 0 },
                Some("linear_attention") => Mixer::Linear,
                Some("conv") | Some("short_conv") => Mixer::ShortConv { kernel },
                Some("mamba") | Some("mamba2") => Mixer::Mamba2,
                _ => return Err(format!("field '{prefix}layer_types[{i}]' = {e}: not a layer kind Tunelab models (full_attention, sliding_attention, chunked_attention, linear_attention, conv, mamba)")),
            });
        }
        return Ok(Some(v));
    }
    if let (Some(a), true) = (obj.get("full_attn_idxs").and_then(Value::as_array), model_type == "lfm2") {
        // Older LFM2 configs list their attention layers; the rest are short convolutions.
        let kernel = uint(obj, "conv_L_cache").unwrap_or(3);
        let idx: Vec<u64> = a.iter().filter_map(Value::as_u64).collect();
        return Ok(Some((0..n).map(|i| if idx.contains(&i) { full } else { Mixer::ShortConv { kernel } }).collect()));
    }
    if let Some(every) = uint(obj, "sliding_window_pattern").or(if gemma3 { Some(6) } else { None }).filter(|_| window > 0) {
        // Gemma 3: layer i is global when (i + 1) is a multiple of the pattern, local otherwise.
        let every = every.max(1);
        return Ok(Some((0..n).map(|i| if (i + 1) % every == 0 { full } else { slide }).collect()));
    }
    if model_type == "gemma2" && window > 0 {
        // Gemma 2 alternates local (even layers) and global layers.
        return Ok(Some((0..n).map(|i| if i % 2 == 0 { slide } else { full }).collect()));
    }
    if let (Some(chunk), true) = (uint(obj, "attention_chunk_size").filter(|c| *c > 0), model_type == "llama4_text" || obj.contains_key("no_rope_layers")) {
        // Llama 4: layers with RoPE (1) attend within chunks; NoPE layers (0) attend globally.
        // Without the list, Llama4TextConfig derives it: every `no_rope_layer_interval`-th
        // layer (4 by default) is NoPE.
        let rope: Vec<bool> = match list(obj, "no_rope_layers", prefix, n)?.filter(|a| !a.is_empty()) {
            Some(a) => a.iter().map(|e| e.as_u64() != Some(0)).collect(),
            None => {
                let every = uint(obj, "no_rope_layer_interval").unwrap_or(4).max(1);
                (0..n).map(|i| (i + 1) % every != 0).collect()
            }
        };
        return Ok(Some(rope.into_iter().map(|r| if r { Mixer::Attention { window: 0, chunk, sinks: false, compress: 0, topk: 0 } } else { full }).collect()));
    }
    if let (Some(every), true) = (uint(obj, "full_attention_interval"), t.linear_attention.is_some()) {
        let every = every.max(1);
        return Ok(Some((0..n).map(|i| if (i + 1) % every == 0 { full } else { Mixer::Linear }).collect()));
    }
    if sinks {
        return Ok(Some(vec![full; n as usize]));
    }
    Ok(None)
}

/// Each layer's feed-forward block; None when the model has no experts (all dense) or its
/// config has no per-layer rule (all MoE).
pub fn ffns(obj: &Obj, t: &TransformerDesc, prefix: &str) -> Result<Option<Vec<Ffn>>, String> {
    let n = t.layers;
    let dense = Ffn::Dense { intermediate: t.intermediate };
    if let Some(Value::String(p)) = obj.get("hybrid_override_pattern") {
        return Ok(Some(p.chars().map(|c| match c {
            '-' => dense,
            'E' => Ffn::Moe,
            _ => Ffn::None,
        }).collect()));
    }
    if t.moe.is_none() {
        return Ok(None);
    }
    if obj.get("model_type").and_then(Value::as_str) == Some("longcat_flash") {
        return Ok(Some((0..n).map(|i| if i % 3 == 0 { Ffn::Moe } else { dense }).collect()));
    }
    let mut is_moe: Vec<bool> = vec![true; n as usize];
    if let Some(a) = list(obj, "mlp_layer_types", prefix, n)? {
        // GLM-5.2: each layer's MLP named, `dense` or `sparse` (MoE).
        for (i, e) in a.iter().enumerate() {
            is_moe[i] = match e.as_str() {
                Some("sparse") | Some("moe") => true,
                Some("dense") | Some("mlp") => false,
                _ => return Err(format!("field '{prefix}mlp_layer_types[{i}]' = {e}: expected dense or sparse")),
            };
        }
    }
    if let Some(list) = obj.get("mlp_only_layers").and_then(Value::as_array) {
        for e in list {
            let i = e.as_u64().filter(|i| *i < n).ok_or_else(|| format!("field '{prefix}mlp_only_layers' lists {e}: each entry must be a layer index below {n}"))?;
            is_moe[i as usize] = false;
        }
    }
    if let Some(step) = uint(obj, "decoder_sparse_step").filter(|s| *s > 1) {
        for (i, m) in is_moe.iter_mut().enumerate() {
            *m &= (i as u64 + 1) % step == 0;
        }
    }
    let first = uint(obj, "first_k_dense_replace").unwrap_or(0);
    match obj.get("moe_layer_freq") {
        Some(Value::Array(a)) => {
            if a.len() as u64 != n {
                return Err(format!("field '{prefix}moe_layer_freq' lists {} layers, but the model has {n}", a.len()));
            }
            for (i, e) in a.iter().enumerate() {
                let on = match e {
                    Value::Bool(b) => *b,
                    Value::Number(x) if x.as_u64() == Some(0) || x.as_u64() == Some(1) => x.as_u64() == Some(1),
                    other => return Err(format!("field '{prefix}moe_layer_freq[{i}]' = {other}: expected 0 or 1")),
                };
                is_moe[i] &= on;
            }
        }
        Some(Value::Number(x)) => {
            let f = x.as_u64().filter(|f| *f > 0).ok_or_else(|| format!("field '{prefix}moe_layer_freq' = {x} must be a positive integer"))?;
            for (i, m) in is_moe.iter_mut().enumerate() {
                *m &= (i as u64) % f == 0;
            }
        }
        _ => {}
    }
    for m in is_moe.iter_mut().take(first.min(n) as usize) {
        *m = false;
    }
    if let Some(step) = uint(obj, "interleave_moe_layer_step").filter(|s| *s > 0) {
        for (i, m) in is_moe.iter_mut().enumerate() {
            *m &= (i as u64 + 1) % step == 0;
        }
    }
    if let Some(start) = uint(obj, "moe_layer_start_index") {
        let end = uint(obj, "moe_layer_end_index").unwrap_or(n.saturating_sub(1));
        let every = uint(obj, "moe_layer_interval").unwrap_or(1).max(1);
        for (i, m) in is_moe.iter_mut().enumerate() {
            let i = i as u64;
            *m &= i >= start && i <= end && (i - start) % every == 0;
        }
    }
    // Step-3: the MoE layers listed, as a comma-separated string or a list of indices.
    let listed: Option<Vec<u64>> = match obj.get("moe_layers_enum") {
        Some(Value::String(s)) => Some(s.split(',').map(str::trim).filter(|x| !x.is_empty()).map(|x| x.parse::<u64>().map_err(|_| format!("field '{prefix}moe_layers_enum' lists '{x}': expected layer indices"))).collect::<Result<_, _>>()?),
        Some(Value::Array(a)) => Some(a.iter().map(|e| e.as_u64().ok_or_else(|| format!("field '{prefix}moe_layers_enum' lists {e}: expected layer indices"))).collect::<Result<_, _>>()?),
        _ => None,
    };
    if let Some(l) = listed {
        if let Some(bad) = l.iter().find(|i| **i >= n) {
            return Err(format!("field '{prefix}moe_layers_enum' lists layer {bad}, but the model has {n}"));
        }
        for (i, m) in is_moe.iter_mut().enumerate() {
            *m &= l.contains(&(i as u64));
        }
    }
    let dense_ffn = match uint(obj, "intermediate_size_mlp") {
        Some(w) => Ffn::Dense { intermediate: w },
        None => dense,
    };
    Ok(Some(is_moe.into_iter().map(|m| if m { Ffn::Moe } else { dense_ffn }).collect()))
}

/// Consecutive equal layers as runs.
pub fn runs_of(mixers: &[Mixer], ffns: &[Ffn]) -> Vec<LayerRun> {
    let mut runs: Vec<LayerRun> = Vec::new();
    for (m, f) in mixers.iter().zip(ffns) {
        match runs.last_mut() {
            Some(r) if r.mixer == *m && r.ffn == *f => r.count += 1,
            _ => runs.push(LayerRun { count: 1, mixer: *m, ffn: *f }),
        }
    }
    runs
}

fn tally(runs: &[LayerRun]) -> BTreeMap<(Mixer, Ffn), u64> {
    let mut m = BTreeMap::new();
    for r in runs {
        *m.entry((r.mixer, r.ffn)).or_insert(0) += r.count;
    }
    m
}

/// Installs per-layer kinds on `t` (either list may be None: the overlays' reading stands for
/// it): the overlays are made consistent, and the explicit stack is kept only when the overlays
/// would derive other layers.
pub fn install(t: &mut TransformerDesc, mixers: Option<Vec<Mixer>>, ffns: Option<Vec<Ffn>>) {
    if mixers.is_none() && ffns.is_none() {
        return;
    }
    let derived = t.runs();
    let n = t.layers as usize;
    let mixers = mixers.unwrap_or_else(|| {
        let mut v = Vec::new();
        for r in derived.iter().filter(|r| r.mixer != Mixer::FULL) {
            v.extend(std::iter::repeat_n(r.mixer, r.count as usize));
        }
        let mut full = vec![Mixer::FULL; n.saturating_sub(v.len())];
        full.extend(v);
        full
    });
    let ffns = ffns.unwrap_or_else(|| {
        let f = if t.moe.is_some() { Ffn::Moe } else { Ffn::Dense { intermediate: t.intermediate } };
        vec![f; n]
    });
    // Overlays consistent with the layers.
    let count = |p: &dyn Fn(&Mixer) -> bool| mixers.iter().filter(|m| p(m)).count() as u64;
    if let Some(la) = t.linear_attention.as_mut() {
        la.layers = count(&|m| *m == Mixer::Linear);
    }
    let mut windows: BTreeMap<u64, u64> = BTreeMap::new();
    for m in &mixers {
        if let Mixer::Attention { window, .. } = m {
            if *window > 0 {
                *windows.entry(*window).or_insert(0) += 1;
            }
        }
    }
    t.sliding_window = windows.iter().max_by_key(|(_, c)| **c).map(|(w, _)| SlidingWindow { window: *w, layers: windows.values().sum() });
    if let Some(m) = t.moe.as_mut() {
        m.dense_layers = ffns.iter().filter(|f| matches!(f, Ffn::Dense { .. })).count() as u64;
    }
    let runs = runs_of(&mixers, &ffns);
    t.stack.clear();
    let simple = t.runs();
    t.stack = if tally(&simple) == tally(&runs) { Vec::new() } else { runs };
}

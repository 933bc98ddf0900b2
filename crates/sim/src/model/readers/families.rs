//! Key spellings and mechanisms of the decoder families the generic reader shares most fields
//! with. Each entry names its source (the transformers configuration class, or vLLM's model).
//!
//! - gpt-oss (GptOssConfig): every layer MoE (`num_local_experts`, experts as wide as
//!   `intermediate_size`), `layer_types` alternating 128-token sliding windows and full
//!   attention, a learned sink per head (vLLM `gpt_oss.py`: `sinks`), MXFP4 experts in the
//!   checkpoint (`quantization_config.quant_method`).
//! - Gemma 2 / 3 (Gemma2Config, Gemma3TextConfig): local layers of `sliding_window` keys
//!   (1024 in Gemma 3, 5 local : 1 global by `sliding_window_pattern` 6 or `layer_types`), tied
//!   embeddings by default, a gated GELU-tanh MLP (the SwiGLU's three matrices).
//! - Llama 4 (Llama4TextConfig): RoPE layers attend within `attention_chunk_size` chunks
//!   (`no_rope_layers`), MoE every `interleave_moe_layer_step`-th layer with one shared expert
//!   as wide as a routed one (`intermediate_size`), dense layers `intermediate_size_mlp` wide.
//! - ERNIE 4.5 (Ernie4_5_MoeConfig): `moe_num_experts`, `moe_k`, `moe_num_shared_experts`,
//!   MoE from `moe_layer_start_index` to `moe_layer_end_index` every `moe_layer_interval`.
//! - Hunyuan (HunYuanMoEV1Config): `moe_topk`, `num_shared_expert` and
//!   `moe_intermediate_size` as per-layer lists.
//! - Shared experts under every name: `n_shared_experts` / `num_shared_experts` /
//!   `moe_num_shared_experts` (counts of routed-width experts), `shared_expert_intermediate_size`
//!   / `moe_shared_expert_intermediate_size` (a width), read by the generic decoder.

use crate::model::{MlpKind, TransformerDesc};
use serde_json::{Map, Value};

type Obj = Map<String, Value>;

/// Gemma3TextConfig's defaults for the widths a Gemma 3 config may leave out (transformers
/// `configuration_gemma3.py`: vocab 262208, 26 layers of 2304, MLP 9216, 8 heads of 256, 4 KV
/// heads, 4096-token windows, every 6th layer global).
pub const GEMMA3_DEFAULTS: &[(&str, u64)] = &[
    ("vocab_size", 262_208), ("hidden_size", 2304), ("intermediate_size", 9216), ("num_hidden_layers", 26),
    ("num_attention_heads", 8), ("num_key_value_heads", 4), ("head_dim", 256), ("max_position_embeddings", 131_072),
];

/// MiniMax-Text-01 / M1 keys that shape numerics only (residual scalings, the lightning
/// kernel's block size, post-norm, partial rotary) or are read above.
const MINIMAX_NUMERICS: &[&str] = &[
    "attn_type_list", "block_size", "postnorm", "layernorm_full_attention_alpha", "layernorm_full_attention_beta",
    "layernorm_linear_attention_alpha", "layernorm_linear_attention_beta", "layernorm_mlp_alpha", "layernorm_mlp_beta",
    "full_attn_alpha_factor", "full_attn_beta_factor", "linear_attn_alpha_factor", "linear_attn_beta_factor", "mlp_alpha_factor",
    "mlp_beta_factor", "rotary_dim", "shared_intermediate_size", "shared_moe_mode",
];

/// Renames `from` to `to` when `to` is absent.
fn alias(o: &mut Obj, from: &str, to: &str) {
    if !o.contains_key(to) {
        if let Some(v) = o.remove(from) {
            o.insert(to.to_string(), v);
        }
    } else {
        o.remove(from);
    }
}

/// A per-layer list of one number (Hunyuan): its value when all entries agree, else the
/// rounded mean with a note.
fn uniform(o: &mut Obj, key: &str, warnings: &mut Vec<String>) -> Result<(), String> {
    let Some(Value::Array(a)) = o.get(key) else { return Ok(()) };
    let vals: Vec<u64> = a.iter().map(|v| v.as_u64().ok_or_else(|| format!("field '{key}' lists {v}: expected whole numbers"))).collect::<Result<_, _>>()?;
    if vals.is_empty() {
        return Err(format!("field '{key}' is an empty list"));
    }
    let first = vals[0];
    let v = if vals.iter().all(|x| *x == first) {
        first
    } else {
        let mean = vals.iter().sum::<u64>().div_ceil(vals.len() as u64);
        warnings.push(format!("'{key}' varies by layer: every layer costed with the mean, {mean}"));
        mean
    };
    o.insert(key.to_string(), Value::from(v));
    Ok(())
}

/// The family's config in the generic decoder's spelling (None: nothing to rename).
pub fn normalize(obj: &Obj, model_type: &str, warnings: &mut Vec<String>) -> Result<Option<Obj>, String> {
    let mut o = obj.clone();
    match model_type {
        "gpt_oss" => {
            o.remove("experts_per_token");
        }
        "ernie4_5_moe" | "ernie4_5" => {
            alias(&mut o, "moe_num_experts", "num_experts");
            alias(&mut o, "moe_k", "num_experts_per_tok");
            alias(&mut o, "moe_num_shared_experts", "num_shared_experts");
        }
        "hunyuan_v1_moe" | "hunyuan_v1_dense" => {
            for k in ["moe_topk", "num_shared_expert", "moe_intermediate_size"] {
                uniform(&mut o, k, warnings)?;
            }
            alias(&mut o, "moe_topk", "num_experts_per_tok");
            alias(&mut o, "num_shared_expert", "num_shared_experts");
            if o.get("use_qk_norm").and_then(Value::as_bool) == Some(true) {
                o.insert("qk_norm".into(), Value::Bool(true));
            }
        }
        "minimax" | "minimax_text_01" | "minimax_m1" => {
            // MiniMax-Text-01 / M1 (transformers MiniMaxConfig; MiniMax-01 report,
            // arXiv:2501.08313): `attn_type_list` gives each layer lightning attention (0) or
            // softmax attention (1), 7 : 1. A lightning layer (Qin et al. 2024, Lightning
            // Attention-2, arXiv:2401.04658) is linear attention with a fixed per-head decay:
            // q, k, v and an output gate over all heads, a norm and out_proj, a head_dim x
            // head_dim state per head. It is read as the linear-attention mixer of those widths
            // (no short convolution), priced by the same chunked path (notes in `finish`).
            let heads = o.get("num_attention_heads").and_then(Value::as_u64).unwrap_or(0);
            let hidden = o.get("hidden_size").and_then(Value::as_u64).unwrap_or(0);
            let hd = o.get("head_dim").and_then(Value::as_u64).unwrap_or(if heads > 0 { hidden / heads } else { 0 });
            for (k, v) in [("linear_num_key_heads", heads), ("linear_num_value_heads", heads), ("linear_key_head_dim", hd), ("linear_value_head_dim", hd), ("linear_conv_kernel_dim", 0)] {
                o.entry(k).or_insert(Value::from(v));
            }
            if !o.contains_key("layer_types") {
                if let Some(Value::Array(a)) = o.get("attn_type_list") {
                    let mut types = Vec::new();
                    for (i, e) in a.iter().enumerate() {
                        types.push(Value::from(match e.as_u64() {
                            Some(0) => "linear_attention",
                            Some(1) => "full_attention",
                            _ => return Err(format!("field 'attn_type_list[{i}]' = {e}: expected 0 (lightning attention) or 1 (softmax attention)")),
                        }));
                    }
                    o.insert("layer_types".into(), Value::Array(types));
                }
            }
            if o.get("shared_intermediate_size").and_then(Value::as_u64).is_some_and(|w| w > 0) {
                alias(&mut o, "shared_intermediate_size", "shared_expert_intermediate_size");
            }
            for k in MINIMAX_NUMERICS {
                o.remove(*k);
            }
        }
        "kimi_linear" => {
            // The KDA widths and layer lists were put in this spelling by `kimi_linear_upgrade`.
            alias(&mut o, "num_experts_per_token", "num_experts_per_tok");
            for k in ["linear_attn_config", "linear_num_heads", "linear_head_dim", "moe_renormalize", "num_expert_group", "moe_router_activation_func", "mla_use_nope", "use_grouped_topk", "moe_layer_freq", "routed_expert_hidden_size", "latent_moe_use_norm", "attn_res_block_size", "mla_use_output_gate", "activation_situ_beta", "activation_situ_linear_beta"] {
                o.remove(k);
            }
        }
        "longcat_flash" => {
            // LongCat-Flash (transformers LongcatFlashConfig; Meituan, arXiv:2509.01322): each of
            // `num_layers` layers has two MLA attentions, two dense MLPs `ffn_hidden_size`
            // wide and a shortcut-connected MoE (`n_routed_experts` experts
            // `expert_ffn_hidden_size` wide, top-`moe_topk` among them and `zero_expert_num`
            // identity experts). Read as 3 x `num_layers` stack layers: [MLA + MoE],
            // [no mixer + MLP], [MLA + MLP] (`layers::mixers` / `ffns`; notes in `finish`).
            let layers = o.get("num_layers").and_then(Value::as_u64).or_else(|| o.get("num_hidden_layers").and_then(Value::as_u64).map(|h| h / 2)).unwrap_or(28);
            o.insert("num_hidden_layers".into(), Value::from(3 * layers));
            alias(&mut o, "ffn_hidden_size", "intermediate_size");
            alias(&mut o, "expert_ffn_hidden_size", "moe_intermediate_size");
            alias(&mut o, "moe_topk", "num_experts_per_tok");
            for k in ["num_layers", "zero_expert_num", "zero_expert_type", "head_dim", "qk_head_dim", "attention_method", "mla_scale_q_lora", "mla_scale_kv_lora", "router_bias", "expert_dim"] {
                o.remove(k);
            }
        }
        "minimax_m2" => {
            // MiniMax-M2.x lists every layer's attention kind in `attn_type_list` (read per
            // layer by `layers::mixers`: all 1, softmax attention).
            if !o.contains_key("attn_type_list") {
                return Ok(None);
            }
            o.remove("attn_type_list");
        }
        "step3_text" | "step3v_text" => {
            // Step-3 (vLLM Step3TextConfig, `step3_text.py`): multi-matrix factorisation
            // attention, 64 query heads of 256 through a `share_q_dim` low-rank query and one KV
            // head (`num_attention_groups`); MoE on the layers `moe_layers_enum` lists, each
            // with a shared expert `share_expert_dim` wide (no gate), dense layers
            // `intermediate_size` wide.
            alias(&mut o, "num_attention_groups", "num_key_value_heads");
            alias(&mut o, "moe_num_experts", "num_experts");
            alias(&mut o, "moe_top_k", "num_experts_per_tok");
            alias(&mut o, "share_expert_dim", "shared_expert_intermediate_size");
            alias(&mut o, "max_position_embedding", "max_position_embeddings");
            for k in ["share_q_dim", "moe_layers_enum", "max_seq_len", "norm_expert_weight", "moe_every_n_layer", "use_moe"] {
                o.remove(k);
            }
        }
        "step3p7" => {
            // Step-3.7-Flash (vLLM / SGLang `step3p7`, Step3p5 lineage): softmax attention on
            // every layer, 3 sliding (512) : 1 full by `layer_types` (read per layer), the first
            // `first_k_dense_replace` layers dense, then MoE layers of `num_experts` routed
            // experts and `n_shared_experts` always-on expert `share_expert_dim` wide with no
            // gate (as Step-3's), and `num_nextn_predict_layers` MTP layers.
            alias(&mut o, "share_expert_dim", "moe_shared_expert_intermediate_size");
            for k in ["use_moe_router_bias", "moe_router_scaling_factor"] {
                o.remove(k);
            }
        }
        "gemma3_text" => {
            // Gemma 3's published configs (4B, 12B) leave most widths to Gemma3TextConfig's
            // defaults: the same defaults, named in a note.
            let mut used = Vec::new();
            for (k, v) in GEMMA3_DEFAULTS {
                if o.get(*k).is_none_or(Value::is_null) {
                    o.insert((*k).to_string(), Value::from(*v));
                    used.push(format!("{k} {v}"));
                }
            }
            if !used.is_empty() {
                warnings.push(format!("gemma3_text: absent widths take Gemma3TextConfig's defaults: {}", used.join(", ")));
            }
        }
        "mimo_v2_flash" => {
            // Queries and keys are `head_dim` (192) wide, values `v_head_dim` (128): a head
            // of their mean width has the same q/k/v/o parameters, attention FLOPs and KV
            // bytes per token (the MLA reading does the same). Sliding layers have their own
            // KV heads (`swa_num_key_value_heads`), noted in `finish`.
            if let (Some(q), Some(v)) = (o.get("head_dim").and_then(Value::as_u64), o.get("v_head_dim").and_then(Value::as_u64)) {
                o.insert("head_dim".into(), Value::from((q + v).div_ceil(2)));
            }
            for k in ["v_head_dim", "swa_head_dim", "swa_v_head_dim", "swa_num_attention_heads", "swa_num_key_value_heads", "swa_rope_theta", "sliding_window_size", "attention_chunk_size", "hybrid_layer_pattern", "attention_value_scale", "add_swa_attention_sink_bias", "add_full_attention_sink_bias"] {
                o.remove(k);
            }
        }
        "llama4_text" => {
            // Routed and shared experts are `intermediate_size` wide; dense layers
            // `intermediate_size_mlp` (read per layer in `layers::ffns`).
            if let Some(w) = o.get("intermediate_size").cloned() {
                o.insert("moe_intermediate_size".into(), w.clone());
                if o.get("num_local_experts").and_then(Value::as_u64).is_some_and(|e| e > 1) {
                    o.insert("shared_expert_intermediate_size".into(), w);
                }
            }
            if let Some(w) = o.get("intermediate_size_mlp").cloned() {
                o.insert("intermediate_size".into(), w);
            }
        }
        _ => return Ok(None),
    }
    Ok(Some(o))
}

/// The family's mechanisms the generic read does not set.
pub fn finish(obj: &Obj, t: &mut TransformerDesc, model_type: &str, _prefix: &str, warnings: &mut Vec<String>) -> Result<(), String> {
    let act = obj.get("hidden_act").or_else(|| obj.get("hidden_activation")).or_else(|| obj.get("mlp_hidden_act")).and_then(Value::as_str).unwrap_or("silu");
    if act == "relu2" {
        t.mlp = MlpKind::Relu2;
        warnings.retain(|w| !w.contains("hidden_act 'relu2'"));
    }
    if ["use_qk_norm", "qk_norm", "add_qk_norm"].iter().any(|k| obj.get(*k).and_then(Value::as_bool) == Some(true)) {
        t.qk_norm = true;
    }
    match model_type {
        "gemma2" | "gemma3_text" | "gemma3n_text" => {
            // Gemma ties its embeddings unless the config says otherwise, and gates its MLP with
            // GELU-tanh: the same three matrices as SwiGLU.
            t.tied_embeddings = obj.get("tie_word_embeddings").and_then(Value::as_bool).unwrap_or(true);
            t.qk_norm = model_type != "gemma2";
            warnings.retain(|w| !w.contains("hidden_act"));
            t.approx.push("MLP: Gemma's gated GELU-tanh costed as SwiGLU (the same three matrices; the activation is a vector op of the same size)".into());
            t.approx.push("norms: Gemma's four norms per layer counted as two (a few thousand parameters per layer)".into());
        }
        "gpt_oss" => {
            t.approx.push("MoE: the experts' and router's biases are not counted (under 0.1% of the parameters)".into());
        }
        "llama4_text" => {
            // Llama 4's shared expert has no sigmoid gate (Qwen2-MoE's has).
            if let Some(m) = t.moe.as_mut() {
                m.shared_gate = false;
            }
            t.approx.push("attention: Llama 4's NoPE global layers and temperature tuning priced as full attention (the same matmuls)".into());
        }
        "minimax" | "minimax_text_01" | "minimax_m1" => {
            if t.linear_attention.is_some() {
                t.approx.push("attention: MiniMax's lightning attention (linear attention with a fixed per-head decay; Qin et al. 2024, arXiv:2401.04658) priced by the linear-attention path: its q/k/v/gate/out projections and head_dim x head_dim fp32 state per head exactly, its intra-block causal and inter-block state matmuls as the chunked form's; the Gated DeltaNet path's beta/alpha gates (2 x hidden x heads parameters per layer) and gating vector ops are counted in excess".into());
            }
        }
        "smollm3" => {
            // SmolLM3Config ties its embeddings unless the config says otherwise (the 3B
            // checkpoint's config leaves it out: its 6.15 GB of bf16 safetensors are 3.08B
            // parameters, one 128256 x 2048 matrix fewer than untied).
            t.tied_embeddings = obj.get("tie_word_embeddings").and_then(Value::as_bool).unwrap_or(true);
        }
        "step3_text" | "step3v_text" => {
            t.q_bottleneck = obj.get("share_q_dim").and_then(Value::as_u64).unwrap_or(0);
            if let Some(m) = t.moe.as_mut() {
                m.shared_gate = false;
            }
        }
        "mimo_v2_flash" => {
            let full_kv = obj.get("num_key_value_heads").and_then(Value::as_u64).unwrap_or(0);
            if let Some(swa_kv) = obj.get("swa_num_key_value_heads").and_then(Value::as_u64).filter(|k| *k != full_kv && *k > 0) {
                // Per-layer KV heads (`layer_widths`): the stack at the sliding layers' heads,
                // the full layers at their own, each counted, held and cached at its own.
                t.kv_heads = swa_kv;
                t.global_kv_heads = full_kv;
                // Each layer is counted, held, cached and priced (projections and core) at its own
                // KV heads (`layer_widths`, `workload::llm::global_projections`).
            }
            t.approx.push("attention: query/key heads 192 wide and value heads 128 wide costed as heads of their mean, 160 (the same parameters, FLOPs and KV bytes)".into());
        }
        "kimi_linear" => {
            // Kimi K3's text model: experts run in a `routed_expert_hidden_size` latent (a down
            // projection and norm before them, an up projection after: the latent MoE of the
            // stack), the MLA layers gate their output, and blocks add attention residuals.
            if let (Some(l), Some(m)) = (obj.get("routed_expert_hidden_size").and_then(Value::as_u64).filter(|l| *l > 0), t.moe.as_mut()) {
                m.latent = l;
            }
            if obj.get("mla_use_output_gate").and_then(Value::as_bool) == Some(true) {
                let g = t.heads * t.mla.as_ref().map_or(0, |m| m.v_head_dim) * t.hidden;
                t.approx.push(format!("attention: the MLA layers' output gate (mla_use_output_gate: hidden -> heads x v_head_dim, {:.1}M parameters per MLA layer) is neither counted nor priced", g as f64 / 1e6));
            }
            if let Some(b) = obj.get("attn_res_block_size").and_then(Value::as_u64).filter(|b| *b > 0) {
                t.approx.push(format!("residual: the block attention residuals (attn_res_block_size {b}) are neither counted nor priced"));
            }
            if obj.get("hidden_act").and_then(Value::as_str) == Some("situ") {
                t.approx.push("MLP: the SiTU activation (activation_situ_beta) is priced as SwiGLU (the same three matrices)".into());
            }
            t.approx.push("attention: Kimi Delta Attention read as the linear-attention (Gated DeltaNet) mixer of its widths: q/k/v projections, short convolutions, the heads x head_dim x head_dim fp32 state and out_proj as KDA has them; its low-rank forget and output gates counted as Gated DeltaNet's full-rank output gate and beta/alpha projections (a few million parameters per layer over), its channel-wise decay priced as the chunked delta rule".into());
        }
        "longcat_flash" => {
            let zero = obj.get("zero_expert_num").and_then(Value::as_u64).unwrap_or(0);
            let n = obj.get("num_layers").and_then(Value::as_u64).unwrap_or(t.layers / 3);
            t.approx.push(format!("layers: LongCat-Flash's {n} layers (two MLA attentions, two dense MLPs and a shortcut-connected MoE each) read as {} stack layers, [MLA + MoE], [MLP], [MLA + MLP]: the same matmuls and a KV cache of {} attention layers; the MoE's overlap with the dense path (its shortcut) is not modelled, and a pipeline stage splits stack layers", 3 * n, 2 * n));
            if zero > 0 {
                t.approx.push(format!("MoE: top-{} over the routed experts and {zero} zero (identity) experts priced as {} real experts per token (an upper bound: the card's 18.6B-31.3B activated, about 27B on average)", t.moe.as_ref().map_or(0, |m| m.top_k), t.moe.as_ref().map_or(0, |m| m.top_k)));
            }
        }
        "glm_moe_dsa" => {
            // GLM-5.2: `indexer_types` marks the layers whose DSA indexer is `shared` (they
            // reuse an earlier layer's key selection, `index_topk_freq`).
            if let Some(Value::Array(a)) = obj.get("indexer_types") {
                let shared = a.iter().filter(|e| e.as_str() == Some("shared")).count();
                if shared > 0 {
                    t.approx.push(format!("attention: {shared} of {} layers share an earlier layer's DSA indexer (indexer_types): each is priced and counted with its own indexer (its few million parameters and the index scores per layer are overstated)", a.len()));
                }
            }
        }
        "hunyuan_v1_moe" => {
            if obj.get("use_cla").and_then(Value::as_bool) == Some(true) {
                t.approx.push("attention: cross-layer attention (use_cla) not modelled: every layer keeps its own KV cache (an upper bound)".into());
            }
        }
        _ => {}
    }
    Ok(())
}

/// Kimi Linear's checkpoint spelling rewritten into the one the layer lists read (run before
/// the generic read, `super::upgrade`).
pub fn kimi_linear_upgrade(obj: &Obj) -> Result<Obj, String> {
    let mut o = obj.clone();
    // Kimi Linear (transformers KimiLinearConfig; Kimi Team, arXiv:2510.26692): Kimi
    // Delta Attention (KDA) layers and MLA layers (NoPE) 3 : 1, each with an MoE (the
    // first `first_k_dense_replace` dense). The checkpoint keeps the KDA widths in
    // `linear_attn_config` (`num_heads` x `head_dim`, `short_conv_kernel_size`) and its
    // layers as 1-based `full_attn_layers` / `kda_layers` lists (transformers'
    // `__post_init__`); without them, every 4th layer (i > 0, i % 4 == 0) is full.
    let la = o.get("linear_attn_config").and_then(Value::as_object).cloned().unwrap_or_default();
    let num = |k: &str, top: &str, d: u64| la.get(k).and_then(Value::as_u64).or_else(|| o.get(top).and_then(Value::as_u64)).unwrap_or(d);
    let (heads, hd, kernel) = (num("num_heads", "linear_num_heads", 32), num("head_dim", "linear_head_dim", 128), num("short_conv_kernel_size", "linear_conv_kernel_dim", 4));
    for (k, v) in [("linear_num_key_heads", heads), ("linear_num_value_heads", heads), ("linear_key_head_dim", hd), ("linear_value_head_dim", hd), ("linear_conv_kernel_dim", kernel)] {
        o.insert(k.into(), Value::from(v));
    }
    let n = o.get("num_hidden_layers").and_then(Value::as_u64).unwrap_or(27);
    if o.get("layer_types").is_none_or(Value::is_null) {
        let list = |k: &str| -> Result<Option<Vec<u64>>, String> {
            match la.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Array(a)) => a.iter().map(|e| e.as_u64().filter(|i| *i >= 1 && *i <= n).ok_or_else(|| format!("field 'linear_attn_config.{k}' lists {e}: expected 1-based layer numbers up to {n}"))).collect::<Result<Vec<_>, _>>().map(Some),
                Some(v) => Err(format!("field 'linear_attn_config.{k}' must be a list of layer numbers, got {v}")),
            }
        };
        let types: Vec<Value> = match (list("full_attn_layers")?, list("kda_layers")?) {
            (Some(full), Some(kda)) => {
                let mut t = vec![None; n as usize];
                for i in full {
                    t[i as usize - 1] = Some("full_attention");
                }
                for i in kda {
                    t[i as usize - 1] = Some("linear_attention");
                }
                if let Some(i) = t.iter().position(Option::is_none) {
                    return Err(format!("field 'linear_attn_config': layer {} is in neither full_attn_layers nor kda_layers", i + 1));
                }
                t.into_iter().map(|x| Value::from(x.unwrap_or("full_attention"))).collect()
            }
            _ => (0..n).map(|i| Value::from(if i > 0 && i % 4 == 0 { "full_attention" } else { "linear_attention" })).collect(),
        };
        o.insert("layer_types".into(), Value::Array(types));
    }
    // KimiLinearConfig: the first `first_k_dense_replace` (1 by default) layers are dense.
    o.entry("first_k_dense_replace").or_insert(Value::from(1));
    Ok(o)
}

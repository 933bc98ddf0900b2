//! Nemotron-H and the Nemotron 3 family (transformers' NemotronHConfig; vLLM `nemotron_h.py`):
//! a `hybrid_override_pattern` string gives each layer one block, `M` a Mamba-2 mixer, `*`
//! attention, `-` a squared-ReLU MLP (`mlp_hidden_act` relu2), `E` a mixture of squared-ReLU
//! experts (Nemotron 3 Nano: `n_routed_experts`, `moe_intermediate_size`, a shared expert
//! `moe_shared_expert_intermediate_size` wide; Super: experts in a `moe_latent_size` latent
//! space). Mamba-2 widths: `mamba_num_heads` x `mamba_head_dim`, `n_groups` groups of
//! `ssm_state_size`, `conv_kernel` taps, `chunk_size`.

use crate::model::{Mamba2Desc, MlpKind, TransformerDesc};
use serde_json::{Map, Value};

type Obj = Map<String, Value>;

/// Keys this reader consumes (besides the generic decoder's).
const OWN: &[&str] = &[
    "hybrid_override_pattern", "mamba_num_heads", "mamba_head_dim", "ssm_state_size", "n_groups", "mamba_n_groups", "conv_kernel",
    "mamba_d_conv", "chunk_size", "mamba_chunk_size", "expand", "mamba_expand", "mamba_hidden_act", "mamba_proj_bias", "use_conv_bias",
    "mamba_conv_bias", "mlp_hidden_act", "attention_head_dim", "use_bias", "residual_in_fp32", "rescale_prenorm_residual",
    "use_mamba_kernels", "time_step_limit", "time_step_min", "time_step_max", "time_step_floor", "mamba_dt_min", "mamba_dt_max",
    "mamba_dt_limit", "mamba_dt_init_floor", "num_logits_to_keep", "moe_shared_expert_intermediate_size", "n_shared_experts",
    "moe_latent_size", "mtp_hybrid_override_pattern", "mtp_layers_block_type", "layers_block_type", "norm_eps",
];

fn get(obj: &Obj, keys: &[&str], what: &str) -> Result<Option<u64>, String> {
    for k in keys {
        match obj.get(*k) {
            None | Some(Value::Null) => continue,
            Some(v) => return v.as_u64().filter(|n| *n > 0).map(Some).ok_or_else(|| format!("field '{k}' ({what}) must be a positive integer, got {v}")),
        }
    }
    Ok(None)
}

/// The config in the generic decoder's spelling: `attention_head_dim` as `head_dim`, the
/// shared expert's width as `shared_expert_intermediate_size`, this reader's own keys removed.
pub fn normalize(obj: &Obj) -> Result<Obj, String> {
    let mut o = obj.clone();
    if let Some(d) = o.get("attention_head_dim").cloned() {
        o.entry("head_dim").or_insert(d);
    }
    if let Some(w) = o.get("moe_shared_expert_intermediate_size").cloned() {
        o.insert("shared_expert_intermediate_size".into(), w);
    }
    if !o.contains_key("num_attention_heads") && !o.get("hybrid_override_pattern").and_then(Value::as_str).is_some_and(|p| p.contains('*')) {
        // A pattern without attention layers: the heads only size the (absent) attention.
        o.insert("num_attention_heads".into(), Value::from(1));
    }
    if !o.contains_key("intermediate_size") {
        o.insert("intermediate_size".into(), Value::from(0));
    }
    for k in OWN {
        o.remove(*k);
    }
    Ok(o)
}

/// The Mamba-2 widths, squared-ReLU MLPs, latent experts and notes.
pub fn finish(obj: &Obj, t: &mut TransformerDesc, prefix: &str) -> Result<(), String> {
    let Some(Value::String(p)) = obj.get("hybrid_override_pattern") else {
        return Err(format!("model_type 'nemotron_h' needs '{prefix}hybrid_override_pattern' (one of M, *, -, E per layer)"));
    };
    if p.contains('M') {
        let heads = get(obj, &["mamba_num_heads"], "Mamba-2 heads")?.ok_or_else(|| format!("missing field '{prefix}mamba_num_heads' (the pattern has Mamba-2 layers)"))?;
        let head_dim = get(obj, &["mamba_head_dim"], "Mamba-2 head width")?.ok_or_else(|| format!("missing field '{prefix}mamba_head_dim'"))?;
        t.mamba = Some(Mamba2Desc {
            heads,
            head_dim,
            state: get(obj, &["ssm_state_size"], "SSM state")?.unwrap_or(128),
            groups: get(obj, &["n_groups", "mamba_n_groups"], "B/C groups")?.unwrap_or(8),
            conv_kernel: get(obj, &["conv_kernel", "mamba_d_conv"], "conv taps")?.unwrap_or(4),
            chunk: get(obj, &["chunk_size", "mamba_chunk_size"], "SSD chunk")?.unwrap_or(128),
        });
    }
    let act = obj.get("mlp_hidden_act").and_then(Value::as_str).unwrap_or("relu2");
    if act == "relu2" {
        t.mlp = MlpKind::Relu2;
    } else {
        t.approx.push(format!("MLP: mlp_hidden_act '{act}' costed as a squared-ReLU MLP (two matrices)"));
        t.mlp = MlpKind::Relu2;
    }
    if let Some(m) = t.moe.as_mut() {
        m.shared_gate = false;
        m.latent = get(obj, &["moe_latent_size"], "latent MoE width")?.unwrap_or(0);
    }
    if !p.contains('*') {
        t.kv_heads = t.heads;
    }
    t.approx.push("Mamba-2: the SSD scan priced as its four chunked matmuls per head (Dao and Gu 2024, section 6), the decode step as one read and write of the FP32 state".into());
    Ok(())
}

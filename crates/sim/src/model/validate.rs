//! Validation of model descriptions: every size positive, bounded and consistent, with errors
//! that name the field as the user wrote it (the Hugging Face name alongside ours).

use super::{graph, ModelDesc, TransformerDesc};

/// Upper bounds on single sizes, far above any real model; `MAX_PARAMS` bounds their products.
pub const MAX_LAYERS: u64 = 1 << 12;
pub const MAX_WIDTH: u64 = 1 << 20;
pub const MAX_HEADS: u64 = 1 << 14;
pub const MAX_VOCAB: u64 = 1 << 24;
pub const MAX_EXPERTS: u64 = 1 << 14;

/// The Hugging Face config name of a description field, so errors name what the user wrote.
fn hf_alias(field: &str) -> Option<&'static str> {
    let name = field.rsplit('.').next().unwrap_or(field);
    Some(match name {
        "layers" => "num_hidden_layers",
        "hidden" => "hidden_size",
        "heads" => "num_attention_heads",
        "kv_heads" => "num_key_value_heads",
        "intermediate" => "intermediate_size",
        "vocab" => "vocab_size",
        "max_position" => "max_position_embeddings",
        "experts" => "num_experts",
        "top_k" => "num_experts_per_tok",
        "expert_intermediate" => "moe_intermediate_size",
        "shared_intermediate" => "shared_expert_intermediate_size",
        _ => return None,
    })
}

fn label(field: &str) -> String {
    match hf_alias(field) {
        Some(hf) => format!("'{field}' ({hf})"),
        None => format!("'{field}'"),
    }
}

fn check_range(field: &str, v: u64, lo: u64, hi: u64) -> Result<(), String> {
    if v < lo || v > hi {
        Err(format!("field {} = {v} is out of range ({lo}..={hi})", label(field)))
    } else {
        Ok(())
    }
}

/// Checks a transformer's fields are present, sane and consistent; `what` prefixes field names.
pub fn validate_transformer(t: &TransformerDesc, what: &str) -> Result<(), String> {
    let f = |name: &str| format!("{what}{name}");
    check_range(&f("layers"), t.layers, 1, MAX_LAYERS)?;
    check_range(&f("hidden"), t.hidden, 1, MAX_WIDTH)?;
    check_range(&f("heads"), t.heads, 1, MAX_HEADS)?;
    check_range(&f("kv_heads"), t.kv_heads, 1, t.heads)?;
    check_range(&f("head_dim"), t.head_dim, 1, 4096)?;
    check_range(&f("intermediate"), t.intermediate, 0, MAX_WIDTH)?;
    check_range(&f("vocab"), t.vocab, 0, MAX_VOCAB)?;
    check_range(&f("max_position"), t.max_position, 1, 1 << 24)?;
    // Per-layer widths and the grouped low-rank output (Gemma 4, MiMo-V2, DeepSeek-V4).
    check_range(&f("global_kv_heads"), t.global_kv_heads, 0, t.heads)?;
    check_range(&f("global_head_dim"), t.global_head_dim, 0, 4096)?;
    check_range(&f("o_groups"), t.o_groups, 0, t.heads)?;
    check_range(&f("o_lora_rank"), t.o_lora_rank, 0, MAX_WIDTH)?;
    check_range(&f("q_bottleneck"), t.q_bottleneck, 0, MAX_WIDTH)?;
    if let Some(c) = &t.compressor {
        check_range(&f("compressor.index_heads"), c.index_heads, 0, 1024)?;
        check_range(&f("compressor.index_head_dim"), c.index_head_dim, 0, 4096)?;
        check_range(&f("compressor.hc_mult"), c.hc_mult, 1, 64)?;
        check_range(&f("compressor.hc_sinkhorn_iters"), c.hc_sinkhorn_iters, 0, 1000)?;
    }
    if t.global_kv_heads > 0 && !t.heads.is_multiple_of(t.global_kv_heads) {
        return Err(format!("field {} = {} must divide {} = {}", label(&f("global_kv_heads")), t.global_kv_heads, label(&f("heads")), t.heads));
    }
    if t.o_groups > 0 && !t.heads.is_multiple_of(t.o_groups) {
        return Err(format!("field {} = {} must divide {} = {}", label(&f("o_groups")), t.o_groups, label(&f("heads")), t.heads));
    }
    if !t.heads.is_multiple_of(t.kv_heads) {
        return Err(format!(
            "field {} = {} must divide {} = {}",
            label(&f("kv_heads")),
            t.kv_heads,
            label(&f("heads")),
            t.heads
        ));
    }
    if let Some(w) = &t.sliding_window {
        check_range(&f("sliding_window"), w.window, 1, 1 << 24)?;
        check_range(&f("sliding_window_layers"), w.layers, 1, t.layers)?;
    }
    if let Some(m) = &t.mla {
        check_range(&f("q_lora_rank"), m.q_lora_rank, 0, MAX_WIDTH)?;
        check_range(&f("kv_lora_rank"), m.kv_lora_rank, 1, MAX_WIDTH)?;
        check_range(&f("qk_nope_head_dim"), m.qk_nope_head_dim, 0, 4096)?;
        check_range(&f("qk_rope_head_dim"), m.qk_rope_head_dim, 1, 4096)?;
        check_range(&f("v_head_dim"), m.v_head_dim, 1, 4096)?;
        if let Some(s) = &m.sparse {
            s.validate(what, t.max_position)?;
        }
    }
    if !t.stack.is_empty() {
        validate_stack(t, what)?;
        // The stack says which layers have a dense MLP, each with its own width.
        if t.moe.is_none() {
            return Ok(());
        }
    }
    match &t.moe {
        None if t.intermediate == 0 => {
            Err(format!("field {} must be positive for a dense MLP", label(&f("intermediate"))))
        }
        None => Ok(()),
        Some(m) => {
            check_range(&f("experts"), m.experts, 1, MAX_EXPERTS)?;
            check_range(&f("top_k"), m.top_k, 1, m.experts)?;
            check_range(&f("expert_intermediate"), m.expert_intermediate, 1, MAX_WIDTH)?;
            check_range(&f("shared_intermediate"), m.shared_intermediate, 0, MAX_WIDTH)?;
            check_range(&f("dense_layers"), m.dense_layers, 0, t.layers)?;
            check_range(&f("moe_latent_size"), m.latent, 0, MAX_WIDTH)?;
            if m.dense_layers > 0 && t.intermediate == 0 {
                return Err(format!("field {} is needed by dense layers", label(&f("intermediate"))));
            }
            Ok(())
        }
    }
}

/// Checks an explicit layer stack: its runs cover the layers, each names widths the description
/// has (a Gated DeltaNet, Mamba-2 or MoE run needs those widths), sizes in range.
fn validate_stack(t: &TransformerDesc, what: &str) -> Result<(), String> {
    use super::{Ffn, Mixer};
    let covered = t.stack.iter().fold(0u64, |a, r| a.saturating_add(r.count));
    if covered != t.layers {
        return Err(format!("field '{what}stack' covers {covered} layers, but the model has {} ('{what}layers')", t.layers));
    }
    for (i, r) in t.stack.iter().enumerate() {
        let f = format!("{what}stack[{i}]");
        check_range(&format!("{f}.count"), r.count, 1, MAX_LAYERS)?;
        match r.mixer {
            Mixer::Attention { window, chunk, compress, topk, .. } => {
                check_range(&format!("{f}.mixer.window"), window, 0, 1 << 24)?;
                check_range(&format!("{f}.mixer.chunk"), chunk, 0, 1 << 24)?;
                check_range(&format!("{f}.mixer.compress"), compress, 0, 1 << 16)?;
                check_range(&format!("{f}.mixer.topk"), topk, 0, 1 << 24)?;
            }
            Mixer::Linear if t.linear_attention.is_none() => return Err(format!("field '{f}.mixer' is linear attention, but the description has no 'linear_attention' widths")),
            Mixer::Mamba2 => match &t.mamba {
                None => return Err(format!("field '{f}.mixer' is Mamba-2, but the description has no 'mamba' widths")),
                Some(m) => {
                    for (n, v) in [("heads", m.heads), ("head_dim", m.head_dim), ("state", m.state), ("groups", m.groups), ("conv_kernel", m.conv_kernel), ("chunk", m.chunk)] {
                        check_range(&format!("{what}mamba.{n}"), v, 1, MAX_WIDTH)?;
                    }
                }
            },
            Mixer::ShortConv { kernel } => check_range(&format!("{f}.mixer.kernel"), kernel, 1, 64)?,
            _ => {}
        }
        match r.ffn {
            Ffn::Dense { intermediate } => check_range(&format!("{f}.ffn.intermediate"), intermediate, 1, MAX_WIDTH)?,
            Ffn::Moe if t.moe.is_none() => return Err(format!("field '{f}.ffn' is a mixture of experts, but the description has no 'moe'")),
            _ => {}
        }
    }
    Ok(())
}

/// Checks a whole model description.
pub fn validate(m: &ModelDesc) -> Result<(), String> {
    if let Some(t) = &m.llm {
        validate_transformer(t, "")?;
        if t.vocab == 0 {
            return Err("field 'vocab_size' must be positive for a language model".into());
        }
    }
    if let Some(v) = &m.vision {
        validate_transformer(&v.encoder, "vision_config.")?;
        check_range("vision_config.patch_size", v.patch_size, 1, 4096)?;
        check_range("vision_config.image_size", v.image_size, v.patch_size, 1 << 16)?;
        check_range("vision_config.num_channels", v.channels, 1, 64)?;
        check_range("projector_hidden", v.projector_hidden, 0, MAX_WIDTH)?;
        if m.llm.is_none() {
            return Err("a vision encoder needs a language model ('text_config')".into());
        }
    }
    if m.llm.is_none() && m.graph.is_empty() {
        return Err(format!("model '{}' has neither a transformer nor operators", m.name));
    }
    for op in &m.graph {
        graph::validate_op(op)?;
    }
    let total = m.params().total;
    if total > MAX_PARAMS {
        return Err(format!(
            "'{}' would have {total:.3e} parameters (over 10^14): check hidden_size, \
             num_hidden_layers, intermediate_size and the expert counts",
            m.name
        ));
    }
    Ok(())
}

/// Largest total parameter count accepted (10^14, ~50x the largest published models): beyond
/// it a description is a typo, and byte counts would leave u64.
pub const MAX_PARAMS: u64 = 100_000_000_000_000;

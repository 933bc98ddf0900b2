//! Settings that do not apply to the model are refused, naming them (issue 44: "a setting that
//! does not apply to this model is refused, naming it"). A frozen part the model does not have,
//! a diffusion-only setting on a language model, an MoE switch on a dense model: each would
//! otherwise be accepted and either priced as something it is not (`frozen: ["llm"]` on a
//! text-only model froze the whole model and reported a faster step) or silently ignored.
//!
//! Only settings the user moved from their defaults are judged, so a scenario that never
//! mentions them is unaffected. Plain checks on the options and the resolved model: nothing here
//! prices anything.

use crate::spec::options::training::TrainingOptions;
use tunelab_sim::model::ModelDesc;

/// Checks `scenario.training` against the model it trains. `diffusion`: the model is a diffusion
/// pipeline's (its training graph, not a transformer description).
pub fn training_applies(o: &TrainingOptions, model: &ModelDesc, diffusion: bool) -> Result<(), String> {
    let name = crate::spec::scenario::clip(&model.name);
    for part in &o.frozen {
        let why = match part.as_str() {
            "vision" if model.vision.is_none() => Some("it has no vision tower"),
            "llm" if model.vision.is_none() => Some("it is not multimodal: the language model is the whole model, and freezing it would leave nothing to train (for a fine-tune of some of its weights, use training.lora_rank)"),
            "llm" if model.llm.is_none() => Some("it has no language model"),
            _ => None,
        };
        if let Some(why) = why {
            return Err(format!("training.frozen: '{part}' does not apply to '{name}': {why}; remove it from training.frozen"));
        }
    }
    if !diffusion {
        let only = |field: &str| Err(format!("training.{field}: applies only to diffusion training (a diffusion pipeline's model), and '{name}' is not one; remove training.{field}"));
        if !o.precomputed.is_empty() {
            return only("precomputed");
        }
        if o.resolution.is_some() {
            return only("resolution");
        }
        if o.width.is_some() {
            return only("width");
        }
        if o.frames.is_some() {
            return only("frames");
        }
    } else {
        let not = |field: &str| Err(format!("training.{field}: applies only to a language model's training step, and '{name}' is a diffusion pipeline; remove training.{field}"));
        if !o.frozen.is_empty() {
            return not("frozen");
        }
        if !o.unfused_kernels.is_empty() {
            return not("unfused_kernels");
        }
        // Issue 42: packed documents and per-stage recomputation count a language model's
        // documents and layers.
        if o.document_len.is_some() {
            return not("document_len");
        }
        if !o.recompute_layers.is_empty() {
            return not("recompute_layers");
        }
    }
    let moe = model.llm.as_ref().is_some_and(|t| t.moe.is_some());
    if !moe {
        let dense = |field: &str, v: String| Err(format!("training.{field}: {v} applies only to a mixture-of-experts model, and '{name}' is dense; remove training.{field}"));
        if let Some(x) = o.moe_imbalance {
            return dense("moe_imbalance", format!("an imbalance of {x}"));
        }
        if o.moe_token_dispatcher != "alltoall" {
            return dense("moe_token_dispatcher", format!("the '{}' dispatcher", crate::spec::scenario::clip(&o.moe_token_dispatcher)));
        }
        if !o.moe_grouped_gemm {
            return dense("moe_grouped_gemm", "false (one matmul per expert)".into());
        }
        if o.moe_permutation_async_comm {
            return dense("moe_permutation_async_comm", "true".into());
        }
        if let Some(ep) = o.expert_parallel.iter().find(|e| **e > 1) {
            return dense("expert_parallel", format!("a degree of {ep}"));
        }
    }
    Ok(())
}

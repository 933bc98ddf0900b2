//! Sana's linear attention runs in float32 whatever the pipeline's precision (diffusers'
//! SanaLinearAttnProcessor2_0: `query.float(), key.float(), value.float()`, the padded value, both
//! matmuls and the division in fp32, `.to(original_dtype)` after): the step's operators show the
//! casts and the fp32 core, and at a 4096 x 4096 image the core's share of the step is not small.

use tunelab_scenario::stages::diffusion::price::{Knobs, VaeMode};
use tunelab_scenario::stages::diffusion::pricer;
use tunelab_scenario::Scenario;
use tunelab_sim::cost::dispatch::LaunchMode;
use tunelab_sim::{AttentionKind, DType, Op};

fn sana(size: u64) -> Scenario {
    Scenario::from_json(&format!(r#"{{"version": 1, "stage": "diffusion", "model": "sana-1600m-1024px", "device": "910B2", "diffusion": {{"height": {size}, "width": {size}, "steps": 28}}, "budget": 4, "seed": 1}}"#)).unwrap()
}

fn knobs(dtype: DType) -> Knobs {
    Knobs { steps: 28, int8: false, dtype, attention: AttentionKind::Flash, tome: 0.0, launch: LaunchMode::Eager, te_cache: false, step_cache: 1.0, cfg_parallel: false, sp: 1, ring: false, vae: VaeMode::Full, vae_fp32: true, vae_launch: LaunchMode::Eager }
}

#[test]
fn the_linear_attention_core_is_fp32_with_its_casts() {
    let mut pr = pricer(&sana(4096)).unwrap();
    let ops = pr.step_ops(&knobs(DType::Bf16)).unwrap();
    let find = |n: &str| ops.iter().find(|o| o.name == n).unwrap_or_else(|| panic!("no {n} in {:?}", ops.iter().map(|o| &o.name).collect::<Vec<_>>()));
    for n in ["block.self_attn.core.kv", "block.self_attn.core.q_kv"] {
        assert!(matches!(find(n).op, Op::Matmul { dtype: DType::Fp32, .. }), "{n} must be fp32: {:?}", find(n).op);
    }
    for n in ["block.self_attn.core.to_fp32", "block.self_attn.core.pad_v", "block.self_attn.core.normalise", "block.self_attn.core.to_low"] {
        let _ = find(n);
    }
    // The projections stay in the pipeline's precision.
    assert!(matches!(find("block.self_attn.to_qkv").op, Op::Matmul { dtype: DType::Bf16, .. }));
    // At 16384 tokens per image (and a CFG batch of 2) the fp32 core is a visible part of a step.
    let total: f64 = ops.iter().map(|o| o.time_us).sum();
    let core: f64 = ops.iter().filter(|o| o.name.starts_with("block.self_attn.core.")).map(|o| o.time_us).sum();
    assert!(core / total > 0.05, "fp32 linear-attention core {:.1} of {:.1} ms", core / 1e3, total / 1e3);
}

#[test]
fn an_fp32_pipeline_has_no_casts_around_its_core() {
    let mut pr = pricer(&sana(1024)).unwrap();
    let ops = pr.step_ops(&knobs(DType::Fp32)).unwrap();
    assert!(!ops.iter().any(|o| o.name.ends_with("core.to_fp32") || o.name.ends_with("core.to_low")), "no casts at fp32");
    assert!(ops.iter().any(|o| o.name == "block.self_attn.core.kv"));
}

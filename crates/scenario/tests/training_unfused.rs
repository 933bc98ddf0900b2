//! Fused kernels a MindSpeed run turns off (issue 21, Fidelity III): a script without
//! --use-fused-rotary-pos-emb or --use-fused-swiglu runs Megatron's own rotary embedding and
//! glu, several kernels each (`training.unfused_kernels`; counts with sources in
//! assets/constants/training.json). A user sees what a fusion flag buys, the scenario field is
//! checked, and a framework whose model code is already unfused (DeepSpeed on Hugging Face
//! code) is not charged twice.

use tunelab_scenario::scenario::Scenario;
use tunelab_scenario::training::{simulate, TrainPoint, TrainingOptions};
use tunelab_sim::device::bundled_device;
use tunelab_sim::model::load_bundled;
use tunelab_sim::workload::{ParallelPlan, Recompute, TrainFramework, TrainOptions, Unfused};
use tunelab_sim::Precision;

fn step_ms(framework: TrainFramework, unfused: Unfused) -> f64 {
    let m = load_bundled("llama-3-8b").unwrap().model;
    let plan = ParallelPlan { tp: 8, sequence_parallel: true, ..ParallelPlan::default() };
    let train = TrainOptions { grad_accum: 8, distributed_optimizer: true, fp32_grads: true, recompute: Recompute::None, framework, unfused, ..TrainOptions::default() };
    let p = TrainPoint { plan, micro_batch: 2, train, precision: Precision::Bf16, moe_imbalance: 1.0 };
    simulate(&m, &bundled_device("910B2").unwrap(), &p, 8192, 16, 8).unwrap_or_else(|e| panic!("{e}")).step_time_ms
}

#[test]
fn turning_a_fusion_off_slows_megatron_but_not_already_unfused_model_code() {
    let fused = step_ms(TrainFramework::Megatron, Unfused::default());
    let rotary_swiglu = step_ms(TrainFramework::Megatron, Unfused { rotary: true, swiglu: true, ..Unfused::default() });
    let all = step_ms(TrainFramework::Megatron, Unfused { rms_norm: true, rotary: true, swiglu: true });
    println!("Llama-3-8B 8k TP8 step: fused {fused:.0} ms, rotary+SwiGLU unfused {rotary_swiglu:.0} ms, all unfused {all:.0} ms");
    // Memory-bound passes over the activations: a few percent each, not a doubling.
    assert!(rotary_swiglu > fused * 1.03 && rotary_swiglu < fused * 1.3, "{rotary_swiglu} vs {fused}");
    assert!(all > rotary_swiglu, "{all} vs {rotary_swiglu}");
    // DeepSpeed's Hugging Face code already runs these as separate kernels.
    let ds = step_ms(TrainFramework::Deepspeed, Unfused::default());
    let ds_off = step_ms(TrainFramework::Deepspeed, Unfused { rms_norm: true, rotary: true, swiglu: true });
    assert_eq!(ds_off, ds);
}

#[test]
fn the_scenario_field_names_an_unknown_kernel() {
    let mut s = Scenario::default();
    s.training.unfused_kernels = vec!["rotary".into(), "layernorm".into()];
    let e = TrainingOptions::from_scenario(&s).unwrap_err();
    assert!(e.contains("training.unfused_kernels") && e.contains("layernorm"), "{e}");
}

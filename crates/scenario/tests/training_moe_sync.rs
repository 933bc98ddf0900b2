//! The MoE layers' host synchronisation (issue 21, Fidelity III): every pass through a MoE block
//! (forward, its recomputation, backward) waits on the host at the token dispatcher's
//! data-dependent shapes (`moe_layer_sync_ms` in the framework's block of
//! assets/constants/training.json). A user sees it named in the step's breakdown and diagnosis;
//! it grows with the MoE layers a pipeline stage holds and with recomputation, a graph-mode
//! framework without host round trips does not pay it, and a dense model is untouched.

use tunelab_scenario::training::{simulate, TrainPoint, TrainResult, MOE_SYNC};
use tunelab_sim::device::bundled_device;
use tunelab_sim::model::{load_bundled, ModelDesc};
use tunelab_sim::workload::{training_constants, with_training_constants, ParallelPlan, Recompute, TrainFramework, TrainOptions};
use tunelab_sim::Precision;

fn model(id: &str) -> ModelDesc {
    load_bundled(id).unwrap().model
}

/// Expert parallelism 8 over 16 chips with `pp` pipeline stages.
fn point(pp: u64, recompute: Recompute, framework: TrainFramework) -> TrainPoint {
    let dp = 16 / pp;
    let plan = ParallelPlan { tp: 1, pp, dp, ep: 8, cp: 1, vpp: 1, sequence_parallel: false, expert_tp: None, ..ParallelPlan::default() };
    let train = TrainOptions { grad_accum: 32 / dp, distributed_optimizer: true, fp32_grads: true, recompute, framework, overlap_grad_reduce: false, overlap_param_gather: false, ..TrainOptions::default() };
    TrainPoint { plan, micro_batch: 1, train, precision: Precision::Bf16, moe_imbalance: 1.25 }
}

fn run(m: &ModelDesc, p: &TrainPoint) -> TrainResult {
    simulate(m, &bundled_device("910B2").unwrap(), p, 4096, 32, 16).unwrap_or_else(|e| panic!("{e}"))
}

fn sync_ms(r: &TrainResult) -> f64 {
    r.breakdown.iter().find(|(k, _)| k == MOE_SYNC).map(|(_, v)| *v).expect("the breakdown names the MoE synchronisation")
}

#[test]
fn moe_sync_is_named_and_grows_with_the_moe_layers_and_passes() {
    let m = model("deepseek-v2-lite");
    let per_pass = training_constants().framework(TrainFramework::Megatron).moe_layer_sync_ms.value;
    assert!(per_pass > 0.0, "Megatron's MoE layers synchronise");
    let one = run(&m, &point(1, Recompute::None, TrainFramework::Megatron));
    let (moe_layers, _) = m.llm.as_ref().unwrap().moe_and_dense_layers();
    // Every micro-batch of the step: each MoE layer's forward and backward pass.
    let accum = one.grad_accum as f64;
    let want = moe_layers as f64 * 2.0 * per_pass * accum;
    assert!((sync_ms(&one) - want).abs() < 1e-6 * want, "pp 1: {} ms, want {want}", sync_ms(&one));
    // Full recomputation runs each MoE layer's forward twice: three passes instead of two.
    let rc = run(&m, &point(1, Recompute::Full, TrainFramework::Megatron));
    assert!((sync_ms(&rc) / sync_ms(&one) - 1.5).abs() < 1e-9, "recompute: {} vs {}", sync_ms(&rc), sync_ms(&one));
    // Two pipeline stages hold half the MoE layers each (rounded up), per micro-batch.
    let two = run(&m, &point(2, Recompute::None, TrainFramework::Megatron));
    let per_mb = |r: &TrainResult| sync_ms(r) / r.grad_accum as f64;
    let half = moe_layers.div_ceil(2) as f64 / moe_layers as f64;
    assert!((per_mb(&two) / per_mb(&one) - half).abs() < 1e-9, "pp 2 per micro-batch {} vs pp 1 {}", per_mb(&two), per_mb(&one));
    // It is device idle time inside the step: the step is that much longer than without it
    // (no gradient-reduce overlap here, which could hide communication under it).
    let mut k = (*training_constants()).clone();
    k.get_mut("frameworks.megatron.moe_layer_sync_ms").unwrap().value = 0.0;
    let without = with_training_constants(k, || run(&m, &point(1, Recompute::None, TrainFramework::Megatron)));
    assert_eq!(sync_ms(&without), 0.0);
    assert!((one.step_time_ms - without.step_time_ms - sync_ms(&one)).abs() < 1e-6 * one.step_time_ms, "step {} vs {} without", one.step_time_ms, without.step_time_ms);
}

#[test]
fn graph_mode_moe_and_dense_models_pay_no_sync() {
    // MindFormers routes with a fixed expert capacity: static shapes, no host round trip.
    let mf = run(&model("deepseek-v2-lite"), &point(1, Recompute::None, TrainFramework::Mindformers));
    assert_eq!(sync_ms(&mf), 0.0);
    // A dense model is unchanged by the MoE term, whatever its value.
    let dense = model("llama-2-7b");
    let mut p = point(1, Recompute::Full, TrainFramework::Megatron);
    p.plan.ep = 1;
    let a = run(&dense, &p);
    let mut k = (*training_constants()).clone();
    k.get_mut("frameworks.megatron.moe_layer_sync_ms").unwrap().value = 60.0;
    let b = with_training_constants(k, || run(&dense, &p));
    assert_eq!(sync_ms(&a), 0.0);
    assert_eq!(a.step_time_ms, b.step_time_ms, "a dense model has no MoE layers");
}

/// Gradient checkpointing reruns only what a gradient crosses: LLaVA's frozen CLIP tower runs
/// under no_grad, so full recomputation reruns the LLM's layers and none of the tower's.
#[test]
fn full_recompute_skips_a_frozen_vision_tower() {
    use tunelab_sim::workload::{build_graph, GraphOptions, Workload};
    let m = model("llava-1.5-7b");
    let plan = ParallelPlan { tp: 1, pp: 1, dp: 8, ..ParallelPlan::default() };
    let mut opts = GraphOptions { precision: Precision::Bf16, ..GraphOptions::default() };
    opts.train = TrainOptions { recompute: Recompute::Full, frozen_vision: true, grad_accum: 1, framework: TrainFramework::Deepspeed, ..TrainOptions::default() };
    let g = build_graph(&m, &Workload::TrainStep { micro_batch: 1, seq_len: 512 }, &plan, &opts).unwrap();
    let recomputed: Vec<&str> = g.ops.iter().filter(|o| o.name.ends_with(".recompute")).map(|o| o.name.as_str()).collect();
    assert!(recomputed.iter().any(|n| n.starts_with("layer")), "the LLM's layers are recomputed: {recomputed:?}");
    assert!(!recomputed.iter().any(|n| n.starts_with("vision.")), "the frozen tower is not: {recomputed:?}");
}

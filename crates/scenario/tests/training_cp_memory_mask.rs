//! Context parallelism in training, two mechanisms read from MindSpeed / Megatron (issue 42,
//! the Llama2-7B CP4 and Qwen2.5-VL-72B long-video rows):
//! - the distributed optimizer shards its state over dp x cp (Megatron's DistributedOptimizer
//!   group is the data-parallel group with context parallelism): every CP rank holds the same
//!   weights, so four CP ranks keep a quarter of the optimizer state each;
//! - `--attention-mask-type general` under ring attention runs every ring step's block whole
//!   (MindSpeed's GeneralAttentionStrategy), twice the causal attention work, while Ulysses and
//!   the causal mask are unchanged.

use tunelab_scenario::training::{simulate_options, TrainPoint, TrainingOptions};
use tunelab_sim::device::bundled_device;
use tunelab_sim::memory::memory_per_chip;
use tunelab_sim::model::load_bundled;
use tunelab_sim::workload::{CpAlgo, GraphOptions, ParallelPlan, Recompute, TrainOptions, Workload};
use tunelab_sim::Precision;

fn point(cp: u64, algo: CpAlgo, general: bool) -> TrainPoint {
    let plan = ParallelPlan { tp: 2, pp: 1, dp: 4 / cp, cp, sequence_parallel: true, ..ParallelPlan::default() };
    let train = TrainOptions { grad_accum: 16, distributed_optimizer: true, fp32_grads: true, recompute: Recompute::None, cp_algo: algo, general_mask: general, ..TrainOptions::default() };
    TrainPoint { plan, micro_batch: 1, train, precision: Precision::Bf16, moe_imbalance: 1.0 }
}

#[test]
fn the_distributed_optimizer_shards_over_the_context_parallel_ranks_too() {
    let m = load_bundled("llama-2-7b").unwrap().model;
    let w = Workload::TrainStep { micro_batch: 1, seq_len: 32768 };
    let at = |dp: u64, cp: u64| {
        let plan = ParallelPlan { tp: 2, dp, cp, ..ParallelPlan::default() };
        let mut o = GraphOptions { precision: Precision::Bf16, ..Default::default() };
        o.train = TrainOptions { distributed_optimizer: true, fp32_grads: true, ..TrainOptions::default() };
        memory_per_chip(&m, &w, &plan, &o, None).unwrap()
    };
    let (alone, cp4, dp4) = (at(1, 1), at(1, 4), at(4, 1));
    // 12 bytes a parameter (fp32 master, two moments) over tp 2, then over the 4 CP ranks.
    assert_eq!(cp4.optimizer, dp4.optimizer);
    assert!((alone.optimizer as f64 / cp4.optimizer as f64 - 4.0).abs() < 1e-3, "{} vs {}", alone.optimizer, cp4.optimizer);
    // The weights and gradients are whole on every rank.
    assert_eq!(alone.weights, cp4.weights);
    assert_eq!(alone.gradients, cp4.gradients);
}

#[test]
fn a_general_mask_doubles_ring_attention_but_leaves_ulysses_and_causal_alone() {
    let (m, d) = (load_bundled("llama-2-7b").unwrap().model, bundled_device("910B2").unwrap());
    let o = TrainingOptions { chips: 8, ..TrainingOptions::default() };
    let run = |algo: CpAlgo, general: bool| simulate_options(&m, &d, &point(4, algo, general), &o, 32768, 16).unwrap();
    let (ring, ring_g) = (run(CpAlgo::Ring, false), run(CpAlgo::Ring, true));
    let (uly, uly_g) = (run(CpAlgo::Ulysses, false), run(CpAlgo::Ulysses, true));
    println!(
        "Llama-2-7B 32K tp2 cp4: ring {:.1} TFLOP/s causal, {:.1} general; Ulysses {:.1} / {:.1}",
        ring.model_tflops_per_chip, ring_g.model_tflops_per_chip, uly.model_tflops_per_chip, uly_g.model_tflops_per_chip
    );
    // Attention is about half of a 32K step's model FLOPs for a 7B model: doubling it costs
    // between a quarter and a whole of the step again.
    assert!(ring_g.step_time_ms > ring.step_time_ms * 1.25 && ring_g.step_time_ms < ring.step_time_ms * 2.0, "{} vs {}", ring_g.step_time_ms, ring.step_time_ms);
    // The model FLOPs (the TFLOP/s convention) are the same; only the time moves.
    assert!(ring_g.model_tflops_per_chip < ring.model_tflops_per_chip);
    assert_eq!(uly.step_time_ms, uly_g.step_time_ms);
    // Memory is unchanged (the mask is per block).
    assert_eq!(ring.memory_gib, ring_g.memory_gib);
}

#[test]
fn a_bad_mask_name_is_refused_by_field_and_old_scenarios_keep_their_json() {
    let s = tunelab_scenario::Scenario::from_json(r#"{"stage":"training","model":"llama-2-7b","training":{"attention_mask_type":"sliding"}}"#);
    let e = s.and_then(|s| tunelab_scenario::stages::setup(&s).map(|_| ())).unwrap_err();
    assert!(e.contains("training.attention_mask_type"), "{e}");
    let old = tunelab_scenario::bundled::bundled_scenario("llama2-7b-8x910B2-training").unwrap();
    assert!(!old.to_json().contains("attention_mask"));
}

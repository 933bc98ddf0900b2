//! Training layouts (issue 42, item 3): DeepSeek's DualPipe-V schedule, packed documents with
//! reset attention masks, per-stage partial recomputation, and the model TFLOP/s per chip. What a
//! user relies on: DualPipe-V idles less than 1F1B on the same layout and holds a little more
//! activation memory; packed documents cut the attention time of a long sequence but not its
//! memory; recomputing a few layers per stage lands between none and all of them in time and
//! memory; a setting that does not fit the point is refused with its field named; a scenario
//! without the new keys keeps its link and its numbers.

use tunelab_scenario::training::{simulate_options, TrainPoint, TrainingOptions};
use tunelab_scenario::Scenario;
use tunelab_sim::device::bundled_device;
use tunelab_sim::model::{load_bundled, ModelDesc};
use tunelab_sim::workload::{ParallelPlan, Recompute, TrainOptions};
use tunelab_sim::Precision;

fn model() -> ModelDesc {
    load_bundled("llama-2-7b").unwrap().model
}

/// Llama-2-7B (32 layers) on 8 chips: tp 2, pp 4, 16 micro-batches per step.
fn point(recompute: Recompute, dualpipev: bool, document_len: u64) -> TrainPoint {
    let plan = ParallelPlan { tp: 2, pp: 4, dp: 1, sequence_parallel: true, ..ParallelPlan::default() };
    let train = TrainOptions { grad_accum: 16, distributed_optimizer: true, fp32_grads: true, recompute, dualpipev, document_len, ..TrainOptions::default() };
    TrainPoint { plan, micro_batch: 1, train, precision: Precision::Bf16, moe_imbalance: 1.0 }
}

fn options(recompute_layers: Vec<u64>) -> TrainingOptions {
    TrainingOptions { chips: 8, recompute_layers, ..TrainingOptions::default() }
}

#[test]
fn dualpipev_idles_less_than_1f1b_and_keeps_a_little_more_activation_memory() {
    let (m, d) = (model(), bundled_device("910B2").unwrap());
    let o = options(vec![]);
    let one = simulate_options(&m, &d, &point(Recompute::None, false, 0), &o, 4096, 16).unwrap();
    let dual = simulate_options(&m, &d, &point(Recompute::None, true, 0), &o, 4096, 16).unwrap();
    println!(
        "Llama-2-7B tp2 pp4, 16 micro-batches: 1F1B {:.0} ms (bubble {:.1}%), DualPipe-V {:.0} ms (bubble {:.1}%); memory {:.1} vs {:.1} GiB",
        one.step_time_ms, one.bubble_fraction * 100.0, dual.step_time_ms, dual.bubble_fraction * 100.0, one.memory_gib, dual.memory_gib
    );
    assert!(dual.step_time_ms < one.step_time_ms && dual.bubble_fraction < one.bubble_fraction * 0.75);
    assert!(dual.memory_gib > one.memory_gib && dual.memory_gib < one.memory_gib * 1.2);
    // Fewer than 2 pp micro-batches: refused with the field named.
    let mut few = point(Recompute::None, true, 0);
    few.train.grad_accum = 4;
    let e = simulate_options(&m, &d, &few, &o, 4096, 4).unwrap_err();
    assert!(e.contains("training.pipeline_schedule"), "{e}");
}

#[test]
fn packed_documents_cut_attention_time_but_not_memory_and_tflops_follow_mfu() {
    let (m, d) = (model(), bundled_device("910B2").unwrap());
    let o = options(vec![]);
    let mut whole = point(Recompute::None, false, 0);
    whole.plan = ParallelPlan { tp: 8, pp: 1, dp: 1, sequence_parallel: true, ..ParallelPlan::default() };
    whole.train.grad_accum = 4;
    let packed = TrainPoint { train: TrainOptions { document_len: 2048, ..whole.train }, ..whole };
    let a = simulate_options(&m, &d, &whole, &o, 32768, 4).unwrap();
    let b = simulate_options(&m, &d, &packed, &o, 32768, 4).unwrap();
    println!("Llama-2-7B tp8 at 32K: one document {:.0} ms, 2K documents {:.0} ms; {:.1} vs {:.1} TFLOP/s per chip", a.step_time_ms, b.step_time_ms, a.model_tflops_per_chip, b.model_tflops_per_chip);
    assert!(b.step_time_ms < a.step_time_ms * 0.8, "{} vs {}", b.step_time_ms, a.step_time_ms);
    assert_eq!(a.memory_gib, b.memory_gib);
    let peak = d.derived.peak_tflops_fp16;
    assert!((a.model_tflops_per_chip - a.mfu * peak).abs() < 1e-9 * peak);
    // The model FLOPs count the whole sequence (Megatron's convention), so packing raises TFLOP/s.
    assert!(b.model_tflops_per_chip > a.model_tflops_per_chip);
}

#[test]
fn recomputing_some_layers_per_stage_lands_between_none_and_all() {
    let (m, d) = (model(), bundled_device("910B2").unwrap());
    let none = simulate_options(&m, &d, &point(Recompute::None, false, 0), &options(vec![]), 4096, 16).unwrap();
    let full = simulate_options(&m, &d, &point(Recompute::Full, false, 0), &options(vec![]), 4096, 16).unwrap();
    let all = simulate_options(&m, &d, &point(Recompute::Full, false, 0), &options(vec![8, 8, 8, 8]), 4096, 16).unwrap();
    let part = simulate_options(&m, &d, &point(Recompute::Full, false, 0), &options(vec![6, 4, 2, 0]), 4096, 16).unwrap();
    println!("step ms: none {:.0}, [6,4,2,0] {:.0}, all {:.0}; memory GiB: none {:.1}, part {:.1}, all {:.1}", none.step_time_ms, part.step_time_ms, full.step_time_ms, none.memory_gib, part.memory_gib, full.memory_gib);
    assert!((all.step_time_ms / full.step_time_ms - 1.0).abs() < 0.02, "every layer listed is full recomputation: {} vs {}", all.step_time_ms, full.step_time_ms);
    assert!(part.step_time_ms > none.step_time_ms && part.step_time_ms < full.step_time_ms);
    assert!(part.memory_gib < none.memory_gib && part.memory_gib > full.memory_gib);
    // A list that does not fit the point names the field.
    for (list, rec, want) in [(vec![1, 1], Recompute::Full, "pp = 4"), (vec![1, 1, 1, 1], Recompute::None, "recompute = full"), (vec![9, 0, 0, 0], Recompute::Full, "holds 8")] {
        let e = simulate_options(&m, &d, &point(rec, false, 0), &options(list.clone()), 4096, 16).unwrap_err();
        assert!(e.contains("training.recompute_layers") && e.contains(want), "{list:?}: {e}");
    }
}

#[test]
fn the_options_are_read_validated_and_old_links_keep_their_form() {
    let base = Scenario::default();
    let json = base.to_json();
    assert!(!json.contains("pipeline_schedule") && !json.contains("document_len") && !json.contains("recompute_layers"), "defaults stay out of the link");
    for (key, bad, field) in [("pipeline_schedule", serde_json::json!("zb-v"), "training.pipeline_schedule"), ("document_len", serde_json::json!(0), "training.document_len"), ("recompute_layers", serde_json::json!([200000]), "training.recompute_layers")] {
        let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
        v["training"][key] = bad;
        let e = Scenario::from_json(&v.to_string()).and_then(|s| s.training.validate().map(|_| s)).err().unwrap_or_default();
        assert!(e.contains(field), "{key}: {e}");
    }
    let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
    v["training"]["pipeline_schedule"] = serde_json::json!("dualpipev");
    v["training"]["document_len"] = serde_json::json!(4096);
    let s = Scenario::from_json(&v.to_string()).unwrap();
    assert_eq!(s.training.pipeline_schedule, "dualpipev");
    assert!(Scenario::from_json(&s.to_json()).unwrap().training.document_len == Some(4096), "the link round-trips");
}

//! Training layouts beyond Megatron's 1F1B (issue 42, item 3): the pipeline schedule
//! (`training.pipeline_schedule`), packed documents with reset attention masks
//! (`training.document_len`, priced in `tunelab_sim::workload::train::packed_attention`),
//! per-stage partial recomputation (`training.recompute_layers`), and the model TFLOP/s per chip
//! the step reaches.
//!
//! **1F1B** (Megatron, interleaved with v virtual stages; Narayanan et al. 2021, sections
//! 2.2.1-2.2.2): m micro-batches take m + (pp - 1) / v micro-batch slots, the extra slots idle;
//! activations cross 2 v stage boundaries per micro-batch.
//!
//! **DualPipe-V** (deepseek-ai/DualPipe README, "Pipeline Bubbles and Memory Usage Comparison";
//! MindSpeed-LLM --schedules-method dualpipev): the model is cut into 2 pp stages laid out as a V
//! over the pp devices, so each device holds two model chunks (stage i and stage 2 pp - 1 - i):
//! the same parameters per device as 1F1B on the same devices. The README's bubble for PP stages
//! is (PP/2 - 1)(F&B + B - 3W), with F, B and W the forward, full backward and weight-gradient
//! backward of one chunk and F&B a forward and a backward chunk of two micro-batches run
//! overlapped. Here PP = 2 pp and a chunk is half a device's layers, so the idle time is
//! (pp - 1)(F&B + B - 3 W) with F = fwd / 2, B = bwd / 2, W = wgrad / 2 of the device's
//! micro-batch. F&B is taken as F + B: the overlap hides one chunk's communication under the
//! other's compute, and the chip's compute is not doubled, so no compute time is credited to it.
//! It needs at least 2 pp micro-batches (dualpipe/dualpipev.py asserts num_chunks >= num_ranks
//! x 2). Activations: PP + 1 = 2 pp + 1 chunks in flight, i.e. (2 pp + 1) / (2 pp) times the
//! pp micro-batches of the device's layers that 1F1B's first stage holds. Activations cross a
//! device boundary twice per micro-batch and direction (v = 2).

use super::TrainPoint;
use tunelab_sim::workload::Recompute;

/// The pipeline's idle time and activation transfers for one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pipe {
    /// Idle time of the busiest stage per step, us.
    pub bubble_us: f64,
    /// Share of the step's pipeline time that is idle.
    pub bubble_fraction: f64,
    /// Point-to-point activation transfers per step, us.
    pub p2p_us: f64,
}

/// The pipeline of `m` micro-batches whose busiest stage takes `fwd` + `bwd` us each (`wgrad`
/// of `bwd` is weight gradients) and `p2p` us per stage-boundary transfer, under the point's
/// schedule. An impossible schedule is an error naming `training.pipeline_schedule`.
pub fn pipeline(p: &TrainPoint, m: f64, fwd: f64, bwd: f64, wgrad: f64, p2p: f64) -> Result<Pipe, String> {
    let plan = &p.plan;
    let (pp, v) = (plan.pp as f64, plan.vpp as f64);
    if p.train.dualpipev {
        if plan.pp < 2 || plan.vpp > 1 {
            return Err(format!("training.pipeline_schedule dualpipev needs pp >= 2 and no virtual stages (its two chunks per device are its own), got pp = {}, vpp = {}", plan.pp, plan.vpp));
        }
        if m < 2.0 * pp {
            return Err(format!("training.pipeline_schedule dualpipev needs at least 2 x pp = {} micro-batches per step, got {m} (DualPipe-V asserts num_chunks >= 2 x ranks)", 2 * plan.pp));
        }
        let (f, b, w) = (fwd / 2.0, bwd / 2.0, wgrad / 2.0);
        let bubble_us = (pp - 1.0) * ((f + b) + b - 3.0 * w).max(0.0);
        let busy = m * (fwd + bwd);
        return Ok(Pipe { bubble_us, bubble_fraction: bubble_us / (busy + bubble_us).max(1e-300), p2p_us: p2p * 2.0 * m });
    }
    // Interleaved 1F1B: m micro-batches plus (pp - 1) / v slots of fill and drain.
    let slots = if plan.pp > 1 { m + (pp - 1.0) / v } else { m };
    Ok(Pipe { bubble_us: (slots - m) * (fwd + bwd), bubble_fraction: (slots - m) / slots, p2p_us: p2p * v * m })
}

/// DualPipe-V's activations over 1F1B's on the same devices: (2 pp + 1) / (2 pp); 1 otherwise.
pub fn activation_factor(p: &TrainPoint) -> f64 {
    if p.train.dualpipev && p.plan.pp > 1 {
        let pp = p.plan.pp as f64;
        (2.0 * pp + 1.0) / (2.0 * pp)
    } else {
        1.0
    }
}

/// Checks a per-stage recomputation list against the point (`training.recompute_layers`): one
/// count per pipeline stage, full recomputation, no more layers than the stage holds.
pub fn check_recompute_layers(list: &[u64], p: &TrainPoint, stage_layers: &[u64]) -> Result<(), String> {
    if list.is_empty() {
        return Ok(());
    }
    if list.len() as u64 != p.plan.pp {
        return Err(format!("training.recompute_layers lists {} stages but pp = {} (one count per pipeline stage)", list.len(), p.plan.pp));
    }
    if p.train.recompute != Recompute::Full {
        return Err("training.recompute_layers recomputes whole layers (Megatron's block method): the point needs recompute = full".into());
    }
    for (i, &k) in list.iter().enumerate() {
        if let Some(&l) = stage_layers.get(i) {
            if k > l {
                return Err(format!("training.recompute_layers: stage {i} recomputes {k} layers but holds {l}"));
            }
        }
    }
    Ok(())
}

/// The layers of each pipeline stage the step prices one by one: an uneven `stage_layers` split
/// as given; under a per-stage recomputation list the even split stage by stage (each stage then
/// recomputes its own count); else none (the even split's one stage stands for all).
pub fn stages_for(model: &tunelab_sim::model::ModelDesc, p: &TrainPoint, stage_layers: &[u64], recompute_layers: &[u64]) -> Result<Vec<u64>, String> {
    // A vision-language model under pipeline parallelism: the vision tower runs on the first
    // stage only (MindSpeed-MM puts the ViT before the first LLM layers), so the stages are
    // uneven even when the layers split evenly; each is priced on its own and the busier sets
    // the pace (the even split's one priced stage has no first stage, so it left the tower out).
    let vision_first = model.active_vision().is_some() && p.plan.pp > 1 && p.plan.vpp <= 1;
    if recompute_layers.is_empty() && !(vision_first && stage_layers.is_empty()) {
        return Ok(stage_layers.to_vec());
    }
    let total = model.llm.as_ref().map(|t| t.layers).ok_or("training.recompute_layers: per-stage recomputation needs a transformer description (layers to count)")?;
    let pp = p.plan.pp.max(1);
    let even = |_: ()| -> Vec<u64> { (0..pp).map(|i| total / pp + u64::from(i < total % pp)).collect() };
    if recompute_layers.is_empty() {
        return Ok(even(()));
    }
    if p.plan.vpp > 1 {
        return Err(format!("training.recompute_layers counts layers per pipeline stage, so it needs no virtual stages (vpp = {})", p.plan.vpp));
    }
    let split: Vec<u64> = if stage_layers.is_empty() { even(()) } else { stage_layers.to_vec() };
    check_recompute_layers(recompute_layers, p, &split)?;
    Ok(split)
}

/// Model TFLOP/s per chip (the MFU's model FLOPs per second per chip, in 1e12): what
/// Megatron / MindSpeed print as "throughput per GPU (TFLOP/s/GPU)".
pub fn model_tflops_per_chip(mfu: f64, peak_tflops: f64) -> f64 {
    mfu * peak_tflops
}

/// The report's line for the layout options a scenario sets (None: the default layout).
pub fn describe(o: &crate::spec::options::training::TrainingOptions) -> Option<String> {
    let mut parts = Vec::new();
    if o.pipeline_schedule == "dualpipev" {
        parts.push("DualPipe-V schedule: two model chunks per pipeline device in a V, bubble (pp - 1)(F&B + B - 3W) of half-device chunks (deepseek-ai/DualPipe), activations (2 pp + 1) / (2 pp) of 1F1B's".to_string());
    }
    if let Some(d) = o.document_len {
        parts.push(format!("packed documents of {d} tokens with reset attention masks: attention within each document, memory as for the full sequence"));
    }
    if !o.recompute_layers.is_empty() {
        parts.push(format!("per-stage recomputation of {:?} layers (first to last stage)", o.recompute_layers));
    }
    (!parts.is_empty()).then(|| format!("training layout: {}", parts.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tunelab_sim::workload::{ParallelPlan, TrainOptions};
    use tunelab_sim::Precision;

    fn point(pp: u64, dualpipev: bool) -> TrainPoint {
        let plan = ParallelPlan { pp, ..ParallelPlan::default() };
        TrainPoint { plan, micro_batch: 1, train: TrainOptions { dualpipev, ..TrainOptions::default() }, precision: Precision::Bf16, moe_imbalance: 1.0 }
    }

    #[test]
    fn dualpipev_idles_less_than_1f1b_and_needs_its_micro_batches() {
        // Forward 1, backward 2 (half of it weight gradients) per micro-batch, pp 4, 16 micro-batches.
        let one = pipeline(&point(4, false), 16.0, 1.0, 2.0, 1.0, 0.0).unwrap();
        let dual = pipeline(&point(4, true), 16.0, 1.0, 2.0, 1.0, 0.0).unwrap();
        assert!((one.bubble_us - 9.0).abs() < 1e-9, "1F1B: (pp - 1)(F + B) = 9, got {}", one.bubble_us);
        // (pp - 1)(F + 2B - 3W) = 3 x (0.5 + 2 - 1.5) = 3.
        assert!((dual.bubble_us - 3.0).abs() < 1e-9, "{}", dual.bubble_us);
        assert!(dual.bubble_fraction < one.bubble_fraction);
        let e = pipeline(&point(4, true), 6.0, 1.0, 2.0, 1.0, 0.0).unwrap_err();
        assert!(e.contains("training.pipeline_schedule") && e.contains("8"), "{e}");
        assert!(pipeline(&point(1, true), 6.0, 1.0, 2.0, 1.0, 0.0).unwrap_err().contains("pp >= 2"));
        assert!((activation_factor(&point(4, true)) - 9.0 / 8.0).abs() < 1e-12);
        assert_eq!(activation_factor(&point(4, false)), 1.0);
    }

    #[test]
    fn a_recompute_list_must_match_the_point() {
        let mut p = point(2, false);
        assert!(check_recompute_layers(&[2, 1], &p, &[16, 16]).unwrap_err().contains("recompute = full"));
        p.train.recompute = Recompute::Full;
        assert!(check_recompute_layers(&[2, 1], &p, &[16, 16]).is_ok());
        assert!(check_recompute_layers(&[2], &p, &[16, 16]).unwrap_err().contains("pp = 2"));
        assert!(check_recompute_layers(&[20, 1], &p, &[16, 16]).unwrap_err().contains("holds 16"));
    }
}

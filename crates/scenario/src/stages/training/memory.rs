//! Per-chip memory of a training point: the device model's weights, gradients, optimizer states
//! and activations (`tunelab_sim::memory::memory_per_chip`, Megatron activation formulas and
//! ZeRO / distributed-optimizer sharding) plus the caching allocator's reservation and
//! fragmentation (constants with sources in assets/constants/training.json). A point that does
//! not fit the chip is infeasible, with the breakdown in the reason.

use super::TrainPoint;
use tunelab_sim::device::Device;
use tunelab_sim::memory::memory_per_chip;
use tunelab_sim::model::ModelDesc;
use tunelab_sim::workload::{training_constants, GraphOptions, Workload};

pub(super) const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// GiB per chip for one training point, or the out-of-memory reason.
pub fn memory_gib(model: &ModelDesc, device: &Device, p: &TrainPoint, w: &Workload, opts: &GraphOptions) -> Result<f64, String> {
    let k = training_constants();
    let mut mem = memory_per_chip(model, w, &p.plan, opts, Some(&p.train))?;
    // Per-stage partial recomputation: k of the stage's L layers keep only their inputs (the
    // full-recomputation figure), the others every activation (no recomputation).
    if let (Some(k), Some(t)) = (p.train.recompute_layers, model.llm.as_ref()) {
        let l = p.plan.layers_here(t.layers).max(1);
        let k = k.min(l);
        let none = tunelab_sim::workload::TrainOptions { recompute: tunelab_sim::workload::Recompute::None, ..p.train };
        let kept = memory_per_chip(model, w, &p.plan, &GraphOptions { train: none, ..*opts }, Some(&none))?.activations;
        mem.activations = ((mem.activations as f64 * k as f64 + kept as f64 * (l - k) as f64) / l as f64) as u64;
    }
    // DualPipe-V keeps 2 pp + 1 half-device chunks in flight (`layouts::activation_factor`).
    mem.activations = (mem.activations as f64 * super::layouts::activation_factor(p)) as u64;
    // The caching allocator: freed blocks stay reserved and activations/gradients fragment.
    let churn = mem.activations.saturating_add(mem.gradients) as f64;
    mem.fragmentation = (churn * k.allocator_fragmentation.value) as u64 + k.allocator_reserve_bytes.value as u64;
    let mem = mem.summed();
    let mem_gib = mem.total as f64 / GIB;
    let cap_gib = device.memory_bytes as f64 / GIB;
    if mem_gib > cap_gib {
        return Err(format!(
            "out of memory: {mem_gib:.1} GiB per chip (weights {:.1}, gradients {:.1}, optimizer {:.1}, activations {:.1}, allocator {:.1}) > {cap_gib:.0} GiB",
            mem.weights as f64 / GIB, mem.gradients as f64 / GIB, mem.optimizer as f64 / GIB, mem.activations as f64 / GIB, mem.fragmentation as f64 / GIB
        ));
    }
    Ok(mem_gib)
}

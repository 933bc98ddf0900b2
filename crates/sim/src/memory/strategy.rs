//! Three memory-allocation strategies, each with its overhead model, and the largest batch each
//! fits before out-of-memory.
//!
//! - Static pre-allocation (graph-mode static memory plans): buffers are sized once for the
//!   longest sequence the service accepts, and every operator output gets its own buffer (no
//!   lifetime analysis); the KV cache is reserved for the maximum sequence per slot.
//! - Dynamic pool with defragmentation (a caching allocator such as PyTorch's / torch_npu's, with
//!   a paged KV cache as in vLLM): tensors are freed and reused at run time, but every block is
//!   rounded up to the allocator's granule (512 B, or 2 MiB above 1 MiB) and KV pages are 128
//!   tokens (vLLM-Ascend's default block size); freed blocks strand an external fragmentation we
//!   take as 1/8 of the activation pool (GMLake, Guo et al. ASPLOS 2024, measure up to ~30% in
//!   training; inference is calmer), which a periodic defragmentation reclaims by copying that
//!   many bytes (`Footprint::defrag_bytes`; the caller costs the pause at HBM bandwidth).
//! - Predictive allocation from the execution order (static memory planning as in TVM's or
//!   MindSpore's SOMAS planner): tensor lifetimes are known ahead, buffers whose lifetimes do not
//!   overlap share memory, no rounding, and the KV cache holds exactly the tokens generated.
//!
//! By construction static >= dynamic >= predictive bytes at any batch, so the largest batch
//! orders the other way.

use super::{kv_cache_bytes, kv_tokens, memory_per_chip, transient_profile, MemoryBreakdown};
use crate::model::ModelDesc;
use crate::workload::{GraphOptions, ParallelPlan, TrainOptions, Workload, MAX_BATCH};
use serde::{Deserialize, Serialize};

/// An allocation strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryStrategy {
    Static,
    DynamicPool,
    Predictive,
}

impl MemoryStrategy {
    /// All three, simplest first.
    pub const ALL: [MemoryStrategy; 3] = [MemoryStrategy::Static, MemoryStrategy::DynamicPool, MemoryStrategy::Predictive];

    /// Human-readable name.
    pub fn label(self) -> &'static str {
        match self {
            MemoryStrategy::Static => "static pre-allocation",
            MemoryStrategy::DynamicPool => "dynamic pool with defragmentation",
            MemoryStrategy::Predictive => "predictive allocation",
        }
    }
}

/// Memory under one strategy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Footprint {
    /// Breakdown with the strategy's KV/activation sizes and fragmentation; `total` is the need.
    pub memory: MemoryBreakdown,
    /// Bytes a defragmentation pass copies (dynamic pool only).
    pub defrag_bytes: u64,
}

/// KV page size in tokens of the dynamic pool.
pub const KV_BLOCK_TOKENS: u64 = 128;

/// Bytes per chip under `strategy` (see the module notes for each overhead model).
pub fn footprint(
    model: &ModelDesc,
    w: &Workload,
    plan: &ParallelPlan,
    opts: &GraphOptions,
    train: Option<&TrainOptions>,
    strategy: MemoryStrategy,
) -> Result<Footprint, String> {
    let exact = memory_per_chip(model, w, plan, opts, train)?;
    if strategy == MemoryStrategy::Predictive {
        return Ok(Footprint { memory: exact, defrag_bytes: 0 });
    }
    let profile = transient_profile(model, w, plan, opts)?;
    // Saved (training) activations are persistent; only the transient part is reallocated.
    let saved = exact.activations.saturating_sub(profile.peak);
    let tokens = kv_tokens(model, w);
    let paged = tokens.div_ceil(KV_BLOCK_TOKENS).saturating_mul(KV_BLOCK_TOKENS);
    let dyn_kv = kv_cache_bytes(model, plan, opts, w.batch(), paged);
    let dyn_act = saved.saturating_add(profile.peak_rounded);
    let dyn_frag = dyn_act / 8;
    let rounding = dyn_kv.saturating_sub(exact.kv_cache).saturating_add(profile.peak_rounded - profile.peak.min(profile.peak_rounded));
    if strategy == MemoryStrategy::DynamicPool {
        let memory = MemoryBreakdown {
            kv_cache: exact.kv_cache,
            activations: exact.activations,
            fragmentation: rounding.saturating_add(dyn_frag),
            ..exact
        }
        .summed();
        return Ok(Footprint { memory, defrag_bytes: dyn_frag });
    }
    // Static: sized for the longest accepted sequence, no reuse between operator outputs.
    let max_seq = opts
        .max_seq_len
        .or_else(|| model.llm.as_ref().map(|t| t.max_position))
        .unwrap_or(0);
    let static_tokens = max_seq.max(paged);
    let static_kv = kv_cache_bytes(model, plan, opts, w.batch(), static_tokens);
    let image = model.media_tokens();
    let widest = match *w {
        Workload::Prefill { batch, input_len } => {
            Workload::Prefill { batch, input_len: input_len.max(max_seq.saturating_sub(image)) }
        }
        other => other,
    };
    let static_profile = transient_profile(model, &widest, plan, opts)?;
    let static_act = saved
        .saturating_add(static_profile.sum_outputs)
        .max(dyn_act.saturating_add(dyn_frag));
    let memory = MemoryBreakdown {
        kv_cache: exact.kv_cache,
        activations: exact.activations,
        fragmentation: static_kv
            .saturating_sub(exact.kv_cache)
            .saturating_add(static_act.saturating_sub(exact.activations)),
        ..exact
    }
    .summed();
    Ok(Footprint { memory, defrag_bytes: 0 })
}

/// The pause a defragmentation pass costs: each stranded byte is read and written once at
/// `hbm_bytes_per_s` (the device profile's HBM bandwidth).
pub fn defrag_pause_s(defrag_bytes: u64, hbm_bytes_per_s: f64) -> f64 {
    if hbm_bytes_per_s > 0.0 {
        2.0 * defrag_bytes as f64 / hbm_bytes_per_s
    } else {
        0.0
    }
}

fn gib(b: u64) -> f64 {
    b as f64 / (1u64 << 30) as f64
}

/// The largest batch (micro-batch for training) that fits in `device_memory_bytes`, or an error
/// that says the model cannot fit even at batch 1 and by how much.
pub fn max_batch_or_reason(
    model: &ModelDesc,
    template: &Workload,
    plan: &ParallelPlan,
    opts: &GraphOptions,
    strategy: MemoryStrategy,
    device_memory_bytes: u64,
) -> Result<u64, String> {
    let need = |b: u64| -> Result<MemoryBreakdown, String> {
        Ok(footprint(model, &template.with_batch(b), plan, opts, None, strategy)?.memory)
    };
    let one = need(1)?;
    if one.total > device_memory_bytes {
        return Err(format!(
            "'{}' cannot fit with {} on {:.1} GiB per chip: batch 1 needs {:.2} GiB (weights \
             {:.2}, KV cache {:.2}, activations {:.2}, gradients {:.2}, optimizer {:.2}, workspace \
             {:.2}, allocator overhead {:.2}); short by {:.2} GiB",
            model.name,
            strategy.label(),
            gib(device_memory_bytes),
            gib(one.total),
            gib(one.weights),
            gib(one.kv_cache),
            gib(one.activations),
            gib(one.gradients),
            gib(one.optimizer),
            gib(one.workspace),
            gib(one.fragmentation),
            gib(one.total - device_memory_bytes)
        ));
    }
    let fits = |b: u64| need(b).map(|m| m.total <= device_memory_bytes).unwrap_or(false);
    // Memory grows with batch, so double to bracket the limit, then bisect.
    let mut lo = 1u64;
    let mut hi = 2u64;
    while hi <= MAX_BATCH && fits(hi) {
        lo = hi;
        hi = hi.saturating_mul(2);
    }
    if hi > MAX_BATCH {
        return Ok(lo);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// The largest batch that fits, 0 if none (`max_batch_or_reason` says by how much).
pub fn max_batch(
    model: &ModelDesc,
    template: &Workload,
    plan: &ParallelPlan,
    opts: &GraphOptions,
    strategy: MemoryStrategy,
    device_memory_bytes: u64,
) -> u64 {
    max_batch_or_reason(model, template, plan, opts, strategy, device_memory_bytes).unwrap_or(0)
}

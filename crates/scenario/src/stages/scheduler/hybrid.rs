//! Host cost of a hybrid (linear-attention) model's token mixer under an engine that runs it as
//! Triton kernels (vLLM-Ascend: `vllm_ascend/ops/triton/fla`, `ops/triton/mamba`).
//!
//! Why its own term: a Triton kernel is launched from Python through Triton's launcher (argument
//! binding, grid and constexpr specialisation lookup), which costs far more host time than an
//! aclnn call through torch_npu: vLLM-Ascend's own GDN code measures "~220 us of host Python
//! whatever the row count" per l2norm_fwd launch (`vllm_ascend/ops/gdn.py`, `_l2norm_qk`), and
//! prefill steps run eagerly, so those launches set how long the device idles. The engine's
//! `triton_launch_host_us` (assets/constants/serving-host.json) prices one launch; the launch
//! counts per linear layer come from the structure of that code
//! (`tunelab_sim::workload::linear_attention::TRITON_LAUNCHES_*`). The mixer operators those
//! kernels implement then pay no aclnn dispatch of their own (`runs_as_triton`).
//!
//! When: a step with prompt tokens always launches them (prefill steps are never captured); a
//! decode-only step launches them eagerly, or only the attention custom op's share between the
//! pieces of a piecewise-captured step, or none inside a fully captured graph. The chunked
//! delta rule's wrapper copies sequence boundaries to the host once per layer, which waits for
//! the device: the launches after that sync add to the step's time instead of hiding under the
//! device's (`serial`); the others are part of the step's eager dispatch, which races the
//! device and is floored by the engine's per-layer Python path (`price`, `overlapped`).

use super::price::{HostCosts, StepShape};
use tunelab_sim::workload::linear_attention as la;

/// Host time of one step's Triton launches, us: (overlapped with the device, serial with it).
pub fn triton_host_us(h: &HostCosts, linear_layers: u64, s: &StepShape, graph: bool, piecewise: bool) -> (f64, f64) {
    if (h.triton_launch_host_us <= 0.0 && h.linear_prefill_python_us <= 0.0) || linear_layers == 0 || s.prefill_tokens + s.decode_seqs == 0 {
        return (0.0, 0.0);
    }
    let per = h.triton_launch_host_us * linear_layers as f64;
    if s.prefill_tokens > 0 {
        let mixed = if s.decode_seqs > 0 { la::TRITON_LAUNCHES_MIXED_DECODE } else { 0 };
        let serial = la::TRITON_LAUNCHES_PREFILL_AFTER_SYNC;
        let before = la::TRITON_LAUNCHES_PREFILL - serial + mixed;
        // The layer's Python around those launches also waits behind the sync.
        let python = h.linear_prefill_python_us * linear_layers as f64;
        return (per * before as f64, per * serial as f64 + python);
    }
    let n = match (graph, piecewise) {
        (true, false) => 0,
        (true, true) => la::TRITON_LAUNCHES_DECODE_CORE,
        (false, _) => la::TRITON_LAUNCHES_DECODE,
    };
    (per * n as f64, 0.0)
}

/// Host time of one step's Mamba-2 mixers (Nemotron-H) under an engine that runs them as Triton
/// kernels, us: (racing the device, serial with it). The launch counts and the host syncs come
/// from vLLM-Ascend's code (`tunelab_sim::workload::ssm::mamba2_host_us`); a Triton launch
/// costs the engine's `triton_launch_host_us`, a framework launch the chip's
/// `eager_host_us_per_launch`.
pub fn mamba2_host_us(h: &HostCosts, model: &tunelab_sim::model::ModelDesc, aclnn_us: f64, s: &StepShape, graph: bool, piecewise: bool) -> (f64, f64) {
    let layers = model.llm.as_ref().filter(|t| t.mamba.is_some()).map_or(0, |t| t.count_mixers(|m| matches!(m, tunelab_sim::model::Mixer::Mamba2)));
    tunelab_sim::workload::ssm::mamba2_host_us(h.triton_launch_host_us, aclnn_us, layers, s.prefill_seqs, s.decode_seqs, graph, piecewise)
}

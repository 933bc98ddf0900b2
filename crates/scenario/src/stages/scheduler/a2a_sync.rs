//! vLLM-Ascend's all-to-all MoE dispatcher syncs the host inside every MoE layer.
//!
//! On A3 with expert parallelism a step of more tokens than the MC2 capacity runs the
//! all-to-all(v) dispatcher (vllm-ascend v0.20.2rc1 `ascend_forward_context.py`
//! `select_moe_comm_method`: `MoECommType.ALLTOALL` above `mc2_tokens_capacity`), whose
//! `TokenDispatcherWithAll2AllV._preprocess` (`ops/fused_moe/token_dispatcher.py`) reads the
//! split sizes on the host: `input_splits` is `histc(...).to("cpu", non_blocking=True).numpy()`,
//! then the counts are all-gathered over the EP group and `output_splits` read back the same
//! way, and `torch.repeat_interleave` over the device counts sizes its output from them. Each
//! read waits until the device has drained its queue; the device then idles until the host has
//! launched its next work, which is an eager collective (the counts' all-gather after the first
//! read, the dispatch all-to-all after the second) behind an aclnn launch. So each of the
//! engine's `alltoall_dispatch_host_syncs` per MoE layer leaves the device waiting one eager
//! collective's host work (`eager_host_us_per_collective`, P1) plus one launch
//! (`eager_host_us_per_launch`, the chip profile): no new constant, the sync count is read from
//! the code. MC2 (decode steps within the capacity) and A2's all-gather path read nothing back.

use super::price::{StepPricer, StepShape};
use tunelab_sim::op::MoeCommForm;

/// The all-to-all dispatcher's host syncs in one step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct A2aSync {
    /// MoE layers that run the all-to-all dispatcher this step.
    pub moe_layers: u64,
    /// Host syncs per MoE layer (the engine's `alltoall_dispatch_host_syncs`).
    pub syncs_per_layer: f64,
    /// Device idle time per sync (us): one eager collective's host work plus one launch.
    pub per_sync_us: f64,
}

impl A2aSync {
    /// Device idle time (us) the syncs add to the step's device timeline.
    pub fn us(&self) -> f64 {
        self.moe_layers as f64 * self.syncs_per_layer * self.per_sync_us
    }
}

impl StepPricer {
    /// The all-to-all dispatcher's host syncs in a step of shape `s` with `verify` positions per
    /// decoding sequence: none unless the engine syncs there and the step's exchange (the same
    /// `serving_moe_form` the MoE graph takes, on the data-parallel rank's tokens) is the
    /// all-to-all.
    pub fn a2a_sync(&self, s: &StepShape, verify: u64) -> A2aSync {
        let h = &self.host;
        let (Some(policy), Some(t)) = (self.opts.moe_comm.as_ref(), self.model.llm.as_ref()) else { return A2aSync::default() };
        let Some(m) = t.moe.as_ref() else { return A2aSync::default() };
        if h.alltoall_dispatch_host_syncs <= 0.0 || self.plan.ep <= 1 {
            return A2aSync::default();
        }
        let tokens = s.prefill_tokens + s.decode_seqs * verify.max(1);
        if tokens == 0 || tunelab_sim::workload::serving_moe_form(policy, tokens, self.plan.ep, m.experts) != Some(MoeCommForm::AllToAll) {
            return A2aSync::default();
        }
        A2aSync {
            moe_layers: t.moe_and_dense_layers().0,
            syncs_per_layer: h.alltoall_dispatch_host_syncs,
            per_sync_us: h.eager_host_us_per_collective + self.device.eager_host_us_per_launch,
        }
    }
}

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

//!
//! Eager steps with an expert-parallel exchange (`ep_serial`): the measured eager steps whose
//! MoE layers exchange tokens by MC2 or all-to-all (Kimi-K2-Thinking on one A3 node, TP16 +
//! EP16, v0.20.2rc1: decode batches of 9-12 sequences above the captured sizes take 200-230 ms
//! where the host's eager dispatch is 121 ms and the device 103 ms; its 1024-token prefill)
//! take about the host's and the device's time added, not the longer of the two. For prefill
//! the all-to-all's host syncs above are the code's reason; in the MC2 decode path of
//! v0.20.2rc1 (`TokenDispatcherWithMC2`, `MC2CommImpl`, `PrepareAndFinalizeWithMC2`,
//! `AscendFusedMoE.forward_impl`, the W4A16 `apply`, `AscendMLAImpl._forward_decode`) no host
//! read-back was found, so how much of the shorter side runs in series is the engine's
//! `eager_ep_serial_share`, a fit (serving-host.json) in [0, 1], refitted in every leave-out.

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

    /// The share of the shorter of host and device work that runs in series in a step of shape
    /// `s` launched eagerly: the engine's `eager_ep_serial_share` when the step's MoE exchange
    /// (the form the MoE graph takes for the data-parallel rank's tokens) is MC2 or
    /// all-to-all across more than one expert-parallel rank; 0 otherwise (graph steps, no
    /// expert parallelism, the all-gather path, DeepEP).
    pub fn ep_serial_share(&self, s: &StepShape, verify: u64, graph: bool) -> f64 {
        let share = self.host.eager_ep_serial_share;
        if graph || share <= 0.0 || self.plan.ep <= 1 {
            return 0.0;
        }
        let (Some(policy), Some(t)) = (self.opts.moe_comm.as_ref(), self.model.llm.as_ref()) else { return 0.0 };
        let Some(m) = t.moe.as_ref() else { return 0.0 };
        let tokens = s.prefill_tokens + s.decode_seqs * verify.max(1);
        match tunelab_sim::workload::serving_moe_form(policy, tokens, self.plan.ep, m.experts) {
            Some(MoeCommForm::Mc2 | MoeCommForm::AllToAll) if tokens > 0 => share,
            _ => 0.0,
        }
    }
}

/// How the step breakdown names the in-series term (`StepPricer::load_lines`); the diagnosis
/// finds the line by it.
pub const EP_SERIAL_WORDS: &str = "host and device in series, eager step with an expert-parallel exchange";

/// The diagnosis's sentence when the in-series term of an eager step with an expert-parallel
/// exchange is at least a fifth of the step (`wall_ms`): read from the breakdown's `label`,
/// whose line carries the added ms.
pub fn ep_serial_sentence(label: &str, wall_ms: f64, phase: &str) -> Option<String> {
    let at = label.find(EP_SERIAL_WORDS)?;
    let line = label[at..].split(';').next()?;
    let added: f64 = line.rsplit(" = ").next()?.trim_end_matches(" ms added to the race").trim().parse().ok()?;
    (wall_ms > 0.0 && added >= 0.2 * wall_ms).then(|| {
        format!(
            "the {phase} step runs eagerly with an expert-parallel MoE exchange (MC2 or all-to-all), and its host and device work do not overlap: {added:.1} ms of the {wall_ms:.1} ms step is the shorter side added in series (vllm-ascend eager_ep_serial_share, a fit); a captured graph of this batch (a larger max-num-seqs, so the capture list reaches it) would remove the host side"
        )
    })
}


//! Pipeline parallelism for co-located serving (issue 42, item 1): an engine rank of tp x pp
//! chips (vLLM `--pipeline-parallel-size`), its layers in pp stages of consecutive layers,
//! usually one stage per node. vLLM's V1 engine keeps pp batches in flight (its batch queue):
//! the scheduled sequences run as micro-batches, one per stage at a time, each passing its
//! activations to the next stage.
//!
//! A step of the scheduler (every running sequence advances one token, or a prompt chunk) is
//! priced as its m = min(pp, sequences) micro-batches, each of 1 / m of the step's sequences and
//! tokens, through symmetric stages: each micro-batch takes s (one stage's layers, priced by the
//! step pricer whose plan holds one stage, the activation transfer included) on every stage.
//! In a steady token loop each stage serves every micro-batch once per token, so the step takes
//! max(m, pp) x s: with m >= pp micro-batches every stage is busy (throughput pp times one
//! stage's), with m < pp a stage idles (pp - m) of every pp slots: the bubble, which a single
//! sequence (m = 1) pays in full, taking as long as the unsplit model plus the transfers.
//! Each chip's own work (device time, energy, FLOPs) is its stage's m micro-batches.

use crate::scheduler::price::{StepCost, StepPricer, StepShape};

/// One of m micro-batches of the step `s` (sequences and tokens split evenly, rounded up;
/// context lengths unchanged).
pub fn micro_batch(s: &StepShape, m: u64) -> StepShape {
    let m = m.max(1);
    let d = |x: u64| x.div_ceil(m);
    StepShape { prefill_seqs: d(s.prefill_seqs), prefill_tokens: d(s.prefill_tokens), new_requests: d(s.new_requests), decode_seqs: d(s.decode_seqs), emitting: d(s.emitting), ..*s }
}

/// Micro-batches a step of `seqs` sequences runs as on `pp` stages.
pub fn micro_batches(seqs: u64, pp: u64) -> u64 {
    seqs.clamp(1, pp.max(1))
}

/// The share of a pipelined step its stages idle: 1 - m / max(m, pp).
pub fn bubble(seqs: u64, pp: u64) -> f64 {
    let m = micro_batches(seqs, pp);
    1.0 - m as f64 / m.max(pp) as f64
}

/// Prices the step `s` on the pricer's `pipeline` stages (`StepPricer::step` hands it here when
/// `pipeline > 1`).
pub fn step(p: &mut StepPricer, s: &StepShape, graph: bool) -> Result<StepCost, String> {
    let pp = p.pipeline.max(1);
    p.pipeline = 1;
    let r = piped(p, s, graph, pp);
    p.pipeline = pp;
    r
}

fn piped(p: &mut StepPricer, s: &StepShape, graph: bool, pp: u64) -> Result<StepCost, String> {
    let m = micro_batches(s.prefill_seqs + s.decode_seqs, pp);
    let c = p.step(&micro_batch(s, m), graph)?;
    let (slots, mine) = (m.max(pp) as f64, m as f64);
    let time_us = c.time_us * slots;
    let device_us = c.device_us * mine;
    Ok(StepCost { time_us, device_us, host_us: (time_us - device_us).max(0.0), prefill_us: c.prefill_us * mine, energy_uj: c.energy_uj * mine, flops: c.flops * mine, rel_error: c.rel_error, graph: c.graph, mixer_kernels_host_us: c.mixer_kernels_host_us * mine, mixer_kernels_serial_us: c.mixer_kernels_serial_us * mine })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_splits_into_micro_batches_and_few_sequences_leave_a_bubble() {
        let s = StepShape { decode_seqs: 31, decode_ctx: 2048, emitting: 31, prefill_seqs: 1, prefill_tokens: 1000, prefill_kv: 4000, new_requests: 1 };
        let h = micro_batch(&s, 2);
        assert_eq!((h.decode_seqs, h.prefill_tokens, h.decode_ctx, h.prefill_kv), (16, 500, 2048, 4000));
        assert_eq!(micro_batches(1, 4), 1);
        assert_eq!(micro_batches(64, 4), 4);
        assert_eq!(bubble(1, 2), 0.5);
        assert_eq!(bubble(8, 2), 0.0);
        assert!((bubble(3, 4) - 0.25).abs() < 1e-12);
    }
}

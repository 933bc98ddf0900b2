//! Pipeline-parallel prefill of long prompts (issue 42, item 2): a prefill instance split into
//! `pp` stages of consecutive layers (vLLM `--pipeline-parallel-size`), each prompt cut into
//! chunks that flow through the stages one after another, so different chunks of one prompt
//! run on different stages at once.
//!
//! - Static chunks: every chunk is `max_num_batched_tokens` long (the last one the rest). A
//!   later chunk attends to every earlier token, so it takes longer, and the stages wait on the
//!   slowest chunk: the pipeline drains at the pace of the last.
//! - Dynamic chunks (vLLM-Ascend's dynamic chunked pipeline parallel, `--additional-config
//!   '{"profiling_chunk_config": {"enabled": true}}'`): the first chunk is
//!   `max_num_batched_tokens` long and each later one is sized so that its stage time matches
//!   the first's (the engine's profiled prediction, `smooth_factor` 1.0), never below
//!   `cpp_min_chunk` (assets/constants/scale-serving.json), so the stages stay evenly loaded.
//!
//! Every chunk is priced by the prefill instance's step pricer, whose plan holds one stage's
//! layers (and the activations it receives from the stage before); the stages are symmetric,
//! so chunk k takes s_k on each, and chunk k leaves stage j at
//! F(k, j) = max(F(k - 1, j), F(k, j - 1)) + s_k.

use crate::scheduler::price::{StepCost, StepPricer, StepShape};

/// The chunk sizes and the pipelined time of a set of prompts run back to back.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PipelinedPrefill {
    /// Arrival at stage 0 to the last chunk leaving the last stage, us.
    pub time_us: f64,
    /// Chunk lengths in order.
    pub chunks: Vec<u64>,
    /// Every chunk's cost on one stage (energy, FLOPs: times `pp` for the instance).
    pub stage_costs: Vec<StepCost>,
}

/// One chunk of `tokens` whose prompt already has `done` tokens in the cache.
/// On a prefill instance with `pcp` context-parallel ranks (1: none), its PCP group's step.
fn chunk_cost(pricer: &mut StepPricer, tokens: u64, done: u64, first: bool, last: bool, graph: bool, pcp: u64) -> Result<StepCost, String> {
    let shape = StepShape { prefill_seqs: 1, prefill_tokens: tokens, prefill_kv: done + tokens, new_requests: first as u64, emitting: last as u64, ..Default::default() };
    super::context::step(pricer, &shape, pcp, graph)
}

/// Prices `prompts` through a `pp`-stage pipeline in chunks of `chunk` tokens (dynamic: sized
/// to the first chunk's stage time, at least `min_chunk`); each stage a PCP group of `pcp`
/// ranks (`super::context`; 1: none).
#[allow(clippy::too_many_arguments)]
pub fn pipelined_prefill(pricer: &mut StepPricer, prompts: &[u64], pp: u64, chunk: u64, dynamic: bool, min_chunk: u64, graph: bool, pcp: u64) -> Result<PipelinedPrefill, String> {
    let chunk = chunk.max(1);
    let mut out = PipelinedPrefill::default();
    let mut times: Vec<f64> = Vec::new();
    for &len in prompts {
        let mut done = 0u64;
        let mut target: Option<f64> = None;
        while done < len {
            let left = len - done;
            let mut c = chunk.min(left);
            let first = done == 0;
            let mut cost = chunk_cost(pricer, c, done, first, c == left, graph, pcp)?;
            if dynamic {
                match target {
                    None => target = Some(cost.time_us),
                    Some(t) if cost.time_us > t => {
                        // The largest chunk (at least min_chunk) whose stage time fits the first's.
                        let (mut lo, mut hi) = (min_chunk.clamp(1, c), c);
                        if lo < hi {
                            while lo < hi {
                                let mid = lo + (hi - lo).div_ceil(2);
                                if chunk_cost(pricer, mid, done, first, mid == left, graph, pcp)?.time_us <= t {
                                    lo = mid;
                                } else {
                                    hi = mid - 1;
                                }
                            }
                            c = lo;
                            cost = chunk_cost(pricer, c, done, first, c == left, graph, pcp)?;
                        }
                    }
                    Some(_) => {}
                }
            }
            out.chunks.push(c);
            times.push(cost.time_us);
            out.stage_costs.push(cost);
            done += c;
        }
    }
    out.time_us = pipeline_time(&times, pp);
    Ok(out)
}

/// When the last of `stage_us` chunks leaves the last of `pp` symmetric stages.
pub fn pipeline_time(stage_us: &[f64], pp: u64) -> f64 {
    let mut f = vec![0.0f64; pp.max(1) as usize];
    for &s in stage_us {
        let mut prev = 0.0f64;
        for fj in f.iter_mut() {
            *fj = fj.max(prev) + s;
            prev = *fj;
        }
    }
    f.last().copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_chunks_fill_the_pipeline_once_and_a_slow_last_chunk_drains_it() {
        // n even chunks over pp stages: (n + pp - 1) chunk times.
        assert_eq!(pipeline_time(&[1.0; 4], 2), 5.0);
        assert_eq!(pipeline_time(&[1.0; 4], 1), 4.0);
        // Growing chunks: the sum plus (pp - 1) of the slowest, the last one.
        assert_eq!(pipeline_time(&[1.0, 2.0, 3.0, 4.0], 3), 10.0 + 2.0 * 4.0);
        assert_eq!(pipeline_time(&[], 4), 0.0);
    }
}

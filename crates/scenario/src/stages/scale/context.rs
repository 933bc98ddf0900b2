//! Prefill context parallel (PCP) of a prefill instance (issue 42, item 1), as vLLM and
//! vLLM-Ascend run it (`--prefill-context-parallel-size`; RFC vllm-project/vllm#25749, the
//! vLLM-Ascend context parallel guide and its long-sequence tutorials, which enable it on the
//! prefill node of a 1P1D layout to cut TTFT):
//!
//! - PCP adds ranks: an instance of `prefill_tp` chips per rank becomes `pcp` such groups, the
//!   PCP group's ranks `tp` apart (vLLM's rank order puts TP innermost).
//! - Every prompt of a step is cut into 2 x pcp pieces and rank r takes pieces r and
//!   2 pcp - 1 - r (the load-balanced head-and-tail split, DualChunkSwap), so each rank runs
//!   1 / pcp of the tokens through every layer and 1 / pcp of the causal attention pairs.
//! - Attention needs every key and value of the prompt: at each layer the group all-gathers the
//!   new keys and values (in the compute type, before the cache write) and each rank attends
//!   its queries over them with a custom mask. The gather is priced as the collective it is,
//!   on the link the group crosses, and added to the step (not overlapped: vLLM-Ascend's
//!   compute-communication overlap for PCP came later, for GQA chunked prefill only).
//!
//! The rank's step is priced by the prefill instance's own step pricer at the rank's share:
//! `tokens / pcp` rows, and attention over `kv` keys chosen so that the causal pairs the pricer
//! counts for `q = L / pcp` queries (q (kv - q / 2)) are the rank's L^2 / (2 pcp):
//! kv = done + L (pcp + 1) / (2 pcp). With pcp = 1 every function here is the pricer's own.

use crate::scheduler::price::{StepCost, StepPricer, StepShape};
use tunelab_sim::op::{CommAlgorithm, CommKind};
use tunelab_sim::Op;

/// The step one PCP rank runs of the prefill step `s` (unchanged for pcp <= 1).
pub fn rank_shape(s: &StepShape, pcp: u64) -> StepShape {
    if pcp <= 1 || s.prefill_tokens == 0 {
        return *s;
    }
    let seqs = s.prefill_seqs.max(1);
    let q = s.prefill_tokens.div_ceil(seqs);
    let done = s.prefill_kv.saturating_sub(q);
    let local = q.div_ceil(pcp);
    let kv = done + (q * (pcp + 1)).div_ceil(2 * pcp);
    StepShape { prefill_tokens: local * seqs, prefill_kv: kv.max(local), ..*s }
}

/// The per-layer all-gather of the new keys and values of a step's `tokens` prompt tokens over
/// `pcp` ranks: the collective, the layers that run it (its repeat) and its price (None for
/// pcp <= 1 or no tokens).
pub fn exchange(pricer: &StepPricer, tokens: u64, pcp: u64) -> Result<Option<(Op, u64, tunelab_sim::Estimate)>, String> {
    if pcp <= 1 || tokens == 0 {
        return Ok(None);
    }
    let t = pricer.model.llm.as_ref().ok_or("prefill context parallel needs a transformer model")?;
    let layers = pricer.plan.layers_here(t.layers).max(1);
    // The cache's bytes per token on one chip, in the compute type (gathered before the write).
    let cached = tunelab_sim::memory::kv_cache_bytes(&pricer.model, &pricer.plan, &pricer.opts, 1, 1) as f64;
    let per_token = cached * pricer.opts.vector_dtype().bytes() as f64 / pricer.opts.kv_dtype().bytes().max(1) as f64;
    let bytes = (tokens as f64 * per_token / layers as f64).ceil() as u64;
    let link = pricer.plan.placement.map_or(tunelab_sim::Link::Hccs, |p| p.group_link(pricer.plan.tp.max(1), pcp));
    let op = Op::Comm { kind: CommKind::AllGather, bytes, ranks: pcp, link, algorithm: CommAlgorithm::Ring };
    let e = tunelab_sim::cost::comm::estimate(&op, &tunelab_sim::Tiling::Default, &pricer.device).map_err(|e| format!("prefill_cp: the key/value all-gather over {pcp} ranks on {link:?}: {e}"))?;
    Ok(Some((op, layers, e)))
}

/// `exchange`'s time over all the layers, us.
pub fn exchange_us(pricer: &StepPricer, tokens: u64, pcp: u64) -> Result<f64, String> {
    Ok(exchange(pricer, tokens, pcp)?.map_or(0.0, |(_, layers, e)| e.time_us * layers as f64))
}

/// Prices the prefill step `s` on a PCP group of `pcp` ranks: one rank's share plus the
/// key/value exchange (the pricer's own step for pcp <= 1).
pub fn step(pricer: &mut StepPricer, s: &StepShape, pcp: u64, graph: bool) -> Result<StepCost, String> {
    if pcp <= 1 {
        return pricer.step(s, graph);
    }
    let mut c = pricer.step(&rank_shape(s, pcp), graph)?;
    let x = exchange_us(pricer, s.prefill_tokens, pcp)?;
    c.time_us += x;
    c.device_us += x;
    c.prefill_us += x;
    Ok(c)
}

/// Why a model cannot run prefill context parallel (None: it can).
pub fn unsupported(model: &tunelab_sim::model::ModelDesc) -> Option<String> {
    let t = model.llm.as_ref()?;
    if t.linear_attention.is_some() {
        return Some(format!("prefill_cp: '{}' has linear-attention layers, whose recurrence runs along the sequence; vLLM's prefill context parallel splits full-attention layers only (not modelled)", model.name));
    }
    if t.encoder {
        return Some(format!("prefill_cp: '{}' is an encoder; prefill context parallel is for decoder prompts", model.name));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rank_takes_its_share_of_tokens_and_of_the_causal_pairs() {
        let s = StepShape { prefill_seqs: 1, prefill_tokens: 131072, prefill_kv: 131072, new_requests: 1, emitting: 1, ..Default::default() };
        assert_eq!(rank_shape(&s, 1), s);
        let r = rank_shape(&s, 4);
        assert_eq!(r.prefill_tokens, 32768);
        // Causal pairs q (kv - q / 2): a quarter of the whole prompt's L^2 / 2.
        let pairs = |q: f64, kv: f64| q * (kv - q / 2.0);
        let (whole, mine) = (pairs(131072.0, 131072.0), pairs(r.prefill_tokens as f64, r.prefill_kv as f64));
        assert!((mine / whole - 0.25).abs() < 1e-3, "{mine} of {whole}");
        // A later chunk attends its whole prefix as well.
        let chunk = StepShape { prefill_kv: 65536 + 8192, prefill_tokens: 8192, ..s };
        assert_eq!(rank_shape(&chunk, 2).prefill_kv, 65536 + 6144);
    }
}

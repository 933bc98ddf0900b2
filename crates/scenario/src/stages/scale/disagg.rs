//! Prefill-decode disaggregation (xPyD) under the same request stream as colocated serving.
//!
//! x prefill instances and y decode instances, each with its own parallelism; every instance
//! runs `dp` engine ranks. A request
//! 1. waits for the first free prefill rank, which batches the prompts that have arrived up to
//!    `max_num_batched_tokens` (at least one) and runs them as one prefill step;
//! 2. has its KV cache pushed to a decode rank (the ranks are taken in turn), over the link
//!    between the two instances: setup + the cache bytes each decode chip receives over its own
//!    link (`kv_transfer_us`); its first token is out when the cache has landed;
//! 3. decodes on that rank in continuous batching (at most `max_num_seqs` sequences, and only
//!    while their caches fit the rank's KV memory), one token per step, each step priced by the
//!    decode instance's pricer at the running sequences' mean context.
//!
//! TTFT = arrival to the cache landing on the decode side; TPOT = the decode time over the
//! tokens after the first; the metrics are those of colocated serving (`ServingStats`), so the
//! two layouts compare one to one.

use crate::scheduler::price::StepPricer;
use crate::scheduler::{pcts, Histogram, Request, ServingStats, Slo};
use std::collections::VecDeque;

/// The settings of one disaggregated simulation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DisaggConfig {
    /// Prefill and decode engine ranks in all (instances x dp).
    pub prefill_ranks: u64,
    pub decode_ranks: u64,
    /// Per decode rank: the most sequences at once and the KV tokens its memory holds.
    pub max_num_seqs: u64,
    pub kv_tokens: u64,
    /// Prompt tokens a prefill step takes at most.
    pub max_num_batched_tokens: u64,
    pub graph_launch: bool,
    /// Chips per prefill and per decode rank (tp): `energy_j` counts every chip.
    pub prefill_chips: u64,
    pub decode_chips: u64,
}

/// Runs the simulation; `transfer_us(input)` prices one request's KV push.
pub fn simulate(
    reqs: &[Request],
    cfg: &DisaggConfig,
    slo: Slo,
    prefill: &mut StepPricer,
    decode: &mut StepPricer,
    transfer_us: &dyn Fn(u64) -> f64,
) -> Result<ServingStats, String> {
    let n = reqs.len();
    if n == 0 {
        return Err("the serving simulation needs at least one request".into());
    }
    if let Some(r) = reqs.iter().find(|r| r.input + r.output > cfg.kv_tokens) {
        return Err(format!("KV cache too small: a decode rank holds {} tokens, a request needs {}", cfg.kv_tokens, r.input + r.output));
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|a, b| reqs[*a].arrival_s.total_cmp(&reqs[*b].arrival_s).then(a.cmp(b)));
    let (mut energy_uj, mut flops, mut rel_error, mut busy_us, mut prefill_busy_us) = (0.0, 0.0, 0.0f64, 0.0, 0.0);
    let mut steps = 0u64;
    // 1. Prefill: the earliest free rank takes the waiting prompts (times in us).
    let mut free = vec![0.0f64; cfg.prefill_ranks.max(1) as usize];
    let mut start = vec![0.0f64; n];
    let mut ready = vec![0.0f64; n];
    let mut next = 0;
    while next < n {
        let (rank, at) = free.iter().copied().enumerate().min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0))).unwrap_or((0, 0.0));
        let t0 = at.max(reqs[order[next]].arrival_s * 1e6);
        let mut batch = vec![order[next]];
        let mut tokens = reqs[order[next]].input;
        next += 1;
        while next < n && reqs[order[next]].arrival_s * 1e6 <= t0 && tokens + reqs[order[next]].input <= cfg.max_num_batched_tokens {
            tokens += reqs[order[next]].input;
            batch.push(order[next]);
            next += 1;
        }
        let b = batch.len() as u64;
        let c = prefill.prefill(b, tokens.div_ceil(b), cfg.graph_launch)?;
        let end = t0 + c.time_us;
        (energy_uj, flops, rel_error, busy_us, prefill_busy_us) = (energy_uj + c.energy_uj * cfg.prefill_chips as f64, flops + c.flops * cfg.prefill_chips as f64, rel_error.max(c.rel_error), busy_us + c.device_us, prefill_busy_us + c.device_us);
        steps += 1;
        free[rank] = end;
        for &i in &batch {
            start[i] = t0;
            ready[i] = end + transfer_us(reqs[i].input);
        }
    }
    // 2. Decode: rank i % decode_ranks, continuous batching on each.
    let ranks = cfg.decode_ranks.max(1) as usize;
    let mut finish = vec![0.0f64; n];
    let mut itl = Histogram::default();
    let mut batch_sum = 0.0;
    let mut decode_steps = 0u64;
    // Each decode rank's output rate over its own run (first arrival to its last token), summed:
    // the colocated path's dp x one rank's rate, so a finite run's tail counts alike in both.
    let first = reqs.iter().map(|r| r.arrival_s).fold(f64::INFINITY, f64::min) * 1e6;
    let mut out_rate = 0.0;
    for r in 0..ranks {
        let mut rank_tokens = 0u64;
        let mut rank_last = first;
        let mut mine: Vec<usize> = order.iter().copied().enumerate().filter(|(k, _)| k % ranks == r).map(|(_, i)| i).collect();
        mine.sort_by(|a, b| ready[*a].total_cmp(&ready[*b]).then(a.cmp(b)));
        let mut waiting: VecDeque<usize> = mine.into();
        // (request, tokens generated so far, cache length)
        let mut running: Vec<(usize, u64, u64)> = Vec::new();
        let (mut t, mut kv_used) = (0.0f64, 0u64);
        while !waiting.is_empty() || !running.is_empty() {
            while let Some(&i) = waiting.front() {
                let need = reqs[i].input + reqs[i].output;
                if ready[i] > t || running.len() as u64 >= cfg.max_num_seqs || kv_used + need > cfg.kv_tokens {
                    break;
                }
                waiting.pop_front();
                if reqs[i].output <= 1 {
                    finish[i] = ready[i];
                    rank_tokens += reqs[i].output;
                    rank_last = rank_last.max(ready[i]);
                    continue;
                }
                kv_used += need;
                running.push((i, 1, reqs[i].input + 1));
            }
            if running.is_empty() {
                if let Some(&i) = waiting.front() {
                    t = t.max(ready[i]);
                }
                continue;
            }
            let b = running.len() as u64;
            let ctx = running.iter().map(|x| x.2).sum::<u64>().div_ceil(b);
            let c = decode.decode(b, ctx, cfg.graph_launch)?;
            t += c.time_us;
            (energy_uj, flops, rel_error, busy_us) = (energy_uj + c.energy_uj * cfg.decode_chips as f64, flops + c.flops * cfg.decode_chips as f64, rel_error.max(c.rel_error), busy_us + c.device_us);
            steps += 1;
            decode_steps += 1;
            batch_sum += b as f64;
            itl.add_n(c.time_us * 1e-3, b);
            running.retain_mut(|(i, g, ctx)| {
                *g += 1;
                *ctx += 1;
                if *g >= reqs[*i].output {
                    finish[*i] = t;
                    rank_tokens += reqs[*i].output;
                    rank_last = rank_last.max(t);
                    kv_used -= reqs[*i].input + reqs[*i].output;
                    false
                } else {
                    true
                }
            });
        }
        if rank_tokens > 0 {
            out_rate += rank_tokens as f64 / ((rank_last - first) * 1e-6).max(1e-9);
        }
    }
    let last = finish.iter().copied().fold(0.0, f64::max);
    let duration_s = ((last - first) * 1e-6).max(1e-9);
    let ttft: Vec<f64> = (0..n).map(|i| (ready[i] - reqs[i].arrival_s * 1e6) * 1e-3).collect();
    let queue: Vec<f64> = (0..n).map(|i| (start[i] - reqs[i].arrival_s * 1e6) * 1e-3).collect();
    let tpot: Vec<f64> = (0..n).filter(|&i| reqs[i].output > 1).map(|i| (finish[i] - ready[i]) * 1e-3 / (reqs[i].output - 1) as f64).collect();
    let within = (0..n)
        .filter(|&i| slo.ttft_ms.is_none_or(|l| ttft[i] <= l) && slo.tpot_ms.is_none_or(|l| reqs[i].output <= 1 || (finish[i] - ready[i]) * 1e-3 / (reqs[i].output - 1) as f64 <= l))
        .count();
    let out_tokens: u64 = reqs.iter().map(|r| r.output).sum();
    let in_tokens: u64 = reqs.iter().map(|r| r.input).sum();
    let engines = (cfg.prefill_ranks + cfg.decode_ranks).max(1) as f64;
    // Requests and prompt tokens at the pace the output comes out.
    let pace = out_rate / (out_tokens.max(1) as f64);
    Ok(ServingStats {
        requests: n,
        duration_s,
        output_tokens_per_s: out_rate,
        total_tokens_per_s: (out_tokens + in_tokens) as f64 * pace,
        requests_per_s: n as f64 * pace,
        ttft_compute_ms: pcts((0..n).map(|i| ttft[i] - queue[i]).collect()),
        ttft_ms: pcts(ttft),
        tpot_ms: pcts(tpot),
        itl_ms: itl.pcts(),
        queue_ms: pcts(queue),
        goodput_rps: within as f64 * pace,
        slo_attained: within as f64 / n as f64,
        steps,
        mean_batch: if decode_steps > 0 { batch_sum / decode_steps as f64 } else { 0.0 },
        // Busy share of every engine rank over the run.
        busy_fraction: (busy_us * 1e-6 / duration_s / engines).min(1.0),
        prefill_share: prefill_busy_us / busy_us.max(1e-9),
        // Every chip of every rank (the colocated path reports one chip's; the stage scales).
        energy_j: energy_uj * 1e-6,
        // Every chip's FLOPs (the stage divides by the chips).
        flops,
        rel_error,
        ..Default::default()
    })
}

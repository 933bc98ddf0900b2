//! Prefill-decode disaggregation (xPyD) under the same request stream as colocated serving.
//!
//! x prefill instances and y decode instances, each with its own parallelism; every instance
//! runs `dp` engine ranks. One event loop runs both sides together, so a cap on the requests in
//! flight couples them as it does a real deployment. A request
//! 0. is sent at its arrival, or, under a concurrency cap (a benchmark's `--max-concurrency`, a
//!    closed loop's clients), when one of the requests in flight finishes; TTFT and e2e count
//!    from the send, as `vllm bench serve` measures them (the colocated path does the same);
//! 1. waits for the first free prefill rank, which batches the prompts sent by then up to
//!    `max_num_batched_tokens` (at least one) and runs them as one prefill step;
//! 2. has its KV cache pushed to a decode rank (the ranks are taken in turn), over the link
//!    between the two instances: setup + the cache bytes each decode chip receives over its own
//!    link (`kv_transfer_us`);
//! 3. waits for a decode slot: the rank admits it at a step boundary while it runs fewer than
//!    `max_num_seqs` sequences and their caches fit its KV memory. Its first token reaches the
//!    client when it is admitted, so the wait for a slot is queueing (in TTFT, queue_ms and
//!    e2e), not time per output token;
//! 4. decodes on that rank in continuous batching, one token per step, each step priced by the
//!    decode instance's pricer at the running sequences' mean context.
//!
//! TPOT = the decode time from admission over the tokens after the first; the metrics are
//! those of colocated serving (`ServingStats`), so the two layouts compare one to one.

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
    /// Requests in flight at most over the whole deployment (None: uncapped).
    pub concurrency: Option<u64>,
    /// Pipeline stages of a prefill rank (1: none; `super::pipeline`), whether its chunks are
    /// sized dynamically, and the smallest dynamic chunk.
    pub prefill_pp: u64,
    pub dynamic_chunks: bool,
    pub min_chunk: u64,
    /// Prefill context-parallel ranks of a prefill rank (1: none; `super::context`).
    pub prefill_cp: u64,
}

/// One decode rank: its clock, the requests whose caches have landed (by landing time) and
/// the running sequences (request, tokens generated so far, cache length).
#[derive(Default)]
struct DecodeRank {
    t: f64,
    waiting: VecDeque<usize>,
    running: Vec<(usize, u64, u64)>,
    kv_used: u64,
    tokens: u64,
    last: f64,
}

/// What happens next in the event loop.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Event {
    Send,
    Prefill(usize),
    Decode(usize),
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
    let cap = cfg.concurrency.map(|c| c.max(1) as usize);
    let (mut energy_uj, mut flops, mut rel_error, mut busy_us, mut prefill_busy_us) = (0.0, 0.0, 0.0f64, 0.0, 0.0);
    let (mut steps, mut decode_steps, mut batch_sum) = (0u64, 0u64, 0.0);
    let nan = f64::NAN;
    // Times in us: sent, prefill start, cache landed, admitted to decode, last token.
    let (mut send, mut start, mut ready, mut admit, mut finish) = (vec![nan; n], vec![nan; n], vec![nan; n], vec![nan; n], vec![nan; n]);
    let mut next_send = 0usize;
    // Completion times not yet used to send a request (only a capped stream uses them).
    let mut releases: Vec<f64> = Vec::new();
    let mut queue: VecDeque<usize> = VecDeque::new();
    let mut free = vec![0.0f64; cfg.prefill_ranks.max(1) as usize];
    let mut ranks: Vec<DecodeRank> = (0..cfg.decode_ranks.max(1)).map(|_| DecodeRank::default()).collect();
    let mut pos = vec![0usize; n];
    for (k, &i) in order.iter().enumerate() {
        pos[i] = k;
    }
    let mut itl = Histogram::default();
    let mut done = 0usize;
    let step_limit = 4 * reqs.iter().map(|r| r.input + r.output).sum::<u64>() + 1000;
    while done < n {
        // The earliest event; on a tie sends first, then prefill, then decode ranks in order.
        let mut best: Option<(f64, Event)> = None;
        let mut consider = |t: f64, e: Event| {
            if best.is_none_or(|(b, _)| t < b) {
                best = Some((t, e));
            }
        };
        if next_send < n {
            let at = reqs[order[next_send]].arrival_s * 1e6;
            match cap {
                Some(c) if next_send >= c => {
                    // At the cap: the next send waits for a completion.
                    if let Some(r) = releases.iter().copied().min_by(|a, b| a.total_cmp(b)) {
                        consider(at.max(r), Event::Send);
                    }
                }
                _ => consider(at, Event::Send),
            }
        }
        if let Some(&i) = queue.front() {
            let (r, f) = free.iter().copied().enumerate().min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0))).unwrap_or((0, 0.0));
            consider(f.max(send[i]), Event::Prefill(r));
        }
        for (r, d) in ranks.iter().enumerate() {
            if !d.running.is_empty() {
                consider(d.t, Event::Decode(r));
            } else if let Some(&i) = d.waiting.front() {
                consider(d.t.max(ready[i]), Event::Decode(r));
            }
        }
        let Some((t, ev)) = best else {
            return Err("the disaggregated simulation stalled with requests outstanding (a scheduler bug)".into());
        };
        steps += matches!(ev, Event::Prefill(_) | Event::Decode(_)) as u64;
        if steps > step_limit {
            return Err(format!("the disaggregated simulation did not finish within {step_limit} steps"));
        }
        match ev {
            Event::Send => {
                if cap.is_some_and(|c| next_send >= c) {
                    let k = releases.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1).then(a.0.cmp(&b.0))).map_or(0, |x| x.0);
                    releases.swap_remove(k);
                }
                let i = order[next_send];
                send[i] = t;
                queue.push_back(i);
                next_send += 1;
            }
            Event::Prefill(r) => {
                let mut batch = vec![queue.pop_front().unwrap_or(0)];
                let mut tokens = reqs[batch[0]].input;
                while let Some(&i) = queue.front() {
                    if send[i] > t || tokens + reqs[i].input > cfg.max_num_batched_tokens {
                        break;
                    }
                    tokens += reqs[i].input;
                    batch.push(i);
                    queue.pop_front();
                }
                let b = batch.len() as u64;
                let end = if cfg.prefill_pp > 1 {
                    // Pipelined: the prompts' chunks flow through the stages; the rank takes the
                    // next batch once the last chunk has left the last stage. Each chunk runs on
                    // every stage (prefill_chips counts all of the rank's).
                    let prompts: Vec<u64> = batch.iter().map(|&i| reqs[i].input).collect();
                    let p = super::pipeline::pipelined_prefill(prefill, &prompts, cfg.prefill_pp, cfg.max_num_batched_tokens, cfg.dynamic_chunks, cfg.min_chunk, cfg.graph_launch, cfg.prefill_cp)?;
                    let per_stage = cfg.prefill_chips as f64 / cfg.prefill_pp as f64;
                    for c in &p.stage_costs {
                        let stages = cfg.prefill_pp as f64;
                        (energy_uj, flops, rel_error, busy_us, prefill_busy_us) = (energy_uj + c.energy_uj * per_stage * stages, flops + c.flops * per_stage * stages, rel_error.max(c.rel_error), busy_us + c.device_us, prefill_busy_us + c.device_us);
                    }
                    t + p.time_us
                } else {
                    let shape = prefill.prefill_shape(b, tokens.div_ceil(b));
                    let c = super::context::step(prefill, &shape, cfg.prefill_cp, cfg.graph_launch)?;
                    (energy_uj, flops, rel_error, busy_us, prefill_busy_us) = (energy_uj + c.energy_uj * cfg.prefill_chips as f64, flops + c.flops * cfg.prefill_chips as f64, rel_error.max(c.rel_error), busy_us + c.device_us, prefill_busy_us + c.device_us);
                    t + c.time_us
                };
                free[r] = end;
                for &i in &batch {
                    start[i] = t;
                    ready[i] = end + transfer_us(reqs[i].input);
                    let nr = ranks.len();
                    let d = &mut ranks[pos[i] % nr];
                    let at = d.waiting.iter().position(|&j| ready[j] > ready[i]).unwrap_or(d.waiting.len());
                    d.waiting.insert(at, i);
                }
            }
            Event::Decode(r) => {
                let d = &mut ranks[r];
                d.t = t;
                // Admission at the step boundary, in landing order.
                while let Some(&i) = d.waiting.front() {
                    let need = reqs[i].input + reqs[i].output;
                    if ready[i] > t || d.running.len() as u64 >= cfg.max_num_seqs.max(1) || d.kv_used + need > cfg.kv_tokens {
                        break;
                    }
                    d.waiting.pop_front();
                    admit[i] = t;
                    if reqs[i].output <= 1 {
                        finish[i] = t;
                        d.tokens += reqs[i].output;
                        d.last = d.last.max(t);
                        releases.push(t);
                        done += 1;
                        continue;
                    }
                    d.kv_used += need;
                    d.running.push((i, 1, reqs[i].input + 1));
                }
                if d.running.is_empty() {
                    continue;
                }
                let b = d.running.len() as u64;
                let ctx = d.running.iter().map(|x| x.2).sum::<u64>().div_ceil(b);
                let c = decode.decode(b, ctx, cfg.graph_launch)?;
                d.t += c.time_us;
                (energy_uj, flops, rel_error, busy_us) = (energy_uj + c.energy_uj * cfg.decode_chips as f64, flops + c.flops * cfg.decode_chips as f64, rel_error.max(c.rel_error), busy_us + c.device_us);
                decode_steps += 1;
                batch_sum += b as f64;
                itl.add_n(c.time_us * 1e-3, b);
                let now = d.t;
                let (mut tokens, mut last, mut kv_used) = (d.tokens, d.last, d.kv_used);
                d.running.retain_mut(|(i, g, ctx)| {
                    *g += 1;
                    *ctx += 1;
                    if *g >= reqs[*i].output {
                        finish[*i] = now;
                        tokens += reqs[*i].output;
                        last = last.max(now);
                        kv_used -= reqs[*i].input + reqs[*i].output;
                        releases.push(now);
                        done += 1;
                        false
                    } else {
                        true
                    }
                });
                (d.tokens, d.last, d.kv_used) = (tokens, last, kv_used);
            }
        }
        if cap.is_none() {
            releases.clear();
        }
    }
    let first = reqs.iter().map(|r| r.arrival_s).fold(f64::INFINITY, f64::min) * 1e6;
    // Each decode rank's output rate over its own run (first arrival to its last token), summed:
    // the colocated path's dp x one rank's rate, so a finite run's tail counts alike in both.
    let out_rate: f64 = ranks.iter().filter(|d| d.tokens > 0).map(|d| d.tokens as f64 / ((d.last - first) * 1e-6).max(1e-9)).sum();
    let last = finish.iter().copied().fold(0.0, f64::max);
    let duration_s = ((last - first) * 1e-6).max(1e-9);
    let ms = |a: &[f64], b: &[f64], i: usize| (a[i] - b[i]) * 1e-3;
    let ttft: Vec<f64> = (0..n).map(|i| ms(&admit, &send, i)).collect();
    // Waiting for a prefill rank and waiting for a decode slot.
    let queue_ms: Vec<f64> = (0..n).map(|i| ms(&start, &send, i) + ms(&admit, &ready, i)).collect();
    let tpot_of = |i: usize| ms(&finish, &admit, i) / (reqs[i].output - 1) as f64;
    let tpot: Vec<f64> = (0..n).filter(|&i| reqs[i].output > 1).map(tpot_of).collect();
    let within = (0..n).filter(|&i| slo.ttft_ms.is_none_or(|l| ttft[i] <= l) && slo.tpot_ms.is_none_or(|l| reqs[i].output <= 1 || tpot_of(i) <= l)).count();
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
        ttft_compute_ms: pcts((0..n).map(|i| ttft[i] - queue_ms[i]).collect()),
        ttft_ms: pcts(ttft),
        tpot_ms: pcts(tpot),
        itl_ms: itl.pcts(),
        e2e_ms: pcts((0..n).map(|i| ms(&finish, &send, i)).collect()),
        queue_ms: pcts(queue_ms),
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

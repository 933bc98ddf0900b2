//! The continuous-batching simulation itself: admission, chunked prefill, paged KV blocks and
//! preemption, step by step (see the module notes of `scheduler`).

use super::frontend::FrontEnd;
use super::price::{StepPricer, StepShape};
use super::{pcts, Histogram, Request, ServingStats};
use std::collections::VecDeque;

/// The engine's settings for one simulation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EngineConfig {
    pub max_num_seqs: u64,
    pub max_num_batched_tokens: u64,
    pub chunked_prefill: bool,
    pub block_size: u64,
    /// KV blocks available.
    pub kv_blocks: u64,
    /// How sequences hold KV blocks.
    pub kv_policy: KvPolicy,
    pub graph_launch: bool,
    /// Share of each prompt found in the prefix cache: those tokens are not recomputed (their
    /// KV is already there), the rest of the prompt attends to them.
    pub prefix_cache_hit_rate: f64,
}

/// How a sequence holds KV blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KvPolicy {
    /// Blocks paged in as the sequence grows; preemption when none is free.
    Paged,
    /// The request's own prompt plus output reserved at admission.
    Reserve,
    /// This many tokens reserved at admission for every sequence.
    ReserveFixed(u64),
}

#[derive(Clone, Debug)]
struct Seq {
    req: usize,
    /// Prompt tokens to (re)compute before decoding and how many are done.
    target: u64,
    done: u64,
    generated: u64,
    /// KV blocks held and tokens in the cache.
    blocks: u64,
    ctx: u64,
}

/// Latency limits the goodput counts against (ms; None: no limit).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Slo {
    pub ttft_ms: Option<f64>,
    pub tpot_ms: Option<f64>,
}

/// Runs the simulation. Errors name the setting that makes it impossible (a request that can
/// never fit in the KV cache, a prompt over the token budget without chunked prefill).
pub fn simulate(reqs: &[Request], cfg: &EngineConfig, concurrency: Option<u64>, slo: Slo, pricer: &mut StepPricer) -> Result<ServingStats, String> {
    let n = reqs.len();
    if n == 0 {
        return Err("the serving simulation needs at least one request".into());
    }
    pricer.engine_limits(cfg.max_num_seqs, cfg.max_num_batched_tokens);
    let bs = cfg.block_size.max(1);
    // bs is a power of two in practice (128): a shift instead of a division, the same number.
    let shift = bs.is_power_of_two().then(|| bs.trailing_zeros());
    let blocks_for = move |tokens: u64| match shift {
        Some(s) => (tokens >> s) + (tokens & (bs - 1) != 0) as u64,
        None => tokens.div_ceil(bs),
    };
    let longest = reqs.iter().map(|r| r.input + r.output).max().unwrap_or(1);
    let need_one = match cfg.kv_policy {
        KvPolicy::ReserveFixed(t) => blocks_for(t.max(longest)),
        _ => blocks_for(longest),
    };
    if need_one > cfg.kv_blocks {
        return Err(format!(
            "KV cache too small: {} blocks of {bs} tokens ({} tokens) cannot hold one request of {} tokens{}",
            cfg.kv_blocks,
            cfg.kv_blocks * bs,
            longest,
            if let KvPolicy::ReserveFixed(t) = cfg.kv_policy { format!(" (the static allocator reserves {t} per sequence)") } else { String::new() }
        ));
    }
    let longest_prompt = reqs.iter().map(|r| r.input).max().unwrap_or(1);
    if !cfg.chunked_prefill && longest_prompt > cfg.max_num_batched_tokens {
        return Err(format!(
            "max_num_batched_tokens {} is below the longest prompt ({longest_prompt} tokens); without chunked prefill a prompt must fit in one step",
            cfg.max_num_batched_tokens
        ));
    }
    let max_seqs = cfg.max_num_seqs.max(1) as usize;
    // Closed loop: the first `clients` requests arrive at 0, each later one when one finishes.
    let clients = concurrency.map(|c| c.max(1) as usize);
    let mut arrival: Vec<f64> = reqs.iter().map(|r| r.arrival_s).collect();
    let mut next_arrival = 0usize; // next request not yet in `waiting`
    let mut released = clients.map_or(n, |c| c.min(n)); // closed loop: requests released so far
    // The API-server front end (`frontend`): `ready` is when request i reaches the scheduler.
    // TTFT still counts from the client's send (`arrival`), as `vllm bench serve` measures it.
    let mut ready = arrival.clone();
    let mut front = FrontEnd::new(pricer.host.frontend_us_per_request * 1e-6);
    let mut admit_frontend = |i: usize, arrival: &[f64], ready: &mut [f64]| front.admit(i, arrival[i], ready);
    for i in 0..released {
        admit_frontend(i, &arrival, &mut ready);
    }
    let mut waiting: VecDeque<Seq> = VecDeque::new();
    let mut running: Vec<Seq> = Vec::new();
    let mut free = cfg.kv_blocks;
    let mut now = 0.0f64; // seconds
    let (mut scheduled, mut first_tok, mut finish) = (vec![f64::NAN; n], vec![f64::NAN; n], vec![f64::NAN; n]);
    let mut itl = Histogram::default();
    let mut last_emit = vec![0.0f64; n];
    let mut st = ServingStats { requests: n, kv_blocks: cfg.kv_blocks, ..Default::default() };
    let (mut busy_us, mut prefill_us, mut host_us, mut batch_sum, mut peak_used) = (0.0, 0.0, 0.0, 0u64, 0u64);
    let (mut done_count, mut out_tokens, mut in_tokens) = (0usize, 0u64, 0u64);
    // The engine's host time the device waited for, summed over the run's steps so far (s): a
    // request's share of TTFT spent on host work is its difference between being scheduled and
    // its first token (`ttft`).
    let mut host_clock = 0.0f64;
    let (mut host_at_sched, mut host_in_prefill) = (vec![0.0f64; n], vec![0.0f64; n]);
    let step_limit = 4 * reqs.iter().map(|r| r.input + r.output).sum::<u64>() + 1000;
    // Finished sequences leave and free their blocks; a closed loop sends the next request.
    macro_rules! retire {
        () => {
            let mut k = 0;
            while k < running.len() {
                let s = &running[k];
                if s.done >= s.target && s.generated >= reqs[s.req].output {
                    finish[s.req] = now;
                    free += s.blocks;
                    running.remove(k);
                    done_count += 1;
                    if clients.is_some() && released < n {
                        // A slot frees: the next request is sent now, or at its own arrival
                        // time if that is later (closed loops arrive at 0: sent now).
                        arrival[released] = arrival[released].max(now);
                        admit_frontend(released, &arrival, &mut ready);
                        released += 1;
                    }
                } else {
                    k += 1;
                }
            }
        };
    }
    // When the step that ended at `now` started (None: the engine was idle before `now`). An
    // engine that schedules one step ahead (vLLM's async scheduling; SGLang's overlap loop, but
    // not with a draft model) picked the step starting at `now` when that one started, so only
    // requests that reached it by then are in it; later ones wait one step more. An idle engine
    // (nothing running) schedules on arrival.
    let ahead = pricer.host.schedule_ahead_steps > 0 && (pricer.spec.is_none() || pricer.host.schedule_ahead_with_speculative);
    // An engine that hands a step's tokens out only once the next step's launch has returned
    // (SGLang's overlap loop processes batch n's result after launching batch n+1; serving-host
    // `results_after_next_launch`). A captured decode step launches at once, so tokens before it
    // go out when their own step ends; a step with prompt tokens runs eagerly and its launch
    // returns when it is done, so the tokens of the step before it go out at its end, and the
    // loop, busy launching it, schedules the step after it only then (no step ahead). `lag[i]`
    // is how late request i's first token reached the client; every later token is as late, so
    // TPOT and ITL are unchanged and its end moves by the same lag. `pending` holds the
    // requests whose first token the last step computed.
    let lagged = ahead && pricer.host.results_after_next_launch;
    let mut last_had_prompt = false;
    let mut lag = vec![0.0f64; n];
    let mut pending: Vec<usize> = Vec::new();
    macro_rules! hand_off {
        ($t:expr) => {
            for &r in &pending {
                lag[r] = ($t - first_tok[r]).max(0.0);
            }
            pending.clear();
        };
    }
    let mut last_start: Option<f64> = None;
    // A step's prompt chunks (index into running, tokens) and decoding indices: one allocation
    // for the run, not one per step (a tenth of a capacity search's time went to them).
    let mut chunks: Vec<(usize, u64)> = Vec::new();
    let mut decodes: Vec<usize> = Vec::new();
    while done_count < n {
        // Arrivals the step about to start can hold join the queue in order.
        let cutoff = match last_start {
            Some(t) if ahead && !running.is_empty() && !(lagged && last_had_prompt) => t,
            _ => now,
        };
        while next_arrival < released && ready[next_arrival] <= cutoff + 1e-12 {
            let r = &reqs[next_arrival];
            // Cached prefix tokens count as done (at least the last prompt token is computed).
            let cached = ((r.input as f64 * cfg.prefix_cache_hit_rate.clamp(0.0, 1.0)) as u64).min(r.input.saturating_sub(1));
            waiting.push_back(Seq { req: next_arrival, target: r.input, done: cached, generated: 0, blocks: 0, ctx: cached });
            next_arrival += 1;
        }
        if running.is_empty() && waiting.is_empty() {
            // Idle: no next launch to wait for, the last step's tokens go out now.
            hand_off!(now);
            if next_arrival < released {
                now = now.max(ready[next_arrival]);
                last_start = None;
                continue;
            }
            return Err("the serving simulation stalled with requests outstanding (a scheduler bug)".into());
        }
        // Fast-forward: while every running sequence decodes and nobody can join, consecutive
        // steps differ only by one token of context each. Run them as one span, priced at its
        // middle context, up to the next event (a sequence finishing, an arrival, the KV blocks
        // running out).
        // One pass: every running sequence decoding, the fewest tokens any has left, and the
        // cache lengths' sum.
        let (mut decoding, mut fewest_left, mut ctx_sum) = (!running.is_empty(), u64::MAX, 0u64);
        // Whether no running sequence is part-way through its prompt (then step 2 below has
        // nothing to do: preemption only moves sequences out of `running`).
        let mut no_partial = true;
        for s in &running {
            if s.done < s.target {
                decoding = false;
                no_partial = false;
                break;
            }
            fewest_left = fewest_left.min(reqs[s.req].output.saturating_sub(s.generated));
            ctx_sum += s.ctx;
        }
        let d = running.len() as u64;
        if decoding && d <= cfg.max_num_batched_tokens && !admissible(&waiting, &running, max_seqs, free, cfg.max_num_batched_tokens.saturating_sub(d), cfg, reqs) {
            let mut k = fewest_left.max(1);
            let mean_ctx = ctx_sum / d;
            let one = StepShape { decode_seqs: d, decode_ctx: mean_ctx + 1, emitting: d, ..Default::default() };
            if next_arrival < released {
                let dt = pricer.step(&one, cfg.graph_launch)?.time_us * 1e-6;
                k = k.min(((ready[next_arrival] - now) / dt.max(1e-12)).max(1.0) as u64);
            }
            if cfg.kv_policy == KvPolicy::Paged {
                while k > 1 && running.iter().map(|s| blocks_for(s.ctx + k).saturating_sub(s.blocks)).sum::<u64>() > free {
                    k /= 2;
                }
            }
            if k >= 2 && st.steps + k <= step_limit {
                let shape = StepShape { decode_ctx: mean_ctx + 1 + (k - 1) / 2, ..one };
                let cost = pricer.step(&shape, cfg.graph_launch)?;
                let dt = cost.time_us * 1e-6;
                let kf = k as f64;
                let first_end = now + dt;
                hand_off!(now);
                last_had_prompt = false;
                host_clock += cost.host_us * 1e-6 * kf;
                now += dt * kf;
                last_start = Some(now - dt);
                st.steps += k;
                busy_us += cost.device_us * kf;
                prefill_us += cost.prefill_us * kf;
                host_us += cost.host_us * kf;
                st.energy_j += cost.energy_uj * 1e-6 * kf;
                st.flops += cost.flops * kf;
                st.rel_error = st.rel_error.max(cost.rel_error);
                st.graph_steps += cost.graph as u64 * k;
                batch_sum += d * k;
                out_tokens += d * k;
                itl.add_n(dt * 1e3, (k - 1) * d);
                for s in running.iter_mut() {
                    itl.add((first_end - last_emit[s.req]) * 1e3);
                    last_emit[s.req] = now;
                    s.generated += k;
                    s.ctx += k;
                    if cfg.kv_policy == KvPolicy::Paged {
                        let extra = blocks_for(s.ctx).saturating_sub(s.blocks);
                        s.blocks += extra;
                        free -= extra;
                    }
                }
                peak_used = peak_used.max(cfg.kv_blocks - free);
                // A span shorter than every sequence's remaining output finishes none of them.
                if k >= fewest_left {
                    retire!();
                }
                continue;
            }
        }
        st.steps += 1;
        if st.steps > step_limit {
            return Err(format!("the serving simulation did not finish within {step_limit} steps"));
        }
        let mut budget = cfg.max_num_batched_tokens.max(1);
        // (index into running, tokens of prompt this step) and the decoding indices.
        chunks.clear();
        decodes.clear();
        // The decoding sequences' cache lengths (plus the token each adds), summed as they join.
        let mut decode_ctx_sum = 0u64;
        let prefill_first = !cfg.chunked_prefill && !waiting.is_empty() && can_admit_whole(&waiting, &running, max_seqs, free, budget, cfg, reqs);
        if !prefill_first {
            // 1. Decodes, preempting the newest sequence when a block is missing.
            let mut i = 0;
            while i < running.len() {
                let s = &running[i];
                if s.done < s.target {
                    i += 1;
                    continue;
                }
                if cfg.kv_policy == KvPolicy::Paged {
                    let need = blocks_for(s.ctx + 1);
                    let mut short = need.saturating_sub(running[i].blocks);
                    while short > free {
                        // The newest running sequence gives its blocks back and is recomputed.
                        let victim = running.len() - 1;
                        let mut v = running.remove(victim);
                        free += v.blocks;
                        v.blocks = 0;
                        v.target = reqs[v.req].input + v.generated;
                        v.done = 0;
                        v.ctx = 0;
                        st.preemptions += 1;
                        waiting.push_front(v);
                        let before = decodes.len();
                        decodes.retain(|&d| d < running.len());
                        if decodes.len() != before {
                            decode_ctx_sum = decodes.iter().map(|&d| running[d].ctx + 1).sum();
                        }
                        if victim == i {
                            short = 0;
                            break;
                        }
                    }
                    if i >= running.len() {
                        break;
                    }
                    if short > 0 {
                        running[i].blocks += short;
                        free -= short;
                    }
                }
                if budget == 0 {
                    break;
                }
                decodes.push(i);
                decode_ctx_sum += running[i].ctx + 1;
                budget -= 1;
                i += 1;
            }
        }
        if cfg.chunked_prefill || prefill_first || decodes.is_empty() {
            // 2. Prompts already part-way through.
            if !no_partial {
                for (i, s) in running.iter_mut().enumerate() {
                    if budget == 0 {
                        break;
                    }
                    if s.done < s.target {
                        let c = (s.target - s.done).min(budget);
                        if !cfg.chunked_prefill && c < s.target - s.done {
                            continue;
                        }
                        let upto = s.done + c;
                        if !grow(s, upto, cfg, reqs, &mut free, blocks_for) {
                            continue;
                        }
                        chunks.push((i, c));
                        budget -= c;
                    }
                }
            }
            // 3. New sequences in arrival order.
            while budget > 0 && running.len() < max_seqs {
                let Some(s) = waiting.front() else { break };
                let remaining = s.target - s.done;
                // Without chunking a prompt runs whole; a recomputed one longer than the budget
                // (prompt plus the tokens generated before its preemption) runs alone.
                let c = if !cfg.chunked_prefill && chunks.is_empty() { remaining } else { remaining.min(budget) };
                if !cfg.chunked_prefill && c < remaining {
                    break;
                }
                let mut s = waiting.pop_front().unwrap_or_else(|| unreachable!());
                let upto = s.done + c;
                if !grow(&mut s, upto, cfg, reqs, &mut free, blocks_for) {
                    waiting.push_front(s);
                    break;
                }
                if scheduled[s.req].is_nan() {
                    scheduled[s.req] = now;
                    host_at_sched[s.req] = host_clock;
                }
                running.push(s);
                chunks.push((running.len() - 1, c));
                budget = budget.saturating_sub(c);
            }
        }
        if chunks.is_empty() && decodes.is_empty() {
            // Nothing fits: only possible while a preempted sequence waits for blocks that
            // finishing sequences will free; with nothing running that cannot happen.
            return Err("the serving simulation could not schedule anything (KV cache exhausted)".into());
        }
        // Price the step.
        let prefill_tokens: u64 = chunks.iter().map(|c| c.1).sum();
        let prefill_kv = if chunks.is_empty() { 0 } else { chunks.iter().map(|&(i, c)| running[i].done + c).sum::<u64>() / chunks.len() as u64 };
        let new_requests = chunks.iter().filter(|&&(i, _)| running[i].generated == 0 && running[i].done == running[i].ctx && scheduled[running[i].req] == now).count() as u64;
        // (No decoding sequence's cache changed since it joined: steps 2 and 3 touch prompts.)
        let decode_ctx = if decodes.is_empty() { 0 } else { decode_ctx_sum / decodes.len() as u64 };
        let emitting = decodes.len() as u64 + chunks.iter().filter(|&&(i, c)| running[i].done + c >= running[i].target).count() as u64;
        let shape = StepShape {
            prefill_seqs: chunks.len() as u64,
            prefill_tokens,
            prefill_kv,
            new_requests,
            decode_seqs: decodes.len() as u64,
            decode_ctx,
            emitting,
        };
        let cost = pricer.step(&shape, cfg.graph_launch)?;
        let dt = cost.time_us * 1e-6;
        last_start = Some(now);
        // A decode step's launch returns at once: the last step's tokens went out as it ended.
        if chunks.is_empty() {
            hand_off!(now);
        }
        now += dt;
        hand_off!(now);
        last_had_prompt = !chunks.is_empty();
        host_clock += cost.host_us * 1e-6;
        busy_us += cost.device_us;
        prefill_us += cost.prefill_us;
        host_us += cost.host_us;
        st.energy_j += cost.energy_uj * 1e-6;
        st.flops += cost.flops;
        st.rel_error = st.rel_error.max(cost.rel_error);
        st.graph_steps += cost.graph as u64;
        batch_sum += (chunks.len() + decodes.len()) as u64;
        in_tokens += prefill_tokens;
        peak_used = peak_used.max(cfg.kv_blocks - free);
        // Apply the step. `finishing`: a sequence of this step met its output, so `retire`
        // has work (no other running sequence can: each step's retire took those that had).
        let mut finishing = false;
        for &(i, c) in &chunks {
            let s = &mut running[i];
            s.done += c;
            s.ctx += c;
            if s.done >= s.target {
                s.generated += 1;
                finishing |= s.generated >= reqs[s.req].output;
                out_tokens += 1;
                if first_tok[s.req].is_nan() {
                    first_tok[s.req] = now;
                    host_in_prefill[s.req] = host_clock - host_at_sched[s.req];
                    if lagged {
                        pending.push(s.req);
                    }
                } else {
                    itl.add((now - last_emit[s.req]) * 1e3);
                }
                last_emit[s.req] = now;
            }
        }
        for &i in &decodes {
            running[i].generated += 1;
            running[i].ctx += 1;
            let r = running[i].req;
            finishing |= running[i].generated >= reqs[r].output;
            itl.add((now - last_emit[r]) * 1e3);
            last_emit[r] = now;
            out_tokens += 1;
        }
        if finishing {
            retire!();
        }
    }
    // Statistics. The tokens of the last step reach the client when the engine goes idle.
    hand_off!(now);
    for i in 0..n {
        first_tok[i] += lag[i];
        finish[i] += lag[i];
    }
    let start = arrival.iter().copied().fold(f64::INFINITY, f64::min);
    let end = finish.iter().copied().fold(0.0, f64::max);
    st.duration_s = (end - start).max(1e-12);
    st.output_tokens_per_s = out_tokens as f64 / st.duration_s;
    st.total_tokens_per_s = (out_tokens + in_tokens) as f64 / st.duration_s;
    st.requests_per_s = n as f64 / st.duration_s;
    let ms = |v: Vec<f64>| pcts(v.into_iter().map(|x| x * 1e3).collect());
    let ttft: Vec<f64> = (0..n).map(|i| first_tok[i] - arrival[i]).collect();
    let tpot: Vec<f64> = (0..n).map(|i| if reqs[i].output > 1 { (finish[i] - first_tok[i]) / (reqs[i].output - 1) as f64 } else { 0.0 }).collect();
    let queue: Vec<f64> = (0..n).map(|i| scheduled[i] - arrival[i]).collect();
    let compute: Vec<f64> = (0..n).map(|i| first_tok[i] - scheduled[i]).collect();
    let ok = (0..n).filter(|&i| slo.ttft_ms.is_none_or(|l| ttft[i] * 1e3 <= l) && slo.tpot_ms.is_none_or(|l| tpot[i] * 1e3 <= l)).count();
    st.slo_attained = ok as f64 / n as f64;
    st.goodput_rps = ok as f64 / st.duration_s;
    st.ttft_ms = ms(ttft);
    st.tpot_ms = ms(tpot);
    st.queue_ms = ms(queue);
    st.e2e_ms = ms((0..n).map(|i| finish[i] - arrival[i]).collect());
    st.ttft_compute_ms = ms(compute);
    let mean = |f: &dyn Fn(usize) -> f64| (0..n).map(f).sum::<f64>() / n as f64 * 1e3;
    st.ttft_split = super::TtftSplit {
        requests: n,
        frontend_ms: mean(&|i| ready[i] - arrival[i]),
        queue_ms: mean(&|i| scheduled[i] - ready[i]),
        prefill_ms: mean(&|i| first_tok[i] - lag[i] - scheduled[i]),
        host_ms: mean(&|i| host_in_prefill[i]),
        handoff_ms: mean(&|i| lag[i]),
    };
    st.itl_ms = itl.pcts();
    st.mean_batch = batch_sum as f64 / st.steps.max(1) as f64;
    let wall_us = st.duration_s * 1e6;
    st.busy_fraction = (busy_us / wall_us).min(1.0);
    st.prefill_share = if busy_us > 0.0 { prefill_us / busy_us } else { 0.0 };
    st.host_share = host_us / (busy_us + host_us).max(1e-12);
    st.kv_peak_fraction = peak_used as f64 / cfg.kv_blocks.max(1) as f64;
    Ok(st)
}

/// Whether the next waiting sequence could join a step now (a slot, token budget left after the
/// decodes, and its KV blocks).
fn admissible(waiting: &VecDeque<Seq>, running: &[Seq], max_seqs: usize, free: u64, budget: u64, cfg: &EngineConfig, reqs: &[Request]) -> bool {
    let Some(s) = waiting.front() else { return false };
    if !cfg.chunked_prefill {
        return can_admit_whole(waiting, running, max_seqs, free, cfg.max_num_batched_tokens, cfg, reqs);
    }
    if running.len() >= max_seqs || budget == 0 {
        return false;
    }
    let bs = cfg.block_size.max(1);
    let r = &reqs[s.req];
    let need = match cfg.kv_policy {
        KvPolicy::Paged => (s.done + (s.target - s.done).min(budget)).div_ceil(bs),
        KvPolicy::Reserve => (r.input + r.output).div_ceil(bs),
        KvPolicy::ReserveFixed(t) => t.max(r.input + r.output).div_ceil(bs),
    };
    need.saturating_sub(s.blocks) <= free
}

/// Whether a prefill-first (chunking off) step can start the next waiting prompt.
fn can_admit_whole(waiting: &VecDeque<Seq>, running: &[Seq], max_seqs: usize, free: u64, budget: u64, cfg: &EngineConfig, reqs: &[Request]) -> bool {
    let Some(s) = waiting.front() else { return false };
    if running.len() >= max_seqs || (s.target > budget && s.done == 0 && s.generated == 0) {
        return false;
    }
    let bs = cfg.block_size.max(1);
    let need = match cfg.kv_policy {
        KvPolicy::Paged => s.target.div_ceil(bs),
        KvPolicy::Reserve => (reqs[s.req].input + reqs[s.req].output).div_ceil(bs),
        KvPolicy::ReserveFixed(t) => t.max(reqs[s.req].input + reqs[s.req].output).div_ceil(bs),
    };
    need <= free
}

/// Gives a sequence the blocks it needs to hold `tokens` (paged) or its whole reservation
/// (reserving policies, at first admission). False when they are not free.
fn grow(s: &mut Seq, tokens: u64, cfg: &EngineConfig, reqs: &[Request], free: &mut u64, blocks_for: impl Fn(u64) -> u64) -> bool {
    let r = &reqs[s.req];
    let want = match cfg.kv_policy {
        KvPolicy::Paged => blocks_for(tokens),
        KvPolicy::Reserve => blocks_for(r.input + r.output),
        KvPolicy::ReserveFixed(t) => blocks_for(t.max(r.input + r.output)),
    };
    let extra = want.saturating_sub(s.blocks);
    if extra > *free {
        return false;
    }
    *free -= extra;
    s.blocks += extra;
    true
}

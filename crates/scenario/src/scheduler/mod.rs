//! A continuous-batching serving simulation, as vLLM-Ascend and MindIE schedule requests.
//!
//! Requests arrive (Poisson at a rate, a trace of arrival times, or a closed loop of a fixed
//! number of clients that each send the next request when the last one finishes), with input
//! and output lengths drawn from a distribution. Every engine step the scheduler:
//! 1. keeps every running sequence decoding (one token each); a sequence whose next token needs
//!    a new KV block when none is free preempts the most recently admitted running sequence,
//!    which frees its blocks and goes back to the front of the queue to be recomputed (vLLM's
//!    default preemption mode);
//! 2. with chunked prefill on, fills the rest of `max_num_batched_tokens` with prompt chunks
//!    (first the sequences already part-way through their prompt, then new ones in arrival
//!    order); with it off, a step is either a prefill of whole prompts (prefill first, as vLLM V0
//!    does) or a decode of every running sequence;
//! 3. admits no more than `max_num_seqs` sequences, and only while their KV blocks fit.
//!
//! KV memory: the engine's share of the chip (`kv_cache_fraction`) less the weights, workspace
//! and the activation peak of the largest step is divided into blocks of `block_size` tokens.
//! The memory strategy decides how sequences hold blocks: "dynamic_pool" pages them in as the
//! sequence grows (and preempts when full); "predictive" reserves the request's own prompt plus
//! output at admission; "static" reserves the model's longest sequence at admission.
//!
//! Each step is priced by `price::StepPricer` (device model plus host work); the clock advances
//! by the step's time. TTFT runs from arrival to the first token, split into the queueing delay
//! (arrival to first scheduled) and the rest; TPOT is a request's decode time over its tokens
//! after the first; inter-token latency is the distribution, over generated tokens, of the step
//! that produced them. Everything is deterministic given the seed (portable RNG, no clock).

pub mod price;

use price::{StepPricer, StepShape};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use tunelab_search::Rng;

/// Largest number of requests one simulation accepts.
pub const MAX_REQUESTS: usize = 100_000;

/// `deployment.serving`: the request stream and the engine's scheduler settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServingSpec {
    /// "scheduler" (continuous batching; the default) or "static" (simple mode: TTFT is one
    /// prefill of the whole batch, TPOT one decode step at the mean context).
    pub mode: String,
    /// "closed" (a fixed number of clients, each sending its next request when the last
    /// finishes), "poisson" (random arrivals at `request_rate`), "burst" (every request at
    /// once, a benchmark's `--request-rate inf`) or "trace" (`trace` times).
    pub arrival: String,
    /// Requests per second for "poisson".
    pub request_rate: Option<f64>,
    /// Clients of a closed loop (default: the configuration's max_num_seqs, a full server).
    pub concurrency: Option<u64>,
    /// Arrival times in seconds for "trace".
    pub trace: Vec<f64>,
    /// Requests simulated.
    pub requests: usize,
    /// "fixed", "uniform" (mean x [1 - spread, 1 + spread]) or "lognormal" (coefficient of
    /// variation `spread`), for both input and output lengths around the workload's means.
    pub length_distribution: String,
    pub length_spread: f64,
    /// KV-cache page size in tokens (vLLM-Ascend and MindIE default to 128 on Ascend).
    pub block_size: u64,
    /// Token budgets per step to consider (the space's `max_num_batched_tokens`).
    pub max_num_batched_tokens: Vec<i64>,
    /// Chunked-prefill settings to consider ("on", "off").
    pub chunked_prefill: Vec<String>,
}

impl Default for ServingSpec {
    fn default() -> Self {
        ServingSpec {
            mode: "scheduler".into(),
            arrival: "closed".into(),
            request_rate: None,
            concurrency: None,
            trace: Vec::new(),
            requests: 200,
            length_distribution: "uniform".into(),
            length_spread: 0.5,
            block_size: 128,
            max_num_batched_tokens: Vec::new(),
            chunked_prefill: Vec::new(),
        }
    }
}

impl ServingSpec {
    /// Whether the static simple mode is asked for.
    pub fn is_static(&self) -> bool {
        self.mode == "static"
    }

    /// Checks every field, naming the one at fault.
    pub fn validate(&self) -> Result<(), String> {
        let f = "deployment.serving";
        if !matches!(self.mode.as_str(), "scheduler" | "static") {
            return Err(format!("{f}.mode: expected scheduler or static, got '{}'", crate::scenario::clip(&self.mode)));
        }
        match self.arrival.as_str() {
            "burst" => {}
            "closed" => {
                if self.concurrency == Some(0) {
                    return Err(format!("{f}.concurrency: must be at least 1"));
                }
            }
            "poisson" => match self.request_rate {
                Some(r) if r.is_finite() && r > 0.0 && r <= 1e6 => {}
                Some(r) => return Err(format!("{f}.request_rate: {r} must be in (0, 1e6] requests/s")),
                None => return Err(format!("{f}.request_rate: poisson arrivals need a rate in requests/s")),
            },
            "trace" => {
                if self.trace.is_empty() || self.trace.len() > MAX_REQUESTS {
                    return Err(format!("{f}.trace: give 1..={MAX_REQUESTS} arrival times in seconds"));
                }
                if let Some(i) = self.trace.iter().position(|t| !(t.is_finite() && *t >= 0.0)) {
                    return Err(format!("{f}.trace[{i}]: arrival times are non-negative seconds"));
                }
            }
            other => return Err(format!("{f}.arrival: expected closed, poisson, burst or trace, got '{}'", crate::scenario::clip(other))),
        }
        if self.requests == 0 || self.requests > MAX_REQUESTS {
            return Err(format!("{f}.requests: {} must be in 1..={MAX_REQUESTS}", self.requests));
        }
        match self.length_distribution.as_str() {
            "fixed" => {}
            "uniform" if (0.0..1.0).contains(&self.length_spread) => {}
            "lognormal" if self.length_spread.is_finite() && self.length_spread >= 0.0 && self.length_spread <= 4.0 => {}
            "uniform" | "lognormal" => return Err(format!("{f}.length_spread: {} is out of range (uniform: [0, 1), lognormal: [0, 4])", self.length_spread)),
            other => return Err(format!("{f}.length_distribution: expected fixed, uniform or lognormal, got '{}'", crate::scenario::clip(other))),
        }
        if self.block_size == 0 || self.block_size > 4096 {
            return Err(format!("{f}.block_size: {} must be in 1..=4096 tokens", self.block_size));
        }
        if let Some(b) = self.max_num_batched_tokens.iter().find(|b| **b < 1 || **b > 1 << 20) {
            return Err(format!("{f}.max_num_batched_tokens: {b} must be in 1..=1048576"));
        }
        if let Some(c) = self.chunked_prefill.iter().find(|c| *c != "on" && *c != "off") {
            return Err(format!("{f}.chunked_prefill: expected on or off, got '{}'", crate::scenario::clip(c)));
        }
        Ok(())
    }
}

/// One simulated request: its arrival and lengths (the prompt includes a multimodal model's
/// image tokens).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Request {
    pub arrival_s: f64,
    pub input: u64,
    pub output: u64,
}

/// Draws the requests of a spec (closed-loop arrivals are set by the simulation; here 0).
pub fn requests(spec: &ServingSpec, input_mean: u64, output_mean: u64, extra_prompt: u64, seed: u64) -> Vec<Request> {
    let mut rng = Rng::seed_from_u64(seed ^ 0x5E7F_1A6B_0C2D_3E4F);
    let n = if spec.arrival == "trace" { spec.trace.len() } else { spec.requests };
    let mut t = 0.0;
    let mut out = Vec::with_capacity(n);
    let mut trace: Vec<f64> = spec.trace.clone();
    trace.sort_by(|a, b| a.total_cmp(b));
    for i in 0..n {
        let arrival_s = match spec.arrival.as_str() {
            "poisson" => {
                let rate = spec.request_rate.unwrap_or(1.0);
                t += -libm::log(1.0 - rng.unit()) / rate;
                t
            }
            "trace" => trace[i],
            _ => 0.0,
        };
        let input = draw(&mut rng, spec, input_mean) + extra_prompt;
        let output = draw(&mut rng, spec, output_mean);
        out.push(Request { arrival_s, input, output });
    }
    out
}

fn draw(rng: &mut Rng, spec: &ServingSpec, mean: u64) -> u64 {
    let m = mean.max(1) as f64;
    let x = match spec.length_distribution.as_str() {
        "uniform" => m * rng.uniform(1.0 - spec.length_spread, 1.0 + spec.length_spread),
        "lognormal" => {
            let s2 = libm::log(1.0 + spec.length_spread * spec.length_spread);
            m * libm::exp(libm::sqrt(s2) * rng.normal() - s2 / 2.0)
        }
        _ => m,
    };
    (libm::round(x) as u64).clamp(1, 1 << 22)
}

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

/// p50 / p90 / p99 and the mean of one latency, in ms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pcts {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
}

/// What a serving simulation measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServingStats {
    pub requests: usize,
    /// First arrival to last completion, s.
    pub duration_s: f64,
    /// Generated tokens per second over the duration.
    pub output_tokens_per_s: f64,
    /// Prompt plus generated tokens per second.
    pub total_tokens_per_s: f64,
    pub requests_per_s: f64,
    pub ttft_ms: Pcts,
    pub tpot_ms: Pcts,
    pub itl_ms: Pcts,
    /// Arrival to first scheduled (waiting for a slot or for KV blocks), ms.
    pub queue_ms: Pcts,
    /// TTFT less the queueing delay (prefill compute, and interference from other steps), ms.
    pub ttft_compute_ms: Pcts,
    /// Requests per second that met both latency limits (all of them when there are none).
    pub goodput_rps: f64,
    pub slo_attained: f64,
    pub preemptions: u64,
    pub steps: u64,
    /// Mean sequences per step.
    pub mean_batch: f64,
    /// Share of the duration the device was busy.
    pub busy_fraction: f64,
    /// Share of the device time spent on prompt tokens.
    pub prefill_share: f64,
    /// Host time the device waited for, as a share of all step time.
    pub host_share: f64,
    /// Largest share of the KV blocks in use at once.
    pub kv_peak_fraction: f64,
    pub kv_blocks: u64,
    pub energy_j: f64,
    pub flops: f64,
    pub rel_error: f64,
    /// Steps that ran as captured graphs.
    pub graph_steps: u64,
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
    let bs = cfg.block_size.max(1);
    let blocks_for = |tokens: u64| tokens.div_ceil(bs);
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
                        arrival[released] = now;
                        released += 1;
                    }
                } else {
                    k += 1;
                }
            }
        };
    }
    while done_count < n {
        // Arrivals up to now join the queue in order.
        while next_arrival < released && arrival[next_arrival] <= now + 1e-12 {
            let r = &reqs[next_arrival];
            waiting.push_back(Seq { req: next_arrival, target: r.input, done: 0, generated: 0, blocks: 0, ctx: 0 });
            next_arrival += 1;
        }
        if running.is_empty() && waiting.is_empty() {
            if next_arrival < released {
                now = arrival[next_arrival];
                continue;
            }
            return Err("the serving simulation stalled with requests outstanding (a scheduler bug)".into());
        }
        // Fast-forward: while every running sequence decodes and nobody can join, consecutive
        // steps differ only by one token of context each. Run them as one span, priced at its
        // middle context, up to the next event (a sequence finishing, an arrival, the KV blocks
        // running out).
        let decoding = !running.is_empty() && running.iter().all(|s| s.done >= s.target);
        let d = running.len() as u64;
        if decoding && d <= cfg.max_num_batched_tokens && !admissible(&waiting, &running, max_seqs, free, cfg.max_num_batched_tokens.saturating_sub(d), cfg, reqs) {
            let mut k = running.iter().map(|s| reqs[s.req].output.saturating_sub(s.generated)).min().unwrap_or(1).max(1);
            let mean_ctx = running.iter().map(|s| s.ctx).sum::<u64>() / d;
            let one = StepShape { decode_seqs: d, decode_ctx: mean_ctx + 1, emitting: d, ..Default::default() };
            if next_arrival < released {
                let dt = pricer.step(&one, cfg.graph_launch)?.time_us * 1e-6;
                k = k.min(((arrival[next_arrival] - now) / dt.max(1e-12)).max(1.0) as u64);
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
                now += dt * kf;
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
                retire!();
                continue;
            }
        }
        st.steps += 1;
        if st.steps > step_limit {
            return Err(format!("the serving simulation did not finish within {step_limit} steps"));
        }
        let mut budget = cfg.max_num_batched_tokens.max(1);
        // (index into running, tokens of prompt this step) and the decoding indices.
        let mut chunks: Vec<(usize, u64)> = Vec::new();
        let mut decodes: Vec<usize> = Vec::new();
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
                        decodes.retain(|&d| d < running.len());
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
                budget -= 1;
                i += 1;
            }
        }
        if cfg.chunked_prefill || prefill_first || decodes.is_empty() {
            // 2. Prompts already part-way through.
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
        let new_requests = chunks.iter().filter(|&&(i, _)| running[i].done == 0 && running[i].generated == 0).count() as u64;
        let decode_ctx = if decodes.is_empty() { 0 } else { decodes.iter().map(|&i| running[i].ctx + 1).sum::<u64>() / decodes.len() as u64 };
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
        now += dt;
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
        // Apply the step.
        for &(i, c) in &chunks {
            let s = &mut running[i];
            s.done += c;
            s.ctx += c;
            if s.done >= s.target {
                s.generated += 1;
                out_tokens += 1;
                if first_tok[s.req].is_nan() {
                    first_tok[s.req] = now;
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
            itl.add((now - last_emit[r]) * 1e3);
            last_emit[r] = now;
            out_tokens += 1;
        }
        retire!();
    }
    // Statistics.
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
    st.ttft_compute_ms = ms(compute);
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

/// Percentiles by linear interpolation between order statistics (numpy's default).
pub fn pcts(mut v: Vec<f64>) -> Pcts {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return Pcts::default();
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let q = |p: f64| {
        let x = p * (v.len() - 1) as f64;
        let (lo, hi) = (libm::floor(x) as usize, libm::ceil(x) as usize);
        v[lo] + (v[hi] - v[lo]) * (x - lo as f64)
    };
    Pcts { mean: v.iter().sum::<f64>() / v.len() as f64, p50: q(0.5), p90: q(0.9), p99: q(0.99) }
}

/// A log-binned histogram of latencies in ms (1/400 of a decade per bin from 1 us to 10^7 ms,
/// so a percentile is within 0.6% of the exact order statistic), for the hundreds of thousands
/// of inter-token gaps of a run without storing and sorting them; the mean is exact.
pub struct Histogram {
    bins: Vec<u64>,
    count: u64,
    sum: f64,
    /// The last value added and its bin: the sequences of one step mostly share their gap.
    last: (f64, usize),
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { bins: vec![0; Self::BINS], count: 0, sum: 0.0, last: (f64::NAN, 0) }
    }
}

impl Histogram {
    const PER_DECADE: f64 = 400.0;
    /// Decades below 1 ms covered (1 us) and bins in all (10 decades).
    const LOW: f64 = 3.0;
    const BINS: usize = 4000;

    pub fn add(&mut self, ms: f64) {
        self.add_n(ms, 1);
    }

    /// Adds `count` equal values.
    pub fn add_n(&mut self, ms: f64, count: u64) {
        if !ms.is_finite() || count == 0 {
            return;
        }
        let b = if ms == self.last.0 {
            self.last.1
        } else {
            let x = if ms > 0.0 { (libm::log10(ms) + Self::LOW) * Self::PER_DECADE } else { 0.0 };
            let b = (x.max(0.0) as usize).min(Self::BINS - 1);
            self.last = (ms, b);
            b
        };
        self.bins[b] += count;
        self.count += count;
        self.sum += ms * count as f64;
    }

    /// p50 / p90 / p99 (each bin's upper edge) and the mean.
    pub fn pcts(&self) -> Pcts {
        if self.count == 0 {
            return Pcts::default();
        }
        let q = |p: f64| {
            let rank = libm::ceil(p * self.count as f64).max(1.0) as u64;
            let mut seen = 0;
            for (b, c) in self.bins.iter().enumerate() {
                seen += c;
                if seen >= rank {
                    return libm::pow(10.0, (b + 1) as f64 / Self::PER_DECADE - Self::LOW);
                }
            }
            0.0
        };
        Pcts { mean: self.sum / self.count as f64, p50: q(0.5), p90: q(0.9), p99: q(0.99) }
    }
}

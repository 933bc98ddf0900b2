//! The serving engine's API-server front end: when each request reaches the engine's scheduler.
//!
//! vLLM's OpenAI server is one Python asyncio process: every HTTP request is a coroutine that
//! parses and validates the body, renders the prompt, tokenises it (through a one-worker thread
//! pool, vllm-project/vllm#25301) and hands an `EngineCoreRequest` to the engine core. asyncio
//! runs ready coroutines in FIFO order, one step each, so a burst of N requests is worked on in
//! rounds: each request advances one stage per round and none is handed over before the last
//! round, which ends after N front-end times for all of them. That is the mechanism here: the
//! front end serves requests in **rounds**. A round takes every request that has arrived when the
//! front end becomes free and ends after `per_request` times their number; all of the round's
//! requests reach the scheduler together at its end. Requests that arrive during a round wait for
//! the next one. A lone request (sparse arrivals) passes in one front-end time, as before.
//!
//! Why not one request at a time (FIFO), as before issue 22: then the first prompts of a burst
//! are prefilled alone while the rest still arrive, and the burst's prefill is spread over more,
//! smaller steps. On the two vLLM-Ascend burst rows whose launch lines state their token budget
//! (srv-vllm-qwen3.5-2b-800ia2-tp1-graph and -tp4-graph, 16384 tokens) rounds give mean TTFT
//! -54% / -25% and output throughput +37% / +1% against one-at-a-time admission's -70% / -53% and
//! +53% / +15%. The true front end is in between (the event loop's stages run in rounds, the
//! one-worker tokenizer thread is serial), so rounds bound the delay from above. The cost per
//! request is the engine's `frontend_us_per_request` (assets/constants/serving-host.json, sources
//! V5 and V7).

/// The front end's state over one simulation (arrivals are admitted in index order, at
/// non-decreasing times).
#[derive(Clone, Debug)]
pub struct FrontEnd {
    /// Seconds of front-end work per request (0: requests reach the scheduler on arrival).
    per_request: f64,
    /// Arrivals up to this time join the current round.
    gate: f64,
    /// When the current round ends.
    end: f64,
    /// The first request of the current round.
    first: usize,
}

impl FrontEnd {
    /// A front end spending `per_request` seconds on each request.
    pub fn new(per_request: f64) -> FrontEnd {
        FrontEnd { per_request: per_request.max(0.0), gate: f64::NEG_INFINITY, end: f64::NEG_INFINITY, first: 0 }
    }

    /// Admits request `i` (sent at `arrival`) and sets when it, and the earlier requests of its
    /// round, reach the scheduler (`ready`). `ready` stays non-decreasing in the index.
    pub fn admit(&mut self, i: usize, arrival: f64, ready: &mut [f64]) {
        if self.per_request <= 0.0 {
            ready[i] = arrival;
            return;
        }
        if arrival <= self.gate + 1e-12 && i > self.first {
            // Arrived before the round closed: the round grows by one request.
            self.end += self.per_request;
        } else {
            // The next round opens when the front end is free: now if it is idle, else at the
            // end of the round in progress (collecting what arrives meanwhile).
            self.gate = arrival.max(self.end);
            self.end = self.gate + self.per_request;
            self.first = i;
        }
        for r in &mut ready[self.first..=i] {
            *r = self.end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_reaches_the_scheduler_together_and_sparse_requests_one_by_one() {
        let mut f = FrontEnd::new(0.01);
        let mut ready = vec![0.0; 6];
        // Four requests at once: all ready after four front-end times.
        for i in 0..4 {
            f.admit(i, 0.0, &mut ready);
        }
        assert!(ready[..4].iter().all(|&r| (r - 0.04).abs() < 1e-12), "{ready:?}");
        // One arriving during that round waits for it, then passes alone.
        f.admit(4, 0.02, &mut ready);
        assert!((ready[4] - 0.05).abs() < 1e-12, "{ready:?}");
        // One arriving to an idle front end passes in one front-end time.
        f.admit(5, 1.0, &mut ready);
        assert!((ready[5] - 1.01).abs() < 1e-12, "{ready:?}");
        assert!(ready.windows(2).all(|w| w[0] <= w[1]));
        // No front end: ready on arrival.
        let mut none = FrontEnd::new(0.0);
        none.admit(0, 0.5, &mut ready);
        assert_eq!(ready[0], 0.5);
    }
}

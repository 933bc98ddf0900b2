//! Where a serving run's time to first token goes (issue 43: TTFT under load), in named parts
//! whose means add up to the mean TTFT the simulation reports:
//! - **front end**: the client's send to the engine's scheduler (the API server's rounds of
//!   input processing, `frontend`);
//! - **queueing**: reaching the scheduler to the first step that holds part of the prompt
//!   (waiting for a slot, for the token budget, for KV blocks, behind other prompts' steps);
//! - **prefill**: that step to the step that computes the first token, of which **host** is the
//!   engine's host time in those steps that the device waited for (scheduling, sampling, eager
//!   dispatch beyond the device time);
//! - **hand-off**: the first token computed to the client, where the engine hands a step's
//!   tokens out only after launching the next step (SGLang's overlap loop:
//!   serving-host.json `results_after_next_launch`).
//!
//! `tunelab eval` prints these lines, the app's Explore detail lists them, and the diagnosis
//! says when queueing is most of TTFT (`queue_sentence`). They are the simulation's own
//! timestamps (`sim`), not a second pricing.

use serde::{Deserialize, Serialize};

/// Mean parts of the time to first token over a run's requests, ms (all 0 when the run was not
/// simulated request by request: the simple mode, a disaggregated layout).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TtftSplit {
    /// Requests the means are over (0: no split).
    pub requests: usize,
    pub frontend_ms: f64,
    pub queue_ms: f64,
    /// First step holding the prompt to the step that computes its first token, host included.
    pub prefill_ms: f64,
    /// Of `prefill_ms`, host time of those steps that the device waited for.
    pub host_ms: f64,
    pub handoff_ms: f64,
}

impl TtftSplit {
    /// The parts' sum: the mean TTFT.
    pub fn total_ms(&self) -> f64 {
        self.frontend_ms + self.queue_ms + self.prefill_ms + self.handoff_ms
    }

    /// The named lines (empty without a split): each part's mean and its share of the mean TTFT.
    pub fn lines(&self) -> Vec<String> {
        if self.requests == 0 {
            return Vec::new();
        }
        let total = self.total_ms().max(1e-12);
        let f = crate::spec::metrics::fmt4;
        let line = |name: &str, ms: f64, what: &str| format!("{name:<12} {:>10} ms {:>5}%  {what}", f(ms), f(100.0 * ms / total));
        let mut out = vec![format!("time to first token, mean over {} requests: {} ms", self.requests, f(self.total_ms()))];
        out.push(line("front end", self.frontend_ms, "client send to the engine's scheduler (API-server input processing)"));
        out.push(line("queueing", self.queue_ms, "at the scheduler until a step holds the prompt (slots, token budget, KV blocks, other prompts)"));
        out.push(line("prefill", self.prefill_ms - self.host_ms, "device time of the steps from the prompt's first chunk to its first token"));
        out.push(line("host", self.host_ms, "the engine's host work in those steps that the device waited for"));
        if self.handoff_ms > 0.0 {
            out.push(line("hand-off", self.handoff_ms, "first token computed to the client: handed out when the next step's launch returns (an eager prefill step's at its end)"));
        }
        out
    }

    /// The diagnosis' sentence when waiting (front end plus queueing) is most of TTFT.
    pub fn queue_sentence(&self) -> Option<String> {
        let total = self.total_ms();
        let waiting = self.frontend_ms + self.queue_ms;
        if self.requests == 0 || !(total > 0.0) || waiting < 0.5 * total {
            return None;
        }
        let f = crate::spec::metrics::fmt4;
        Some(format!(
            "queueing dominates time to first token: {}% of the mean {} ms is waiting ({} ms at the scheduler behind other prompts' steps, {} ms in the front end), not the request's own prefill ({} ms); more prefill capacity (tp, max_num_batched_tokens) or fewer requests at once shortens it",
            f(100.0 * waiting / total),
            f(total),
            f(self.queue_ms),
            f(self.frontend_ms),
            f(self.prefill_ms)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_add_up_and_the_sentence_needs_waiting_to_dominate() {
        let s = TtftSplit { requests: 4, frontend_ms: 10.0, queue_ms: 70.0, prefill_ms: 15.0, host_ms: 5.0, handoff_ms: 5.0 };
        assert_eq!(s.total_ms(), 100.0);
        let l = s.lines();
        assert!(l[0].contains("100 ms") && l.iter().any(|x| x.starts_with("queueing") && x.contains("70%")), "{l:?}");
        assert!(l.iter().any(|x| x.starts_with("hand-off")));
        assert!(s.queue_sentence().unwrap().contains("80%"));
        let own = TtftSplit { queue_ms: 10.0, prefill_ms: 80.0, ..s };
        assert!(own.queue_sentence().is_none());
        assert!(TtftSplit::default().lines().is_empty());
    }
}

/// The TTFT split of configuration `c` (parameter `names`) of a deployment scenario served by
/// the scheduler simulation, through the stage's own `serve` (the function the study prices
/// with); None for other stages, the simple mode, or a run without a split.
pub fn of_point(s: &crate::spec::scenario::Scenario, names: &[String], c: &tunelab_search::Config) -> Option<TtftSplit> {
    if s.stage != crate::spec::scenario::Stage::Deployment || s.deployment.serving.is_static() {
        return None;
    }
    let st = crate::stages::deployment::serve(s, names, c).ok()?;
    (st.ttft_split.requests > 0).then_some(st.ttft_split)
}

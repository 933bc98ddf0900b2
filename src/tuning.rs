//! What the page runs: a steppable tuning (whatever drives it), several of them side by side,
//! and the time slicing that keeps the page responsive.
//!
//! Why slices rather than a loop: a browser tab has one main thread; a tuning that ran to the
//! end in one call would freeze the page. Each slice steps the lanes for a few milliseconds
//! measured by the caller's clock, then hands control back to the browser.

/// Plain data a view draws for one lane (one strategy's run).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    /// The strategy's registry name.
    pub strategy: String,
    /// Distinct evaluations spent.
    pub evaluations: usize,
    /// The budget in distinct evaluations.
    pub budget: usize,
    /// The best objective value, formatted as the CLI's JSON prints it.
    pub best: Option<String>,
    /// The best configuration, described as `name=value` pairs.
    pub best_config: Option<String>,
    /// The metric's name and unit, e.g. "time (ms)".
    pub metric: String,
    /// True once the lane stopped.
    pub done: bool,
    /// Why it stopped, once it has.
    pub stop_reason: Option<String>,
    /// (evaluation, best so far) at each improvement.
    pub convergence: Vec<(f64, f64)>,
    /// (evaluation, value) of each evaluated trial; None for failed or infeasible ones.
    pub trials: Vec<(f64, Option<f64>)>,
    /// Failed or infeasible evaluations.
    pub failed: usize,
    /// The strategy's own key/value state (generation, temperature ...), for teaching views.
    pub snapshot: Vec<(String, String)>,
}

/// A tuning the page can step.
pub trait Tuning {
    /// Evaluates at most `max_evaluations` new configurations; returns true once done.
    fn step(&mut self, max_evaluations: usize) -> bool;
    /// What the views draw now.
    fn progress(&self) -> Progress;
}

/// Several strategies on the same problem, stepped in turn.
pub struct Lanes {
    lanes: Vec<Box<dyn Tuning>>,
}

impl Lanes {
    /// Lanes over the given tunings (at least one).
    pub fn new(lanes: Vec<Box<dyn Tuning>>) -> Result<Lanes, String> {
        if lanes.is_empty() {
            return Err("choose at least one strategy".into());
        }
        Ok(Lanes { lanes })
    }

    /// True once every lane stopped.
    pub fn done(&mut self) -> bool {
        self.lanes.iter_mut().all(|l| l.step(0))
    }

    /// One evaluation in each lane that is not done; returns true once all are done.
    pub fn step_once(&mut self) -> bool {
        let mut all_done = true;
        for l in &mut self.lanes {
            all_done &= l.step(1);
        }
        all_done
    }

    /// Steps round-robin until all lanes are done or `slice_ms` has passed on `now`'s clock.
    /// Returns true once all are done.
    pub fn run_slice(&mut self, slice_ms: f64, now: &dyn Fn() -> f64) -> bool {
        let start = now();
        loop {
            if self.step_once() {
                return true;
            }
            if now() - start >= slice_ms {
                return false;
            }
        }
    }

    /// Progress of every lane, in order.
    pub fn progress(&self) -> Vec<Progress> {
        self.lanes.iter().map(|l| l.progress()).collect()
    }
}

/// Formats a best value exactly as serde_json writes an f64 (what `--json` output shows).
pub fn format_json_number(v: f64) -> String {
    serde_json::to_string(&v).unwrap_or_else(|_| "null".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    struct Counter {
        left: usize,
    }
    impl Tuning for Counter {
        fn step(&mut self, max: usize) -> bool {
            self.left -= max.min(self.left);
            self.left == 0
        }
        fn progress(&self) -> Progress {
            Progress { evaluations: 10 - self.left, budget: 10, ..Progress::default() }
        }
    }

    #[test]
    fn a_slice_stops_on_the_clock_and_resumes() {
        let mut lanes = Lanes::new(vec![Box::new(Counter { left: 10 }), Box::new(Counter { left: 10 })]).unwrap();
        let t = Cell::new(0.0);
        let now = || {
            t.set(t.get() + 1.0);
            t.get()
        };
        assert!(!lanes.run_slice(3.0, &now));
        let p = lanes.progress();
        assert_eq!(p[0].evaluations, p[1].evaluations);
        assert!(p[0].evaluations > 0 && p[0].evaluations < 10);
        assert!(lanes.run_slice(1e9, &now));
        assert!(lanes.done());
        assert_eq!(lanes.progress()[1].evaluations, 10);
    }

    #[test]
    fn no_lanes_is_an_error() {
        assert!(Lanes::new(vec![]).is_err());
    }

    #[test]
    fn numbers_format_like_json() {
        assert_eq!(format_json_number(1.5), "1.5");
        assert_eq!(format_json_number(2.0), "2.0");
    }
}

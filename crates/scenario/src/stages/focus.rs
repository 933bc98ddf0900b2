//! Focused local search: after the main strategy's budget, refine only the parameters of named
//! bottleneck operators around the best configuration found.
//!
//! Why a wrapper strategy rather than a second study: one study keeps one history, one
//! convergence trace and one budget, so charts and reports need no special case; the focus phase
//! is simply the tail of the run.

use tunelab_search::{Config, History, Rng, Snapshot, Strategy, Trial};

/// Proposals per focused batch.
const FOCUS_BATCH: usize = 8;

/// Runs `inner` for `main_budget` evaluations, then hill-climbs over the `focus` parameters.
pub struct Focused {
    inner: Box<dyn Strategy>,
    focus: Vec<usize>,
    main_budget: usize,
    focusing: bool,
}

impl Focused {
    /// Wraps `inner`; `focus` are parameter indices of the study's space.
    pub fn new(inner: Box<dyn Strategy>, focus: Vec<usize>, main_budget: usize) -> Self {
        Focused { inner, focus, main_budget, focusing: false }
    }
}

impl Strategy for Focused {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn ask(&mut self, h: &History, rng: &mut Rng) -> Vec<Config> {
        let spent = h.budget.saturating_sub(h.remaining);
        if !self.focusing && spent < self.main_budget && !self.inner.converged() {
            let asked = self.inner.ask(h, rng);
            // An exhausted inner strategy hands over to the focused phase early.
            if !asked.is_empty() {
                return asked;
            }
        }
        self.focusing = true;
        let Some(best) = h.best() else { return Vec::new() };
        // Hill climbing: every unseen one-level move of a focus parameter (built directly, not
        // from the whole space's neighbourhood, which is large in the operator stage).
        let params = h.space.params();
        let mut out: Vec<Config> = Vec::new();
        for &i in &self.focus {
            let Some(p) = params.get(i) else { continue };
            let (Some(levels), Some(l)) = (p.levels(), p.level_of(&best.config.0[i])) else { continue };
            let r = p.ordinal_rank(l);
            for nr in [r.wrapping_sub(1), r + 1] {
                if nr >= levels || out.len() >= FOCUS_BATCH {
                    continue;
                }
                let mut c = best.config.clone();
                c.0[i] = p.level_value(p.level_at_rank(nr));
                if h.space.contains(&c) && !h.is_seen(&c) {
                    out.push(c);
                }
            }
        }
        // At a local optimum, jump: re-sample the focus parameters at random.
        for _ in 0..FOCUS_BATCH * 8 {
            if out.len() >= FOCUS_BATCH / 2 {
                break;
            }
            let mut c = best.config.clone();
            for &i in &self.focus {
                if let Some(p) = params.get(i) {
                    if rng.chance(0.5) {
                        c.0[i] = p.from_unit(rng.unit());
                    }
                }
            }
            if c != best.config && h.space.contains(&c) && !h.is_seen(&c) && !out.contains(&c) {
                out.push(c);
            }
        }
        out
    }

    fn tell(&mut self, h: &History, trials: &[Trial]) {
        if !self.focusing {
            self.inner.tell(h, trials);
        }
    }

    fn converged(&self) -> bool {
        // The inner rule ends the main phase early (see `ask`); the focused phase runs its budget.
        false
    }

    fn snapshot(&self) -> Snapshot {
        let mut s = self.inner.snapshot();
        s.insert("phase".into(), if self.focusing { "focused local search" } else { "main search" }.into());
        s.insert("focus_params".into(), self.focus.len().into());
        s
    }
}

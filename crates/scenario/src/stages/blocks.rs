//! Block-wise search: one sub-study per block of parameters (one operator's tiling, the fusion
//! choices), in sequence, each starting from the best configuration found so far.
//!
//! Why: tiling every distinct operator of a model at once is a space of hundreds of parameters
//! in which almost every random point has some infeasible tile. The model's time is a sum over
//! operators, so the problem separates: tuning one operator's block with the others fixed is
//! exactly that operator's tiling problem. Each block gets a share of the budget proportional to
//! its operator's share of the baseline time (bottlenecks first), and the chosen strategy runs
//! inside each block on the block's own sub-space, so a GA still evolves tiles and annealing
//! still anneals, while the study keeps one history, one trace and one budget.

use std::collections::HashMap;
use tunelab_search::strategies::by_name;
use tunelab_search::{Config, History, Rng, Snapshot, Space, Strategy, Trial};

/// One block: parameter indices of the full space and its evaluation budget.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub label: String,
    pub params: Vec<usize>,
    pub budget: usize,
}

/// Runs a fresh instance of the named strategy on each block in turn.
pub struct Blockwise {
    name: String,
    options: serde_json::Value,
    blocks: Vec<Block>,
    current: usize,
    /// Evaluations spent when the current block started.
    block_start: usize,
    /// End a block when the inner strategy's own stopping rule fires; stop after one pass.
    early_stop: bool,
    /// True once every block has had its turn (later passes refine again from the best).
    wrapped: bool,
    inner: Option<Box<dyn Strategy>>,
    sub_space: Option<Space>,
    /// The full configuration the current block's proposals are embedded in.
    incumbent: Option<Config>,
    sub_trials: Vec<Trial>,
    sub_seen: HashMap<Config, usize>,
    stale: usize,
    /// Evaluated first: every block starts from it until something better is found.
    baseline: Config,
    /// The registry name of the inner strategy (Strategy::name needs a 'static str).
    static_name: &'static str,
}

impl Blockwise {
    /// Blocks with a zero budget are skipped (their parameters stay at the baseline).
    pub fn new(name: &str, options: &serde_json::Value, blocks: Vec<Block>, baseline: Config, early_stop: bool) -> Result<Blockwise, String> {
        let probe = by_name(name, options)?;
        let blocks: Vec<Block> = blocks.into_iter().filter(|b| b.budget > 0 && !b.params.is_empty()).collect();
        Ok(Blockwise {
            name: name.into(), options: options.clone(), blocks, current: 0, block_start: 0, early_stop, wrapped: false, inner: None, sub_space: None,
            incumbent: None, sub_trials: Vec::new(), sub_seen: HashMap::new(), stale: 0, baseline, static_name: probe.name(),
        })
    }

    /// Total budget of one pass over the blocks.
    pub fn budget(&self) -> usize {
        self.blocks.iter().map(|b| b.budget).sum()
    }

    fn start_block(&mut self, h: &History) -> bool {
        if self.blocks.is_empty() {
            return false;
        }
        for _ in 0..=self.blocks.len() {
            if self.current >= self.blocks.len() {
                // A full pass is done: start another from the best found, while budget remains.
                self.current = 0;
                self.wrapped = true;
            }
            let b = &self.blocks[self.current];
            let params = b.params.iter().filter_map(|&i| h.space.params().get(i).cloned()).collect();
            if let (Ok(space), Ok(inner)) = (Space::new(params, &[]), by_name(&self.name, &self.options)) {
                let base = h.best().map(|t| t.config.clone()).unwrap_or_else(|| self.baseline.clone());
                self.sub_space = Some(space);
                self.inner = Some(inner);
                self.sub_trials.clear();
                self.sub_seen.clear();
                self.stale = 0;
                // The incumbent's own block values are the sub-study's first (free) trial.
                if let Some(t) = h.trial_of(&base) {
                    let sub = self.project(&base);
                    self.sub_seen.insert(sub.clone(), 0);
                    let mut first = Trial { id: 0, config: sub, ..t.clone() };
                    first.values.truncate(1);
                    self.sub_trials.push(first);
                }
                self.incumbent = Some(base);
                self.block_start = h.budget.saturating_sub(h.remaining);
                return true;
            }
            self.current += 1;
        }
        false
    }

    fn project(&self, c: &Config) -> Config {
        Config(self.blocks[self.current].params.iter().map(|&i| c.0[i].clone()).collect())
    }

    fn embed(&self, sub: &Config) -> Option<Config> {
        let mut c = self.incumbent.clone()?;
        for (k, &i) in self.blocks[self.current].params.iter().enumerate() {
            c.0[i] = sub.0.get(k)?.clone();
        }
        Some(c)
    }

    /// (remaining, budget) of the current block, for the sub-study's history.
    fn sub_budget(&self, h: &History) -> (usize, usize) {
        let spent = h.budget.saturating_sub(h.remaining);
        let budget = self.blocks[self.current].budget;
        let used = spent.saturating_sub(self.block_start).min(budget);
        (budget - used, budget)
    }
}

impl Strategy for Blockwise {
    fn name(&self) -> &'static str {
        self.static_name
    }

    fn ask(&mut self, h: &History, rng: &mut Rng) -> Vec<Config> {
        if !h.is_seen(&self.baseline) {
            return vec![self.baseline.clone()];
        }
        // Bounded: every block may be found stale once per pass, and passes are bounded too.
        for _ in 0..2 * self.blocks.len() + 2 {
            let spent = h.budget.saturating_sub(h.remaining);
            let block_over = self.current < self.blocks.len()
                && (spent.saturating_sub(self.block_start) >= self.blocks[self.current].budget
                    || (self.early_stop && self.inner.as_ref().is_some_and(|i| i.converged())));
            if self.inner.is_none() || block_over || self.stale >= 3 {
                if self.inner.is_some() {
                    self.current += 1;
                    self.inner = None;
                }
                if !self.start_block(h) {
                    return Vec::new();
                }
            }
            let (Some(space), Some(mut inner)) = (self.sub_space.take(), self.inner.take()) else { return Vec::new() };
            let asked = {
                let (remaining, budget) = self.sub_budget(h);
                let sub = History::new(&space, &h.metrics[..1.min(h.metrics.len())], &self.sub_trials, &self.sub_seen, remaining, budget);
                inner.ask(&sub, rng)
            };
            self.sub_space = Some(space);
            self.inner = Some(inner);
            let full: Vec<Config> = asked.iter().filter_map(|s| self.embed(s)).collect();
            if full.iter().any(|c| !h.is_seen(c)) {
                self.stale = 0;
                return full;
            }
            // Nothing new from this block: after a few tries, move on.
            self.stale += 1;
            if asked.is_empty() {
                self.stale = 3;
            }
        }
        Vec::new()
    }

    fn tell(&mut self, h: &History, trials: &[Trial]) {
        let Some(inc) = self.incumbent.clone() else { return };
        if self.current >= self.blocks.len() {
            return;
        }
        let idx = &self.blocks[self.current].params;
        let mut batch = Vec::new();
        for t in trials {
            // Only points of this block's sub-problem (others fixed at the incumbent) count.
            let inside = t.config.0.iter().zip(&inc.0).enumerate().all(|(i, (a, b))| a == b || idx.contains(&i));
            if !inside {
                continue;
            }
            let sub = self.project(&t.config);
            let id = match self.sub_seen.get(&sub) {
                Some(&i) => i,
                None => {
                    let i = self.sub_trials.len();
                    let mut st = t.clone();
                    st.id = i;
                    st.config = sub.clone();
                    st.values.truncate(1);
                    self.sub_seen.insert(sub, i);
                    self.sub_trials.push(st);
                    i
                }
            };
            batch.push(self.sub_trials[id].clone());
        }
        if let (Some(space), Some(mut inner)) = (self.sub_space.take(), self.inner.take()) {
            {
                let (remaining, budget) = self.sub_budget(h);
                let sub = History::new(&space, &h.metrics[..1.min(h.metrics.len())], &self.sub_trials, &self.sub_seen, remaining, budget);
                inner.tell(&sub, &batch);
            }
            self.sub_space = Some(space);
            self.inner = Some(inner);
        }
    }

    fn converged(&self) -> bool {
        // With early stopping, one pass over every block is the run.
        self.early_stop && self.wrapped
    }

    fn snapshot(&self) -> Snapshot {
        let mut s = self.inner.as_ref().map(|i| i.snapshot()).unwrap_or_default();
        if let Some(b) = self.blocks.get(self.current) {
            s.insert("block".into(), b.label.clone().into());
        }
        s.insert("block_index".into(), self.current.into());
        s.insert("blocks".into(), self.blocks.len().into());
        s
    }
}

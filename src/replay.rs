//! A lane that replays real measured tuning data (a Kernel Tuner cache) with one of the engine's
//! strategies: the same `Study` the CLI's `tunelab replay` runs, stepped one evaluation at a time.

use crate::tuning::{format_json_number, Progress, Tuning};
use std::rc::Rc;
use tunelab_search::kernel_tuner::KernelTunerCache;
use tunelab_search::strategies::by_name;
use tunelab_search::{Rng, Strategy, Study, StudyOptions, TrialState};

/// The bundled cache, served beside the page.
pub const BUNDLED_CACHE_URL: &str = "kernel-tuner/convolution_RTX_2080_Ti.json";

/// One strategy replaying one cache.
pub struct Replay {
    cache: Rc<KernelTunerCache>,
    study: Study,
    strategy: Box<dyn Strategy>,
    rng: Rng,
}

impl Replay {
    /// A replay of `cache` by `strategy` with `budget` distinct evaluations from `seed`.
    pub fn new(cache: Rc<KernelTunerCache>, strategy: &str, budget: usize, seed: u64) -> Result<Replay, String> {
        let strategy = by_name(strategy, &serde_json::json!({}))?;
        let study = Study::new(cache.space.clone(), vec![cache.metric()], StudyOptions::budget(budget))?;
        Ok(Replay { cache, study, strategy, rng: Rng::seed_from_u64(seed) })
    }

    /// The underlying study (for tests and exports).
    pub fn study(&self) -> &Study {
        &self.study
    }
}

impl Tuning for Replay {
    fn step(&mut self, max_evaluations: usize) -> bool {
        let target = self.study.evaluations() + max_evaluations;
        while !self.study.is_done() && self.study.evaluations() < target {
            let mut objective = self.cache.objective();
            self.study.step(self.strategy.as_mut(), &mut objective, &mut self.rng);
        }
        self.study.is_done()
    }

    fn progress(&self) -> Progress {
        let s = &self.study;
        let metric = &s.metrics()[0];
        Progress {
            strategy: self.strategy.name().to_string(),
            evaluations: s.evaluations(),
            budget: s.options().budget,
            best: s.best_value().map(format_json_number),
            best_config: s.best().map(|t| t.config.describe(s.space().names())),
            metric: format!("{} ({})", metric.name, metric.unit),
            done: s.is_done(),
            stop_reason: s.stop_reason().map(|r| format!("{r:?}").to_lowercase()),
            convergence: s.convergence().iter().map(|&(e, v)| (e as f64, v)).collect(),
            trials: s.trials().iter().filter(|t| !t.warm).map(|t| (t.evaluation as f64, t.value())).collect(),
            failed: s.trials().iter().filter(|t| t.state != TrialState::Ok).count(),
            snapshot: s
                .snapshot(self.strategy.as_ref())
                .into_iter()
                .map(|(k, v)| (k, v.to_string()))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache() -> Rc<KernelTunerCache> {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/kernel-tuner/convolution_RTX_2080_Ti.json")).unwrap();
        Rc::new(KernelTunerCache::parse(&text).unwrap())
    }

    #[test]
    fn stepping_in_pieces_gives_the_same_result_as_one_run() {
        let c = cache();
        let mut a = Replay::new(c.clone(), "random", 40, 7).unwrap();
        while !a.step(3) {}
        let mut b = Replay::new(c, "random", 40, 7).unwrap();
        b.step(1000);
        assert_eq!(a.progress(), b.progress());
        assert_eq!(a.progress().evaluations, 40);
        assert!(a.progress().best.is_some());
    }

    #[test]
    fn unknown_strategy_is_reported() {
        let e = Replay::new(cache(), "nope", 10, 0).err().unwrap();
        assert!(e.contains("unknown strategy"), "{e}");
    }
}

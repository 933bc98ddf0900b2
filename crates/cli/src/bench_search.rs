//! Search-engine benchmark figures for `tunelab bench`: the ask+tell overhead per trial of every
//! registered strategy, and the wall time of 200-evaluation `bayes` and `auto` runs over a
//! 10,000-point space.
//!
//! The objective is a trivial closure, so what is timed is the strategy and the study's
//! bookkeeping. Figures are printed, never asserted: timing depends on the machine.

use std::time::Instant;
use tunelab_search::strategies::by_name;
use tunelab_search::{Config, FnObjective, Metric, Outcome, Param, Rng, Space, Study, StudyOptions};

/// A 10,000-point product space (four integer parameters of ten levels each).
fn space() -> Option<Space> {
    Space::new((0..4).map(|i| Param::int(&format!("x{i}"), 0, 9, 1)).collect(), &[]).ok()
}

fn cost(c: &Config) -> Outcome {
    let v: f64 = c.0.iter().enumerate().map(|(i, x)| (x.as_f64().unwrap_or(0.0) - 3.0 - i as f64).powi(2)).sum();
    Outcome::Ok(vec![v])
}

/// Runs `name` for `budget` evaluations; returns (seconds, evaluations), or None if the
/// strategy is not registered.
fn time_run(name: &str, budget: usize) -> Option<(f64, usize)> {
    let mut s = by_name(name, &serde_json::json!({})).ok()?;
    let metrics = vec![Metric::minimize("latency", "ms")];
    let mut study = Study::new(space()?, metrics.clone(), StudyOptions::budget(budget)).ok()?;
    let mut obj = FnObjective::new(metrics, cost);
    let mut rng = Rng::seed_from_u64(1);
    let t0 = Instant::now();
    study.run(s.as_mut(), &mut obj, &mut rng);
    Some((t0.elapsed().as_secs_f64(), study.evaluations().max(1)))
}

/// Evaluations timed per strategy: model-based strategies refit a surrogate on the history at
/// every ask, so their per-trial cost is measured at the budgets they are used with.
fn timed_budget(name: &str) -> usize {
    match name {
        "bayes" | "tpe" | "auto" => 200,
        "rl" | "nsga2" => 1_000,
        _ => 2_000,
    }
}

/// Benchmark figures as (name, value) pairs: the ask+tell overhead per trial of every
/// registered strategy, and the wall time of a 200-evaluation `bayes` and `auto` run over a
/// 10,000-point space.
pub fn figures() -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    for (name, _) in tunelab_search::strategies::STRATEGIES {
        // Warm up once (allocation, caches), then time the run.
        let _ = time_run(name, 20);
        let budget = timed_budget(name);
        if let Some((secs, n)) = time_run(name, budget) {
            let us = secs * 1e6 / n as f64;
            out.push((format!("search.{name}.ask_tell_us_per_trial_over_{n}"), serde_json::json!((us * 100.0).round() / 100.0)));
            if budget == 200 {
                out.push((format!("search.{name}.200_evals_10k_space_ms"), serde_json::json!((secs * 1e5).round() / 100.0)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// Every registered strategy gets a figure (names, not timings, are checked).
    #[test]
    fn every_strategy_has_a_per_trial_figure() {
        for (name, _) in tunelab_search::strategies::STRATEGIES {
            assert!(super::time_run(name, 5).is_some(), "{name}");
        }
        assert!(super::timed_budget("auto") == 200 && super::timed_budget("random") == 2_000);
    }
}

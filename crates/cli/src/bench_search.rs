//! Search-engine benchmark figures for `tunelab bench`: the ask+tell overhead per trial of the
//! main strategies, and the wall time of a Gaussian-process run over a 10,000-point space.
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

/// Benchmark figures as (name, value) pairs; strategies not registered are skipped.
pub fn figures() -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    for name in ["random", "genetic", "annealing", "rl"] {
        // Warm up once (allocation, caches), then time 2,000 evaluations.
        let _ = time_run(name, 50);
        if let Some((secs, n)) = time_run(name, 2_000) {
            let us = secs * 1e6 / n as f64;
            out.push((format!("search.{name}.ask_tell_us_per_trial"), serde_json::json!((us * 100.0).round() / 100.0)));
        }
    }
    if let Some((secs, n)) = time_run("bayes", 200) {
        out.push(("search.bayes.200_evals_10k_space_ms".into(), serde_json::json!((secs * 1e5).round() / 100.0)));
        out.push(("search.bayes.evaluations".into(), serde_json::json!(n)));
    }
    out
}

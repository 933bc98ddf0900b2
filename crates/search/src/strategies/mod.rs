//! The strategies, one per file, and the registry that builds them by name.

pub mod bo;
pub mod gp;
pub mod grid;
pub mod random;
pub mod rl;
pub mod tpe;

use crate::strategy::Strategy;

/// Registry names with a one-line description, in the order the CLI and the app list them.
pub const STRATEGIES: &[(&str, &str)] = &[
    ("random", "uniform random sampling without repeats"),
    ("grid", "exhaustive, lazily enumerated grid"),
    ("bayes", "Bayesian optimisation: Gaussian process (Matern 5/2) with expected improvement"),
    ("tpe", "tree-structured Parzen estimator: good/bad densities per parameter"),
    ("rl", "REINFORCE over per-parameter softmax policies with a moving baseline"),
];

/// Builds a strategy by registry name. `options` is the strategy's own JSON options object
/// (unknown keys are ignored; missing ones take defaults).
pub fn by_name(name: &str, options: &serde_json::Value) -> Result<Box<dyn Strategy>, String> {
    let _ = options;
    match name {
        "random" => Ok(Box::new(random::RandomSearch)),
        "grid" => Ok(Box::new(grid::GridSearch::default())),
        "bayes" => Ok(Box::new(bo::Bayes::from_options(options)?)),
        "tpe" => Ok(Box::new(tpe::Tpe::from_options(options))),
        "rl" => Ok(Box::new(rl::Reinforce::from_options(options))),
        _ => Err(format!(
            "unknown strategy '{name}'; known: {}",
            STRATEGIES.iter().map(|s| s.0).collect::<Vec<_>>().join(", ")
        )),
    }
}

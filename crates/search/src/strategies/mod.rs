//! The strategies, one per file, and the registry that builds them by name.

pub mod annealing;
pub mod auto;
pub mod bo;
pub mod candidates;
pub mod gp;
pub mod genetic;
pub mod grid;
pub mod local;
pub mod nsga2;
pub mod parzen;
pub mod random;
pub mod rl;
pub mod tpe;

use crate::strategy::Strategy;

/// Registry names with a one-line description, in the order the CLI and the app list them.
pub const STRATEGIES: &[(&str, &str)] = &[
    ("random", "uniform random sampling without repeats"),
    ("grid", "exhaustive, lazily enumerated grid"),
    ("genetic", "genetic algorithm: tournament, crossover, rank-step mutation, elitism"),
    ("annealing", "simulated annealing with a geometric temperature schedule and restarts"),
    ("local", "focused local search around the incumbent (option: intensity)"),
    ("nsga2", "NSGA-II: Pareto fronts and crowding distance over several metrics"),
    ("auto", "online portfolio: Bayesian, TPE, annealing and random take turns by credit on the shared history; local search joins them for the last 15%"),
    ("bayes", "Bayesian optimisation: Gaussian process (Matern 5/2) with expected improvement"),
    ("tpe", "tree-structured Parzen estimator: joint good/bad densities, best ratio of samples"),
    ("rl", "REINFORCE over per-parameter softmax policies with a moving baseline"),
];

/// Checks a strategy name and its options as `by_name` would, without building the strategy:
/// the same errors (an unknown name, Bayes' refused options), and nothing else links the
/// strategies' search code (the page's first-load module validates scenarios with this; its
/// Web Workers build and run the strategies).
pub fn check(name: &str, options: &serde_json::Value) -> Result<(), String> {
    match name {
        "bayes" => bo::Bayes::from_options(options).map(|_| ()),
        _ if STRATEGIES.iter().any(|s| s.0 == name) => Ok(()),
        _ => Err(format!(
            "unknown strategy '{name}'; known: {}",
            STRATEGIES.iter().map(|s| s.0).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Builds a strategy by registry name. `options` is the strategy's own JSON options object
/// (unknown keys are ignored; missing ones take defaults).
pub fn by_name(name: &str, options: &serde_json::Value) -> Result<Box<dyn Strategy>, String> {
    match name {
        "random" => Ok(Box::new(random::RandomSearch)),
        "grid" => Ok(Box::new(grid::GridSearch::default())),
        "genetic" => Ok(Box::new(genetic::Genetic::from_options(options))),
        "annealing" => Ok(Box::new(annealing::Annealing::from_options(options))),
        "local" => Ok(Box::new(local::LocalSearch::from_options(options))),
        "nsga2" => Ok(Box::new(nsga2::Nsga2::from_options(options))),
        "auto" => Ok(Box::new(auto::Auto::from_options(options))),
        "bayes" => Ok(Box::new(bo::Bayes::from_options(options)?)),
        "tpe" => Ok(Box::new(tpe::Tpe::from_options(options))),
        "rl" => Ok(Box::new(rl::Reinforce::from_options(options))),
        _ => Err(format!(
            "unknown strategy '{name}'; known: {}",
            STRATEGIES.iter().map(|s| s.0).collect::<Vec<_>>().join(", ")
        )),
    }
}

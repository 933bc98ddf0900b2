//! The strategies, one per file, and the registry that builds them by name.

pub mod grid;
pub mod random;

use crate::strategy::Strategy;

/// Registry names with a one-line description, in the order the CLI and the app list them.
pub const STRATEGIES: &[(&str, &str)] = &[
    ("random", "uniform random sampling without repeats"),
    ("grid", "exhaustive, lazily enumerated grid"),
];

/// Builds a strategy by registry name. `options` is the strategy's own JSON options object
/// (unknown keys are ignored; missing ones take defaults).
pub fn by_name(name: &str, options: &serde_json::Value) -> Result<Box<dyn Strategy>, String> {
    let _ = options;
    match name {
        "random" => Ok(Box::new(random::RandomSearch)),
        "grid" => Ok(Box::new(grid::GridSearch::default())),
        _ => Err(format!(
            "unknown strategy '{name}'; known: {}",
            STRATEGIES.iter().map(|s| s.0).collect::<Vec<_>>().join(", ")
        )),
    }
}

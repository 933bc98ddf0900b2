//! `tunelab replay`: run strategies over a Kernel Tuner cache, as Kernel Tuner's simulation mode
//! does, and compare the best found with the cache's optimum.
//!
//! The budget counts distinct configurations evaluated (failed ones included); a proposal seen
//! before is free. The whole budget is spent unless `--early-stop` lets a strategy's own rule end
//! a run, so figures compare with Kernel Tuner's published ones.

use tunelab_search::kernel_tuner::KernelTunerCache;
use tunelab_search::strategies::by_name;
use tunelab_search::{Rng, Study, StudyOptions};

/// Arguments of `tunelab replay`.
#[derive(clap::Args)]
pub struct Args {
    /// The Kernel Tuner cache file (JSON).
    #[arg(long, value_name = "FILE")]
    cache: String,
    /// Strategy name(s), comma-separated (see `tunelab strategies`).
    #[arg(long, value_name = "NAME[,NAME...]")]
    strategy: String,
    /// Evaluation budget(s), comma-separated.
    #[arg(long, value_name = "N[,N...]")]
    budget: String,
    /// Seeds: an inclusive range A-B or one seed N.
    #[arg(long, value_name = "A-B", default_value = "0-9")]
    seeds: String,
    /// One JSON line per run instead of the summary table.
    #[arg(long)]
    json: bool,
    /// Let a strategy's own stopping rule end a run before the budget is spent.
    #[arg(long)]
    early_stop: bool,
    /// Strategy options as a JSON object.
    #[arg(long, value_name = "JSON")]
    options: Option<String>,
}

/// One replayed run.
struct RunResult {
    best: Option<f64>,
    ratio: Option<f64>,
    evaluations: usize,
    failed: usize,
}

/// Entry point of the subcommand.
pub fn main(a: Args) -> Result<(), String> {
    let path = a.cache.as_str();
    let names: Vec<&str> = a.strategy.split(',').map(str::trim).collect();
    let budgets = a
        .budget
        .split(',')
        .map(|b| match b.trim().parse::<usize>() {
            Ok(0) => Err("--budget must be at least 1 evaluation, got 0".to_string()),
            Ok(n) => Ok(n),
            Err(_) => Err(format!("--budget expects a positive integer, got '{b}'")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let seeds = parse_seeds(&a.seeds)?;
    let options: serde_json::Value = match a.options.as_deref() {
        Some(o) => serde_json::from_str(o).map_err(|e| format!("--options is not valid JSON: {e}"))?,
        None => serde_json::json!({}),
    };
    // Check every name before spending time on the file.
    for n in &names {
        by_name(n, &options)?;
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read cache '{path}': {e}"))?;
    let cache = KernelTunerCache::parse(&text).map_err(|e| format!("cache '{path}': {e}"))?;
    let optimum = cache.optimum().ok_or(format!("cache '{path}': every configuration failed; there is no optimum"))?;
    let json = a.json;
    if !json {
        println!(
            "{} on {}: {} configurations ({} failed), optimum {optimum} {}",
            if cache.kernel_name.is_empty() { "kernel" } else { &cache.kernel_name },
            if cache.device_name.is_empty() { "an unnamed device" } else { &cache.device_name },
            cache.len(),
            cache.failed(),
            cache.metric().unit
        );
        println!("{:<10} {:>6} {:>6} {:>8} {:>8} {:>8} {:>8}", "strategy", "budget", "seeds", "mean", "min", "max", "failed");
    }
    for name in &names {
        for &budget in &budgets {
            let mut ratios = Vec::new();
            let mut failed_total = 0;
            for &seed in &seeds {
                let r = run_one(&cache, name, &options, budget, seed, a.early_stop)?;
                failed_total += r.failed;
                if json {
                    let line = serde_json::json!({
                        "strategy": name, "budget": budget, "seed": seed, "best": r.best,
                        "optimum": optimum, "ratio": r.ratio, "evaluations": r.evaluations,
                        "failed": r.failed, "kernel": cache.kernel_name, "device": cache.device_name,
                    });
                    println!("{line}");
                }
                ratios.push(r.ratio.unwrap_or(f64::INFINITY));
            }
            if !json {
                let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
                let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
                let max = ratios.iter().copied().fold(0.0, f64::max);
                let failed = failed_total as f64 / seeds.len() as f64;
                println!("{name:<10} {budget:>6} {:>6} {mean:>8.4} {min:>8.4} {max:>8.4} {failed:>8.1}", seeds.len());
            }
        }
    }
    Ok(())
}

fn run_one(cache: &KernelTunerCache, name: &str, options: &serde_json::Value, budget: usize, seed: u64, early_stop: bool) -> Result<RunResult, String> {
    let mut strategy = by_name(name, options)?;
    let mut opts = StudyOptions::budget(budget);
    opts.strategy_stop = early_stop;
    let mut study = Study::new(cache.space.clone(), vec![cache.metric()], opts)?;
    let mut objective = cache.objective();
    let mut rng = Rng::seed_from_u64(seed);
    study.run(strategy.as_mut(), &mut objective, &mut rng);
    let best = study.best_value();
    let ratio = match (best, cache.optimum()) {
        (Some(b), Some(o)) if cache.minimize && o > 0.0 => Some(b / o),
        (Some(b), Some(o)) if !cache.minimize && b > 0.0 => Some(o / b),
        (Some(b), Some(o)) if b == o => Some(1.0),
        _ => None,
    };
    Ok(RunResult { best, ratio, evaluations: study.evaluations(), failed: study.failed() })
}

/// "A-B" (inclusive) or a single seed "N".
fn parse_seeds(s: &str) -> Result<Vec<u64>, String> {
    let bad = || format!("--seeds expects A-B or N with non-negative integers, got '{s}'");
    let (a, b) = match s.split_once('-') {
        Some((a, b)) => (a.trim().parse::<u64>().map_err(|_| bad())?, b.trim().parse::<u64>().map_err(|_| bad())?),
        None => {
            let n = s.trim().parse::<u64>().map_err(|_| bad())?;
            (n, n)
        }
    };
    if a > b {
        return Err(format!("--seeds range '{s}' is empty: {a} is above {b}"));
    }
    if b - a >= 100_000 {
        return Err(format!("--seeds range '{s}' is too long (at most 100000 seeds)"));
    }
    Ok((a..=b).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_parse_as_ranges_or_single_values_and_bad_ones_are_named() {
        assert_eq!(parse_seeds("0-3").unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(parse_seeds("7").unwrap(), vec![7]);
        assert!(parse_seeds("3-1").unwrap_err().contains("empty"));
        assert!(parse_seeds("a-b").unwrap_err().contains("--seeds"));
        assert!(parse_seeds("-1").is_err());
    }

    #[test]
    fn bad_arguments_are_errors_not_panics() {
        let run = |s: &str| crate::args::parse::<Args>(s).and_then(main);
        assert!(run("--cache x.json --strategy nope --budget 5").unwrap_err().contains("unknown strategy 'nope'"));
        assert!(run("--cache x.json --strategy random --budget 0").unwrap_err().contains("at least 1"));
        assert!(run("--cache /nonexistent.json --strategy random --budget 5").unwrap_err().contains("cannot read"));
        assert!(run("--strategy random --budget 5").unwrap_err().contains("--cache"));
    }
}

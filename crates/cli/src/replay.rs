//! `tunelab replay`: run strategies over one or several Kernel Tuner caches, as Kernel Tuner's
//! simulation mode does, and compare the best found with each cache's optimum.
//!
//! The budget counts distinct configurations evaluated (failed ones included); a proposal seen
//! before is free. The whole budget is spent unless `--early-stop` lets a strategy's own rule end
//! a run, so figures compare with Kernel Tuner's published ones. Caches load as `.json` or
//! `.json.gz` (benchmark_hub ships them gzipped); a directory stands for the caches in it.
//!
//! Every (file, strategy, budget, seed) run is independent and deterministic, so the runs are
//! spread over the cores (rayon) and collected in order: the figures are identical to a serial
//! run (`--jobs 1`). Each run goes through `kernel_tuner::replay`, the function the browser's
//! race uses too.

use rayon::prelude::*;
use std::path::{Path, PathBuf};
use tunelab_search::kernel_tuner::{load_bytes, replay, KernelTunerCache, Replay};
use tunelab_search::strategies::{by_name, STRATEGIES};

/// Arguments of `tunelab replay`.
#[derive(clap::Args)]
pub struct Args {
    /// Kernel Tuner cache files or T4 results files (.json or .json.gz), or directories holding them.
    #[arg(long, value_name = "DIR_OR_FILE", num_args = 1.., required = true)]
    cache: Vec<String>,
    /// Strategy name(s), comma-separated (see `tunelab strategies`); default: every
    /// single-objective strategy.
    #[arg(long, value_name = "NAME[,NAME...]")]
    strategy: Option<String>,
    /// Evaluation budget(s), comma-separated.
    #[arg(long, value_name = "N[,N...]", default_value = "50,100,200")]
    budget: String,
    /// Seeds: an inclusive range A-B or one seed N.
    #[arg(long, value_name = "A-B", default_value = "0-9")]
    seeds: String,
    /// One JSON line per run instead of the tables.
    #[arg(long)]
    json: bool,
    /// Let a strategy's own stopping rule end a run before the budget is spent.
    #[arg(long)]
    early_stop: bool,
    /// Strategy options as a JSON object.
    #[arg(long, value_name = "JSON")]
    options: Option<String>,
    /// Worker threads (default: every core; 1 runs serially, with the same figures).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
}

/// Strategies that make sense on a one-metric cache (grid walks the space in order, nsga2 is
/// for several metrics).
const DEFAULT_SKIP: &[&str] = &["grid", "nsga2"];

/// Most seeds in one range.
const MAX_SEEDS: u64 = 100_000;
/// Most runs in one invocation (files x strategies x budgets x seeds).
const MAX_RUNS: usize = 1_000_000;

/// A loaded cache with its display name (file name without .json/.json.gz).
struct Loaded {
    name: String,
    cache: KernelTunerCache,
    /// Kernel Tuner's own best figure per budget, when `baselines.json` beside the file has it.
    baseline: Vec<(usize, f64)>,
}

/// Entry point of the subcommand.
pub fn main(a: Args) -> Result<(), String> {
    let budgets = parse_list(&a.budget, "--budget")?;
    let seeds = parse_seeds(&a.seeds)?;
    let options: serde_json::Value = match a.options.as_deref() {
        Some(o) => serde_json::from_str(o).map_err(|e| format!("--options is not valid JSON: {e}"))?,
        None => serde_json::json!({}),
    };
    let names: Vec<String> = match &a.strategy {
        Some(s) => s.split(',').map(|n| n.trim().to_string()).filter(|n| !n.is_empty()).collect(),
        None => STRATEGIES.iter().map(|s| s.0).filter(|n| !DEFAULT_SKIP.contains(n)).map(String::from).collect(),
    };
    if names.is_empty() {
        return Err("--strategy names no strategy".into());
    }
    // Check every name before spending time on the files.
    for n in &names {
        by_name(n, &options)?;
    }
    let files = expand(&a.cache)?;
    let runs = files.len() * names.len() * budgets.len() * seeds.len();
    if runs > MAX_RUNS {
        return Err(format!("{runs} runs requested (files x strategies x budgets x seeds); at most {MAX_RUNS}"));
    }
    let loaded = files.par_iter().map(|p| load(p)).collect::<Vec<_>>().into_iter().collect::<Result<Vec<_>, _>>()?;
    // Every run, in a fixed order; rayon's ordered collect keeps it.
    let mut jobs = Vec::with_capacity(runs);
    for f in 0..loaded.len() {
        for s in 0..names.len() {
            for &b in &budgets {
                for &seed in &seeds {
                    jobs.push((f, s, b, seed));
                }
            }
        }
    }
    let work = |&(f, s, b, seed): &(usize, usize, usize, u64)| replay(&loaded[f].cache, &names[s], &options, b, seed, a.early_stop);
    let results: Vec<Result<Replay, String>> = match a.jobs {
        Some(0) => return Err("--jobs must be at least 1".into()),
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map_err(|e| format!("cannot start {n} worker threads: {e}"))?
            .install(|| jobs.par_iter().map(work).collect()),
        None => jobs.par_iter().map(work).collect(),
    };
    let results = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    if a.json {
        for (&(f, s, b, seed), r) in jobs.iter().zip(&results) {
            let c = &loaded[f].cache;
            let line = serde_json::json!({
                "file": loaded[f].name, "strategy": names[s], "budget": b, "seed": seed, "best": r.best,
                "optimum": c.optimum(), "ratio": r.ratio, "evaluations": r.evaluations,
                "failed": r.failed, "kernel": c.kernel_name, "device": c.device_name,
            });
            println!("{line}");
        }
        return Ok(());
    }
    let table = Table::new(&loaded, &names, &budgets, seeds.len(), &results);
    print!("{}", table.render(&loaded, &names, &budgets, seeds.len()));
    Ok(())
}

/// Mean ratio per (file, strategy, budget), with mean failures.
struct Table {
    /// [file][strategy][budget] -> (mean ratio, min, max, mean failed)
    cells: Vec<Vec<Vec<(f64, f64, f64, f64)>>>,
}

impl Table {
    fn new(files: &[Loaded], names: &[String], budgets: &[usize], seeds: usize, results: &[Replay]) -> Table {
        let mut it = results.chunks(seeds);
        let cells = files
            .iter()
            .map(|_| {
                names
                    .iter()
                    .map(|_| {
                        budgets
                            .iter()
                            .map(|_| {
                                let runs = it.next().unwrap_or(&[]);
                                // A run where everything failed counts as infinitely far.
                                let r: Vec<f64> = runs.iter().map(|r| r.ratio.unwrap_or(f64::INFINITY)).collect();
                                let n = r.len().max(1) as f64;
                                let mean = r.iter().sum::<f64>() / n;
                                let min = r.iter().copied().fold(f64::INFINITY, f64::min);
                                let max = r.iter().copied().fold(0.0, f64::max);
                                let failed = runs.iter().map(|r| r.failed as f64).sum::<f64>() / n;
                                (mean, min, max, failed)
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        Table { cells }
    }

    fn render(&self, files: &[Loaded], names: &[String], budgets: &[usize], seeds: usize) -> String {
        let mut out = String::new();
        let head = |out: &mut String| {
            *out += &format!("  {:<12}", "strategy");
            for b in budgets {
                *out += &format!(" {:>22}", format!("budget {b}"));
            }
            *out += "\n";
        };
        for (f, l) in files.iter().enumerate() {
            let c = &l.cache;
            out += &format!(
                "{}: {} on {}, {} configurations ({} failed), optimum {} {}; mean [min, max] best/optimum over {seeds} seeds\n",
                l.name,
                if c.kernel_name.is_empty() { "kernel" } else { &c.kernel_name },
                if c.device_name.is_empty() { "an unnamed device" } else { &c.device_name },
                c.len(),
                c.failed(),
                c.optimum().unwrap_or(f64::NAN),
                c.metric().unit
            );
            head(&mut out);
            for (s, n) in names.iter().enumerate() {
                out += &format!("  {n:<12}");
                for (k, _) in budgets.iter().enumerate() {
                    let (mean, lo, hi, _) = self.cells[f][s][k];
                    let best = (0..names.len()).all(|o| self.cells[f][o][k].0 >= mean);
                    out += &format!(" {:>22}", format!("{}{mean:.3} [{lo:.3}, {hi:.3}]", if best { "*" } else { "" }));
                }
                out += "\n";
            }
            if !l.baseline.is_empty() {
                out += &format!("  {:<12}", "KT best");
                for b in budgets {
                    let v = l.baseline.iter().find(|x| x.0 == *b).map(|x| format!("{:.3}", x.1)).unwrap_or_else(|| "-".into());
                    out += &format!(" {v:>22}");
                }
                out += "\n";
            }
            out += "\n";
        }
        if files.len() > 1 {
            out += &format!("all {} files: mean over files of mean best/optimum\n", files.len());
            head(&mut out);
            for (s, n) in names.iter().enumerate() {
                out += &format!("  {n:<12}");
                for k in 0..budgets.len() {
                    let m = files.iter().enumerate().map(|(f, _)| self.cells[f][s][k].0).sum::<f64>() / files.len() as f64;
                    out += &format!(" {:>22}", format!("{m:.3}"));
                }
                out += "\n";
            }
        }
        if let Some(a) = names.iter().position(|n| n == "auto") {
            let others: Vec<usize> = (0..names.len()).filter(|&s| s != a).collect();
            let (mut le, mut within, mut kt_le, mut kt_n) = (0, 0, 0, 0);
            for (f, l) in files.iter().enumerate() {
                for (k, b) in budgets.iter().enumerate() {
                    let auto = self.cells[f][a][k].0;
                    let best = others.iter().map(|&s| self.cells[f][s][k].0).fold(f64::INFINITY, f64::min);
                    le += usize::from(auto <= best);
                    within += usize::from(auto <= best + 0.01);
                    if let Some(kt) = l.baseline.iter().find(|x| x.0 == *b) {
                        kt_n += 1;
                        // Baselines are published to three decimals: compare at that precision.
                        kt_le += usize::from((auto * 1000.0).round() <= (kt.1 * 1000.0).round());
                    }
                }
            }
            let points = files.len() * budgets.len();
            let means: Vec<String> = (0..budgets.len())
                .map(|k| format!("b{} {:.3}", budgets[k], files.iter().enumerate().map(|(f, _)| self.cells[f][a][k].0).sum::<f64>() / files.len() as f64))
                .collect();
            out += &format!("aggregate: auto mean best/optimum over {} files: {}", files.len(), means.join(", "));
            if others.is_empty() {
                out += "; no other strategy to compare with";
            } else {
                out += &format!("; auto <= best single strategy at {le}/{points} (file, budget) points, within 0.01 at {within}/{points}");
            }
            if kt_n > 0 {
                out += &format!("; auto <= Kernel Tuner's best at {kt_le}/{kt_n}");
            }
            out += "\n";
        }
        out
    }
}

/// Files named on the command line; a directory stands for its .json and .json.gz files
/// (sorted by name, `baselines.json` excepted).
fn expand(paths: &[String]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        let path = Path::new(p);
        if path.is_dir() {
            let rd = std::fs::read_dir(path).map_err(|e| format!("cannot list directory '{p}': {e}"))?;
            let mut found: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| {
                    let n = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    f.is_file() && (n.ends_with(".json") || n.ends_with(".json.gz")) && n != "baselines.json"
                })
                .collect();
            if found.is_empty() {
                return Err(format!("directory '{p}' holds no .json or .json.gz cache"));
            }
            found.sort();
            out.extend(found);
        } else {
            out.push(path.to_path_buf());
        }
    }
    Ok(out)
}

/// Reads, decompresses and parses one cache; errors name the file.
fn load(path: &Path) -> Result<Loaded, String> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read cache '{shown}': {e}"))?;
    let cache = load_bytes(&bytes).map_err(|e| format!("cache '{shown}': {e}"))?;
    if cache.optimum().is_none() {
        return Err(format!("cache '{shown}': every configuration failed; there is no optimum"));
    }
    let file = path.file_name().and_then(|n| n.to_str()).unwrap_or("cache");
    let name = file.strip_suffix(".gz").unwrap_or(file);
    let name = name.strip_suffix(".json").unwrap_or(name).to_string();
    let baseline = baselines(path, &name);
    Ok(Loaded { name, cache, baseline })
}

/// Kernel Tuner's published best per budget for this cache, from `baselines.json` beside it
/// (absent or unreadable: none; these are reference figures, not inputs).
fn baselines(path: &Path, name: &str) -> Vec<(usize, f64)> {
    let file = path.parent().unwrap_or(Path::new(".")).join("baselines.json");
    let Ok(text) = std::fs::read_to_string(file) else { return Vec::new() };
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text) else { return Vec::new() };
    let Some(per) = doc.get("caches").and_then(|c| c.get(name)).and_then(|c| c.as_object()) else { return Vec::new() };
    let mut v: Vec<(usize, f64)> = per.iter().filter_map(|(b, x)| Some((b.parse().ok()?, x.as_f64()?))).collect();
    v.sort_by_key(|x| x.0);
    v
}

/// A comma-separated list of positive integers.
fn parse_list(s: &str, flag: &str) -> Result<Vec<usize>, String> {
    s.split(',')
        .map(|b| match b.trim().parse::<usize>() {
            Ok(0) => Err(format!("{flag} must be at least 1 evaluation, got 0")),
            Ok(n) => Ok(n),
            Err(_) => Err(format!("{flag} expects a positive integer, got '{b}'")),
        })
        .collect()
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
    if b - a >= MAX_SEEDS {
        return Err(format!("--seeds range '{s}' is too long (at most {MAX_SEEDS} seeds)"));
    }
    Ok((a..=b).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ASSETS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/kernel-tuner");

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
        assert!(run("--cache /tmp --strategy random --budget 5 --jobs 0").is_err());
    }

    #[test]
    fn a_directory_expands_to_its_caches_and_gzip_loads() {
        let files = expand(&[ASSETS.to_string()]).unwrap();
        let names: Vec<String> = files.iter().map(|f| f.file_name().unwrap().to_string_lossy().to_string()).collect();
        assert!(names.contains(&"convolution_MI250X.json.gz".to_string()), "{names:?}");
        assert!(names.contains(&"convolution_RTX_2080_Ti.json".to_string()), "{names:?}");
        assert!(!names.contains(&"baselines.json".to_string()));
        let l = load(&Path::new(ASSETS).join("pnpoly_RTX_2080_Ti.json.gz")).unwrap();
        assert_eq!(l.name, "pnpoly_RTX_2080_Ti");
        assert_eq!((l.cache.len(), l.cache.failed()), (4092, 358));
        assert_eq!(l.baseline, vec![(50, 1.045), (100, 1.021), (200, 1.006)]);
    }

    /// The parallel runs give exactly the serial figures (each run is seeded and independent,
    /// and results are collected in order).
    #[test]
    fn parallel_runs_equal_serial_runs() {
        let l = load(&Path::new(ASSETS).join("pnpoly_RTX_2080_Ti.json.gz")).unwrap();
        let jobs: Vec<(&str, usize, u64)> = ["random", "annealing", "auto"].iter().flat_map(|n| (0..3u64).map(move |s| (*n, 30, s))).collect();
        let opts = serde_json::json!({});
        let f = |&(n, b, s): &(&str, usize, u64)| replay(&l.cache, n, &opts, b, s, false).unwrap();
        let serial: Vec<Replay> = jobs.iter().map(f).collect();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let parallel: Vec<Replay> = pool.install(|| jobs.par_iter().map(f).collect());
        assert_eq!(serial, parallel);
        assert!(serial.iter().all(|r| r.evaluations == 30));
    }

    #[test]
    fn the_aggregate_counts_points_where_auto_is_at_or_below_the_best_single_strategy() {
        let l = load(&Path::new(ASSETS).join("pnpoly_RTX_2080_Ti.json.gz")).unwrap();
        let names = vec!["random".to_string(), "auto".to_string()];
        let budgets = [50, 100];
        let mk = |r: f64| Replay { best: Some(1.0), ratio: Some(r), evaluations: 1, failed: 0 };
        // random then auto, budget 50 then 100, two seeds each.
        let results = vec![mk(1.2), mk(1.2), mk(1.1), mk(1.1), mk(1.0), mk(1.0), mk(1.3), mk(1.3)];
        let t = Table::new(std::slice::from_ref(&l), &names, &budgets, 2, &results);
        let text = t.render(std::slice::from_ref(&l), &names, &budgets, 2);
        assert!(text.contains("auto <= best single strategy at 1/2"), "{text}");
        assert!(text.contains("auto <= Kernel Tuner's best at 1/2"), "{text}");
        assert!(text.contains("*1.000"), "{text}");
    }
}

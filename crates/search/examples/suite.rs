//! Design harness for the strategies over several Kernel Tuner caches (prints, never asserts):
//! `cargo run --release -p tunelab-search --example suite -- FILE... -- STRATEGY[:OPTIONS_JSON]...`
//! Mean best/optimum over seeds 0-9 (SUITE_SEEDS=N for more, from SUITE_SEED0) at budgets 50, 100, 200, and the
//! wall time per run. Uses std threads (SUITE_THREADS, default 2).

use std::time::Instant;
use tunelab_search::kernel_tuner::{load_bytes, replay};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let files = &args[..split];
    let specs: Vec<String> = args.get(split + 1..).map(|s| s.to_vec()).unwrap_or_default();
    let seeds: u64 = std::env::var("SUITE_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    let seed0: u64 = std::env::var("SUITE_SEED0").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    let threads: usize = std::env::var("SUITE_THREADS").ok().and_then(|s| s.parse().ok()).unwrap_or(2);
    let budgets: Vec<usize> = std::env::var("SUITE_BUDGETS").ok().map(|s| s.split(',').map(|b| b.parse().unwrap()).collect()).unwrap_or(vec![50, 100, 200]);
    for f in files {
        let cache = load_bytes(&std::fs::read(f).expect("read")).expect("cache");
        println!("{f}: {} configs", cache.len());
        for spec in &specs {
            let (name, opts) = match spec.split_once(':') {
                Some((n, o)) => (n.to_string(), serde_json::from_str(o).expect("options json")),
                None => (spec.clone(), serde_json::json!({})),
            };
            let mut line = format!("{spec:>28}");
            for &b in &budgets {
                let t0 = Instant::now();
                let jobs: Vec<u64> = (seed0..seed0 + seeds).collect();
                let ratios: Vec<f64> = std::thread::scope(|s| {
                    let hs: Vec<_> = jobs.chunks(jobs.len().div_ceil(threads)).map(|chunk| {
                        let (cache, name, opts) = (&cache, &name, &opts);
                        s.spawn(move || chunk.iter().map(|&seed| replay(cache, name, opts, b, seed, false).expect("run").ratio.unwrap_or(10.0)).collect::<Vec<_>>())
                    }).collect();
                    hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
                });
                let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
                line += &format!("  b{b}: {mean:.3} ({:.0}ms)", t0.elapsed().as_secs_f64() * 1e3 * threads as f64 / seeds as f64);
            }
            println!("{line}");
        }
    }
}

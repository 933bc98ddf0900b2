//! Held-out check for `auto` (prints, never asserts): landscapes no strategy was tuned on,
//! derived from the development caches and from standard test functions, so that a default
//! that only memorised the four development caches shows it here.
//!
//! `cargo run --release -p tunelab-search --example heldout -- CACHE_FILE... [-- STRATEGY[:OPTIONS_JSON]...]`
//!
//! Landscapes (each derivation uses its own fixed seed, unrelated to the run seeds):
//! - `sub`: a random half of the cache's configurations (other neighbours, other optimum
//!   basin sizes);
//! - `scramble`: the value labels of the two parameters with most values permuted, so those
//!   parameters lose their order (ordinal smoothness is what models and walks exploit);
//! - `cube`: every time cubed (a heavier tail; rank-based credit is unchanged, raw values are
//!   not) — the optimum is the same configuration;
//! - `fail`: configurations whose summed level rank in three random parameters is in the top
//!   quarter fail (a failing region, as compilation or resource limits make);
//! - `rastrigin4`, `ackley4`, `rosenbrock4`, `styblinski4`: the standard test functions on a
//!   4-D grid of 10 levels (10,000 points), shifted to be positive.
//!
//! Prints mean best/optimum over seeds (HELDOUT_SEEDS, default 10, from HELDOUT_SEED0, default 0) at budgets 50, 100, 200
//! (HELDOUT_BUDGETS), auto's rank among the strategies on each landscape and budget, and the mean
//! over landscapes. Runs are spread over HELDOUT_THREADS std threads (default 2); results do not
//! depend on the thread count.

use serde_json::{json, Map, Value as Json};
use tunelab_search::kernel_tuner::{replay, text_of, KernelTunerCache};
use tunelab_search::Rng;

const DEFAULT_STRATEGIES: &[&str] = &["random", "genetic", "annealing", "local", "bayes", "tpe", "auto"];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let files = &args[..split];
    let mut specs: Vec<String> = args.get(split + 1..).map(|s| s.to_vec()).unwrap_or_default();
    if specs.is_empty() {
        specs = DEFAULT_STRATEGIES.iter().map(|s| s.to_string()).collect();
    }
    let env = |k: &str| std::env::var(k).ok();
    let seeds: u64 = env("HELDOUT_SEEDS").and_then(|s| s.parse().ok()).unwrap_or(10);
    let threads: usize = env("HELDOUT_THREADS").and_then(|s| s.parse().ok()).unwrap_or(2).max(1);
    let budgets: Vec<usize> = env("HELDOUT_BUDGETS").map(|s| s.split(',').map(|b| b.parse().expect("budget")).collect()).unwrap_or(vec![50, 100, 200]);
    let only: Option<String> = env("HELDOUT_ONLY");
    let seed0: u64 = env("HELDOUT_SEED0").and_then(|s| s.parse().ok()).unwrap_or(0);

    let mut lands: Vec<(String, KernelTunerCache)> = Vec::new();
    for (k, f) in files.iter().enumerate() {
        let text = text_of(&std::fs::read(f).expect("read cache")).expect("cache text");
        let doc: Json = serde_json::from_str(&text).expect("cache json");
        let stem = std::path::Path::new(f).file_name().and_then(|s| s.to_str()).unwrap_or("cache").split('.').next().unwrap_or("cache").to_string();
        for (t, kind) in ["sub", "scramble", "cube", "fail"].iter().enumerate() {
            let mut rng = Rng::seed_from_u64(9_000 + 31 * k as u64 + t as u64);
            let derived = derive(&doc, kind, &mut rng);
            let cache = KernelTunerCache::parse(&derived.to_string()).expect("derived cache parses");
            lands.push((format!("{stem}/{kind}"), cache));
        }
    }
    for name in ["rastrigin4", "ackley4", "rosenbrock4", "styblinski4"] {
        let text = synthetic(name).to_string();
        // HELDOUT_DUMP=DIR writes each test function as a cache file, for `trace_auto`.
        if let Some(dir) = env("HELDOUT_DUMP") {
            std::fs::write(format!("{dir}/{name}.json"), &text).expect("write synthetic cache");
        }
        let cache = KernelTunerCache::parse(&text).expect("synthetic cache parses");
        lands.push((name.to_string(), cache));
    }
    if let Some(o) = &only {
        lands.retain(|(n, _)| n.contains(o.as_str()));
    }

    let parsed: Vec<(String, Json)> = specs
        .iter()
        .map(|spec| match spec.split_once(':') {
            Some((n, o)) => (n.to_string(), serde_json::from_str(o).expect("options json")),
            None => (spec.clone(), json!({})),
        })
        .collect();
    // Every (landscape, strategy, budget, seed) run, in order; threads take interleaved shares.
    let mut jobs = Vec::new();
    for l in 0..lands.len() {
        for s in 0..parsed.len() {
            for &b in &budgets {
                for seed in seed0..seed0 + seeds {
                    jobs.push((l, s, b, seed));
                }
            }
        }
    }
    let mut ratios = vec![0.0; jobs.len()];
    std::thread::scope(|sc| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let (jobs, lands, parsed) = (&jobs, &lands, &parsed);
                sc.spawn(move || {
                    let mut out = Vec::new();
                    for (i, &(l, s, b, seed)) in jobs.iter().enumerate().skip(t).step_by(threads) {
                        let r = replay(&lands[l].1, &parsed[s].0, &parsed[s].1, b, seed, false).expect("run");
                        out.push((i, r.ratio.unwrap_or(10.0)));
                    }
                    out
                })
            })
            .collect();
        for h in hs {
            for (i, r) in h.join().expect("thread") {
                ratios[i] = r;
            }
        }
    });
    let n = seeds as usize;
    let cell = |l: usize, s: usize, bi: usize| -> f64 {
        let start = ((l * parsed.len() + s) * budgets.len() + bi) * n;
        ratios[start..start + n].iter().sum::<f64>() / n as f64
    };
    let auto = specs.iter().position(|s| s == "auto");
    let mut header = format!("{:<34}", "landscape / strategy");
    for b in &budgets {
        header += &format!("{:>10}", format!("b{b}"));
    }
    println!("{header}   (mean best/optimum over {seeds} seeds)");
    let mut ranks = vec![Vec::new(); budgets.len()];
    let mut sums = vec![vec![0.0; budgets.len()]; parsed.len()];
    for (l, (lname, cache)) in lands.iter().enumerate() {
        println!("{lname}: {} configurations ({} failed)", cache.len(), cache.failed());
        for (s, spec) in specs.iter().enumerate() {
            let mut line = format!("  {spec:<32}");
            for (bi, sum) in sums[s].iter_mut().enumerate() {
                let v = cell(l, s, bi);
                *sum += v / lands.len() as f64;
                line += &format!("{v:>10.3}");
            }
            println!("{line}");
        }
        if let Some(a) = auto {
            let mut line = format!("  {:<32}", "auto's rank");
            for (bi, r) in ranks.iter_mut().enumerate() {
                let mine = cell(l, a, bi);
                let rank = 1 + (0..specs.len()).filter(|&s| s != a && cell(l, s, bi) < mine - 1e-12).count();
                r.push(rank);
                line += &format!("{rank:>10}");
            }
            println!("{line}");
        }
    }
    println!("mean over {} landscapes", lands.len());
    for (s, spec) in specs.iter().enumerate() {
        let mut line = format!("  {spec:<32}");
        for v in &sums[s] {
            line += &format!("{v:>10.3}");
        }
        println!("{line}");
    }
    if auto.is_some() {
        let mut line = format!("  {:<32}", "auto's mean rank");
        for r in &ranks {
            line += &format!("{:>10.2}", r.iter().sum::<usize>() as f64 / r.len().max(1) as f64);
        }
        println!("{line}");
        let mut line = format!("  {:<32}", "auto first or tied first");
        for r in &ranks {
            line += &format!("{:>10}", format!("{}/{}", r.iter().filter(|&&x| x == 1).count(), r.len()));
        }
        println!("{line}");
    }
}

/// A derived cache document (see the module comment for the kinds).
fn derive(doc: &Json, kind: &str, rng: &mut Rng) -> Json {
    let mut doc = doc.clone();
    let keys: Vec<String> = doc["tune_params_keys"].as_array().expect("keys").iter().map(|k| k.as_str().expect("key").to_string()).collect();
    let objective = match &doc["objective"] {
        Json::String(s) => s.clone(),
        Json::Array(a) => a.first().and_then(|s| s.as_str()).unwrap_or("time").to_string(),
        _ => "time".to_string(),
    };
    let lists: Vec<Vec<Json>> = keys.iter().map(|k| doc["tune_params"][k].as_array().expect("values").clone()).collect();
    let cache = doc["cache"].as_object().expect("cache").clone();
    let mut entries: Vec<(String, Json)> = cache.into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let level = |k: usize, v: &Json| lists[k].iter().position(|x| x == v).unwrap_or(0);
    match kind {
        "sub" => {
            rng.shuffle(&mut entries);
            entries.truncate(entries.len().div_ceil(2));
        }
        "scramble" => {
            let mut by_size: Vec<usize> = (0..keys.len()).collect();
            by_size.sort_by(|a, b| lists[*b].len().cmp(&lists[*a].len()).then(a.cmp(b)));
            for &k in by_size.iter().take(2) {
                let mut perm: Vec<usize> = (0..lists[k].len()).collect();
                rng.shuffle(&mut perm);
                for (_, rec) in entries.iter_mut() {
                    let l = level(k, &rec[&keys[k]]);
                    rec[&keys[k]] = lists[k][perm[l]].clone();
                }
            }
        }
        "cube" => {
            for (_, rec) in entries.iter_mut() {
                if let Some(x) = rec[&objective].as_f64() {
                    rec[&objective] = json!(x * x * x);
                }
            }
        }
        "fail" => {
            let mut pick: Vec<usize> = (0..keys.len()).filter(|&k| lists[k].len() > 1).collect();
            rng.shuffle(&mut pick);
            pick.truncate(3);
            let score = |rec: &Json| -> f64 { pick.iter().map(|&k| level(k, &rec[&keys[k]]) as f64 / (lists[k].len() - 1) as f64).sum() };
            let mut s: Vec<f64> = entries.iter().map(|(_, r)| score(r)).collect();
            s.sort_by(f64::total_cmp);
            let cut = s[(s.len() * 3) / 4];
            for (_, rec) in entries.iter_mut() {
                if score(rec) > cut {
                    rec[&objective] = json!("RuntimeFailedConfig");
                }
            }
        }
        _ => unreachable!("unknown derivation {kind}"),
    }
    // Keys are renumbered so the scrambled records stay unique keys.
    let mut out = Map::new();
    for (i, (_, rec)) in entries.into_iter().enumerate() {
        out.insert(format!("{i}"), rec);
    }
    doc["cache"] = Json::Object(out);
    doc
}

/// A 4-D test function on 10 levels per axis, as a Kernel Tuner cache document ("time", > 0).
fn synthetic(name: &str) -> Json {
    let levels = 10usize;
    let (lo, hi): (f64, f64) = match name {
        "rastrigin4" => (-5.12, 5.12),
        "ackley4" => (-5.0, 5.0),
        "rosenbrock4" => (-2.0, 2.0),
        _ => (-5.0, 5.0),
    };
    // Grid points deliberately off-centre so the optimum is not a grid corner or centre.
    let x = |l: usize| lo + (hi - lo) * (l as f64 + 0.37) / levels as f64;
    let f = |v: &[f64]| -> f64 {
        match name {
            "rastrigin4" => 40.0 + v.iter().map(|a| a * a - 10.0 * libm::cos(2.0 * std::f64::consts::PI * a)).sum::<f64>(),
            "ackley4" => {
                let n = v.len() as f64;
                let s1 = v.iter().map(|a| a * a).sum::<f64>() / n;
                let s2 = v.iter().map(|a| libm::cos(2.0 * std::f64::consts::PI * a)).sum::<f64>() / n;
                -20.0 * libm::exp(-0.2 * libm::sqrt(s1)) - libm::exp(s2) + 20.0 + std::f64::consts::E
            }
            "rosenbrock4" => v.windows(2).map(|w| 100.0 * (w[1] - w[0] * w[0]).powi(2) + (1.0 - w[0]).powi(2)).sum(),
            _ => v.iter().map(|a| a.powi(4) - 16.0 * a * a + 5.0 * a).sum::<f64>() / 2.0 + 40.0 * 4.0,
        }
    };
    let keys: Vec<String> = (0..4).map(|i| format!("p{i}")).collect();
    let mut tp = Map::new();
    for k in &keys {
        tp.insert(k.clone(), json!((0..levels).collect::<Vec<_>>()));
    }
    let mut cache = Map::new();
    for i in 0..levels.pow(4) {
        let l: Vec<usize> = (0..4).map(|d| (i / levels.pow(d)) % levels).collect();
        let v: Vec<f64> = l.iter().map(|&a| x(a)).collect();
        let mut rec = Map::new();
        for (k, a) in keys.iter().zip(&l) {
            rec.insert(k.clone(), json!(a));
        }
        rec.insert("time".into(), json!(1.0 + f(&v)));
        cache.insert(format!("{i}"), Json::Object(rec));
    }
    json!({"kernel_name": name, "device_name": "synthetic", "objective": "time", "tune_params_keys": keys, "tune_params": tp, "cache": cache})
}

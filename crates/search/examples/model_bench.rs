//! Figures for the model-based strategies (prints, never asserts):
//! `cargo run --release -p tunelab-search --example model_bench [CACHE.json[.gz] [STRATEGY[:OPTIONS_JSON] ...]]`
//! 1. wall time of a 200-evaluation run of each model-based strategy over a 10,000-point space;
//! 2. with a Kernel Tuner cache: mean, min and max best/optimum over seeds 0-9 at budgets
//!    50, 100 and 200.

use std::collections::HashMap;
use std::time::Instant;
use tunelab_search::kernel_tuner::KernelTunerCache;
use tunelab_search::strategies::by_name;
use tunelab_search::{Config, FnObjective, Metric, Outcome, Param, Rng, Space, Study, StudyOptions};

fn timing() {
    let params = (0..4).map(|i| Param::int(&format!("p{i}"), 0, 9, 1)).collect();
    let space = Space::new(params, &[]).expect("space");
    let specs: Vec<String> = std::env::var("BENCH_TIMING").map(|v| v.split(';').map(String::from).collect()).unwrap_or_else(|_| vec!["bayes".into(), "tpe".into(), "rl".into(), "random".into()]);
    for spec in &specs {
        let (name, opts) = match spec.split_once(':') {
            Some((n, o)) => (n, serde_json::from_str(o).expect("options json")),
            None => (spec.as_str(), serde_json::Value::Null),
        };
        let mut s = by_name(name, &opts).expect("strategy");
        let mut study = Study::new(space.clone(), vec![Metric::minimize("t", "ms")], StudyOptions::budget(200)).expect("study");
        let mut obj = FnObjective::new(vec![Metric::minimize("t", "ms")], |c: &Config| {
            let x: Vec<f64> = c.0.iter().map(|v| v.as_f64().unwrap_or(0.0)).collect();
            Outcome::Ok(vec![1.0 + (x[0] - 3.0).powi(2) + 0.5 * (x[1] - 7.0).powi(2) + 0.2 * (x[2] - 1.0).powi(2) + 0.1 * x[3]])
        });
        let mut rng = Rng::seed_from_u64(1);
        let t0 = Instant::now();
        study.run(s.as_mut(), &mut obj, &mut rng);
        println!("{spec:>8}: 200 evaluations over 10,000 points in {:.1} ms, best {:?} after {} evaluations ({:?})", t0.elapsed().as_secs_f64() * 1e3, study.best_value(), study.evaluations(), study.best().map(|t| t.config.clone()));
    }
}

/// Random lognormal-ish landscapes with failing regions over a member space (generalisation
/// check beyond one measured cache): per-axis bowls, two interacting pairs, three bumps, per
/// point roughness, and failures where a random linear form is in its top fifth.
fn synthetic(space: &Space, k: u64) -> (HashMap<Config, Option<f64>>, f64) {
    let members = space.members().expect("member space");
    let d = space.params().len();
    let mut r = Rng::seed_from_u64(1000 + k);
    let a: Vec<f64> = (0..d).map(|_| r.normal().abs() * 2.0).collect();
    let c: Vec<f64> = (0..d).map(|_| r.unit()).collect();
    let pairs: Vec<(usize, usize, f64)> = (0..2).map(|_| (r.below(d), r.below(d), r.normal() * 2.0)).collect();
    let bumps: Vec<(Vec<f64>, f64)> = (0..3).map(|_| ((0..d).map(|_| r.unit()).collect(), r.unit())).collect();
    let w: Vec<f64> = (0..d).map(|_| r.normal()).collect();
    let units: Vec<Vec<f64>> = members.iter().map(|m| space.to_unit(m)).collect();
    let mut lin: Vec<f64> = units.iter().map(|u| u.iter().zip(&w).map(|(x, y)| x * y).sum()).collect();
    let f: Vec<f64> = units.iter().map(|u| {
        let mut v: f64 = (0..d).map(|i| a[i] * (u[i] - c[i]).powi(2)).sum();
        v += pairs.iter().map(|(i, j, b)| b * u[*i] * u[*j]).sum::<f64>();
        v -= bumps.iter().map(|(bc, h)| h * (-(0..d).map(|i| (u[i] - bc[i]).powi(2)).sum::<f64>() / 0.05).exp()).sum::<f64>();
        v + 0.1 * r.normal()
    }).collect();
    let thr = { let mut s = lin.clone(); s.sort_by(|x, y| x.total_cmp(y)); s[s.len() * 4 / 5] };
    let mut map = HashMap::new();
    let mut opt = f64::INFINITY;
    for (i, m) in members.iter().enumerate() {
        let t = (lin[i] <= thr).then(|| (1.5 * f[i]).exp());
        if let Some(t) = t { opt = opt.min(t); }
        map.insert(m.clone(), t);
    }
    lin.clear();
    (map, opt)
}

fn synthetic_bench(space: &Space, names: &[String]) {
    for spec in names {
        let (name, opts) = match spec.split_once(':') {
            Some((n, o)) => (n, serde_json::from_str(o).expect("options json")),
            None => (spec.as_str(), serde_json::Value::Null),
        };
        let mut line = format!("{spec:>24} synthetic");
        for budget in [50, 100, 200] {
            let mut ratios = Vec::new();
            for k in 0..6 {
                let (map, opt) = synthetic(space, k);
                for seed in 0..5u64 {
                    let mut s = by_name(name, &opts).expect("strategy");
                    let metric = vec![Metric::minimize("time", "ms")];
                    let mut study = Study::new(space.clone(), metric.clone(), StudyOptions::budget(budget)).expect("study");
                    let mut obj = FnObjective::new(metric, |c: &Config| match map.get(c).copied().flatten() {
                        Some(t) => Outcome::Ok(vec![t]),
                        None => Outcome::Failed("synthetic failure".into()),
                    });
                    study.run(s.as_mut(), &mut obj, &mut Rng::seed_from_u64(seed));
                    ratios.push(study.best_value().map_or(10.0, |b| b / opt));
                }
            }
            let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
            line += &format!("  b{budget}: {mean:.3}");
        }
        println!("{line}");
    }
}

/// Wall time on a large member space (50,000 configurations of 15 parameters), the shape of
/// the biggest Kernel Tuner caches.
fn timing_large_members() {
    let params: Vec<Param> = (0..15).map(|i| Param::int(&format!("p{i}"), 0, 5, 1)).collect();
    let mut r = Rng::seed_from_u64(9);
    let list: Vec<Config> = (0..50_000).map(|_| Config((0..15).map(|_| tunelab_search::Value::Int(r.below(6) as i64)).collect())).collect();
    let space = Space::from_members(params, list).expect("space");
    for name in ["bayes", "tpe", "rl"] {
        let mut s = by_name(name, &serde_json::Value::Null).expect("strategy");
        let metric = vec![Metric::minimize("t", "ms")];
        let mut study = Study::new(space.clone(), metric.clone(), StudyOptions::budget(200)).expect("study");
        let mut obj = FnObjective::new(metric, |c: &Config| {
            Outcome::Ok(vec![1.0 + c.0.iter().enumerate().map(|(i, v)| (v.as_f64().unwrap_or(0.0) - (i % 6) as f64).powi(2)).sum::<f64>()])
        });
        let t0 = Instant::now();
        study.run(s.as_mut(), &mut obj, &mut Rng::seed_from_u64(1));
        println!("{name:>8}: 200 evaluations over 50,000 members x 15 params in {:.1} ms", t0.elapsed().as_secs_f64() * 1e3);
    }
}

fn main() {
    timing();
    if std::env::var("BENCH_LARGE").is_ok() {
        timing_large_members();
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else { return };
    let cache: KernelTunerCache = tunelab_search::kernel_tuner::load_bytes(&std::fs::read(path).expect("read cache")).expect("parse cache");
    let optimum = cache.optimum().expect("optimum");
    let names: Vec<String> = if args.len() > 1 { args[1..].to_vec() } else { vec!["bayes".into(), "tpe".into(), "rl".into(), "random".into()] };
    if std::env::var("BENCH_SYNTHETIC").is_ok() {
        synthetic_bench(&cache.space, &names);
        return;
    }
    for spec in &names {
        let (name, opts) = match spec.split_once(':') {
            Some((n, o)) => (n, serde_json::from_str(o).expect("options json")),
            None => (spec.as_str(), serde_json::Value::Null),
        };
        let mut line = format!("{spec:>24}");
        for budget in [50, 100, 200] {
            let t0 = Instant::now();
            let ratios: Vec<f64> = (0..10u64)
                .map(|seed| {
                    let mut s = by_name(name, &opts).expect("strategy");
                    let mut study = Study::new(cache.space.clone(), vec![cache.metric()], StudyOptions::budget(budget)).expect("study");
                    let mut obj = cache.objective();
                    let mut rng = Rng::seed_from_u64(seed);
                    study.run(s.as_mut(), &mut obj, &mut rng);
                    study.best_value().map_or(f64::NAN, |b| b / optimum)
                })
                .collect();
            let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
            let (lo, hi) = ratios.iter().fold((f64::INFINITY, 0.0f64), |(a, b), r| (a.min(*r), b.max(*r)));
            line += &format!("  b{budget}: {mean:.3} [{lo:.3},{hi:.3}] {:.0}ms", t0.elapsed().as_secs_f64() * 1e3 / 10.0);
        }
        println!("{line}");
    }
}

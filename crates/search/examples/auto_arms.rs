//! Debug aid: the arms' statistics at the end of `auto` runs on one cache (prints only).
//! `cargo run --release -p tunelab-search --example auto_arms -- FILE BUDGET [OPTIONS_JSON]`
use tunelab_search::kernel_tuner::load_bytes;
use tunelab_search::strategies::by_name;
use tunelab_search::{Rng, Study, StudyOptions};

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let cache = load_bytes(&std::fs::read(&a[0]).unwrap()).unwrap();
    let budget: usize = a[1].parse().unwrap();
    let opts: serde_json::Value = a.get(2).map(|o| serde_json::from_str(o).unwrap()).unwrap_or(serde_json::json!({}));
    for seed in 0..10 {
        let mut s = by_name("auto", &opts).unwrap();
        let mut study = Study::new(cache.space.clone(), vec![cache.metric()], StudyOptions::budget(budget)).unwrap();
        let mut obj = cache.objective();
        let mut rng = Rng::seed_from_u64(seed);
        let mut last = String::new();
        let mut who: Vec<String> = Vec::new();
        let mut best = f64::INFINITY;
        let pf = budget - (budget as f64 * 0.15).ceil() as usize;
        loop {
            let proposer = s.snapshot().get("proposer").and_then(|v| v.as_str()).unwrap_or("?").to_string();
            let done = study.step(s.as_mut(), &mut obj, &mut rng).is_some();
            if let Some(b) = study.best_value() {
                if b < best {
                    best = b;
                    who.push(format!("{}:{}:{:.3}", study.evaluations(), &proposer[..proposer.len().min(4)], cache.ratio(b).unwrap_or(0.0)));
                }
            }
            if done {
                break;
            }
            if study.evaluations() == pf {
                last = s.snapshot()["arms"].to_string();
            }
        }
        let conv = who;
        println!("seed {seed}: {:.3} {last}\n   {}", cache.ratio(study.best_value().unwrap()).unwrap(), conv.join(" "));
    }
}

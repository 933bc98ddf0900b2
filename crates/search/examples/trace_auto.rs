//! Debug aid: every proposal of one `auto` run on one cache (prints only).
//! `cargo run --release -p tunelab-search --example trace_auto -- FILE BUDGET SEED [OPTIONS_JSON]`
use tunelab_search::kernel_tuner::load_bytes;
use tunelab_search::strategies::by_name;
use tunelab_search::{Rng, Study, StudyOptions};

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let cache = load_bytes(&std::fs::read(&a[0]).unwrap()).unwrap();
    let budget: usize = a[1].parse().unwrap();
    let seed: u64 = a[2].parse().unwrap();
    let opts: serde_json::Value = a.get(3).map(|o| serde_json::from_str(o).unwrap()).unwrap_or(serde_json::json!({}));
    let mut s = by_name("auto", &opts).unwrap();
    let mut study = Study::new(cache.space.clone(), vec![cache.metric()], StudyOptions::budget(budget)).unwrap();
    let mut obj = cache.objective();
    let mut rng = Rng::seed_from_u64(seed);
    let mut line = String::new();
    loop {
        let done = study.step(s.as_mut(), &mut obj, &mut rng).is_some();
        let snap = s.snapshot();
        let p = snap.get("proposer").and_then(|v| v.as_str()).unwrap_or("?").to_string();
        if let Some(t) = study.trials().last() {
            let r = t.value().and_then(|v| cache.ratio(v)).map(|r| format!("{r:.2}")).unwrap_or("F".into());
            line += &format!("{}:{} ", &p[..p.len().min(2)], r);
        }
        if std::env::var("TRACE_ARMS").is_ok() && study.trials().len().is_multiple_of(10) {
            line += &format!("\n  {}\n", snap.get("arms").map(|a| a.to_string()).unwrap_or_default());
        }
        if done {
            break;
        }
    }
    let best = study.best().unwrap();
    println!("{line}\nbest {:.3} at {:?}", cache.ratio(study.best_value().unwrap()).unwrap(), best.config.0);
}

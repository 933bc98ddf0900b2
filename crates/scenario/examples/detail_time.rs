//! Prints how long a configuration's breakdown takes: priced from scratch (`point_detail`)
//! and from a finished run's own stage and recorded trial (`Run::detail`, what the app does
//! when a run stops). `cargo run --release -p tunelab-scenario --example detail_time -- FILE...`
fn main() {
    for path in std::env::args().skip(1) {
        let mut s = tunelab_scenario::Scenario::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
        s.budget = s.budget.min(60);
        let Ok(mut run) = tunelab_scenario::run::Run::new(&s) else { println!("{path}: cannot build here"); continue };
        while !run.step(1000).done {}
        let Some(best) = run.best_trial(0).map(|t| t.config.clone()) else { continue };
        let t = std::time::Instant::now();
        let a = tunelab_scenario::explore::point_detail(&s, &best);
        let fresh = t.elapsed();
        let t = std::time::Instant::now();
        let b = run.detail(&best);
        let reused = t.elapsed();
        assert_eq!(a, b);
        println!("{path}: point_detail {fresh:?}, Run::detail {reused:?}");
    }
}

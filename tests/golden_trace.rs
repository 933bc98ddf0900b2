//! Golden traces: the same scenarios give the same trials, bit for bit, natively and in
//! WebAssembly. Both targets compare against one pinned file, tests/golden/trace.txt.
//!
//! Natively: `cargo test --test golden_trace`. As wasm under Node:
//! `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner cargo test --target wasm32-unknown-unknown --test golden_trace`.
//! When the engine changes on purpose, re-pin natively with `TUNELAB_BLESS=1 cargo test --test golden_trace`
//! and review the diff.

use tunelab_scenario::{bundled_scenario, Run};
use tunelab_search::kernel_tuner::KernelTunerCache;
use tunelab_search::strategies::by_name;
use tunelab_search::{Rng, Study, StudyOptions, Trial};

const PINNED: &str = include_str!("golden/trace.txt");

/// (bundled scenario, budget per strategy) pinned here: small budgets keep the wasm run short.
const SCENARIOS: &[(&str, usize)] = &[("llama2-7b-910B2-compare", 12), ("qwen2.5-7b-910B2-operator", 10), ("llama2-7b-910B2-deployment", 16)];

fn line(prefix: &str, t: &Trial, names: &[String]) -> String {
    let values: Vec<String> = t.values.iter().map(|v| format!("{:016x}", v.to_bits())).collect();
    format!("{prefix} #{} e{} {:?} [{}] {}\n", t.id, t.evaluation, t.state, t.config.describe(names), values.join(" "))
}

/// The trace of every pinned run: one line per trial, values as exact f64 bits.
fn trace() -> String {
    let mut out = String::new();
    for &(id, budget) in SCENARIOS {
        let mut s = bundled_scenario(id).unwrap_or_else(|e| panic!("{id}: {e}"));
        s.budget = budget;
        let mut run = Run::new(&s).unwrap_or_else(|e| panic!("{id}: {e}"));
        run.run_to_end();
        let names = run.space().names().to_vec();
        for (i, lane) in run.lanes().iter().enumerate() {
            for t in run.trials(i) {
                out.push_str(&line(&format!("{id} {}", lane.spec.name), t, &names));
            }
        }
        let best = run.overall_best().and_then(|(_, t)| t.value()).map(tunelab_scenario::format_best);
        out.push_str(&format!("{id} best {}\n", best.unwrap_or_else(|| "none".into())));
    }
    // Real measured data: a Kernel Tuner cache replayed by two strategies.
    let cache = KernelTunerCache::parse(include_str!("../assets/kernel-tuner/convolution_RTX_2080_Ti.json")).expect("cache");
    for name in ["random", "genetic"] {
        let mut study = Study::new(cache.space.clone(), vec![cache.metric()], StudyOptions::budget(20)).unwrap();
        let mut strategy = by_name(name, &serde_json::json!({})).unwrap();
        let mut objective = cache.objective();
        study.run(strategy.as_mut(), &mut objective, &mut Rng::seed_from_u64(3));
        for t in study.trials() {
            out.push_str(&line(&format!("kernel-tuner {name}"), t, cache.space.names()));
        }
    }
    out
}

fn check() {
    let got = trace();
    if got == PINNED {
        return;
    }
    #[cfg(not(target_arch = "wasm32"))]
    if std::env::var_os("TUNELAB_BLESS").is_some() {
        std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/trace.txt"), &got).unwrap();
        return;
    }
    let (g, p): (Vec<&str>, Vec<&str>) = (got.lines().collect(), PINNED.lines().collect());
    let at = g.iter().zip(&p).position(|(a, b)| a != b).unwrap_or(g.len().min(p.len()));
    panic!(
        "trace differs from tests/golden/trace.txt at line {} (got {} lines, pinned {}):\n got:    {}\n pinned: {}\n(if the engine changed on purpose: TUNELAB_BLESS=1 cargo test --test golden_trace)",
        at + 1, g.len(), p.len(), g.get(at).unwrap_or(&"<end>"), p.get(at).unwrap_or(&"<end>")
    );
}

#[cfg(not(target_arch = "wasm32"))]
#[test]
fn golden_trace_native() {
    check();
}

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen_test::wasm_bindgen_test]
fn golden_trace_wasm() {
    check();
}

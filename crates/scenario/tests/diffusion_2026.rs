//! The diffusion families of 2025-2026 through the diffusion stage: Wan2.2-A14B priced with
//! both experts in memory, reference images lengthening every step (FLUX.1-Kontext,
//! Qwen-Image-Edit), the new bundled scenarios loading and tuning, and step-cache / ToMe values
//! outside their ranges refused with the field named (never clamped or silently ignored).

use tunelab_scenario::{bundled_scenario, Run, Scenario};
use tunelab_search::{Config, Outcome, Value};

fn with(run: &Run, sets: &[(&str, Value)]) -> Config {
    let mut c = run.baseline_config().clone();
    for (n, v) in sets {
        let i = run.space().index_of(n).unwrap_or_else(|| panic!("no parameter {n}"));
        c.0[i] = v.clone();
    }
    c
}

fn metric(run: &mut Run, c: &Config, name: &str) -> f64 {
    let i = run.metrics().iter().position(|m| m.name == name).unwrap();
    match run.evaluate(c) {
        Outcome::Ok(v) => v[i],
        o => panic!("{o:?}"),
    }
}

fn s(x: &str) -> Value {
    Value::Str(x.into())
}

/// A diffusion scenario of `model` on one 910B2 with extra `diffusion` options.
fn scenario(model: &str, diffusion: &str, space: &str) -> Scenario {
    Scenario::from_json(&format!(r#"{{"version": 1, "stage": "diffusion", "model": "{model}", "device": "910B2", "diffusion": {{{diffusion}}}, "space": {{{space}}}, "budget": 10, "seed": 1}}"#)).unwrap()
}

#[test]
fn wan22_holds_both_experts_so_bf16_does_not_fit_one_chip() {
    let sc = bundled_scenario("wan2.2-a14b-8x910B2-diffusion").unwrap();
    let mut run = Run::new(&sc).unwrap();
    // The baseline (bf16): two 14.3 B experts and UMT5-XXL exceed a 64 GB chip.
    match run.evaluate(&run.baseline_config().clone()) {
        Outcome::Infeasible(e) => assert!(e.contains("out of memory") && e.contains("2 experts held"), "{e}"),
        o => panic!("bf16 Wan2.2 should not fit: {o:?}"),
    }
    let w8 = with(&run, &[("precision", s("w8a8")), ("sp", Value::Int(8))]);
    let two = metric(&mut run, &w8, "memory_gib");
    // Wan2.1-14B (one expert of the same shape) at the same size and knobs holds one expert fewer.
    let size = r#""height": 720, "width": 1280, "frames": 81, "steps": 40, "chips": 8"#;
    let one_sc = scenario("wan2.1-t2v-14b", size, "");
    let two_sc = scenario("wan2.2-t2v-a14b", size, "");
    let mut run = Run::new(&two_sc).unwrap();
    let w8 = with(&run, &[("precision", s("w8a8")), ("sp", Value::Int(8))]);
    assert!((metric(&mut run, &w8, "memory_gib") - two).abs() < 1e-9, "the bundled scenario is this size");
    let mut one_run = Run::new(&one_sc).unwrap();
    let w8_one = with(&one_run, &[("precision", s("w8a8")), ("sp", Value::Int(8))]);
    let one = metric(&mut one_run, &w8_one, "memory_gib");
    // One expert's W8A8 weights: ~14.28 B bytes = 13.3 GiB.
    assert!((two - one - 13.3).abs() < 0.3, "two experts {two:.1} GiB vs one {one:.1} GiB");
    // Both experts have the same shape, so a step costs the same as Wan2.1-14B's at 50 -> 40 steps.
    let step2 = metric(&mut run, &w8, "step_ms");
    let step1 = metric(&mut one_run, &w8_one, "step_ms");
    assert!((step2 / step1 - 1.0).abs() < 1e-9, "{step2} vs {step1}");
    let t = tunelab_scenario::stages::diffusion::timeline::timeline(&sc, Some(&w8)).unwrap();
    assert!(t.notes[0].contains("high-noise expert runs 12 of 40 steps"), "{:?}", t.notes);
}

#[test]
fn reference_images_cost_every_step_and_one_encode() {
    let plain = scenario("flux.1-kontext-dev", r#""reference_images": 0"#, "");
    let edit = scenario("flux.1-kontext-dev", "", "");
    let (mut a, mut b) = (Run::new(&plain).unwrap(), Run::new(&edit).unwrap());
    let (ca, cb) = (a.baseline_config().clone(), b.baseline_config().clone());
    let (sa, sb) = (metric(&mut a, &ca, "step_ms"), metric(&mut b, &cb, "step_ms"));
    // 8704 instead of 4608 tokens per step: more than 1.8x the linear layers' work.
    assert!(sb > 1.8 * sa, "step {sa:.1} -> {sb:.1} ms");
    let t = tunelab_scenario::stages::diffusion::timeline::timeline(&edit, None).unwrap();
    assert!(t.segments.iter().any(|g| g.kind == "reference_encode" && g.ms > 0.0));
    // Qwen-Image-Edit likewise, against Qwen-Image at the same size.
    let q = scenario("qwen-image", r#""height": 1024, "width": 1024"#, "");
    let qe = scenario("qwen-image-edit", "", "");
    let (mut a, mut b) = (Run::new(&q).unwrap(), Run::new(&qe).unwrap());
    let (ca, cb) = (a.baseline_config().clone(), b.baseline_config().clone());
    assert!(metric(&mut b, &cb, "step_ms") > 1.8 * metric(&mut a, &ca, "step_ms"));
    // A pipeline without reference conditioning refuses the option, naming it.
    let e = Run::new(&scenario("sdxl", r#""reference_images": 1"#, "")).err().unwrap();
    assert!(e.contains("diffusion.reference_images"), "{e}");
    let e = Scenario::from_json(r#"{"version": 1, "stage": "diffusion", "model": "flux.1-kontext-dev", "diffusion": {"reference_images": 99}}"#).err().unwrap();
    assert!(e.contains("diffusion.reference_images: 99 is out of range"), "{e}");
}

#[test]
fn step_cache_and_tome_outside_their_ranges_are_refused_not_clamped() {
    for (space, field) in [
        (r#""step_cache": {"choices": [1e308]}"#, "space.step_cache: 1e308 is not a cache ratio in 1..=8"),
        (r#""step_cache": {"choices": [1.5e300, 2.0]}"#, "space.step_cache: 1.5e300 is not"),
        (r#""step_cache": {"choices": [0.5, 2.0]}"#, "space.step_cache: 0.5"),
        (r#""tome": {"choices": [5]}"#, "space.tome: 5 is not a merge ratio in 0..=0.75"),
        (r#""tome": {"choices": [-0.5]}"#, "space.tome: -0.5"),
    ] {
        let e = Run::new(&scenario("sd2.1-base", "", space)).err().unwrap_or_else(|| panic!("{space} accepted"));
        assert!(e.contains(field), "{space}: {e}");
    }
    // Token merging on a DiT pipeline would be ignored by the builder: refused instead.
    let e = Run::new(&scenario("qwen-image", "", r#""tome": {"choices": [0, 0.5]}"#)).err().unwrap();
    assert!(e.contains("space.tome") && e.contains("DiT"), "{e}");
    // The options' own lists, as before.
    let e = Scenario::from_json(r#"{"version": 1, "stage": "diffusion", "model": "sd2.1-base", "diffusion": {"step_cache_ratios": [1e308]}}"#).err().unwrap();
    assert!(e.contains("diffusion.step_cache_ratios"), "{e}");
    // A valid override still tunes.
    assert!(Run::new(&scenario("sd2.1-base", "", r#""step_cache": {"choices": [1.0, 8.0]}, "tome": {"choices": [0.0, 0.75]}"#)).is_ok());
}

#[test]
fn new_bundled_scenarios_load_and_tune() {
    for id in ["qwen-image-910B2-diffusion", "wan2.2-a14b-8x910B2-diffusion", "flux.1-kontext-910B2-edit"] {
        let mut sc = bundled_scenario(id).unwrap();
        // Wan2.2 keeps its own budget: only W8A8 fits both experts on a 64 GB chip.
        if !id.starts_with("wan") {
            sc.budget = 12;
        }
        let mut run = Run::new(&sc).unwrap_or_else(|e| panic!("{id}: {e}"));
        while !run.step(12).done {}
        assert!(run.best_value(0).is_some(), "{id}: no feasible configuration found");
    }
}

//! The diffusion families bundled in this stop through the diffusion and training stages:
//! FLUX.2-dev (text-to-image and image-to-image) with its weights sharded by FSDP
//! (`diffusion.fsdp`), HiDream-I1's four encoders, and a Qwen-Image-Edit fine-tune whose edit
//! image is resized to 1024 x 1024's area whatever the output's size.

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

fn metrics(run: &mut Run, c: &Config) -> Result<Vec<(String, f64)>, String> {
    let names: Vec<String> = run.metrics().iter().map(|m| m.name.clone()).collect();
    match run.evaluate(c) {
        Outcome::Ok(v) => Ok(names.into_iter().zip(v).collect()),
        o => Err(format!("{o:?}")),
    }
}

fn get(m: &[(String, f64)], name: &str) -> f64 {
    m.iter().find(|x| x.0 == name).unwrap_or_else(|| panic!("no metric {name}")).1
}

fn flux2(model: &str, fsdp: bool) -> Scenario {
    Scenario::from_json(&format!(r#"{{"version": 1, "stage": "diffusion", "model": "{model}", "device": "910B2", "diffusion": {{"chips": 8, "steps": 20, "fsdp": {fsdp}}}, "budget": 10, "seed": 1}}"#)).unwrap()
}

#[test]
fn flux2_needs_fsdp_on_64_gb_chips_and_then_gathers_every_step() {
    let sp8 = [("sp", Value::Int(8)), ("precision", Value::Str("bf16".into()))];
    // Unsharded, the 32 B transformer and the 24 B Mistral encoder (bf16) exceed a 64 GB chip.
    let mut plain = Run::new(&flux2("flux.2-dev", false)).unwrap();
    let c = with(&plain, &sp8);
    let e = metrics(&mut plain, &c).unwrap_err();
    assert!(e.contains("out of memory"), "{e}");
    // Sharded over 8 chips it fits, in about an eighth of the weights.
    let mut fsdp = Run::new(&flux2("flux.2-dev", true)).unwrap();
    let c = with(&fsdp, &sp8);
    let m = metrics(&mut fsdp, &c).unwrap();
    let mem = get(&m, "memory_gib");
    assert!(mem < 30.0, "{mem:.1} GiB per chip");
    // Each step all-gathers the transformer's 64 GB: the step is at least that gather, so the
    // image-to-image call (twice the tokens) costs the same per step at sp 8, as the source
    // measures (1.14 it/s both ways).
    let step = get(&m, "step_ms");
    let mut i2i = Run::new(&flux2("flux.2-dev-i2i", true)).unwrap();
    let c2 = with(&i2i, &sp8);
    let step2 = get(&metrics(&mut i2i, &c2).unwrap(), "step_ms");
    assert!(step > 300.0, "a step gathers 56 GB per chip: {step:.0} ms");
    assert!((step2 / step - 1.0).abs() < 0.05, "t2i {step:.0} ms, i2i {step2:.0} ms");
    // On one chip (sp 1) the compute, not the gather, sets the i2i step.
    let one = [("sp", Value::Int(1)), ("precision", Value::Str("bf16".into()))];
    let (c1, c2) = (with(&fsdp, &one), with(&i2i, &one));
    let a = get(&metrics(&mut fsdp, &c1).unwrap(), "step_ms");
    let b = get(&metrics(&mut i2i, &c2).unwrap(), "step_ms");
    assert!(b > 1.5 * a, "i2i {b:.0} ms vs t2i {a:.0} ms at sp 1");
    // The timeline says what sharding does.
    let t = tunelab_scenario::stages::diffusion::timeline::timeline(&flux2("flux.2-dev", true), Some(&c)).unwrap();
    assert!(t.notes.iter().any(|n| n.contains("FSDP")), "{:?}", t.notes);
}

#[test]
fn fsdp_on_one_chip_is_refused_naming_the_field() {
    let s = Scenario::from_json(r#"{"version": 1, "stage": "diffusion", "model": "flux.2-dev", "device": "910B2", "diffusion": {"fsdp": true}, "budget": 10, "seed": 1}"#);
    let e = match s {
        Ok(s) => Run::new(&s).err().expect("fsdp on one chip must be refused"),
        Err(e) => e,
    };
    assert!(e.contains("diffusion.fsdp"), "{e}");
}

#[test]
fn the_flux2_scenario_is_bundled_and_tunes() {
    let mut sc = bundled_scenario("flux.2-dev-8x910B2-fsdp").unwrap();
    sc.budget = 12;
    let mut run = Run::new(&sc).unwrap();
    while !run.step(12).done {}
    assert!(run.best_value(0).is_some(), "some configuration of FLUX.2 on 8 chips fits");
}

#[test]
fn the_flux2_lora_training_scenario_is_bundled_and_tunes() {
    let mut sc = bundled_scenario("flux.2-dev-8x910B2-lora-training").unwrap();
    sc.budget = 4;
    let mut run = Run::new(&sc).unwrap();
    while !run.step(4).done {}
    assert!(run.best_value(0).is_some(), "a FLUX.2 LoRA step fits 8 chips");
}

#[test]
fn hidream_and_flux2_fine_tunes_price_through_the_training_stage() {
    let train = |model: &str, res: u64, lora: u64, pre: &str| {
        let s = Scenario::from_json(&format!(r#"{{"version": 1, "stage": "training", "model": "{model}", "device": "910B2",
            "workload": {{"micro_batch": 1, "seq_len": 1, "global_batch": 8}},
            "training": {{"chips": 8, "framework": "deepspeed", "resolution": {res}, "lora_rank": {lora}, "precomputed": [{pre}]}},
            "space": {{"tp": {{"fixed": 1}}, "pp": {{"fixed": 1}}, "dp": {{"fixed": 8}}, "micro_batch": {{"fixed": 1}}, "recompute": {{"fixed": "full"}}, "optimizer_sharding": {{"fixed": "zero3"}}, "precision": {{"fixed": "bf16"}}, "sequence_parallel": {{"fixed": "off"}}}},
            "budget": 10, "seed": 1}}"#)).unwrap();
        let mut run = Run::new(&s).unwrap();
        let c = run.baseline_config().clone();
        get(&metrics(&mut run, &c).unwrap(), "step_time_ms")
    };
    // FLUX.2 LoRA: image-to-image doubles the transformer's image tokens (4096 -> 8192).
    let t2i = train("flux.2-dev", 1024, 16, r#""text_encoders", "vae""#);
    let i2i = train("flux.2-dev-i2i", 1024, 16, r#""text_encoders", "vae""#);
    assert!(i2i > 1.8 * t2i, "i2i {i2i:.0} ms vs t2i {t2i:.0} ms");
    // A full fine-tune of HiDream costs more than its LoRA (weight gradients and optimizer).
    let lora = train("hidream-i1-full", 512, 8, r#""text_encoders""#);
    let full = train("hidream-i1-full", 512, 0, r#""text_encoders""#);
    assert!(full > lora, "full {full:.0} ms vs LoRA {lora:.0} ms");
    // Qwen-Image-Edit at 512 x 512 carries a 1024 x 1024 reference: 1024 + 4096 image tokens
    // where a same-size reference would bring 1024 + 1024, so the step costs well over the
    // ~1.6x of Qwen-Image's 512 x 512 step that a same-size reference would (2.6x here).
    let edit = train("qwen-image-edit", 512, 32, "");
    let plain = train("qwen-image", 512, 32, "");
    assert!(edit > 2.2 * plain, "edit {edit:.0} ms vs text-to-image {plain:.0} ms");
}

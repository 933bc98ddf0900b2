//! Fine-tuning in the training stage: frozen parts and LoRA shrink gradients, optimizer state
//! and backward work; diffusion training runs the frozen encoders forward only and reports
//! images per second; bad options name the field.

use tunelab_scenario::{Run, Scenario};
use tunelab_search::Outcome;

fn metrics(json: &str) -> Vec<(String, f64)> {
    let s = Scenario::from_json(json).unwrap_or_else(|e| panic!("{e}"));
    let mut run = Run::new(&s).unwrap_or_else(|e| panic!("{e}"));
    let c = run.baseline_config().clone();
    let names: Vec<String> = run.metrics().iter().map(|m| m.name.clone()).collect();
    match run.evaluate(&c) {
        Outcome::Ok(v) => names.into_iter().zip(v).collect(),
        o => panic!("{o:?}"),
    }
}

fn get(m: &[(String, f64)], n: &str) -> f64 {
    m.iter().find(|x| x.0 == n).unwrap().1
}

const LLAVA: &str = r#"{"stage": "training", "model": "llava-1.5-7b", "device": "910B2", "budget": 1,
 "workload": {"micro_batch": 2, "seq_len": 512, "global_batch": 16}, "training": {"chips": 8 FROZEN},
 "space": {"tp": {"fixed": 1}, "pp": {"fixed": 1}, "dp": {"fixed": 8}, "micro_batch": {"fixed": 2}, "precision": {"fixed": "bf16"}, "optimizer_sharding": {"fixed": "zero2"}, "recompute": {"fixed": "none"}}}"#;

#[test]
fn frozen_parts_and_lora_cut_memory_and_step_time() {
    let full = metrics(&LLAVA.replace(" FROZEN", ""));
    let vision = metrics(&LLAVA.replace(" FROZEN", r#", "frozen": ["vision"]"#));
    let projector_only = metrics(&LLAVA.replace(" FROZEN", r#", "frozen": ["vision", "llm"]"#));
    let lora = metrics(&LLAVA.replace(" FROZEN", r#", "frozen": ["vision"], "lora_rank": 16"#));
    for (name, m) in [("vision frozen", &vision), ("projector only", &projector_only), ("LoRA", &lora)] {
        assert!(get(m, "memory_gib") < get(&full, "memory_gib"), "{name}: less memory than the full fine-tune");
        assert!(get(m, "step_time_ms") < get(&full, "step_time_ms"), "{name}: a shorter step");
    }
    // The projector-only pretrain has no weight gradients in the LLM: far less memory than LoRA's
    // frozen-base full activations? Both keep the LLM's activations; the pretrain has no adapters.
    assert!(get(&projector_only, "step_time_ms") < get(&lora, "step_time_ms"));
}

#[test]
fn mean_sequence_length_counts_every_token_of_the_sample() {
    let at = |mean: u64| metrics(&LLAVA.replace(" FROZEN", &format!(r#", "frozen": ["vision"], "mean_seq_len": {mean}"#)));
    let a = at(1088);
    let b = metrics(&LLAVA.replace(" FROZEN", r#", "frozen": ["vision"]"#));
    // 1088 = 576 image tokens + 512 text: the same step as seq_len 512, counting 1088 tokens.
    assert!((get(&a, "step_time_ms") - get(&b, "step_time_ms")).abs() < 1e-6);
    assert!((get(&a, "tokens_per_s") / get(&b, "tokens_per_s") - 1088.0 / 512.0).abs() < 1e-9);
}

#[test]
fn diffusion_training_reports_images_per_second() {
    let j = |extra: &str| format!(r#"{{"stage": "training", "model": "sd3.5-medium", "device": "910B2", "budget": 1,
 "workload": {{"micro_batch": 4, "seq_len": 1, "global_batch": 32}}, "training": {{"chips": 8, "resolution": 512 {extra}}},
 "space": {{"tp": {{"fixed": 1}}, "pp": {{"fixed": 1}}, "dp": {{"fixed": 8}}, "micro_batch": {{"fixed": 4}}, "precision": {{"fixed": "bf16"}}, "optimizer_sharding": {{"fixed": "zero2"}}, "recompute": {{"fixed": "full"}}}}}}"#);
    let full = metrics(&j(""));
    let pre = metrics(&j(r#", "precomputed": ["text_encoders", "vae"]"#));
    let lora = metrics(&j(r#", "precomputed": ["text_encoders", "vae"], "lora_rank": 64"#));
    assert!(get(&full, "samples_per_s") > 0.0);
    assert!(get(&pre, "samples_per_s") > get(&full, "samples_per_s"), "precomputed conditioning skips the frozen encoders");
    assert!(get(&lora, "samples_per_s") > get(&pre, "samples_per_s"), "LoRA skips the base weights' gradients");
    assert!(get(&lora, "memory_gib") < get(&pre, "memory_gib"));
    // MFU comes from the denoiser's own step arithmetic (a transformer's 6 N per token does not
    // apply): a fraction a trained DiT reaches, not the 1e-4 the per-token formula gave.
    for (name, m) in [("full", &full), ("precomputed", &pre), ("LoRA", &lora)] {
        let mfu = get(m, "mfu");
        assert!((0.05..0.8).contains(&mfu), "{name}: mfu {mfu}");
    }
}

#[test]
fn bad_finetune_options_name_the_field() {
    let e = |extra: &str| Scenario::from_json(&LLAVA.replace(" FROZEN", extra)).err().unwrap_or_default();
    assert!(e(r#", "frozen": ["unet"]"#).starts_with("training.frozen:"));
    assert!(e(r#", "lora_targets": "everything""#).starts_with("training.lora_targets:"));
    assert!(e(r#", "precomputed": ["clip"]"#).starts_with("training.precomputed:"));
    let s = Scenario::from_json(r#"{"stage": "training", "model": "sdxl", "training": {"resolution": 1000}}"#).unwrap();
    let err = Run::new(&s).err().unwrap_or_default();
    assert!(err.starts_with("training.resolution: 1000 is not a multiple of 32"), "{err}");
}

#[test]
fn video_training_encodes_its_frames_with_the_wan_vae() {
    let j = |extra: &str| format!(r#"{{"stage": "training", "model": "wan2.1-t2v-1.3b", "device": "910B2", "budget": 1,
 "workload": {{"micro_batch": 1, "seq_len": 1, "global_batch": 8}}, "training": {{"chips": 8, "resolution": 480, "width": 832 {extra}}},
 "space": {{"tp": {{"fixed": 1}}, "pp": {{"fixed": 1}}, "dp": {{"fixed": 8}}, "micro_batch": {{"fixed": 1}}, "precision": {{"fixed": "bf16"}}, "optimizer_sharding": {{"fixed": "zero2"}}, "recompute": {{"fixed": "full"}}}}}}"#);
    let encoded = metrics(&j(r#", "frames": 81, "lora_rank": 32, "precomputed": ["text_encoders"]"#));
    let precomputed = metrics(&j(r#", "frames": 81, "lora_rank": 32, "precomputed": ["text_encoders", "vae"]"#));
    let shorter = metrics(&j(r#", "frames": 33, "lora_rank": 32, "precomputed": ["text_encoders"]"#));
    assert!(get(&encoded, "step_time_ms") > get(&precomputed, "step_time_ms"), "encoding 81 frames each step costs time");
    assert!(get(&shorter, "step_time_ms") < get(&encoded, "step_time_ms"), "fewer frames: fewer latent frames and encoder chunks");
    // The model names the frames it encodes.
    let s = Scenario::from_json(&j(r#", "frames": 81"#)).unwrap();
    let (m, _, _) = tunelab_scenario::stages::context::resolve(&s).unwrap();
    assert!(m.graph.iter().any(|o| o.name.starts_with("frozen.vae_encoder.chunk.")), "the Wan encoder runs chunk by chunk");
    // Refused when the scenario is read or when the run is set up, the field named either way.
    let e = |extra: &str| match Scenario::from_json(&j(extra)) {
        Ok(s) => Run::new(&s).err().unwrap_or_default(),
        Err(e) => e,
    };
    assert!(e(r#", "frames": 80"#).starts_with("training.frames:"), "{}", e(r#", "frames": 80"#));
    assert!(e(r#", "width": 830"#).starts_with("training.width:"), "{}", e(r#", "width": 830"#));
    assert!(e(r#", "frames": 0"#).starts_with("training.frames:"));
}

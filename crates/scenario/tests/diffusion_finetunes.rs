//! LoRA and full fine-tunes of the diffusion families of 2025-2026 through the training stage:
//! FLUX.2-dev, HiDream-I1, Sana-1600M, HunyuanVideo, Wan2.2-A14B and Qwen-Image. For each, the
//! scenario loads, prices a step (time and memory), the model it trains holds the pipeline's
//! denoiser (its graph's weights) with the frozen encoders forward-only, and a full fine-tune
//! costs more memory than a LoRA of the same step (weight gradients and optimizer states).

use tunelab_scenario::{bundled_scenario, context, Run, Scenario};
use tunelab_search::Outcome;
use tunelab_sim::workload::diffusers::{EmitOptions, Pipeline, SeqParallel, Tome};

fn scenario(model: &str, size: &str, lora: u64, pre: &str) -> Scenario {
    Scenario::from_json(&format!(
        r#"{{"version": 1, "stage": "training", "model": "{model}", "device": "910B2",
        "workload": {{"micro_batch": 1, "seq_len": 1, "global_batch": 8}},
        "training": {{"chips": 8, "framework": "deepspeed", {size}, "lora_rank": {lora}, "precomputed": [{pre}]}},
        "space": {{"tp": {{"fixed": 1}}, "pp": {{"fixed": 1}}, "dp": {{"fixed": 8}}, "micro_batch": {{"fixed": 1}}, "recompute": {{"fixed": "full"}}, "optimizer_sharding": {{"fixed": "zero3"}}, "precision": {{"fixed": "bf16"}}, "sequence_parallel": {{"fixed": "off"}}}},
        "budget": 10, "seed": 1}}"#
    ))
    .unwrap_or_else(|e| panic!("{model}: {e}"))
}

/// (step ms, memory GiB) of the scenario's baseline.
fn price(s: &Scenario) -> (f64, f64) {
    let mut run = Run::new(s).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<String> = run.metrics().iter().map(|m| m.name.clone()).collect();
    let c = run.baseline_config().clone();
    match run.evaluate(&c) {
        Outcome::Ok(v) => {
            let get = |n: &str| v[names.iter().position(|x| x == n).unwrap_or_else(|| panic!("no metric {n}"))];
            (get("step_time_ms"), get("memory_gib"))
        }
        o => panic!("{o:?}"),
    }
}

/// Checks one family: the trained model holds the denoiser's graph weights plus the frozen
/// encoders that run per step; LoRA and full both price, full needs more memory.
fn family(model: &str, size: &str, h: u64, w: u64, frames: u64, pre: &str, frozen_parts: &[&str]) {
    let lora = scenario(model, size, 16, pre);
    let full = scenario(model, size, 0, pre);
    let (m, _, warnings) = context::resolve(&lora).unwrap();
    assert!(warnings.iter().any(|x| x.contains("frozen")), "{model}: {warnings:?}");
    // The denoiser's graph weights, as the pipeline's own denoiser model counts them at the size.
    let p = Pipeline::load(model).unwrap();
    let refs = p.defaults.reference_images;
    let l = p.latent_with_references(h, w, frames, refs).unwrap();
    let den = p.denoiser(1, &l, EmitOptions::default(), Tome::none(), SeqParallel { degree: 1, ring: false }).unwrap();
    let graph_den = p.denoiser_model(&l).unwrap().params().total;
    let trained: u64 = m.graph.iter().filter(|o| !o.name.starts_with("frozen.")).map(|o| o.weight_params() * o.repeat).sum();
    assert_eq!(trained, graph_den, "{model}: the trained part is the denoiser's graph");
    assert!(den.weights >= graph_den, "{model}: the pipeline holds at least the graph's weights");
    for part in frozen_parts {
        assert!(m.graph.iter().any(|o| o.name.starts_with(&format!("frozen.{part}"))), "{model}: no frozen {part} in the step");
    }
    let (t_lora, m_lora) = price(&lora);
    let (t_full, m_full) = price(&full);
    println!("{model}: LoRA {t_lora:.0} ms / {m_lora:.1} GiB, full {t_full:.0} ms / {m_full:.1} GiB per chip; denoiser graph {:.2} B of {:.2} B held", graph_den as f64 / 1e9, den.weights as f64 / 1e9);
    assert!(t_lora > 0.0 && t_full >= t_lora * 0.99, "{model}: LoRA {t_lora} ms, full {t_full} ms");
    // Full: bf16 weights and gradients plus fp32 master weights and Adam moments (16 bytes a
    // parameter) sharded over 8 chips; LoRA: only the frozen weights, sharded.
    let states_gib = graph_den as f64 * 14.0 / 8.0 / (1u64 << 30) as f64;
    assert!(m_full - m_lora > 0.8 * states_gib, "{model}: full {m_full:.1} GiB vs LoRA {m_lora:.1} GiB (states {states_gib:.1} GiB)");
}

#[test]
fn flux2_fine_tunes() {
    family("flux.2-dev", r#""resolution": 1024"#, 1024, 1024, 1, r#""text_encoders", "vae""#, &[]);
}

#[test]
fn hidream_fine_tunes() {
    family("hidream-i1-full", r#""resolution": 512"#, 512, 512, 1, r#""text_encoders""#, &["vae_encoder"]);
}

#[test]
fn sana_fine_tunes_with_gemma_and_the_dc_ae_every_step() {
    family("sana-1600m-1024px", r#""resolution": 1024"#, 1024, 1024, 1, "", &["text_encoder", "vae_encoder"]);
}

#[test]
fn hunyuanvideo_fine_tunes_on_video_clips() {
    family("hunyuanvideo", r#""resolution": 544, "width": 960, "frames": 33"#, 544, 960, 33, r#""text_encoders""#, &["vae_encoder"]);
}

#[test]
fn wan22_fine_tunes_one_expert() {
    // 33-frame clips (9 latent frames): at 81 frames a full fine-tune's activations (46.6 GiB
    // with full recompute) do not fit 64 GB chips without sequence parallelism, as the stage says.
    family("wan2.2-t2v-a14b", r#""resolution": 480, "width": 832, "frames": 33"#, 480, 832, 33, r#""text_encoders", "vae""#, &[]);
}

#[test]
fn qwen_image_fine_tunes() {
    family("qwen-image", r#""resolution": 512"#, 512, 512, 1, "", &["text_encoder", "vae_encoder"]);
}

#[test]
fn the_new_fine_tune_scenarios_are_bundled_and_tune() {
    for id in ["sana-1600m-8x910B2-lora-training", "hunyuanvideo-8x910B2-lora-training"] {
        let mut sc = bundled_scenario(id).unwrap_or_else(|e| panic!("{id}: {e}"));
        sc.budget = 4;
        let mut run = Run::new(&sc).unwrap_or_else(|e| panic!("{id}: {e}"));
        while !run.step(4).done {}
        assert!(run.best_value(0).is_some(), "{id}: some configuration fits");
    }
}

#[test]
fn the_timeline_names_what_the_pipeline_approximates() {
    // The app lists these under the pipeline timeline; a pipeline priced as its configs
    // describe it lists none.
    let s = bundled_scenario("sana-1600m-910B2-diffusion").unwrap();
    let t = tunelab_scenario::stages::diffusion::timeline::timeline(&s, None).unwrap();
    assert!(t.approximations.iter().any(|a| a.starts_with("transformer, vae, text_encoder: built from public source code")), "{:?}", t.approximations);
    let h = bundled_scenario("hunyuanvideo-8x910B2-diffusion").unwrap();
    let t = tunelab_scenario::stages::diffusion::timeline::timeline(&h, None).unwrap();
    assert!(t.approximations.iter().any(|a| a.starts_with("vae: AutoencoderKLHunyuanVideo")), "{:?}", t.approximations);
    let sd = bundled_scenario("sd2.1-910B2-diffusion").unwrap();
    assert!(tunelab_scenario::stages::diffusion::timeline::timeline(&sd, None).unwrap().approximations.is_empty());
}

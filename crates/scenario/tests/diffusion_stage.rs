//! The diffusion stage end to end: the founding SD 2.1 story from the model's own numbers, the
//! timeline adding up to the latency the study sees, the parallel and memory knobs doing what
//! they are for, the diagnosis, and bad input refused with the field named.

use tunelab_scenario::stages::diffusion::timeline::timeline;
use tunelab_scenario::{bundled_scenario, Run, Scenario};
use tunelab_search::{Config, Outcome, Value};

fn scenario(json: &str) -> Scenario {
    Scenario::from_json(json).unwrap()
}

/// The baseline with some parameters changed.
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

#[test]
fn founding_story_text_encoder_share_grows_then_the_cache_removes_it() {
    // The seed's story from the model's own numbers: the pipeline as shipped (eager, unfused
    // attention, 50 steps) spends a few percent in the text encoders; once the UNet is optimised
    // (compiled, W8A8, ToMe, DeepCache, 20 steps of a multistep solver) the encoders, still eager
    // and launch-bound (two calls of ~23 layers x ~19 kernels), are a visible share, and the
    // text-encoder cache removes exactly that share.
    let sc = bundled_scenario("sd2.1-910B2-diffusion").unwrap();
    let mut run = Run::new(&sc).unwrap();
    let shipped = with(&run, &[("launch", s("eager")), ("attention", s("unfused"))]);
    let unet = with(&run, &[("steps", Value::Int(20)), ("launch", s("graph")), ("attention", s("flash")), ("tome", Value::Float(0.5)), ("precision", s("w8a8")), ("step_cache", Value::Float(2.0)), ("vae_launch", s("graph"))]);
    let mut cached = unet.clone();
    cached.0[run.space().index_of("text_encoder_cache").unwrap()] = s("on");
    let share = |run: &mut Run, c: &Config| metric(run, c, "text_encoder_ms") / metric(run, c, "latency_ms");
    let (a, b) = (share(&mut run, &shipped), share(&mut run, &unet));
    assert!(a < 0.04, "as shipped the text encoders are a small share: {a:.4}");
    assert!(b >= 0.08, "after the UNet is optimised the text encoders are a visible share: {a:.4} -> {b:.4}");
    assert!(metric(&mut run, &unet, "latency_ms") < 0.35 * metric(&mut run, &shipped, "latency_ms"));
    assert_eq!(metric(&mut run, &cached, "text_encoder_ms"), 0.0);
    let saved = metric(&mut run, &unet, "latency_ms") - metric(&mut run, &cached, "latency_ms");
    assert!((saved - metric(&mut run, &unet, "text_encoder_ms")).abs() < 1e-9, "caching removes exactly the encoders' time");
    // The output-changing knobs are counted (quality is not simulated).
    assert_eq!(metric(&mut run, &unet, "output_changing_knobs"), 4.0);
    assert_eq!(metric(&mut run, &shipped, "output_changing_knobs"), 0.0);
}

#[test]
fn text_encoders_keep_their_own_attention_and_fp32_has_no_fused_attention() {
    // The attention knob is the denoiser's and the VAE's: the encoders' time does not move with it.
    let sc = bundled_scenario("sd2.1-910B2-diffusion").unwrap();
    let mut run = Run::new(&sc).unwrap();
    let flash = with(&run, &[("attention", s("flash"))]);
    let unfused = with(&run, &[("attention", s("unfused"))]);
    assert_eq!(metric(&mut run, &flash, "text_encoder_ms"), metric(&mut run, &unfused, "text_encoder_ms"));
    assert!(metric(&mut run, &flash, "step_ms") < metric(&mut run, &unfused, "step_ms"));
    // In fp32 the fused kernel is not there (torch_npu FA takes fp16/bf16): 'flash' prices as unfused.
    let sx = scenario(r#"{"stage": "diffusion", "model": "sdxl", "device": "910B2", "diffusion": {"height": 1024, "width": 1024, "steps": 4}, "space": {"precision": {"choices": ["fp16", "fp32"]}}}"#);
    let mut run = Run::new(&sx).unwrap();
    let f = |run: &Run, a: &str| with(run, &[("precision", s("fp32")), ("attention", s(a))]);
    let (a, b) = (f(&run, "flash"), f(&run, "unfused"));
    assert_eq!(metric(&mut run, &a, "step_ms"), metric(&mut run, &b, "step_ms"));
}

#[test]
fn the_timeline_adds_up_to_the_latency_the_study_sees() {
    let sc = bundled_scenario("sd2.1-910B2-diffusion").unwrap();
    let mut run = Run::new(&sc).unwrap();
    let c = with(&run, &[("step_cache", Value::Float(2.0)), ("text_encoder_cache", s("off"))]);
    let t = timeline(&sc, Some(&c)).unwrap();
    let sum: f64 = t.segments.iter().map(|x| x.ms).sum();
    let lat = metric(&mut run, &c, "latency_ms");
    assert!((sum - lat).abs() < 1e-6 * lat, "segments {sum} vs latency {lat}");
    assert!(t.segments.iter().any(|x| x.kind == "denoise_cached"));
    assert!(t.segments.iter().any(|x| x.kind == "text_encoder"));
}

#[test]
fn cfg_and_sequence_parallelism_use_more_chips_to_cut_latency() {
    let sc = scenario(r#"{"stage": "diffusion", "model": "wan2.1-t2v-14b", "device": "910B2", "diffusion": {"chips": 8, "steps": 4, "framework": "mindie_sd"}, "budget": 4}"#);
    let mut run = Run::new(&sc).unwrap();
    let one = with(&run, &[("launch", s("graph"))]);
    let u8 = with(&run, &[("launch", s("graph")), ("sp", Value::Int(8))]);
    let cfg2u4 = with(&run, &[("launch", s("graph")), ("sp", Value::Int(4)), ("cfg_parallel", s("on"))]);
    let ring8 = with(&run, &[("launch", s("graph")), ("sp", Value::Int(8)), ("sp_mode", s("ring"))]);
    let (l1, l8, lc, lr) = (metric(&mut run, &one, "step_ms"), metric(&mut run, &u8, "step_ms"), metric(&mut run, &cfg2u4, "step_ms"), metric(&mut run, &ring8, "step_ms"));
    assert!(l8 < l1 / 5.0, "Ulysses 8: {l8} vs one chip {l1}");
    assert!(lc < l1 / 5.0);
    assert!(lr > l8, "ring attention's exchange is not overlapped here: {lr} vs {l8}");
    // One chip per instance: 8 replicas; 8 chips per instance: 1.
    let ips1 = metric(&mut run, &one, "images_per_s");
    let ips8 = metric(&mut run, &u8, "images_per_s");
    assert!(ips1 > 0.0 && ips8 > 0.0);
    // Wan 1.3B has 12 heads: Ulysses over 8 chips is refused with the reason.
    let small = scenario(r#"{"stage": "diffusion", "model": "wan2.1-t2v-1.3b", "device": "910B2", "diffusion": {"chips": 8, "steps": 2}, "budget": 4}"#);
    let mut r2 = Run::new(&small).unwrap();
    let c = with(&r2, &[("sp", Value::Int(8))]);
    match r2.evaluate(&c) {
        Outcome::Infeasible(r) => assert!(r.contains("heads (12)"), "{r}"),
        o => panic!("{o:?}"),
    }
}

#[test]
fn vae_tiling_and_slicing_save_memory() {
    let sc = scenario(r#"{"stage": "diffusion", "model": "sdxl", "device": "910B2", "diffusion": {"batch": 4, "steps": 2}, "budget": 4}"#);
    let mut run = Run::new(&sc).unwrap();
    let full = with(&run, &[("vae", s("full")), ("vae_precision", s("fp32"))]);
    let tiled = with(&run, &[("vae", s("tiled")), ("vae_precision", s("fp32"))]);
    let sliced = with(&run, &[("vae", s("sliced")), ("vae_precision", s("fp32"))]);
    let m = |run: &mut Run, c: &Config| metric(run, c, "memory_gib");
    let (f, t, sl) = (m(&mut run, &full), m(&mut run, &tiled), m(&mut run, &sliced));
    assert!(t < f && sl < f, "full {f} GiB, tiled {t}, sliced {sl}");
    // SDXL's VAE config forces fp32 decoding (force_upcast): that is the baseline.
    let i = run.space().index_of("vae_precision").unwrap();
    assert_eq!(run.baseline_config().0[i], s("fp32"));
}

#[test]
fn diagnosis_breaks_down_one_denoiser_step() {
    let sc = bundled_scenario("sd2.1-910B2-diffusion").unwrap();
    let d = tunelab_scenario::diagnosis::diagnose(&sc, None, Default::default()).unwrap();
    assert_eq!(d.goal, "latency_ms");
    assert!(d.simulated.contains("denoiser"), "{}", d.simulated);
    assert!(!d.hot_spots.is_empty());
    assert!(d.hot_spots.iter().any(|h| h.name.contains("attn1.core")), "self-attention appears among the hot spots");
    assert!(!d.suggestions.is_empty(), "a faster neighbour exists (graph launch, flash attention, ...)");
}

#[test]
fn bad_input_names_the_field() {
    let err = |j: &str| Run::new(&Scenario::from_json(j).map_err(|e| e).unwrap_or_else(|e| panic!("{e}"))).err().unwrap_or_default();
    let parse_err = |j: &str| Scenario::from_json(j).err().unwrap_or_default();
    assert!(err(r#"{"stage": "diffusion", "model": "sdxl", "diffusion": {"height": 1000}}"#).starts_with("diffusion.height: 1000 is not a multiple of 32"));
    assert!(err(r#"{"stage": "diffusion", "model": "wan2.1-t2v-1.3b", "diffusion": {"frames": 80}}"#).starts_with("diffusion.frames:"));
    assert!(parse_err(r#"{"stage": "diffusion", "model": "sdxl", "diffusion": {"steps": 0}}"#).starts_with("diffusion.steps:"));
    assert!(parse_err(r#"{"stage": "diffusion", "model": "sdxl", "diffusion": {"frames": 5000}}"#).starts_with("diffusion.frames:"));
    assert!(parse_err(r#"{"stage": "diffusion", "model": "sdxl", "diffusion": {"precisions": ["fp8"]}}"#).starts_with("diffusion.precisions:"));
    assert!(err(r#"{"stage": "diffusion", "model": "sdxl", "diffusion": {"framework": "onnx"}}"#).starts_with("diffusion.framework:"));
    assert!(err(r#"{"stage": "diffusion", "model": "sd9"}"#).starts_with("model: no bundled diffusion pipeline"));
    let e = err(r#"{"stage": "diffusion", "model": {"denoiser": {"_class_name": "UNetMotionModel"}, "vae": "sd1.5/vae", "text_encoders": ["sd1.5/text_encoder"]}}"#);
    assert!(e.starts_with("model: denoiser.num_attention_heads") || e.starts_with("model: denoiser._class_name"), "{e}");
}

#[test]
fn other_stages_json_is_unchanged() {
    let j = Scenario::default().to_json();
    assert!(!j.contains("diffusion"), "a scenario of another stage writes no diffusion block");
}

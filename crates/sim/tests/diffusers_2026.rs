//! The diffusion families of 2025-2026 built from their diffusers configs: each denoiser's
//! parameter count against its model card (within 2%), Wan2.2-A14B's two experts, reference
//! tokens lengthening the sequence (FLUX.1-Kontext, Qwen-Image-Edit), the LLM text encoders,
//! and errors naming the field.
//!
//! The transformer configs below are the ones the model repositories publish
//! (`transformer/config.json`), as quoted in public code that loads them; the bundled ones are
//! read from `assets/models/diffusers`.

use serde_json::{json, Value};
use tunelab_sim::workload::diffusers::cfg::Cfg;
use tunelab_sim::workload::diffusers::{Dit, DitKind, EmitOptions, Emit, Pipeline, SeqParallel, TextEncoder, Tome};

const ONE: SeqParallel = SeqParallel { degree: 1, ring: false };

fn dit(v: &Value) -> Dit {
    Dit::parse(&Cfg::new("denoiser", v).unwrap()).unwrap()
}

/// Weight parameters of one forward (1024 output tokens, 256 text tokens), billions.
fn params(d: &Dit) -> f64 {
    let mut e = Emit::new(EmitOptions::default());
    d.build(&mut e, 1, 1024, 0, 256, ONE).unwrap();
    e.weights as f64 / 1e9
}

fn within(got: f64, card: f64, what: &str) {
    within_tol(got, card, 0.02, what);
}

fn within_tol(got: f64, card: f64, tol: f64, what: &str) {
    println!("{what}: {got:.3} B parameters (model card {card} B, {:+.1}%)", (got / card - 1.0) * 100.0);
    assert!((got / card - 1.0).abs() < tol, "{what}: {got:.3} B parameters, the model card says {card} B");
}

/// black-forest-labs/FLUX.2-dev transformer/config.json.
fn flux2_dev() -> Value {
    json!({"_class_name": "Flux2Transformer2DModel", "patch_size": 1, "in_channels": 128, "num_layers": 8, "num_single_layers": 48, "attention_head_dim": 128, "num_attention_heads": 48, "joint_attention_dim": 15360, "timestep_guidance_channels": 256, "mlp_ratio": 3.0, "axes_dims_rope": [32, 32, 32, 32], "rope_theta": 2000, "guidance_embeds": true})
}

/// HiDream-ai/HiDream-I1-Full transformer/config.json.
fn hidream_i1() -> Value {
    let mut llama: Vec<u64> = (0..32).collect();
    llama.extend([31; 16]);
    json!({"_class_name": "HiDreamImageTransformer2DModel", "attention_head_dim": 128, "axes_dims_rope": [64, 32, 32], "caption_channels": [4096, 4096], "max_resolution": [128, 128], "in_channels": 16, "llama_layers": llama, "num_attention_heads": 20, "num_routed_experts": 4, "num_activated_experts": 2, "num_layers": 16, "num_single_layers": 32, "out_channels": 16, "patch_size": 2, "text_emb_dim": 2048})
}

/// Efficient-Large-Model/Sana_1600M_1024px_diffusers transformer/config.json.
fn sana_1600m() -> Value {
    json!({"_class_name": "SanaTransformer2DModel", "sample_size": 32, "patch_size": 1, "num_layers": 20, "num_attention_heads": 70, "attention_head_dim": 32, "num_cross_attention_heads": 20, "cross_attention_head_dim": 112, "cross_attention_dim": 2240, "caption_channels": 2304, "in_channels": 32, "out_channels": 32, "attention_bias": false, "qk_norm": "rms_norm_across_heads", "mlp_ratio": 2.5, "dropout": 0.0, "norm_elementwise_affine": false, "norm_eps": 1e-6, "interpolation_scale": null, "guidance_embeds": false, "guidance_embeds_scale": 0.1, "timestep_scale": 1.0})
}

/// hunyuanvideo-community/HunyuanVideo transformer/config.json.
fn hunyuan_video() -> Value {
    json!({"_class_name": "HunyuanVideoTransformer3DModel", "_diffusers_version": "0.32.0.dev0", "attention_head_dim": 128, "guidance_embeds": true, "in_channels": 16, "mlp_ratio": 4.0, "num_attention_heads": 24, "num_layers": 20, "num_refiner_layers": 2, "num_single_layers": 40, "out_channels": 16, "patch_size": 2, "patch_size_t": 1, "pooled_projection_dim": 768, "qk_norm": "rms_norm", "rope_axes_dim": [16, 56, 56], "rope_theta": 256.0, "text_embed_dim": 4096})
}

#[test]
fn denoisers_of_2026_have_their_model_cards_parameter_counts() {
    // Qwen-Image: 20 B (model card; 20.43 B in its safetensors); FLUX.2-dev: 32 B; HiDream-I1:
    // 17 B; Sana-1600M: 1.6 B; HunyuanVideo: 13 B (its paper's 12.8 B transformer... the card's 13 B).
    let qwen = Pipeline::load("qwen-image").unwrap();
    let tunelab_sim::workload::diffusers::Denoiser::Dit(q) = &qwen.denoiser else { panic!("Qwen-Image is a DiT") };
    assert_eq!(q.kind, DitKind::QwenImage);
    within(params(q), 20.43, "Qwen-Image");
    within(params(&dit(&flux2_dev())), 32.0, "FLUX.2-dev");
    within(params(&dit(&hidream_i1())), 17.0, "HiDream-I1");
    within(params(&dit(&sana_1600m())), 1.6, "Sana-1600M");
    within(params(&dit(&hunyuan_video())), 13.0, "HunyuanVideo");
    let wan = Pipeline::load("wan2.2-t2v-a14b").unwrap();
    let tunelab_sim::workload::diffusers::Denoiser::Dit(w) = &wan.denoiser else { panic!() };
    // The card's "14B active" is rounded: the config gives 14.28 B per expert (+2.0%), as it
    // gives Wan2.1-14B, whose transformer this is.
    within_tol(params(w), 14.0, 0.025, "Wan2.2-A14B high-noise expert");
}

#[test]
fn hidream_runs_two_of_four_experts_but_holds_all_four() {
    let d = dit(&hidream_i1());
    let mut e = Emit::new(EmitOptions::default());
    d.build(&mut e, 1, 4096, 0, 256, ONE).unwrap();
    let expert_up = e.ops.iter().find(|o| o.name == "block.moe.experts.up").unwrap();
    let tunelab_sim::Op::Matmul { m, .. } = expert_up.op else { panic!() };
    // The image tokens and the text tokens of a double block; two routed experts per token.
    assert_eq!(m, 2 * 4096);
    let mut one = hidream_i1();
    one["num_routed_experts"] = json!(2);
    let w = |d: &Dit| {
        let mut e = Emit::new(EmitOptions::default());
        d.build(&mut e, 1, 1024, 0, 256, ONE).unwrap();
        e.weights
    };
    // Two routed experts fewer in 48 blocks: 2 x 48 x (3 x 2560 x 6912 + the router's 2560).
    assert_eq!(w(&d) - w(&dit(&one)), 2 * 48 * (3 * 2560 * 6912 + 2560));
}

#[test]
fn wan22_holds_both_experts_and_switches_at_the_boundary() {
    let p = Pipeline::load("wan2.2-t2v-a14b").unwrap();
    assert_eq!(p.experts(), 2);
    assert_eq!(p.boundary_ratio, 0.875);
    let d = p.defaults;
    let l = p.latent(d.height, d.width, d.frames).unwrap();
    let a = p.expert(0, 1, &l, EmitOptions::default(), Tome::none(), ONE).unwrap();
    let b = p.expert(1, 1, &l, EmitOptions::default(), Tome::none(), ONE).unwrap();
    assert_eq!(a.weights, b.weights, "the experts have the same shape");
    // Shift 3, boundary 0.875: sigma' >= 0.875 for sigma >= 0.7, so 12 of 40 steps are high-noise.
    assert_eq!(p.high_noise_steps(40), 12);
    assert!(p.high_noise_steps(40) < 40);
    // Wan2.1 (one expert) runs every step with it.
    assert_eq!(Pipeline::load("wan2.1-t2v-14b").unwrap().high_noise_steps(50), 50);
    // A second expert without its boundary is refused, naming the field.
    let mut v: Value = serde_json::from_str(&tunelab_sim::workload::diffusers::bundled_pipeline_json("wan2.2-t2v-a14b").unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("boundary_ratio");
    assert!(Pipeline::from_value(&v).unwrap_err().starts_with("boundary_ratio:"));
    v["boundary_ratio"] = json!(1.5);
    assert!(Pipeline::from_value(&v).unwrap_err().starts_with("boundary_ratio:"));
}

#[test]
fn reference_images_lengthen_the_sequence_not_the_output() {
    let k = Pipeline::load("flux.1-kontext-dev").unwrap();
    assert_eq!(k.defaults.reference_images, 1);
    let plain = k.latent_with_references(1024, 1024, 1, 0).unwrap();
    let with = k.latent_with_references(1024, 1024, 1, 1).unwrap();
    assert_eq!(with.ref_tokens, plain.tokens);
    let attn = |l| {
        let c = k.denoiser(1, &l, EmitOptions::default(), Tome::none(), ONE).unwrap();
        let core = c.ops.iter().find(|o| o.name == "block.self_attn.core").unwrap().op.clone();
        let out = c.ops.iter().find(|o| o.name == "proj_out").unwrap().op.clone();
        let tunelab_sim::Op::Attention { q_len, .. } = core else { panic!() };
        let tunelab_sim::Op::Matmul { m, .. } = out else { panic!() };
        (q_len, m)
    };
    let (q0, out0) = attn(plain);
    let (q1, out1) = attn(with);
    // 4096 image + 512 text tokens, then 4096 more reference tokens; the output stays 4096.
    assert_eq!((q0, q1), (4096 + 512, 2 * 4096 + 512));
    assert_eq!((out0, out1), (4096, 4096));
    let edit = Pipeline::load("qwen-image-edit").unwrap();
    assert!(edit.latent_with_references(1024, 1024, 1, 1).unwrap().ref_tokens > 0);
    // A pipeline whose denoiser takes no reference tokens says so.
    let e = Pipeline::load("sdxl").unwrap().latent_with_references(1024, 1024, 1, 1).unwrap_err();
    assert!(e.starts_with("reference_images:"), "{e}");
}

#[test]
fn llm_text_encoders_read_text_config_wrappers() {
    // FLUX.2-dev's text encoder (Mistral-Small-3.1 under text_config).
    let m = json!({"architectures": ["Mistral3ForConditionalGeneration"], "model_type": "mistral3", "text_config": {"hidden_size": 5120, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 32768, "num_hidden_layers": 40, "vocab_size": 131072}});
    let enc = TextEncoder::parse(&Cfg::new("text_encoder", &m).unwrap()).unwrap();
    assert_eq!(enc, TextEncoder::Llm { hidden: 5120, inter: 32768, heads: 32, kv_heads: 8, head_dim: 128, layers: 40 });
    let mut e = Emit::new(EmitOptions::default());
    enc.build(&mut e, 1, 512);
    // 40 layers x ((q 4096 + kv 2 x 1024 + o 4096) x 5120 + 3 x 5120 x 32768) = 22.23 B; with
    // the 2 x 131072 x 5120 embedding and head (not matmul weights here) the card's 24 B.
    assert_eq!(e.weights, 40 * ((4096 + 2048 + 4096) * 5120 + 3 * 5120 * 32768));
    let bad = json!({"architectures": ["Mistral3ForConditionalGeneration"], "text_config": {"hidden_size": 5120, "num_attention_heads": 32, "num_key_value_heads": 7, "intermediate_size": 1, "num_hidden_layers": 1}});
    let err = TextEncoder::parse(&Cfg::new("text_encoder", &bad).unwrap()).unwrap_err();
    assert!(err.starts_with("text_encoder.text_config.num_key_value_heads"), "{err}");
}

#[test]
fn new_families_build_at_their_defaults_and_refuse_bad_fields() {
    for id in ["qwen-image", "qwen-image-edit", "flux.1-kontext-dev", "wan2.2-t2v-a14b"] {
        let p = Pipeline::load(id).unwrap_or_else(|e| panic!("{id}: {e}"));
        let d = p.defaults;
        let l = p.latent_with_references(d.height, d.width, d.frames, d.reference_images).unwrap();
        assert!(!p.denoiser(1, &l, EmitOptions::default(), Tome::none(), ONE).unwrap().ops.is_empty(), "{id}");
        let (vae, _) = p.vae_decoder(1, &l, EmitOptions::default(), None);
        assert!(vae.weights > 30_000_000, "{id}");
        if d.reference_images > 0 {
            assert!(!p.reference_encoder(1, &l, EmitOptions::default()).unwrap().ops.is_empty());
        }
    }
    // Qwen-Image's VAE is Wan's on single frames: an image pipeline.
    assert!(!Pipeline::load("qwen-image").unwrap().is_video());
    let mut h = hidream_i1();
    h["num_activated_experts"] = json!(5);
    let e = Dit::parse(&Cfg::new("denoiser", &h).unwrap()).unwrap_err();
    assert!(e.starts_with("denoiser.num_activated_experts"), "{e}");
    let mut s = sana_1600m();
    s["mlp_ratio"] = json!(-1);
    assert!(Dit::parse(&Cfg::new("denoiser", &s).unwrap()).unwrap_err().starts_with("denoiser.mlp_ratio"));
    // Sana's linear attention: no quadratic attention core over the image tokens.
    let d = dit(&sana_1600m());
    let mut e = Emit::new(EmitOptions::default());
    d.build(&mut e, 1, 1024, 0, 300, ONE).unwrap();
    assert!(e.ops.iter().all(|o| !matches!(o.op, tunelab_sim::Op::Attention { q_len: 1024, kv_len: 1024, .. })));
}

#[test]
fn edit_pipelines_train_on_reference_target_pairs() {
    // FLUX.1-Kontext fine-tuning: the reference and the target are both VAE-encoded, and the
    // reference's tokens join the transformer's sequence; a text-to-image FLUX.1 sample has neither.
    let k = Pipeline::load("flux.1-kontext-dev").unwrap().training_model(1024, 1024, 1).unwrap();
    let f = Pipeline::load("flux.1-dev").unwrap().training_model(1024, 1024, 1).unwrap();
    let conv_in = |m: &tunelab_sim::model::ModelDesc| match m.graph.iter().find(|o| o.name == "frozen.vae_encoder.conv_in").unwrap().op {
        tunelab_sim::Op::Conv2d { batch, .. } => batch,
        _ => panic!(),
    };
    assert_eq!((conv_in(&k), conv_in(&f)), (2, 1));
    let q = |m: &tunelab_sim::model::ModelDesc| match m.graph.iter().find(|o| o.name == "block.self_attn.core").unwrap().op {
        tunelab_sim::Op::Attention { q_len, .. } => q_len,
        _ => panic!(),
    };
    assert_eq!((q(&k), q(&f)), (2 * 4096 + 512, 4096 + 512));
    // Wan2.2's trainers fine-tune one expert per run.
    assert!(Pipeline::load("wan2.2-t2v-a14b").unwrap().training_model(480, 832, 81).unwrap().name.contains("one expert"));
}

#[test]
fn flux2_dev_is_bundled_with_its_own_vae_and_mistral_encoder() {
    let p = Pipeline::load("flux.2-dev").unwrap();
    let tunelab_sim::workload::diffusers::Denoiser::Dit(d) = &p.denoiser else { panic!("FLUX.2 is a DiT") };
    assert_eq!(d.kind, DitKind::Flux2);
    // The bundled transformer is the one the model card describes (32 B).
    within(params(d), 32.0, "FLUX.2-dev (bundled)");
    assert_eq!(d, &dit(&flux2_dev()), "the bundled config and the test's read the same");
    // One Mistral-Small-3.1 encoder over 512 tokens, guidance-distilled (no CFG batch), 50 steps.
    assert_eq!(p.text_encoders.len(), 1);
    assert!(matches!(p.text_encoders[0].encoder, TextEncoder::Llm { hidden: 5120, layers: 40, .. }));
    assert_eq!((p.defaults.steps, p.defaults.cfg, p.defaults.reference_images), (50, false, 0));
    // Its VAE has 32 latent channels, packed 2x2 into the transformer's 128.
    assert_eq!(p.vae.latent_channels(), 32);
    let l = p.latent(1024, 1024, 1).unwrap();
    assert_eq!((l.tokens, l.text_tokens), (4096, 512));
    // Image-to-image: the reference's 4096 tokens join the sequence.
    let i2i = Pipeline::load("flux.2-dev-i2i").unwrap();
    assert_eq!(i2i.defaults.reference_images, 1);
    let t = i2i.training_model(1024, 1024, 1).unwrap();
    let q = t.graph.iter().find(|o| o.name == "block.self_attn.core").map(|o| match o.op {
        tunelab_sim::Op::Attention { q_len, .. } => q_len,
        _ => 0,
    });
    assert_eq!(q, Some(2 * 4096 + 512));
}

#[test]
fn edit_references_keep_their_own_size_whatever_the_output() {
    // Qwen-Image-Edit resizes its input image to 1024 x 1024's area (QwenImageEditPipeline,
    // DiffSynth's edit_image_auto_resize): a 512 x 512 edit still carries 4096 reference tokens.
    let q = Pipeline::load("qwen-image-edit").unwrap();
    assert_eq!(q.defaults.reference_side, Some(1024));
    let l = q.latent_with_references(512, 512, 1, 1).unwrap();
    assert_eq!((l.tokens, l.ref_tokens), (1024, 4096));
    // The same aspect ratio at 1024 x 1024's area, rounded to the pipeline's multiple.
    assert_eq!(q.reference_size(512, 1024), (720, 1456));
    let t = q.training_model(512, 512, 1).unwrap();
    assert!(t.name.contains("1 reference image at 1024x1024"), "{}", t.name);
    let core = t.graph.iter().find(|o| o.name == "block.self_attn.core").unwrap();
    let tunelab_sim::Op::Attention { q_len, .. } = core.op else { panic!() };
    assert_eq!(q_len, 1024 + 4096 + 512);
    // The target and the reference are encoded at their own sizes.
    let mut convs: Vec<u64> = t.graph.iter().filter(|o| o.name.starts_with("frozen.vae_encoder.") && o.name.ends_with("conv_in")).map(|o| match o.op {
        tunelab_sim::Op::Conv2d { h, .. } => h,
        _ => 0,
    }).collect();
    convs.sort();
    assert_eq!(convs, [512, 1024], "one encoder pass per size");
    // A pipeline without reference_side encodes its reference at the output's size.
    let f2 = Pipeline::load("flux.2-dev-i2i").unwrap();
    assert_eq!(f2.reference_size(512, 512), (512, 512));
    // A bad reference_side names the field.
    let mut v: Value = serde_json::from_str(&tunelab_sim::workload::diffusers::bundled_pipeline_json("qwen-image-edit").unwrap()).unwrap();
    v["defaults"]["reference_side"] = json!(0);
    assert!(Pipeline::from_value(&v).unwrap_err().starts_with("defaults.reference_side"));
}

#[test]
fn hidream_i1_is_bundled_with_four_encoders() {
    let p = Pipeline::load("hidream-i1-full").unwrap();
    let tunelab_sim::workload::diffusers::Denoiser::Dit(d) = &p.denoiser else { panic!("HiDream is a DiT") };
    // The bundled config names the class HiImageTransformer2DModel (its first name) and reads
    // as the test's HiDreamImageTransformer2DModel.
    assert_eq!(d, &dit(&hidream_i1()));
    within(params(d), 17.0, "HiDream-I1-Full (bundled)");
    let names: Vec<&str> = p.text_encoders.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["text_encoder", "text_encoder_2", "text_encoder_3", "text_encoder_4"]);
    assert!(matches!(p.text_encoders[3].encoder, TextEncoder::Llm { hidden: 4096, layers: 32, kv_heads: 8, .. }));
    // T5's and Llama's 128 tokens each join the sequence; CFG on, 50 steps.
    let l = p.latent(1024, 1024, 1).unwrap();
    assert_eq!((l.tokens, l.text_tokens), (4096, 256));
    assert!(p.defaults.cfg);
}

#[test]
fn what_a_bundled_pipeline_approximates_is_named_on_its_model() {
    // HiDream-I1's Llama-3.1 encoder is priced with Meta-Llama-3-8B's shape: its descriptions
    // (denoiser and training) say so, as the CLI's and the report's "approximates" lines print.
    let p = Pipeline::load("hidream-i1-full").unwrap();
    let t = p.training_model(512, 512, 1).unwrap();
    let a = t.approximations();
    assert!(a.iter().any(|x| x.starts_with("text_encoder_4: Llama-3.1-8B-Instruct priced with Meta-Llama-3-8B")), "{a:?}");
    let l = p.latent(1024, 1024, 1).unwrap();
    assert!(p.denoiser_model(&l).unwrap().approximations().iter().any(|x| x.starts_with("vae: FLUX.1's")));
    // FLUX.2-dev's parts are its own; its graph's missing text-stream weights are named.
    let f = Pipeline::load("flux.2-dev").unwrap();
    let lf = f.latent(1024, 1024, 1).unwrap();
    let a = f.denoiser_model(&lf).unwrap().approximations();
    assert_eq!(a.len(), 2, "{a:?}");
    assert!(a[1].contains("28.30 B of the 32.22 B"), "{a:?}");
    // A single-stream DiT's graph holds every weight: nothing more is named.
    let w = Pipeline::load("wan2.1-t2v-14b").unwrap();
    let lw = w.latent(480, 832, 81).unwrap();
    assert_eq!(w.denoiser_model(&lw).unwrap().approximations().len(), 1);
}

#[test]
fn graph_weights_against_held_weights() {
    // Prints, for every bundled pipeline, the denoiser's weights as its operator graph counts
    // them (what a ModelDesc reader such as the training stage sees) and as the pipeline holds
    // them; the bundled approximations name any gap over 2%.
    for id in tunelab_sim::workload::diffusers::bundled_pipeline_ids() {
        let p = Pipeline::load(&id).unwrap();
        let d = p.defaults;
        let l = p.latent(d.height, d.width, d.frames).unwrap();
        let held = p.denoiser(1, &l, EmitOptions::default(), Tome::none(), ONE).unwrap().weights as f64 / 1e9;
        let graph = p.denoiser_model(&l).unwrap().params().total as f64 / 1e9;
        let named = !tunelab_sim::workload::diffusers::pipeline_approximations(&p.name).is_empty();
        println!("{id}: graph {graph:.2} B, held {held:.2} B, approximation named: {named}");
        assert!(named || (graph / held - 1.0).abs() < 0.02, "{id}: the graph counts {graph:.2} B of {held:.2} B and no approximation says so");
    }
}

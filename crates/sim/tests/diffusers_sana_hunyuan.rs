//! Sana-1600M (linear-attention DiT, DC-AE f32c32, Gemma-2-2B) and HunyuanVideo (token refiner,
//! dual- then single-stream blocks, causal 3-D VAE, LLaVA-Llama-3-8B and CLIP-L) as bundled
//! pipelines, built end to end from the sources named in `pipelines.json`.

use serde_json::json;
use tunelab_sim::workload::diffusers::vae::Vae;
use tunelab_sim::workload::diffusers::{EmitOptions, Pipeline, SeqParallel, TextEncoder, Tome};

const ONE: SeqParallel = SeqParallel { degree: 1, ring: false };

#[test]
fn sana_compresses_32x_so_1024_pixels_are_1024_tokens() {
    let p = Pipeline::load("sana-1600m-1024px").unwrap();
    assert_eq!(p.vae.spatial_factor(), 32);
    // Patch 1 over the DC-AE's 32x: sides must be multiples of 32.
    assert_eq!(p.side_multiple(), 32);
    let d = p.defaults;
    assert_eq!((d.height, d.width, d.steps, d.cfg), (1024, 1024, 20, true));
    let l = p.latent(1024, 1024, 1).unwrap();
    assert_eq!((l.h, l.w, l.tokens, l.text_tokens), (32, 32, 1024, 300));
    let e = p.latent(1000, 1024, 1).unwrap_err();
    assert!(e.starts_with("height:") && e.contains("multiple of 32") && e.contains("VAE's factor 32"), "{e}");
    // Gemma-2-2B: 26 layers of 2304, 8 heads and 4 KV heads of 256.
    assert!(matches!(p.text_encoders[0].encoder, TextEncoder::Llm { hidden: 2304, layers: 26, heads: 8, kv_heads: 4, head_dim: 256, inter: 9216 }));
    // The denoiser attends linearly: no softmax attention core over the image tokens.
    let den = p.denoiser(2, &l, EmitOptions::default(), Tome::none(), ONE).unwrap();
    assert!(den.ops.iter().any(|o| o.name == "block.self_attn.core.kv"));
    assert!(!den.ops.iter().any(|o| o.name == "block.self_attn.core"));
}

/// Weight parameters of the DC-AE f32c32 decoder as diffusers' `autoencoder_dc.py` builds it
/// (convolution and linear weights, no biases or norm scales), written out by hand from its
/// module list: conv_in, five DCUpBlock2d convolutions, three ResBlocks (two 3x3) per shallow
/// stage, three EfficientViTBlocks per deep stage, conv_out.
fn dc_ae_f32c32_decoder_weights() -> u64 {
    let res = |c: u64| 2 * 9 * c * c;
    let vit = |c: u64| {
        let attn = 3 * c * c + 3 * c * 25 + 3 * c * 32 + 2 * c * c;
        let glu = c * 8 * c + 8 * c * 9 + 4 * c * c;
        attn + glu
    };
    let ch = [128u64, 256, 512, 512, 1024, 1024];
    let mut w = 9 * 32 * 1024 + 9 * 128 * 3;
    for i in 0..6 {
        w += 3 * if i < 3 { res(ch[i]) } else { vit(ch[i]) };
        if i < 5 {
            w += 9 * ch[i + 1] * ch[i];
        }
    }
    w
}

#[test]
fn the_dc_ae_decoder_is_wired_as_diffusers_builds_it() {
    let p = Pipeline::load("sana-1600m-1024px").unwrap();
    let l = p.latent(1024, 1024, 1).unwrap();
    let (vae, calls) = p.vae_decoder(1, &l, EmitOptions::default(), None);
    assert_eq!(calls, 1);
    let want = dc_ae_f32c32_decoder_weights();
    println!("DC-AE f32c32 decoder: {:.1} M weights (hand count {:.1} M)", vae.weights as f64 / 1e6, want as f64 / 1e6);
    assert_eq!(vae.weights, want);
    // It ends at full resolution: the last convolution writes 3 channels of 1024 x 1024.
    let last = vae.ops.iter().rev().find(|o| o.name == "conv_out").unwrap();
    assert!(format!("{:?}", last.op).contains("h: 1024"), "{:?}", last.op);
    // The three deep stages attend (linear attention over their pixels), the shallow ones do not.
    for i in 3..6 {
        assert!(vae.ops.iter().any(|o| o.name == format!("up{i}.attn.core.kv")), "stage {i}");
    }
    assert!(!vae.ops.iter().any(|o| o.name.starts_with("up2.attn")));
    // The encoder runs for training: 1024 x 1024 pixels down to the 32 x 32 latent.
    let mut e = tunelab_sim::workload::diffusers::Emit::new(EmitOptions::default());
    p.vae.build_encoder(&mut e, 1, 1, 1024, 1024).unwrap();
    let out = e.ops.iter().find(|o| o.name == "conv_out").unwrap();
    assert!(format!("{:?}", out.op).contains("h: 32"), "{:?}", out.op);
}

#[test]
fn bad_dc_ae_configs_name_the_field() {
    let base = tunelab_sim::workload::diffusers::component_config("sana-1600m-1024px/vae").unwrap();
    let parse = |v: &serde_json::Value| Vae::parse(&tunelab_sim::workload::diffusers::cfg::Cfg::new("vae", v).unwrap());
    assert!(matches!(parse(&base), Ok(Vae::Dc(_))));
    let mut bad = base.clone();
    bad["decoder_block_types"][4] = json!("SwinBlock");
    let e = parse(&bad).unwrap_err();
    assert!(e.starts_with("vae.decoder_block_types[4]"), "{e}");
    let mut bad = base.clone();
    bad["decoder_layers_per_block"] = json!([3, 3, 3]);
    assert!(parse(&bad).unwrap_err().starts_with("vae.decoder_layers_per_block"));
    let mut bad = base.clone();
    bad["decoder_qkv_multiscales"][3] = json!([4]);
    assert!(parse(&bad).unwrap_err().starts_with("vae.decoder_qkv_multiscales"));
    let mut bad = base;
    bad["upsample_block_type"] = json!("bilinear");
    assert!(parse(&bad).unwrap_err().starts_with("vae.upsample_block_type"));
}

#[test]
fn hunyuanvideo_makes_129_frames_from_33_latent_frames() {
    let p = Pipeline::load("hunyuanvideo").unwrap();
    assert!(p.is_video());
    let d = p.defaults;
    assert_eq!((d.height, d.width, d.frames, d.steps, d.cfg), (720, 1280, 129, 50, false));
    let l = p.latent(d.height, d.width, d.frames).unwrap();
    // 4x in time, 8x in space, 2x2 patches: 33 x 45 x 80 tokens; the LLM's 256 tokens join.
    assert_eq!((l.frames, l.h, l.w, l.tokens, l.text_tokens), (33, 90, 160, 33 * 45 * 80, 256));
    // LLaVA-Llama-3-8B's language model and CLIP-L.
    assert_eq!(p.text_encoders.len(), 2);
    assert!(matches!(p.text_encoders[0].encoder, TextEncoder::Llm { hidden: 4096, layers: 32, kv_heads: 8, .. }));
    assert!(matches!(p.text_encoders[1].encoder, TextEncoder::Clip { hidden: 768, layers: 12, .. }));
    assert_eq!((p.text_encoders[0].name.as_str(), p.text_encoders[1].name.as_str()), ("text_encoder", "text_encoder_2"));
    // The refiner runs over the text, then 20 dual-stream and 40 single-stream blocks.
    let den = p.denoiser(1, &l, EmitOptions::default(), Tome::none(), ONE).unwrap();
    let reps = |n: &str| den.ops.iter().find(|o| o.name == n).map(|o| o.repeat).unwrap_or(0);
    assert_eq!((reps("refiner.attn.core"), reps("block.self_attn.core"), reps("single.self_attn.core")), (2, 20, 40));
    // Ulysses over 24 heads: 8 chips divide them, 16 do not.
    assert!(p.denoiser(1, &l, EmitOptions::default(), Tome::none(), SeqParallel { degree: 8, ring: false }).is_ok());
    assert!(p.denoiser(1, &l, EmitOptions::default(), Tome::none(), SeqParallel { degree: 16, ring: false }).is_err());
    // The VAE decodes one latent frame per call.
    let (_, calls) = p.vae_decoder(1, &l, EmitOptions::default(), None);
    assert_eq!(calls, 33);
}

#[test]
fn what_sana_and_hunyuanvideo_approximate_is_named_on_the_model() {
    let s = Pipeline::load("sana-1600m-1024px").unwrap();
    let a = s.denoiser_model(&s.latent(1024, 1024, 1).unwrap()).unwrap().approximations();
    assert!(a.iter().any(|x| x.starts_with("transformer, vae, text_encoder: built from public source code")), "{a:?}");
    assert!(a.iter().any(|x| x.starts_with("text_encoder: Gemma-2")), "{a:?}");
    let h = Pipeline::load("hunyuanvideo").unwrap();
    let t = h.training_model(544, 960, 33).unwrap();
    let a = t.approximations();
    assert!(a.iter().any(|x| x.starts_with("vae: AutoencoderKLHunyuanVideo")), "{a:?}");
    assert!(a.iter().any(|x| x.starts_with("text_encoder: LLaVA-Llama-3-8B")), "{a:?}");
    assert!(a.iter().any(|x| x.contains("10.49 B of the 12.76 B")), "{a:?}");
}

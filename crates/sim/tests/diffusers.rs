//! The diffusers builders: the generated SD 1.5 UNet matches the hand-written graph, every
//! bundled pipeline builds at its defaults with the parameter counts its model card states, and
//! bad configs or sizes get errors naming the field.

use std::collections::BTreeMap;
use tunelab_sim::workload::diffusers::{bundled_pipeline_ids, EmitOptions, Pipeline, SeqParallel, Tome};
use tunelab_sim::workload::op_flops;

const ONE: SeqParallel = SeqParallel { degree: 1, ring: false };

/// FLOPs of matmul-like operators, elements of vector operators.
fn work(op: &tunelab_sim::Op) -> f64 {
    match op {
        tunelab_sim::Op::Vector { rows, row_len, .. } => (*rows * *row_len) as f64,
        o => op_flops(o),
    }
}

fn flops_by_class(ops: impl Iterator<Item = (String, f64)>) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    for (c, f) in ops {
        *m.entry(c).or_insert(0.0) += f;
    }
    m
}

#[test]
fn generated_sd15_unet_matches_the_hand_written_graph() {
    let p = Pipeline::load("sd1.5").unwrap();
    let l = p.latent(512, 512, 1).unwrap();
    let gen = p.denoiser(1, &l, EmitOptions::default(), Tome::none(), ONE).unwrap();
    let hand = tunelab_sim::load_bundled("sd15-unet").unwrap().model;
    let g = flops_by_class(gen.ops.iter().map(|o| (o.class.name().to_string(), work(&o.op) * o.repeat as f64)));
    let h = flops_by_class(hand.graph.iter().map(|o| (o.class().name().to_string(), work(&o.op) * o.repeat as f64)));
    assert_eq!(g.keys().collect::<Vec<_>>(), h.keys().collect::<Vec<_>>(), "the same operator classes");
    for (k, v) in &h {
        let r = g[k] / v;
        assert!((r - 1.0).abs() < 1e-9, "{k}: generated {} vs hand-written {v} FLOPs", g[k]);
    }
    let hand_weights: u64 = hand.graph.iter().map(|o| o.weight_params() * o.repeat).sum();
    // The hand-written graph marks the batch-1 matmuls as weights, as the builder counts them.
    let r = gen.weights as f64 / hand_weights as f64;
    assert!((r - 1.0).abs() < 0.01, "weights {} vs {hand_weights}", gen.weights);
    // SD 1.5's UNet has 860 M parameters (model card); convolution and linear weights are ~all of them.
    assert!((gen.weights as f64 / 860e6 - 1.0).abs() < 0.03, "{} weights", gen.weights);
}

#[test]
fn every_bundled_pipeline_builds_with_its_published_size() {
    // Denoiser parameters from the model cards / papers (billions), within 8%. SD3.5-Medium's
    // card says 2.5 B including its 384 x 384 x 1536 position-embedding table (0.23 B), which is
    // a lookup here, not a weight a matmul reads.
    let sizes = [("sd1.5", 0.86), ("sd2.1-base", 0.865), ("sd2.1", 0.865), ("sdxl", 2.57), ("sd3.5-medium", 2.27), ("sd3.5-large", 8.1), ("flux.1-dev", 11.9), ("wan2.1-t2v-1.3b", 1.42), ("wan2.1-t2v-14b", 14.0), ("qwen-image", 20.43), ("qwen-image-edit", 20.43), ("flux.1-kontext-dev", 11.9), ("wan2.2-t2v-a14b", 14.0), ("flux.2-dev", 32.0), ("flux.2-dev-i2i", 32.0), ("hidream-i1-full", 17.0), ("sana-1600m-1024px", 1.6), ("hunyuanvideo", 13.0)];
    let ids = bundled_pipeline_ids();
    assert_eq!(ids.len(), sizes.len());
    for (id, billions) in sizes {
        let p = Pipeline::load(id).unwrap_or_else(|e| panic!("{id}: {e}"));
        let d = p.defaults;
        let l = p.latent(d.height, d.width, d.frames).unwrap();
        let c = p.denoiser(1, &l, EmitOptions::default(), Tome::none(), ONE).unwrap();
        let b = c.weights as f64 / 1e9;
        assert!((b / billions - 1.0).abs() < 0.08, "{id}: {b:.3} B parameters, published {billions}");
        for i in 0..p.text_encoders.len() {
            assert!(!p.text_encoder(i, 1, EmitOptions::default()).ops.is_empty());
        }
        let (vae, tiles) = p.vae_decoder(1, &l, EmitOptions::default(), None);
        // A video VAE runs once per latent frame; an image VAE once.
        assert_eq!(tiles, l.frames);
        assert!(vae.weights > 30_000_000, "{id}: VAE decoder {} weights", vae.weights);
    }
}

#[test]
fn wan_tokens_follow_frames_and_patches() {
    let p = Pipeline::load("wan2.1-t2v-14b").unwrap();
    let l = p.latent(480, 832, 81).unwrap();
    assert_eq!((l.frames, l.h, l.w, l.tokens), (21, 60, 104, 21 * 30 * 52));
    assert!(p.latent(480, 832, 80).unwrap_err().starts_with("frames:"));
    assert!(p.latent(480, 830, 81).unwrap_err().starts_with("width:"));
    let sdxl = Pipeline::load("sdxl").unwrap();
    assert!(sdxl.latent(1000, 1024, 1).unwrap_err().starts_with("height: 1000 is not a multiple of 32"));
    assert!(sdxl.latent(1024, 1024, 5).unwrap_err().starts_with("frames:"));
}

#[test]
fn ulysses_splits_heads_and_ring_keeps_them() {
    let p = Pipeline::load("wan2.1-t2v-14b").unwrap();
    let l = p.latent(480, 832, 81).unwrap();
    let f = |sp| -> f64 { p.denoiser(1, &l, EmitOptions::default(), Tome::none(), sp).unwrap().ops.iter().map(|o| op_flops(&o.op) * o.repeat as f64).sum() };
    let one = f(ONE);
    let u8 = f(SeqParallel { degree: 8, ring: false });
    let r8 = f(SeqParallel { degree: 8, ring: true });
    assert!((u8 * 8.0 / one - 1.0).abs() < 0.01, "Ulysses 8 does an eighth of the work per chip");
    assert!((r8 * 8.0 / one - 1.0).abs() < 0.01);
    let small = Pipeline::load("wan2.1-t2v-1.3b").unwrap();
    let e = small.denoiser(1, &l, EmitOptions::default(), Tome::none(), SeqParallel { degree: 8, ring: false }).unwrap_err();
    assert!(e.contains("heads (12)"), "{e}");
}

#[test]
fn tome_shortens_the_highest_resolution_self_attention() {
    let p = Pipeline::load("sd2.1-base").unwrap();
    let l = p.latent(512, 512, 1).unwrap();
    let core = |t: Tome| -> f64 {
        p.denoiser(1, &l, EmitOptions::default(), t, ONE).unwrap().ops.iter().filter(|o| o.name.contains("attn1.core")).map(|o| op_flops(&o.op) * o.repeat as f64).sum()
    };
    let (off, half) = (core(Tome::none()), core(Tome { ratio: 0.5 }));
    assert!(half < 0.5 * off, "ToMe 0.5 cuts the 4096-token attention to a quarter: {half} vs {off}");
}

#[test]
fn bad_configs_name_the_field() {
    let bad = |j: &str| Pipeline::load(j).unwrap_err();
    let e = bad(r#"{"denoiser": {"_class_name": "UNet2DConditionModel", "block_out_channels": [320, 640], "down_block_types": ["CrossAttnDownBlock2D", "SparseBlock"], "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D"], "cross_attention_dim": 768}, "vae": "sd1.5/vae", "text_encoders": ["sd1.5/text_encoder"]}"#);
    assert!(e.starts_with("denoiser.down_block_types: block type 'SparseBlock'"), "{e}");
    let e = bad(r#"{"denoiser": "sd1.5/unet", "vae": "sd1.5/vae", "text_encoders": [{"config": {"model_type": "bert"}}]}"#);
    assert!(e.starts_with("text_encoders[0]:"), "{e}");
    let e = bad(r#"{"denoiser": {"_class_name": "SD3Transformer2DModel", "num_attention_heads": 24, "attention_head_dim": 64, "num_layers": -3, "joint_attention_dim": 4096}, "vae": "sd1.5/vae", "text_encoders": ["sd1.5/text_encoder"]}"#);
    assert!(e.starts_with("denoiser.num_layers:"), "{e}");
    assert!(bad("nope").contains("no bundled diffusion pipeline"));
    assert!(bad(r#"{"denoiser": "sd1.5/unet", "vae": "x/vae", "text_encoders": ["sd1.5/text_encoder"]}"#).starts_with("vae: no bundled component"));
}

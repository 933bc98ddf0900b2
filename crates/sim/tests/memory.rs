//! Memory per chip, the three allocation strategies and the largest batch that fits.

use tunelab_sim::memory::{footprint, layer_activation_bytes, max_batch_or_reason, MemoryStrategy};
use tunelab_sim::model::{load_bundled, MlpKind, NormKind, TransformerDesc};
use tunelab_sim::*;

const GIB: u64 = 1 << 30;
const CHIP_910B2: u64 = 64 * GIB;

fn model(id: &str) -> ModelDesc {
    load_bundled(id).unwrap().model
}

fn tp(n: u64) -> ParallelPlan {
    ParallelPlan { tp: n, ..Default::default() }
}

#[test]
fn llama_kv_cache_and_weights() {
    let m = model("llama-2-7b");
    let w = Workload::Decode { batch: 1, context_len: 2000, output_len: 48 };
    let one = memory_per_chip(&m, &w, &tp(1), &GraphOptions::default(), None).unwrap();
    // 0.5 MiB per token x 2048 tokens.
    assert_eq!(one.kv_cache, GIB);
    // 6.74B parameters x 2 bytes.
    assert!((one.weights as f64 / 6.738e9 / 2.0 - 1.0).abs() < 0.001);
    let two = memory_per_chip(&m, &w, &tp(2), &GraphOptions::default(), None).unwrap();
    assert_eq!(two.kv_cache * 2, one.kv_cache);
    let ratio = two.weights as f64 / one.weights as f64;
    assert!((ratio - 0.5).abs() < 0.001, "{ratio}");
    let int8 = GraphOptions { precision: Precision::W8a16, ..Default::default() };
    let q = memory_per_chip(&m, &w, &tp(1), &int8, None).unwrap();
    // Linear layers at 1 byte, embeddings and LM head (0.26B) kept at 2.
    assert!((q.weights as f64 / 1e9 - (6.478 + 2.0 * 0.262)).abs() < 0.05, "{}", q.weights);
    assert_eq!(one.total, one.weights + one.kv_cache + one.activations + one.workspace);
}

#[test]
fn strategies_order_memory_and_batch() {
    let cases = [
        ("llama-2-7b", Workload::Decode { batch: 1, context_len: 2000, output_len: 48 }),
        ("llama-2-7b", Workload::Prefill { batch: 1, input_len: 1000 }),
        ("qwen2.5-7b", Workload::Decode { batch: 1, context_len: 1000, output_len: 300 }),
        ("llava-1.5-7b", Workload::Prefill { batch: 1, input_len: 200 }),
        ("sd15-unet", Workload::Prefill { batch: 1, input_len: 1 }),
    ];
    for (id, w) in cases {
        let m = model(id);
        let o = GraphOptions::default();
        let need: Vec<u64> = MemoryStrategy::ALL
            .iter()
            .map(|&s| footprint(&m, &w.with_batch(4), &tp(1), &o, None, s).unwrap().memory.total)
            .collect();
        assert!(need[0] >= need[1] && need[1] >= need[2], "{id}: {need:?}");
        let fit: Vec<u64> = MemoryStrategy::ALL.iter().map(|&s| max_batch(&m, &w, &tp(1), &o, s, CHIP_910B2)).collect();
        assert!(fit[2] >= fit[1] && fit[1] >= fit[0] && fit[0] >= 1, "{id}: {fit:?}");
        // The batch found fits and the next one does not.
        let s = MemoryStrategy::DynamicPool;
        let at = |b: u64| footprint(&m, &w.with_batch(b), &tp(1), &o, None, s).unwrap().memory.total;
        assert!(at(fit[1]) <= CHIP_910B2 && at(fit[1] + 1) > CHIP_910B2, "{id}");
    }
}

#[test]
fn llama_2_7b_on_910b2_at_2048_context() {
    let m = model("llama-2-7b");
    let w = Workload::Decode { batch: 1, context_len: 1024, output_len: 1024 };
    let fit: Vec<u64> = MemoryStrategy::ALL
        .iter()
        .map(|&s| max_batch(&m, &w, &tp(1), &GraphOptions::default(), s, CHIP_910B2))
        .collect();
    println!("Llama-2-7B fp16, 2048 tokens, 64 GiB: static {} dynamic {} predictive {}", fit[0], fit[1], fit[2]);
    // 64 GiB - 12.6 GiB weights - 0.5 GiB workspace leaves ~50 GiB: 50 sequences of 1 GiB KV;
    // static allocation reserves the 4096-token maximum, halving that.
    assert_eq!(fit[2], 50);
    assert!((24..=25).contains(&fit[0]), "{fit:?}");
}

#[test]
fn a_model_that_cannot_fit_says_by_how_much() {
    let m = model("mixtral-8x7b");
    let w = Workload::Decode { batch: 1, context_len: 512, output_len: 512 };
    for s in MemoryStrategy::ALL {
        assert_eq!(max_batch(&m, &w, &tp(1), &GraphOptions::default(), s, CHIP_910B2), 0);
        let e = max_batch_or_reason(&m, &w, &tp(1), &GraphOptions::default(), s, CHIP_910B2).unwrap_err();
        assert!(e.contains("cannot fit") && e.contains("short by"), "{e}");
    }
    // Split over 4 chips it fits.
    assert!(max_batch(&m, &w, &tp(4), &GraphOptions::default(), MemoryStrategy::Predictive, CHIP_910B2) > 0);
}

fn train_mem(recompute: Recompute, zero: u8, plan: &ParallelPlan) -> MemoryBreakdown {
    let m = model("llama-2-7b");
    let w = Workload::TrainStep { micro_batch: 1, seq_len: 4096 };
    let opts = GraphOptions { precision: Precision::Bf16, ..Default::default() };
    let t = TrainOptions { recompute, zero_stage: zero, grad_accum: 8, ..Default::default() };
    memory_per_chip(&m, &w, plan, &opts, Some(&t)).unwrap()
}

#[test]
fn training_memory_follows_zero_and_recomputation() {
    let plan = ParallelPlan { tp: 2, pp: 1, dp: 8, ep: 1, sequence_parallel: true, ..ParallelPlan::default() };
    let z: Vec<MemoryBreakdown> = (0..=3).map(|s| train_mem(Recompute::Selective, s, &plan)).collect();
    // ZeRO (Rajbhandari et al. 2020): 2 + 2 + 12 bytes per parameter, sharded stage by stage.
    let psi = z[0].weights / 2;
    assert_eq!((z[0].gradients, z[0].optimizer), (2 * psi, 12 * psi));
    assert_eq!(z[1].optimizer, (12 * psi).div_ceil(8));
    assert_eq!(z[2].gradients, (2 * psi).div_ceil(8));
    assert_eq!(z[3].weights, (2 * psi).div_ceil(8));
    assert!(z[0].total > z[1].total && z[1].total > z[2].total && z[2].total > z[3].total);
    let full = train_mem(Recompute::Full, 1, &plan);
    let none = train_mem(Recompute::None, 1, &plan);
    assert!(full.activations < z[1].activations && z[1].activations <= none.activations);
    let e = memory_per_chip(
        &model("llama-2-7b"),
        &Workload::TrainStep { micro_batch: 1, seq_len: 128 },
        &plan,
        &GraphOptions::default(),
        Some(&TrainOptions { zero_stage: 5, ..Default::default() }),
    )
    .unwrap_err();
    assert!(e.contains("zero_stage"));
}

#[test]
fn korthikanti_terms_for_a_gpt_layer() {
    // GPT-3-like layer: h = 4096, 32 heads, MLP 4h with GELU.
    let gpt = TransformerDesc {
        layers: 1, hidden: 4096, heads: 32, kv_heads: 32, head_dim: 128, intermediate: 16384,
        vocab: 50257, tied_embeddings: true, mlp: MlpKind::Gelu, norm: NormKind::LayerNorm,
        qkv_bias: true, max_position: 2048, moe: None, qk_norm: false, sliding_window: None, mla: None, linear_attention: None, encoder: false, attn_output_gate: false, mtp_layers: 0, ..TransformerDesc::default()
    };
    let (s, b, h, a) = (2048u64, 1u64, 4096u64, 32u64);
    let sbh = s * b * h;
    let bytes = |plan: ParallelPlan, r: Recompute, flash: bool| layer_activation_bytes(&gpt, s, b, &plan, r, flash, 2);
    // Without dropout the paper's 34 sbh becomes 32 sbh (its two 1-byte masks per sbh drop out),
    // and the 5 a s^2 b score terms become the 2 a s^2 b of the softmax output.
    assert_eq!(bytes(tp(1), Recompute::Selective, false), 32 * sbh);
    assert_eq!(bytes(tp(1), Recompute::None, false), 32 * sbh + 2 * a * s * s * b);
    // Tensor parallel: sbh (8 + 24 / t); with sequence parallel: 32 sbh / t.
    assert_eq!(bytes(tp(4), Recompute::Selective, false), 8 * sbh + 24 * sbh / 4);
    let sp = ParallelPlan { sequence_parallel: true, ..tp(4) };
    assert_eq!(bytes(sp, Recompute::Selective, false), 32 * sbh / 4);
    // Full recomputation keeps the layer input: 2 sbh.
    assert_eq!(bytes(tp(1), Recompute::Full, false), 2 * sbh);
    // Flash attention keeps only the fp32 log-sum-exp instead of the scores.
    assert_eq!(bytes(tp(1), Recompute::None, true), 32 * sbh + 4 * a * s * b);
}

#[test]
fn training_max_micro_batch_orders_too() {
    let m = model("llama-2-7b");
    let plan = ParallelPlan { tp: 4, pp: 2, dp: 4, ep: 1, sequence_parallel: true, ..ParallelPlan::default() };
    let opts = GraphOptions {
        precision: Precision::Bf16,
        train: TrainOptions { recompute: Recompute::Selective, zero_stage: 1, grad_accum: 8, ..Default::default() },
        ..Default::default()
    };
    let w = Workload::TrainStep { micro_batch: 1, seq_len: 4096 };
    let fit: Vec<u64> = MemoryStrategy::ALL.iter().map(|&s| max_batch(&m, &w, &plan, &opts, s, CHIP_910B2)).collect();
    assert!(fit[2] >= fit[1] && fit[1] >= fit[0] && fit[0] >= 1, "{fit:?}");
}

#[test]
fn mla_and_sliding_window_shrink_the_kv_cache_and_vpp_costs_activation_memory() {
    use tunelab_sim::memory::kv_cache_bytes;
    use tunelab_sim::model::load_bundled;
    let opts = GraphOptions::default();
    let ds = load_bundled("deepseek-v2-lite").unwrap().model;
    // MLA: 27 layers x (512 latent + 64 rotary) fp16 per token, the same on every TP rank.
    assert_eq!(kv_cache_bytes(&ds, &tp(1), &opts, 1, 1000), 27 * 576 * 2 * 1000);
    assert_eq!(kv_cache_bytes(&ds, &tp(2), &opts, 1, 1000), 27 * 576 * 2 * 1000);
    // Mistral's 4096-token window caps the cache of a 32k context.
    let m = load_bundled("mistral-7b").unwrap().model;
    assert_eq!(kv_cache_bytes(&m, &tp(1), &opts, 1, 32768), kv_cache_bytes(&m, &tp(1), &opts, 1, 4096));
    // Interleaving keeps more micro-batches' activations on the first stage.
    let llama = load_bundled("llama-2-7b").unwrap().model;
    let w = Workload::TrainStep { micro_batch: 1, seq_len: 4096 };
    let t = TrainOptions { grad_accum: 16, ..Default::default() };
    let act = |vpp: u64| {
        let plan = ParallelPlan { tp: 2, pp: 4, dp: 1, vpp, ..ParallelPlan::default() };
        memory_per_chip(&llama, &w, &plan, &opts, Some(&t)).unwrap().activations
    };
    assert!(act(2) > act(1), "vpp 2 {} vs 1 {}", act(2), act(1));
}

#[test]
fn training_constants_parse_within_their_bounds() {
    use tunelab_sim::workload::{training_constants, TrainingConstants, TRAINING_CONSTANTS_JSON};
    let k = training_constants();
    for (name, c) in k.all() {
        assert!(c.min <= c.value && c.value <= c.max && !c.source.is_empty(), "{name}");
    }
    let bad = TRAINING_CONSTANTS_JSON.replacen("\"value\":40.0", "\"value\":1e9", 1);
    assert_ne!(bad, TRAINING_CONSTANTS_JSON, "the edit must hit the embedded (minified) text");
    assert!(TrainingConstants::from_json(&bad).unwrap_err().contains("frameworks.megatron.step_ms"));
}

//! A BERT-style encoder's graph (BGE-large-zh) as the two runtimes of MindIE-LLM's BGE example
//! run it: the engine's fused operators, and the offline OM model ATC compiles from an ONNX
//! export with mixed_float16 (`GraphOptions::om_model`).

use tunelab_sim::*;

fn bge_prefill(opts: &GraphOptions) -> Graph {
    let m = load_bundled("bge-large-zh-v1.5").unwrap().model;
    build_graph(&m, &Workload::Prefill { batch: 20, input_len: 512 }, &ParallelPlan::default(), opts).unwrap()
}

fn device_ms(g: &Graph, chip: &str) -> f64 {
    let dev = bundled_device(chip).unwrap();
    g.ops.iter().map(|o| estimate(&o.op, &Tiling::Default, &dev).unwrap().time_us * o.repeat as f64).sum::<f64>() / 1e3
}

fn om() -> GraphOptions {
    GraphOptions { flash_attention: false, fuse_epilogues: false, om_model: true, ..GraphOptions::default() }
}

#[test]
fn an_encoder_has_absolute_positions_and_no_rotary_op() {
    // BERT adds learned position embeddings to its input; rotating q and k is a decoder's RoPE.
    let g = bge_prefill(&GraphOptions::default());
    assert!(g.ops.iter().all(|o| !matches!(o.op, Op::Vector { kind: VectorKind::Rotary, .. })), "{:?}", g.ops.iter().map(|o| &o.name).collect::<Vec<_>>());
    let llama = load_bundled("llama-2-7b").unwrap().model;
    let d = build_graph(&llama, &Workload::Prefill { batch: 1, input_len: 512 }, &ParallelPlan::default(), &GraphOptions::default()).unwrap();
    assert!(d.find("layer.attn.rotary").is_some(), "a decoder keeps its rotary op");
}

#[test]
fn an_engine_that_keeps_berts_three_linears_splits_the_qkv_projection() {
    // MindIE's ATB BERT model: q, k and v as three biased matmuls of hidden x hidden.
    let g = bge_prefill(&GraphOptions { split_qkv: true, fuse_epilogues: false, ..GraphOptions::default() });
    assert!(g.find("layer.attn.qkv_proj").is_none());
    for name in ["layer.attn.q_proj", "layer.attn.k_proj", "layer.attn.v_proj"] {
        assert!(matches!(g.find(name).unwrap().op, Op::Matmul { m: 10240, n: 1024, k: 1024, epilogue: Epilogue::Bias, .. }), "{name}");
    }
    // The same work, as more and narrower kernels: not faster than the fused graph.
    let fused = bge_prefill(&GraphOptions::default());
    assert_eq!(g.flops(), fused.flops());
    assert!(device_ms(&g, "910B4") > device_ms(&fused, "910B4"));
}

#[test]
fn the_om_model_runs_the_exported_attention_and_fp32_layernorms() {
    let g = bge_prefill(&om());
    match g.find("layer.attn.core").unwrap().op {
        Op::Attention { kind, causal, q_len, kv_len, .. } => assert_eq!((kind, causal, q_len, kv_len), (AttentionKind::Exported, false, 512, 512)),
        _ => unreachable!(),
    }
    // LayerNorm on the blocklist: fp32 between casts; GELU and the residual adds unfused.
    assert!(matches!(g.find("layer.input_norm").unwrap().op, Op::Vector { kind: VectorKind::LayerNorm, dtype: DType::Fp32, .. }));
    assert!(g.find("layer.input_norm.to_fp32").is_some() && g.find("layer.input_norm.to_fp16").is_some());
    assert!(g.find("layer.mlp.act").is_some() && g.find("layer.mlp.residual_add").is_some());
    assert!(matches!(g.find("layer.mlp.up_proj").unwrap().op, Op::Matmul { epilogue: Epilogue::Bias, .. }), "ATC keeps the bias in the MatMul");
}

#[test]
fn exported_attention_passes_cost_more_than_three_unfused_kernels_and_flash() {
    // BGE-large at batch 20 x 512: every extra pass reads and writes 20 x 16 x 512 x 512 scores.
    let att = |kind| Op::Attention { kind, batch: 20, heads: 16, kv_heads: 16, q_len: 512, kv_len: 512, head_dim: 64, causal: false, dtype: DType::Fp16 };
    for chip in ["910B4", "310P3"] {
        let dev = bundled_device(chip).unwrap();
        let t = |k| estimate(&att(k), &Tiling::Default, &dev).unwrap();
        let (flash, unfused, exported) = (t(AttentionKind::Flash), t(AttentionKind::Unfused), t(AttentionKind::Exported));
        assert!(exported.time_us > 1.5 * unfused.time_us && unfused.time_us > flash.time_us, "{chip}: flash {:.0} unfused {:.0} exported {:.0} us", flash.time_us, unfused.time_us, exported.time_us);
        // The scores' device-memory traffic: fp16 written by QK^T, read and written by the Div,
        // the casts and the fp32 mask add and softmax, read by PV.
        let scores = 20.0 * 16.0 * 512.0 * 512.0;
        assert!(exported.hbm_bytes > 20.0 * scores, "{chip}: {} bytes", exported.hbm_bytes);
        // Separate default-tiled kernels: a flash block size is refused, not ignored.
        assert!(estimate(&att(AttentionKind::Exported), &Tiling::Flash(FlashTiling { block_q: 128, block_kv: 128 }), &dev).is_err());
    }
    // The whole forward: the OM graph is slower than the fused one on both chips.
    for chip in ["910B4", "310P3"] {
        let (fused, offline) = (device_ms(&bge_prefill(&GraphOptions::default()), chip), device_ms(&bge_prefill(&om()), chip));
        assert!(offline > 1.5 * fused, "{chip}: fused {fused:.1} ms, OM {offline:.1} ms");
    }
}

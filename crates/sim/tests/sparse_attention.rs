//! DeepSeek sparse attention (DeepSeek-V3.2): the bundled config, the indexer's parameters and
//! cache, prefill and decode attention with and without top-k selection, and bad index_* fields.

use tunelab_sim::model::{load_model, ModelDesc};
use tunelab_sim::workload::{build_graph, GraphOptions, ParallelPlan, Workload};
use tunelab_sim::{bundled_device, load_bundled, DType, Op, Tiling};

fn v32() -> ModelDesc {
    load_bundled("deepseek-v3.2").expect("bundled").model
}

/// The same model with dense MLA (DeepSeek-V3.1's attention).
fn dense(m: &ModelDesc) -> ModelDesc {
    let mut d = m.clone();
    d.llm.as_mut().unwrap().mla.as_mut().unwrap().sparse = None;
    d
}

/// Device time of the attention cores (the main attention and the indexer's scores; their
/// projections are linear layers like q_proj) of one workload on one 910C die.
fn attention_us(m: &ModelDesc, w: Workload, tp: u64) -> f64 {
    let dev = bundled_device("910C").unwrap();
    let plan = ParallelPlan { tp, ..Default::default() };
    let opts = GraphOptions { precision: tunelab_sim::Precision::Bf16, ..Default::default() };
    let g = build_graph(m, &w, &plan, &opts).unwrap();
    g.ops
        .iter()
        .filter(|o| o.name.ends_with(".attn.core") || o.name.ends_with(".attn.indexer.core"))
        .map(|o| tunelab_sim::estimate(&o.op, &Tiling::Default, &dev).unwrap().time_us * o.repeat as f64)
        .sum()
}

#[test]
fn deepseek_v3_2_loads_with_its_indexer_and_caches_its_keys() {
    let m = v32();
    let t = m.llm.as_ref().unwrap();
    let s = t.mla.unwrap().sparse.expect("sparse attention");
    assert_eq!((s.index_n_heads, s.index_head_dim, s.index_topk), (64, 128, 2048));
    // The indexer adds about 0.85B parameters over DeepSeek-V3's 671B (CANN recipe's count).
    let extra = (m.params().total - dense(&m).params().total) as f64 / 1e9;
    assert!((extra - 0.85).abs() < 0.03, "indexer {extra:.3}B");
    // The KV cache holds the latent, the rotary key and the indexer key per token and layer.
    assert_eq!(m.kv_bytes_per_token(DType::Bf16), 61 * (512 + 64 + 128) * 2);
    assert_eq!(dense(&m).kv_bytes_per_token(DType::Bf16), 61 * (512 + 64) * 2);
}

#[test]
fn sparse_prefill_attention_beats_dense_at_32k_and_costs_a_little_more_at_2k() {
    let m = v32();
    let d = dense(&m);
    // Data-parallel attention (tp 1 per attention group), as the 2 x A3 DeepSeek layouts run.
    let at = |model: &ModelDesc, len, tp| attention_us(model, Workload::Prefill { batch: 1, input_len: len }, tp);
    let (s2, d2) = (at(&m, 2048, 1), at(&d, 2048, 1));
    let (s32, d32) = (at(&m, 32768, 1), at(&d, 32768, 1));
    eprintln!("tp 1: 2K dsa {s2:.0} us dense {d2:.0} us; 32K dsa {s32:.0} us dense {d32:.0} us");
    // Short prompts run the dense kernel plus the indexer's scores: dearer, not cheaper.
    assert!(s2 > d2 && s2 < d2 * 1.5, "2K: dsa {s2:.0} us vs dense {d2:.0} us");
    // Long prompts attend to 2048 keys per query instead of up to 32K.
    assert!(s32 < d32 * 0.6, "32K: dsa {s32:.0} us vs dense {d32:.0} us");
    // Under tensor parallelism the indexer is replicated (every rank scores with all 64 heads)
    // while the main attention splits its heads: DSA's gain shrinks and turns into a loss.
    let (s32_8, d32_8) = (at(&m, 32768, 8), at(&d, 32768, 8));
    eprintln!("tp 8: 32K dsa {s32_8:.0} us dense {d32_8:.0} us");
    assert!(s32_8 / d32_8 > 2.0 * s32 / d32, "tp 8: dsa {s32_8:.0} us vs dense {d32_8:.0} us");
}

#[test]
fn decode_attends_to_top_k_keys_but_the_indexer_reads_the_whole_cache() {
    let m = v32();
    let plan = ParallelPlan::default();
    let g = build_graph(&m, &Workload::Decode { batch: 4, context_len: 32768, output_len: 1 }, &plan, &GraphOptions::default()).unwrap();
    let kv = |name: &str| match g.find(name).map(|o| &o.op) {
        Some(Op::Attention { kv_len, .. }) => *kv_len,
        other => panic!("{name}: {other:?}"),
    };
    assert_eq!(kv("layer.attn.core"), 2048);
    assert_eq!(kv("layer.attn.indexer.core"), 32768);
    // At long contexts the decode step's attention is cheaper than dense MLA's.
    let w = Workload::Decode { batch: 16, context_len: 65536, output_len: 1 };
    assert!(attention_us(&m, w, 1) < attention_us(&dense(&m), w, 1));
}

#[test]
fn malformed_index_fields_name_the_field() {
    let base = load_bundled("deepseek-v3.2").unwrap();
    let json = tunelab_sim::bundled_models().into_iter().find(|(i, _)| *i == "deepseek-v3.2").unwrap().1;
    let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(base.model.llm.unwrap().max_position, 163840);
    for (field, bad) in [
        ("index_topk", serde_json::json!(0)),
        ("index_topk", serde_json::json!(163841)),
        ("index_topk", serde_json::json!("2048")),
        ("index_topk", serde_json::json!(-1)),
        ("index_n_heads", serde_json::json!(0)),
        ("index_head_dim", serde_json::json!(1.5)),
    ] {
        let mut c = v.clone();
        c[field] = bad.clone();
        let e = load_model(&c.to_string()).expect_err("refused");
        assert!(e.contains(field), "{field} = {bad}: {e}");
    }
    // A partial set, or sparse attention without latent attention, is named too.
    v.as_object_mut().unwrap().remove("index_n_heads");
    let e = load_model(&v.to_string()).unwrap_err();
    assert!(e.contains("index_n_heads"), "{e}");
    let e = load_model(r#"{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100,"intermediate_size":128,"index_topk":16,"index_n_heads":2,"index_head_dim":8}"#).unwrap_err();
    assert!(e.contains("index_topk") && e.contains("kv_lora_rank"), "{e}");
}

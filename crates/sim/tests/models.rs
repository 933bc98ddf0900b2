//! Model loading: bundled models, parameter counts, Hugging Face variants and bad input.

use tunelab_sim::model::{load_model, ModelDesc, ModelFamily};
use tunelab_sim::{bundled_models, DType};

fn bundled(id: &str) -> ModelDesc {
    let json = bundled_models().into_iter().find(|(i, _)| *i == id).expect("bundled id").1;
    load_model(json).expect("loads").model
}

fn billions(p: u64) -> f64 {
    p as f64 / 1e9
}

#[test]
fn every_bundled_model_loads_without_warnings() {
    let all = bundled_models();
    assert!(all.len() >= 5);
    for (id, json) in all {
        let loaded = load_model(json).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert!(loaded.warnings.is_empty(), "{id}: {:?}", loaded.warnings);
        assert!(loaded.model.params().total > 0, "{id}");
    }
}

#[test]
fn parameter_counts_match_published_sizes() {
    let llama = bundled("llama-2-7b");
    assert_eq!(llama.family, ModelFamily::DenseLlm);
    let p = llama.params();
    assert!((6.70..6.77).contains(&billions(p.total)), "llama {}", billions(p.total));
    assert_eq!(p.total, p.active);

    let qwen = bundled("qwen2.5-7b");
    let q = billions(qwen.params().total);
    assert!((7.55..7.66).contains(&q), "qwen {q}");
    assert!(qwen.llm.as_ref().unwrap().qkv_bias);

    let mixtral = bundled("mixtral-8x7b");
    assert_eq!(mixtral.family, ModelFamily::MoeLlm);
    let m = mixtral.params();
    assert!((46.5..46.9).contains(&billions(m.total)), "mixtral total {}", billions(m.total));
    assert!((12.7..13.0).contains(&billions(m.active)), "mixtral active {}", billions(m.active));
    assert_eq!(mixtral.dtype, DType::Bf16);
}

#[test]
fn diffusion_and_multimodal_bundles() {
    let sd = bundled("sd15-unet");
    assert_eq!(sd.family, ModelFamily::Diffusion);
    // SD 1.5 UNet: 859.5M parameters (biases and norm scales not counted here).
    let p = billions(sd.params().total);
    assert!((0.85..0.87).contains(&p), "sd {p}");

    let llava = bundled("llava-1.5-7b");
    assert_eq!(llava.family, ModelFamily::Multimodal);
    let v = llava.vision.as_ref().unwrap();
    assert_eq!(v.image_tokens(), 576);
    // ViT-L/14 (~0.30B) + projector (~0.02B) + the 7B LLM (~6.74B).
    let p = billions(llava.params().total);
    assert!((7.0..7.1).contains(&p), "llava {p}");
}

#[test]
fn kv_cache_of_llama_2_7b_is_half_a_mebibyte_per_token() {
    assert_eq!(bundled("llama-2-7b").kv_bytes_per_token(DType::Fp16), 512 * 1024);
    // Mixtral: 8 KV heads, a quarter of that.
    assert_eq!(bundled("mixtral-8x7b").kv_bytes_per_token(DType::Fp16), 128 * 1024);
}

const BASE: &str = r#"{"model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 4,
  "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 2816,
  "vocab_size": 32000, "torch_dtype": "bfloat16"}"#;

fn with(field: &str, value: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(BASE).unwrap();
    v[field] = serde_json::from_str(value).unwrap();
    v.to_string()
}

#[test]
fn absurd_or_missing_fields_are_rejected_by_name() {
    for (field, value) in [
        ("num_hidden_layers", "0"),
        ("hidden_size", "1000000000000"),
        ("hidden_size", "4096.5"),
        ("num_attention_heads", "-8"),
        ("vocab_size", "\"many\""),
        ("num_key_value_heads", "3"),
        ("intermediate_size", "0"),
    ] {
        let err = load_model(&with(field, value)).expect_err(field);
        let short = match field {
            "num_hidden_layers" => "layers",
            "hidden_size" => "hidden",
            "num_key_value_heads" => "kv_heads",
            "intermediate_size" => "intermediate",
            f => f,
        };
        assert!(err.contains(short), "{field}={value}: {err}");
    }
    let mut v: serde_json::Value = serde_json::from_str(BASE).unwrap();
    v.as_object_mut().unwrap().remove("hidden_size");
    assert!(load_model(&v.to_string()).unwrap_err().contains("hidden_size"));
    assert!(load_model("[1, 2]").is_err());
    let bare = r#"[{"name": "mm", "repeat": 4, "op": {"op": "matmul", "m": 8, "n": 16, "k": 32, "dtype": "bf16"}}]"#;
    let loaded = load_model(bare).unwrap();
    assert_eq!(loaded.model.params().total, 4 * 16 * 32);
    assert!(!loaded.warnings.is_empty()); // no dtype given
    assert!(load_model("{").is_err());
    assert!(load_model(r#"{"foo": 1}"#).is_err());
}

#[test]
fn unknown_model_type_loads_with_a_warning() {
    let loaded = load_model(&with("model_type", "\"my_decoder\"")).unwrap();
    assert!(loaded.warnings.iter().any(|w| w.contains("my_decoder")));
    assert_eq!(loaded.model.llm.unwrap().kv_heads, 2);
}

#[test]
fn qwen_moe_variants_load_shared_experts_and_head_dim() {
    let qwen2_moe = r#"{"model_type": "qwen2_moe", "hidden_size": 2048, "num_hidden_layers": 24,
      "num_attention_heads": 16, "num_key_value_heads": 16, "intermediate_size": 5632,
      "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632, "num_experts": 60,
      "num_experts_per_tok": 4, "vocab_size": 151936, "decoder_sparse_step": 1,
      "mlp_only_layers": [], "tie_word_embeddings": false, "torch_dtype": "bfloat16"}"#;
    let m = load_model(qwen2_moe).unwrap().model;
    let moe = m.llm.as_ref().unwrap().moe.clone().unwrap();
    assert_eq!((moe.experts, moe.top_k, moe.shared_intermediate, moe.dense_layers), (60, 4, 5632, 0));
    // Qwen1.5-MoE-A2.7B: 14.3B total, 2.7B active.
    let p = m.params();
    assert!((14.0..14.6).contains(&billions(p.total)), "{}", billions(p.total));
    assert!((2.5..2.9).contains(&billions(p.active)), "{}", billions(p.active));

    let qwen3_moe = r#"{"model_type": "qwen3_moe", "hidden_size": 2048, "num_hidden_layers": 48,
      "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
      "intermediate_size": 6144, "moe_intermediate_size": 768, "num_experts": 128,
      "num_experts_per_tok": 8, "vocab_size": 151936, "tie_word_embeddings": false,
      "torch_dtype": "bfloat16"}"#;
    let m = load_model(qwen3_moe).unwrap().model;
    assert_eq!(m.llm.as_ref().unwrap().head_dim, 128);
    // Qwen3-30B-A3B: 30.5B total, 3.3B active.
    let p = m.params();
    assert!((30.0..31.0).contains(&billions(p.total)), "{}", billions(p.total));
    assert!((3.1..3.5).contains(&billions(p.active)), "{}", billions(p.active));

    let qwen3 = r#"{"model_type": "qwen3", "hidden_size": 1024, "num_hidden_layers": 28,
      "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
      "intermediate_size": 3072, "vocab_size": 151936, "tie_word_embeddings": true,
      "torch_dtype": "bfloat16"}"#;
    let m = load_model(qwen3).unwrap().model;
    // Qwen3-0.6B: 0.6B with tied embeddings (0.44B without them).
    let p = billions(m.params().total);
    assert!((0.55..0.65).contains(&p), "{p}");
}

#[test]
fn operator_graph_errors_name_the_op_and_field() {
    let bad = r#"{"format": "tunelab-graph", "dtype": "fp16", "ops": [
      {"name": "x", "op": {"op": "matmul", "m": 0, "n": 4, "k": 4, "dtype": "fp16"}}]}"#;
    let e = load_model(bad).unwrap_err();
    assert!(e.contains("'x'") && e.contains("'m'"), "{e}");
    let neg = r#"{"ops": [{"name": "y", "op": {"op": "vector", "kind": "softmax",
      "rows": -2, "row_len": 4, "dtype": "fp16"}}]}"#;
    let e = load_model(neg).unwrap_err();
    assert!(e.contains("rows"), "{e}");
    let frac = r#"{"ops": [{"name": "z", "repeat": 1.5, "op": {"op": "vector",
      "kind": "softmax", "rows": 2, "row_len": 4, "dtype": "fp16"}}]}"#;
    assert!(load_model(frac).unwrap_err().contains("repeat"));
    assert!(load_model(r#"{"ops": []}"#).is_err());
}

#[test]
fn a_serialised_description_round_trips() {
    let m = bundled("mixtral-8x7b");
    let mut v = serde_json::to_value(&m).unwrap();
    v["format"] = "tunelab-model".into();
    let back = load_model(&v.to_string()).unwrap().model;
    assert_eq!(back, m);
}

#[test]
fn errors_use_the_config_field_names() {
    let e = load_model(&with("num_hidden_layers", "0")).unwrap_err();
    assert!(e.contains("num_hidden_layers"), "{e}");
    let e = load_model(&with("num_key_value_heads", "3")).unwrap_err();
    assert!(e.contains("num_key_value_heads"), "{e}");
    // Each size in range, their product absurd: measured in 128 bits, rejected, no overflow.
    let mut v: serde_json::Value = serde_json::from_str(BASE).unwrap();
    v["hidden_size"] = (1u64 << 20).into();
    v["intermediate_size"] = (1u64 << 20).into();
    v["num_hidden_layers"] = 4096.into();
    v["num_attention_heads"] = 8192.into();
    v["num_key_value_heads"] = 8192.into();
    let e = load_model(&v.to_string()).unwrap_err();
    assert!(e.contains("parameters"), "{e}");
}

#[test]
fn extreme_configs_never_panic() {
    use tunelab_sim::memory::MemoryStrategy;
    use tunelab_sim::{build_graph, max_batch, GraphOptions, ParallelPlan, Workload};
    let values = ["1", "3", "65536", "1048576", "18446744073709551615"];
    let fields = ["hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "intermediate_size", "vocab_size", "head_dim"];
    let w = [Workload::Prefill { batch: 3, input_len: 100 }, Workload::TrainStep { micro_batch: 2, seq_len: 64 }];
    for f in fields {
        for v in values {
            let Ok(loaded) = load_model(&with(f, v)) else { continue };
            for w in w {
                let _ = build_graph(&loaded.model, &w, &ParallelPlan::default(), &GraphOptions::default());
                let _ = max_batch(&loaded.model, &w, &ParallelPlan::default(), &GraphOptions::default(), MemoryStrategy::Static, 1 << 36);
            }
        }
    }
}

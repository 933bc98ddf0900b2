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
        // Only the honest approximations of a real architecture may be reported (Baichuan-13B's
        // ALiBi, Qwen3.5's vision tower behind text-only prompts, Qwen2.5-VL's default image and
        // windowed attention priced as full);
        // never an unknown type, an unread key or a guess.
        let bad: Vec<&String> = loaded
            .warnings
            .iter()
            .filter(|w| !(w.contains("ALiBi") || w.contains("the vision tower is not costed") || w.contains("dynamic-resolution vision tower")))
            .collect();
        assert!(bad.is_empty(), "{id}: {bad:?}");
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

/// The model types of issue 9 read from their own config.json keys, with published sizes.
#[test]
fn every_model_type_reads_its_own_keys() {
    let within = |id: &str, total: (f64, f64), active: (f64, f64)| {
        let p = bundled(id).params();
        let (t, a) = (billions(p.total), billions(p.active));
        assert!((total.0..total.1).contains(&t), "{id} total {t}");
        assert!((active.0..active.1).contains(&a), "{id} active {a}");
    };
    within("chatglm3-6b", (6.2, 6.3), (6.2, 6.3));
    within("baichuan2-13b", (13.8, 14.0), (13.8, 14.0));
    within("qwen-7b", (7.6, 7.8), (7.6, 7.8));
    within("qwen3-32b", (32.6, 32.9), (32.6, 32.9));
    within("qwen2-57b-a14b", (57.0, 57.8), (14.0, 14.5));
    within("qwen3-235b-a22b", (234.0, 236.0), (22.0, 22.4));
    within("deepseek-v2-lite", (15.5, 15.9), (2.4, 2.8));
    within("deepseek-v3", (670.0, 672.0), (37.0, 38.0));

    // ChatGLM3: multi_query_group_num KV groups, kv_channels head size, padded vocabulary.
    let glm = bundled("chatglm3-6b");
    let t = glm.llm.as_ref().unwrap();
    assert_eq!((t.layers, t.kv_heads, t.head_dim, t.intermediate, t.vocab), (28, 2, 128, 13696, 65024));
    assert!(t.qkv_bias);
    assert_eq!(t.max_position, 8192);
    // Qwen3's q/k norms, DeepSeek's latent attention and its small cache.
    assert!(bundled("qwen3-32b").llm.unwrap().qk_norm);
    let ds = bundled("deepseek-v2-lite");
    let m = ds.llm.as_ref().unwrap().mla.unwrap();
    assert_eq!((m.kv_lora_rank, m.qk_rope_head_dim, m.q_lora_rank), (512, 64, 0));
    // 27 layers x (512 + 64) bf16 elements per token, not 2 x 16 heads x 192.
    assert_eq!(ds.kv_bytes_per_token(DType::Bf16), 27 * 576 * 2);
    // DeepSeek: the first layer dense, the other 26 MoE.
    assert_eq!(ds.llm.as_ref().unwrap().moe.as_ref().unwrap().dense_layers, 1);
    // Mistral slides over 4096 keys in every layer; Qwen2 only when use_sliding_window is set.
    let sw = bundled("mistral-7b").llm.unwrap().sliding_window.unwrap();
    assert_eq!((sw.window, sw.layers), (4096, 32));
    assert!(bundled("qwen2-7b").llm.unwrap().sliding_window.is_none());
}

#[test]
fn chatglm_without_its_keys_names_both_spellings_and_unknown_keys_warn() {
    let e = load_model(r#"{"model_type":"chatglm","hidden_size":4096,"num_attention_heads":32,"padded_vocab_size":65024,"ffn_hidden_size":13696}"#).unwrap_err();
    assert!(e.contains("num_hidden_layers") && e.contains("num_layers"), "{e}");
    let w = load_model(r#"{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100,"intermediate_size":128,"torch_dtype":"bfloat16","num_memory_tokens":16}"#).unwrap().warnings;
    assert!(w.iter().any(|x| x.contains("num_memory_tokens")), "{w:?}");
    // Qwen2 with use_sliding_window slides in the layers from max_window_layers on.
    let q = load_model(r#"{"model_type":"qwen2","hidden_size":64,"num_hidden_layers":8,"num_attention_heads":4,"vocab_size":100,"intermediate_size":128,"torch_dtype":"bfloat16","use_sliding_window":true,"sliding_window":512,"max_window_layers":6}"#).unwrap().model;
    let sw = q.llm.unwrap().sliding_window.unwrap();
    assert_eq!((sw.window, sw.layers), (512, 2));
}

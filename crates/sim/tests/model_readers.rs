//! The readers' mechanisms where they run: windows in the KV cache and in decode attention,
//! Mamba-2's fixed state, Python's Infinity, wrappers of unknown families, unsupported
//! architectures named. Real configs from tests/data/models (SOURCES.md); the small edits below
//! (one field changed) say what they test.

use tunelab_sim::memory::{kv_cache_bytes, recurrent_state_bytes};
use tunelab_sim::model::load_model;
use tunelab_sim::workload::{forward_graph, GraphOptions, ParallelPlan, Workload};
use tunelab_sim::op::Op;

const GPT_OSS: &str = include_str!("data/models/gpt-oss-20b.config.json");
const NEMOTRON_H: &str = include_str!("data/models/nemotron-h-8b-base-8k.config.json");
const GEMMA3: &str = include_str!("data/models/gemma-3-1b-it.config.json");

fn edited(json: &str, f: impl Fn(&mut serde_json::Map<String, serde_json::Value>)) -> String {
    let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
    f(v.as_object_mut().unwrap());
    v.to_string()
}

#[test]
fn sliding_layers_hold_only_their_window_in_the_kv_cache() {
    let m = load_model(GPT_OSS).unwrap().model;
    let plan = ParallelPlan::default();
    let opts = GraphOptions::default();
    let t = m.llm.as_ref().unwrap();
    let per_token_layer = 2 * t.kv_heads * t.head_dim * opts.kv_dtype().bytes();
    // 12 full layers hold 8192 tokens, 12 sliding layers 128.
    let want = per_token_layer * (12 * 8192 + 12 * 128);
    assert_eq!(kv_cache_bytes(&m, &plan, &opts, 1, 8192), want);
    // A prompt shorter than the window: every layer holds it all.
    assert_eq!(kv_cache_bytes(&m, &plan, &opts, 1, 100), per_token_layer * 24 * 100);
}

#[test]
fn decode_attention_of_sliding_layers_reads_the_window() {
    let m = load_model(GPT_OSS).unwrap().model;
    let g = forward_graph(&m, &Workload::Decode { batch: 4, context_len: 8000, output_len: 1 }, &ParallelPlan::default(), &GraphOptions::default()).unwrap();
    let kv_of = |name: &str| g.ops.iter().find(|o| o.name == name).map(|o| match o.op {
        Op::Attention { kv_len, .. } => (kv_len, o.repeat),
        _ => panic!("{name} is not an attention"),
    });
    assert_eq!(kv_of("layer.attn.core"), Some((8000, 12)));
    assert_eq!(kv_of("layer.attn.core_window"), Some((128, 12)));
}

#[test]
fn gemma3_prefill_attends_its_local_layers_within_the_window() {
    let m = load_model(GEMMA3).unwrap().model;
    let g = forward_graph(&m, &Workload::Prefill { batch: 1, input_len: 4096 }, &ParallelPlan::default(), &GraphOptions::default()).unwrap();
    let win = g.ops.iter().find(|o| o.name == "layer.attn.core_window").expect("windowed core");
    assert_eq!(win.repeat, 22);
    match win.op {
        // A causal 512 window over 4096 tokens: 512 - 512^2 / 8192 = 480 keys per query.
        Op::Attention { kv_len, .. } => assert_eq!(kv_len, 480),
        _ => unreachable!(),
    }
}

#[test]
fn mamba2_layers_keep_a_fixed_state_and_no_kv_cache() {
    let m = load_model(NEMOTRON_H).unwrap().model;
    let plan = ParallelPlan::default();
    let opts = GraphOptions::default();
    let t = m.llm.as_ref().unwrap();
    // Only the 4 attention layers cache keys and values.
    assert_eq!(kv_cache_bytes(&m, &plan, &opts, 1, 1000), 4 * 1000 * 2 * t.kv_heads * t.head_dim * opts.kv_dtype().bytes());
    // 24 Mamba-2 layers x (128 heads x 64 x 128 state in fp32 + conv state), whatever the context.
    let mb = t.mamba.unwrap();
    let conv = (mb.heads * mb.head_dim + 2 * mb.groups * mb.state) * (mb.conv_kernel - 1);
    assert_eq!(recurrent_state_bytes(&m, &plan, &opts, 1), 24 * (128 * 64 * 128 * 4 + conv * opts.vector_dtype().bytes()));
    // Decode prices one recurrence step per Mamba layer, prefill the chunked scan.
    let d = forward_graph(&m, &Workload::Decode { batch: 2, context_len: 4000, output_len: 1 }, &plan, &opts).unwrap();
    assert!(d.ops.iter().any(|o| o.name.ends_with("mamba.linear_attn.core.recurrent") && o.repeat == 24));
    let p = forward_graph(&m, &Workload::Prefill { batch: 1, input_len: 2048 }, &plan, &opts).unwrap();
    assert!(p.ops.iter().any(|o| o.name.ends_with("mamba.linear_attn.core.intra_scores") && o.repeat == 24));
    // Squared-ReLU MLP layers: up and down, no gate.
    assert!(p.ops.iter().any(|o| o.name.ends_with(".mlp.up_proj")));
    assert!(!p.ops.iter().any(|o| o.name.ends_with(".mlp.gate_up_proj")));
}

#[test]
fn python_infinity_parses_and_a_size_holding_it_is_refused_by_name() {
    let with_inf = NEMOTRON_H.replacen("\"ssm_state_size\": 128,", "\"ssm_state_size\": 128,\n  \"time_step_limit\": [0.0, Infinity],", 1);
    assert!(serde_json::from_str::<serde_json::Value>(&with_inf).is_err(), "the edit must be Python's JSON");
    load_model(&with_inf).expect("Infinity in a field without cost meaning loads");
    let bad = NEMOTRON_H.replacen("\"hidden_size\": 4096", "\"hidden_size\": Infinity", 1);
    let e = load_model(&bad).unwrap_err();
    assert!(e.contains("hidden_size") && e.contains("Infinity"), "{e}");
}

#[test]
fn a_wrapper_of_any_family_reads_its_text_config_and_costs_its_vision_tower() {
    // Ministral 3: a mistral3 wrapper around a ministral3 decoder and a Pixtral tower.
    let m = load_model(include_str!("data/models/ministral-3-3b-2512.config.json")).unwrap().model;
    assert_eq!(m.llm.as_ref().unwrap().hidden, 3072);
    let v = m.vision.as_ref().expect("the tower is costed");
    assert_eq!((v.encoder.layers, v.encoder.hidden, v.merge), (24, 1024, 2));
    let g = forward_graph(&m, &Workload::Prefill { batch: 1, input_len: 64 }, &ParallelPlan::default(), &GraphOptions::default()).unwrap();
    assert!(g.ops.iter().any(|o| o.name.starts_with("vision.layer")));
}

#[test]
fn an_unknown_type_is_read_generically_and_says_so() {
    let j = edited(include_str!("data/models/qwen3-0.6b.config.json"), |o| {
        o.insert("model_type".into(), "brand_new_lm".into());
    });
    let m = load_model(&j).unwrap().model;
    assert!(m.approximations().iter().any(|a| a.starts_with("whole model") && a.contains("brand_new_lm")));
    // The known type has no such note.
    let known = load_model(include_str!("data/models/qwen3-0.6b.config.json")).unwrap().model;
    assert!(known.approximations().is_empty(), "{:?}", known.approximations());
}

#[test]
fn an_unsupported_architecture_says_what_is_not_read() {
    let j = edited(include_str!("data/models/qwen3-0.6b.config.json"), |o| {
        o.insert("model_type".into(), "brand_new_lm".into());
        o.remove("num_attention_heads");
    });
    let e = load_model(&j).unwrap_err();
    assert!(e.contains("brand_new_lm") && e.contains("not an architecture Tunelab reads") && e.contains("num_attention_heads"), "{e}");
    let e = load_model(r#"{"model_type": "whisper", "d_model": 1280, "encoder_layers": 32}"#).unwrap_err();
    assert!(e.contains("no language model") && e.contains("d_model"), "{e}");
}

#[test]
fn gpt_oss_identity_shows_its_weights_per_precision() {
    let m = load_model(GPT_OSS).unwrap().model;
    let id = m.identity();
    assert_eq!(id.weights.len(), 3);
    // bf16: two bytes per parameter.
    assert_eq!(id.weights[0].bytes, 2 * id.params.total);
    assert!(id.weights[2].bytes < id.weights[1].bytes && id.weights[1].bytes < id.weights[0].bytes);
    assert!(m.identity_line().contains("20.91B parameters"), "{}", m.identity_line());
}

#[test]
fn an_old_description_prices_through_the_derived_stack() {
    // A serialised description without `stack` (every link saved before it): runs derived from
    // the overlays, the same layers as the reader's own.
    let m = load_model(include_str!("../../../assets/models/qwen3-next-80b-a3b.config.json")).unwrap().model;
    assert!(m.llm.as_ref().unwrap().stack.is_empty(), "overlays say it: no explicit stack stored");
    let json = serde_json::to_string(&m).unwrap();
    assert!(!json.contains("\"stack\""));
    let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
    v["format"] = "tunelab-model".into();
    let back = load_model(&v.to_string()).unwrap().model;
    assert_eq!(back.params(), m.params());
    assert_eq!(back.llm.unwrap().runs(), m.llm.unwrap().runs());
}

#[test]
fn llama4_rope_layers_attend_in_chunks_and_moe_interleaves_with_dense() {
    let m = load_model(include_str!("data/models/llama-4-maverick-2-layer.text_config.json")).unwrap().model;
    let t = m.llm.as_ref().unwrap();
    let runs: Vec<_> = t.runs().into_iter().map(|r| (r.mixer, r.ffn)).collect();
    use tunelab_sim::model::{Ffn, Mixer};
    // Layer 0: RoPE (chunked 8192), dense 16384; layer 1: NoPE (global), MoE with a shared expert.
    assert_eq!(runs, vec![(Mixer::Attention { window: 0, chunk: 8192, sinks: false, compress: 0, topk: 0 }, Ffn::Dense { intermediate: 16384 }), (Mixer::FULL, Ffn::Moe)]);
    let moe = t.moe.as_ref().unwrap();
    assert_eq!((moe.experts, moe.top_k, moe.expert_intermediate, moe.shared_intermediate, moe.shared_gate), (128, 1, 8192, 8192, false));
    // The chunked layer caches at most one chunk.
    let opts = GraphOptions::default();
    let per = 2 * t.kv_heads * t.head_dim * opts.kv_dtype().bytes();
    assert_eq!(kv_cache_bytes(&m, &ParallelPlan::default(), &opts, 1, 20_000), per * (8192 + 20_000));
    // Decoding at 20,000 tokens: the chunked layer reads 20,000 mod 8192 keys.
    let g = forward_graph(&m, &Workload::Decode { batch: 1, context_len: 20_000, output_len: 1 }, &ParallelPlan::default(), &opts).unwrap();
    assert!(g.ops.iter().any(|o| o.name == "layer.attn.core_chunk" && matches!(o.op, Op::Attention { kv_len: 3616, .. })), "{:?}", g.ops.iter().map(|o| &o.name).collect::<Vec<_>>());
}

/// MiniMax-Text-01 / M1's lightning attention (`attn_type_list`: 0 lightning, 1 softmax):
/// lightning layers keep a head_dim x head_dim fp32 state per head and no KV cache, softmax
/// layers a KV cache; decode prices one recurrence step per lightning layer. (MiniMax-M2.5's
/// widths with the Text-01 layer list put on them: a mechanism test, not a real model.)
#[test]
fn minimax_lightning_layers_keep_a_state_and_softmax_layers_a_kv_cache() {
    let j = edited(include_str!("data/models/minimax-m2.5.config.json"), |o| {
        o.insert("model_type".into(), "minimax".into());
        o.remove("quantization_config");
        // 62 layers: every 8th softmax, the rest lightning (MiniMax-01's 7 : 1).
        let list: Vec<u64> = (0..62).map(|i| u64::from((i + 1) % 8 == 0)).collect();
        o.insert("attn_type_list".into(), serde_json::json!(list));
    });
    let l = load_model(&j).unwrap();
    let m = &l.model;
    let t = m.llm.as_ref().unwrap();
    assert!(m.approximations().iter().any(|a| a.contains("lightning attention")), "{:?}", m.approximations());
    assert!(!m.approximations().iter().any(|a| a.starts_with("whole model")), "read by its own reader");
    let (plan, opts) = (ParallelPlan::default(), GraphOptions::default());
    // 7 softmax layers (8, 16, ..., 56) cache keys and values; 55 lightning layers do not.
    assert_eq!(kv_cache_bytes(&m, &plan, &opts, 1, 1000), 7 * 1000 * 2 * t.kv_heads * t.head_dim * opts.kv_dtype().bytes());
    // Each lightning layer: 48 heads x 128 x 128 fp32, no convolution state.
    assert_eq!(recurrent_state_bytes(&m, &plan, &opts, 1), 55 * 48 * 128 * 128 * 4);
    let d = forward_graph(&m, &Workload::Decode { batch: 2, context_len: 4000, output_len: 1 }, &plan, &opts).unwrap();
    assert!(d.ops.iter().any(|o| o.name.contains("linear_attn") && o.repeat == 55), "{:?}", d.ops.iter().map(|o| (&o.name, o.repeat)).collect::<Vec<_>>());
}

/// A cost-bearing key the family's reading leaves without effect is named once as "not used by
/// the model" (MiniMax-M2.5's three MTP modules; a window on a reading without sliding layers),
/// and a key the reading uses is not.
#[test]
fn keys_the_reading_leaves_without_effect_are_named_once() {
    let m = load_model(include_str!("data/models/minimax-m2.5.config.json")).unwrap().model;
    let a = m.approximations();
    assert_eq!(a.iter().filter(|n| n.contains("'num_mtp_modules' = 3 is not used by the model")).count(), 1, "{a:?}");
    let j = edited(include_str!("data/models/qwen3-8b.config.json"), |o| {
        o.insert("model_type".into(), "seed_oss".into());
        o.insert("attention_chunk_size".into(), 8192.into());
    });
    let a = load_model(&j).unwrap().model.approximations();
    assert!(a.iter().any(|n| n.contains("'attention_chunk_size' = 8192 is not used by the model")), "{a:?}");
    // gpt-oss's windows are read: nothing to report.
    let a = load_model(GPT_OSS).unwrap().model.approximations();
    assert!(!a.iter().any(|n| n.contains("not used by the model")), "{a:?}");
}

/// Step-3's multi-matrix factorisation attention: a 2048-wide low-rank query into 64 heads of
/// 256 and one KV head, MoE on the layers `moe_layers_enum` lists with a 5120-wide shared
/// expert. The widths are vLLM's Step3TextConfig defaults (`transformers_utils/configs/step3_vl.py`,
/// which are Step-3's own); no public copy of Step-3's config.json is in the test set.
#[test]
fn step3_reads_its_low_rank_query_single_kv_head_and_listed_moe_layers() {
    let layers: Vec<String> = (4..60).map(|i| i.to_string()).collect();
    let j = serde_json::json!({
        "model_type": "step3_text", "hidden_size": 7168, "intermediate_size": 18432, "num_attention_heads": 64,
        "num_attention_groups": 1, "num_hidden_layers": 61, "max_seq_len": 65536, "vocab_size": 128815,
        "rms_norm_eps": 1e-5, "moe_intermediate_size": 5120, "moe_num_experts": 48, "moe_top_k": 3,
        "rope_theta": 500000, "max_position_embedding": 65536, "share_expert_dim": 5120, "share_q_dim": 2048,
        "head_dim": 256, "norm_expert_weight": false, "moe_layers_enum": layers.join(","), "torch_dtype": "bfloat16"
    });
    let l = load_model(&j.to_string()).unwrap();
    let m = &l.model;
    let t = m.llm.as_ref().unwrap();
    assert_eq!((t.kv_heads, t.q_bottleneck), (1, 2048));
    assert!(!m.approximations().iter().any(|a| a.starts_with("whole model")));
    // Attention per layer: 7168 x (2048 + 2 x 256) + 2048 (norm) + 2048 x 16384 + 16384 x 7168.
    let attn = 7168 * (2048 + 512) + 2048 + 2048 * 16384 + 16384 * 7168;
    assert_eq!(t.attention_params(), attn);
    // 56 MoE layers (4..=59), 5 dense; 316B in all (321B with Step-3's 5B vision tower).
    assert_eq!(t.moe.as_ref().unwrap().dense_layers, 5);
    let b = m.params().total as f64 / 1e9;
    assert!((315.0..318.0).contains(&b), "{b}");
    let (plan, opts) = (ParallelPlan::default(), GraphOptions::default());
    assert_eq!(kv_cache_bytes(m, &plan, &opts, 1, 1000), 61 * 1000 * 2 * 256 * opts.kv_dtype().bytes());
    let g = forward_graph(m, &Workload::Prefill { batch: 1, input_len: 512 }, &plan, &opts).unwrap();
    assert!(g.ops.iter().any(|o| o.name.ends_with("attn.wq")));
    use tunelab_sim::memory::chip_params;
    assert_eq!(chip_params(m, &plan).total(), m.params().total);
}

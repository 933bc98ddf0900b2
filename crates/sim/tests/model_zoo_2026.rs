//! More public 2025-2026 configs (NVIDIA aiconfigurator's verbatim Hugging Face copies, see
//! tests/data/models/SOURCES.md): each loads with its own reader (no generic-decoder note) and,
//! where a citable card states a total, counts within 2% of it. The mechanism tests check the
//! spelling each one brought: Nemotron 3's `layers_block_type` list, GLM-5.2's per-layer
//! `layer_types` / `mlp_layer_types`, MiniMax-M2.7's `attn_type_list`. Run with --nocapture for
//! the table.

use tunelab_sim::model::{load_model, Ffn, Mixer};

struct Case {
    name: &'static str,
    json: &'static str,
    /// The card's total in billions (None: no citable card figure; loaded for mechanisms only).
    total_b: Option<f64>,
    card: &'static str,
    /// A known miss and why (refused, read generically, or outside 2%): counted against the
    /// zoo figure; the test fails if a miss is not listed, or a listed miss now passes.
    miss: Option<&'static str>,
}

fn cases() -> Vec<Case> {
    let c = |name, json, total_b, card| Case { name, json, total_b, card, miss: None };
    #[allow(unused_variables)]
    let m = |name, json, total_b, card, why| Case { name, json, total_b, card, miss: Some(why) };
    vec![
        c("deepseek-v3", include_str!("data/models/deepseek-v3.config.json"), Some(671.0), "deepseek-ai/DeepSeek-V3 README (deepseek-ai/DeepSeek-V3 repository): 671B total parameters with 37B activated"),
        c("nemotron-3-ultra-550b-a55b", include_str!("data/models/nemotron-3-ultra-550b-a55b.config.json"), Some(550.0), "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B: 550B (its name; the A55B active is rounded, not checked)"),
        c("qwen3.6-27b", include_str!("data/models/qwen3.6-27b-nvfp4.config.json"), Some(27.0), "Qwen/Qwen3.6-27B (NVIDIA's NVFP4 checkpoint of it): 27B (its name)"),
        c("qwen3.6-35b-a3b", include_str!("data/models/qwen3.6-35b-a3b-nvfp4.config.json"), Some(35.0), "Qwen/Qwen3.6-35B-A3B (NVIDIA's NVFP4 checkpoint of it): 35B total (its name; A3B rounded, not checked)"),
        c("qwen3-vl-235b-a22b", include_str!("data/models/qwen3-vl-235b-a22b.config.json"), Some(235.0), "Qwen/Qwen3-VL-235B-A22B-Instruct: 235B total (its name; A22B rounded, not checked)"),
        c("nemotron-3.5-lightning-30b-a3b", include_str!("data/models/nemotron-3.5-lightning-30b-a3b-nvfp4.config.json"), None, "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4: no card total cited (the name's 30B is rounded: Nemotron 3 Nano of the same widths states 31.6B)"),
        c("glm-5.2", include_str!("data/models/glm-5.2.config.json"), None, "zai-org/GLM-5.2: no card total cited"),
        c("glm-5.2-nvfp4", include_str!("data/models/glm-5.2-nvfp4.config.json"), None, "nvidia/GLM-5.2-NVFP4: no card total cited"),
        c("minimax-m2.7", include_str!("data/models/minimax-m2.7.config.json"), None, "MiniMaxAI/MiniMax-M2.7: no card total cited"),
        c("smollm3-3b", include_str!("data/models/smollm3-3b.config.json"), Some(3.075), "HuggingFaceTB/SmolLM3-3B: its two bf16 safetensors files, 4,966,315,264 + 1,183,919,744 bytes (model_files.json of the same mirror) / 2 bytes = 3.075B (the card says 3B)"),
        c("ling-1t", include_str!("data/models/ling-1t.config.json"), Some(1000.0), "inclusionAI/Ling-1T card: 1 trillion total parameters with about 50 billion active per token"),
        c("glm-4.1v-9b-thinking", include_str!("data/models/glm-4.1v-9b-thinking.config.json"), None, "zai-org/GLM-4.1V-9B-Thinking: no card total cited (mechanisms only: the glm4v wrapper and its tower)"),
        c("step-3.7-flash", include_str!("data/models/step-3.7-flash.config.json"), Some(196.0), "stepfun-ai/Step-3.7-Flash (vLLM recipe page): 198B total, a 196B sparse language backbone with a 1.8B perception encoder; this config is the language model's"),
        c("minimax-m3", include_str!("data/models/minimax-m3.config.json"), Some(428.0), "MiniMaxAI/MiniMax-M3 card (as mirrored by unsloth/MiniMax-M3): ~428B parameters, ~23B activated"),
        c("deepseek-v4-flash", include_str!("data/models/deepseek-v4-flash.config.json"), Some(284.0), "deepseek-ai/DeepSeek-V4-Flash card (as quoted by antirez/ds4 MODEL_CARD.md): 284B total, 13B active"),
        c("deepseek-v4-pro", include_str!("data/models/deepseek-v4-pro.config.json"), Some(1600.0), "deepseek-ai/DeepSeek-V4-Pro card (as quoted by antirez/ds4 MODEL_CARD.md): 1.6T total, 49B active"),
        c("gemma-4-26b-a4b", include_str!("data/models/gemma-4-26b-a4b.config.json"), Some(25.2), "google/gemma-4-26B-A4B card (as quoted by the Gemma 4 model card summaries): 25.2B total, 3.8B active; the count here adds the vision tower's 0.43B to the language model's 25.22B"),
        c("gemma-4-31b", include_str!("data/models/gemma-4-31b-it-nvfp4.config.json"), Some(30.7), "google/gemma-4-31B-it (NVIDIA's NVFP4 checkpoint of it), card: 30.7B dense; the count here adds the vision tower's 0.43B to the language model's"),
        c("minimax-m3-nvfp4", include_str!("data/models/minimax-m3-nvfp4.config.json"), Some(428.0), "MiniMaxAI/MiniMax-M3 card: ~428B (NVIDIA's NVFP4 copy of the VL checkpoint; its 0.64B vision tower counted here)"),
        c("deepseek-v4-flash-fp8-sglang", include_str!("data/models/deepseek-v4-flash-fp8-sglang.config.json"), Some(284.0), "deepseek-ai/DeepSeek-V4-Flash card: 284B (SGLang's FP8 copy, model_type deepseek_ref)"),
        c("kimi-k3", include_str!("data/models/kimi-k3.config.json"), None, "moonshotai/Kimi-K3: no card total cited (mechanisms only: KDA + gated MLA, latent MoE, MoonViT with a 1536-wide attention)"),
    ]
}

/// The zoo figure: every case loads with its own reader (no generic-decoder note) and, where a
/// card figure is cited, counts within 2% of it; a listed miss must still be a miss (so the
/// figure can only be raised by fixing one and removing its mark).
#[test]
fn more_public_configs_load_with_their_own_reader_and_count_within_two_percent() {
    let mut unexpected = Vec::new();
    let (mut good, mut checked) = (0, 0);
    for c in cases() {
        let ok = match load_model(c.json) {
            Err(e) => {
                println!("{:32} REFUSED: {e}", c.name);
                false
            }
            Ok(m) => {
                let id = m.model.identity();
                let total = id.params.total as f64 / 1e9;
                let generic = id.approximations.iter().any(|a| a.starts_with("whole model"));
                let e = c.total_b.map(|t| (total - t) / t);
                println!(
                    "{:32} total {total:8.2}B active {:7.2}B {}  {} | {}",
                    c.name,
                    id.params.active as f64 / 1e9,
                    e.map_or("(no card figure)".to_string(), |x| format!("({:+.2}%)", x * 100.0)),
                    if generic { "GENERIC" } else { "own reader" },
                    c.card
                );
                println!("    {}", id.stack);
                for a in &id.approximations {
                    println!("    ~ {a}");
                }
                // One formula: memory holds exactly the counted parameters (language models).
                if m.model.vision.is_none() {
                    let held = tunelab_sim::memory::chip_params(&m.model, &tunelab_sim::workload::ParallelPlan::default()).total();
                    assert_eq!(held, m.model.params().total, "{}: memory holds {held}", c.name);
                }
                !generic && !e.is_some_and(|x| x.abs() > 0.02)
            }
        };
        if c.total_b.is_some() {
            checked += 1;
            good += usize::from(ok);
        }
        match (ok, c.miss) {
            (false, None) => unexpected.push(format!("{}: a miss not listed", c.name)),
            (true, Some(why)) => unexpected.push(format!("{}: listed as a miss ({why}) but now passes: remove the mark", c.name)),
            (false, Some(why)) => println!("    MISS (known): {why}"),
            (true, None) => {}
        }
    }
    println!("zoo (model_zoo_2026): {good} of {checked} configs with a card figure load with their own reader within 2% ({:.1}%)", 100.0 * good as f64 / checked.max(1) as f64);
    assert!(unexpected.is_empty(), "{unexpected:#?}");
}

fn runs(json: &str) -> Vec<(Mixer, Ffn, u64)> {
    let t = load_model(json).unwrap().model.llm.unwrap();
    t.runs().into_iter().map(|r| (r.mixer, r.ffn, r.count)).collect()
}

/// Nemotron 3 Ultra lists each layer's block in `layers_block_type` and gives no
/// `num_hidden_layers`: 108 layers, read as the Mamba-2 / attention / latent-MoE hybrid.
#[test]
fn nemotron_3_ultra_reads_layers_block_type() {
    let r = runs(include_str!("data/models/nemotron-3-ultra-550b-a55b.config.json"));
    let count = |m: Mixer, f: Ffn| -> u64 { r.iter().filter(|x| x.0 == m && x.1 == f).map(|x| x.2).sum() };
    assert_eq!(count(Mixer::Mamba2, Ffn::None), 48);
    assert_eq!(count(Mixer::FULL, Ffn::None), 12);
    assert_eq!(count(Mixer::None, Ffn::Moe), 48);
    let t = load_model(include_str!("data/models/nemotron-3-ultra-550b-a55b.config.json")).unwrap().model.llm.unwrap();
    assert_eq!(t.layers, 108);
    assert_eq!(t.moe.unwrap().latent, 2048);
    // A list that disagrees with num_hidden_layers, or names an unknown block, is refused by name.
    let mut v: serde_json::Value = serde_json::from_str(include_str!("data/models/nemotron-3.5-lightning-30b-a3b-nvfp4.config.json")).unwrap();
    v["num_hidden_layers"] = serde_json::json!(51);
    let e = load_model(&v.to_string()).unwrap_err();
    assert!(e.contains("layers_block_type") && e.contains("51"), "{e}");
    v["num_hidden_layers"] = serde_json::json!(52);
    v["layers_block_type"][3] = serde_json::json!("conv");
    let e = load_model(&v.to_string()).unwrap_err();
    assert!(e.contains("layers_block_type[3]"), "{e}");
}

/// GLM-5.2 names every layer's mixer (`deepseek_sparse_attention`) and MLP (`dense` /
/// `sparse`): 3 dense then 75 MoE layers over MLA with the DSA indexer, as GLM-5; the shared
/// indexers are named in a note.
#[test]
fn glm_5_2_reads_its_per_layer_lists() {
    for json in [include_str!("data/models/glm-5.2.config.json"), include_str!("data/models/glm-5.2-nvfp4.config.json")] {
        let m = load_model(json).unwrap().model;
        let t = m.llm.as_ref().unwrap();
        assert!(t.mla.as_ref().is_some_and(|ml| ml.sparse.is_some()));
        let r = runs(json);
        assert_eq!(r.iter().filter(|x| matches!(x.1, Ffn::Dense { .. })).map(|x| x.2).sum::<u64>(), 3);
        assert_eq!(r.iter().filter(|x| x.1 == Ffn::Moe).map(|x| x.2).sum::<u64>(), 75);
        assert!(m.identity().approximations.iter().any(|a| a.contains("57 of 78 layers share")));
    }
    let glm5 = load_model(include_str!("data/models/glm-5.config.json")).unwrap().model.params().total;
    assert_eq!(load_model(include_str!("data/models/glm-5.2.config.json")).unwrap().model.params().total, glm5);
}

/// MiniMax-M2.7's `attn_type_list` (all softmax) is read, not reported; a lightning layer in an
/// M2 config (no lightning widths in that family) is refused by name.
#[test]
fn minimax_m2_7_reads_attn_type_list() {
    let l = load_model(include_str!("data/models/minimax-m2.7.config.json")).unwrap();
    assert!(!l.warnings.iter().any(|w| w.contains("attn_type_list")), "{:?}", l.warnings);
    assert!(runs(include_str!("data/models/minimax-m2.7.config.json")).iter().all(|x| x.0 == Mixer::FULL));
    let mut v: serde_json::Value = serde_json::from_str(include_str!("data/models/minimax-m2.7.config.json")).unwrap();
    v["attn_type_list"][5] = serde_json::json!(0);
    let e = load_model(&v.to_string()).unwrap_err();
    assert!(e.contains("attn_type_list[5]") && e.contains("lightning"), "{e}");
}

/// LongCat-Flash as transformers' LongcatFlashConfig defaults give it ("a similar configuration
/// to that of meituan-longcat/LongCat-Flash-Chat": huggingface/transformers
/// `src/transformers/models/longcat_flash/configuration_longcat_flash.py` at b57e1595dc7c,
/// transcribed key by key; no verbatim config.json of it was found): 28 layers of two MLA
/// attentions, two dense MLPs and a shortcut MoE read as 84 stack layers, 560B total as its
/// technical report (arXiv:2509.01322) and card state.
const LONGCAT_FLASH_DEFAULTS: &str = r#"{"model_type": "longcat_flash", "vocab_size": 131072, "hidden_size": 6144, "num_hidden_layers": 56, "num_layers": 28,
  "num_attention_heads": 64, "hidden_act": "silu", "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "bos_token_id": 1, "eos_token_id": 2,
  "tie_word_embeddings": false, "rope_theta": 10000000.0, "attention_bias": false, "attention_dropout": 0.0, "ffn_hidden_size": 12288,
  "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "head_dim": 64, "v_head_dim": 128,
  "moe_topk": 12, "n_routed_experts": 512, "zero_expert_num": 256, "expert_ffn_hidden_size": 2048, "routed_scaling_factor": 6.0}"#;

/// Kimi Linear as transformers' KimiLinearConfig defaults give it (its docstring's checkpoint
/// moonshotai/Kimi-Linear-48B-A3B-Instruct: huggingface/transformers
/// `src/transformers/models/kimi_linear/configuration_kimi_linear.py` at 630ebd85442b,
/// transcribed; with no `linear_attn_config`, every 4th layer after the first is MLA): "48B
/// total, 3B activated" (Kimi Linear report, arXiv:2510.26692), a figure rounded down from the
/// 49.12B its modules hold (`kimi_linear_reads_kda_and_mla_layers`).
const KIMI_LINEAR_DEFAULTS: &str = r#"{"model_type": "kimi_linear", "vocab_size": 163840, "hidden_size": 2304, "intermediate_size": 9216, "moe_intermediate_size": 1024,
  "num_hidden_layers": 27, "num_attention_heads": 32, "num_key_value_heads": 32, "n_shared_experts": 1, "n_routed_experts": 256,
  "routed_scaling_factor": 2.446, "kv_lora_rank": 512, "q_lora_rank": null, "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128,
  "n_group": 1, "topk_group": 1, "num_experts_per_tok": 8, "norm_topk_prob": true, "hidden_act": "silu", "max_position_embeddings": 1048576,
  "initializer_range": 0.02, "rms_norm_eps": 1e-05, "use_cache": true, "pad_token_id": 163839, "bos_token_id": 163584, "eos_token_id": 163586,
  "pretraining_tp": 1, "tie_word_embeddings": false, "attention_bias": false, "attention_dropout": 0.0, "mlp_layer_types": null, "layer_types": null,
  "linear_head_dim": 128, "linear_num_heads": 32, "linear_conv_kernel_dim": 4}"#;

#[test]
fn longcat_flash_reads_two_attentions_two_mlps_and_a_moe_per_layer() {
    let l = load_model(LONGCAT_FLASH_DEFAULTS).unwrap();
    let id = l.model.identity();
    assert!(!id.approximations.iter().any(|a| a.starts_with("whole model")), "{:?}", id.approximations);
    let total = id.params.total as f64 / 1e9;
    println!("longcat-flash (transformers defaults) total {total:.2}B ({:+.2}% of 560B)", (total / 560.0 - 1.0) * 100.0);
    assert!((total / 560.0 - 1.0).abs() <= 0.02, "{total}");
    let r = runs(LONGCAT_FLASH_DEFAULTS);
    let t = l.model.llm.as_ref().unwrap();
    assert!(t.mla.is_some());
    assert_eq!(r.iter().filter(|x| x.0 == Mixer::FULL).map(|x| x.2).sum::<u64>(), 56, "two attentions per layer");
    assert_eq!(r.iter().filter(|x| x.1 == Ffn::Moe).map(|x| x.2).sum::<u64>(), 28);
    assert_eq!(r.iter().filter(|x| x.1 == Ffn::Dense { intermediate: 12288 }).map(|x| x.2).sum::<u64>(), 56);
    assert!(id.approximations.iter().any(|a| a.contains("zero (identity) experts")));
}

#[test]
fn kimi_linear_reads_kda_and_mla_layers() {
    let l = load_model(KIMI_LINEAR_DEFAULTS).unwrap();
    let id = l.model.identity();
    assert!(!id.approximations.iter().any(|a| a.starts_with("whole model")), "{:?}", id.approximations);
    let total = id.params.total as f64 / 1e9;
    println!("kimi-linear (transformers defaults) total {total:.2}B ({:+.2}% of 48B)", (total / 48.0 - 1.0) * 100.0);
    println!("    {}", id.stack);
    // The report's and the name's "48B" is rounded down: the published widths (the checkpoint's
    // config.json has these same widths and layer lists) sum, module by module as vLLM's
    // `kimi_linear.py` builds them, to 49.12B, and the routed experts with the embeddings and
    // LM head alone are already 47.87B. By module (bf16 parameters):
    let (h, v, nl) = (2304u64, 163_840u64, 27u64);
    let experts = 26 * 256 * 3 * h * 1024; // 26 MoE layers x 256 routed experts
    let moe_rest = 26 * (3 * h * 1024 + 256 * h); // the shared expert and the router
    let dense = 3 * h * 9216; // layer 0's MLP
    let embed = 2 * v * h; // embeddings and LM head (untied)
    // KDA (20 layers): q, k, v (+ short convs), f_a/f_b and g_a/g_b low-rank gates, b_proj,
    // A_log, dt_bias, o_norm, o_proj.
    let kda = 20 * (3 * h * 4096 + 3 * 4096 * 4 + 2 * (h * 128 + 128 * 4096) + h * 32 + 32 + 4096 + 128 + 4096 * h);
    // MLA (7 layers, no q LoRA): q, kv_a (+ norm), kv_b, o.
    let mla = 7 * (h * 32 * 192 + h * 576 + 512 + 512 * 32 * 256 + 32 * 128 * h);
    let norms = nl * 2 * h + h;
    let by_module = (experts + moe_rest + dense + embed + kda + mla + norms) as f64 / 1e9;
    // Tunelab on the checkpoint's layer lists (7 MLA, 20 KDA; the defaults without the lists
    // make 6 and 21).
    let mut ck: serde_json::Value = serde_json::from_str(KIMI_LINEAR_DEFAULTS).unwrap();
    ck.as_object_mut().unwrap().remove("layer_types");
    ck["linear_attn_config"] = serde_json::json!({"num_heads": 32, "head_dim": 128, "short_conv_kernel_size": 4,
        "full_attn_layers": [4, 8, 12, 16, 20, 24, 27], "kda_layers": [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23, 25, 26]});
    let total = load_model(&ck.to_string()).unwrap().model.params().total as f64 / 1e9;
    println!("kimi-linear by module {by_module:.2}B (experts + embeddings alone {:.2}B); Tunelab {total:.2}B ({:+.2}%)", (experts + embed) as f64 / 1e9, (total / by_module - 1.0) * 100.0);
    assert!((by_module - 49.12).abs() < 0.01, "{by_module}");
    // Tunelab's count is within 0.4% of the modules' sum: the KDA layers read as Gated DeltaNet
    // count a full-rank output gate for KDA's low-rank f/g pairs (about 8M per layer over).
    assert!((total / by_module - 1.0).abs() <= 0.004, "{total} vs {by_module}");
    assert!(total > 48.0 * 1.02, "the card's 48B is not reachable from these widths");
    let t = l.model.llm.as_ref().unwrap();
    assert!(t.mla.is_some() && t.linear_attention.is_some());
    let r = runs(KIMI_LINEAR_DEFAULTS);
    assert_eq!(r.iter().filter(|x| x.0 == Mixer::Linear).map(|x| x.2).sum::<u64>(), 21);
    assert_eq!(r.iter().filter(|x| x.0 == Mixer::FULL).map(|x| x.2).sum::<u64>(), 6);
    assert_eq!(r.iter().filter(|x| x.1 == Ffn::Moe).map(|x| x.2).sum::<u64>(), 26);
    // The checkpoint's spelling: 1-based layer lists under linear_attn_config.
    let mut v: serde_json::Value = serde_json::from_str(KIMI_LINEAR_DEFAULTS).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("layer_types");
    o.insert("linear_attn_config".into(), serde_json::json!({"num_heads": 32, "head_dim": 128, "short_conv_kernel_size": 4,
        "full_attn_layers": [4, 8, 12, 16, 20, 24, 27], "kda_layers": [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23, 25, 26]}));
    let r = runs(&v.to_string());
    assert_eq!(r.iter().filter(|x| x.0 == Mixer::FULL).map(|x| x.2).sum::<u64>(), 7);
    v["linear_attn_config"]["kda_layers"] = serde_json::json!([1, 2, 3]);
    let e = load_model(&v.to_string()).unwrap_err();
    assert!(e.contains("linear_attn_config") && e.contains("layer 5"), "{e}");
}

/// Attention sinks are priced where they run: gpt-oss-20b's 24 layers each add one score per
/// query row and head (an elementwise pass over batch x tokens x heads), a model without sinks
/// has no such op.
#[test]
fn attention_sinks_are_priced_in_the_layers_that_have_them() {
    use tunelab_sim::workload::{forward_graph, GraphOptions, ParallelPlan, Workload};
    let m = load_model(include_str!("data/models/gpt-oss-20b.config.json")).unwrap().model;
    let w = Workload::Prefill { batch: 2, input_len: 1024 };
    let g = forward_graph(&m, &w, &ParallelPlan::default(), &GraphOptions::default()).unwrap();
    let sinks: Vec<_> = g.ops.iter().filter(|o| o.name.ends_with(".attn.sinks")).collect();
    assert_eq!(sinks.iter().map(|o| o.repeat).sum::<u64>(), 24, "{:?}", sinks.iter().map(|o| (&o.name, o.repeat)).collect::<Vec<_>>());
    assert!(matches!(sinks[0].op, tunelab_sim::op::Op::Vector { rows: 2048, row_len: 64, .. }), "{:?}", sinks[0].op);
    let q = load_model(include_str!("data/models/qwen3-8b.config.json")).unwrap().model;
    let gq = forward_graph(&q, &w, &ParallelPlan::default(), &GraphOptions::default()).unwrap();
    assert!(!gq.ops.iter().any(|o| o.name.contains("sinks")));
}

/// DeepSeek-V4's compressed attention is held and priced by layer: each layer caches its
/// 128-token raw window plus one row per 4 or 128 tokens (one shared 512-wide row: keys are
/// values), a decoding query attends to the window plus the indexer's top-512 rows on the
/// ratio-4 layers and every pooled row on the ratio-128 ones, the grouped low-rank output
/// projection is two matmuls, and the active count is the card's 13B.
#[test]
fn deepseek_v4_compressed_attention_is_cached_and_priced_by_layer() {
    use tunelab_sim::op::Op;
    use tunelab_sim::workload::{forward_graph, GraphOptions, ParallelPlan, Workload};
    let json = include_str!("data/models/deepseek-v4-flash.config.json");
    let m = load_model(json).unwrap().model;
    let t = m.llm.as_ref().unwrap();
    let ctx: u64 = 1 << 20;
    let want = 2 * 128 + 21 * (128 + (ctx - 128) / 4) + 20 * (128 + (ctx - 128) / 128);
    assert_eq!(t.cached_layer_tokens(ctx), want);
    assert_eq!(t.kv_elems_per_token_layer(), 512, "keys and values share one row");
    let opts = GraphOptions::default();
    let kv = tunelab_sim::memory::kv_cache_bytes(&m, &ParallelPlan::default(), &opts, 1, ctx);
    // Plus the indexer's compressed keys on the 21 ratio-4 layers: one 128-wide row per 4 tokens.
    let indexer = 21 * (ctx / 4) * 128;
    assert_eq!(kv, (want * 512 + indexer) * opts.kv_dtype().bytes());
    // At 1M tokens that is about 1/4.7 of a full-attention cache of the same rows.
    assert!(kv * 4 < 43 * ctx * 512 * opts.kv_dtype().bytes());
    let w = Workload::Decode { batch: 1, context_len: ctx, output_len: 1 };
    let g = forward_graph(&m, &w, &ParallelPlan::default(), &opts).unwrap();
    let core = |suffix: &str| g.ops.iter().find(|o| o.name.ends_with(suffix)).map(|o| (o.repeat, o.op.clone()));
    let (n4, op4) = core("attn.core_compressed4").expect("ratio-4 cores");
    let (n128, op128) = core("attn.core_compressed128").expect("ratio-128 cores");
    assert_eq!((n4, n128), (21, 20));
    assert!(matches!(op4, Op::Attention { kv_len, .. } if kv_len == 128 + 512), "{op4:?}");
    assert!(matches!(op128, Op::Attention { kv_len, .. } if kv_len == 128 + (ctx - 128) / 128), "{op128:?}");
    assert!(g.ops.iter().any(|o| o.name.ends_with("attn.o_a_proj")));
    let p = m.params();
    // The card's 13B active leaves out the input embedding (a lookup), as the model_zoo cards do.
    let active = p.active - t.vocab * t.hidden;
    assert!((active as f64 / 1e9 - 13.0).abs() < 0.5, "active {active}");
    // The compress list must cover every layer, and name its entries.
    let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
    v["compress_ratios"][5] = serde_json::json!("x");
    let e = load_model(&v.to_string()).unwrap_err();
    assert!(e.contains("compress_ratios[5]"), "{e}");
    v["compress_ratios"] = serde_json::json!([0, 4]);
    let e = load_model(&v.to_string()).unwrap_err();
    assert!(e.contains("compress_ratios") && e.contains("43"), "{e}");
}

/// Gemma 4's global layers have their own widths (26B-A4B: 2 KV heads of 512, keys = values;
/// local layers 8 of 256 within 1024 tokens): each layer is counted, held and cached at its
/// own, and the global layers' attention core is priced at theirs.
#[test]
fn gemma_4_global_layers_have_their_own_widths() {
    use tunelab_sim::op::Op;
    use tunelab_sim::workload::{forward_graph, GraphOptions, ParallelPlan, Workload};
    let m = load_model(include_str!("data/models/gemma-4-26b-a4b.config.json")).unwrap().model;
    let t = m.llm.as_ref().unwrap();
    let ctx: u64 = 131_072;
    let opts = GraphOptions::default();
    let kv = tunelab_sim::memory::kv_cache_bytes(&m, &ParallelPlan::default(), &opts, 1, ctx);
    let want = 25 * 1024 * (2 * 8 * 256) + 5 * ctx * 2 * 512;
    assert_eq!(kv, want * opts.kv_dtype().bytes());
    assert_eq!(m.kv_bytes_per_token(tunelab_sim::DType::Bf16), (25 * 2 * 8 * 256 + 5 * 2 * 512) * 2);
    // Parameters by layer kind: a global layer's q (16 x 512), k (2 x 512, = v) and o.
    let (h, q) = (2816u128, 16u128 * 512);
    let full = tunelab_sim::model::Mixer::FULL;
    let global = t.mixer_params(&full);
    assert_eq!(global, h * q + h * 2 * 512 + q * h + 2 * 512, "q/k/o and the q/k norms at the global widths");
    let w = Workload::Decode { batch: 1, context_len: ctx, output_len: 1 };
    let g = forward_graph(&m, &w, &ParallelPlan::default(), &opts).unwrap();
    let core = g.ops.iter().find(|o| o.name.ends_with("attn.core")).expect("the global layers' core");
    assert_eq!(core.repeat, 5);
    assert!(matches!(core.op, Op::Attention { kv_heads: 2, head_dim: 512, kv_len, .. } if kv_len == ctx + m.media_tokens()), "{:?}", core.op);
    let local = g.ops.iter().find(|o| o.name.ends_with("attn.core_window")).expect("the local layers' core");
    assert!(matches!(local.op, Op::Attention { kv_heads: 8, head_dim: 256, kv_len: 1024, .. }), "{:?}", local.op);
}

/// MiniMax-M3's sparse layers (MiniMax Sparse Attention) keep every token in the KV cache but
/// attend to one local 128-token block and the index's top 16 blocks of 128 keys; its first 3
/// layers are dense full attention with their own 12288-wide MLP.
#[test]
fn minimax_m3_sparse_layers_attend_to_selected_blocks() {
    use tunelab_sim::op::Op;
    use tunelab_sim::workload::{forward_graph, GraphOptions, ParallelPlan, Workload};
    let json = include_str!("data/models/minimax-m3.config.json");
    let m = load_model(json).unwrap().model;
    let t = m.llm.as_ref().unwrap();
    let ctx: u64 = 1 << 20;
    assert_eq!(t.cached_layer_tokens(ctx), 60 * ctx, "every layer caches every token");
    let r = runs(json);
    assert_eq!(r.iter().filter(|x| x.1 == Ffn::Dense { intermediate: 12288 }).map(|x| x.2).sum::<u64>(), 3);
    let w = Workload::Decode { batch: 1, context_len: ctx, output_len: 1 };
    let g = forward_graph(&m, &w, &ParallelPlan::default(), &GraphOptions::default()).unwrap();
    let sparse = g.ops.iter().find(|o| o.name.ends_with("attn.core_sparse")).expect("sparse cores");
    assert_eq!(sparse.repeat, 57);
    assert!(matches!(sparse.op, Op::Attention { kv_len: 2176, .. }), "{:?}", sparse.op);
    let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
    v["sparse_attention_config"]["sparse_attention_freq"][7] = serde_json::json!(2);
    let e = load_model(&v.to_string()).unwrap_err();
    assert!(e.contains("sparse_attention_freq[7]"), "{e}");
}

/// MiMo-V2-Flash's per-layer KV heads: its 39 sliding layers have 8 KV heads, its 9 full
/// layers 4 (heads of the 192 / 128 mean width, 160); each is cached and counted at its own.
#[test]
fn mimo_v2_flash_keeps_kv_heads_per_layer() {
    let m = load_model(include_str!("data/models/mimo-v2-flash.config.json")).unwrap().model;
    assert_eq!(m.kv_bytes_per_token(tunelab_sim::DType::Bf16), (39 * 2 * 8 * 160 + 9 * 2 * 4 * 160) * 2);
    let t = m.llm.as_ref().unwrap();
    let (h, q) = (4096u128, 64u128 * 160);
    assert_eq!(t.mixer_params(&Mixer::FULL), h * q + h * 2 * 4 * 160 + q * h, "a full layer at 4 KV heads");
    assert!(!m.identity().approximations.iter().any(|a| a.contains("every layer costed with")));
}

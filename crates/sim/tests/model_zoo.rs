//! Public configs of models released or widely served in 2025-2026, loaded with their own
//! mechanisms: each must load without the generic-decoder fallback, carry the mechanisms its
//! family has (windows, sinks, Mamba-2, hybrids, towers) and count its parameters within 2% of
//! its model card. The configs are verbatim public copies (tests/data/models/SOURCES.md), the
//! bundled ones are the app's own (assets/models). Run with --nocapture for the table.

use tunelab_sim::model::{load_bundled, load_model, Ffn, LoadedModel, Mixer};

struct Case {
    name: &'static str,
    json: &'static str,
    /// Model-card total parameters (and active, for MoE), in billions.
    total_b: f64,
    active_b: Option<f64>,
    /// Where the card figure comes from.
    card: &'static str,
    /// The card's active count includes the input embedding (Qwen's and Meta's cards do:
    /// Qwen3-30B-A3B's "3.3B activated" beside "29.9B non-embedding" of 30.5B); otherwise it
    /// leaves it out (gpt-oss, DeepSeek, Kimi).
    active_with_embedding: bool,
}

fn data(name: &'static str, json: &'static str, total_b: f64, active_b: Option<f64>, card: &'static str) -> Case {
    Case { name, json, total_b, active_b, card, active_with_embedding: false }
}

/// A case whose card counts the input embedding among the active parameters.
fn data_e(name: &'static str, json: &'static str, total_b: f64, active_b: f64, card: &'static str) -> Case {
    Case { name, json, total_b, active_b: Some(active_b), card, active_with_embedding: true }
}

fn cases() -> Vec<Case> {
    vec![
        data("gpt-oss-20b", include_str!("data/models/gpt-oss-20b.config.json"), 20.91, Some(3.61), "openai/gpt-oss-20b card: 20.91B total, 3.61B active"),
        data("gemma-3-1b-it", include_str!("data/models/gemma-3-1b-it.config.json"), 1.0, None, "google/gemma-3-1b-it card: 1B"),
        data("ministral-3-3b-2512", include_str!("data/models/ministral-3-3b-2512.config.json"), 3.8, None, "mistralai/Ministral-3-3B card: 3.4B language model + 0.4B vision encoder"),
        data("qwen3-0.6b", include_str!("data/models/qwen3-0.6b.config.json"), 0.6, None, "Qwen/Qwen3-0.6B card: 0.6B"),
        data("qwen3-1.7b", include_str!("data/models/qwen3-1.7b.config.json"), 1.7, None, "Qwen/Qwen3-1.7B card: 1.7B"),
        data("glm-4.5-air", include_str!("data/models/glm-4.5-air.config.json"), 106.0, None, "zai-org/GLM-4.5-Air card: 106B total (its 12B active is not checked: the card does not say whether embeddings and LM head count)"),
        data("glm-4.5", include_str!("data/models/glm-4.5.config.json"), 355.0, None, "zai-org/GLM-4.5 card: 355B total (its 32B active: convention not stated, not checked)"),
        data("nemotron-h-8b-base-8k", include_str!("data/models/nemotron-h-8b-base-8k.config.json"), 8.1, None, "nvidia/Nemotron-H-8B-Base-8K: 8.1B (Nemotron-H report, table 1)"),
        // From NVIDIA aiconfigurator's verbatim Hugging Face copies (SOURCES.md).
        data("qwen3-8b", include_str!("data/models/qwen3-8b.config.json"), 8.2, None, "Qwen/Qwen3-8B card: 8.2B"),
        data_e("qwen3-30b-a3b", include_str!("data/models/qwen3-30b-a3b.config.json"), 30.5, 3.3, "Qwen/Qwen3-30B-A3B card: 30.5B total, 3.3B activated"),
        data("gpt-oss-120b", include_str!("data/models/gpt-oss-120b.config.json"), 116.83, Some(5.13), "openai/gpt-oss-120b card: 116.83B total, 5.13B active"),
        data("llama-4-scout-17b-16e", include_str!("data/models/llama-4-scout-17b-16e.config.json"), 109.0, None, "meta-llama/Llama-4-Scout-17B-16E card: 109B total (its 17B activated is rounded, not checked)"),
        data("llama-4-maverick-17b-128e", include_str!("data/models/llama-4-maverick-17b-128e.config.json"), 400.0, None, "meta-llama/Llama-4-Maverick-17B-128E card: 400B total (its 17B activated is rounded, not checked)"),
        data("nemotron-super-49b-v1", include_str!("data/models/nemotron-super-49b-v1.config.json"), 49.0, None, "nvidia/Llama-3_3-Nemotron-Super-49B-v1 card: 49B"),
        data("nemotron-h-56b-base-8k", include_str!("data/models/nemotron-h-56b-base-8k.config.json"), 56.0, None, "nvidia/Nemotron-H-56B-Base-8K: 56B (Nemotron-H report, table 1)"),
        data("nemotron-3-nano-30b-a3b", include_str!("data/models/nemotron-3-nano-30b-a3b.config.json"), 31.6, None, "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B card: 31.6B total"),
        data("nemotron-3-super-120b-a12b-fp8", include_str!("data/models/nemotron-3-super-120b-a12b-fp8.config.json"), 120.0, None, "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B: 120B total (its name; the A12B active is rounded, not checked)"),
        data("mimo-v2-flash", include_str!("data/models/mimo-v2-flash.config.json"), 309.0, None, "XiaomiMiMo/MiMo-V2-Flash card: 309B total (its 15B active is rounded and its embedding convention not stated: not checked)"),
        data("kimi-k2.5", include_str!("data/models/kimi-k2.5.config.json"), 1040.0, Some(32.0), "moonshotai/Kimi-K2.5 card: 1T (Kimi-K2's 1.04T language model + a 400M MoonViT), 32B activated"),
        data("minimax-m2.5", include_str!("data/models/minimax-m2.5.config.json"), 230.0, None, "MiniMax-M2 family (transformers docs model_doc/minimax_m2.md): 230B total (its 10B active is rounded, not checked)"),
        data("glm-5", include_str!("data/models/glm-5.config.json"), 744.0, None, "zai-org/GLM-5 card: 744B total (its 40B active is rounded, not checked)"),
        data("qwen3.5-27b", include_str!("data/models/qwen3.5-27b.config.json"), 27.0, None, "Qwen/Qwen3.5-27B: 27B (its name)"),
        data("qwen3.5-35b-a3b", include_str!("data/models/qwen3.5-35b-a3b.config.json"), 35.0, None, "Qwen/Qwen3.5-35B-A3B: 35B total (its name; A3B rounded, not checked)"),
        data("qwen3.5-122b-a10b", include_str!("data/models/qwen3.5-122b-a10b.config.json"), 122.0, None, "Qwen/Qwen3.5-122B-A10B: 122B total (its name; A10B rounded, not checked)"),
        data("qwen3.5-397b-a17b", include_str!("data/models/qwen3.5-397b-a17b.config.json"), 397.0, None, "Qwen/Qwen3.5-397B-A17B: 397B total (its name; A17B rounded, not checked)"),
        data("deepseek-r1", include_str!("data/models/deepseek-r1.config.json"), 671.0, Some(37.0), "deepseek-ai/DeepSeek-R1 card: 671B total, 37B activated"),
        // From Tenstorrent tt-metal's verbatim Hugging Face copies (SOURCES.md).
        data("exaone-4.0-32b", include_str!("data/models/exaone-4.0-32b.config.json"), 32.0, None, "LGAI-EXAONE/EXAONE-4.0-32B card: 30.95B without embeddings (32.0B with its untied 102400 x 5120 embedding and head)"),
        data("devstral-2-123b", include_str!("data/models/devstral-2-123b.config.json"), 123.0, None, "mistralai/Devstral-2-123B-Instruct card: 123B"),
        data("devstral-small-2-24b", include_str!("data/models/devstral-small-2-24b.config.json"), 24.0, None, "mistralai/Devstral-Small-2-24B-Instruct card: 24B (with its Pixtral vision encoder)"),
        data("lfm2.5-vl-1.6b", include_str!("data/models/lfm2.5-vl-1.6b.config.json"), 1.6, None, "LiquidAI/LFM2.5-VL-1.6B card: 1.6B (LFM2 1.2B language model + SigLIP2 400M encoder)"),
        data("voxtral-mini-3b-2507", include_str!("data/models/voxtral-mini-3b-2507.config.json"), 4.7, None, "mistralai/Voxtral-Mini-3B-2507: 4.7B (Voxtral report arXiv:2507.13264, table 1: audio encoder 640M, adapter 25M, decoder 3.6B, embeddings 400M)"),
        data("gemma-3-4b-it", include_str!("data/models/gemma-3-4b-it.config.json"), 4.301, None, "google/gemma-3-4b-it: Gemma 3 report (arXiv:2503.19786) table 1, vision 417M + embedding 675M + non-embedding 3209M"),
        data("gemma-3-27b-it", include_str!("data/models/gemma-3-27b-it.config.json"), 27.433, None, "google/gemma-3-27b-it: Gemma 3 report table 1, vision 417M + embedding 1416M + non-embedding 25600M"),
        data("deepseek-v3.1-nvfp4", include_str!("data/models/deepseek-v3.1-nvfp4.config.json"), 671.0, Some(37.0), "deepseek-ai/DeepSeek-V3.1 card: 671B total, 37B activated (NVIDIA's NVFP4 checkpoint of it)"),
    ]
}

/// Bundled 2025 configs: (id, card total B, card active B).
const BUNDLED: [(&str, f64, Option<f64>, &str); 9] = [
    ("qwen3-32b", 32.8, None, "Qwen/Qwen3-32B card: 32.8B"),
    ("qwen3-235b-a22b", 235.0, Some(22.0), "Qwen/Qwen3-235B-A22B card: 235B, 22B active"),
    ("qwen3-coder-480b-a35b", 480.0, Some(35.0), "Qwen3-Coder-480B-A35B card: 480B, 35B active"),
    ("qwen3-next-80b-a3b", 80.0, None, "Qwen3-Next-80B-A3B card: 80B (its '3B activated' is a rounded name, not checked)"),
    ("kimi-k2", 1040.0, Some(32.0), "Kimi-K2 card: 1T (1.04T) total, 32B active"),
    ("deepseek-v3.2", 671.0, Some(37.0), "DeepSeek-V3.2 card: 671B main model (685B with the MTP module), 37B active"),
    ("qwen3.5-9b", 9.0, None, "Qwen3.5-9B card: 9B (language model)"),
    ("qwen3-vl-4b", 4.4, None, "Qwen3-VL-4B card: 4.4B (with the vision tower)"),
    ("qwen3.5-2b", 2.0, None, "Qwen3.5-2B: 2B (its rounded name; with its vision tower)"),
];

fn err(ours: u64, card_b: f64) -> f64 {
    (ours as f64 / 1e9 - card_b) / card_b
}

fn report(name: &str, m: &LoadedModel, total_b: f64, active_b: Option<f64>, card: &str, active_with_embedding: bool) -> (bool, bool) {
    let id = m.model.identity();
    // A card that states the language model alone (Qwen3.5-9B's 9B) is compared without the
    // vision tower the model also counts.
    let tower = if card.contains("(language model)") { id.params.total - m.model.llm.as_ref().map_or(0, |t| t.params().total) } else { 0 };
    let e = err(id.params.total - tower, total_b);
    // Cards count the parameters a token activates without the input embedding (a lookup, not
    // a matmul): gpt-oss's 3.61B, DeepSeek's 37B, Kimi's 32B.
    let embed = if active_with_embedding { 0 } else { m.model.llm.as_ref().map_or(0, |t| t.vocab * t.hidden) };
    let ea = active_b.map(|a| err(id.params.active - embed, a));
    let generic = id.approximations.iter().any(|a| a.starts_with("whole model"));
    println!(
        "{name:24} total {:8.2}B ({:+.2}%)  active {} {:8.2}B {}  {} | {}",
        id.params.total as f64 / 1e9,
        e * 100.0,
        if active_with_embedding { "w/ embedding " } else { "w/o embedding" },
        (id.params.active - embed) as f64 / 1e9,
        ea.map_or(String::new(), |x| format!("({:+.2}%)", x * 100.0)),
        if generic { "GENERIC" } else { "own reader" },
        card
    );
    println!("    {}", id.stack);
    for a in &id.approximations {
        println!("    ~ {a}");
    }
    (e.abs() <= 0.02 && ea.is_none_or(|x| x.abs() <= 0.02), !generic)
}

#[test]
fn public_configs_load_with_their_mechanisms_and_count_within_two_percent() {
    let (mut n, mut ok) = (0, 0);
    let mut failures = Vec::new();
    for c in cases() {
        n += 1;
        let m = match load_model(c.json) {
            Ok(m) => m,
            Err(e) => {
                println!("{:24} REFUSED: {e} | {}", c.name, c.card);
                failures.push(c.name);
                continue;
            }
        };
        let (within, own) = report(c.name, &m, c.total_b, c.active_b, c.card, c.active_with_embedding);
        if within && own {
            ok += 1;
        } else {
            failures.push(c.name);
        }
    }
    for (id, total, active, card) in BUNDLED {
        let m = load_bundled(id).unwrap();
        n += 1;
        let (within, own) = report(id, &m, total, active, card, id.starts_with("qwen"));
        if within && own {
            ok += 1;
        } else {
            failures.push(id);
        }
    }
    println!("{ok} of {n} public 2025-2026 configs load with their own mechanisms within 2% of the card");
    // Known and explained: Qwen3.5-2B's "2B" is its rounded name: its config gives a 1.88B
    // language model and a 0.33B vision tower (24 blocks 1024 wide, costed like the other
    // Qwen-VL towers: 2.21B in all, +10.5%; the language model alone is -5.9%); no card figure
    // more precise than the name was found, and the bundled config is not verbatim
    // (assets/models/SOURCES.md: its MTP layer is left out, so the checkpoint is larger still).
    let known: &[&str] = &["qwen3.5-2b"];
    let share = ok as f64 / n as f64;
    println!("share: {:.1}%", share * 100.0);
    let unexplained: Vec<&&str> = failures.iter().filter(|f| !known.contains(f)).collect();
    assert!(unexplained.is_empty(), "outside 2% or read generically: {unexplained:?}");
}

fn runs_of(json: &str) -> Vec<(Mixer, Ffn, u64)> {
    let m = load_model(json).unwrap().model;
    let t = m.llm.unwrap();
    t.runs().into_iter().map(|r| (r.mixer, r.ffn, r.count)).collect()
}

#[test]
fn gpt_oss_alternates_128_token_windows_with_sinks_over_moe() {
    let runs = runs_of(include_str!("data/models/gpt-oss-20b.config.json"));
    let windowed: u64 = runs.iter().filter(|r| r.0 == Mixer::Attention { window: 128, chunk: 0, sinks: true, compress: 0, topk: 0 }).map(|r| r.2).sum();
    let full: u64 = runs.iter().filter(|r| r.0 == Mixer::Attention { window: 0, chunk: 0, sinks: true, compress: 0, topk: 0 }).map(|r| r.2).sum();
    assert_eq!((windowed, full), (12, 12));
    assert!(runs.iter().all(|r| r.1 == Ffn::Moe));
    // The first layer is a sliding one, the second full (layer order is kept).
    assert_eq!(runs[0].0, Mixer::Attention { window: 128, chunk: 0, sinks: true, compress: 0, topk: 0 });
}

#[test]
fn gemma3_is_five_local_to_one_global() {
    let runs = runs_of(include_str!("data/models/gemma-3-1b-it.config.json"));
    let local: u64 = runs.iter().filter(|r| matches!(r.0, Mixer::Attention { window: 512, .. })).map(|r| r.2).sum();
    assert_eq!(local, 26 - 26 / 6);
}

#[test]
fn nemotron_h_is_mamba2_attention_and_relu2_mlps() {
    let runs = runs_of(include_str!("data/models/nemotron-h-8b-base-8k.config.json"));
    let count = |m: Mixer, f: Option<Ffn>| -> u64 { runs.iter().filter(|r| r.0 == m && f.is_none_or(|f| r.1 == f)).map(|r| r.2).sum() };
    assert_eq!(count(Mixer::Mamba2, Some(Ffn::None)), 24);
    assert_eq!(count(Mixer::FULL, Some(Ffn::None)), 4);
    assert_eq!(count(Mixer::None, Some(Ffn::Dense { intermediate: 21504 })), 24);
}

/// One formula: the weights memory holds on one chip are the parameter count, for every bundled
/// language model without a vision tower and every public config above (the Gated DeltaNet
/// hybrids' memory used to drop their output gate and count their linear layers as attention).
#[test]
fn memory_holds_exactly_the_counted_parameters() {
    use tunelab_sim::memory::chip_params;
    use tunelab_sim::workload::ParallelPlan;
    let mut models: Vec<(String, tunelab_sim::model::ModelDesc)> = cases().into_iter().map(|c| (c.name.to_string(), load_model(c.json).unwrap().model)).collect();
    for (id, _) in tunelab_sim::model::bundled_models() {
        models.push((id.to_string(), load_bundled(id).unwrap().model));
    }
    let mut checked = 0;
    for (name, m) in models {
        if m.llm.is_none() || m.vision.is_some() {
            continue;
        }
        let held = chip_params(&m, &ParallelPlan::default()).total();
        assert_eq!(held, m.params().total, "{name}: memory holds {held} parameters, the count says {}", m.params().total);
        checked += 1;
    }
    assert!(checked >= 25, "checked {checked}");
}

/// Nemotron Super 49B's `block_configs`: 49 attention layers (31 pruned to no-op), each layer's
/// MLP as wide as its `ffn_mult` says, and only the attention layers in the KV cache.
#[test]
fn nemotron_super_block_configs_give_each_layer_its_own_block() {
    use tunelab_sim::memory::kv_cache_bytes;
    use tunelab_sim::workload::{GraphOptions, ParallelPlan};
    let json = include_str!("data/models/nemotron-super-49b-v1.config.json");
    let runs = runs_of(json);
    let attn: u64 = runs.iter().filter(|r| r.0 == Mixer::FULL).map(|r| r.2).sum();
    let none: u64 = runs.iter().filter(|r| r.0 == Mixer::None).map(|r| r.2).sum();
    assert_eq!((attn, none), (49, 31));
    let width = |w: u64| -> u64 { runs.iter().filter(|r| r.1 == Ffn::Dense { intermediate: w }).map(|r| r.2).sum() };
    // ffn_mult 5.25 -> 28672 (Llama-3.3-70B's width), 1.3125 -> 7168, 0.5 -> 2816.
    assert_eq!((width(28672), width(7168), width(2816)), (49, 10, 6));
    let m = load_model(json).unwrap().model;
    let t = m.llm.as_ref().unwrap();
    let opts = GraphOptions::default();
    let per_token_layer = 2 * t.kv_heads * t.head_dim * opts.kv_dtype().bytes();
    assert_eq!(t.kv_heads, 8);
    assert_eq!(kv_cache_bytes(&m, &ParallelPlan::default(), &opts, 1, 4096), per_token_layer * 49 * 4096);
}

/// MiMo-V2-Flash: 128-token sliding layers with sinks between full layers (its
/// `hybrid_layer_pattern`), a dense first layer then MoE (`moe_layer_freq` as a list).
#[test]
fn mimo_v2_flash_reads_its_hybrid_pattern_and_moe_list() {
    let runs = runs_of(include_str!("data/models/mimo-v2-flash.config.json"));
    let slide: u64 = runs.iter().filter(|r| r.0 == Mixer::Attention { window: 128, chunk: 0, sinks: true, compress: 0, topk: 0 }).map(|r| r.2).sum();
    let full: u64 = runs.iter().filter(|r| r.0 == Mixer::FULL).map(|r| r.2).sum();
    assert_eq!((slide, full), (39, 9));
    assert_eq!(runs[0].1, Ffn::Dense { intermediate: 16384 });
    assert_eq!(runs.iter().filter(|r| r.1 == Ffn::Moe).map(|r| r.2).sum::<u64>(), 47);
}

/// Voxtral's audio tower (a Whisper-large-style encoder from `audio_config`) is counted and
/// held: 4.68B with it, the language model alone 4.0B; memory holds the same count.
#[test]
fn voxtral_counts_and_holds_its_audio_tower() {
    use tunelab_sim::memory::chip_params;
    use tunelab_sim::workload::ParallelPlan;
    let m = load_model(include_str!("data/models/voxtral-mini-3b-2507.config.json")).unwrap().model;
    let t = m.llm.as_ref().unwrap();
    let audio = t.audio.as_ref().expect("audio tower read from audio_config").params();
    // The report's encoder (640M) and adapter (25M).
    assert!((655e6..670e6).contains(&(audio as f64)), "audio tower {audio}");
    assert_eq!(m.params().total, t.params().total + audio);
    assert_eq!(chip_params(&m, &ParallelPlan::default()).total(), m.params().total);
    assert!(m.identity().stack.contains("audio tower 32 x 1280"));
    // A wrong-typed audio_config is refused by name.
    let mut v: serde_json::Value = serde_json::from_str(include_str!("data/models/voxtral-mini-3b-2507.config.json")).unwrap();
    v["audio_config"] = serde_json::json!(32);
    let e = load_model(&v.to_string()).unwrap_err();
    assert!(e.contains("audio_config") && e.contains("wrong type"), "{e}");
}

/// Gemma 3 4B's published config leaves its heads, KV heads, head width and vocabulary to
/// Gemma3TextConfig's defaults (8, 4, 256, 262208) and its pattern to every 6th layer global:
/// read with those defaults and a warning saying so.
#[test]
fn gemma3_4b_takes_gemma3_text_config_defaults_and_says_so() {
    let l = load_model(include_str!("data/models/gemma-3-4b-it.config.json")).unwrap();
    let t = l.model.llm.as_ref().unwrap();
    assert_eq!((t.heads, t.kv_heads, t.head_dim, t.vocab), (8, 4, 256, 262_208));
    let runs: Vec<_> = t.runs();
    let local: u64 = runs.iter().filter(|r| matches!(r.mixer, Mixer::Attention { window: 1024, .. })).map(|r| r.count).sum();
    assert_eq!(local, 34 - 34 / 6);
    assert!(l.warnings.iter().any(|w| w.contains("Gemma3TextConfig's defaults") && w.contains("num_attention_heads 8")), "{:?}", l.warnings);
}

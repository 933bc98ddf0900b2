//! Mechanisms the 2026 configs carry, counted and priced where they run (issue 41): DeepSeek-V4's
//! KV compressors, lightning indexer and hyper-connections. Each test computes the figure from
//! the config's own widths and the reference module shapes (`model::compressor` names them), so
//! a mechanism dropped from the count, the memory or the graph fails here.

use tunelab_sim::model::load_model;
use tunelab_sim::op::Op;
use tunelab_sim::workload::{forward_graph, GraphOptions, ParallelPlan, Workload};

const FLASH: &str = include_str!("data/models/deepseek-v4-flash.config.json");
const PRO: &str = include_str!("data/models/deepseek-v4-pro.config.json");

/// What the reference modules add per model: the compressors (wkv + wgate, ape, norm), the
/// ratio-4 layers' indexer (wq_b, weights_proj, its own compressor) and two hyper-connection
/// mixers per layer, from the config's widths.
fn v4_extra(json: &str) -> u64 {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let n = |k: &str| v[k].as_u64().unwrap();
    let (h, d, layers) = (n("hidden_size"), n("head_dim"), n("num_hidden_layers"));
    let (ih, id, ql, hc) = (n("index_n_heads"), n("index_head_dim"), n("q_lora_rank"), n("hc_mult"));
    let comp = |dim: u64, ratio: u64| {
        let coff = if ratio == 4 { 2 } else { 1 };
        2 * h * coff * dim + ratio * coff * dim + dim
    };
    let ratios: Vec<u64> = v["compress_ratios"].as_array().unwrap().iter().take(layers as usize).map(|r| r.as_u64().unwrap()).collect();
    let mut extra = 0;
    for r in ratios {
        if r > 0 {
            extra += comp(d, r);
        }
        if r == 4 {
            extra += ql * ih * id + h * ih + comp(id, 4);
        }
    }
    let mix = (2 + hc) * hc;
    extra + layers * 2 * (mix * hc * h + mix + 3)
}

#[test]
fn deepseek_v4_compressors_indexer_and_hyper_connections_are_counted_and_held() {
    for json in [FLASH, PRO] {
        let m = load_model(json).unwrap().model;
        let t = m.llm.as_ref().unwrap();
        // The same description without them counts exactly the reference modules less.
        let mut bare = m.clone();
        bare.llm.as_mut().unwrap().compressor = None;
        let extra = m.params().total - bare.params().total;
        assert_eq!(extra, v4_extra(json), "{}", m.name);
        // Memory holds what is counted (one formula).
        let held = tunelab_sim::memory::chip_params(&m, &ParallelPlan::default()).total();
        assert_eq!(held, m.params().total);
        // With tensor parallel the indexer's projections split, the compressors do not.
        let tp8 = ParallelPlan { tp: 8, ..ParallelPlan::default() };
        assert!(tunelab_sim::memory::chip_params(&m, &tp8).total() < held);
        // The notes say they are counted and priced, and no longer that they are dropped.
        let id = m.identity();
        assert!(!id.approximations.iter().any(|a| a.contains("neither counted nor priced") && (a.contains("compressor") || a.contains("hyper-connections"))), "{:#?}", id.approximations);
        assert!(id.approximations.iter().any(|a| a.contains("lightning indexer") && a.contains("counted, held and priced")));
        assert!(t.compressor.is_some());
    }
    // V4-Flash: about 0.52B more than the attention, experts and embeddings alone.
    let e = v4_extra(FLASH) as f64 / 1e9;
    assert!((0.45..0.6).contains(&e), "{e}");
}

#[test]
fn deepseek_v4_indexer_and_compressors_run_in_the_decode_graph() {
    let m = load_model(FLASH).unwrap().model;
    let ctx: u64 = 65_536;
    let w = Workload::Decode { batch: 4, context_len: ctx, output_len: 1 };
    let g = forward_graph(&m, &w, &ParallelPlan::default(), &GraphOptions::default()).unwrap();
    let find = |suffix: &str| g.ops.iter().filter(|o| o.name.ends_with(suffix)).map(|o| (o.repeat, o.op.clone())).collect::<Vec<_>>();
    // The indexer scores every compressed key (one per 4 tokens) with its 64 heads of 128, on
    // the 21 ratio-4 layers.
    let idx = find(".indexer.core");
    assert_eq!(idx.iter().map(|x| x.0).sum::<u64>(), 21);
    assert!(matches!(idx[0].1, Op::Attention { heads: 64, kv_heads: 1, kv_len, head_dim: 64, batch: 4, .. } if kv_len == ctx / 4), "{:?}", idx[0].1);
    // Its query projection from the 1024-wide low-rank query, and its compressor.
    assert!(matches!(find(".indexer.wq_b")[0].1, Op::Matmul { m: 4, n: 8192, k: 1024, .. }));
    assert_eq!(find(".indexer.compressor.wkv_wgate").iter().map(|x| x.0).sum::<u64>(), 21);
    // The attention's compressors: 2 x 1024 wide on ratio-4 layers, 2 x 512 on ratio-128 ones.
    let c4 = find(".compressor4.wkv_wgate");
    let c128 = find(".compressor128.wkv_wgate");
    assert_eq!((c4.iter().map(|x| x.0).sum::<u64>(), c128.iter().map(|x| x.0).sum::<u64>()), (21, 20));
    assert!(matches!(c4[0].1, Op::Matmul { n: 2048, k: 4096, .. }));
    assert!(matches!(c128[0].1, Op::Matmul { n: 1024, k: 4096, .. }));
    // Hyper-connections around both blocks of all 43 layers: a 24-row FP32 mix over 4 x 4096.
    let hc = find(".hc.mix");
    assert_eq!(hc.iter().map(|x| x.0).sum::<u64>(), 86);
    assert!(matches!(hc[0].1, Op::Matmul { m: 4, n: 24, k: 16384, .. }));
    // A model without them has none of these operators.
    let q = load_model(include_str!("data/models/qwen3-8b.config.json")).unwrap().model;
    let gq = forward_graph(&q, &w, &ParallelPlan::default(), &GraphOptions::default()).unwrap();
    assert!(!gq.ops.iter().any(|o| o.name.contains(".hc.") || o.name.contains("compressor") || o.name.contains("indexer")));
}

#[test]
fn deepseek_v4_indexer_work_grows_with_the_context() {
    // The indexer's scores are a quarter of the context per query: from 8K to 64K context a
    // decode step's indexer FLOPs grow 8x, while its compressor matmuls stay the same.
    let m = load_model(FLASH).unwrap().model;
    let at = |ctx: u64| {
        let w = Workload::Decode { batch: 1, context_len: ctx, output_len: 1 };
        let g = forward_graph(&m, &w, &ParallelPlan::default(), &GraphOptions::default()).unwrap();
        let f = |s: &str| g.ops.iter().filter(|o| o.name.ends_with(s)).map(|o| tunelab_sim::workload::op_flops(&o.op) * o.repeat as f64).sum::<f64>();
        (f(".indexer.core"), f(".compressor4.wkv_wgate"))
    };
    let (i8k, c8k) = at(8192);
    let (i64k, c64k) = at(65_536);
    assert!((i64k / i8k - 8.0).abs() < 0.05, "{}", i64k / i8k);
    assert_eq!(c8k, c64k);
    assert!(i8k > 0.0);
}

#[test]
fn a_bad_indexer_or_stream_count_is_refused_by_name() {
    let mut v: serde_json::Value = serde_json::from_str(FLASH).unwrap();
    v["hc_mult"] = serde_json::json!(0);
    let e = load_model(&v.to_string()).unwrap_err();
    assert!(e.contains("hc_mult"), "{e}");
    let mut v: serde_json::Value = serde_json::from_str(FLASH).unwrap();
    v.as_object_mut().unwrap().remove("index_n_heads");
    let e = load_model(&v.to_string()).unwrap_err();
    assert!(e.contains("index_n_heads"), "{e}");
}

/// Gemma 4's global layers run their projections at their own widths (26B-A4B: 16 query heads
/// of 512, 2 KV heads of 512 with keys = values) and the local layers at theirs (16 of 256, 8
/// KV heads of 256, keys and values): 5 global layers' q/k/o matmuls split off the group's.
#[test]
fn gemma_4_global_layers_project_at_their_own_widths() {
    let m = load_model(include_str!("data/models/gemma-4-26b-a4b.config.json")).unwrap().model;
    let w = Workload::Decode { batch: 2, context_len: 4096, output_len: 1 };
    let g = forward_graph(&m, &w, &ParallelPlan::default(), &GraphOptions::default()).unwrap();
    let projections = |global: bool| -> (u64, u64) {
        // (repeats, output width of the q/k/v projection)
        let o = g.ops.iter().find(|o| o.name.ends_with(if global { ".attn.qkv_proj_global" } else { ".attn.qkv_proj" })).unwrap_or_else(|| panic!("qkv_proj (global {global}): {:?}", g.ops.iter().map(|o| &o.name).collect::<Vec<_>>()));
        match o.op {
            Op::Matmul { n, k: 2816, .. } => (o.repeat, n),
            ref op => panic!("{op:?}"),
        }
    };
    // Local: q 16 x 256 + k, v 8 x 256 each; global: q 16 x 512 + one shared k = v row 2 x 512.
    assert_eq!(projections(false), (25, 16 * 256 + 2 * 8 * 256));
    assert_eq!(projections(true), (5, 16 * 512 + 2 * 512));
    let o = g.ops.iter().find(|o| o.name.ends_with(".attn.o_proj_global")).expect("the global o_proj");
    assert!(matches!(o.op, Op::Matmul { n: 2816, k: 8192, .. }), "{:?}", o.op);
    assert_eq!(o.repeat, 5);
    // The priced weights of the attention projections equal the counted ones (one formula).
    let t = m.llm.as_ref().unwrap();
    let weight = |op: &Op| match *op {
        Op::Matmul { n, k, .. } => n * k,
        _ => 0,
    };
    let weights: u64 = g.ops.iter().filter(|o| o.name.contains(".attn.") && (o.name.contains("qkv_proj") || o.name.contains("o_proj"))).map(|o| weight(&o.op) * o.repeat).sum();
    let counted = 25 * t.mixer_params(&t.runs().iter().find(|r| r.mixer != tunelab_sim::model::Mixer::FULL).unwrap().mixer) + 5 * t.mixer_params(&tunelab_sim::model::Mixer::FULL);
    // Counted includes the q/k norms and the sinks-free heads' norms: within a few thousand.
    assert!((counted as i128 - weights as i128).abs() < 100_000, "counted {counted}, priced weights {weights}");
    assert!(!m.identity().approximations.iter().any(|a| a.contains("priced at the local layers' widths")));
}

/// MiniMax-M3's block index on its 57 sparse layers: q_proj (6144 -> 4 x 128), k_proj (6144 ->
/// 128) and two norms counted and held; one 128-wide index key cached per token; every cached
/// key scored per decoding query by the 4 index heads.
#[test]
fn minimax_m3_block_index_is_counted_cached_and_priced() {
    let m = load_model(include_str!("data/models/minimax-m3.config.json")).unwrap().model;
    let mut bare = m.clone();
    bare.llm.as_mut().unwrap().compressor = None;
    let per_layer = 6144 * 4 * 128 + 6144 * 128 + 2 * 128;
    assert_eq!(m.params().total - bare.params().total, 57 * per_layer);
    assert_eq!(tunelab_sim::memory::chip_params(&m, &ParallelPlan::default()).total(), m.params().total);
    let ctx: u64 = 32_768;
    let opts = GraphOptions::default();
    let kv = tunelab_sim::memory::kv_cache_bytes(&m, &ParallelPlan::default(), &opts, 1, ctx);
    let bare_kv = tunelab_sim::memory::kv_cache_bytes(&bare, &ParallelPlan::default(), &opts, 1, ctx);
    assert_eq!(kv - bare_kv, 57 * ctx * 128 * opts.kv_dtype().bytes());
    let w = Workload::Decode { batch: 1, context_len: ctx, output_len: 1 };
    let g = forward_graph(&m, &w, &ParallelPlan::default(), &opts).unwrap();
    let core = g.ops.iter().find(|o| o.name.ends_with(".index.core")).expect("the index scores");
    assert_eq!(core.repeat, 57);
    assert!(matches!(core.op, Op::Attention { heads: 4, kv_heads: 1, kv_len, head_dim: 64, .. } if kv_len == ctx), "{:?}", core.op);
    assert!(m.identity().approximations.iter().any(|a| a.contains("block index") && a.contains("counted, held and priced")));
}

/// A Qwen omni config keeps its towers in `thinker_config`: they are read, counted and held
/// (not dropped), and Qwen2.5-Omni's audio tower averages 2 frames into each token (its
/// `avg_pooler`), so a 30 s window adds 750 tokens, not 1500; its sinusoidal positions are not
/// parameters. A fixture with the widths of transformers' Qwen2_5OmniAudioEncoderConfig
/// defaults (no verbatim Qwen2.5-Omni config was reachable).
#[test]
fn qwen_omni_towers_are_read_from_the_thinker_and_audio_is_pooled_two_to_one() {
    let text = r#"{"model_type": "qwen2_5_omni_text", "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064}"#;
    let audio = r#"{"model_type": "qwen2_5_omni_audio_encoder", "d_model": 1280, "encoder_layers": 32, "encoder_attention_heads": 20, "encoder_ffn_dim": 5120, "num_mel_bins": 128, "max_source_positions": 1500, "output_dim": 3584}"#;
    let vision = r#"{"depth": 32, "hidden_size": 1280, "intermediate_size": 3420, "num_heads": 16, "patch_size": 14, "spatial_merge_size": 2, "out_hidden_size": 3584, "hidden_act": "silu", "fullatt_block_indexes": [7, 15, 23, 31], "window_size": 112}"#;
    let json = format!(r#"{{"model_type": "qwen2_5_omni", "thinker_config": {{"model_type": "qwen2_5_omni_thinker", "text_config": {text}, "audio_config": {audio}, "vision_config": {vision}}}}}"#);
    let m = load_model(&json).unwrap().model;
    let a = m.llm.as_ref().unwrap().audio.as_deref().expect("the audio tower is read");
    assert_eq!(a.tokens_each(), 750);
    assert_eq!(a.pool, 2);
    // No learned positions: the tower's count has no 1500 x 1280 table.
    let mut learned = a.clone();
    learned.sinusoidal_positions = false;
    assert_eq!(learned.params() - a.params(), 1500 * 1280);
    assert!(m.vision.is_some(), "the vision tower is read");
    assert_eq!(m.media_tokens(), 0, "text prompts by default");
    // With a minute of audio per request: 2 windows of 750 tokens, and the pooling priced.
    let mut with_audio = m.clone();
    with_audio.llm.as_mut().unwrap().audio.as_mut().unwrap().windows = 2;
    assert_eq!(with_audio.media_tokens(), 1500);
    let g = forward_graph(&with_audio, &Workload::Prefill { batch: 1, input_len: 64 }, &ParallelPlan::default(), &GraphOptions::default()).unwrap();
    let pool = g.ops.iter().find(|o| o.name == "audio.pool").expect("the 2:1 average pooling");
    assert!(matches!(pool.op, Op::Vector { rows: 1500, row_len: 2560, .. }), "{:?}", pool.op);
    let proj = g.ops.iter().find(|o| o.name == "audio.projector").unwrap();
    assert!(matches!(proj.op, Op::Matmul { m: 1500, n: 3584, k: 1280, .. }), "{:?}", proj.op);
    // The same towers in a Qwen3-Omni wrapper's thinker are read, not silently dropped.
    let json3 = format!(r#"{{"model_type": "qwen3_omni_moe", "thinker_config": {{"text_config": {text}, "audio_config": {audio}, "vision_config": {vision}}}}}"#);
    let m3 = load_model(&json3).unwrap().model;
    assert!(m3.vision.is_some() && m3.llm.as_ref().unwrap().audio.is_some());
    assert!(m3.params().total > m.llm.as_ref().unwrap().params().total + 600_000_000);
}

/// The scheduler's prefill chunks of a compressed-attention model attend to what each layer
/// keeps (`compressed_attention::chunk_cores`): a 4096-token chunk at the end of a 64K prompt
/// sees 128 raw + 512 selected rows on the ratio-4 layers, 128 + (j - 128) / 128 rows on the
/// ratio-128 ones, the 128-token window on the two sliding layers, and its indexer scores j / 4
/// compressed keys; not the whole 64K context.
#[test]
fn deepseek_v4_prefill_chunks_attend_to_what_each_layer_keeps() {
    let m = load_model(FLASH).unwrap().model;
    let (q, kv) = (4096u64, 65_536u64);
    let ops = tunelab_sim::workload::compressed_attention::chunk_cores(&m, &ParallelPlan::default(), &GraphOptions::default(), 1, q, kv).expect("a compressed model");
    let keys = |suffix: &str| -> (u64, u64) {
        let o = ops.iter().find(|o| o.name.ends_with(suffix)).unwrap_or_else(|| panic!("{suffix}: {:?}", ops.iter().map(|o| &o.name).collect::<Vec<_>>()));
        match o.op {
            Op::Attention { kv_len, q_len, .. } => {
                assert_eq!(q_len, q);
                (o.repeat, kv_len)
            }
            _ => unreachable!(),
        }
    };
    assert_eq!(keys("_compressed4"), (21, 640));
    let (n128, k128) = keys("_compressed128");
    assert_eq!(n128, 20);
    assert!((128 + (kv - q - 128) / 128..=128 + (kv - 128) / 128 + 1).contains(&k128), "{k128}");
    assert_eq!(keys("_window"), (2, 128));
    let (ni, ki) = keys(".indexer.core");
    assert_eq!(ni, 21);
    assert!(((kv - q) / 4..=kv / 4 + 1).contains(&ki), "{ki}");
    // A model without compressed layers keeps the scheduler's own reshaping.
    let q8 = load_model(include_str!("data/models/qwen3-8b.config.json")).unwrap().model;
    assert!(tunelab_sim::workload::compressed_attention::chunk_cores(&q8, &ParallelPlan::default(), &GraphOptions::default(), 1, q, kv).is_none());
}

//! Stable-toolchain smoke version of the cargo-fuzz targets in fuzz/: the same target functions
//! (fuzz/src/lib.rs, included below), each fed its seed inputs plus deterministic mutations of
//! them (byte flips, deletions, duplications, splices and hostile tokens such as -1, 1e308,
//! NaN, deep brackets and non-ASCII names). Same inputs every run: a failure reproduces.
//!
//! `TUNELAB_FUZZ_ITERS=N` changes the number of mutated inputs per target (default below); the
//! long, coverage-guided version is `cargo +nightly fuzz run TARGET` (README, "Fuzzing").
//! The slowest input of each target is printed, never asserted.

#[path = "../../../fuzz/src/lib.rs"]
mod targets;

use std::time::Instant;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// Mutated inputs per target by default (the scenario-running targets are costlier per input).
fn iters(default: usize) -> usize {
    std::env::var("TUNELAB_FUZZ_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// splitmix64: a tiny deterministic generator (no dependency, same on every machine).
struct Mix(u64);
impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
}

const TOKENS: &[&str] = &[
    "-1", "0", "1e308", "-1e308", "5e-324", "NaN", "Infinity", "null", "true", "\"\"", "[]", "{}", "[[[[[[[[", "]]]]", "\"é\"",
    "\"昇腾910B2\"", "99999999999999999999", "4294967297", "-0", "0.5", "\"x\"", ",", ":", "\"", "\\u0000", "1024", "65536",
];

/// One mutation of `seed` (several edits, the count itself random).
fn mutate(seed: &[u8], others: &[Vec<u8>], rng: &mut Mix) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = v.len();
        match rng.below(7) {
            0 if len > 0 => {
                let i = rng.below(len);
                v[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below(16.min(len - i));
                v.drain(i..i + n);
            }
            2 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below(64.min(len - i));
                let chunk = v[i..i + n].to_vec();
                let at = rng.below(len);
                v.splice(at..at, chunk);
            }
            3 => {
                // Replace a number or insert a hostile token.
                let tok = TOKENS[rng.below(TOKENS.len())].as_bytes();
                let digits: Vec<usize> = v.iter().enumerate().filter(|(_, b)| b.is_ascii_digit()).map(|(i, _)| i).collect();
                if !digits.is_empty() && rng.below(2) == 0 {
                    let mut i = digits[rng.below(digits.len())];
                    let mut j = i;
                    while i > 0 && (v[i - 1].is_ascii_digit() || v[i - 1] == b'.') {
                        i -= 1;
                    }
                    while j < v.len() && (v[j].is_ascii_digit() || v[j] == b'.' || v[j] == b'e') {
                        j += 1;
                    }
                    v.splice(i..j, tok.iter().copied());
                } else {
                    let at = rng.below(len + 1);
                    v.splice(at..at, tok.iter().copied());
                }
            }
            4 if !others.is_empty() => {
                // Splice in part of another seed.
                let o = &others[rng.below(others.len())];
                if !o.is_empty() {
                    let i = rng.below(o.len());
                    let n = 1 + rng.below(256.min(o.len() - i));
                    let at = rng.below(len + 1);
                    v.splice(at..at, o[i..i + n].iter().copied());
                }
            }
            5 if len > 0 => v.truncate(rng.below(len)),
            _ => {
                let at = rng.below(len + 1);
                v.insert(at, rng.next() as u8);
            }
        }
    }
    v
}

/// Runs `target` on every seed and on `n` mutations; prints the count and the slowest input.
fn drive(name: &str, seeds: Vec<Vec<u8>>, n: usize, target: fn(&[u8])) {
    assert!(!seeds.is_empty(), "{name}: no seeds");
    let mut rng = Mix(0x7475_6e65_6c61_6200 ^ name.len() as u64);
    let mut slowest = (0.0f64, Vec::new());
    let t0 = Instant::now();
    let mut inputs = 0;
    let mut run = |input: Vec<u8>| {
        let t = Instant::now();
        target(&input);
        let dt = t.elapsed().as_secs_f64();
        if dt > slowest.0 {
            slowest = (dt, input);
        }
    };
    for s in &seeds {
        run(s.clone());
        inputs += 1;
    }
    for _ in 0..n {
        let s = &seeds[rng.below(seeds.len())];
        run(mutate(s, &seeds, &mut rng));
        inputs += 1;
    }
    println!(
        "fuzz smoke {name}: {inputs} inputs in {:.2} s, slowest {:.3} s ({} bytes)",
        t0.elapsed().as_secs_f64(),
        slowest.0,
        slowest.1.len()
    );
    if slowest.0 > 0.5 && slowest.1.len() < 2000 {
        println!("  slowest input: {}", String::from_utf8_lossy(&slowest.1));
    }
}

fn files(dir: &str, ext: &str) -> Vec<Vec<u8>> {
    let mut v: Vec<_> = std::fs::read_dir(format!("{ROOT}/{dir}"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    v.sort();
    v.into_iter().map(|p| std::fs::read(p).unwrap()).collect()
}

fn small_scenarios() -> Vec<Vec<u8>> {
    // Small budgets keep each run short; the fuzz target clamps budgets anyway.
    files("assets/scenarios", ".json")
        .into_iter()
        .chain([
            br#"{"stage":"deployment","budget":3,"deployment":{"batches":[1,8],"precisions":["fp16","w8a8"]}}"#.to_vec(),
            br#"{"stage":"training","training":{"chips":8},"budget":3}"#.to_vec(),
            br#"{"stage":"operator","model":"sd15-unet","device":"310P3","budget":3}"#.to_vec(),
            br#"{"stage":"runtime","model":"qwen2.5-7b","budget":3}"#.to_vec(),
            br#"{"stage":"diffusion","model":"flux.1-kontext-dev","diffusion":{"reference_images":1,"lora_rank":16,"steps":2},"budget":3}"#.to_vec(),
        ])
        .collect()
}

#[test]
fn fuzz_smoke_scenario() {
    drive("scenario", small_scenarios(), iters(400), targets::scenario);
}

#[test]
fn fuzz_smoke_url() {
    let seeds: Vec<Vec<u8>> = small_scenarios()
        .iter()
        .filter_map(|s| std::str::from_utf8(s).ok().and_then(|t| Scenario::from_json(t).ok()))
        .map(|s| tunelab_scenario::url::encode(&s).into_bytes())
        .chain([b"v1.".to_vec(), b"#v1.eJyrVkrLzClJLVKyUlAqzi9KSS1S0lFQKkotLs0pAQA".to_vec()])
        .collect();
    drive("url", seeds, iters(3000), targets::url);
}

#[test]
fn fuzz_smoke_device() {
    // Seeds include profiles naming a kernel library by name, inline, and as a calibration table
    // (issue 21: the kernel fields left the chip profiles for assets/kernels).
    let mut seeds = files("assets/devices", ".json");
    let base = String::from_utf8(seeds[0].clone()).unwrap();
    let with = |extra: &str| base.replacen('{', &format!("{{{extra},"), 1).into_bytes();
    seeds.push(with(r#""kernel_library":"hand-written""#));
    seeds.push(with(r#""kernel_library":{"name":"aclnn","fields":{"vector_efficiency":{"value":0.5,"source":"fit","min":0.3,"max":1.0}}}"#));
    seeds.push(with(r#""kernel_libraries":{"aclnn":{"cube_kstep_sync_cycles":{"value":80,"source":"fit"}}}"#));
    seeds.push(with(r#""kernel_library":7"#));
    drive("device", seeds, iters(3000), targets::device);
}

#[test]
fn fuzz_smoke_model() {
    let mut seeds = files("assets/models", ".json");
    // The public 2025-2026 configs the family readers are checked on (issue 41): wrappers,
    // block_configs, hybrid patterns, audio and vision towers.
    seeds.extend(files("crates/sim/tests/data/models", ".json"));
    seeds.push(br#"[{"name":"mm","op":{"op":"matmul","batch":1,"m":64,"n":64,"k":64,"dtype":"fp16","weight_dtype":null,"epilogue":"none"},"repeat":2}]"#.to_vec());
    // Qwen3-VL (text_config + a GELU ViT of 16-pixel patches) and the Qwen2.5-Omni thinker.
    seeds.push(br#"{"model_type":"qwen3_vl","text_config":{"model_type":"qwen3_vl_text","hidden_size":64,"intermediate_size":128,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"vocab_size":512},"vision_config":{"depth":2,"hidden_size":32,"intermediate_size":64,"num_heads":4,"patch_size":16,"spatial_merge_size":2,"out_hidden_size":64,"hidden_act":"gelu_pytorch_tanh"}}"#.to_vec());
    // DeepSeek-V3.2-style sparse attention on a small MLA model (index_* fields).
    seeds.push(br#"{"model_type":"deepseek_v32","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":4,"vocab_size":512,"intermediate_size":128,"kv_lora_rank":32,"q_lora_rank":48,"qk_nope_head_dim":16,"qk_rope_head_dim":8,"v_head_dim":16,"index_topk":16,"index_n_heads":2,"index_head_dim":16,"max_position_embeddings":256}"#.to_vec());
    seeds.push(br#"{"model_type":"qwen2_5_omni","thinker_config":{"text_config":{"hidden_size":64,"intermediate_size":128,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"vocab_size":512}}}"#.to_vec());
    // MoE operators (issue 42): a one-operator exchange graph (its form is the choice), a
    // grouped matmul, and the all-to-all whose algorithm is the choice.
    seeds.push(br#"[{"name":"dispatch","op":{"op":"moe_comm","phase":"dispatch","form":"deepep_normal","tokens":4096,"hidden":7168,"top_k":8,"ranks":16,"dtype":"int8","link":"super_pod"}}]"#.to_vec());
    seeds.push(br#"[{"name":"combine","op":{"op":"moe_comm","phase":"combine","form":"mc2","tokens":128,"hidden":7168,"top_k":8,"ranks":8,"dtype":"bf16"}},{"name":"gmm","op":{"op":"grouped_matmul","groups":32,"m":2560,"n":2048,"k":4096,"dtype":"fp16"}}]"#.to_vec());
    seeds.push(br#"[{"name":"a2a","op":{"op":"comm","kind":"all_to_all","bytes":1048576,"ranks":8}}]"#.to_vec());
    drive("model", seeds, iters(400), targets::model);
}

#[test]
fn fuzz_smoke_diffusion_pipeline() {
    let mut seeds: Vec<Vec<u8>> = tunelab_sim::workload::diffusers::bundled_pipeline_ids().iter().filter_map(|id| tunelab_sim::workload::diffusers::bundled_pipeline_json(id)).map(|j| j.into_bytes()).collect();
    // A pipeline with inline configs, and one the builders must refuse by field.
    seeds.push(br#"{"denoiser": {"_class_name": "UNet2DConditionModel", "block_out_channels": [64, 128], "down_block_types": ["CrossAttnDownBlock2D", "DownBlock2D"], "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D"], "attention_head_dim": 2, "cross_attention_dim": 64, "layers_per_block": 1}, "vae": {"_class_name": "AutoencoderKL", "block_out_channels": [32, 64], "layers_per_block": 1, "latent_channels": 4}, "text_encoders": [{"config": {"architectures": ["CLIPTextModel"], "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 2, "num_hidden_layers": 2}, "max_tokens": 8}], "defaults": {"height": 64, "width": 64, "steps": 2}}"#.to_vec());
    seeds.push(br#"{"denoiser": {"_class_name": "WanTransformer3DModel", "num_attention_heads": 2, "attention_head_dim": 8, "num_layers": 1, "text_dim": 16, "ffn_dim": 32, "patch_size": [1, 2, 2]}, "vae": {"_class_name": "AutoencoderKLWan", "base_dim": 8, "dim_mult": [1, 2], "z_dim": 4, "temperal_downsample": [true]}, "text_encoders": [{"config": {"model_type": "t5", "d_model": 16, "d_ff": 32, "d_kv": 8, "num_heads": 2, "num_layers": 1}, "max_tokens": 4}], "defaults": {"height": 32, "width": 32, "frames": 5, "steps": 2}}"#.to_vec());
    // The families of 2025-2026, tiny: two experts with a boundary, a reference image, an
    // LLM text encoder under text_config, and the MoE, linear-attention and video DiTs.
    let llm = r#"{"config": {"architectures": ["Mistral3ForConditionalGeneration"], "text_config": {"hidden_size": 32, "intermediate_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 1}}, "max_tokens": 8}"#;
    let kl = r#"{"_class_name": "AutoencoderKL", "block_out_channels": [32, 64], "layers_per_block": 1, "latent_channels": 16}"#;
    let wan = r#"{"_class_name": "WanTransformer3DModel", "num_attention_heads": 2, "attention_head_dim": 8, "num_layers": 1, "text_dim": 32, "ffn_dim": 32, "patch_size": [1, 2, 2]}"#;
    seeds.push(format!(r#"{{"denoiser": {wan}, "denoiser_2": {wan}, "boundary_ratio": 0.875, "vae": {{"_class_name": "AutoencoderKLWan", "base_dim": 8, "dim_mult": [1, 2], "z_dim": 16, "temperal_downsample": [true]}}, "text_encoders": [{llm}], "defaults": {{"height": 32, "width": 32, "frames": 5, "steps": 4, "flow_shift": 3.0}}}}"#).into_bytes());
    for den in [
        r#"{"_class_name": "QwenImageTransformer2DModel", "num_attention_heads": 2, "attention_head_dim": 16, "num_layers": 1, "joint_attention_dim": 32, "in_channels": 64}"#,
        r#"{"_class_name": "Flux2Transformer2DModel", "num_attention_heads": 2, "attention_head_dim": 16, "num_layers": 1, "num_single_layers": 1, "joint_attention_dim": 32, "in_channels": 64, "mlp_ratio": 3.0}"#,
        r#"{"_class_name": "HiDreamImageTransformer2DModel", "num_attention_heads": 2, "attention_head_dim": 16, "num_layers": 1, "num_single_layers": 1, "caption_channels": [32, 32], "num_routed_experts": 4, "num_activated_experts": 2, "in_channels": 16}"#,
        r#"{"_class_name": "SanaTransformer2DModel", "num_attention_heads": 2, "attention_head_dim": 16, "num_layers": 1, "num_cross_attention_heads": 2, "cross_attention_head_dim": 16, "cross_attention_dim": 32, "caption_channels": 32, "in_channels": 16, "patch_size": 2}"#,
        r#"{"_class_name": "HunyuanVideoTransformer3DModel", "num_attention_heads": 2, "attention_head_dim": 16, "num_layers": 1, "num_single_layers": 1, "num_refiner_layers": 1, "text_embed_dim": 32, "in_channels": 16}"#,
    ] {
        let refs = u64::from(den.contains("Qwen") || den.contains("Flux2"));
        seeds.push(format!(r#"{{"denoiser": {den}, "vae": {kl}, "text_encoders": [{llm}], "defaults": {{"height": 64, "width": 64, "steps": 2, "reference_images": {refs}}}}}"#).into_bytes());
    }
    drive("diffusion_pipeline", seeds, iters(300), targets::diffusion_pipeline);
}

#[test]
fn fuzz_smoke_kernel_tuner() {
    // Small hand-made caches (the bundled multi-MB caches seed the long run: fuzz/README.md).
    let mut seeds = Vec::new();
    seeds.push(br#"{"version":"1.0","device_name":"d","kernel_name":"k","tune_params_keys":["a","b"],"tune_params":{"a":[1,2],"b":[4,8]},"objective":"time","cache":{"1,4":{"a":1,"b":4,"time":2.5},"1,8":{"a":1,"b":8,"time":1.5},"2,4":{"a":2,"b":4,"time":"InvalidConfig"},"2,8":{"a":2,"b":8,"time":3.0}}}"#.to_vec());
    seeds.push(br#"{"device_name":"d","kernel_name":"k","tune_params_keys":["x"],"tune_params":{"x":[1,2,3]},"objective":"GFLOP/s","objective_higher_is_better":true,"cache":{"1":{"x":1,"GFLOP/s":10.0},"2":{"x":2,"GFLOP/s":20.5},"3":{"x":3,"GFLOP/s":"RuntimeFailedConfig"}}}"#.to_vec());
    drive("kernel_tuner", seeds, iters(3000), targets::kernel_tuner);
}

#[test]
fn fuzz_smoke_knowledge() {
    // A real package and store from a short run.
    let s = Scenario { budget: 4, ..Scenario::default() };
    let mut run = tunelab_scenario::Run::new(&s).unwrap();
    run.run_to_end();
    let case = tunelab_scenario::cases::case_from_run(&run, "seed é 昇腾").unwrap();
    let package = tunelab_scenario::knowledge::export_package(&case);
    let mut kb = tunelab_scenario::knowledge::KnowledgeBase::new();
    kb.add(case);
    drive("knowledge", vec![package.into_bytes(), kb.to_json().into_bytes()], iters(400), targets::knowledge);
}

#[test]
fn fuzz_smoke_serving_features() {
    // Speculative decoding with an acceptance rate outside 0..1, a model type that cannot be
    // built, an encoder asked to speculate, an unknown dataset, C8 on a hybrid model, ...
    let seeds: Vec<Vec<u8>> = [
        r#"{"mode":"scheduler","arrival":"burst","speculative":{"method":"eagle3","num_speculative_tokens":[3,2],"accept_length":2.0},"model":"qwen3-32b","max_concurrency":2}"#,
        r#"{"speculative":{"method":"eagle3","num_speculative_tokens":[3],"acceptance_rate":1.5}}"#,
        r#"{"speculative":{"method":"medusa"},"model":"llama-2-7b"}"#,
        r#"{"mode":"static","model":"bge-large-zh-v1.5","attention":"unfused"}"#,
        r#"{"mode":"static","model":"bge-large-zh-v1.5","speculative":{"method":"eagle"}}"#,
        r#"{"kv_cache_dtype":"int8","prefix_cache_hit_rate":0.5,"dataset":"sharegpt","arrival":"poisson","request_rate":4}"#,
        r#"{"dataset":"no-such-set","model":"phi-4-mini-instruct"}"#,
        r#"{"model":"no-such-model","kv_cache_dtype":"int4"}"#,
        r#"{"speculative":{"method":"mtp","num_speculative_tokens":[1],"mtp_layers":1},"model":"deepseek-v2-lite","max_concurrency":0}"#,
        r#"{"engine":"vllm-ascend","graph_mode":"full_decode_only","model":"qwen3-32b"}"#,
        r#"{"engine":"mindie","graph_mode":"piecewise","model":"qwen3-32b"}"#,
        r#"{"engine":"vllm-ascend","graph_mode":"FULL","model":"qwen3-32b"}"#,
        r#"{"mode":"static","model":"qwen2.5-vl-7b","image_size":896}"#,
        // Issue 42: a MoE checkpoint's experts at their own precision; a dense model and a bad name.
        r#"{"engine":"vllm-ascend","model":"deepseek-v2-lite","expert_precision":"w4a8"}"#,
        r#"{"model":"qwen3-32b","expert_precision":"w4a8"}"#,
        r#"{"model":"deepseek-v2-lite","expert_precision":"w3a9"}"#,
        // Issue 42: SGLang's DeepEP modes; on another engine, a dense model, a bad mode.
        r#"{"engine":"sglang","model":"deepseek-v2-lite","deepep_mode":"auto"}"#,
        r#"{"engine":"vllm-ascend","model":"deepseek-v2-lite","deepep_mode":"normal"}"#,
        r#"{"engine":"sglang","model":"qwen3-32b","deepep_mode":"low_latency"}"#,
        r#"{"engine":"sglang","model":"deepseek-v2-lite","deepep_mode":"fast"}"#,
        r#"{"mode":"static","model":"llava-1.5-7b","image_size":448}"#,
        r#"{"mode":"static","model":"qwen3.5-2b","images_per_request":3,"image_size":672}"#,
        r#"{"mode":"static","model":"qwen3-32b","images_per_request":1,"audio_seconds":45.5}"#,
        r#"{"mode":"static","model":"qwen2.5-vl-7b","images_per_request":0,"audio_seconds":-3}"#,
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    drive("serving_features", seeds, iters(120), targets::serving_features);
}

#[test]
fn fuzz_smoke_constraints() {
    let seeds: Vec<Vec<u8>> = ["a * b <= 64", "c == 'x' or a > 2", "b % 4 == 0 and (a + 1) // 2 < b", "d * 2 >= a - 3", "not (a == b)", "a ** 2 < 50"]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
    drive("constraints", seeds, iters(3000), targets::constraints);
}

#[test]
fn fuzz_smoke_cluster() {
    // Multi-node layouts: fitting, not dividing the chips, disaggregated, bad strings, EPLB.
    let seeds: Vec<Vec<u8>> = [
        r#"{"nodes":2,"data_parallel":[2,4],"redundant_experts":[0]}"#,
        r#"{"cluster":{"nodes":2,"data_parallel":[3]},"tensor_parallel":[4]}"#,
        r#"{"cluster":{"nodes":2,"disaggregation":["colocated","1P1D","2P1D"],"prefill_tp":[2,4]},"tensor_parallel":[2,4]}"#,
        r#"{"cluster":{"nodes":1,"disaggregation":["xPyD","0P1D","1P"]}}"#,
        r#"{"cluster":{"nodes":2,"superpod":true,"redundant_experts":[0,8],"moe_imbalance":1.5},"device":"910C","tensor_parallel":[8,16]}"#,
        r#"{"cluster":{"nodes":400,"moe_imbalance":0.5}}"#,
        // Issue 42: heterogeneous PD (prefill on A3 nodes, decode on the A2) and a capped stream.
        r#"{"cluster":{"nodes":1,"disaggregation":["1P1D"],"prefill_device":"910C","prefill_nodes":1,"prefill_tp":[8,16]},"tensor_parallel":[4,8],"max_concurrency":4}"#,
        r#"{"cluster":{"nodes":1,"disaggregation":["colocated"],"prefill_device":"nope","prefill_nodes":0}}"#,
        r#"{"cluster":{"nodes":2,"disaggregation":["1P1D"],"prefill_tp":[4]},"tensor_parallel":[4],"max_concurrency":2}"#,
        r#"{"cluster":{"nodes":2,"disaggregation":["1P1D"],"prefill_tp":[4],"prefill_pp":[2,1],"prefill_chunking":["dynamic","static"]},"tensor_parallel":[4]}"#,
        r#"{"cluster":{"nodes":2,"disaggregation":["colocated"],"prefill_pp":[0,65],"prefill_chunking":["sometimes"]}}"#,
        // Context parallel: PCP on a PD layout's prefill side, DCP on decode; bad sizes, PCP colocated.
        r#"{"cluster":{"nodes":2,"disaggregation":["1P1D"],"prefill_tp":[4],"prefill_cp":[4,2,1],"decode_cp":[1,2]},"tensor_parallel":[4,8]}"#,
        r#"{"cluster":{"nodes":1,"disaggregation":["colocated"],"prefill_cp":[2],"decode_cp":[0,3,65]},"tensor_parallel":[8]}"#,
        // Co-located pipeline parallelism: over two nodes, with a PD layout (refused), bad sizes.
        r#"{"cluster":{"nodes":2,"pipeline_parallel":[2,1]},"tensor_parallel":[4,8]}"#,
        r#"{"cluster":{"nodes":2,"disaggregation":["1P1D"],"pipeline_parallel":[2,0,65]},"tensor_parallel":[8]}"#,
        // Fine-grained TP under attention DP: tp 1 with DP 16 (fits), tp 2 (refused per point),
        // a size not dividing dp, out-of-range sizes, on a PD layout's decode side.
        r#"{"cluster":{"nodes":2,"data_parallel":[16,8],"lmhead_tp":[1,8,16],"embedding_tp":[4,3]},"tensor_parallel":[1,2]}"#,
        r#"{"cluster":{"nodes":1,"lmhead_tp":[0,65],"embedding_tp":[-1]},"tensor_parallel":[1]}"#,
        // DCP on the prefill instances: fitting, not dividing prefill_tp, co-located (refused), bad sizes.
        r#"{"cluster":{"nodes":2,"disaggregation":["1P1D"],"prefill_tp":[8],"prefill_dcp":[8,4,1],"decode_cp":[1,8]},"tensor_parallel":[8]}"#,
        r#"{"cluster":{"nodes":2,"disaggregation":["1P1D"],"prefill_tp":[4],"prefill_dcp":[3]},"tensor_parallel":[4]}"#,
        r#"{"cluster":{"nodes":1,"disaggregation":["colocated"],"prefill_dcp":[2,0,65]},"tensor_parallel":[8]}"#,
        r#"{"cluster":{"nodes":2,"disaggregation":["1P1D"],"prefill_tp":[8],"lmhead_tp":[8]},"tensor_parallel":[1],"expert_parallel":["on"]}"#,
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    drive("cluster", seeds, iters(200), targets::cluster);
}

use tunelab_scenario::Scenario;

// Issue 44: the input readers.

#[test]
fn fuzz_smoke_unknown_keys() {
    let mut seeds = small_scenarios();
    seeds.push(br#"{"stage":"deployment","budget":2,"deployment":{"serving":{"graph_mod":"full","engine":"mindie"},"cluster":{"disagregation":["1P1D"]}},"training":{"framwork":"deepspeed"}}"#.to_vec());
    seeds.push(b"\xef\xbb\xbf{\"seed\":3,\"objectives\":[{\"metric\":\"tpot_ms\",\"priorty\":2}]}".to_vec());
    drive("unknown_keys", seeds, iters(600), targets::unknown_keys);
}

#[test]
fn fuzz_smoke_measurements() {
    let mut seeds = files("assets/measurements", ".json");
    seeds.retain(|s| s.len() < 200_000);
    seeds.push(br#"{"schema":"tunelab-measurements/1","name":"t","rows":[{"id":"a","stage":"operator","chip":"910B2","scenaro":{},"values":[{"metric":"t","value":1.5,"unit":"us","predcit":"model_time_ms","perchip":true}],"variants":[{"suffix":"x","values":[{"metric":"u","value":2.0,"unit":"us","predict":"model_time_ms"}]}]}]}"#.to_vec());
    seeds.push(br#"{"schema":"tunelab-measurements/1","rows":[{"id":"t","stage":"training","framework":"deepspeed","scenario":{"training":{"framework":"megatron"}},"values":[]}]}"#.to_vec());
    drive("measurements", seeds, iters(300), targets::measurements);
}

#[test]
fn fuzz_smoke_msprof() {
    let head = "Op Name,OP Type,Task Duration(us),Input Shapes,Input Data Types,Output Shapes\n";
    let body = "a,MatMulV2,10.5,\"64,64;64,64\",FLOAT16;FLOAT16,\"64,64\"\nb,Add,1e-310,\"8\",BF16,\nc,BatchMatMul,3,\"4294967296,4294967296,2,2;4294967296,4294967296,2,2\",FLOAT16;FLOAT16,\nd,Add,2,\"64,64\",FLOAT16,\ne,Add,2,\"64,64\",BF16,\n";
    let text = format!("{head}{body}");
    let utf16: Vec<u8> = [0xFF, 0xFE].into_iter().chain(text.encode_utf16().flat_map(|w| w.to_le_bytes())).collect();
    let seeds = vec![text.clone().into_bytes(), format!("\u{feff}{text}").into_bytes(), utf16, format!("{head}x,Add,1,\"8,FLOAT16,\n").into_bytes(), b"OP Type,Task Duration\n\xCB\xE3,1\n".to_vec()];
    drive("msprof", seeds, iters(2000), targets::msprof);
}

// Issue 42, item 3: the training layouts (pipeline schedule, packed documents, per-stage
// recomputation), good and bad, through the scenario target (read, validate, set up, a few trials).
#[test]
fn fuzz_smoke_training_layouts() {
    let seeds: Vec<Vec<u8>> = [
        r#"{"stage":"training","model":"llama-2-7b","budget":3,"training":{"chips":8,"pipeline_schedule":"dualpipev","micro_batches":[1]},"workload":{"seq_len":4096,"global_batch":64},"space":{"pp":{"fixed":4},"tp":{"fixed":2},"vpp":{"fixed":1}}}"#,
        r#"{"stage":"training","model":"llama-2-7b","budget":3,"training":{"chips":8,"document_len":2048},"workload":{"seq_len":32768,"global_batch":8}}"#,
        r#"{"stage":"training","model":"llama-2-7b","budget":3,"training":{"chips":8,"recompute_layers":[6,4,2,0],"recompute":["full"]},"space":{"pp":{"fixed":4}}}"#,
        r#"{"stage":"training","budget":2,"training":{"pipeline_schedule":"zbv","document_len":0,"recompute_layers":[1,2,3,4,5,6,7,8,9]}}"#,
        r#"{"stage":"training","budget":2,"training":{"document_len":99999999,"recompute_layers":[100001]}}"#,
        // MindSpeed --attention-mask-type under ring and Ulysses context parallelism, and a bad name.
        r#"{"stage":"training","model":"llama-2-7b","budget":3,"training":{"chips":8,"attention_mask_type":"general","context_parallel":[4],"context_parallel_algo":"ring"},"workload":{"seq_len":32768,"global_batch":16}}"#,
        r#"{"stage":"training","model":"llama-2-7b","budget":3,"training":{"chips":8,"attention_mask_type":"general","context_parallel":[4],"context_parallel_algo":"ulysses"},"workload":{"seq_len":32768,"global_batch":16}}"#,
        r#"{"stage":"training","budget":2,"training":{"attention_mask_type":"sliding"}}"#,
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    drive("training_layouts", seeds, iters(150), targets::scenario);
}

/// The benchmark-file readers' seeds: the sample files of assets/benchruns/ (each tool's
/// format) plus hostile variants (Python's Infinity/NaN, a wrong unit, a ragged CSV line).
fn bench_seeds(paths: &[&str], extra: &[&str]) -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(format!("{ROOT}/assets/benchruns/{p}")).unwrap()).collect();
    seeds.extend(extra.iter().map(|s| s.as_bytes().to_vec()));
    seeds
}

#[test]
fn fuzz_smoke_benchrun_vllm() {
    let seeds = bench_seeds(&["vllm-bench-serve-sample.json"], &[r#"{"completed": 2, "request_rate": "inf", "total_input_tokens": 10, "total_output_tokens": 4, "output_throughput": NaN, "input_lens": [5, 5], "ttfts": [0.1, -1]}"#]);
    drive("benchrun_vllm", seeds, iters(1500), targets::benchrun_vllm);
}

#[test]
fn fuzz_smoke_benchrun_sglang() {
    let seeds = bench_seeds(&["sglang-bench-serving-sample.jsonl"], &["{\"completed\": 1, \"request_rate\": Infinity, \"total_input_tokens\": 1, \"total_output_tokens\": 1, \"mean_ttft_ms\": 1}\n{\"completed\": 1e308}\n"]);
    drive("benchrun_sglang", seeds, iters(1500), targets::benchrun_sglang);
}

#[test]
fn fuzz_smoke_benchrun_aisbench() {
    let seeds = bench_seeds(&["aisbench/gsm8k.json", "aisbench/gsm8k.csv", "aisbench/gsm8k_details.jsonl"], &["{\"time_points\": {\"__db_ref__\": 1}, \"db_name\": \"a.db\", \"success\": true, \"input_tokens\": 0}\n", "Performance Parameters,Stage,Average,N\nTTFT,total,1 ms,1\nInputTokens,total,5,1\nOutputTokens,total,5,1\nTPOT,decode,\"2 ms\",1\n"]);
    drive("benchrun_aisbench", seeds, iters(1500), targets::benchrun_aisbench);
}

#[test]
fn fuzz_smoke_benchrun_mindie() {
    let seeds = bench_seeds(
        &["mindie/result_perf_20251120101500.csv", "mindie/result_common_20251120101500.csv", "mindie/results_per_request_20251120101500.json"],
        &["Returned,Throughput\n\"3( 75% )\",1 req/s\n"],
    );
    drive("benchrun_mindie", seeds, iters(1500), targets::benchrun_mindie);
}

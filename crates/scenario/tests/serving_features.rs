//! Serving features as users deploy them on Ascend (issue 22, sections 4-8): speculative
//! decoding, W4A16/W4A8/W4A4 and the INT8 KV cache, hybrid linear attention, encoders, and
//! benchmark-style workloads. Each test prices configurations through the deployment stage's own
//! objective, the path `tunelab eval`, the tuning run and the app share.

use serde_json::json;
use tunelab_scenario::stages::setup;
use tunelab_scenario::Scenario;
use tunelab_search::{Outcome, Value};

fn scenario(v: serde_json::Value) -> Scenario {
    Scenario::from_json(&v.to_string()).unwrap_or_else(|e| panic!("{e}"))
}

/// The named metrics of the configuration with `set` pinned (the rest at the baseline).
fn eval(s: &Scenario, set: &[(&str, Value)]) -> std::collections::BTreeMap<String, f64> {
    let mut st = setup(s).unwrap_or_else(|e| panic!("{e}"));
    let names = st.space.names().to_vec();
    let mut c = st.baseline.clone();
    for (n, v) in set {
        let i = names.iter().position(|x| x == n).unwrap_or_else(|| panic!("no parameter {n} in {names:?}"));
        c.0[i] = v.clone();
    }
    match st.objective.evaluate(&c) {
        Outcome::Ok(v) => st.metrics.iter().map(|m| m.name.clone()).zip(v).collect(),
        other => panic!("expected a feasible point, got {other:?}"),
    }
}

fn deployment(model: &str, serving: serde_json::Value) -> serde_json::Value {
    json!({
        "stage": "deployment", "model": model, "device": "910B2", "budget": 4,
        "workload": {"batch": 16, "input_len": 1024, "output_len": 256},
        "deployment": {"serving": serving, "tile_operators": false, "tensor_parallel": [4], "precisions": ["bf16", "w8a8", "w4a8", "w4a4", "w4a16"]}
    })
}

fn s(x: &str) -> Value {
    Value::Str(x.into())
}

#[test]
fn speculative_decoding_cuts_tpot_more_the_more_drafts_are_accepted() {
    let spec = |a: f64| deployment("qwen3-32b", json!({"arrival": "closed", "concurrency": 8, "requests": 24, "engine": "vllm-ascend",
        "speculative": {"method": "eagle3", "num_speculative_tokens": [3, 1, 5], "acceptance_rate": a}}));
    let plain = eval(&scenario(deployment("qwen3-32b", json!({"arrival": "closed", "concurrency": 8, "requests": 24, "engine": "vllm-ascend"}))), &[("batch", Value::Int(16))]);
    let low = eval(&scenario(spec(0.2)), &[("batch", Value::Int(16))]);
    let high = eval(&scenario(spec(0.8)), &[("batch", Value::Int(16))]);
    assert!(high["tpot_p50_ms"] < plain["tpot_p50_ms"] * 0.7, "80% acceptance: {} vs {} ms without", high["tpot_p50_ms"], plain["tpot_p50_ms"]);
    assert!(high["tpot_p50_ms"] < low["tpot_p50_ms"], "more accepted, lower TPOT");
    assert!(high["tokens_per_s"] > plain["tokens_per_s"]);
    // The number of draft tokens is a tuned parameter; five drafts at 20% acceptance cost more
    // verify work than they win.
    let st = setup(&scenario(spec(0.2))).unwrap();
    assert!(st.space.names().iter().any(|n| n == "num_speculative_tokens"));
    let five = eval(&scenario(spec(0.2)), &[("batch", Value::Int(16)), ("num_speculative_tokens", Value::Int(5))]);
    let one = eval(&scenario(spec(0.2)), &[("batch", Value::Int(16)), ("num_speculative_tokens", Value::Int(1))]);
    assert!(five["tpot_p50_ms"] > one["tpot_p50_ms"], "low acceptance: 5 drafts {} ms vs 1 draft {} ms", five["tpot_p50_ms"], one["tpot_p50_ms"]);
}

/// The operator breakdown of a speculative decode step is the step the headline TPOT comes
/// from: the draft's k steps (`draft.*`) and the target's verification of k + 1 positions per
/// sequence, one verify step yielding the accept length's tokens. Its operators add up to the
/// device time the stage priced, and its label says what the host adds.
#[test]
fn a_speculative_decode_breakdown_lists_the_draft_and_the_verify_step_behind_tpot() {
    use tunelab_scenario::stages::serving::Phase;
    let with = |speculative: Option<serde_json::Value>| {
        let mut serving = json!({"mode": "static", "engine": "vllm-ascend"});
        if let Some(sp) = speculative {
            serving["speculative"] = sp;
        }
        let mut v = deployment("qwen3-32b", serving);
        v["objectives"] = json!([{"metric": "tpot_ms"}]);
        v["space"] = json!({"batch": {"fixed": 16}, "tp": {"fixed": 4}, "precision": {"fixed": "bf16"}, "launch": {"fixed": "graph"}});
        let s = scenario(v);
        let st = setup(&s).unwrap();
        let c = st.baseline.clone();
        let d = tunelab_scenario::explore::point_detail(&s, &c).unwrap_or_else(|e| panic!("{e}"));
        let tpot = d.metrics.iter().find(|m| m.0 == "tpot_ms").unwrap().1;
        let step = tunelab_scenario::stages::deployment::step_operators(&s, st.space.names(), &c, Phase::Decode, None).unwrap_or_else(|e| panic!("{e}"));
        (d, tpot, step)
    };
    let (d, tpot, step) = with(Some(json!({"method": "eagle3", "num_speculative_tokens": [3], "acceptance_rate": 0.6})));
    assert!(d.simulated.starts_with("one verify step"), "{}", d.simulated);
    assert!(d.simulated.contains("eagle3 draft's 3 steps (draft.*) and the target's check of 4 positions per sequence yield"), "{}", d.simulated);
    let ms = |d: &tunelab_scenario::explore::PointDetail, f: &dyn Fn(&str) -> bool| d.ops.iter().filter(|o| f(&o.name)).map(|o| o.time_ms).sum::<f64>();
    let draft = ms(&d, &|n| n.starts_with("draft."));
    assert!(d.ops.iter().any(|o| o.name == "draft.fc"), "the draft's input projection is listed");
    assert!(draft > 0.0 && draft < 0.5 * d.total_ms, "draft {draft} of {} ms", d.total_ms);
    // The listed operators at the step's exact sizes against the stage's price of the same step
    // (its grid tables interpolate between sizes half an octave apart).
    let spec = step.spec.clone().expect("a verify step");
    let listed = step.ops.iter().map(|o| o.time_us).sum::<f64>() / 1e3;
    println!(
        "Qwen3-32B eagle3 k=3 at batch 16, tp 4: verify step {listed:.2} ms listed, {:.2} ms device time priced, {:.2} ms with host work; draft {draft:.2} ms; {} tokens per step; TPOT {tpot:.2} ms",
        step.device_ms, step.wall_ms, spec.tokens_per_step
    );
    assert!((listed / step.device_ms - 1.0).abs() < 0.03, "listed {listed} vs priced {}", step.device_ms);
    assert!((step.wall_ms / (tpot * spec.tokens_per_step) - 1.0).abs() < 1e-9, "a verify step is TPOT x tokens per step: {} vs {tpot} x {}", step.wall_ms, spec.tokens_per_step);
    assert!(d.simulated.contains("with the engine's host work the step takes"), "{}", d.simulated);
    // Without speculation: a plain decode step, no draft; the verify step's attention reads the
    // cache for four query rows, more than the plain step's one.
    let (plain, plain_tpot, plain_step) = with(None);
    assert!(plain.simulated.starts_with("one decode step") && !plain.simulated.contains("draft"), "{}", plain.simulated);
    assert!(plain_step.spec.is_none() && (plain_step.wall_ms / plain_tpot - 1.0).abs() < 1e-9);
    let target = |d: &tunelab_scenario::explore::PointDetail| ms(d, &|n| !n.starts_with("draft.") && n.ends_with("attn.core"));
    assert!(target(&d) > target(&plain), "verify attention {} vs plain {}", target(&d), target(&plain));
}

#[test]
fn piecewise_graph_capture_makes_a_large_dense_decode_host_bound() {
    // vLLM-Ascend captures decode piecewise by default: every layer's attention and the Python
    // around it run on the host between captured pieces, so Qwen3-32B at tp 4 decodes at the
    // host's pace (the suffix-decoding tutorial measures 55 ms TPOT at concurrency 1, where the
    // device alone needs ~20 ms); FULL_DECODE_ONLY captures whole steps.
    let run = |mode: &str| {
        let v = deployment("qwen3-32b", json!({"mode": "static", "engine": "vllm-ascend", "graph_mode": mode}));
        eval(&scenario(v), &[("batch", Value::Int(1)), ("precision", s("bf16")), ("launch", s("graph"))])
    };
    let (auto, piecewise, full) = (run("auto"), run("piecewise"), run("full_decode_only"));
    assert_eq!(auto["tpot_p50_ms"], piecewise["tpot_p50_ms"], "vLLM-Ascend's default is piecewise");
    assert!(piecewise["tpot_p50_ms"] > 2.0 * full["tpot_p50_ms"], "piecewise {} ms vs full {} ms", piecewise["tpot_p50_ms"], full["tpot_p50_ms"]);
    // Bad values, and piecewise capture on an engine without it, name the field.
    for (serving, field) in [(json!({"graph_mode": "FULL"}), "graph_mode"), (json!({"engine": "mindie", "graph_mode": "piecewise"}), "graph_mode")] {
        let v = deployment("qwen3-32b", serving);
        let e = Scenario::from_json(&v.to_string()).err().or_else(|| setup(&scenario(v)).err()).expect("refused");
        assert!(e.contains(field), "{e}");
    }
}

#[test]
fn aiv_expansion_all_reduces_over_the_mesh_and_travels_with_the_scenario() {
    // HCCL_OP_EXPANSION_MODE=AIV: the vector cores build each collective at once, so a TP8
    // all-reduce inside an A2 node pays the mesh's two latency steps, not fourteen. A
    // full-graph decode of Qwen3-32B at tp 8 runs 128 of them per step.
    let run = |expansion: &str| {
        let v = json!({
            "stage": "deployment", "model": "qwen3-32b", "device": "910B2", "budget": 4,
            "workload": {"batch": 1, "input_len": 1024, "output_len": 256},
            "deployment": {"serving": {"mode": "static", "engine": "vllm-ascend", "graph_mode": "full_decode_only", "hccl_expansion": expansion}, "tile_operators": false, "tensor_parallel": [8]}
        });
        let sc = scenario(v);
        let m = eval(&sc, &[("batch", Value::Int(1)), ("precision", s("bf16")), ("launch", s("graph"))]);
        (sc, m["tpot_p50_ms"])
    };
    let ((plain_sc, per_call), (aiv_sc, aiv)) = (run("auto"), run("aiv"));
    // 128 all-reduces x 12 steps x 3 us = 4.6 ms.
    println!("Qwen3-32B TP8 decode step: per-call expansion {per_call:.2} ms, AIV {aiv:.2} ms");
    assert!(per_call - aiv > 3.5 && per_call - aiv < 6.0, "per call {per_call:.2} ms vs AIV {aiv:.2} ms");
    // The setting is carried by the scenario (and so the link); the default is left out, so
    // older links keep their exact text; a bad value names the field.
    assert!(aiv_sc.to_json().contains("\"hccl_expansion\":\"aiv\"") || aiv_sc.to_json().contains("\"hccl_expansion\": \"aiv\""));
    assert!(!plain_sc.to_json().contains("hccl_expansion"));
    let bad = deployment("qwen3-32b", json!({"hccl_expansion": "AI_CPU"}));
    let e = Scenario::from_json(&bad.to_string()).err().or_else(|| setup(&scenario(bad)).err()).expect("refused");
    assert!(e.contains("deployment.serving.hccl_expansion") && e.contains("aiv"), "{e}");
}

#[test]
fn mtp_drafts_with_the_checkpoints_own_layers() {
    // The loader reads num_nextn_predict_layers; the A3 DeepSeek-V3 tune offers the number of
    // MTP speculative tokens as an axis, and more accepted drafts lower TPOT.
    let ds = tunelab_sim::load_bundled("deepseek-v3").unwrap().model;
    assert_eq!(ds.llm.as_ref().unwrap().mtp_layers, 1);
    let mut a3 = tunelab_scenario::bundled::bundled_scenario("deepseek-v3-2xA3-deployment").unwrap();
    a3.constraints = Default::default();
    // At its own load (the capacity goal needs the TTFT limit).
    a3.objectives.clear();
    let st = setup(&a3).unwrap();
    assert!(st.space.names().iter().any(|n| n == "num_speculative_tokens"), "{:?}", st.space.names());
    // A model whose config has no MTP layers cannot draft with them: the field is named.
    let v = deployment("llama-2-7b", json!({"speculative": {"method": "mtp", "num_speculative_tokens": [1]}}));
    let st = setup(&scenario(v)).and_then(|mut st| match st.objective.evaluate(&st.baseline.clone()) {
        Outcome::Ok(_) => Err("priced".to_string()),
        Outcome::Infeasible(e) | Outcome::Failed(e) => Ok(e),
    });
    let e = match st { Ok(e) | Err(e) => e };
    assert!(e.contains("speculative.method"), "{e}");
}

#[test]
fn a_vision_language_request_pays_for_its_image_in_encoder_work_and_prompt_tokens() {
    // Qwen2.5-VL-7B: a 32-block ViT of 1280 wide (675M parameters in its technical report,
    // table 1) whose 14-pixel patches merge 2 x 2 into LLM tokens.
    let l = tunelab_sim::load_bundled("qwen2.5-vl-7b").unwrap();
    let v = l.model.vision.as_ref().expect("a vision tower");
    assert_eq!((v.patches(), v.image_tokens()), (1024, 256), "448 x 448 by default");
    let vit = (l.model.params().total - l.model.llm.as_ref().unwrap().params().total) as f64 / 1e6;
    assert!((vit / 675.0 - 1.0).abs() < 0.05, "ViT + merger {vit:.0}M");
    let ttft = |px: Option<u64>| {
        let mut serving = json!({"mode": "static", "engine": "vllm-ascend"});
        if let Some(px) = px {
            serving["image_size"] = json!(px);
        }
        let mut v = deployment("qwen2.5-vl-7b", serving);
        v["deployment"]["tensor_parallel"] = json!([1]);
        eval(&scenario(v), &[("batch", Value::Int(4)), ("precision", s("bf16"))])["ttft_ms"]
    };
    let (small, large) = (ttft(None), ttft(Some(896)));
    assert!(large > small * 1.2, "a 896-pixel image (1024 tokens) {large} ms vs 448 (256) {small} ms");
    // The Qwen2.5-Omni thinker loads as its language model.
    let omni = r#"{"model_type": "qwen2_5_omni", "thinker_config": {"model_type": "qwen2_5_omni_thinker", "text_config": {"model_type": "qwen2_5_omni_text", "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064}}}"#;
    let o = tunelab_sim::load_model(omni).unwrap();
    assert!((o.model.params().total as f64 / 7.6e9 - 1.0).abs() < 0.05, "{}", o.model.params().total);
    assert!(o.warnings.iter().any(|w| w.contains("thinker")));
    // An image size on a text model, or out of range, names the field.
    for (model, px) in [("qwen3-32b", 448), ("qwen2.5-vl-7b", 8)] {
        let v = deployment(model, json!({"mode": "static", "image_size": px}));
        let e = Scenario::from_json(&v.to_string()).err().or_else(|| setup(&scenario(v)).err()).expect("refused");
        assert!(e.contains("deployment.serving.image_size"), "{e}");
    }
}

#[test]
fn bad_speculative_settings_name_the_field() {
    for (spec, field) in [
        (json!({"method": "eagle3", "acceptance_rate": 1.2}), "speculative.acceptance_rate"),
        (json!({"method": "eagle3", "acceptance_rate": -0.1}), "speculative.acceptance_rate"),
        (json!({"method": "medusa"}), "speculative.method"),
        (json!({"method": "eagle", "num_speculative_tokens": [0]}), "speculative.num_speculative_tokens"),
        (json!({"method": "eagle", "num_speculative_tokens": [3], "accept_length": 9.0}), "speculative.accept_length"),
    ] {
        let v = deployment("qwen3-32b", json!({"speculative": spec}));
        let e = Scenario::from_json(&v.to_string()).err().or_else(|| setup(&scenario(v)).err()).expect("refused");
        assert!(e.contains(field), "{e}");
    }
    // An encoder has nothing to decode.
    let v = json!({"stage": "deployment", "model": "bge-large-zh-v1.5", "deployment": {"serving": {"mode": "static", "speculative": {"method": "eagle"}}}});
    let e = setup(&scenario(v)).err().expect("refused");
    assert!(e.contains("deployment.serving.speculative") && e.contains("encoder"), "{e}");
}

#[test]
fn four_bit_weights_halve_the_weight_bytes_and_c8_the_kv_bytes() {
    // Whole-step graphs: under vLLM-Ascend's default piecewise capture a tp-4 32B decode is
    // host-bound and the weight bytes do not show (piecewise_graph_capture_... below).
    let base = json!({"arrival": "closed", "concurrency": 16, "requests": 32, "engine": "vllm-ascend", "graph_mode": "full_decode_only"});
    let sc = scenario(deployment("qwen3-32b", base.clone()));
    let mem = |p: &str| {
        let (m, _, _) = tunelab_scenario::context::resolve(&sc).unwrap();
        let plan = tunelab_sim::workload::ParallelPlan { tp: 4, ..Default::default() };
        let opts = tunelab_sim::workload::GraphOptions { precision: tunelab_sim::Precision::parse(p).unwrap(), ..Default::default() };
        tunelab_sim::memory::memory_per_chip(&m, &tunelab_sim::workload::Workload::Decode { batch: 1, context_len: 1, output_len: 0 }, &plan, &opts, None).unwrap().weights as f64
    };
    let ratio = mem("w4a4") / mem("w8a8");
    assert!((0.5..0.56).contains(&ratio), "W4A4 / W8A8 weight bytes {ratio}");
    assert!((mem("w4a16") - mem("w4a4")).abs() < 1.0);
    // Decode is memory-bound: fewer weight bytes, lower TPOT.
    let tpot = |p: &str| eval(&sc, &[("precision", s(p)), ("batch", Value::Int(16)), ("launch", s("graph"))])["tpot_p50_ms"];
    assert!(tpot("w4a8") < tpot("w8a8") && tpot("w8a8") < tpot("bf16"), "{} {} {}", tpot("w4a8"), tpot("w8a8"), tpot("bf16"));
    // C8: half the KV bytes per token, so a long-context decode reads less.
    let long = |kv: &str| {
        let mut v = deployment("qwen3-32b", json!({"mode": "static", "kv_cache_dtype": kv}));
        v["workload"] = json!({"batch": 16, "input_len": 8192, "output_len": 256});
        eval(&scenario(v), &[("precision", s("w8a8")), ("batch", Value::Int(16)), ("launch", s("graph"))])["tpot_ms"]
    };
    assert!(long("int8") < long("auto") * 0.85, "C8 {} vs 16-bit KV {} ms", long("int8"), long("auto"));
    let v = deployment("qwen3-32b", json!({"kv_cache_dtype": "int4"}));
    assert!(Scenario::from_json(&v.to_string()).err().or_else(|| setup(&scenario(v)).err()).unwrap().contains("deployment.serving.kv_cache_dtype"));
}

#[test]
fn a_hybrid_model_keeps_a_fixed_state_so_long_contexts_cost_it_less() {
    let (m, _, _) = tunelab_scenario::context::resolve(&scenario(json!({"model": "qwen3.5-9b"}))).unwrap();
    let t = m.llm.as_ref().unwrap();
    let la = t.linear_attention.expect("layer_types read");
    assert_eq!((la.layers, t.layers), (24, 32));
    // KV cache only in the 8 full-attention layers.
    assert_eq!(m.kv_bytes_per_token(tunelab_sim::DType::Bf16), 8 * 2 * t.kv_heads * t.head_dim * 2);
    // Decode step time grows with the context far less than for a dense model of similar size.
    let growth = |model: &str| {
        let at = |ctx: i64| {
            let mut v = deployment(model, json!({"mode": "static"}));
            v["workload"] = json!({"batch": 8, "input_len": ctx, "output_len": 2});
            v["deployment"]["tensor_parallel"] = json!([1]);
            eval(&scenario(v), &[("precision", s("bf16")), ("batch", Value::Int(8))])["tpot_ms"]
        };
        at(16384) / at(1024)
    };
    let (hybrid, dense) = (growth("qwen3.5-9b"), growth("llama-3-8b"));
    assert!(hybrid < dense, "16k/1k decode time: hybrid {hybrid:.2}x, dense {dense:.2}x");
}

#[test]
fn an_encoder_serves_sequences_per_second_in_one_forward() {
    let v = |batch: i64| json!({"stage": "deployment", "model": "bge-large-zh-v1.5", "device": "910B2",
        "workload": {"batch": batch, "input_len": 512, "output_len": 1},
        "deployment": {"serving": {"mode": "static", "engine": "mindie"}, "tensor_parallel": [1], "tile_operators": false}});
    let small = eval(&scenario(v(1)), &[("precision", s("fp16"))]);
    let big = eval(&scenario(v(64)), &[("precision", s("fp16"))]);
    // (3x: a single 512-token sequence already fills most of the chip's cores.)
    assert!(big["requests_per_s"] > 3.0 * small["requests_per_s"], "batching helps: {} vs {}", big["requests_per_s"], small["requests_per_s"]);
    // Unfused attention materialises the scores: slower at 512 tokens.
    let mut unfused = v(64);
    unfused["deployment"]["serving"]["attention"] = json!("unfused");
    let unfused = eval(&scenario(unfused), &[("precision", s("fp16"))])["requests_per_s"];
    assert!(unfused < big["requests_per_s"]);
    // The offline OM model (runtime om) runs the ONNX export's attention passes, fp32 softmax and
    // LayerNorms, unfused GELU and residual adds: slower still.
    let mut om = v(64);
    om["deployment"]["serving"]["runtime"] = json!("om");
    assert!(eval(&scenario(om), &[("precision", s("fp16"))])["requests_per_s"] < 0.8 * unfused);
    // MindIE's own encoder model (ATB BERT) runs separate Q/K/V, GELU, Add and LayerNorm kernels
    // (serving-host.json, encoder_graph): slower than the generic engine's fused graph.
    let mut generic = v(64);
    generic["deployment"]["serving"]["engine"] = json!("generic");
    assert!(eval(&scenario(generic), &[("precision", s("fp16"))])["requests_per_s"] > 1.05 * big["requests_per_s"]);
}

#[test]
fn a_bad_runtime_names_the_field() {
    let v = json!({"stage": "deployment", "model": "bge-large-zh-v1.5", "deployment": {"serving": {"mode": "static", "runtime": "onnxruntime"}}});
    let e = Scenario::from_json(&v.to_string()).err().or_else(|| setup(&scenario(v)).err()).expect("refused");
    assert!(e.contains("deployment.serving.runtime") && e.contains("onnxruntime") && e.contains("engine or om"), "{e}");
}

#[test]
fn benchmark_workloads_datasets_caps_and_prefix_hits() {
    let run = |serving: serde_json::Value| eval(&scenario(deployment("qwen2.5-7b", serving)), &[("batch", Value::Int(64)), ("precision", s("bf16"))]);
    // A ShareGPT draw averages what `vllm bench serve` sends (vLLM PR #18566: 1000 prompts, 229.7
    // prompt and 203.1 generated tokens each, after its filter at 1024 / 2048), not the
    // PagedAttention paper's 161 / 338.
    let spec: tunelab_scenario::scheduler::ServingSpec = serde_json::from_value(json!({"dataset": "sharegpt", "requests": 2000})).unwrap();
    spec.validate().unwrap();
    let reqs = tunelab_scenario::scheduler::requests(&spec, 1, 1, 0, 7);
    let mean = |f: fn(&tunelab_scenario::scheduler::Request) -> u64| reqs.iter().map(f).sum::<u64>() as f64 / reqs.len() as f64;
    let near = |x: f64, want: f64| (x / want - 1.0).abs() < 0.06;
    assert!(near(mean(|r| r.input), 229.7) && near(mean(|r| r.output), 203.1), "{} {}", mean(|r| r.input), mean(|r| r.output));
    assert!(reqs.iter().all(|r| r.input <= 1024 && r.input + r.output <= 2048));
    // A burst capped at 4 in flight queues the rest: longer TTFT than 4 clients' own.
    let capped = run(json!({"arrival": "burst", "requests": 32, "max_concurrency": 4}));
    let burst = run(json!({"arrival": "burst", "requests": 32}));
    assert!(capped["ttft_p50_ms"] < burst["ttft_p50_ms"], "a cap of 4 keeps each prefill short");
    assert!(capped["tokens_per_s"] < burst["tokens_per_s"], "and serves fewer tokens per second");
    // Half of each prompt cached: faster first tokens.
    // Long prompts: an eager prefill step at tp 4 with 1k-token prompts is host-bound (launches
    // and the per-collective host cost), and caching half a prompt saves device time only.
    let long = |serving: serde_json::Value| {
        let mut d = deployment("qwen2.5-7b", serving);
        d["workload"]["input_len"] = json!(8192);
        eval(&scenario(d), &[("batch", Value::Int(64)), ("precision", s("bf16"))])
    };
    let cold = long(json!({"arrival": "closed", "concurrency": 8, "requests": 32}));
    let warm = long(json!({"arrival": "closed", "concurrency": 8, "requests": 32, "prefix_cache_hit_rate": 0.5}));
 assert!(warm["ttft_p50_ms"] < cold["ttft_p50_ms"] * 0.95, "{} vs {}", warm["ttft_p50_ms"], cold["ttft_p50_ms"]);
    for (bad, field) in [(json!({"dataset": "imdb"}), "deployment.serving.dataset"), (json!({"prefix_cache_hit_rate": 1.0}), "prefix_cache_hit_rate"), (json!({"max_concurrency": 0}), "max_concurrency")] {
        let v = deployment("qwen2.5-7b", bad);
        let e = Scenario::from_json(&v.to_string()).err().or_else(|| setup(&scenario(v)).err()).expect("refused");
        assert!(e.contains(field), "{e}");
    }
}

#[test]
fn an_old_scenario_without_the_new_fields_keeps_opening_and_pricing_the_same() {
    let old = json!({"stage": "deployment", "model": "llama-2-7b", "deployment": {"serving": {"arrival": "closed", "requests": 50}}});
    let s = scenario(old);
    assert!(s.deployment.serving.speculative.is_none() && s.deployment.serving.kv_cache_dtype == "auto");
    // The new fields at their defaults are not written out: old links stay as they were.
    let text = s.to_json();
    for f in ["speculative", "kv_cache_dtype", "prefix_cache_hit_rate", "max_concurrency", "\"dataset\"", "\"attention\""] {
        assert!(!text.contains(f), "{f} written at its default");
    }
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(v["deployment"]["serving"].get("runtime").is_none(), "runtime written at its default: {}", v["deployment"]["serving"]);
    assert!(!setup(&s).unwrap().space.names().iter().any(|n| n == "num_speculative_tokens"));
}

#[test]
fn the_second_calibration_sets_serving_rows_are_expressed() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/measurements/ascend-set2.json")).unwrap();
    let set = tunelab_scenario::fidelity::MeasurementSet::from_json(&text).unwrap();
    let serving: Vec<_> = set.rows.iter().filter(|r| r.category == "serving").collect();
    assert_eq!(serving.len(), 14);
    let mut expressed = 0;
    for r in serving {
        if r.cannot_express.is_some() {
            continue;
        }
        let ok = tunelab_scenario::fidelity::cases(&set).iter().filter(|c| c.row.id == r.id).all(|c| tunelab_scenario::fidelity::case_scenario(c, None).and_then(|s| setup(&s).map(|_| ())).is_ok());
        expressed += ok as usize;
    }
    assert!(expressed >= 11, "{expressed} of 14 rows expressed");
    // Every measured value of the source is in the converted row, unchanged, and the converter
    // regenerates the committed file byte for byte.
    let src_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/calibration/ascend-measurements-2.json");
    let Ok(src) = std::fs::read_to_string(src_path) else {
        eprintln!("note: {src_path} not found; the conversion was not re-checked");
        return;
    };
    let rows: Vec<serde_json::Value> = serde_json::from_str(&src).unwrap();
    for r in rows.iter().filter(|r| r["category"] == "serving") {
        let row = set.rows.iter().find(|x| x.id == r["id"].as_str().unwrap()).unwrap();
        let mine: Vec<(String, Option<f64>)> = row.values.iter().chain(row.variants.iter().flat_map(|v| v.values.iter())).map(|m| (m.metric.clone(), m.value)).collect();
        for (k, v) in r["measured"].as_object().unwrap() {
            let Some(x) = v["value"].as_f64() else { continue };
            assert!(mine.iter().any(|(n, y)| n == k && *y == Some(x)), "{}: '{k}' missing or changed", row.id);
        }
    }
    let out = std::env::temp_dir().join(format!("tunelab-set2-{}.json", std::process::id()));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/convert_measurements.py");
    if let Ok(o) = std::process::Command::new("python3").arg(script).arg(src_path).arg(&out).output() {
        if o.status.success() {
            let regenerated = std::fs::read_to_string(&out).unwrap();
            let _ = std::fs::remove_file(&out);
            assert!(regenerated == text, "scripts/convert_measurements.py no longer reproduces assets/measurements/ascend-set2.json");
        }
    }
}

#[test]
fn the_bge_rows_compare_each_value_under_the_runtime_that_measured_it() {
    // MindIE's BGE example publishes the ATB model ("accel_*") and the OM offline model
    // ("om_*", and every 300I Duo value): each is priced under its own runtime.
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/measurements/ascend-set2.json")).unwrap();
    let set = tunelab_scenario::fidelity::MeasurementSet::from_json(&text).unwrap();
    let mut seen = 0;
    for c in tunelab_scenario::fidelity::cases(&set).iter().filter(|c| c.row.id.contains("bge-large-zh")) {
        let runtime = tunelab_scenario::fidelity::case_scenario(c, None).unwrap().deployment.serving.runtime;
        for m in c.variant.map(|v| v.values.as_slice()).unwrap_or(&[]) {
            let om = m.metric.starts_with("om_") || c.row.chip == "310P3";
            assert_eq!(runtime, if om { "om" } else { "engine" }, "{} {}", c.row.id, m.metric);
            seen += 1;
        }
    }
    // Re-pinned 6 -> 9 (issue 43, fifth pass): the seq-100 shapes are compared too, their variant
    // carrying the workload's length (they were listed, not compared, before variants could).
    assert_eq!(seen, 9, "800I A2: 3 accelerated + 3 OM values at seq 100 and 512; 300I Duo: 3 OM values");
}

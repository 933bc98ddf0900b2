//! A hybrid (Gated DeltaNet) model under an engine that runs its linear-attention mixer as
//! Triton kernels (vLLM-Ascend): each launch costs the engine's `triton_launch_host_us` of host
//! time (assets/constants/serving-host.json), eagerly in every step with prompt tokens (the
//! chunked path's launches after its host sync add to the step; the rest race the device), in
//! eager decode steps, and not at all inside a captured decode graph. A dense model pays none.

use tunelab_scenario::graphcost::TileMode;
use tunelab_scenario::scheduler::price::{HostCosts, StepPricer, StepShape};
use tunelab_sim::dtype::Precision;
use tunelab_sim::workload::linear_attention as la;
use tunelab_sim::workload::{GraphOptions, ParallelPlan};

fn pricer(model: &str, triton_us: f64) -> StepPricer {
    let m = tunelab_sim::model::load_bundled(model).unwrap().model;
    let d = tunelab_sim::device::bundled_device("910B2").unwrap();
    let mut h = HostCosts::bundled("vllm-ascend").unwrap();
    h.piecewise = false; // ACL graph FULL_DECODE_ONLY, as the Qwen3.5 tutorials launch it
    h.triton_launch_host_us = triton_us;
    let opts = GraphOptions { precision: Precision::Bf16, ..GraphOptions::default() };
    StepPricer::new(m, d, ParallelPlan::default(), opts, TileMode::Default, h)
}

fn linear_layers(model: &str) -> f64 {
    let m = tunelab_sim::model::load_bundled(model).unwrap().model;
    m.llm.unwrap().linear_attention.map_or(0, |l| l.layers) as f64
}

const PREFILL: StepShape = StepShape { prefill_seqs: 4, prefill_tokens: 2048, prefill_kv: 512, new_requests: 4, decode_seqs: 0, decode_ctx: 0, emitting: 4 };
const DECODE: StepShape = StepShape { prefill_seqs: 0, prefill_tokens: 0, prefill_kv: 0, new_requests: 0, decode_seqs: 64, decode_ctx: 600, emitting: 64 };

#[test]
fn the_bundled_vllm_engine_prices_triton_launches_and_the_cpp_engines_do_not() {
    let v = HostCosts::bundled("vllm-ascend").unwrap();
    assert!((50.0..=500.0).contains(&v.triton_launch_host_us), "{}", v.triton_launch_host_us);
    for e in ["generic", "mindie", "torchair"] {
        assert_eq!(HostCosts::bundled(e).unwrap().triton_launch_host_us, 0.0, "{e}");
    }
}

#[test]
fn a_hybrid_prefill_step_pays_the_chunk_pipelines_launches_on_top_of_the_device() {
    let us = 220.0;
    let (mut with, mut without) = (pricer("qwen3.5-9b", us), pricer("qwen3.5-9b", 0.0));
    let a = with.step(&PREFILL, true).unwrap();
    let b = without.step(&PREFILL, true).unwrap();
    // The launches are host time; the device work differs only by the chunk kernels, which
    // the Triton engine runs at their measured (slower) speed.
    assert!(a.device_us >= b.device_us, "{} vs {}", a.device_us, b.device_us);
    // The launches after the chunk wrapper's host sync cannot hide under the device.
    let serial = linear_layers("qwen3.5-9b") * la::TRITON_LAUNCHES_PREFILL_AFTER_SYNC as f64 * us;
    assert!(a.time_us - b.time_us >= serial * 0.999, "{} vs {} (+{serial})", a.time_us, b.time_us);
    // Per prompt token, the hybrid model's prefill now takes longer than its device time by
    // more than the serial launches alone would spread over a dense step.
    assert!(a.time_us > a.device_us + serial, "{a:?}");
}

#[test]
fn the_chunk_pipelines_serial_launches_are_a_minority_of_a_prefill_step_as_published() {
    // vllm-ascend PR #8872: replacing the Triton chunk_gated_delta_rule by one fused kernel
    // cuts Qwen3.5/3.6 TTFT by ~15%. The six serialised launches per linear layer are the
    // share that replacement removes: it must be of that order, not most of the step.
    let mut p = pricer("qwen3.5-9b", 220.0);
    let a = p.step(&PREFILL, true).unwrap();
    let serial = linear_layers("qwen3.5-9b") * la::TRITON_LAUNCHES_PREFILL_AFTER_SYNC as f64 * 220.0;
    let share = serial / a.time_us;
    assert!((0.08..0.35).contains(&share), "serial launches are {:.0}% of a 2048-token prefill step", share * 100.0);
}

#[test]
fn eager_and_graph_decode_differ_by_the_linear_layers_launches() {
    let us = 220.0;
    let (mut with, mut without) = (pricer("qwen3.5-9b", us), pricer("qwen3.5-9b", 0.0));
    let launches = linear_layers("qwen3.5-9b") * la::TRITON_LAUNCHES_DECODE as f64 * us;
    let (ea, eb) = (with.step(&DECODE, false).unwrap(), without.step(&DECODE, false).unwrap());
    // Eager: the linear layers' decode kernels are Triton launches on the host, part of the
    // step's dispatch (which the device waits for once it exceeds the device time).
    assert!(ea.time_us >= launches && ea.time_us > eb.time_us + 0.25 * launches, "{} vs {} ({launches})", ea.time_us, eb.time_us);
    assert!(ea.device_us == eb.device_us);
    // A captured decode graph launches none of them.
    let (ga, gb) = (with.step(&DECODE, true).unwrap(), without.step(&DECODE, true).unwrap());
    assert!(ga.graph && (ga.time_us - gb.time_us).abs() < 1e-6, "{} vs {}", ga.time_us, gb.time_us);
    assert!(ea.time_us - ga.time_us > eb.time_us - gb.time_us + 0.25 * launches);
}

#[test]
fn a_dense_model_pays_no_triton_launches() {
    let (mut with, mut without) = (pricer("qwen3-32b", 220.0), pricer("qwen3-32b", 0.0));
    for (s, g) in [(PREFILL, false), (DECODE, false), (DECODE, true)] {
        assert_eq!(with.step(&s, g).unwrap(), without.step(&s, g).unwrap());
    }
}

/// One Qwen3.5-9B prompt prefilled by vLLM-Ascend in eager mode on one 910B2, as huawei-csl's
/// MegaGDN benchmark runs it (serving-host.json, source V8: offline LLM, one request per call,
/// a token budget above the prompt): mean TTFT in ms.
fn one_prefill_ttft_ms(input_len: u64) -> f64 {
    let text = format!(
        r#"{{"version":1,"name":"one 9B prefill","model":"qwen3.5-9b","device":"910B2","stage":"deployment",
        "workload":{{"batch":8,"input_len":{input_len},"output_len":1}},
        "deployment":{{"tile_operators":false,"serving":{{"mode":"scheduler","engine":"vllm-ascend","arrival":"burst","requests":1,"length_distribution":"fixed"}}}},
        "space":{{"batch":{{"fixed":8}},"chunked_prefill":{{"fixed":"on"}},"launch":{{"fixed":"eager"}},"max_num_batched_tokens":{{"fixed":{}}},"precision":{{"fixed":"bf16"}},"tp":{{"fixed":1}}}},
        "objectives":[{{"metric":"ttft_ms","priority":1}}],"strategy":{{"name":"auto"}},"budget":1,"seed":1}}"#,
        input_len + 257
    );
    let sc = tunelab_scenario::Scenario::from_json(&text).unwrap();
    let mut run = tunelab_scenario::Run::new(&sc).unwrap();
    let i = run.metrics().iter().position(|m| m.name == "ttft_mean_ms").unwrap();
    let c = run.baseline_config().clone();
    match run.evaluate(&c) {
        tunelab_search::Outcome::Ok(v) => v[i],
        o => panic!("{o:?}"),
    }
}

#[test]
fn one_long_hybrid_prefill_lands_near_the_published_sweep() {
    // V8's first_token_latency with the Triton chunk kernels. Its 512-token point (178.4 ms)
    // set linear_prefill_python_us; these longer prompts test the rest: the Triton chunk
    // kernels' measured speed (assets/kernels/triton-fla.json), the matmuls and the attention.
    for (len, measured) in [(2048, 267.6), (8192, 730.8), (16384, 1433.6)] {
        let predicted = one_prefill_ttft_ms(len);
        let err = predicted / measured - 1.0;
        assert!(err.abs() < 0.12, "{len} tokens: {predicted:.1} ms predicted, {measured} ms measured ({:+.1}%)", 100.0 * err);
    }
}

#[test]
fn the_triton_chunk_kernels_cost_what_was_measured_and_scale_with_heads_and_tokens() {
    let m = tunelab_sim::model::load_bundled("qwen3.5-9b").unwrap().model;
    let la = m.llm.unwrap().linear_attention.unwrap();
    let d = tunelab_sim::device::bundled_device("910B2").unwrap();
    let us = la::triton_chunk_us(&la, 1, 131_072, &d).unwrap();
    // G1 (assets/kernels/triton-fla.json): the six Triton stages over 131072 tokens at 32 value heads sum to
    // ~99.6 ms per linear layer on a 910B2.
    let per_layer_ms = us / la.layers as f64 / 1e3;
    assert!((per_layer_ms / 99.6 - 1.0).abs() < 0.05, "{per_layer_ms} ms per layer");
    // Tensor parallelism splits the value heads; a smaller chip takes longer.
    assert!((la::triton_chunk_us(&la, 2, 131_072, &d).unwrap() * 2.0 - us).abs() < 1e-6 * us);
    let b4 = tunelab_sim::device::bundled_device("910B4").unwrap();
    assert!(la::triton_chunk_us(&la, 1, 131_072, &b4).unwrap() > 1.3 * us);
}

/// "Where the time goes" prices a hybrid prefill the way the headline numbers do: under an
/// engine that launches the chunked delta rule as Triton kernels, the breakdown's
/// linear-attention core takes their measured time (`triton_chunk_us`), not the cube model's.
#[test]
fn the_breakdown_of_a_hybrid_prefill_takes_the_triton_kernels_time_like_the_step_pricer() {
    let detail = |engine: &str| {
        let text = format!(r#"{{"stage": "deployment", "model": "qwen3.5-9b", "device": "910B2",
            "workload": {{"batch": 1, "input_len": 8192, "output_len": 2}},
            "deployment": {{"serving": {{"engine": "{engine}", "mode": "static"}}, "tile_operators": false}},
            "space": {{"batch": {{"fixed": 1}}, "tp": {{"fixed": 1}}, "launch": {{"fixed": "eager"}}, "precision": {{"fixed": "bf16"}}}}}}"#);
        let s = tunelab_scenario::scenario::Scenario::from_json(&text).unwrap();
        let st = tunelab_scenario::stages::setup(&s).unwrap();
        let c = tunelab_scenario::fidelity::pinned_config(&st);
        tunelab_scenario::explore::point_detail(&s, &c).unwrap()
    };
    let core_ms = |d: &tunelab_scenario::explore::PointDetail| d.ops.iter().filter(|o| o.name.contains(la::LINEAR_CORE)).map(|o| o.time_ms).sum::<f64>();
    let (vllm, generic) = (detail("vllm-ascend"), detail("generic"));
    assert!(vllm.simulated.starts_with("one prefill"), "{}", vllm.simulated);
    let m = tunelab_sim::model::load_bundled("qwen3.5-9b").unwrap().model;
    let d = tunelab_sim::device::bundled_device("910B2").unwrap();
    // One prompt of 8192 tokens: 32 value heads give 32 recurrent programs on 24 cores, two
    // waves (`triton_chunk_us_seqs`), which the breakdown takes as the step pricer does.
    let triton_ms = la::triton_chunk_us_seqs(m.llm.as_ref().unwrap().linear_attention.as_ref().unwrap(), 1, 1, 8192, &d).unwrap().0 / 1e3;
    assert!((core_ms(&vllm) / triton_ms - 1.0).abs() < 1e-6, "breakdown {} ms vs Triton {triton_ms} ms", core_ms(&vllm));
    assert!(vllm.simulated.contains("Triton"), "{}", vllm.simulated);
    // An engine without Triton keeps the cube model's (faster) price and says nothing of it.
    assert!(core_ms(&generic) < core_ms(&vllm) / 2.0, "{} vs {}", core_ms(&generic), core_ms(&vllm));
    assert!(!generic.simulated.contains("Triton"), "{}", generic.simulated);
}

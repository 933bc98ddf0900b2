//! What a hybrid model's mixer launches do to a serving step, in the words the user reads (the
//! app's Explore detail and `tunelab eval --ops` print `StepOperators::what`; `tunelab
//! diagnose` and the app's diagnosis print `host_note`): the launches each mixer layer makes
//! from Python, counted from the engine's code (`tunelab_sim::workload::ssm::MAMBA2_*`,
//! `linear_attention::TRITON_LAUNCHES_*`), their host time at the engine's per-launch costs,
//! whether it races the device or waits behind a host sync, and which side sets the step.

mod common;

use serde_json::{json, Value as Json};
use tunelab_scenario::serving::Phase;
use tunelab_scenario::Scenario;
use tunelab_search::Value;
use tunelab_sim::workload::ssm;

const NEMOTRON: &str = include_str!("../../sim/tests/data/models/nemotron-3-super-120b-a12b-fp8.config.json");

/// Nemotron-3-Super on one 8 x 910B3 server at TP8 under vLLM-Ascend, as the tutorial of
/// vllm-ascend PR #11656 launches it (1024 tokens per step, max_num_seqs 4).
fn nemotron(input_len: u64, extra: Json) -> Scenario {
    let mut v = json!({
        "version": 1, "name": "Nemotron-3-Super on 8 x 910B3", "stage": "deployment", "device": "910B3",
        "model": serde_json::from_str::<Json>(&NEMOTRON.replace("Infinity", "\"Infinity\"")).unwrap(),
        "workload": { "batch": 4, "input_len": input_len, "output_len": 64 },
        "deployment": { "tile_operators": false, "serving": { "mode": "scheduler", "engine": "vllm-ascend", "arrival": "burst", "requests": 1, "max_concurrency": 1, "length_distribution": "fixed", "block_size": 128 } },
        "space": { "tp": { "fixed": 8 }, "batch": { "fixed": 4 }, "precision": { "fixed": "bf16" }, "max_num_batched_tokens": { "fixed": 1024 }, "chunked_prefill": { "fixed": "on" }, "launch": { "fixed": "eager" } },
        "budget": 1
    });
    tunelab_scenario::evidence::fidelity::merge(&mut v, &extra);
    Scenario::from_value(v).unwrap()
}

/// Qwen3.5-2B on one 910B2 under vLLM-Ascend, eager, 64 requests at once (the Qwen3.5-2B
/// tutorial's baseline, vllm-ascend PR #8234).
fn qwen35_2b() -> Scenario {
    Scenario::from_value(json!({
        "version": 1, "name": "Qwen3.5-2B eager", "stage": "deployment", "device": "910B2", "model": "qwen3.5-2b",
        "workload": { "batch": 256, "input_len": 512, "output_len": 128 },
        "deployment": { "tile_operators": false, "serving": { "mode": "scheduler", "engine": "vllm-ascend", "arrival": "burst", "requests": 64, "length_distribution": "fixed", "block_size": 128 } },
        "space": { "tp": { "fixed": 1 }, "batch": { "fixed": 256 }, "precision": { "fixed": "bf16" }, "max_num_batched_tokens": { "fixed": 2048 }, "chunked_prefill": { "fixed": "on" }, "launch": { "fixed": "eager" } },
        "budget": 1
    }))
    .unwrap()
}

fn ms_after(text: &str, key: &str) -> f64 {
    let at = text.find(key).unwrap_or_else(|| panic!("no '{key}' in: {text}")) + key.len();
    let num: String = text[at..].chars().skip_while(|c| *c == ' ').take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    num.parse().unwrap_or_else(|_| panic!("no number after '{key}' in: {text}"))
}

#[test]
fn an_eager_mamba_decode_step_names_its_counted_launches_and_the_python_floor_that_sets_it() {
    let s = nemotron(256, json!({}));
    let st = common::step_with(&s, &[], Phase::Decode);
    // The count, from the code: 40 Mamba-2 layers x 2 Triton + 1 aclnn launch.
    assert!(st.what.contains("40 Mamba-2 layers x (2 Triton launches: causal_conv1d_update, selective_state_update; 1 aclnn"), "{}", st.what);
    let d = tunelab_sim::device::bundled_device("910B3").unwrap();
    let mixers = 40.0 * (ssm::MAMBA2_TRITON_LAUNCHES_DECODE as f64 * 220.0 + ssm::MAMBA2_ACLNN_LAUNCHES_DECODE as f64 * d.eager_host_us_per_launch) / 1e3;
    assert!((st.mixer_host_ms.0 - mixers).abs() < 1e-6, "{:?} vs {mixers}", st.mixer_host_ms);
    assert_eq!(st.mixer_host_ms.1, 0.0);
    // The racing line adds them to the eager dispatch, as the step pricer does, and says that
    // the engine's per-layer Python floor (88 x 950 us) is what the host takes.
    let racing = ms_after(&st.what, "the hybrid mixers' launches");
    assert!((racing - mixers).abs() < 0.01, "{racing} vs {mixers}: {}", st.what);
    assert!(st.what.contains("the Python floor of 88 layers x 950 us"), "{}", st.what);
    // So the mixers do not set this step, and the diagnosis does not say they do.
    assert!(st.host_note.is_none(), "{:?}", st.host_note);
    // The step is the floor plus the per-step work: what the counted mechanisms give (the
    // tutorial measures 223 ms at C1; what is missing is not a launch this census finds).
    assert!((80.0..95.0).contains(&st.wall_ms), "{}", st.wall_ms);
}

#[test]
fn a_full_decode_graph_launches_no_mixer_kernels_and_prints_no_mixer_line() {
    let s = nemotron(256, json!({ "deployment": { "serving": { "graph_mode": "full_decode_only" } }, "space": { "launch": { "fixed": "graph" } } }));
    let st = common::step_with(&s, &[("launch", Value::Str("graph".into()))], Phase::Decode);
    assert_eq!(st.mixer_host_ms, (0.0, 0.0));
    assert!(!st.what.contains("hybrid mixers"), "{}", st.what);
    assert!(st.host_note.is_none());
}

#[test]
fn a_mamba_prompt_chunk_says_its_serial_launches_lengthen_the_step() {
    let s = nemotron(32768, json!({}));
    let st = common::step_with(&s, &[], Phase::Prefill);
    // Per Mamba-2 layer after the convolution's syncs: 5 Triton SSD launches, 10 aclnn
    // launches and the layer's Python forward (4 ms, as a Gated DeltaNet layer's).
    let python = 4000.0;
    let serial = 40.0 * (ssm::MAMBA2_TRITON_LAUNCHES_PREFILL as f64 * 220.0 + (ssm::MAMBA2_PREFILL_LAUNCHES_PER_LAYER + ssm::MAMBA2_CONV_LAUNCHES_PER_PROMPT) as f64 * 20.0 + python) / 1e3;
    assert!((st.mixer_host_ms.1 - serial).abs() < 1e-6, "{:?} vs {serial}", st.mixer_host_ms);
    assert!(st.what.contains("40 Mamba-2 layers x (5 Triton SSD launches, 10 aclnn launches (5 of them per prompt) and 4000 us of the layer's Python, all after the torch-native convolution's"), "{}", st.what);
    let line = ms_after(&st.what, "host, in series after the mixers' host syncs (the device has drained and waits):");
    assert!((line - serial).abs() < 0.01, "{line} vs {serial}");
    // 212 ms of a ~300 ms step: more than a fifth, so the diagnosis names it.
    let note = st.host_note.as_deref().unwrap_or_else(|| panic!("no host note: {}", st.what));
    assert!(note.contains("after their host syncs") && note.contains("prefill step"), "{note}");
}

#[test]
fn eager_gated_deltanet_decode_is_set_by_its_triton_launches_and_the_diagnosis_says_so() {
    let s = qwen35_2b();
    let st = common::step_with(&s, &[], Phase::Decode);
    // 18 linear layers x 4 Triton launches x 220 us = 15.84 ms racing the device.
    assert!(st.what.contains("18 Gated DeltaNet layers x 4 Triton launches"), "{}", st.what);
    assert!((st.mixer_host_ms.0 - 18.0 * 4.0 * 0.22).abs() < 1e-6, "{:?}", st.mixer_host_ms);
    // With the other launches' eager dispatch they are longer than the 24 x 950 us floor and
    // than the device: the host side is the dispatch plus the launches, and the note says so.
    assert!(st.what.contains("eager dispatch of every launch ") && st.what.contains(" ms + the hybrid mixers' launches 15.84 ms = "), "{}", st.what);
    let note = st.host_note.as_deref().unwrap_or_else(|| panic!("no host note: {}", st.what));
    assert!(note.contains("Triton launches from Python set the decode step"), "{note}");
    // At the bottom of the launch cost's bounds (50 us) the same launches leave the host side
    // under the engine's 24 x 950 us Python floor: the floor sets the step, and no sentence.
    let mut v = serde_json::to_value(&s).unwrap();
    tunelab_scenario::evidence::fidelity::merge(&mut v, &json!({ "deployment": { "serving": { "host_costs": { "triton_launch_host_us": 50.0 } } } }));
    let cheap = Scenario::from_value(v).unwrap();
    let st0 = common::step_with(&cheap, &[], Phase::Decode);
    assert!(st0.what.contains("the Python floor of 24 layers x 950 us"), "{}", st0.what);
    assert!(st0.host_note.is_none(), "{:?}", st0.host_note);
}

#[test]
fn the_diagnosis_of_an_eager_hybrid_decode_carries_the_sentence() {
    let s = qwen35_2b();
    let d = tunelab_scenario::analyses::diagnosis::diagnose(&s, None, Default::default()).unwrap();
    assert!(d.cause_chain.iter().any(|c| c.contains("Triton launches from Python set the")), "{:#?}", d.cause_chain);
}

#[test]
fn a_scenario_sets_the_mamba_layers_prefill_python_and_a_value_out_of_bounds_is_refused_by_name() {
    let s = nemotron(32768, json!({ "deployment": { "serving": { "host_costs": { "mamba2_prefill_python_us": 1000.0 } } } }));
    let st = common::step_with(&s, &[], Phase::Prefill);
    let serial = 40.0 * (5.0 * 220.0 + 10.0 * 20.0 + 1000.0) / 1e3;
    assert!((st.mixer_host_ms.1 - serial).abs() < 1e-6, "{:?} vs {serial}", st.mixer_host_ms);
    assert!(st.what.contains("and 1000 us of the layer's Python"), "{}", st.what);
    // Below the field's bound [500, 8000] us: refused, naming the field.
    let mut v = serde_json::to_value(nemotron(32768, json!({}))).unwrap();
    tunelab_scenario::evidence::fidelity::merge(&mut v, &json!({ "deployment": { "serving": { "host_costs": { "mamba2_prefill_python_us": 10.0 } } } }));
    let err = Scenario::from_value(v).and_then(|s| tunelab_scenario::stages::setup(&s).map(|_| ())).err().unwrap_or_else(|| panic!("accepted 10 us"));
    assert!(err.contains("mamba2_prefill_python_us"), "{err}");
}

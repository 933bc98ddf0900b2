//! A Mamba-2 hybrid (Nemotron-H: NVIDIA-Nemotron-3-Super-120B-A12B) under an engine that runs its
//! mixer as Triton kernels (vLLM-Ascend): the launch counts and host syncs read from
//! vLLM-Ascend's code (`tunelab_sim::workload::ssm::mamba2_host_us`), priced at the engine's
//! `triton_launch_host_us` and the chip's `eager_host_us_per_launch`, and the SSD scan of a
//! prompt chunk priced at all (before, a Nemotron-H prefill step ran no scan). The host terms
//! reach the step breakdown (`StepOperators::mixer_host_ms`, the Explore label).

mod common;

use serde_json::{json, Value as Json};
use tunelab_scenario::graphcost::TileMode;
use tunelab_scenario::scheduler::price::{HostCosts, StepPricer, StepShape};
use tunelab_scenario::serving::Phase;
use tunelab_scenario::Scenario;
use tunelab_search::Value;
use tunelab_sim::dtype::Precision;
use tunelab_sim::workload::ssm;
use tunelab_sim::workload::{GraphOptions, ParallelPlan};

const CONFIG: &str = include_str!("../../sim/tests/data/models/nemotron-3-super-120b-a12b-fp8.config.json");

fn model() -> tunelab_sim::model::ModelDesc {
    tunelab_sim::model::load_model(CONFIG).unwrap().model
}

fn mamba_layers() -> u64 {
    model().llm.unwrap().count_mixers(|m| matches!(m, tunelab_sim::model::Mixer::Mamba2))
}

fn pricer(triton_us: f64, piecewise: bool) -> StepPricer {
    let d = tunelab_sim::device::bundled_device("910B3").unwrap();
    let mut h = HostCosts::bundled("vllm-ascend").unwrap();
    h.piecewise = piecewise;
    h.triton_launch_host_us = triton_us;
    let plan = ParallelPlan { tp: 8, ..ParallelPlan::default() };
    let opts = GraphOptions { precision: Precision::Bf16, ..GraphOptions::default() };
    StepPricer::new(model(), d, plan, opts, TileMode::Default, h)
}

/// One 1024-token chunk of a long prompt (the tutorial's max_num_batched_tokens).
const CHUNK: StepShape = StepShape { prefill_seqs: 1, prefill_tokens: 1024, prefill_kv: 8192, new_requests: 0, decode_seqs: 0, decode_ctx: 0, emitting: 0 };
const DECODE: StepShape = StepShape { prefill_seqs: 0, prefill_tokens: 0, prefill_kv: 0, new_requests: 0, decode_seqs: 4, decode_ctx: 512, emitting: 4 };

#[test]
fn the_counts_follow_the_code_structure() {
    let (t, a) = (220.0, 20.0);
    // Decode: causal_conv1d_update + selective_state_update per layer, and the conv weight's
    // transposed copy inside causal_conv1d_update_npu, eager or piecewise.
    let decode = (2.0 * t + a) * 40.0;
    assert_eq!(ssm::mamba2_host_us(t, a, 40, 0, 4, false, false), (decode, 0.0));
    assert_eq!(ssm::mamba2_host_us(t, a, 40, 0, 4, true, true), (decode, 0.0));
    // FULL_DECODE_ONLY captures them.
    assert_eq!(ssm::mamba2_host_us(t, a, 40, 0, 4, true, false), (0.0, 0.0));
    // A chunk: five SSD launches and the torch-native convolution after its sync, per layer;
    // each more prompt adds its own convolution's launches.
    let one = ssm::mamba2_host_us(t, a, 40, 1, 0, false, false);
    assert_eq!(one, (0.0, 40.0 * (5.0 * t + 10.0 * a)));
    let two = ssm::mamba2_host_us(t, a, 40, 2, 0, false, false);
    assert!((two.1 - one.1 - 40.0 * 5.0 * a).abs() < 1e-9, "{two:?} {one:?}");
    // A mixed step also launches the decode slice's kernels, before the sync.
    assert_eq!(ssm::mamba2_host_us(t, a, 40, 1, 3, false, false).0, decode);
    // An engine without Triton kernels (MindIE, torchair) pays none of it.
    assert_eq!(ssm::mamba2_host_us(0.0, a, 40, 1, 3, false, false), (0.0, 0.0));
    assert!(ssm::runs_in_mamba2_kernels("layer_mixer.mamba.linear_attn.core.intra_scores"));
    assert!(ssm::runs_in_mamba2_kernels("layer_mixer.mamba.conv1d") && ssm::runs_in_mamba2_kernels("layer_mixer.mamba.dt"));
    assert!(!ssm::runs_in_mamba2_kernels("layer_mixer.mamba.in_proj") && !ssm::runs_in_mamba2_kernels("layer_mixer.mamba.gated_norm"));
}

#[test]
fn nemotron_has_its_mamba_layers() {
    assert_eq!(mamba_layers(), 40);
}

#[test]
fn a_prompt_chunk_waits_for_the_mamba_layers_serial_host_work() {
    let (mut with, mut without) = (pricer(220.0, true), pricer(0.0, true));
    let a = with.step(&CHUNK, false).unwrap();
    let b = without.step(&CHUNK, false).unwrap();
    let aclnn = tunelab_sim::device::bundled_device("910B3").unwrap().eager_host_us_per_launch;
    // Per layer: five SSD launches, ten aclnn launches and the layer's Python forward
    // (mamba2_prefill_python_us), all after the convolution's host sync.
    let python = HostCosts::bundled("vllm-ascend").unwrap().mamba2_prefill_python_us;
    assert!(python > 0.0);
    let serial = mamba_layers() as f64 * (5.0 * 220.0 + 10.0 * aclnn + python);
    assert!((a.mixer_kernels_serial_us - serial).abs() < 1e-6 * serial, "{} vs {serial}", a.mixer_kernels_serial_us);
    assert_eq!(b.mixer_kernels_serial_us, 0.0);
    // After the sync nothing hides under the device: the step grows by at least that much.
    assert!(a.time_us - b.time_us >= serial * 0.999, "{} vs {} (+{serial})", a.time_us, b.time_us);
}

#[test]
fn a_captured_decode_step_launches_no_mamba_kernels_from_python_and_an_eager_one_does() {
    let mut full = pricer(220.0, false);
    let g = full.step(&DECODE, true).unwrap();
    assert!(g.graph, "{g:?}");
    assert_eq!((g.mixer_kernels_host_us, g.mixer_kernels_serial_us), (0.0, 0.0));
    let e = full.step(&DECODE, false).unwrap();
    let aclnn = tunelab_sim::device::bundled_device("910B3").unwrap().eager_host_us_per_launch;
    assert!((e.mixer_kernels_host_us - mamba_layers() as f64 * (2.0 * 220.0 + aclnn)).abs() < 1e-6, "{e:?}");
    // Eager: the step is at least the host's work, launches included.
    assert!(e.time_us >= e.mixer_kernels_host_us, "{e:?}");
}

fn scenario(extra: Json) -> Scenario {
    let mut v = json!({
        "version": 1, "name": "Nemotron-3-Super on 8 x 910B3", "stage": "deployment", "device": "910B3",
        // The checkpoint's config.json writes a bare `Infinity` (Python's json), which the model
        // reader takes and strict JSON does not: quoted here, as the measurement rows carry it.
        "model": serde_json::from_str::<Json>(&CONFIG.replace("Infinity", "\"Infinity\"")).unwrap(),
        "workload": { "batch": 4, "input_len": 8192, "output_len": 64 },
        "deployment": { "tile_operators": false, "serving": { "mode": "scheduler", "engine": "vllm-ascend", "arrival": "burst", "requests": 2, "max_concurrency": 1, "length_distribution": "fixed", "block_size": 128 } },
        "space": { "tp": { "fixed": 8 }, "batch": { "fixed": 4 }, "precision": { "fixed": "bf16" }, "max_num_batched_tokens": { "fixed": 1024 }, "chunked_prefill": { "fixed": "on" } },
        "budget": 1
    });
    tunelab_scenario::evidence::fidelity::merge(&mut v, &extra);
    Scenario::from_value(v).unwrap()
}

#[test]
fn the_prefill_breakdown_runs_the_ssd_scan_and_names_the_mixers_host_work() {
    let s = scenario(json!({ "space": { "launch": { "fixed": "eager" } } }));
    let st = common::step_with(&s, &[("launch", Value::Str("eager".into()))], Phase::Prefill);
    // The scan's chunk operators are in the step (they were dropped for a Mamba-2 hybrid).
    let scan: Vec<_> = st.ops.iter().filter(|o| o.name.contains(".mamba.linear_attn.core.")).collect();
    assert!(scan.len() >= 4, "{:?}", st.ops.iter().map(|o| &o.name).collect::<Vec<_>>());
    assert!(scan.iter().all(|o| o.time_us > 0.0));
    // The serial host work after the convolution's sync is named and part of the step's wall time.
    let (racing, serial) = st.mixer_host_ms;
    assert!(serial > 40.0 * 5.0 * 0.05, "{racing} {serial}");
    assert!(st.wall_ms >= st.device_ms + serial * 0.999, "{} {} {serial}", st.wall_ms, st.device_ms);
    let words = tunelab_scenario::analyses::explore::mixer_host_words(st.mixer_host_ms);
    assert!(words.contains("after their host syncs"), "{words}");
    assert_eq!(tunelab_scenario::analyses::explore::mixer_host_words((0.0, 0.0)), "");
}

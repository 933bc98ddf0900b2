//! How many prompts a hybrid (Gated DeltaNet) prefill step holds changes what its chunked delta
//! rule costs: two of the six Triton stages (chunk_gated_delta_rule_fwd_h, chunk_fwd_o in
//! vLLM-Ascend's `ops/triton/fla`) run one program per prompt and value head, each walking its
//! prompt's chunks in turn. A burst of short prompts fills the chip's cores; one or two long
//! prompts on a TP-split model (a few value heads per rank) leave most cores idle, and those
//! stages take a whole walk (`tunelab_sim::workload::linear_attention::triton_chunk_us_seqs`).

mod common;

use serde_json::json;
use tunelab_scenario::serving::Phase;
use tunelab_scenario::Scenario;
use tunelab_sim::workload::linear_attention as la;

fn linear(model: &str) -> tunelab_sim::model::LinearAttention {
    tunelab_sim::model::load_bundled(model).unwrap().model.llm.unwrap().linear_attention.unwrap()
}

#[test]
fn a_burst_of_short_prompts_fills_the_chip_and_keeps_the_per_token_speed() {
    // Qwen3.5-9B at TP1: 32 prompts of 512 tokens x 32 value heads = 1024 programs on 24 cores.
    let l = linear("qwen3.5-9b");
    let d = tunelab_sim::device::bundled_device("910B2").unwrap();
    let (us, extra) = la::triton_chunk_us_seqs(&l, 1, 32, 512, &d).unwrap();
    assert_eq!(extra, 0.0);
    assert!((us - la::triton_chunk_us(&l, 1, 32 * 512, &d).unwrap()).abs() < 1e-9);
}

#[test]
fn the_measured_configuration_is_reproduced_by_the_walk_as_by_the_per_token_speed() {
    // G1's bench: 16 sequences of 8192 tokens, 16 value heads (Qwen3.5-2B's), 910B2: 256
    // programs in 11 waves; the walk of the recurrent stages stays within 3% of their share.
    let l = linear("qwen3.5-2b");
    let d = tunelab_sim::device::bundled_device("910B2").unwrap();
    let (us, extra) = la::triton_chunk_us_seqs(&l, 1, 16, 8192, &d).unwrap();
    assert!(extra < 0.03 * us, "{extra} of {us}");
}

#[test]
fn one_long_prompt_on_few_heads_per_rank_walks_its_chunks_on_idle_cores() {
    // Qwen3.5-9B at TP8: 4 value heads per rank, one 8192-token prompt: 4 programs of 128
    // chunks on 24 cores. chunk_h alone then takes 128 x 11.1 us per layer.
    let l = linear("qwen3.5-9b");
    let d = tunelab_sim::device::bundled_device("910B2").unwrap();
    let (us, extra) = la::triton_chunk_us_seqs(&l, 8, 1, 8192, &d).unwrap();
    let flat = la::triton_chunk_us(&l, 8, 8192, &d).unwrap();
    let walk = 128.0 * (11.1 + 6.0) * l.layers as f64;
    assert!(us >= walk - 1e-6, "{us} vs the walk {walk}");
    assert!(extra > 0.5 * flat, "{extra} over {flat}");
    // More prompts in the same step share the idle cores: the cost per token falls.
    let (six, _) = la::triton_chunk_us_seqs(&l, 8, 6, 8192, &d).unwrap();
    assert!(six < 2.0 * us, "{six} vs {us}");
}

/// Qwen3.5-9B served eagerly by vLLM-Ascend on 910B2s: `requests` prompts of `input_len`
/// tokens arriving together, at `tp` and a batch of `batch`.
fn qwen35_9b(name: &str, tp: u64, batch: u64, input_len: u64, output_len: u64, requests: u64) -> Scenario {
    Scenario::from_value(json!({
        "version": 1, "name": name, "stage": "deployment", "device": "910B2", "model": "qwen3.5-9b",
        "workload": { "batch": batch, "input_len": input_len, "output_len": output_len },
        "deployment": { "tile_operators": false, "serving": { "mode": "scheduler", "engine": "vllm-ascend", "arrival": "burst", "requests": requests, "length_distribution": "fixed", "block_size": 128 } },
        "space": { "tp": { "fixed": tp }, "batch": { "fixed": batch }, "precision": { "fixed": "bf16" }, "max_num_batched_tokens": { "fixed": 16384 }, "chunked_prefill": { "fixed": "on" }, "launch": { "fixed": "eager" } },
        "objectives": [{ "metric": "ttft_ms", "priority": 1 }],
        "budget": 1
    }))
    .unwrap()
}

fn long_prompt_at_tp8() -> Scenario {
    qwen35_9b("Qwen3.5-9B TP8, one long prompt", 8, 8, 8192, 64, 1)
}

#[test]
fn the_prefill_breakdown_names_the_idle_cores_of_the_chunk_recurrence() {
    let st = common::step_with(&long_prompt_at_tp8(), &[], Phase::Prefill);
    assert!(st.what.contains("1 prompts x 4 value heads per rank = 4 programs on 24 cores, 1 wave(s)"), "{}", st.what);
    assert!(st.what.contains("chunk_gated_delta_rule_fwd_h"), "{}", st.what);
}

#[test]
fn a_burst_prefill_breakdown_has_no_such_line() {
    let s = qwen35_9b("Qwen3.5-9B burst", 1, 256, 512, 128, 64);
    let st = common::step_with(&s, &[], Phase::Prefill);
    assert!(!st.what.contains("Gated DeltaNet chunk recurrence"), "{}", st.what);
}

/// A step holding prompts and decoding sequences: what each release launches for the decoding
/// sequences' slice, per Gated DeltaNet layer. vLLM-Ascend's `ops/gdn.py` (from v0.19.1) gives
/// them their own recurrent kernel and l2norms; v0.17 runs them through the prompts' chunk path.
fn mixed_racing_ms(engine_version: &str) -> f64 {
    use tunelab_scenario::scheduler::price::{StepPricer, StepShape};
    let spec = tunelab_scenario::spec::options::serving::ServingSpec { engine: "vllm-ascend".into(), engine_version: engine_version.into(), ..Default::default() };
    let h = spec.host().unwrap();
    let m = tunelab_sim::model::load_bundled("qwen3.5-2b").unwrap().model;
    let d = tunelab_sim::device::bundled_device("910B2").unwrap();
    let opts = tunelab_sim::workload::GraphOptions { precision: tunelab_sim::dtype::Precision::Bf16, ..Default::default() };
    let p = StepPricer::new(m, d, Default::default(), opts, tunelab_scenario::graphcost::TileMode::Default, h);
    let mixed = StepShape { prefill_seqs: 4, prefill_tokens: 2048, prefill_kv: 512, new_requests: 4, decode_seqs: 60, decode_ctx: 600, emitting: 64 };
    let alone = StepShape { decode_seqs: 0, emitting: 4, ..mixed };
    (p.mixer_host_us(&mixed, false).0 - p.mixer_host_us(&alone, false).0) / 1e3
}

#[test]
fn a_mixed_step_launches_the_decode_slice_only_from_the_release_that_has_it() {
    let launch_ms = 18.0 * 220.0 / 1e3; // Qwen3.5-2B's 18 linear layers, one launch each
    let baseline = mixed_racing_ms("");
    assert!((baseline - 3.0 * launch_ms).abs() < 1e-6, "baseline (0.23): {baseline} ms");
    assert_eq!(mixed_racing_ms("0.17"), 0.0);
    assert_eq!(mixed_racing_ms("0.18"), 0.0);
    assert!((mixed_racing_ms("0.20") - baseline).abs() < 1e-9);
}

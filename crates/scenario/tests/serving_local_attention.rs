//! Sliding-window layers in a serving prefill (issue 41: windows "priced with full attention
//! everywhere"). A prompt chunk deep in a long context attends, on a windowed layer, to the
//! window's keys only; before `workload::local_attention`, the serving step priced every layer's
//! chunk over the whole context, so Mistral-7B's 4096-token window changed nothing in TTFT.

use tunelab_scenario::bundled::bundled_scenario;
use tunelab_scenario::scenario::ModelRef;
use tunelab_scenario::Scenario;

mod common;

fn mistral(window: bool) -> Scenario {
    let mut s = bundled_scenario("llama2-7b-910B2-deployment").unwrap();
    let mut cfg: serde_json::Value = serde_json::from_str(&tunelab_sim::bundled_model_text("mistral-7b").unwrap()).unwrap();
    assert_eq!(cfg["sliding_window"], 4096, "the bundled Mistral-7B config has its 4096-token window");
    if !window {
        cfg["sliding_window"] = serde_json::Value::Null;
    }
    s.model = ModelRef::Inline(cfg);
    s.workload.input_len = 32_768;
    s.workload.output_len = 8;
    s.deployment.serving.requests = 6;
    s.deployment.serving.length_spread = 0.0;
    s.constraints = Default::default();
    s
}

#[test]
fn a_windowed_model_prefills_a_long_prompt_faster_than_the_same_model_with_full_attention() {
    let full = common::serve_with(&mistral(false), &[]).unwrap_or_else(|e| panic!("{e}"));
    let win = common::serve_with(&mistral(true), &[]).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("Mistral-7B, 32K prompts: TTFT p50 {:.1} ms with its window, {:.1} ms with full attention", win.ttft_ms.p50, full.ttft_ms.p50);
    // At 32K, a full-attention chunk's core reads up to 8x the keys of a 4096 window; the
    // linear layers are the same, so TTFT must drop visibly, but not below the linear layers'.
    assert!(win.ttft_ms.p50 < 0.9 * full.ttft_ms.p50, "windowed TTFT p50 {:.1} ms vs full {:.1} ms", win.ttft_ms.p50, full.ttft_ms.p50);
    assert!(win.ttft_ms.p50 > 0.2 * full.ttft_ms.p50, "windowed TTFT p50 {:.1} ms vs full {:.1} ms", win.ttft_ms.p50, full.ttft_ms.p50);
}

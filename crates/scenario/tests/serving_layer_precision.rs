//! Precision per layer group (issue 42, item 1): a checkpoint quantised W8A8 for attention and
//! the shared layers with W4A8 routed experts (msModelSlim's mixed description, as the
//! vLLM-Ascend W4A8 tutorials serve DeepSeek and Qwen3 MoE models). The experts hold most of the
//! weights, so 4-bit experts free memory and shorten memory-bound decode steps.

use tunelab_scenario::bundled::bundled_scenario;
use tunelab_scenario::serving::Phase;
use tunelab_scenario::stages::deployment::{serve, step_operators};
use tunelab_scenario::stages::setup;
use tunelab_scenario::Scenario;
use tunelab_search::Value;

mod common;

fn qwen3(expert: Option<&str>) -> Scenario {
    let mut s = bundled_scenario("qwen3-235b-2xA3-pd-compare").unwrap();
    s.constraints = Default::default();
    s.deployment.serving.requests = 96;
    s.deployment.cluster.as_mut().unwrap().disaggregation = vec!["colocated".into()];
    s.deployment.serving.expert_precision = expert.map(String::from);
    s
}

fn config(s: &Scenario) -> (Vec<String>, tunelab_search::Config) {
    common::configured(s, &[("tp", Value::Int(4)), ("dp", Value::Int(8)), ("precision", Value::Str("w8a8".into())), ("batch", Value::Int(32))]).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn four_bit_experts_under_w8a8_attention_free_memory_and_shorten_decode() {
    let (w8, w4) = (qwen3(None), qwen3(Some("w4a8")));
    let (n8, c8) = config(&w8);
    let (n4, c4) = config(&w4);
    let d8 = step_operators(&w8, &n8, &c8, Phase::Decode, None).unwrap();
    let d4 = step_operators(&w4, &n4, &c4, Phase::Decode, None).unwrap();
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    eprintln!("weights per die: all W8A8 {:.2} GiB, W4A8 experts {:.2} GiB", gib(d8.memory.weights), gib(d4.memory.weights));
    // Qwen3-235B's routed experts are about 96% of its parameters, but under attention DP each
    // die also holds its rank's attention (tp 4) and embeddings whole: at EP 32 the experts are
    // a little over half a die's weights, which 4-bit halves.
    assert!(d4.memory.weights < d8.memory.weights * 3 / 4 && d4.memory.weights > d8.memory.weights / 2, "{} vs {}", d4.memory.weights, d8.memory.weights);
    // The experts' matmuls read 4-bit weights, attention keeps INT8.
    let expert = d4.ops.iter().find(|o| o.name.ends_with("moe.experts.gate_up_proj")).unwrap();
    assert!(matches!(expert.op, tunelab_sim::Op::Matmul { weight_dtype: Some(tunelab_sim::DType::Int4), .. }), "{:?}", expert.op);
    let qkv = d4.ops.iter().find(|o| o.name.contains("attn.qkv_proj")).unwrap();
    assert!(matches!(qkv.op, tunelab_sim::Op::Matmul { dtype: tunelab_sim::DType::Int8, weight_dtype: None, .. }), "{:?}", qkv.op);
    let (s8, s4) = (serve(&w8, &n8, &c8).unwrap(), serve(&w4, &n4, &c4).unwrap());
    eprintln!("TPOT p50: all W8A8 {:.2} ms, W4A8 experts {:.2} ms", s8.tpot_ms.p50, s4.tpot_ms.p50);
    assert!(s4.tpot_ms.p50 < s8.tpot_ms.p50, "W4A8 experts {} ms vs W8A8 {} ms", s4.tpot_ms.p50, s8.tpot_ms.p50);
}

#[test]
fn an_expert_precision_names_its_field_when_wrong() {
    let mut bad = qwen3(Some("w3a9"));
    assert!(setup(&bad).err().unwrap_or_default().contains("deployment.serving.expert_precision"));
    bad = bundled_scenario("llama2-7b-910B2-deployment").unwrap();
    bad.deployment.serving.expert_precision = Some("w4a8".into());
    assert!(setup(&bad).err().unwrap_or_default().contains("deployment.serving.expert_precision"));
    assert!(!qwen3(None).to_json().contains("expert_precision"));
}

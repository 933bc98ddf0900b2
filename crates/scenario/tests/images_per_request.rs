//! Images per request (`deployment.serving.images_per_request`, issue 41): Qwen3.5's vision
//! tower is read and counted but idle by default (text-only prompts: the bundled scenarios keep
//! their numbers); asking for images loads the tower and prices each image's encoder work and
//! prompt tokens in prefill. A model without a tower refuses the field by name.

use serde_json::json;
use tunelab_scenario::stages::setup;
use tunelab_scenario::Scenario;
use tunelab_search::{Outcome, Value};

fn scenario(v: serde_json::Value) -> Scenario {
    Scenario::from_json(&v.to_string()).unwrap_or_else(|e| panic!("{e}"))
}

fn eval(s: &Scenario) -> std::collections::BTreeMap<String, f64> {
    let mut st = setup(s).unwrap_or_else(|e| panic!("{e}"));
    let names = st.space.names().to_vec();
    let mut c = st.baseline.clone();
    if let Some(i) = names.iter().position(|x| x == "batch") {
        c.0[i] = Value::Int(4);
    }
    match st.objective.evaluate(&c) {
        Outcome::Ok(v) => st.metrics.iter().map(|m| m.name.clone()).zip(v).collect(),
        other => panic!("expected a feasible point, got {other:?}"),
    }
}

fn deployment(model: &str, serving: serde_json::Value) -> serde_json::Value {
    json!({
        "stage": "deployment", "model": model, "device": "910B2", "budget": 1,
        "workload": {"batch": 4, "input_len": 1024, "output_len": 128},
        "deployment": {"serving": serving, "tile_operators": false, "tensor_parallel": [1], "precisions": ["bf16"]}
    })
}

#[test]
fn qwen3_5_is_text_only_by_default_and_prices_its_images_when_asked() {
    let m = tunelab_sim::load_bundled("qwen3.5-2b").unwrap().model;
    let v = m.vision.as_ref().expect("Qwen3.5's vision tower is read");
    assert_eq!(v.images, 0);
    assert!(m.active_vision().is_none());
    // Counted in the identity (24 blocks 1024 wide: about 0.33B), not in memory.
    let tower = m.params().total - m.llm.as_ref().unwrap().params().total;
    assert!((300e6..360e6).contains(&(tower as f64)), "tower {tower}");
    let base = json!({"mode": "static", "engine": "vllm-ascend"});
    let none = eval(&scenario(deployment("qwen3.5-2b", base.clone())));
    let zero = eval(&scenario(deployment("qwen3.5-2b", json!({"mode": "static", "engine": "vllm-ascend", "images_per_request": 0}))));
    assert_eq!(none, zero, "0 images is the default");
    let one = eval(&scenario(deployment("qwen3.5-2b", json!({"mode": "static", "engine": "vllm-ascend", "images_per_request": 1}))));
    let four = eval(&scenario(deployment("qwen3.5-2b", json!({"mode": "static", "engine": "vllm-ascend", "images_per_request": 4}))));
    assert!(one["ttft_ms"] > none["ttft_ms"], "one image {} ms vs text {} ms", one["ttft_ms"], none["ttft_ms"]);
    assert!(four["ttft_ms"] > one["ttft_ms"] * 1.3, "four images {} ms vs one {} ms", four["ttft_ms"], one["ttft_ms"]);
    // The setup names the images in a note.
    let st = setup(&scenario(deployment("qwen3.5-2b", json!({"mode": "static", "engine": "vllm-ascend", "images_per_request": 4})))).unwrap();
    assert!(st.notes.iter().any(|n| n.contains("carries 4 images")), "{:?}", st.notes);
}

#[test]
fn a_vision_model_keeps_one_image_by_default_and_takes_more() {
    let one = eval(&scenario(deployment("qwen2.5-vl-7b", json!({"mode": "static", "engine": "vllm-ascend"}))));
    let same = eval(&scenario(deployment("qwen2.5-vl-7b", json!({"mode": "static", "engine": "vllm-ascend", "images_per_request": 1}))));
    assert_eq!(one, same, "one image per request is the old default");
    let none = eval(&scenario(deployment("qwen2.5-vl-7b", json!({"mode": "static", "engine": "vllm-ascend", "images_per_request": 0}))));
    let two = eval(&scenario(deployment("qwen2.5-vl-7b", json!({"mode": "static", "engine": "vllm-ascend", "images_per_request": 2}))));
    assert!(none["ttft_ms"] < one["ttft_ms"] && one["ttft_ms"] < two["ttft_ms"], "{} < {} < {}", none["ttft_ms"], one["ttft_ms"], two["ttft_ms"]);
}

#[test]
fn images_per_request_is_refused_by_name_where_it_cannot_apply() {
    let refused = |model: &str, serving: serde_json::Value| -> String {
        let v = deployment(model, serving);
        Scenario::from_json(&v.to_string()).err().or_else(|| setup(&scenario(v)).err()).expect("refused")
    };
    let e = refused("qwen3-32b", json!({"mode": "static", "images_per_request": 1}));
    assert!(e.contains("deployment.serving.images_per_request") && e.contains("no vision tower"), "{e}");
    let e = refused("qwen2.5-vl-7b", json!({"mode": "static", "images_per_request": 65}));
    assert!(e.contains("images_per_request"), "{e}");
    // An image size for requests that carry no image.
    let e = refused("qwen3.5-2b", json!({"mode": "static", "image_size": 896}));
    assert!(e.contains("deployment.serving.image_size") && e.contains("images_per_request"), "{e}");
}

/// Voxtral-Mini-3B (its public config, `tunelab-sim`'s test data): audio seconds per request
/// run the Whisper-style tower in prefill, 30 s windows of 375 tokens each; none by default.
#[test]
fn audio_seconds_price_the_audio_tower_per_request() {
    let cfg: serde_json::Value = serde_json::from_str(include_str!("../../sim/tests/data/models/voxtral-mini-3b-2507.config.json")).unwrap();
    let with = |serving: serde_json::Value| {
        let mut v = deployment("x", serving);
        v["model"] = cfg.clone();
        v
    };
    let text = eval(&scenario(with(json!({"mode": "static", "engine": "vllm-ascend"}))));
    let zero = eval(&scenario(with(json!({"mode": "static", "engine": "vllm-ascend", "audio_seconds": 0.0}))));
    assert_eq!(text, zero);
    let half = eval(&scenario(with(json!({"mode": "static", "engine": "vllm-ascend", "audio_seconds": 20.0}))));
    let two = eval(&scenario(with(json!({"mode": "static", "engine": "vllm-ascend", "audio_seconds": 60.0}))));
    assert!(half["ttft_ms"] > text["ttft_ms"] && two["ttft_ms"] > half["ttft_ms"] * 1.2, "{} < {} < {}", text["ttft_ms"], half["ttft_ms"], two["ttft_ms"]);
    let st = setup(&scenario(with(json!({"mode": "static", "engine": "vllm-ascend", "audio_seconds": 60.0})))).unwrap();
    assert!(st.notes.iter().any(|n| n.contains("2 window(s)") && n.contains("750 tokens")), "{:?}", st.notes);
    // A text model refuses audio by name; a negative length is refused by name.
    let e = setup(&scenario(deployment("qwen3-32b", json!({"mode": "static", "audio_seconds": 10.0})))).err().expect("refused");
    assert!(e.contains("deployment.serving.audio_seconds") && e.contains("no audio tower"), "{e}");
    let v = with(json!({"mode": "static", "audio_seconds": -1.0}));
    let e = Scenario::from_json(&v.to_string()).err().or_else(|| setup(&scenario(v)).err()).expect("refused");
    assert!(e.contains("audio_seconds"), "{e}");
}

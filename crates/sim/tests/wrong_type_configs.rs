//! Issue 44: a nested config of the wrong type (`vision_config: "x"`, a number, a list) is
//! reported as a wrong type with its path, not as "missing", and a wrapper's tower is never
//! dropped silently (a wrong-typed `vision_config` once left a multimodal model text-only).

use tunelab_sim::model::load_model;

const LLAVA: &str = include_str!("../../../assets/models/llava-1.5-7b.config.json");
const QWEN25_VL: &str = include_str!("../../../assets/models/qwen2.5-vl-7b.config.json");
const MINISTRAL3: &str = include_str!("data/models/ministral-3-3b-2512.config.json");

fn with(json: &str, key: &str, v: serde_json::Value) -> String {
    let mut o: serde_json::Value = serde_json::from_str(json).unwrap();
    o.as_object_mut().unwrap().insert(key.into(), v);
    o.to_string()
}

#[test]
fn a_wrong_typed_vision_config_says_wrong_type_with_its_path() {
    for (name, cfg) in [("llava", LLAVA), ("qwen2.5-vl", QWEN25_VL), ("ministral3 wrapper", MINISTRAL3)] {
        assert!(load_model(cfg).unwrap().model.vision.is_some(), "{name}: the real config has its tower");
        for (bad, kind) in [(serde_json::json!("clip"), "a string"), (serde_json::json!(5), "a number"), (serde_json::json!([1, 2]), "an array")] {
            let e = load_model(&with(cfg, "vision_config", bad)).err().unwrap_or_else(|| panic!("{name}: a {kind} vision_config was accepted"));
            assert!(e.contains("vision_config") && e.contains("wrong type") && e.contains(kind) && !e.contains("missing"), "{name}, {kind}: {e}");
        }
    }
    // Missing stays "missing" where the reader needs it.
    let mut o: serde_json::Value = serde_json::from_str(LLAVA).unwrap();
    o.as_object_mut().unwrap().remove("vision_config");
    let e = load_model(&o.to_string()).err().unwrap();
    assert!(e.contains("missing field 'vision_config'"), "{e}");
}

#[test]
fn a_wrong_typed_text_config_of_llava_says_wrong_type() {
    let e = load_model(&with(LLAVA, "text_config", serde_json::json!(7))).err().unwrap();
    assert!(e.contains("text_config") && e.contains("wrong type"), "{e}");
}

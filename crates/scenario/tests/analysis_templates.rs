//! Templates: every bundled file parses, the pick follows model family x chip x scenario kind,
//! and edited files are checked.

use tunelab_scenario::templates::*;

#[test]
fn every_bundled_template_parses() {
    let all = bundled_templates();
    assert_eq!(all.len(), 12, "a bundled template failed to parse");
    for t in &all {
        let src = bundled_template_source(&t.name).expect("source by name");
        assert_eq!(&parse_template(src).unwrap(), t);
        // The editable file round-trips through its own JSON.
        assert_eq!(&parse_template(&t.to_json()).unwrap(), t);
    }
}

#[test]
fn pick_follows_family_chip_and_kind() {
    assert_eq!(pick_template("llm", "910B2", "cloud").name, "llm-910b-cloud");
    assert_eq!(pick_template("moe", "910B3", "cloud").name, "moe-910b-cloud");
    assert_eq!(pick_template("diffusion", "310P3", "edge").name, "diffusion-310p-edge");
    assert_eq!(pick_template("llm", "310P3", "edge").name, "llm-310p-edge");
    assert_eq!(pick_template("llm", "310B1", "device").name, "llm-310b-device");
    // Memory-first wins for a "device" request even on a big chip.
    assert_eq!(pick_template("llm", "910B2", "device").name, "llm-310b-device");
    // Unknown family: the generic template.
    assert_eq!(pick_template("speech", "910B2", "cloud").name, "generic");
    let training = pick_template_from(&bundled_templates(), "llm", "910B2", "cloud", Some("training")).unwrap();
    assert_eq!(training.name, "llm-910b-training");
    let edge = pick_template("llm", "310P3", "edge");
    assert_eq!(edge.ranked_objectives()[0].metric, "tpot_ms");
}

#[test]
fn edited_templates_are_checked() {
    let mut t = pick_template("llm", "910B2", "cloud");
    t.budget = 0;
    assert!(parse_template(&t.to_json()).unwrap_err().contains("budget"));
    let mut t = pick_template("llm", "910B2", "cloud");
    t.stage = "compile".into();
    assert!(parse_template(&t.to_json()).unwrap_err().contains("stage"));
    let mut t = pick_template("llm", "910B2", "cloud");
    t.constraints.memory_fraction_max = Some(1.5);
    assert!(parse_template(&t.to_json()).is_err());
    assert!(parse_template("{not json").unwrap_err().contains("JSON"));
    assert_eq!(model_family_of("mixtral"), "moe");
    assert_eq!(model_family_of("qwen2"), "llm");
}

#[test]
fn every_template_builds_its_stage_on_a_fitting_scenario() {
    for t in bundled_templates() {
        let family = t.model_families.iter().find(|f| *f != "*").map(String::as_str).unwrap_or("llm");
        let model = match family {
            "moe" => "mixtral-8x7b",
            "diffusion" => "sd15-unet",
            "multimodal" => "llava-1.5-7b",
            _ => "llama-2-7b",
        };
        let device = match t.devices.iter().find(|d| *d != "*").map(String::as_str) {
            Some("310P") => "310P3",
            Some("310B") => "310B1",
            Some("910") => "910",
            _ => "910B2",
        };
        let mut s = tunelab_scenario::Scenario::default();
        s.model = tunelab_scenario::scenario::ModelRef::Id(model.into());
        s.device = tunelab_scenario::scenario::DeviceRef::Name(device.into());
        s.workload.batch = 1;
        let mem = tunelab_sim::bundled_device(device).unwrap().memory_bytes as f64 / (1u64 << 30) as f64;
        apply_template(&t, &mut s, Some(mem)).unwrap();
        if let Err(e) = tunelab_scenario::stages::setup(&s) {
            panic!("template {} on {model}/{device}: {e}", t.name);
        }
    }
}

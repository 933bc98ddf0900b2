//! Templates: every bundled file parses, the pick follows model family x chip x scenario kind,
//! and edited files are checked.

use tunelab_scenario::templates::*;

#[test]
fn every_bundled_template_parses() {
    let all = bundled_templates();
    assert_eq!(all.len(), 9, "a bundled template failed to parse");
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

//! Issue 44: a setting that does not apply to the model is refused, naming it, instead of being
//! priced as something else (`frozen: ["llm"]` on a text-only model froze the whole model and
//! reported a faster step) or silently ignored.

use tunelab_scenario::{Run, Scenario};

const LLAMA: &str = r#"{"stage": "training", "model": "llama-2-7b", "device": "910B2", "budget": 1,
 "workload": {"micro_batch": 1, "seq_len": 1024, "global_batch": 16}, "training": {"chips": 8 EXTRA},
 "space": {"tp": {"fixed": 1}, "pp": {"fixed": 1}, "dp": {"fixed": 8}, "micro_batch": {"fixed": 1}, "precision": {"fixed": "bf16"}, "optimizer_sharding": {"fixed": "zero2"}, "recompute": {"fixed": "none"}}}"#;

const LLAVA: &str = r#"{"stage": "training", "model": "llava-1.5-7b", "device": "910B2", "budget": 1,
 "workload": {"micro_batch": 2, "seq_len": 512, "global_batch": 16}, "training": {"chips": 8 EXTRA},
 "space": {"tp": {"fixed": 1}, "pp": {"fixed": 1}, "dp": {"fixed": 8}, "micro_batch": {"fixed": 2}, "precision": {"fixed": "bf16"}, "optimizer_sharding": {"fixed": "zero2"}, "recompute": {"fixed": "none"}}}"#;

fn refusal(base: &str, extra: &str) -> String {
    let s = Scenario::from_json(&base.replace(" EXTRA", extra)).unwrap_or_else(|e| panic!("{extra}: the file itself reads: {e}"));
    match Run::new(&s) {
        Ok(_) => panic!("{extra}: accepted, but it does not apply"),
        Err(e) => e,
    }
}

fn accepted(base: &str, extra: &str) {
    let s = Scenario::from_json(&base.replace(" EXTRA", extra)).unwrap_or_else(|e| panic!("{extra}: {e}"));
    if let Err(e) = Run::new(&s) {
        panic!("{extra}: refused, but it applies: {e}");
    }
}

#[test]
fn freezing_a_part_a_text_only_model_does_not_have_is_refused_naming_it() {
    for part in ["llm", "vision"] {
        let e = refusal(LLAMA, &format!(r#", "frozen": ["{part}"]"#));
        assert!(e.contains("training.frozen") && e.contains(&format!("'{part}'")) && e.contains("does not apply"), "{part}: {e}");
    }
    // On a multimodal model both parts exist, alone or together (the projector-only pretrain).
    accepted(LLAVA, r#", "frozen": ["vision"]"#);
    accepted(LLAVA, r#", "frozen": ["vision", "llm"]"#);
    accepted(LLAVA, "");
}

#[test]
fn diffusion_only_settings_on_a_language_model_are_refused_naming_them() {
    for (field, extra) in [("precomputed", r#", "precomputed": ["vae"]"#), ("resolution", r#", "resolution": 512"#), ("width", r#", "width": 832"#), ("frames", r#", "frames": 81"#)] {
        let e = refusal(LLAMA, extra);
        assert!(e.contains(&format!("training.{field}")) && e.contains("diffusion"), "{field}: {e}");
    }
}

#[test]
fn moe_settings_on_a_dense_model_are_refused_naming_them() {
    for (field, extra) in [
        ("moe_imbalance", r#", "moe_imbalance": 1.5"#),
        ("moe_token_dispatcher", r#", "moe_token_dispatcher": "allgather""#),
        ("moe_grouped_gemm", r#", "moe_grouped_gemm": false"#),
        ("moe_permutation_async_comm", r#", "moe_permutation_async_comm": true"#),
        ("expert_parallel", r#", "expert_parallel": [1, 2]"#),
    ] {
        let e = refusal(LLAMA, extra);
        assert!(e.contains(&format!("training.{field}")) && e.contains("dense"), "{field}: {e}");
    }
    // The defaults, written out, are no setting at all.
    accepted(LLAMA, r#", "moe_token_dispatcher": "alltoall", "moe_grouped_gemm": true, "expert_parallel": [1]"#);
}

#[test]
fn every_bundled_training_scenario_still_runs() {
    for (name, s) in tunelab_scenario::spec::bundled::bundled_scenarios() {
        let Ok(s) = s else { continue };
        if s.stage != tunelab_scenario::spec::scenario::Stage::Training {
            continue;
        }
        if let Err(e) = Run::new(&s) {
            assert!(!e.contains("does not apply") && !e.contains("applies only"), "{name}: {e}");
        }
    }
}

//! An offline OM encoder on a chip whose cube reads only FRACTAL_NZ (the 310P of an Atlas 300I
//! Duo, issue 43): ATC's ND <-> NZ TransData kernels around the attention's batch matmuls are
//! priced and named in the step breakdown; the A2 chips, whose cube reads ND, run none.

use tunelab_scenario::Scenario;

/// The bundled BGE scenario as MindIE's offline (OM) model on `chip`, batch 20 of 512 tokens.
fn om_bge(chip: &str) -> Scenario {
    let base = tunelab_scenario::bundled_scenario("bge-large-910B4-embedding").unwrap();
    let mut v: serde_json::Value = serde_json::to_value(&base).unwrap();
    v["device"] = chip.into();
    v["deployment"]["serving"]["runtime"] = "om".into();
    v["workload"]["batch"] = 20.into();
    v["workload"]["input_len"] = 512.into();
    v["deployment"]["batches"] = serde_json::json!([20]);
    v["deployment"]["precisions"] = serde_json::json!(["fp16"]);
    Scenario::from_json(&v.to_string()).unwrap()
}

/// The step breakdown's operator names and its sequences per second.
fn breakdown(s: &Scenario) -> (Vec<String>, f64) {
    let mut st = tunelab_scenario::stages::setup(s).unwrap();
    let names = st.space.names().to_vec();
    let values = match st.objective.evaluate(&st.baseline) {
        tunelab_search::Outcome::Ok(v) => v,
        o => panic!("{o:?}"),
    };
    let metrics: Vec<(String, f64, String)> = st.metrics.iter().zip(&values).map(|(m, v)| (m.name.clone(), *v, m.unit.clone())).collect();
    let rps = metrics.iter().find(|m| m.0 == "requests_per_s").map(|m| m.1).unwrap();
    let b = tunelab_scenario::explore::breakdown(s, &names, &st.baseline, &metrics).unwrap();
    (b.ops.iter().map(|o| o.name.clone()).collect(), rps)
}

/// What a user sees on a 300I Duo: the heads' TransData as their own lines, beside the
/// attention; on a 910B4 the same OM model has none.
#[test]
fn the_310p_om_encoder_names_its_transdata_and_the_910b4_has_none() {
    let (duo, _) = breakdown(&om_bge("310P3"));
    for line in ["layer.attn.heads.nd_to_nz", "layer.attn.heads.nz_to_nd", "layer.attn.core"] {
        assert!(duo.iter().any(|n| n == line), "no {line} in {duo:?}");
    }
    let (a2, _) = breakdown(&om_bge("910B4"));
    assert!(!a2.iter().any(|n| n.contains("nd_to_nz") || n.contains("nz_to_nd")), "{a2:?}");
}

/// The TransData costs what it moves: the 300I Duo's OM BGE at 20 x 512 lands within the
/// published 39.4 sequences/s per card (two chips) by 18%, where without it (the A2 rule on
/// the same chip) it was 38% fast. The engine (ATB) runtime is not an OM model: untouched.
#[test]
fn the_transdata_slows_the_300i_duo_om_model_to_the_published_rate() {
    let (_, per_chip) = breakdown(&om_bge("310P3"));
    let card = 2.0 * per_chip;
    assert!((card / 39.4 - 1.0).abs() <= 0.18, "{card} sequences/s per card against 39.4 published");
    let mut v: serde_json::Value = serde_json::to_value(om_bge("310P3")).unwrap();
    v["deployment"]["serving"]["runtime"] = "engine".into();
    let (engine, _) = breakdown(&Scenario::from_json(&v.to_string()).unwrap());
    assert!(!engine.iter().any(|n| n.contains("nd_to_nz")), "{engine:?}");
}

/// The stage says why: a note names the chip's NZ-only cube and the TransData lines; the A2
/// chip's OM model gets no such note.
#[test]
fn the_stage_notes_the_nz_only_cube() {
    let st = tunelab_scenario::stages::setup(&om_bge("310P3")).unwrap();
    let n = st.notes.iter().find(|n| n.contains("FRACTAL_NZ")).unwrap_or_else(|| panic!("no NZ note in {:?}", st.notes));
    assert!(n.contains("310P3") && n.contains("layer.attn.heads.nd_to_nz") && n.contains("TransData"), "{n}");
    let st = tunelab_scenario::stages::setup(&om_bge("910B4")).unwrap();
    assert!(!st.notes.iter().any(|n| n.contains("FRACTAL_NZ")), "{:?}", st.notes);
}

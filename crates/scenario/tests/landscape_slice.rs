//! A slice of a Kernel Tuner cache (`space` entries on a landscape scenario): two parameters of
//! a real cache raced with the others fixed at the best measured configuration. The slice is
//! part of the scenario (a link round-trips it); a bad entry is refused naming the field; a toy
//! landscape refuses `space` entries instead of ignoring them.

use tunelab_scenario::stages::landscape::{self, KernelTunerSource, Landscape, LandscapeSource, ToySpec};
use tunelab_scenario::{url, Run, Scenario, Stage};

fn cache_bytes(file: &str) -> Vec<u8> {
    std::fs::read(format!("{}/../../assets/kernel-tuner/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn conv() -> Scenario {
    let mut s = Scenario { stage: Stage::Landscape, landscape: Some(LandscapeSource::KernelTuner(KernelTunerSource::Bundled("convolution_RTX_2080_Ti".into()))), budget: 30, seed: 0, ..Scenario::default() };
    s.strategy.name = "random".into();
    s
}

/// The gallery's slice: block_size_x by block_size_y, every other parameter at the best.
fn gallery_slice() -> Scenario {
    Scenario::from_json(include_str!("../../../assets/scenarios/landscape-kt-slice.json")).unwrap()
}

#[test]
fn the_gallery_slice_holds_the_other_parameters_at_the_best_measured_configuration() {
    let bytes = cache_bytes("convolution_RTX_2080_Ti.json");
    let whole = Landscape::build(&conv(), Some(&bytes)).unwrap();
    let (best, v) = whole.optimum().unwrap();
    let names = whole.space().names().to_vec();
    println!("best of the cache: {v} at {}", names.iter().zip(&best.0).map(|(n, x)| format!("{n}={x}")).collect::<Vec<_>>().join(", "));
    let s = gallery_slice();
    s.validate().unwrap();
    let land = Landscape::build(&s, Some(&bytes)).unwrap();
    let space = landscape::slice_space(&s, &land).unwrap();
    let free: Vec<&str> = space.params().iter().filter(|p| p.levels().unwrap_or(0) > 1).map(|p| p.name.as_str()).collect();
    assert_eq!(free.len(), 2, "two free parameters: {free:?}");
    for (i, p) in space.params().iter().enumerate() {
        if p.levels() == Some(1) {
            assert_eq!(p.level_value(0), best.0[i], "{} is fixed at the best configuration's value", p.name);
        }
    }
    assert!(space.contains(&best), "the slice contains the cache's optimum");
    assert_eq!(landscape::optimum_in(&land, &space).map(|o| o.1), Some(v));
    let n = space.members().unwrap().len();
    println!("slice: {n} configurations over {free:?}");
    assert!(n >= 16 && n < whole.space().members().unwrap().len());
    // It races, on the slice only.
    let mut run = Run::with_landscape(&s, land).unwrap();
    while !run.step(50).done {}
    assert!(run.trials(0).iter().all(|t| space.contains(&t.config)));
    // The link carries the slice.
    let back = url::decode(&url::encode(&s)).unwrap();
    assert_eq!(back.space, s.space);
}

#[test]
fn a_bad_slice_is_refused_naming_the_field_and_a_toy_refuses_space_entries() {
    let bytes = cache_bytes("convolution_RTX_2080_Ti.json");
    let mut s = conv();
    s.space.insert("no_such".into(), serde_json::from_value(serde_json::json!({"fixed": 1})).unwrap());
    let land = Landscape::build(&s, Some(&bytes)).unwrap();
    let e = landscape::slice_space(&s, &land).unwrap_err();
    assert!(e.contains("space.no_such"), "{e}");
    let mut s = conv();
    s.space.insert("block_size_x".into(), serde_json::from_value(serde_json::json!({"fixed": 7})).unwrap());
    let e = landscape::slice_space(&s, &land).unwrap_err();
    assert!(e.contains("space.block_size_x") && e.contains("no cached configuration"), "{e}");
    let mut t = Scenario { stage: Stage::Landscape, landscape: Some(LandscapeSource::Toy(ToySpec { function: "branin".into(), resolution: 16 })), budget: 5, ..Scenario::default() };
    t.space.insert("x".into(), serde_json::from_value(serde_json::json!({"fixed": 0})).unwrap());
    let e = Run::new(&t).err().unwrap();
    assert!(e.contains("space") && e.contains("toy"), "{e}");
}

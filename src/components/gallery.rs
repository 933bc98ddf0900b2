//! The teaching gallery: five 2-D landscapes, one click each, on the teaching layout, so the
//! whole surface is drawn on the canvas and every strategy's proposals move on it:
//!
//! - smooth: the Branin function (three equal minima in one curved valley);
//! - rugged: Rastrigin (a bowl covered in local minima);
//! - deceptive: Schwefel (the best basin in a far corner, away from the broad trend);
//! - a real tiling space: the query block x key/value block of Llama-2-7B's 4,096-token flash
//!   attention on a 910B2, each cell priced by the device model (`teach_canvas`). Its default
//!   (128 x 128) is not its best cell, so the race has something to find (a matmul slice at the
//!   device model's default tiling had none: that default is its own heuristic's best split);
//! - a real Kernel Tuner cache slice: two parameters of the bundled convolution cache (RTX
//!   2080 Ti), every other one fixed at the best measured configuration (`landscape::slice`).
//!
//! Each is a plain scenario (the slices are `space` entries), so its link reproduces it. They
//! are raced by the same four strategies at a teaching pace (10 evaluations a second per
//! strategy), so the cards can be read while they move; the speed menu changes it.

use crate::state::Ctx;
use leptos::prelude::*;
use tunelab_scenario::Scenario;

/// The gallery's entries: (id, title, one line on what it shows, scenario JSON).
pub const GALLERY: &[(&str, &str, &str, &str)] = &[
    (
        "toy-branin",
        "Smooth",
        "The Branin function on a 64 x 64 grid: the whole surface is drawn and every sample lands on it. Three equal minima: which strategies find one, which find all three?",
        tunelab_sim::json_asset!("../../assets/scenarios/landscape-branin.json"),
    ),
    ("toy-rastrigin", "Rugged", "Rastrigin on a 64 x 64 grid: a bowl covered in a regular grid of local minima. Greedy steps get stuck in the nearest dimple; watch who escapes.", TOY_RASTRIGIN),
    ("toy-schwefel", "Deceptive", "Schwefel on a 64 x 64 grid: the best basin lies in a far corner, away from the next-best ones, so following the broad trend leads away from it.", TOY_SCHWEFEL),
    (
        "tiling-slice",
        "Tiling slice (real)",
        "The query block x key/value block tiling of Llama-2-7B's 4,096-token flash attention on a 910B2; every cell priced by Tunelab's device model. The default 128 x 128 tiling is not the fastest: how quickly does each strategy find the better one?",
        tunelab_sim::json_asset!("../../assets/scenarios/flash-attention-tiling-slice.json"),
    ),
    (
        "kt-slice",
        "Kernel Tuner slice (real)",
        "Two parameters of a convolution kernel measured on an RTX 2080 Ti (Kernel Tuner cache), the others fixed at the best measured configuration: real, noisy data.",
        tunelab_sim::json_asset!("../../assets/scenarios/landscape-kt-slice.json"),
    ),
];

const TOY_RASTRIGIN: &str = r#"{
  "version": 1,
  "name": "Toy landscape: the Rastrigin function (rugged)",
  "description": "A 2-D analytic function on a 64 x 64 grid, drawn whole: a bowl covered in a regular grid of local minima, global minimum 0 at the origin. Strategies that only take greedy steps stop in the nearest dimple.",
  "stage": "landscape",
  "landscape": { "toy": { "function": "rastrigin", "resolution": 64 } },
  "strategy": { "name": "bayes" },
  "compare": [ { "name": "genetic" }, { "name": "annealing" }, { "name": "random" } ],
  "budget": 60,
  "seed": 1
}"#;

const TOY_SCHWEFEL: &str = r#"{
  "version": 1,
  "name": "Toy landscape: the Schwefel function (deceptive)",
  "description": "A 2-D analytic function on a 64 x 64 grid, drawn whole: the global minimum (0 at 420.97, 420.97) lies in a far corner, and the next-best basins are far from it, so a strategy that follows the broad trend is led away.",
  "stage": "landscape",
  "landscape": { "toy": { "function": "schwefel", "resolution": 64 } },
  "strategy": { "name": "bayes" },
  "compare": [ { "name": "genetic" }, { "name": "annealing" }, { "name": "random" } ],
  "budget": 60,
  "seed": 1
}"#;

/// Evaluations per second per strategy the gallery's races run at.
pub const TEACHING_SPEED: u32 = 10;

/// A gallery entry's scenario, on the teaching layout at the teaching pace.
pub fn gallery_scenario(id: &str) -> Result<Scenario, String> {
    let (_, _, _, json) = GALLERY.iter().find(|g| g.0 == id).ok_or_else(|| format!("no gallery entry '{id}'"))?;
    let mut s = Scenario::from_json(json).map_err(|e| format!("gallery entry '{id}': {e}"))?;
    s.view = serde_json::json!({ "layout": "teach", "speed": TEACHING_SPEED });
    s.validate().map_err(|e| format!("gallery entry '{id}': {e}"))?;
    Ok(s)
}

/// The gallery strip (shown on the teaching layout).
#[component]
pub fn Gallery() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let load = move |id: &'static str| {
        move |_| match gallery_scenario(id) {
            Ok(s) => {
                ctx.replace(s);
            }
            Err(e) => ctx.fail(e),
        }
    };
    view! {
        <span class="gallery" data-testid="gallery">
            <span class="small muted">"Gallery:"</span>
            {GALLERY.iter().map(|&(id, title, what, _)| view! {
                <button class="gallery-item" data-testid=format!("gallery-{id}") title=what on:click=load(id)>{title}</button>
            }).collect_view()}
        </span>
    }
}

#[cfg(all(test, feature = "page-engine"))] // they step runs on the page
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_a_valid_teaching_scenario_with_four_strategies() {
        for (id, ..) in GALLERY {
            let s = gallery_scenario(id).unwrap();
            assert_eq!(s.strategies().len(), 4, "{id}");
            assert_eq!(s.view["layout"], "teach");
        }
        assert!(gallery_scenario("nope").is_err());
    }

    #[test]
    fn the_toy_and_tiling_entries_run_and_the_tiling_space_is_a_two_axis_slice() {
        for id in ["toy-branin", "toy-rastrigin", "toy-schwefel"] {
            let toy = gallery_scenario(id).unwrap();
            let mut t = crate::session::Session::new(&toy).unwrap();
            t.step(8);
            assert!(t.view().best.is_some(), "{id}");
        }
        let tiling = gallery_scenario("tiling-slice").unwrap();
        let mut m = crate::session::Session::new(&tiling).unwrap();
        let names = m.run().space().names().to_vec();
        assert!(names.iter().any(|n| n.ends_with(".blockQ")) && names.iter().any(|n| n.ends_with(".blockKv")), "tiling parameters: {names:?}");
        assert!(crate::components::teach_canvas::free_pair(m.run().space()).is_some(), "two free axes");
        let tunelab_search::Outcome::Ok(v) = m.run().baseline() else { panic!("a priced baseline") };
        let baseline = v[0];
        while !m.step(8) {}
        let best: f64 = m.view().best.expect("the kernel is priced").parse().unwrap();
        assert!(best < baseline * 0.95, "the default tiling ({baseline} ms) is not the best cell: the race finds {best} ms");
    }
}

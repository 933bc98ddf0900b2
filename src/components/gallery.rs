//! The teaching gallery: three small scenarios, one click each, on the teaching layout.
//!
//! - a 2-D toy landscape (Branin) whose whole surface is drawn, each strategy's samples on it;
//! - a real Kernel Tuner cache (convolution on an RTX 2080 Ti, measured), replayed;
//! - a matmul tiling space (one 4096 x 4096 x 4096 FP16 matmul on a 910B2, the device model).
//!
//! Each is raced by the same four strategies at a teaching pace (10 evaluations a second per
//! strategy), so the cards can be read while they move; the speed menu changes it.

use crate::state::Ctx;
use leptos::prelude::*;
use tunelab_scenario::Scenario;

/// The gallery's entries: (id, title, one line on what it shows, scenario JSON).
pub const GALLERY: &[(&str, &str, &str, &str)] = &[
    (
        "toy-branin",
        "Toy 2-D landscape",
        "The Branin function on a 64 x 64 grid: the whole surface is drawn and every sample lands on it. Three equal minima: which strategies find one, which find all three?",
        tunelab_sim::json_asset!("../../assets/scenarios/landscape-branin.json"),
    ),
    ("kt-convolution", "Kernel Tuner cache", "A convolution kernel measured on an RTX 2080 Ti (Kernel Tuner 1.5 cache): real, noisy, heavy-tailed data, with failed configurations.", KT_CONVOLUTION),
    ("matmul-tiling", "Matmul tiling", "One 4096 x 4096 x 4096 FP16 matmul on a 910B2: base block sizes, unroll and buffering, priced by Tunelab's device model.", MATMUL_TILING),
];

const KT_CONVOLUTION: &str = r#"{
  "version": 1,
  "name": "Replay: convolution on an RTX 2080 Ti (Kernel Tuner cache)",
  "description": "Real measurements: every configuration of a 2-D convolution kernel timed on an NVIDIA RTX 2080 Ti by Kernel Tuner. The strategies race on the recorded times (a failed configuration costs an evaluation, as in Kernel Tuner's simulation mode); the true optimum is shown once the race ends.",
  "stage": "landscape",
  "landscape": { "kernel_tuner": { "bundled": "convolution_RTX_2080_Ti" } },
  "strategy": { "name": "bayes" },
  "compare": [ { "name": "genetic" }, { "name": "annealing" }, { "name": "random" } ],
  "budget": 100,
  "seed": 0
}"#;

const MATMUL_TILING: &str = r#"{
  "version": 1,
  "name": "Matmul tiling on a 910B2: one 4096 x 4096 x 4096 FP16 matmul",
  "description": "The tiling space of one large matmul on the cube unit: block sizes M, N and K, loop unroll and buffering. Each configuration is priced by the device model (cube steps, L1 and L0 fits, HBM traffic).",
  "model": { "format": "tunelab-graph", "name": "one matmul", "family": "custom", "dtype": "fp16",
    "ops": [ { "name": "matmul", "repeat": 1, "op": { "op": "matmul", "batch": 1, "m": 4096, "n": 4096, "k": 4096, "dtype": "fp16" } } ] },
  "device": "910B2",
  "stage": "operator",
  "operator": { "fusion": false, "epilogue_fusion": false, "loop_unroll": true, "memory_reuse": true },
  "strategy": { "name": "bayes" },
  "compare": [ { "name": "genetic" }, { "name": "annealing" }, { "name": "random" } ],
  "budget": 60,
  "seed": 0
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
    fn the_toy_and_matmul_entries_run_and_the_matmul_space_is_a_tiling_space() {
        let toy = gallery_scenario("toy-branin").unwrap();
        let mut t = crate::session::Session::new(&toy).unwrap();
        t.step(8);
        assert!(t.view().best.is_some());
        let mm = gallery_scenario("matmul-tiling").unwrap();
        let mut m = crate::session::Session::new(&mm).unwrap();
        let names = m.run().space().names().to_vec();
        assert!(names.len() >= 3 && names.iter().any(|n| n.contains("base")), "tiling parameters: {names:?}");
        m.step(8);
        assert!(m.view().best.is_some(), "the matmul is priced");
    }
}

//! Diffusion figures for `tunelab bench`: an SDXL 1024x1024 pipeline tune over steps x
//! precision x attention x ToMe x CFG-parallel x caching (300 evaluations, cold memo: the
//! pipeline's components are built and costed inside the timed run). Printed, never asserted.

use std::time::Instant;
use tunelab_scenario::{Run, Scenario};

/// The benchmark scenario: SDXL at 1024^2 on two 910B2 chips (so CFG parallelism is a choice).
pub const SDXL_TUNE: &str = r#"{"name": "SDXL 1024 pipeline tune", "stage": "diffusion", "model": "sdxl", "device": "910B2",
 "diffusion": {"height": 1024, "width": 1024, "steps": 30, "steps_choices": [20, 25, 30, 40, 50], "chips": 2, "framework": "diffusers"},
 "strategy": {"name": "random", "options": {}}, "budget": 300, "seed": 1}"#;

pub fn figures() -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    let Ok(s) = Scenario::from_json(SDXL_TUNE) else { return out };
    let t0 = Instant::now();
    let Ok(mut run) = Run::new(&s) else { return out };
    let mut guard = 0;
    while !run.is_done() && guard < 100_000 {
        run.step(64);
        guard += 1;
    }
    let secs = t0.elapsed().as_secs_f64();
    let evals: usize = run.lanes().iter().map(|l| l.study.evaluations()).sum();
    out.push(("diffusion_sdxl_1024_tune_300_s".to_string(), serde_json::json!(secs)));
    out.push(("diffusion_sdxl_1024_tune_evaluations".to_string(), serde_json::json!(evals)));
    out.push(("diffusion_sdxl_1024_space_points".to_string(), serde_json::json!(run.space().params().iter().map(|p| p.levels().unwrap_or(1)).product::<usize>())));
    if let Some(b) = run.report().best {
        out.push(("diffusion_sdxl_1024_best_latency_ms".to_string(), serde_json::json!(b)));
    }
    out
}

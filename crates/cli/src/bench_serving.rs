//! Serving figures for `tunelab bench`: the continuous-batching simulation of 1,000 requests
//! (first with its step shapes priced by the device model, then again once priced), and a
//! full Llama-2-7B deployment tune with the scheduler in the loop. Printed, never asserted.

use std::time::Instant;
use tunelab_scenario::{bundled_scenario, Run};
use tunelab_search::{Config, Value};

pub fn figures() -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    if let Ok(mut s) = bundled_scenario("llama2-7b-910B2-deployment") {
        s.deployment.serving.requests = 1000;
        if let Ok(mut setup) = tunelab_scenario::stages::deployment::setup(&s) {
            // batch 64, fp16, tp 1, 0.9 of the chip, paged KV, graph launch, 8192 tokens, chunked.
            let c = Config(vec![
                Value::Int(64),
                Value::Str("fp16".into()),
                Value::Int(1),
                Value::Float(0.9),
                Value::Str("dynamic_pool".into()),
                Value::Str("graph".into()),
                Value::Int(8192),
                Value::Str("on".into()),
            ]);
            let t0 = Instant::now();
            let _ = setup.objective.evaluate(&c);
            out.push(("serving_1000_requests_first_ms".to_string(), serde_json::json!(t0.elapsed().as_secs_f64() * 1e3)));
            let t0 = Instant::now();
            let _ = setup.objective.evaluate(&c);
            out.push(("serving_1000_requests_priced_ms".to_string(), serde_json::json!(t0.elapsed().as_secs_f64() * 1e3)));
        }
    }
    if let Ok(s) = bundled_scenario("llama2-7b-910B2-deployment") {
        let t0 = Instant::now();
        if let Ok(mut run) = Run::new(&s) {
            run.run_to_end();
            out.push(("deployment_tune_llama2_7b_s".to_string(), serde_json::json!(t0.elapsed().as_secs_f64())));
            out.push(("deployment_tune_llama2_7b_evaluations".to_string(), serde_json::json!(s.budget)));
        }
    }
    out
}

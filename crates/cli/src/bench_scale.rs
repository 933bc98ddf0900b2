//! Large-scale serving figures for `tunelab bench` (issue 22): a DeepSeek-V3 deployment tune on
//! 2 Atlas 800 A3 nodes (DP x TP x EP x EPLB x MTP speculative tokens x quantisation x batch, the bundled scenario's 300
//! evaluations), and a 1,000-request prefill-decode disaggregated simulation (first with its
//! steps priced by the device model, then again once priced). Printed, never asserted.

use std::time::Instant;
use tunelab_scenario::{bundled_scenario, Run};
use tunelab_search::Value;

pub fn figures() -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    if let Ok(s) = bundled_scenario("deepseek-v3-2xA3-deployment") {
        let t0 = Instant::now();
        if let Ok(mut run) = Run::new(&s) {
            run.run_to_end();
            out.push(("deployment_tune_deepseek_v3_2xA3_s".to_string(), serde_json::json!(t0.elapsed().as_secs_f64())));
            out.push(("deployment_tune_deepseek_v3_2xA3_evaluations".to_string(), serde_json::json!(s.budget)));
        }
    }
    if let Ok(mut s) = bundled_scenario("qwen3-235b-2xA3-pd-compare") {
        s.deployment.serving.requests = 1000;
        if let Ok(mut setup) = tunelab_scenario::stages::deployment::setup(&s) {
            let names = setup.space.names().to_vec();
            let mut c = setup.baseline.clone();
            for (n, v) in [("pd", Value::Str("1P1D".into())), ("tp", Value::Int(4)), ("dp", Value::Int(4)), ("prefill_tp", Value::Int(4))] {
                if let Some(i) = names.iter().position(|x| x == n) {
                    c.0[i] = v;
                }
            }
            let t0 = Instant::now();
            let _ = setup.objective.evaluate(&c);
            out.push(("disagg_1000_requests_first_ms".to_string(), serde_json::json!(t0.elapsed().as_secs_f64() * 1e3)));
            let t0 = Instant::now();
            let _ = setup.objective.evaluate(&c);
            out.push(("disagg_1000_requests_priced_ms".to_string(), serde_json::json!(t0.elapsed().as_secs_f64() * 1e3)));
        }
    }
    out
}

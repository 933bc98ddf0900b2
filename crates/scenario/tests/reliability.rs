//! Issue 13 regressions at the scenario level: large operator graphs are capped with a clear
//! message and set up in bounded time.

use tunelab_scenario::{Run, Scenario};

fn graph_scenario(n: usize) -> Scenario {
    let ops: Vec<serde_json::Value> = (0..n)
        .map(|i| serde_json::json!({"name": format!("mm{i}"), "op": {"op": "matmul", "batch": 1, "m": 64 + i, "n": 128, "k": 256, "dtype": "fp16", "weight_dtype": null, "epilogue": "none"}}))
        .collect();
    let s = serde_json::json!({"stage": "operator", "budget": 2, "model": {"format": "tunelab-graph", "name": "big", "family": "custom", "dtype": "fp16", "ops": ops}});
    Scenario::from_json(&s.to_string()).unwrap()
}

#[test]
fn operator_graphs_are_capped_with_a_clear_message() {
    let cap = tunelab_sim::model::graph::MAX_OPS;
    let e = Run::new(&graph_scenario(cap + 1)).err().expect("over the cap is refused");
    assert!(e.contains("'ops'") && e.contains(&format!("at most {cap}")), "{e}");
    // At the cap it sets up (one block per distinct operator) and runs.
    let mut run = Run::new(&graph_scenario(cap)).unwrap();
    run.run_to_end();
    assert!(run.best_value(0).is_some());
}

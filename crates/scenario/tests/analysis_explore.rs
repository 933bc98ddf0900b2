//! Explore and impact: heat maps mark infeasible cells with reasons; point detail adds up; the
//! impact analyser moves the right measures.

use tunelab_scenario::explore::{heatmap, point_detail};
use tunelab_scenario::impact::{analyse, Change, ImpactWeights};
use tunelab_scenario::{Scenario, Stage};

fn training() -> Scenario {
    let mut s = Scenario::default();
    s.stage = Stage::Training;
    s.workload.global_batch = 64;
    s
}

#[test]
fn heatmap_marks_infeasible_cells_with_reasons() {
    let s = training();
    let h = heatmap(&s, "tp", "dp", None).unwrap();
    assert_eq!(h.cells.len(), h.y_values.len());
    assert_eq!(h.x_param, "tp");
    let mut feasible = 0;
    for (j, row) in h.cells.iter().enumerate() {
        for (i, c) in row.iter().enumerate() {
            let (tp, dp) = (h.x_values[i].as_i64().unwrap(), h.y_values[j].as_i64().unwrap());
            if tp * dp != 8 {
                assert!(c.value.is_none() && c.reason.as_deref().unwrap().contains("tp * pp * cp * dp == 8"), "{c:?}");
            } else if c.value.is_some() {
                feasible += 1;
            } else {
                assert!(c.reason.is_some());
            }
        }
    }
    assert!(feasible >= 2);
    assert!(h.best.is_some());
    // Memory axis: the largest micro-batch without recomputation runs out of memory, with a reason.
    let h = heatmap(&s, "micro_batch", "recompute", None).unwrap();
    let reasons: Vec<&str> = h.cells.iter().flatten().filter_map(|c| c.reason.as_deref()).collect();
    assert!(reasons.iter().any(|r| r.contains("out of memory")), "{reasons:?}");
    assert!(heatmap(&s, "tp", "tp", None).is_err());
    assert!(heatmap(&s, "nope", "tp", None).unwrap_err().contains("no parameter"));
}

#[test]
fn point_detail_gives_engines_and_roofline() {
    let s = training();
    let st = tunelab_scenario::training::setup(&s).unwrap();
    let d = point_detail(&s, &st.baseline).unwrap();
    assert!(d.total_ms > 0.0 && d.peak_tflops > 0.0 && d.ridge_intensity > 0.0);
    let exposed: f64 = d.exposed_ms.values().sum();
    assert!((exposed - d.total_ms).abs() / d.total_ms < 1e-6, "exposed {exposed} vs total {}", d.total_ms);
    assert!(d.attained_tflops <= d.peak_tflops);
    assert!(!d.ops.is_empty());
}

#[test]
fn impact_of_quantisation_and_recompute() {
    let mut s = Scenario::default();
    s.workload.global_batch = 64;
    // Impact prices through the deployment stage, host costs included: an eager decode step at
    // batch 8 is host-bound, so halving the weight bytes shows only with graph launch.
    s.deployment.launch_modes = vec!["graph".into()];
    let q = analyse(&s, &Change { precision: Some("w8a16".into()), ..Default::default() }, ImpactWeights::default()).unwrap();
    let get = |r: &tunelab_scenario::impact::ImpactReport, m: &str| r.rows.iter().find(|x| x.measure == m).unwrap().clone();
    assert!(get(&q, "model size").improvement.unwrap() > 0.3);
    assert!(get(&q, "TPOT").improvement.unwrap() > 0.0);
    assert_eq!(get(&q, "memory per chip").improvement, Some(0.0));
    assert!(q.composite > 0.0);
    let r = analyse(&s, &Change { recompute: Some("full".into()), ..Default::default() }, ImpactWeights::default()).unwrap();
    assert!(get(&r, "memory per chip").improvement.unwrap() > 0.0);
    assert!(get(&r, "step time").improvement.unwrap() < 0.0);
    assert_eq!(get(&r, "TPOT").improvement, Some(0.0));
}

//! Hand-rolled SVG charts for the live tuning views and the teaching views.
//!
//! Why SVG text: every chart is drawn by a plain function `to_svg_string(&data) -> String`
//! that uses no web APIs, so its layout is unit-tested natively and "download as SVG" saves
//! exactly what the screen shows. Each Leptos component wraps that text in a
//! `<div class="tl-chart ...">` (the text is built by our own escaping builder, see
//! [`svg::esc`], so model names with markup or script are inert). Data props are
//! `Signal<...>` with `#[prop(into)]`, so a plain value or a signal both work.
//!
//! Robustness: empty data, single points, equal min/max, NaN and infinities never panic;
//! values that cannot be drawn are left out and a note in the chart says how many.
//!
//! Colours: Okabe-Ito for series (with dash patterns as a second cue), a viridis-like ramp
//! for values, grey plus hatching for infeasible cells and trials.
//!
//! CSS: `www/charts.css` (link it from index.html) styles these classes:
//! `tl-chart` (wrapper div, one per chart, plus `tl-chart-<kind>`), `tl-svg` (the svg, scaled
//! to the wrapper's width), `tl-grid`, `tl-tick`, `tl-axis-label`, `tl-chart-title`,
//! `tl-legend`, `tl-note`, `tl-skipped`, `tl-cell` (heat-map cells, focusable),
//! `tl-cell-selected`, `tl-teach` and `tl-teach-text` (teaching views with their
//! explanation), `tl-progress`, `tl-progress-bar`, `tl-progress-label`. Charts draw
//! correctly without the stylesheet (presentation attributes are inline); text and axes use
//! `currentColor`, so they follow the page's text colour.

pub mod axes;
#[cfg(all(test, target_arch = "wasm32"))]
mod browser_tests;
pub mod breakdown;
pub mod convergence;
pub mod heatmap;
pub mod numbers;
pub mod pipeline;
pub mod pareto;
pub mod progress;
pub mod roofline;
pub mod scale;
pub mod scatter;
pub mod surface;
pub mod svg;
pub mod teaching;
pub mod teaching_model;

pub use breakdown::{BreakdownChart, BreakdownData, BreakdownRow, HotspotChart, HotspotData, ENGINES};
pub use convergence::{best_so_far, ConvergenceChart, ConvergenceData, ConvergenceSeries};
pub use heatmap::{HeatCell, HeatmapChart, HeatmapData};
pub use pareto::{pareto_front, ParetoChart, ParetoData, ParetoPoint};
pub use progress::ProgressBar;
pub use roofline::{Ceiling, RooflineChart, RooflineData, RooflinePoint};
pub use scatter::{PointState, ScatterChart, ScatterData, ScatterPoint};
pub use teaching::{AnnealingView, GaView};
pub use teaching_model::{GpView, RlView};

#[cfg(test)]
mod tests {
    //! Every chart, fed empty, single-point, NaN-laden and hostile data, must give well-formed
    //! SVG with no script and no NaN coordinates.
    use super::svg::check_well_formed;
    use super::*;
    use serde_json::json;

    const EVIL: &str = "<script>alert(1)</script>\"&'";

    fn all_charts(v: f64, n: usize) -> Vec<String> {
        let vals = vec![v; n];
        let pts = |k| vals.iter().enumerate().map(|(i, y)| (i as f64 + k, *y)).collect::<Vec<_>>();
        let sp = |s| ScatterPoint { x: v, y: 2.0, value: v, state: s, label: EVIL.into() };
        let pp = ParetoPoint { a: v, b: v, feasible: true, label: EVIL.into() };
        let cell = HeatCell { value: v, infeasible: None };
        let bad = HeatCell { value: v, infeasible: Some(EVIL.into()) };
        let snap = json!({"generation": 1, "population_best": v, "temperature": v, "candidates": [{"x": 0.5, "mean": v, "std": 1.0, "value": v, "low": v, "high": v, "acquisition": v}], "choice_probabilities": {EVIL: [v, 0.5]}});
        let snaps = vec![snap.clone(); n];
        vec![
            convergence::to_svg_string(&ConvergenceData { title: EVIL.into(), y_label: EVIL.into(), series: vec![ConvergenceSeries { name: EVIL.into(), points: pts(1.0), labels: vec![EVIL.into()] }, ConvergenceSeries { name: "b".into(), points: pts(0.0), labels: Vec::new() }], log_y: true }),
            scatter::to_svg_string(&ScatterData { value_label: EVIL.into(), points: vec![sp(PointState::Ok); n].into_iter().chain([sp(PointState::Failed), sp(PointState::Infeasible)]).collect(), best: Some(0), log_x: true, x_categories: if n == 1 { vec![EVIL.into()] } else { vec![] }, ..Default::default() }),
            pareto::to_svg_string(&ParetoData { x_label: EVIL.into(), points: vec![pp; n], log_y: true, ..Default::default() }),
            roofline::to_svg_string(&RooflineData { title: EVIL.into(), peaks: vec![Ceiling { label: EVIL.into(), value: v }], bandwidths: vec![Ceiling { label: "HBM".into(), value: 1000.0 }], points: vec![RooflinePoint { label: EVIL.into(), intensity: v, tflops: v, highlight: true }; n] }),
            breakdown::to_svg_string(&BreakdownData { rows: vec![BreakdownRow { label: EVIL.into(), times: vals.clone() }; n], engines: vec![EVIL.into()], ..Default::default() }),
            breakdown::hotspot_svg_string(&HotspotData { items: vec![(EVIL.into(), v); n], ..Default::default() }),
            heatmap::to_svg_string(&HeatmapData { x_label: EVIL.into(), x_values: vec![EVIL.into(); n], y_values: vec!["1".into(); 2], cells: vec![vec![cell; n], vec![bad; n]], selected: Some((0, 0)), ..Default::default() }),
            teaching::ga_svg_string(&snaps),
            teaching::annealing_svg_string(&snaps),
            teaching_model::gp_svg_string(&snap, EVIL, EVIL),
            teaching_model::rl_svg_string(&snap),
            progress::to_svg_string(n, 3, EVIL),
        ]
    }

    #[test]
    fn every_chart_is_well_formed_on_edge_cases() {
        for v in [1.0, 0.0, -3.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, 1e-300] {
            for n in [0, 1, 3] {
                for (k, s) in all_charts(v, n).iter().enumerate() {
                    if let Err(e) = check_well_formed(s) {
                        panic!("chart {k} with value {v} x{n}: {e}\n{s}");
                    }
                    assert!(!s.contains("<script"), "chart {k} leaks markup");
                }
            }
        }
    }
}

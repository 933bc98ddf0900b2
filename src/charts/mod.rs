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
pub mod breakdown;
pub mod convergence;
pub mod heatmap;
pub mod pareto;
pub mod progress;
pub mod roofline;
pub mod scale;
pub mod scatter;
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

//! Trials over the search space, projected on two chosen parameters; colour = objective value.

use leptos::prelude::*;

use super::axes::{self, Frame, Swatch};
use super::scale::{extent, format_num, positive_extent, Scale};
use super::svg::{px, viridis, Svg, FAILED, INFEASIBLE};

/// Outcome of a trial, as the scatter marks it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PointState {
    /// Evaluated; coloured by its value.
    #[default]
    Ok,
    /// Violates a constraint (grey cross).
    Infeasible,
    /// The evaluation failed (hollow square).
    Failed,
}

/// One trial, already projected on the two chosen parameters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScatterPoint {
    /// Value of the x parameter (a category's index when `x_categories` is set).
    pub x: f64,
    /// Value of the y parameter (a category's index when `y_categories` is set).
    pub y: f64,
    /// Objective value (ignored unless `state` is `Ok`).
    pub value: f64,
    /// Trial outcome.
    pub state: PointState,
    /// Tooltip text, e.g. "trial 12: baseM=128 baseN=64" (the reason for infeasible ones).
    pub label: String,
}

/// Everything the scatter chart shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScatterData {
    /// Chart title.
    pub title: String,
    /// X axis label (parameter name, with unit if any).
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Colour-bar label: the objective with its unit, e.g. "latency (µs)".
    pub value_label: String,
    /// The trials.
    pub points: Vec<ScatterPoint>,
    /// Index into `points` of the best trial, drawn highlighted.
    pub best: Option<usize>,
    /// Lower values are better (the colour ramp then puts the brightest colour on the lowest).
    pub minimize: bool,
    /// Logarithmic x axis (e.g. for power-of-two tile sizes).
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Category names when x is categorical (x values are then indices).
    pub x_categories: Vec<String>,
    /// Category names when y is categorical.
    pub y_categories: Vec<String>,
}

/// Chart size in pixels.
pub const SIZE: (f64, f64) = (560.0, 360.0);

fn axis_scale(vals: impl Iterator<Item = f64> + Clone, log: bool, cats: usize, range: (f64, f64)) -> Scale {
    if cats > 0 {
        return Scale::linear((-0.5, cats as f64 - 0.5), range);
    }
    if log {
        let e = positive_extent(vals).unwrap_or((1.0, 10.0));
        Scale::log((e.0 / 1.3, e.1 * 1.3), range)
    } else {
        let e = extent(vals).unwrap_or((0.0, 1.0));
        let pad = (e.1 - e.0) * 0.05;
        Scale::linear((e.0 - pad, e.1 + pad), range)
    }
}

fn ticks(s: &Scale, cats: &[String]) -> Vec<f64> {
    if cats.is_empty() { s.ticks(6) } else { (0..cats.len()).step_by(cats.len().div_ceil(10).max(1)).map(|i| i as f64).collect() }
}

fn tick_label(cats: &[String], v: f64) -> String {
    if cats.is_empty() {
        return format_num(v);
    }
    let i = v.round();
    if i >= 0.0 && (i as usize) < cats.len() { axes::truncate(&cats[i as usize], 10) } else { String::new() }
}

/// The chart as standalone SVG text.
pub fn to_svg_string(d: &ScatterData) -> String {
    let f = Frame::new(SIZE.0, SIZE.1).with_right(130.0);
    let title = if d.title.is_empty() { "Trials over the space" } else { &d.title };
    let desc = format!(
        "{} trials plotted by {} and {}; colour shows {}; grey crosses are infeasible, hollow squares failed, the ringed point is the best.",
        d.points.len(), d.x_label, d.y_label, d.value_label
    );
    let mut svg = Svg::new(f.width, f.height, "tl-scatter", title, &desc);
    axes::title(&mut svg, &f, title);

    let drawable = |p: &ScatterPoint| {
        p.x.is_finite() && p.y.is_finite() && (!d.log_x || p.x > 0.0) && (!d.log_y || p.y > 0.0)
    };
    let shown: Vec<&ScatterPoint> = d.points.iter().filter(|p| drawable(p)).collect();
    let xs = axis_scale(shown.iter().map(|p| p.x), d.log_x, d.x_categories.len(), f.x_range());
    let ys = axis_scale(shown.iter().map(|p| p.y), d.log_y, d.y_categories.len(), f.y_range());
    let xc = &d.x_categories;
    let yc = &d.y_categories;
    axes::axes_with(&mut svg, &f, &xs, &ys, &d.x_label, &d.y_label, &ticks(&xs, xc), &ticks(&ys, yc), &|v| tick_label(xc, v), &|v| tick_label(yc, v));

    let ok_values = shown.iter().filter(|p| p.state == PointState::Ok).map(|p| p.value);
    let ve = extent(ok_values);
    let colour = |v: f64| match ve {
        Some((lo, hi)) if hi > lo => {
            let t = (v - lo) / (hi - lo);
            viridis(if d.minimize { 1.0 - t } else { t })
        }
        _ => viridis(0.6),
    };
    let mut skipped = d.points.len() - shown.len();
    svg.open("g", &[("class", "tl-points")]);
    for p in &d.points {
        if !drawable(p) {
            continue;
        }
        let (Some(x), Some(y)) = (xs.map(p.x), ys.map(p.y)) else { continue };
        let (cx, cy) = (px(x), px(y));
        match p.state {
            PointState::Ok if !p.value.is_finite() => skipped += 1,
            PointState::Ok => {
                let tip = format!("{} — {}: {}", p.label, d.value_label, format_num(p.value));
                let c = colour(p.value);
                svg.el("circle", &[("cx", &cx), ("cy", &cy), ("r", "4.5"), ("fill", &c), ("fill-opacity", "0.85")], Some(&tip));
            }
            PointState::Infeasible => {
                let path = format!("M{} {}l8 8m0 -8l-8 8", px(x - 4.0), px(y - 4.0));
                let tip = format!("{} — infeasible", p.label);
                svg.el("path", &[("d", &path), ("stroke", INFEASIBLE), ("stroke-width", "2")], Some(&tip));
            }
            PointState::Failed => {
                let tip = format!("{} — failed", p.label);
                let (rx, ry) = (px(x - 4.0), px(y - 4.0));
                svg.el("rect", &[("x", &rx), ("y", &ry), ("width", "8"), ("height", "8"), ("fill", "none"), ("stroke", FAILED), ("stroke-width", "1.5")], Some(&tip));
            }
        }
    }
    if let Some(b) = d.best.and_then(|i| d.points.get(i)).filter(|p| drawable(p)) {
        if let (Some(x), Some(y)) = (xs.map(b.x), ys.map(b.y)) {
            let (cx, cy) = (px(x), px(y));
            let tip = format!("best — {} — {}: {}", b.label, d.value_label, format_num(b.value));
            svg.el("circle", &[("cx", &cx), ("cy", &cy), ("r", "9"), ("fill", "none"), ("stroke", "currentColor"), ("stroke-width", "2"), ("class", "tl-best")], Some(&tip));
        }
    }
    svg.close("g");
    if shown.is_empty() {
        axes::note(&mut svg, &f, "No trials yet");
    }
    if let Some((lo, hi)) = ve {
        axes::colour_bar(&mut svg, &f, lo, hi, &d.value_label, d.minimize);
    }
    let legend_f = Frame { top: f.height - 60.0, ..f };
    axes::legend(&mut svg, &legend_f, &[(Swatch::Box(INFEASIBLE), "infeasible (×)".into()), (Swatch::Box(FAILED), "failed (□)".into())]);
    axes::skipped(&mut svg, &f, skipped, "trials");
    svg.finish()
}

/// Live scatter of trials over two parameters, coloured by objective value.
#[component]
pub fn ScatterChart(
    /// Projected trials and labels; updates redraw the chart.
    #[prop(into)]
    data: Signal<ScatterData>,
) -> impl IntoView {
    super::svg::chart_box("scatter", Memo::new(move |_| data.with(to_svg_string)).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(x: f64, y: f64, value: f64, state: PointState) -> ScatterPoint {
        ScatterPoint { x, y, value, state, label: "<img onerror=x>".into() }
    }

    #[test]
    fn marks_states_and_best() {
        let d = ScatterData {
            points: vec![pt(16.0, 32.0, 5.0, PointState::Ok), pt(64.0, 32.0, 2.0, PointState::Ok), pt(256.0, 16.0, 0.0, PointState::Infeasible), pt(32.0, 8.0, 0.0, PointState::Failed)],
            best: Some(1),
            minimize: true,
            log_x: true,
            ..Default::default()
        };
        let s = to_svg_string(&d);
        assert!(s.contains("tl-best") && s.contains("— infeasible") && s.contains("— failed"));
        assert!(!s.contains("<img"));
        assert!(!s.contains("\"NaN"));
    }

    #[test]
    fn survives_empty_nan_and_single() {
        assert!(to_svg_string(&ScatterData::default()).contains("No trials yet"));
        let d = ScatterData { points: vec![pt(f64::NAN, 1.0, 1.0, PointState::Ok), pt(1.0, 1.0, 1.0, PointState::Ok)], best: Some(9), ..Default::default() };
        let s = to_svg_string(&d);
        assert!(s.contains("1 trials not shown") && !s.contains("\"NaN"));
    }

    #[test]
    fn categories_label_ticks() {
        let d = ScatterData {
            points: vec![pt(0.0, 1.0, 1.0, PointState::Ok), pt(1.0, 2.0, 2.0, PointState::Ok)],
            x_categories: vec!["fp16".into(), "bf16".into()],
            ..Default::default()
        };
        let s = to_svg_string(&d);
        assert!(s.contains(">fp16</text>") && s.contains(">bf16</text>"));
    }
}

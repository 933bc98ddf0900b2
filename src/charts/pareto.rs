//! Trials in two chosen objectives, with the Pareto front drawn as a step line.

use leptos::prelude::*;

use super::axes::{self, Frame, Swatch};
use super::scale::{extent, format_num, positive_extent, Scale};
use super::svg::{px, series_colour, Svg, INFEASIBLE};

/// One trial's two objective values.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParetoPoint {
    /// First objective (x axis).
    pub a: f64,
    /// Second objective (y axis).
    pub b: f64,
    /// Feasible trials only can be on the front; infeasible ones are drawn grey.
    pub feasible: bool,
    /// Tooltip text, e.g. "trial 4: batch=8 tp=2".
    pub label: String,
}

/// Everything the Pareto chart shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParetoData {
    /// Chart title.
    pub title: String,
    /// X axis label: first objective with unit.
    pub x_label: String,
    /// Y axis label: second objective with unit.
    pub y_label: String,
    /// The trials.
    pub points: Vec<ParetoPoint>,
    /// The first objective is minimised (else maximised).
    pub minimize_a: bool,
    /// The second objective is minimised (else maximised).
    pub minimize_b: bool,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
}

/// Chart size in pixels.
pub const SIZE: (f64, f64) = (560.0, 360.0);

/// Indices of the non-dominated feasible points with finite values, ordered from best to
/// worst in the first objective. Exact duplicates keep only the first.
pub fn pareto_front(points: &[ParetoPoint], minimize_a: bool, minimize_b: bool) -> Vec<usize> {
    let sa = if minimize_a { 1.0 } else { -1.0 };
    let sb = if minimize_b { 1.0 } else { -1.0 };
    let mut idx: Vec<usize> = (0..points.len())
        .filter(|&i| points[i].feasible && points[i].a.is_finite() && points[i].b.is_finite())
        .collect();
    // Sort by first objective (better first), ties by the second (better first), then index.
    idx.sort_by(|&i, &j| {
        (sa * points[i].a)
            .total_cmp(&(sa * points[j].a))
            .then((sb * points[i].b).total_cmp(&(sb * points[j].b)))
            .then(i.cmp(&j))
    });
    let mut front = Vec::new();
    let mut best_b = f64::INFINITY;
    for i in idx {
        let b = sb * points[i].b;
        if b < best_b {
            best_b = b;
            front.push(i);
        }
    }
    front
}

/// The chart as standalone SVG text.
pub fn to_svg_string(d: &ParetoData) -> String {
    let f = Frame::new(SIZE.0, SIZE.1).with_right(140.0);
    let title = if d.title.is_empty() { "Pareto front" } else { &d.title };
    let front = pareto_front(&d.points, d.minimize_a, d.minimize_b);
    let desc = format!(
        "{} trials by {} and {}; {} are on the Pareto front (no other trial is better in both), joined by a step line.",
        d.points.len(), d.x_label, d.y_label, front.len()
    );
    let mut svg = Svg::new(f.width, f.height, "tl-pareto", title, &desc);
    axes::title(&mut svg, &f, title);

    let drawable = |p: &ParetoPoint| p.a.is_finite() && p.b.is_finite() && (!d.log_x || p.a > 0.0) && (!d.log_y || p.b > 0.0);
    let shown: Vec<&ParetoPoint> = d.points.iter().filter(|p| drawable(p)).collect();
    let scale = |vals: Vec<f64>, log: bool, range| {
        if log {
            Scale::log(positive_extent(vals).map(|e| (e.0 / 1.2, e.1 * 1.2)).unwrap_or((1.0, 10.0)), range)
        } else {
            let e = extent(vals).unwrap_or((0.0, 1.0));
            let pad = (e.1 - e.0) * 0.05;
            Scale::linear((e.0 - pad, e.1 + pad), range)
        }
    };
    let xs = scale(shown.iter().map(|p| p.a).collect(), d.log_x, f.x_range());
    let ys = scale(shown.iter().map(|p| p.b).collect(), d.log_y, f.y_range());
    axes::axes(&mut svg, &f, &xs, &ys, &d.x_label, &d.y_label);

    let on_front = |i: usize| front.contains(&i);
    let front_colour = series_colour(3);
    svg.open("g", &[("class", "tl-points")]);
    for (i, p) in d.points.iter().enumerate() {
        if !drawable(p) || on_front(i) {
            continue;
        }
        let (Some(x), Some(y)) = (xs.map(p.a), ys.map(p.b)) else { continue };
        let (cx, cy) = (px(x), px(y));
        let state = if p.feasible { "" } else { " (infeasible)" };
        let tip = format!("{}{state} — {}: {}, {}: {}", p.label, d.x_label, format_num(p.a), d.y_label, format_num(p.b));
        let fill = if p.feasible { series_colour(0) } else { INFEASIBLE };
        svg.el("circle", &[("cx", &cx), ("cy", &cy), ("r", "3.5"), ("fill", fill), ("fill-opacity", "0.6")], Some(&tip));
    }
    // Step line: from each front point across to the next one's first objective, then down.
    let pts: Vec<(f64, f64)> = front.iter().filter_map(|&i| Some((xs.map(d.points[i].a)?, ys.map(d.points[i].b)?))).collect();
    let mut path = Vec::with_capacity(pts.len() * 2);
    for (k, p) in pts.iter().enumerate() {
        if k > 0 {
            path.push((p.0, pts[k - 1].1));
        }
        path.push(*p);
    }
    let tip = format!("Pareto front: {} trials", front.len());
    svg.polyline(&path, &[("stroke", front_colour), ("stroke-width", "2"), ("class", "tl-front")], Some(&tip));
    for &i in &front {
        let p = &d.points[i];
        let (Some(x), Some(y)) = (xs.map(p.a), ys.map(p.b)) else { continue };
        let (cx, cy) = (px(x), px(y));
        let tip = format!("{} (Pareto-optimal) — {}: {}, {}: {}", p.label, d.x_label, format_num(p.a), d.y_label, format_num(p.b));
        svg.el("circle", &[("cx", &cx), ("cy", &cy), ("r", "5"), ("fill", front_colour), ("stroke", "white"), ("stroke-width", "1")], Some(&tip));
    }
    svg.close("g");
    if shown.is_empty() {
        axes::note(&mut svg, &f, "No trials yet");
    }
    axes::legend(
        &mut svg,
        &f,
        &[
            (Swatch::Box(front_colour), "Pareto front".into()),
            (Swatch::Box(series_colour(0)), "other trials".into()),
            (Swatch::Box(INFEASIBLE), "infeasible".into()),
        ],
    );
    axes::skipped(&mut svg, &f, d.points.len() - shown.len(), "trials");
    svg.finish()
}

/// Live Pareto chart for two chosen objectives.
#[component]
pub fn ParetoChart(
    /// Trials in the two objectives and their directions; updates redraw the chart.
    #[prop(into)]
    data: Signal<ParetoData>,
) -> impl IntoView {
    super::svg::chart_box("pareto", Memo::new(move |_| data.with(to_svg_string)).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(a: f64, b: f64) -> ParetoPoint {
        ParetoPoint { a, b, feasible: true, label: String::new() }
    }

    #[test]
    fn front_of_minimise_both() {
        let pts = vec![p(1.0, 5.0), p(2.0, 3.0), p(3.0, 4.0), p(4.0, 1.0), p(2.0, 3.0), p(f64::NAN, 0.0)];
        assert_eq!(pareto_front(&pts, true, true), vec![0, 1, 3]);
    }

    #[test]
    fn front_respects_directions_and_feasibility() {
        let mut pts = vec![p(1.0, 5.0), p(2.0, 3.0), p(3.0, 4.0)];
        // Maximise both: (3,4) dominates (2,3); (1,5) survives on b.
        assert_eq!(pareto_front(&pts, false, false), vec![2, 0]);
        pts[2].feasible = false;
        assert_eq!(pareto_front(&pts, false, false), vec![1, 0]);
        assert!(pareto_front(&[], true, true).is_empty());
    }

    #[test]
    fn draws_step_line_and_handles_degenerate_data() {
        let d = ParetoData { points: vec![p(1.0, 5.0), p(2.0, 3.0), p(3.0, 4.0)], minimize_a: true, minimize_b: true, ..Default::default() };
        let s = to_svg_string(&d);
        assert!(s.contains("tl-front") && s.contains("Pareto-optimal"));
        assert!(to_svg_string(&ParetoData::default()).contains("No trials yet"));
        let one = ParetoData { points: vec![p(2.0, 2.0)], log_x: true, log_y: true, ..Default::default() };
        assert!(!to_svg_string(&one).contains("\"NaN"));
    }
}

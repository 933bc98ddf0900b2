//! Convergence: best-so-far objective value against evaluations, one step line per strategy.

use leptos::prelude::*;

use super::axes::{self, Frame, Swatch};
use super::scale::{extent, format_num, positive_extent, Scale};
use super::svg::{px, series_colour, series_dash, Svg};

/// One strategy's curve: (evaluation number, best-so-far value) pairs in evaluation order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConvergenceSeries {
    /// Legend name, e.g. "genetic (seed 7)".
    pub name: String,
    /// (evaluation, best-so-far) points; see [`best_so_far`] to build them from raw values.
    pub points: Vec<(f64, f64)>,
    /// The configuration behind each point (`Config::describe` text), aligned with `points`;
    /// empty when unknown. It opens the point's tooltip, so a click on the point can pin it.
    pub labels: Vec<String>,
}

/// Everything the convergence chart shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConvergenceData {
    /// Chart title.
    pub title: String,
    /// Y axis label with its unit, e.g. "best latency (µs)".
    pub y_label: String,
    /// One series per strategy.
    pub series: Vec<ConvergenceSeries>,
    /// Logarithmic y axis (non-positive values are then left out and counted).
    pub log_y: bool,
}

/// Chart size in pixels (the SVG scales to its container via CSS): as wide as the trial and
/// Pareto charts, so it fits the teaching canvas's column at 1440 px without scrolling.
pub const SIZE: (f64, f64) = (560.0, 320.0);

/// Best-so-far points from raw objective values in evaluation order (1-based evaluation
/// numbers). Non-finite values never become the best; nothing is emitted before the first
/// finite value.
pub fn best_so_far(values: &[f64], minimize: bool) -> Vec<(f64, f64)> {
    let mut best: Option<f64> = None;
    let mut out = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        if v.is_finite() {
            best = Some(match best {
                None => *v,
                Some(b) if (minimize && *v < b) || (!minimize && *v > b) => *v,
                Some(b) => b,
            });
        }
        if let Some(b) = best {
            out.push(((i + 1) as f64, b));
        }
    }
    out
}

/// The chart as standalone SVG text (the same drawing the component shows).
pub fn to_svg_string(d: &ConvergenceData) -> String {
    let right = if d.series.len() > 1 { 170.0 } else { 16.0 };
    let f = Frame::new(SIZE.0, SIZE.1).with_right(right);
    let names: Vec<&str> = d.series.iter().map(|s| s.name.as_str()).collect();
    let desc = format!("Best objective value found so far against the number of evaluations, for: {}.", names.join(", "));
    let title = if d.title.is_empty() { "Convergence" } else { &d.title };
    let mut svg = Svg::new(f.width, f.height, "tl-convergence", title, &desc);
    axes::title(&mut svg, &f, title);

    let usable = |p: &(f64, f64)| p.0.is_finite() && p.1.is_finite() && (!d.log_y || p.1 > 0.0);
    let all = || d.series.iter().flat_map(|s| s.points.iter());
    let skipped = all().filter(|p| !usable(p)).count();
    let xe = extent(all().filter(|p| usable(p)).map(|p| p.0));
    let ye = if d.log_y { positive_extent(all().map(|p| p.1)) } else { extent(all().filter(|p| usable(p)).map(|p| p.1)) };
    let (Some(xe), Some(ye)) = (xe, ye) else {
        let xs = Scale::linear((0.0, 10.0), f.x_range());
        let ys = Scale::linear((0.0, 1.0), f.y_range());
        axes::axes(&mut svg, &f, &xs, &ys, "evaluations", &d.y_label);
        axes::note(&mut svg, &f, "No evaluations yet");
        axes::skipped(&mut svg, &f, skipped, "values");
        return svg.finish();
    };
    let xs = Scale::linear((xe.0.clamp(0.0, 1.0), xe.1), f.x_range());
    // A little headroom so the first and best points do not sit on the frame.
    let ys = if d.log_y {
        Scale::log((ye.0 / 1.15, ye.1 * 1.15), f.y_range())
    } else {
        let pad = (ye.1 - ye.0) * 0.05;
        Scale::linear((ye.0 - pad, ye.1 + pad), f.y_range())
    };
    axes::axes(&mut svg, &f, &xs, &ys, "evaluations", &d.y_label);

    for (i, s) in d.series.iter().enumerate() {
        let (colour, dash) = (series_colour(i), series_dash(i));
        let pts: Vec<(f64, f64)> = s.points.iter().filter(|p| usable(p)).copied().collect();
        let labels: Vec<&str> = s.points.iter().enumerate().filter(|(_, p)| usable(p)).map(|(k, _)| s.labels.get(k).map(String::as_str).unwrap_or("")).collect();
        let mut path = Vec::with_capacity(pts.len() * 2);
        for (k, p) in pts.iter().enumerate() {
            let (Some(x), Some(y)) = (xs.map(p.0), ys.map(p.1)) else { continue };
            if k > 0 {
                if let Some(prev_y) = ys.map(pts[k - 1].1) {
                    path.push((x, prev_y));
                }
            }
            path.push((x, y));
        }
        let tip = match pts.last() {
            Some(l) => format!("{}: best {} after {} evaluations", s.name, format_num(l.1), format_num(l.0)),
            None => format!("{}: no evaluations yet", s.name),
        };
        svg.open("g", &[("class", "tl-series")]);
        svg.polyline(&path, &[("stroke", colour), ("stroke-width", "2"), ("stroke-dasharray", dash)], Some(&tip));
        // Mark each improvement, with its own tooltip.
        for (k, p) in pts.iter().enumerate() {
            if k > 0 && pts[k - 1].1 == p.1 {
                continue;
            }
            let (Some(x), Some(y)) = (xs.map(p.0), ys.map(p.1)) else { continue };
            // The configuration first (as the scatter's tooltips), so a click pins it.
            let t = match labels[k] {
                "" => format!("{}: evaluation {}, best {}", s.name, format_num(p.0), format_num(p.1)),
                l => format!("{l} — {}: evaluation {}, best {}", s.name, format_num(p.0), format_num(p.1)),
            };
            let (cx, cy) = (px(x), px(y));
            svg.el("circle", &[("cx", &cx), ("cy", &cy), ("r", "4"), ("fill", colour), ("class", "tl-pin")], Some(&t));
        }
        svg.close("g");
    }
    if d.series.len() > 1 {
        let entries: Vec<(Swatch, String)> = d
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| (Swatch::Line(series_colour(i), series_dash(i)), s.name.clone()))
            .collect();
        axes::legend(&mut svg, &f, &entries);
    }
    axes::skipped(&mut svg, &f, skipped, "values");
    svg.finish()
}

/// Live convergence chart: best-so-far per strategy against evaluations.
#[component]
pub fn ConvergenceChart(
    /// The series to draw; updates redraw the chart.
    #[prop(into)]
    data: Signal<ConvergenceData>,
) -> impl IntoView {
    super::svg::chart_box("convergence", Memo::new(move |_| data.with(to_svg_string)).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(points: Vec<(f64, f64)>, log_y: bool) -> ConvergenceData {
        ConvergenceData {
            title: "t".into(),
            y_label: "latency (µs)".into(),
            series: vec![ConvergenceSeries { name: "<script>ga</script>".into(), points, labels: Vec::new() }],
            log_y,
        }
    }

    #[test]
    fn best_so_far_tracks_minimum_and_skips_nan() {
        let b = best_so_far(&[f64::NAN, 5.0, 7.0, 3.0, f64::INFINITY, 4.0], true);
        assert_eq!(b, vec![(2.0, 5.0), (3.0, 5.0), (4.0, 3.0), (5.0, 3.0), (6.0, 3.0)]);
        let m = best_so_far(&[1.0, 2.0, 0.5], false);
        assert_eq!(m.last(), Some(&(3.0, 2.0)));
        assert!(best_so_far(&[], true).is_empty());
    }

    #[test]
    fn draws_empty_single_and_degenerate_data() {
        let empty = to_svg_string(&ConvergenceData::default());
        assert!(empty.contains("No evaluations yet"));
        let one = to_svg_string(&data(vec![(1.0, 2.0)], false));
        assert!(one.contains("<circle") && !one.contains("\"NaN"));
        let flat = to_svg_string(&data(vec![(1.0, 2.0), (2.0, 2.0), (3.0, 2.0)], true));
        assert!(flat.contains("<polyline") && !flat.contains("\"NaN") && !flat.contains("\"inf"));
    }

    #[test]
    fn improvements_carry_their_configuration_for_pinning() {
        let mut d = data(vec![(1.0, 5.0), (4.0, 3.0), (9.0, 3.0)], false);
        d.series[0].labels = vec!["batch=8, tp=1".into(), "batch=32, tp=2".into(), "batch=32, tp=2".into()];
        let s = to_svg_string(&d);
        // Each improvement's tooltip starts with its configuration (what a click pins).
        assert!(s.contains("<title>batch=8, tp=1 — &lt;script&gt;ga&lt;/script&gt;: evaluation 1, best 5</title>"), "{s}");
        assert!(s.contains("<title>batch=32, tp=2 — "));
        assert_eq!(s.matches("class=\"tl-pin\"").count(), 2, "the carried last point is no improvement");
    }

    #[test]
    fn log_axis_skips_non_positive_and_reports() {
        let s = to_svg_string(&data(vec![(1.0, 0.0), (2.0, f64::NAN), (3.0, 10.0)], true));
        assert!(s.contains("2 values not shown"));
    }

    #[test]
    fn names_are_escaped_and_legend_drawn_for_several() {
        let mut d = data(vec![(1.0, 3.0), (2.0, 1.0)], false);
        d.series.push(ConvergenceSeries { name: "random".into(), points: vec![(1.0, 4.0)], labels: Vec::new() });
        let s = to_svg_string(&d);
        assert!(!s.contains("<script>"));
        assert!(s.contains("&lt;script&gt;ga"));
        assert!(s.contains("tl-legend") && s.contains(">random</text>"));
    }
}

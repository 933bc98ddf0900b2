//! Device roofline (log-log): compute ceilings, bandwidth slopes, the ridge point, and
//! operators placed by arithmetic intensity and attained throughput.

use leptos::prelude::*;

use super::axes::{self, Frame};
use super::scale::{format_num, positive_extent, Scale};
use super::svg::{px, series_colour, Svg};

/// A named ceiling: a peak in TFLOP/s, or a bandwidth in GB/s.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ceiling {
    /// E.g. "cube FP16" or "HBM".
    pub label: String,
    /// TFLOP/s for a compute peak, GB/s for a bandwidth.
    pub value: f64,
}

/// One operator on the roofline.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RooflinePoint {
    /// Operator name (escaped when drawn).
    pub label: String,
    /// Arithmetic intensity in FLOP per byte of device-memory traffic.
    pub intensity: f64,
    /// Attained throughput in TFLOP/s.
    pub tflops: f64,
    /// Drawn larger with a ring (e.g. the selected point).
    pub highlight: bool,
}

/// Everything the roofline shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RooflineData {
    /// Chart title, e.g. "Roofline — Ascend 910B".
    pub title: String,
    /// Compute ceilings in TFLOP/s; the first is the main roof.
    pub peaks: Vec<Ceiling>,
    /// Memory bandwidths in GB/s; the first is the main slope.
    pub bandwidths: Vec<Ceiling>,
    /// Operators to place.
    pub points: Vec<RooflinePoint>,
}

/// Chart size in pixels.
pub const SIZE: (f64, f64) = (560.0, 360.0);

/// Attainable TFLOP/s at an intensity under one peak (TFLOP/s) and one bandwidth (GB/s).
pub fn attainable(intensity: f64, peak_tflops: f64, bandwidth_gbs: f64) -> f64 {
    (bandwidth_gbs * intensity / 1000.0).min(peak_tflops)
}

/// Ridge point intensity (FLOP/byte) where the bandwidth slope meets the peak.
pub fn ridge(peak_tflops: f64, bandwidth_gbs: f64) -> f64 {
    peak_tflops * 1000.0 / bandwidth_gbs
}

fn usable(c: &Ceiling) -> bool {
    c.value.is_finite() && c.value > 0.0
}

/// The chart as standalone SVG text.
pub fn to_svg_string(d: &RooflineData) -> String {
    let f = Frame::new(SIZE.0, SIZE.1);
    let title = if d.title.is_empty() { "Roofline" } else { &d.title };
    let peaks: Vec<&Ceiling> = d.peaks.iter().filter(|c| usable(c)).collect();
    let bws: Vec<&Ceiling> = d.bandwidths.iter().filter(|c| usable(c)).collect();
    let main = peaks.first().zip(bws.first()).map(|(p, b)| (p.value, b.value, ridge(p.value, b.value)));
    let desc = match main {
        Some((p, b, r)) => format!(
            "Log-log roofline: peak {} TFLOP/s, bandwidth {} GB/s, ridge at {} FLOP/byte; operators left of the ridge are memory-bound, right of it compute-bound.",
            format_num(p), format_num(b), format_num(r)
        ),
        None => "Log-log roofline of operators; the device ceilings are missing.".to_string(),
    };
    let mut svg = Svg::new(f.width, f.height, "tl-roofline", title, &desc);
    axes::title(&mut svg, &f, title);

    let ok = |p: &RooflinePoint| p.intensity.is_finite() && p.intensity > 0.0 && p.tflops.is_finite() && p.tflops > 0.0;
    let shown: Vec<&RooflinePoint> = d.points.iter().filter(|p| ok(p)).collect();
    let top = peaks.iter().map(|c| c.value).fold(f64::NAN, f64::max);
    let mut xs_vals: Vec<f64> = shown.iter().map(|p| p.intensity).collect();
    let mut ys_vals: Vec<f64> = shown.iter().map(|p| p.tflops).collect();
    for b in &bws {
        if top.is_finite() {
            let r = ridge(top, b.value);
            xs_vals.extend([r / 10.0, r * 4.0]);
            ys_vals.extend([top * 1.6, attainable(r / 10.0, top, b.value)]);
        }
    }
    let xe = positive_extent(xs_vals).map(|e| (e.0 / 1.5, e.1 * 1.5)).unwrap_or((0.1, 1000.0));
    let ye = positive_extent(ys_vals).map(|e| (e.0 / 1.5, e.1 * 1.2)).unwrap_or((0.01, 1000.0));
    let xs = Scale::log(xe, f.x_range());
    let ys = Scale::log(ye, f.y_range());
    axes::axes(&mut svg, &f, &xs, &ys, "arithmetic intensity (FLOP/byte)", "attained throughput (TFLOP/s)");

    svg.open("g", &[("class", "tl-roofs")]);
    let max_bw = bws.iter().map(|c| c.value).fold(f64::NAN, f64::max);
    for (i, p) in peaks.iter().enumerate() {
        // A peak is flat from where the fastest bandwidth reaches it to the right edge.
        let x_start = if max_bw.is_finite() { ridge(p.value, max_bw) } else { xs.d0 };
        let (Some(x0), Some(x1), Some(y)) = (xs.map_clamped(x_start.max(xs.d0)), xs.map(xs.d1), ys.map(p.value)) else { continue };
        let w = if i == 0 { "2.5" } else { "1.5" };
        let tip = format!("{}: peak {} TFLOP/s", p.label, format_num(p.value));
        let dash = if i == 0 { "" } else { "5 3" };
        svg.polyline(&[(x0, y), (x1, y)], &[("stroke", series_colour(0)), ("stroke-width", w), ("stroke-dasharray", dash)], Some(&tip));
        svg.text(x1 - 4.0, y - 5.0, &format!("{} {} TFLOP/s", p.label, format_num(p.value)), &[("text-anchor", "end"), ("font-size", "11.5")]);
    }
    for (i, b) in bws.iter().enumerate() {
        // A slope rises from the left edge to where it meets the highest peak.
        let x_end = if top.is_finite() { ridge(top, b.value) } else { xs.d1 };
        let pts: Vec<(f64, f64)> = [xs.d0, x_end.min(xs.d1)]
            .iter()
            .filter_map(|&x| Some((xs.map(x)?, ys.map_clamped(b.value * x / 1000.0)?)))
            .collect();
        let tip = format!("{}: {} GB/s", b.label, format_num(b.value));
        let w = if i == 0 { "2.5" } else { "1.5" };
        svg.polyline(&pts, &[("stroke", series_colour(1)), ("stroke-width", w), ("stroke-dasharray", if i == 0 { "" } else { "5 3" })], Some(&tip));
        // Label along the slope, a third of the way up, clear of the low-intensity points.
        if let [(ax, ay), (bx, by)] = pts[..] {
            let (x, y) = (ax + (bx - ax) * 0.3, ay + (by - ay) * 0.3);
            let angle = (by - ay).atan2(bx - ax).to_degrees();
            let rot = format!("rotate({} {} {})", px(angle), px(x), px(y));
            svg.text(x, y - 6.0, &format!("{} {} GB/s", b.label, format_num(b.value)), &[("font-size", "11.5"), ("transform", &rot)]);
        }
    }
    if let Some((p, b, r)) = main {
        if let (Some(x), Some(y)) = (xs.map(r), ys.map(p)) {
            let (cx, cy) = (px(x), px(y));
            let tip = format!("ridge point: {} FLOP/byte (peak {} TFLOP/s ÷ {} GB/s)", format_num(r), format_num(p), format_num(b));
            svg.el("circle", &[("cx", &cx), ("cy", &cy), ("r", "4"), ("fill", "white"), ("stroke", "currentColor"), ("stroke-width", "1.5"), ("class", "tl-ridge")], Some(&tip));
        }
    }
    svg.close("g");

    svg.open("g", &[("class", "tl-points")]);
    for p in &shown {
        let (Some(x), Some(y)) = (xs.map(p.intensity), ys.map(p.tflops)) else { continue };
        let (cx, cy) = (px(x), px(y));
        let bound = match main {
            Some((peak, bw, r)) => {
                let roof = attainable(p.intensity, peak, bw);
                let kind = if p.intensity < r { "memory-bound" } else { "compute-bound" };
                format!("; {kind}, {}% of the roof", format_num(100.0 * p.tflops / roof))
            }
            None => String::new(),
        };
        let tip = format!("{}: {} FLOP/byte, {} TFLOP/s{bound}", p.label, format_num(p.intensity), format_num(p.tflops));
        let (r, c) = if p.highlight { ("6.5", series_colour(3)) } else { ("4", series_colour(2)) };
        svg.el("circle", &[("cx", &cx), ("cy", &cy), ("r", r), ("fill", c), ("fill-opacity", "0.85"), ("stroke", "white"), ("stroke-width", "1")], Some(&tip));
    }
    svg.close("g");
    if main.is_none() {
        axes::note(&mut svg, &f, "No device ceilings");
    }
    axes::skipped(&mut svg, &f, d.points.len() - shown.len(), "operators");
    svg.finish()
}

/// Roofline chart of a device with operator points.
#[component]
pub fn RooflineChart(
    /// Ceilings and operator points; updates redraw the chart.
    #[prop(into)]
    data: Signal<RooflineData>,
) -> impl IntoView {
    super::svg::chart_box("roofline", Memo::new(move |_| data.with(to_svg_string)).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device() -> RooflineData {
        RooflineData {
            title: "910B".into(),
            peaks: vec![Ceiling { label: "cube FP16".into(), value: 300.0 }],
            bandwidths: vec![Ceiling { label: "HBM".into(), value: 1500.0 }],
            points: vec![],
        }
    }

    #[test]
    fn ridge_and_attainable() {
        assert_eq!(ridge(300.0, 1500.0), 200.0);
        assert_eq!(attainable(10.0, 300.0, 1500.0), 15.0);
        assert_eq!(attainable(1000.0, 300.0, 1500.0), 300.0);
    }

    #[test]
    fn classifies_points() {
        let mut d = device();
        d.points = vec![
            RooflinePoint { label: "softmax".into(), intensity: 2.0, tflops: 2.0, highlight: false },
            RooflinePoint { label: "matmul".into(), intensity: 500.0, tflops: 150.0, highlight: true },
            RooflinePoint { label: "bad".into(), intensity: 0.0, tflops: f64::NAN, highlight: false },
        ];
        let s = to_svg_string(&d);
        assert!(s.contains("softmax: 2 FLOP/byte, 2 TFLOP/s; memory-bound, 66.7% of the roof"));
        assert!(s.contains("matmul: 500 FLOP/byte, 150 TFLOP/s; compute-bound, 50% of the roof"));
        assert!(s.contains("1 operators not shown") && s.contains("tl-ridge"));
    }

    #[test]
    fn survives_missing_ceilings_and_points() {
        assert!(to_svg_string(&RooflineData::default()).contains("No device ceilings"));
        let s = to_svg_string(&device());
        assert!(!s.contains("\"NaN") && s.contains("HBM 1500 GB/s"));
    }
}

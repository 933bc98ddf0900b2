//! Shared chart furniture: the plot frame, axes with ticks and labels, legends, a colour bar,
//! and the notes for empty data or skipped (non-finite) values.

use super::scale::{format_num, Scale};
use super::svg::{px, viridis, Svg};

/// Outer size and margins of a chart; the plot area is what the margins leave.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// Total width in pixels.
    pub width: f64,
    /// Total height in pixels.
    pub height: f64,
    /// Left margin (y tick labels and axis label).
    pub left: f64,
    /// Right margin (legend or colour bar).
    pub right: f64,
    /// Top margin (title).
    pub top: f64,
    /// Bottom margin (x tick labels and axis label).
    pub bottom: f64,
}

impl Frame {
    /// The default frame for a chart of the given size.
    pub fn new(width: f64, height: f64) -> Frame {
        Frame { width, height, left: 64.0, right: 16.0, top: 28.0, bottom: 44.0 }
    }

    /// Same frame with a wider right margin (for a legend or a colour bar).
    pub fn with_right(mut self, right: f64) -> Frame {
        self.right = right;
        self
    }

    /// Pixel range of the x axis (left to right).
    pub fn x_range(&self) -> (f64, f64) {
        (self.left, (self.width - self.right).max(self.left + 1.0))
    }

    /// Pixel range of the y axis (bottom to top, so larger values sit higher).
    pub fn y_range(&self) -> (f64, f64) {
        ((self.height - self.bottom).max(self.top + 1.0), self.top)
    }

    /// Plot-area width.
    pub fn plot_w(&self) -> f64 {
        let (a, b) = self.x_range();
        b - a
    }

    /// Plot-area height.
    pub fn plot_h(&self) -> f64 {
        let (a, b) = self.y_range();
        a - b
    }
}

const AXIS: &[(&str, &str)] = &[("stroke", "currentColor"), ("stroke-width", "1")];
const GRID: &[(&str, &str)] = &[("stroke", "#888"), ("stroke-opacity", "0.25"), ("stroke-width", "1"), ("class", "tl-grid")];

/// The title line above the plot area.
///
/// The title is cut (with "…") to the chart's own width: an SVG draws text past its edge, and a
/// long title would run into the next chart of the grid. The full title stays in the chart's
/// `<title>` (tooltip and screen readers), which `Svg::new` writes.
pub fn title(svg: &mut Svg, f: &Frame, text: &str) {
    svg.text(f.left, 17.0, &truncate(text, title_chars(f)), &[("font-size", "13"), ("font-weight", "600"), ("class", "tl-chart-title")]);
}

/// Characters of a 13 px semibold title that fit over the plot area, from the frame's left
/// margin to its right margin, where a legend or a colour bar's label may start (8 px per
/// character: wider than the average glyph of system-ui at that size).
pub fn title_chars(f: &Frame) -> usize {
    ((f.width - f.right - f.left + 8.0) / 8.0).floor().max(8.0) as usize
}

/// Axes lines, grid, tick marks with labels, and the axis labels (which should carry units).
pub fn axes(svg: &mut Svg, f: &Frame, xs: &Scale, ys: &Scale, x_label: &str, y_label: &str) {
    axes_with(svg, f, xs, ys, x_label, y_label, &xs.ticks(6), &ys.ticks(5), &format_num, &format_num);
}

/// [`axes`] with explicit ticks and tick formatters (e.g. category names).
#[allow(clippy::too_many_arguments)]
pub fn axes_with(
    svg: &mut Svg,
    f: &Frame,
    xs: &Scale,
    ys: &Scale,
    x_label: &str,
    y_label: &str,
    x_ticks: &[f64],
    y_ticks: &[f64],
    fx: &dyn Fn(f64) -> String,
    fy: &dyn Fn(f64) -> String,
) {
    let (x0, x1) = f.x_range();
    let (y0, y1) = f.y_range();
    svg.open("g", &[("class", "tl-axes")]);
    let xl = super::numbers::distinct_labels(x_ticks, fx);
    for (t, l) in x_ticks.iter().zip(&xl) {
        if let Some(x) = xs.map(*t) {
            svg.line(x, y0, x, y1, GRID);
            svg.line(x, y0, x, y0 + 4.0, AXIS);
            svg.text(x, y0 + 16.0, l, &[("text-anchor", "middle"), ("class", "tl-tick")]);
        }
    }
    let yl = super::numbers::distinct_labels(y_ticks, fy);
    for (t, l) in y_ticks.iter().zip(&yl) {
        if let Some(y) = ys.map(*t) {
            svg.line(x0, y, x1, y, GRID);
            svg.line(x0 - 4.0, y, x0, y, AXIS);
            svg.text(x0 - 7.0, y + 4.0, l, &[("text-anchor", "end"), ("class", "tl-tick")]);
        }
    }
    svg.line(x0, y0, x1, y0, AXIS);
    svg.line(x0, y0, x0, y1, AXIS);
    svg.text((x0 + x1) / 2.0, f.height - 8.0, x_label, &[("text-anchor", "middle"), ("class", "tl-axis-label")]);
    let (cx, cy) = (14.0, (y0 + y1) / 2.0);
    let rot = format!("rotate(-90 {} {})", px(cx), px(cy));
    // Rotated, the label runs along the plot's height: never past it (into the title above or
    // the next panel below); about 7 units per character. The chart's description keeps it whole.
    let fit = ((y0 - y1 + 12.0) / 7.0).floor().max(6.0) as usize;
    svg.text(cx, cy, &truncate(y_label, fit), &[("text-anchor", "middle"), ("transform", &rot), ("class", "tl-axis-label")]);
    svg.close("g");
}

/// How a legend entry is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Swatch<'a> {
    /// A line sample with a colour and a dash pattern.
    Line(&'a str, &'a str),
    /// A filled square.
    Box(&'a str),
}

/// A legend in the right margin, one row per entry.
pub fn legend(svg: &mut Svg, f: &Frame, entries: &[(Swatch, String)]) {
    let x = f.width - f.right + 10.0;
    svg.open("g", &[("class", "tl-legend")]);
    for (i, (sw, label)) in entries.iter().enumerate() {
        let y = f.top + 8.0 + i as f64 * 18.0;
        match sw {
            Swatch::Line(c, d) => svg.line(x, y, x + 18.0, y, &[("stroke", c), ("stroke-width", "2.5"), ("stroke-dasharray", d)]),
            Swatch::Box(c) => svg.rect(x + 4.0, y - 5.0, 10.0, 10.0, &[("fill", c)], None),
        }
        svg.text(x + 24.0, y + 4.0, &truncate(label, 22), &[("class", "tl-legend-label")]);
    }
    svg.close("g");
}

/// Where each entry of a legend laid out in rows under a chart goes: (x, row), entries wrapping
/// to a new row when the next would pass `x1` (about 7 units per character of 12-unit text).
pub fn legend_below_layout(entries: &[(Swatch, String)], x0: f64, x1: f64) -> Vec<(f64, usize)> {
    let (mut x, mut row) = (x0, 0);
    entries
        .iter()
        .map(|(_, label)| {
            let w = 24.0 + 7.0 * truncate(label, 22).chars().count() as f64 + 14.0;
            if x > x0 && x + w - 14.0 > x1 {
                x = x0;
                row += 1;
            }
            let at = (x, row);
            x += w;
            at
        })
        .collect()
}

/// Rows a legend under a chart needs between `x0` and `x1`.
pub fn legend_below_rows(entries: &[(Swatch, String)], x0: f64, x1: f64) -> usize {
    legend_below_layout(entries, x0, x1).last().map_or(0, |l| l.1 + 1)
}

/// A legend in rows under the plot, from `x0` to `x1`, its first row's centre at `y` (for a
/// chart whose right margin is better spent on the plot: the teaching canvas).
pub fn legend_below(svg: &mut Svg, entries: &[(Swatch, String)], x0: f64, x1: f64, y: f64) {
    svg.open("g", &[("class", "tl-legend")]);
    for ((sw, label), (x, row)) in entries.iter().zip(legend_below_layout(entries, x0, x1)) {
        let y = y + row as f64 * 18.0;
        match sw {
            Swatch::Line(c, d) => svg.line(x, y, x + 18.0, y, &[("stroke", c), ("stroke-width", "2.5"), ("stroke-dasharray", d)]),
            Swatch::Box(c) => svg.rect(x + 4.0, y - 5.0, 10.0, 10.0, &[("fill", c), ("stroke", "#888"), ("stroke-width", "0.5")], None),
        }
        svg.text(x + 24.0, y + 4.0, &truncate(label, 22), &[("class", "tl-legend-label")]);
    }
    svg.close("g");
}

/// A vertical viridis colour bar in the upper part of the right margin, labelled with the
/// value range; `reversed` puts the brightest colour on the lowest value (lower is better).
pub fn colour_bar(svg: &mut Svg, f: &Frame, lo: f64, hi: f64, label: &str, reversed: bool) {
    let x = f.width - f.right + 14.0;
    let (y0, y1) = f.y_range();
    let y0 = y1 + (y0 - y1) * 0.6;
    let steps = 24;
    let h = (y0 - y1) / steps as f64;
    svg.open("g", &[("class", "tl-colour-bar")]);
    for k in 0..steps {
        let t = (k as f64 + 0.5) / steps as f64;
        let c = viridis(if reversed { 1.0 - t } else { t });
        svg.rect(x, y0 - (k + 1) as f64 * h, 12.0, h + 0.5, &[("fill", &c)], None);
    }
    svg.text(x + 16.0, y1 + 8.0, &format_num(hi), &[("class", "tl-tick")]);
    svg.text(x + 16.0, y0, &format_num(lo), &[("class", "tl-tick")]);
    // As many characters as the right margin holds (about 7 units each), never past the edge.
    svg.text(x, y1 - 6.0, &truncate(label, ((f.right - 18.0) / 7.0).floor().max(6.0) as usize), &[("class", "tl-axis-label")]);
    svg.close("g");
}

/// A centred note in the plot area ("No trials yet").
pub fn note(svg: &mut Svg, f: &Frame, text: &str) {
    let (x0, x1) = f.x_range();
    let (y0, y1) = f.y_range();
    svg.text((x0 + x1) / 2.0, (y0 + y1) / 2.0, text, &[("text-anchor", "middle"), ("class", "tl-note"), ("fill-opacity", "0.7")]);
}

/// A small line under the title saying how many values were left out, if any.
pub fn skipped(svg: &mut Svg, f: &Frame, n: usize, what: &str) {
    if n > 0 {
        let msg = format!("{n} {what} not shown (missing, NaN or infinite)");
        svg.text(f.width - f.right, 17.0, &msg, &[("text-anchor", "end"), ("font-size", "11.5"), ("class", "tl-skipped")]);
    }
}

/// Shortens a label to `max` characters with an ellipsis.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// `s` cut to at most `max` characters keeping its end, with a leading ellipsis: for dotted
/// operator names, whose last parts tell them apart ("layer_moe.moe.experts.down" and
/// "layer_moe.moe.experts.gate_up" share their first 22 characters).
pub fn truncate_start(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        s.to_string()
    } else {
        std::iter::once('…').chain(s.chars().skip(n + 1 - max.max(1))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_title_stays_inside_its_chart() {
        let f = Frame { left: 150.0, ..Frame::new(640.0, 200.0) };
        let long = "Engine time: one decode step at tuned tilings, graph launch, batch 64, context 1536 tokens, 2 chips";
        let mut svg = Svg::new(f.width, f.height, "t", long, "");
        title(&mut svg, &f, long);
        let s = svg.finish();
        let shown = s.split("tl-chart-title\">").nth(1).and_then(|x| x.split("</text>").next()).unwrap();
        assert!(shown.ends_with('…') && shown.chars().count() == title_chars(&f), "{shown}");
        assert!(150.0 + 8.0 * shown.chars().count() as f64 <= 640.0);
        assert!(s.contains(long), "the full title stays in <title>");
    }

    #[test]
    fn frame_ranges_never_invert() {
        let f = Frame::new(10.0, 10.0);
        assert!(f.plot_w() >= 1.0 && f.plot_h() >= 1.0);
        let g = Frame::new(400.0, 300.0);
        assert_eq!(g.x_range(), (64.0, 384.0));
        assert_eq!(g.y_range(), (256.0, 28.0));
    }

    #[test]
    fn truncation_counts_chars() {
        assert_eq!(truncate("abc", 5), "abc");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("ééééé", 3), "éé…");
        assert_eq!(truncate_start("abc", 5), "abc");
        assert_eq!(truncate_start("layer_moe.moe.experts.gate_up", 12), "…rts.gate_up");
        assert_eq!(truncate_start("ééééé", 3), "…éé");
    }

    #[test]
    fn axes_draw_ticks_and_labels() {
        let f = Frame::new(300.0, 200.0);
        let xs = Scale::linear((0.0, 10.0), f.x_range());
        let ys = Scale::log((1.0, 1000.0), f.y_range());
        let mut s = Svg::new(f.width, f.height, "t", "t", "");
        axes(&mut s, &f, &xs, &ys, "evaluations", "latency (µs)");
        let out = s.finish();
        assert!(out.contains(">evaluations</text>"));
        assert!(out.contains(">latency (µs)</text>"));
        assert!(out.contains(">1000</text>") && out.contains(">10</text>"));
    }
}

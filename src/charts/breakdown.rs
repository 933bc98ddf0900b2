//! Time per engine as horizontal stacked bars (one bar per operator, or one for a point), and
//! a per-operator hot-spot bar list.

use leptos::prelude::*;

use super::axes::{self, truncate, truncate_start, Frame, Swatch};
use super::scale::{format_num, nice_domain, Scale};
use super::svg::Svg;

/// Engine names in the order of `tunelab_sim` `EngineTimes::to_array()`.
pub const ENGINES: [&str; 10] = ["cube", "vector", "HBM wait", "L2", "MTE1", "MTE2", "MTE3", "FixPipe", "launch", "communication"];

/// One colour per engine slot (Okabe-Ito, then Tol's wine and two greys).
const ENGINE_COLOURS: [&str; 10] =
    ["#0072B2", "#56B4E9", "#D55E00", "#E69F00", "#009E73", "#F0E442", "#CC79A7", "#000000", "#999999", "#882255"];

/// One bar: an operator (or a whole configuration) and its time per engine.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BreakdownRow {
    /// Operator name or "this configuration".
    pub label: String,
    /// Time per engine, aligned with the data's `engines`; use the *exposed* times so the
    /// bar's length is the total.
    pub times: Vec<f64>,
}

/// Everything the stacked breakdown shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BreakdownData {
    /// Chart title.
    pub title: String,
    /// Engine names; empty means [`ENGINES`].
    pub engines: Vec<String>,
    /// The bars, drawn in order (at most [`MAX_ROWS`]; the rest are counted in a note).
    pub rows: Vec<BreakdownRow>,
    /// Time unit for labels; empty means "µs".
    pub unit: String,
}

/// Most bars drawn in one chart.
pub const MAX_ROWS: usize = 40;

/// Chart width in pixels; the height grows with the number of bars.
pub const WIDTH: f64 = 640.0;

fn engine_names(d: &BreakdownData) -> Vec<String> {
    if d.engines.is_empty() { ENGINES.iter().map(|s| s.to_string()).collect() } else { d.engines.clone() }
}

/// An engine's colour: by name when it is one of [`ENGINES`] (case and a trailing word
/// ignored, so "hbm" matches "HBM wait"), else by position. The same engine then has the same
/// colour whatever order a caller lists engines in.
pub fn engine_colour(name: &str, position: usize) -> &'static str {
    let key = name.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
    let known = ENGINES.iter().position(|e| e.split_whitespace().next().unwrap_or("").eq_ignore_ascii_case(&key));
    ENGINE_COLOURS[known.unwrap_or(position) % ENGINE_COLOURS.len()]
}

/// Sum of the finite, positive parts of a row.
pub fn row_total(times: &[f64]) -> f64 {
    times.iter().filter(|t| t.is_finite() && **t > 0.0).sum()
}

/// The stacked breakdown as standalone SVG text.
pub fn to_svg_string(d: &BreakdownData) -> String {
    let unit = if d.unit.is_empty() { "µs" } else { &d.unit };
    let engines = engine_names(d);
    let rows = &d.rows[..d.rows.len().min(MAX_ROWS)];
    let bar = 22.0;
    let height = (28.0 + rows.len() as f64 * bar + 48.0).max(60.0 + engines.len().min(10) as f64 * 18.0);
    let f = Frame { left: 150.0, ..Frame::new(WIDTH, height) }.with_right(130.0);
    let title = if d.title.is_empty() { "Time per engine" } else { &d.title };
    let desc = format!("Stacked bars of time per engine ({unit}) for {} rows; each segment's tooltip gives its time and share.", rows.len());
    let mut svg = Svg::new(f.width, f.height, "tl-breakdown", title, &desc);
    axes::title(&mut svg, &f, title);

    let max = rows.iter().map(|r| row_total(&r.times)).fold(0.0, f64::max);
    let (_, hi) = nice_domain(0.0, if max > 0.0 { max } else { 1.0 }, 5);
    // Room at the bar's end for its total ("693"), so the longest bar's total never runs into
    // the legend in the right margin (7 units per character of 11.5-unit text).
    let total_w = rows.iter().map(|r| format_num(row_total(&r.times)).chars().count()).max().unwrap_or(0) as f64 * 7.0 + 8.0;
    let (x0, x1) = f.x_range();
    let x1 = (x1 - total_w).max(x0 + 20.0);
    let xs = Scale::linear((0.0, hi), (x0, x1));
    let y_bottom = f.top + rows.len() as f64 * bar;
    for t in xs.ticks(5) {
        if let Some(x) = xs.map(t) {
            svg.line(x, f.top, x, y_bottom, &[("stroke", "#888"), ("stroke-opacity", "0.25"), ("class", "tl-grid")]);
            svg.text(x, y_bottom + 14.0, &format_num(t), &[("text-anchor", "middle"), ("class", "tl-tick")]);
        }
    }
    svg.line(x0, y_bottom, x1, y_bottom, &[("stroke", "currentColor")]);
    svg.text((x0 + x1) / 2.0, y_bottom + 32.0, &format!("time ({unit})"), &[("text-anchor", "middle"), ("class", "tl-axis-label")]);

    let mut skipped = 0;
    for (i, r) in rows.iter().enumerate() {
        let y = f.top + i as f64 * bar + 3.0;
        let total = row_total(&r.times);
        svg.text(x0 - 6.0, y + 12.0, &truncate(&r.label, 22), &[("text-anchor", "end"), ("class", "tl-tick")]);
        svg.open("g", &[("class", "tl-bar")]);
        let mut acc = 0.0;
        for (k, t) in r.times.iter().enumerate() {
            if !t.is_finite() || *t < 0.0 {
                skipped += 1;
                continue;
            }
            if *t == 0.0 {
                continue;
            }
            let (Some(a), Some(b)) = (xs.map(acc), xs.map(acc + t)) else { continue };
            acc += t;
            let name = engines.get(k).map(String::as_str).unwrap_or("other");
            let tip = format!("{}: {name} {} {unit} ({}%)", r.label, format_num(*t), format_num(100.0 * t / total));
            svg.rect(a, y, b - a, bar - 6.0, &[("fill", engine_colour(name, k))], Some(&tip));
        }
        svg.close("g");
        if let Some(end) = xs.map(total) {
            svg.text(end + 4.0, y + 12.0, &format_num(total), &[("font-size", "11.5"), ("class", "tl-tick")]);
        }
    }
    if rows.is_empty() {
        svg.text((x0 + x1) / 2.0, f.top + 20.0, "No breakdown yet", &[("text-anchor", "middle"), ("class", "tl-note")]);
    }
    let entries: Vec<(Swatch, String)> =
        engines.iter().enumerate().map(|(k, n)| (Swatch::Box(engine_colour(n, k)), n.clone())).collect();
    axes::legend(&mut svg, &f, &entries);
    if d.rows.len() > MAX_ROWS {
        let more = format!("{} more rows not shown", d.rows.len() - MAX_ROWS);
        svg.text(x0, f.height - 4.0, &more, &[("font-size", "11.5"), ("class", "tl-skipped")]);
    }
    axes::skipped(&mut svg, &f, skipped, "times");
    svg.finish()
}

/// Stacked time-per-engine bars.
#[component]
pub fn BreakdownChart(
    /// Rows of engine times; updates redraw the chart.
    #[prop(into)]
    data: Signal<BreakdownData>,
) -> impl IntoView {
    super::svg::chart_box("breakdown", Memo::new(move |_| data.with(to_svg_string)).into())
}

/// Hot spots: operators ranked by time (or any positive measure).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HotspotData {
    /// Chart title, e.g. "Operator hot spots".
    pub title: String,
    /// Unit of the values; empty means "µs".
    pub unit: String,
    /// (operator, value) in any order; drawn largest first.
    pub items: Vec<(String, f64)>,
    /// How many to show; 0 means 12.
    pub top: usize,
}

/// Items sorted by value, largest first (non-finite and negative values dropped), and the
/// total of all kept values.
pub fn ranked(items: &[(String, f64)]) -> (Vec<(String, f64)>, f64) {
    let mut v: Vec<(String, f64)> = items.iter().filter(|(_, x)| x.is_finite() && *x >= 0.0).cloned().collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let total = v.iter().map(|x| x.1).sum();
    (v, total)
}

/// The hot-spot list as standalone SVG text.
pub fn hotspot_svg_string(d: &HotspotData) -> String {
    let unit = if d.unit.is_empty() { "µs" } else { &d.unit };
    let (all, total) = ranked(&d.items);
    let top = if d.top == 0 { 12 } else { d.top };
    let rows = &all[..all.len().min(top)];
    let bar = 20.0;
    let f = Frame { left: 150.0, ..Frame::new(WIDTH, 40.0 + rows.len().max(1) as f64 * bar + 16.0) }.with_right(128.0);
    let title = if d.title.is_empty() { "Operator hot spots" } else { &d.title };
    let desc = format!("The {} operators that take the most time ({unit}), largest first, with their share of the total.", rows.len());
    let mut svg = Svg::new(f.width, f.height, "tl-hotspots", title, &desc);
    axes::title(&mut svg, &f, title);
    let max = rows.first().map(|r| r.1).unwrap_or(0.0);
    let xs = Scale::linear((0.0, if max > 0.0 { max } else { 1.0 }), f.x_range());
    for (i, (name, v)) in rows.iter().enumerate() {
        let y = f.top + 4.0 + i as f64 * bar;
        let share = if total > 0.0 { 100.0 * v / total } else { 0.0 };
        let tip = format!("{name}: {} {unit} ({}% of total)", format_num(*v), format_num(share));
        // The name's end (what tells two experts' matmuls apart), in the 150 px left margin.
        svg.text(f.left - 6.0, y + 11.0, &truncate_start(name, 18), &[("text-anchor", "end"), ("class", "tl-tick")]);
        let w = xs.map(*v).unwrap_or(f.left) - f.left;
        let shade = super::svg::viridis(0.15 + 0.7 * (1.0 - i as f64 / rows.len().max(1) as f64));
        svg.rect(f.left, y, w, bar - 5.0, &[("fill", &shade)], Some(&tip));
        let label = format!("{} {unit} · {}%", format_num(*v), format_num(share));
        svg.text(f.left + w + 4.0, y + 11.0, &label, &[("font-size", "11.5"), ("class", "tl-tick")]);
    }
    if rows.is_empty() {
        axes::note(&mut svg, &f, "No operators yet");
    }
    axes::skipped(&mut svg, &f, d.items.len() - all.len(), "values");
    svg.finish()
}

/// Per-operator hot-spot bar list.
#[component]
pub fn HotspotChart(
    /// Operators and their times; updates redraw the list.
    #[prop(into)]
    data: Signal<HotspotData>,
) -> impl IntoView {
    super::svg::chart_box("hotspots", Memo::new(move |_| data.with(hotspot_svg_string)).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_segments_with_shares() {
        let d = BreakdownData {
            rows: vec![BreakdownRow { label: "matmul".into(), times: vec![30.0, 0.0, 10.0, f64::NAN] }],
            ..Default::default()
        };
        let s = to_svg_string(&d);
        assert!(s.contains("matmul: cube 30 µs (75%)") && s.contains("matmul: HBM wait 10 µs (25%)"));
        assert!(s.contains("1 times not shown") && s.contains(">communication</text>"));
        assert!(to_svg_string(&BreakdownData::default()).contains("No breakdown yet"));
    }

    #[test]
    fn engine_colours_follow_names() {
        assert_eq!(engine_colour("Cube", 7), engine_colour("cube", 0));
        assert_eq!(engine_colour("hbm", 0), engine_colour("HBM wait", 2));
        assert_eq!(engine_colour("mystery", 1), engine_colour("vector", 1));
    }

    #[test]
    fn caps_rows() {
        let row = BreakdownRow { label: "op".into(), times: vec![1.0] };
        let d = BreakdownData { rows: vec![row; MAX_ROWS + 3], ..Default::default() };
        assert!(to_svg_string(&d).contains("3 more rows not shown"));
    }

    #[test]
    fn hotspots_rank_and_share() {
        let items = vec![("a".to_string(), 1.0), ("<b>".to_string(), 3.0), ("c".to_string(), f64::NAN)];
        let (r, total) = ranked(&items);
        assert_eq!(r[0].0, "<b>");
        assert_eq!(total, 4.0);
        let s = hotspot_svg_string(&HotspotData { items, ..Default::default() });
        assert!(s.contains("&lt;b&gt;: 3 µs (75% of total)") && s.contains("1 values not shown"));
        assert!(hotspot_svg_string(&HotspotData::default()).contains("No operators yet"));
    }
}

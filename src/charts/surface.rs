//! The whole surface of a known landscape (a 2-D toy function, or a Kernel Tuner cache projected
//! on two of its parameters) with every strategy's samples on top, and the true optimum once the
//! race has ended.
//!
//! Why an image: a 64 x 64 toy grid as SVG rectangles would be 4,096 DOM nodes, most of the
//! page's budget; the surface is one PNG (`<image>` with a data URL, drawn pixelated so each
//! pixel is one grid cell), and only the samples are SVG shapes (a bounded number per strategy).
//! Colour is by rank of the value among the surface's values (bright = best), so a heavy-tailed
//! landscape (runtimes spanning decades, a few very slow configurations) still shows its shape.

use super::axes::{self, truncate, Frame, Swatch};
use super::scale::{format_num, Scale};
use super::svg::{px, series_colour, viridis, Svg, INFEASIBLE};
use leptos::prelude::*;

/// Most samples drawn per strategy (its latest ones): drawing cost and DOM size stay bounded.
pub const MAX_SAMPLES: usize = 250;
/// Latest proposals per strategy joined by its trail.
pub const TRAIL: usize = 6;
/// Most tick labels per axis.
const MAX_TICKS: usize = 8;

/// One strategy's samples in cell coordinates (column, row; fractional within a cell).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SurfaceSeries {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Everything the surface chart draws.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SurfaceData {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// The value with its unit ("time (ms)").
    pub value_label: String,
    /// Column labels (one per column) and row labels (row 0 at the bottom).
    pub x_values: Vec<String>,
    pub y_values: Vec<String>,
    /// The value of each cell, row-major (row * columns + column); NaN: no successful
    /// measurement there (failed, or not in the cache).
    pub cells: Vec<f64>,
    pub minimize: bool,
    pub series: Vec<SurfaceSeries>,
    /// The true optimum's cell and its description, shown once the race has ended.
    pub optimum: Option<(f64, f64, String)>,
    /// A line under the chart's title (how the surface was projected).
    pub note: String,
}

impl SurfaceData {
    pub fn columns(&self) -> usize {
        self.x_values.len()
    }
    pub fn rows(&self) -> usize {
        self.y_values.len()
    }
}

/// Each cell's colour position in 0..=1 by rank of its value among the finite cells (1 = best);
/// NaN for cells without a value. Ties share a rank.
pub fn rank_colours(cells: &[f64], minimize: bool) -> Vec<f64> {
    let mut order: Vec<usize> = (0..cells.len()).filter(|&i| cells[i].is_finite()).collect();
    let sign = if minimize { 1.0 } else { -1.0 };
    order.sort_by(|&a, &b| (sign * cells[a]).total_cmp(&(sign * cells[b])));
    let mut out = vec![f64::NAN; cells.len()];
    let n = order.len();
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && cells[order[j + 1]] == cells[order[i]] {
            j += 1;
        }
        let t = if n > 1 { 1.0 - ((i + j) as f64 / 2.0) / (n - 1) as f64 } else { 1.0 };
        for &k in &order[i..=j] {
            out[k] = t;
        }
        i = j + 1;
    }
    out
}

/// The surface as a PNG (one pixel per cell, row 0 at the bottom), base64 in a data URL.
pub fn surface_png(d: &SurfaceData) -> Option<String> {
    let (w, h) = (d.columns(), d.rows());
    if w == 0 || h == 0 || d.cells.len() != w * h {
        return None;
    }
    let colours = rank_colours(&d.cells, d.minimize);
    let rgb = |t: f64| -> [u8; 3] {
        let hex = if t.is_finite() { viridis(t) } else { INFEASIBLE.to_string() };
        let b = |k: usize| u8::from_str_radix(hex.get(1 + 2 * k..3 + 2 * k).unwrap_or("80"), 16).unwrap_or(128);
        [b(0), b(1), b(2)]
    };
    let mut raw = Vec::with_capacity(h * (1 + 3 * w));
    for row in (0..h).rev() {
        raw.push(0u8);
        for col in 0..w {
            raw.extend_from_slice(&rgb(colours[row * w + col]));
        }
    }
    let png = png_rgb(w as u32, h as u32, &raw);
    use base64::Engine;
    Some(format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(png)))
}

/// A minimal PNG: 8-bit RGB, `filtered` rows (each led by filter byte 0), one IDAT chunk.
fn png_rgb(w: u32, h: u32, filtered: &[u8]) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let start = out.len();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let crc = crc32(&out[start..]);
        out.extend_from_slice(&crc.to_be_bytes());
    }
    let mut out = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &miniz_oxide::deflate::compress_to_vec_zlib(filtered, 6));
    chunk(&mut out, b"IEND", &[]);
    out
}

/// CRC-32 (IEEE, as PNG chunks use).
fn crc32(data: &[u8]) -> u32 {
    let mut c = 0xffff_ffffu32;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
        }
    }
    !c
}

/// Up to `MAX_TICKS` evenly spaced indices of `n` labels.
fn tick_indices(n: usize) -> Vec<f64> {
    let step = n.div_ceil(MAX_TICKS).max(1);
    (0..n).step_by(step).map(|i| i as f64).collect()
}

/// The legend: each strategy's colour, the optimum once shown, and the colour scale's ends.
fn legend_entries(d: &SurfaceData) -> Vec<(Swatch<'static>, String)> {
    let mut entries: Vec<(Swatch<'static>, String)> = d.series.iter().enumerate().map(|(k, s)| (Swatch::Box(series_colour(k)), s.name.clone())).collect();
    if d.optimum.is_some() {
        entries.push((Swatch::Box("#ffffff"), "true optimum ☆".into()));
    }
    entries.push((Swatch::Box(BEST_SWATCH), "best values".into()));
    entries.push((Swatch::Box(WORST_SWATCH), "worst values".into()));
    entries.push((Swatch::Box(INFEASIBLE), "failed / absent".into()));
    entries
}

/// viridis(1.0) and viridis(0.0): the colours of the best and the worst values.
const BEST_SWATCH: &str = "#fde725";
const WORST_SWATCH: &str = "#440154";

/// Drawing width of the canvas: it fits the teaching layout's canvas column at 1440 px (about
/// 510 px) without scrolling, and its text stays at least 11 px there (11.5-13 units, scale ≥ 1).
pub const WIDTH: f64 = 500.0;

/// The surface chart as standalone SVG text.
pub fn to_svg_string(d: &SurfaceData) -> String {
    // The legend goes under the plot, so the plot keeps the width.
    let entries = legend_entries(d);
    let f = Frame { left: 64.0, right: 16.0, top: 40.0, bottom: 52.0, ..Frame::new(WIDTH, 464.0) };
    let rows = axes::legend_below_rows(&entries, 8.0, f.width - 8.0);
    let height = f.height + rows as f64 * 18.0 + 10.0;
    let title = if d.title.is_empty() { "The whole landscape" } else { &d.title };
    let (w, h) = (d.columns(), d.rows());
    let desc = format!(
        "{title}. Every configuration's value over {} (columns) and {} (rows), coloured by rank (bright = best; grey = no successful measurement), with each strategy's samples on top{}.{}",
        d.x_label,
        d.y_label,
        if d.optimum.is_some() { " and the true optimum marked" } else { "" },
        if d.note.is_empty() { String::new() } else { format!(" {}.", d.note) }
    );
    let mut svg = Svg::new(f.width, height, "tl-surface", title, &desc);
    axes::title(&mut svg, &f, title);
    if !d.note.is_empty() {
        // About 6.5 units per character of 11.5-unit text, from the left margin to the edge.
        let fit = ((f.width - f.left - 4.0) / 6.5).floor() as usize;
        // `data-full`: the whole note, which a phone shows as wrapping HTML under the chart's
        // title (the chart scrolls inside its box there and would cut this line; svg.rs).
        svg.text(f.left, 32.0, &truncate(&d.note, fit), &[("font-size", "11.5"), ("class", "tl-note tl-subtitle"), ("data-full", &d.note)]);
    }
    let Some(url) = surface_png(d) else {
        axes::note(&mut svg, &f, "No landscape loaded");
        return svg.finish();
    };
    let xs = Scale::linear((-0.5, w as f64 - 0.5), f.x_range());
    let ys = Scale::linear((-0.5, h as f64 - 0.5), f.y_range());
    let (x0, x1) = f.x_range();
    let (yb, yt) = f.y_range();
    let (iw, ih) = (px(x1 - x0), px(yb - yt));
    let (ix, iy) = (px(x0), px(yt));
    svg.el(
        "image",
        &[("x", &ix), ("y", &iy), ("width", &iw), ("height", &ih), ("preserveAspectRatio", "none"), ("style", "image-rendering:pixelated"), ("href", &url)],
        Some(&format!("{}: {} by {} cells", d.value_label, w, h)),
    );
    let label = |v: &[String]| {
        let v = v.to_vec();
        // Numbers in three significant digits (a toy grid's axis values are long decimals).
        move |t: f64| v.get(t.round().max(0.0) as usize).map(|s| s.parse::<f64>().map(format_num).unwrap_or_else(|_| truncate(s, 8))).unwrap_or_default()
    };
    axes::axes_with(&mut svg, &f, &xs, &ys, &d.x_label, &d.y_label, &tick_indices(w), &tick_indices(h), &label(&d.x_values), &label(&d.y_values));
    for (k, s) in d.series.iter().enumerate() {
        let colour = series_colour(k);
        let pts = &s.points[s.points.len().saturating_sub(MAX_SAMPLES)..];
        svg.open("g", &[("class", "tl-samples")]);
        for (n, &(c, r)) in pts.iter().enumerate() {
            let (Some(x), Some(y)) = (xs.map(c), ys.map(r)) else { continue };
            let (cx, cy) = (px(x), px(y));
            let tip = format!("{}: sample {} at {}, {}", s.name, n + 1, label(&d.x_values)(c), label(&d.y_values)(r));
            // One shape per strategy (a second cue beside colour).
            match k % 3 {
                0 => svg.el("circle", &[("cx", &cx), ("cy", &cy), ("r", "3.5"), ("fill", colour), ("stroke", "#fff"), ("stroke-width", "1")], Some(&tip)),
                1 => svg.rect(x - 3.2, y - 3.2, 6.4, 6.4, &[("fill", colour), ("stroke", "#fff"), ("stroke-width", "1")], Some(&tip)),
                _ => {
                    let p = format!("{},{} {},{} {},{}", px(x), px(y - 4.5), px(x + 4.0), px(y + 3.0), px(x - 4.0), px(y + 3.0));
                    svg.el("polygon", &[("points", &p), ("fill", colour), ("stroke", "#fff"), ("stroke-width", "1")], Some(&tip));
                }
            }
        }
        // Where it went last: the latest proposals joined by a trail and the newest ringed, so
        // each Step visibly moves every strategy on the surface.
        let trail: Vec<String> = pts[pts.len().saturating_sub(TRAIL)..].iter().filter_map(|&(c, r)| Some(format!("{},{}", px(xs.map(c)?), px(ys.map(r)?)))).collect();
        if trail.len() > 1 {
            svg.el("polyline", &[("points", &trail.join(" ")), ("fill", "none"), ("stroke", colour), ("stroke-width", "1.5"), ("stroke-dasharray", "4 3"), ("class", "tl-trail")], None);
        }
        if let Some(&(c, r)) = pts.last() {
            if let (Some(x), Some(y)) = (xs.map(c), ys.map(r)) {
                let tip = format!("{}: latest proposal (sample {}) at {}, {}", s.name, pts.len(), label(&d.x_values)(c), label(&d.y_values)(r));
                svg.el("circle", &[("cx", &px(x)), ("cy", &px(y)), ("r", "8"), ("fill", "none"), ("stroke", colour), ("stroke-width", "2.5"), ("class", "tl-latest"), ("data-testid", "latest")], Some(&tip));
            }
        }
        svg.close("g");
    }
    if let Some((c, r, what)) = &d.optimum {
        if let (Some(x), Some(y)) = (xs.map(*c), ys.map(*r)) {
            let star: Vec<String> = (0..10)
                .map(|i| {
                    let a = std::f64::consts::PI * (i as f64) / 5.0 - std::f64::consts::FRAC_PI_2;
                    let rad = if i % 2 == 0 { 9.0 } else { 4.0 };
                    format!("{},{}", px(x + rad * a.cos()), px(y + rad * a.sin()))
                })
                .collect();
            let tip = format!("true optimum: {what}");
            svg.el("polygon", &[("points", &star.join(" ")), ("fill", "#fff"), ("stroke", "#000"), ("stroke-width", "1.5"), ("data-testid", "optimum")], Some(&tip));
        }
    }
    axes::legend_below(&mut svg, &entries, 8.0, f.width - 8.0, f.height + 4.0);
    svg.finish()
}

/// The surface chart with its SVG export button.
#[component]
pub fn SurfaceChart(
    /// The landscape and the samples; updates redraw the chart.
    #[prop(into)]
    data: Signal<SurfaceData>,
) -> impl IntoView {
    super::svg::chart_box("surface", Memo::new(move |_| data.with(to_svg_string)).into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::svg::check_well_formed;

    fn data() -> SurfaceData {
        SurfaceData {
            title: "Branin <b>".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            value_label: "f".into(),
            x_values: vec!["0".into(), "1".into(), "2".into()],
            y_values: vec!["0".into(), "1".into()],
            cells: vec![3.0, 1.0, f64::NAN, 2.0, 5.0, 4.0],
            minimize: true,
            series: vec![SurfaceSeries { name: "random".into(), points: vec![(0.0, 0.0), (2.0, 1.0)] }, SurfaceSeries { name: "bayes".into(), points: vec![(1.0, 0.0)] }],
            optimum: Some((1.0, 0.0, "f 1 at x=1, y=0".into())),
            note: String::new(),
        }
    }

    #[test]
    fn legend_swatches_are_the_scale_ends_and_the_legend_fits_under_the_plot() {
        assert_eq!(BEST_SWATCH, viridis(1.0));
        assert_eq!(WORST_SWATCH, viridis(0.0));
        let mut d = data();
        d.series = ["bayes", "genetic", "annealing", "random"].iter().map(|n| SurfaceSeries { name: n.to_string(), points: vec![(0.0, 0.0)] }).collect();
        let s = to_svg_string(&d);
        // Every legend label whole, and no text right of the drawing's width.
        for label in ["annealing", "true optimum ☆", "failed / absent", "worst values"] {
            assert!(s.contains(&format!(">{label}</text>")), "{label}");
        }
        let entries = legend_entries(&d);
        for (x, _) in axes::legend_below_layout(&entries, 8.0, WIDTH - 8.0) {
            assert!(x < WIDTH - 60.0);
        }
        assert!(axes::legend_below_rows(&entries, 8.0, WIDTH - 8.0) <= 3);
    }

    #[test]
    fn colours_rank_best_brightest() {
        let c = rank_colours(&[3.0, 1.0, f64::NAN, 2.0, 5.0, 4.0], true);
        assert_eq!(c[1], 1.0);
        assert_eq!(c[4], 0.0);
        assert!(c[2].is_nan());
        let m = rank_colours(&[3.0, 1.0, 3.0], false);
        assert_eq!(m[0], m[2]);
        assert!(m[0] > m[1], "maximised: the larger value is brighter");
    }

    #[test]
    fn png_is_a_valid_image_one_pixel_per_cell() {
        let d = data();
        let url = surface_png(&d).unwrap();
        use base64::Engine;
        let png = base64::engine::general_purpose::STANDARD.decode(url.trim_start_matches("data:image/png;base64,")).unwrap();
        assert_eq!(&png[..8], &[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a]);
        assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 3);
        assert_eq!(u32::from_be_bytes(png[20..24].try_into().unwrap()), 2);
        // The IHDR chunk's CRC is the standard one.
        assert_eq!(u32::from_be_bytes(png[29..33].try_into().unwrap()), crc32(&png[12..29]));
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        let idat_len = u32::from_be_bytes(png[33..37].try_into().unwrap()) as usize;
        let raw = miniz_oxide::inflate::decompress_to_vec_zlib(&png[41..41 + idat_len]).unwrap();
        assert_eq!(raw.len(), 2 * (1 + 3 * 3));
        // Top row of the image is the last row of the data; the failed cell (row 0, col 2) is grey.
        assert_eq!(&raw[10 + 1 + 6..10 + 1 + 9], &[0x9a, 0x9a, 0x9a]);
    }

    #[test]
    fn samples_and_optimum_are_drawn_and_escaped() {
        let s = to_svg_string(&data());
        check_well_formed(&s).unwrap();
        assert!(s.contains("<image") && s.contains("data:image/png;base64,"));
        assert!(s.contains("random: sample 2 at 2, 1") && s.contains("bayes: sample 1"));
        assert!(s.contains("random: latest proposal (sample 2) at 2, 1") && s.contains("tl-trail"), "the newest proposal is ringed and joined to the previous one");
        assert!(s.contains("true optimum: f 1 at x=1, y=0") && s.contains("data-testid=\"optimum\""));
        assert!(s.contains("Branin &lt;b&gt;"));
        let mut long = data();
        long.x_values = vec!["-3.0952380952380953".into(), "7.5".into(), "fp16".into()];
        let s2 = to_svg_string(&long);
        assert!(s2.contains(">-3.1</text>") && s2.contains(">fp16</text>"), "numeric tick labels are shortened");
        let mut no = data();
        no.optimum = None;
        assert!(!to_svg_string(&no).contains("true optimum"), "the optimum is hidden until the race ends");
        let empty = to_svg_string(&SurfaceData::default());
        check_well_formed(&empty).unwrap();
        assert!(empty.contains("No landscape loaded"));
    }

    #[test]
    fn samples_per_strategy_are_bounded() {
        let mut d = data();
        d.series[0].points = (0..1000).map(|i| ((i % 3) as f64, (i % 2) as f64)).collect();
        let s = to_svg_string(&d);
        assert_eq!(s.matches("random: sample").count(), MAX_SAMPLES);
    }

    #[test]
    fn the_note_line_is_read_back_whole_for_the_phone_caption() {
        let mut d = data();
        assert_eq!(crate::charts::svg::svg_subtitle(&to_svg_string(&d)), "");
        d.note = format!("A slice of the cache; fixed: {} & <more>", "block_size_z=1, ".repeat(8));
        let svg = to_svg_string(&d);
        check_well_formed(&svg).unwrap();
        assert!(svg.contains('…'), "the line on the chart is shortened to its width");
        assert_eq!(crate::charts::svg::svg_subtitle(&svg), d.note);
    }
}

//! A tiny SVG text builder, the escape function and the colour palettes.
//!
//! Charts are drawn once, as SVG text, by plain functions; the Leptos components show that
//! text and the "download as SVG" export saves it. One code path means the screen and the
//! file cannot disagree. Every attribute value and text node goes through [`esc`], so model
//! names with markup or script stay inert text.

use std::fmt::Write;

/// Escapes text for use in SVG/XML text nodes and double-quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters are not allowed in XML 1.0; drop them.
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

/// A pixel coordinate with at most two decimals ("12.5", "3", "-0.25"); non-finite reads "0".
pub fn px(v: f64) -> String {
    if !v.is_finite() {
        return "0".to_string();
    }
    let s = format!("{:.2}", v);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" || s.is_empty() { "0".to_string() } else { s.to_string() }
}

/// Okabe-Ito colours (colour-blind safe), in the order series take them; yellow is left out
/// because it is unreadable on white.
pub const SERIES: [&str; 7] = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"];

/// Dash patterns paired with series colours, so series differ without colour too.
pub const DASHES: [&str; 4] = ["", "6 3", "2 3", "8 3 2 3"];

/// Colour of series `i` (cycles).
pub fn series_colour(i: usize) -> &'static str {
    SERIES[i % SERIES.len()]
}

/// Dash pattern of series `i` (cycles after the colours run out, so pairs stay distinct).
pub fn series_dash(i: usize) -> &'static str {
    DASHES[(i / SERIES.len() + i) % DASHES.len()]
}

/// Grey used for infeasible trials and cells.
pub const INFEASIBLE: &str = "#9a9a9a";
/// Colour used to mark failed trials (Okabe-Ito vermillion).
pub const FAILED: &str = "#D55E00";

const VIRIDIS: [(u8, u8, u8); 9] = [
    (0x44, 0x01, 0x54),
    (0x48, 0x28, 0x78),
    (0x3e, 0x49, 0x89),
    (0x31, 0x68, 0x8e),
    (0x26, 0x82, 0x8e),
    (0x1f, 0x9e, 0x89),
    (0x35, 0xb7, 0x79),
    (0x6e, 0xce, 0x58),
    (0xfd, 0xe7, 0x25),
];

/// Viridis-like colour for `t` in [0, 1] (clamped; NaN gives the middle) as "#rrggbb".
pub fn viridis(t: f64) -> String {
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.5 };
    let f = t * (VIRIDIS.len() - 1) as f64;
    let i = (f.floor() as usize).min(VIRIDIS.len() - 2);
    let u = f - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * u).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Builds an SVG document as text. Attribute values and text are escaped here.
pub struct Svg {
    buf: String,
}

impl Svg {
    /// Opens the root element: `role="img"`, an accessible name and a `<title>`/`<desc>`.
    pub fn new(width: f64, height: f64, class: &str, title: &str, desc: &str) -> Svg {
        Svg::with_role(width, height, class, title, desc, "img")
    }

    /// Like [`Svg::new`] but `role="group"`, for charts with focusable parts (heat-map cells).
    pub fn interactive(width: f64, height: f64, class: &str, title: &str, desc: &str) -> Svg {
        Svg::with_role(width, height, class, title, desc, "group")
    }

    fn with_role(width: f64, height: f64, class: &str, title: &str, desc: &str, role: &str) -> Svg {
        let mut buf = String::with_capacity(4096);
        let _ = write!(
            buf,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"tl-svg {}\" viewBox=\"0 0 {} {}\" \
             width=\"{}\" height=\"{}\" style=\"--w:{}px\" role=\"{}\" aria-label=\"{}\" \
             font-family=\"system-ui, sans-serif\" font-size=\"12\">",
            esc(class),
            px(width),
            px(height),
            px(width),
            px(height),
            px(width),
            role,
            esc(title)
        );
        let _ = write!(buf, "<title>{}</title>", esc(title));
        if !desc.is_empty() {
            let _ = write!(buf, "<desc>{}</desc>", esc(desc));
        }
        Svg { buf }
    }

    /// Opens `<tag attrs...>`; close it with [`Svg::close`].
    pub fn open(&mut self, tag: &str, attrs: &[(&str, &str)]) {
        self.start(tag, attrs);
        self.buf.push('>');
    }

    /// Closes `</tag>`.
    pub fn close(&mut self, tag: &str) {
        let _ = write!(self.buf, "</{tag}>");
    }

    /// A leaf element; with a tooltip it gets a `<title>` child (hover text and accessible name).
    pub fn el(&mut self, tag: &str, attrs: &[(&str, &str)], tooltip: Option<&str>) {
        self.start(tag, attrs);
        match tooltip {
            Some(t) => {
                let _ = write!(self.buf, "><title>{}</title></{tag}>", esc(t));
            }
            None => self.buf.push_str("/>"),
        }
    }

    /// A `<text>` element at (x, y) with extra attributes.
    pub fn text(&mut self, x: f64, y: f64, text: &str, attrs: &[(&str, &str)]) {
        let (xs, ys) = (px(x), px(y));
        let mut all: Vec<(&str, &str)> = vec![("x", &xs), ("y", &ys)];
        if !attrs.iter().any(|(k, _)| *k == "fill") {
            all.push(("fill", "currentColor"));
        }
        all.extend_from_slice(attrs);
        self.start("text", &all);
        let _ = write!(self.buf, ">{}</text>", esc(text));
    }

    /// A straight line segment.
    pub fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, attrs: &[(&str, &str)]) {
        let c = [px(x1), px(y1), px(x2), px(y2)];
        let mut all: Vec<(&str, &str)> = vec![("x1", &c[0]), ("y1", &c[1]), ("x2", &c[2]), ("y2", &c[3])];
        all.extend_from_slice(attrs);
        self.el("line", &all, None);
    }

    /// A rectangle, optionally with a tooltip.
    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, attrs: &[(&str, &str)], tooltip: Option<&str>) {
        let c = [px(x), px(y), px(w.max(0.0)), px(h.max(0.0))];
        let mut all: Vec<(&str, &str)> = vec![("x", &c[0]), ("y", &c[1]), ("width", &c[2]), ("height", &c[3])];
        all.extend_from_slice(attrs);
        self.el("rect", &all, tooltip);
    }

    /// A polyline through the given pixel points (nothing for fewer than one point).
    pub fn polyline(&mut self, pts: &[(f64, f64)], attrs: &[(&str, &str)], tooltip: Option<&str>) {
        if pts.is_empty() {
            return;
        }
        let p = points_attr(pts);
        let mut all: Vec<(&str, &str)> = vec![("points", &p), ("fill", "none")];
        all.extend_from_slice(attrs);
        self.el("polyline", &all, tooltip);
    }

    /// Finishes the document.
    pub fn finish(mut self) -> String {
        self.buf.push_str("</svg>");
        self.buf
    }

    fn start(&mut self, tag: &str, attrs: &[(&str, &str)]) {
        let _ = write!(self.buf, "<{tag}");
        for (k, v) in attrs {
            if !v.is_empty() {
                let _ = write!(self.buf, " {k}=\"{}\"", esc(v));
            }
        }
    }
}

/// File name a chart of `kind` is saved under ("tunelab-convergence.svg").
pub fn file_name(kind: &str) -> String {
    let k: String = kind.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' }).collect();
    format!("tunelab-{}.svg", if k.is_empty() { "chart" } else { &k })
}

/// The one export path: saves a chart's SVG text (the very text the screen shows, drawn by its
/// `to_svg_string`) as a download named by [`file_name`]. Every chart's "SVG" button and the
/// report's "Charts as SVG" come here.
pub fn download(kind: &str, svg: &str) -> Result<(), String> {
    crate::browser::download(&file_name(kind), "image/svg+xml", svg)
}

/// A chart on the page: the drawing (`<div class="tl-chart tl-chart-{kind}">` holding the SVG
/// text) and a small "SVG" button that saves the same text through [`download`]
/// (`data-testid="svg-{kind}"`). `svg` is only read again when the drawing changes or the
/// button is pressed.
///
/// While a run is going, a new drawing is put on the page in a task of its own: the browser
/// parses and lays out each chart's SVG separately, so one redraw of a busy page (scatter,
/// convergence, Pareto, every strategy's teaching chart) is several short tasks rather than
/// one long one. Otherwise (a finished run, a heat map) it is shown at once.
pub fn chart_box(kind: &'static str, svg: leptos::prelude::Signal<String>) -> impl leptos::prelude::IntoView {
    use leptos::prelude::*;
    let ctx = use_context::<crate::state::Ctx>();
    let shown = RwSignal::new(svg.get_untracked());
    let queued = StoredValue::new(false);
    let show = move |s: String| {
        if shown.with_untracked(|x| *x != s) {
            shown.set(s);
        }
    };
    Effect::new(move |_| {
        let s = svg.get();
        let live = ctx.is_some_and(|c| c.status.get_untracked() == crate::state::Status::Running);
        if !live {
            queued.set_value(false);
            return show(s);
        }
        if !queued.get_value() {
            queued.set_value(true);
            set_timeout(
                move || {
                    // The chart may be gone by now (a new scenario): then nothing is shown.
                    if queued.try_get_value() == Some(true) {
                        queued.set_value(false);
                        if let Some(s) = svg.try_get_untracked() {
                            show(s);
                        }
                    }
                },
                std::time::Duration::from_millis(0),
            );
        }
    });
    let save = move |_| {
        if let Err(e) = download(kind, &svg.get_untracked()) {
            match ctx {
                Some(c) => c.fail(format!("SVG export: {e}")),
                None => leptos::logging::warn!("SVG export: {e}"),
            }
        }
    };
    view! {
        <div class="tl-chart-box">
            // On a phone the chart is wider than the screen and scrolls inside its box, which
            // would cut its title: the title is then shown here, wrapping (www/charts.css).
            <p class="tl-chart-caption" aria-hidden="true">{move || shown.with(|s| svg_title(s))}</p>
            // The chart's note line (a surface's "fixed: ..."), likewise, whole.
            {move || {
                let note = shown.with(|s| svg_subtitle(s));
                (!note.is_empty()).then(|| view! { <p class="tl-chart-caption tl-chart-subtitle" aria-hidden="true" data-testid=format!("subtitle-{kind}")>{note}</p> })
            }}
            <div class=format!("tl-chart tl-chart-{kind}") inner_html=move || shown.get()></div>
            <button class="svg-export" data-testid=format!("svg-{kind}") title="Save this chart as SVG" on:click=save>"SVG"</button>
        </div>
    }
}

/// A chart's title, read back from its SVG text (the root's `aria-label`, unescaped).
pub fn svg_title(svg: &str) -> String {
    let Some(i) = svg.find("aria-label=\"") else { return String::new() };
    let rest = &svg[i + 12..];
    let raw = &rest[..rest.find('"').unwrap_or(0)];
    raw.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&amp;", "&")
}

/// A chart's note line under its title (the `tl-subtitle` text's `data-full`, unescaped), or "".
pub fn svg_subtitle(svg: &str) -> String {
    let Some(i) = svg.find("tl-subtitle\"") else { return String::new() };
    let rest = &svg[i..];
    let Some(j) = rest.find("data-full=\"") else { return String::new() };
    let rest = &rest[j + 11..];
    let raw = &rest[..rest.find('"').unwrap_or(0)];
    raw.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&amp;", "&")
}

/// "x1,y1 x2,y2 ..." for `points` attributes.
pub fn points_attr(pts: &[(f64, f64)]) -> String {
    let mut s = String::with_capacity(pts.len() * 12);
    for (i, (x, y)) in pts.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        let _ = write!(s, "{},{}", px(*x), px(*y));
    }
    s
}

/// Test helper: checks that `s` is well-formed as our builder writes it (balanced tags, no
/// duplicate attributes, only our five entities, no NaN or infinite numbers in attributes,
/// no raw script); returns the first problem.
#[cfg(test)]
pub fn check_well_formed(s: &str) -> Result<(), String> {
    let mut stack: Vec<String> = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'<' if b.get(i + 1) == Some(&b'/') => {
                let end = s[i..].find('>').ok_or("unclosed end tag")? + i;
                let name = &s[i + 2..end];
                if stack.pop().as_deref() != Some(name) {
                    return Err(format!("unbalanced </{name}> at {i}"));
                }
                i = end + 1;
            }
            b'<' => {
                let end = s[i..].find('>').ok_or("unclosed tag")? + i;
                let inner = &s[i + 1..end];
                let self_closing = inner.ends_with('/');
                let inner = inner.trim_end_matches('/');
                let name = inner.split_whitespace().next().ok_or("empty tag")?.to_string();
                if name.eq_ignore_ascii_case("script") || name.eq_ignore_ascii_case("foreignObject") {
                    return Err(format!("forbidden <{name}>"));
                }
                let mut seen = Vec::new();
                for part in inner[name.len()..].split('"').collect::<Vec<_>>().chunks(2) {
                    let key = part[0].trim().trim_end_matches('=');
                    if key.is_empty() {
                        continue;
                    }
                    if seen.contains(&key) {
                        return Err(format!("duplicate attribute {key} in <{name}>"));
                    }
                    seen.push(key);
                    let val = part.get(1).copied().unwrap_or("");
                    if key != "aria-label" && (val.contains("NaN") || val.contains("inf")) {
                        return Err(format!("bad value {key}=\"{val}\" in <{name}>"));
                    }
                }
                if !self_closing {
                    stack.push(name);
                }
                i = end + 1;
            }
            b'&' => {
                let ok = ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"].iter().any(|e| s[i..].starts_with(e));
                if !ok {
                    return Err(format!("stray & at {i}"));
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    if stack.is_empty() { Ok(()) } else { Err(format!("unclosed {stack:?}")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_reads_back_from_the_svg() {
        let s = Svg::new(100.0, 50.0, "k", "Time <ms> & \"tokens\" 'x'", "d").finish();
        assert_eq!(svg_title(&s), "Time <ms> & \"tokens\" 'x'");
        assert_eq!(svg_title("<svg>"), "");
    }

    #[test]
    fn escape_neutralises_markup() {
        assert_eq!(esc("<script>alert('x')</script>&\""), "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;");
        assert_eq!(esc("a\u{0}b\u{7}c"), "abc");
        assert_eq!(esc("plain"), "plain");
    }

    #[test]
    fn pixels_are_short_and_finite() {
        assert_eq!(px(12.5), "12.5");
        assert_eq!(px(3.0), "3");
        assert_eq!(px(-0.001), "0");
        assert_eq!(px(f64::NAN), "0");
        assert_eq!(px(1.005), "1");
    }

    #[test]
    fn export_names_are_plain_files() {
        assert_eq!(file_name("convergence"), "tunelab-convergence.svg");
        assert_eq!(file_name("../x y"), "tunelab----x-y.svg");
        assert_eq!(file_name(""), "tunelab-chart.svg");
    }

    #[test]
    fn viridis_ends_and_clamps() {
        assert_eq!(viridis(0.0), "#440154");
        assert_eq!(viridis(1.0), "#fde725");
        assert_eq!(viridis(7.0), "#fde725");
        assert_eq!(viridis(f64::NAN).len(), 7);
    }

    #[test]
    fn builder_escapes_attributes_and_text() {
        let mut s = Svg::new(100.0, 50.0, "x", "<b>t</b>", "");
        s.text(1.0, 2.0, "a<b", &[("class", "q\"r")]);
        s.rect(0.0, 0.0, -5.0, 3.0, &[], Some("tip & <i>"));
        let out = s.finish();
        assert!(out.contains("aria-label=\"&lt;b&gt;t&lt;/b&gt;\""));
        assert!(out.contains(">a&lt;b</text>"));
        assert!(out.contains("class=\"q&quot;r\""));
        assert!(out.contains("width=\"0\""));
        assert!(out.contains("<title>tip &amp; &lt;i&gt;</title>"));
        assert!(!out.contains("<b>") && !out.contains("<i>"));
        assert!(out.ends_with("</svg>"));
        check_well_formed(&out).unwrap();
        assert!(check_well_formed("<a x=\"1\" x=\"2\"/>").is_err());
        assert!(check_well_formed("<a><b></a>").is_err());
        assert!(check_well_formed("<a>&</a>").is_err());
    }
}

//! A predicted-vs-measured scatter on log-log axes as SVG text (the docs page and the browser's
//! Calibrate panel draw the same picture). Points are normalised per unit family, so values in
//! microseconds and in tokens/s share one plot: each point is drawn at (measured, predicted) in
//! its own unit, and the diagonal y = x with a +-20% band is the same for all.

use std::fmt::Write;

/// One series of points (measured, predicted, category) with its label and marker.
pub struct Series<'a> {
    pub label: &'a str,
    pub points: Vec<(f64, f64, String)>,
    /// true: hollow markers (e.g. "before"); false: filled.
    pub hollow: bool,
}

fn colour(cat: &str) -> &'static str {
    match cat {
        "op" => "#1f77b4",
        "serving" => "#d62728",
        "training" => "#2ca02c",
        _ => "#7f7f7f",
    }
}

/// The scatter as a standalone SVG document (no scripts, no external references).
pub fn scatter_svg(series: &[Series], title: &str) -> String {
    let (w, h, m) = (560.0, 520.0, 60.0);
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for s in series {
        for (a, b, _) in &s.points {
            for v in [*a, *b] {
                if v.is_finite() && v > 0.0 {
                    lo = lo.min(v);
                    hi = hi.max(v);
                }
            }
        }
    }
    if !lo.is_finite() {
        lo = 1.0;
        hi = 10.0;
    }
    let l0 = libm::floor(libm::log10(lo));
    let l1 = libm::ceil(libm::log10(hi)).max(l0 + 1.0);
    let sx = |v: f64| m + (libm::log10(v) - l0) / (l1 - l0) * (w - 2.0 * m);
    let sy = |v: f64| h - m - (libm::log10(v) - l0) / (l1 - l0) * (h - 2.0 * m);
    let mut o = String::new();
    let _ = write!(o, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#);
    let _ = write!(o, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = write!(o, r#"<text x="{}" y="20" text-anchor="middle" font-size="14">{}</text>"#, w / 2.0, esc(title));
    // Decade grid and labels.
    let mut d = l0;
    while d <= l1 + 1e-9 {
        let v = libm::pow(10.0, d);
        let (x, y) = (sx(v), sy(v));
        let _ = write!(o, r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/><line x1="{m}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/>"##, m, h - m, w - m);
        let _ = write!(o, r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">1e{}</text><text x="{:.1}" y="{:.1}" text-anchor="end">1e{}</text>"#, h - m + 16.0, d as i64, m - 6.0, y + 4.0, d as i64);
        d += 1.0;
    }
    // +-20% band and the diagonal.
    let (a, b) = (libm::pow(10.0, l0), libm::pow(10.0, l1));
    let _ = write!(
        o,
        r##"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="#eee" opacity="0.7"/>"##,
        sx(a), sy(a * 1.2), sx(b / 1.2), sy(b), sx(b), sy(b * 0.8), sx(a / 0.8), sy(a)
    );
    let _ = write!(o, r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#555" stroke-dasharray="4 3"/>"##, sx(a), sy(a), sx(b), sy(b));
    let _ = write!(o, r#"<text x="{}" y="{}" text-anchor="middle">measured (each value in its own unit)</text>"#, w / 2.0, h - 16.0);
    let _ = write!(o, r#"<text x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">predicted</text>"#, h / 2.0, h / 2.0);
    for s in series {
        for (mv, pv, cat) in &s.points {
            if !(mv.is_finite() && pv.is_finite() && *mv > 0.0 && *pv > 0.0) {
                continue;
            }
            let (x, y) = (sx(*mv), sy(pv.clamp(a, b)));
            let c = colour(cat);
            if s.hollow {
                let _ = write!(o, r#"<circle cx="{x:.1}" cy="{y:.1}" r="4" fill="none" stroke="{c}"/>"#);
            } else {
                let _ = write!(o, r#"<circle cx="{x:.1}" cy="{y:.1}" r="4" fill="{c}" opacity="0.85"/>"#);
            }
        }
    }
    // Legend.
    let mut ly = 40.0;
    for (cat, name) in [("op", "operator"), ("serving", "serving"), ("training", "training")] {
        let _ = write!(o, r#"<circle cx="{:.1}" cy="{ly}" r="4" fill="{}"/><text x="{:.1}" y="{}">{name}</text>"#, m + 10.0, colour(cat), m + 20.0, ly + 4.0);
        ly += 16.0;
    }
    for s in series {
        let mark = if s.hollow { r##"fill="none" stroke="#333""## } else { r##"fill="#333""## };
        let _ = write!(o, r#"<circle cx="{:.1}" cy="{ly}" r="4" {mark}/><text x="{:.1}" y="{}">{}</text>"#, m + 10.0, m + 20.0, ly + 4.0, esc(s.label));
        ly += 16.0;
    }
    let _ = write!(o, r##"<text x="{:.1}" y="{:.1}" fill="#555">grey band: within 20%</text>"##, w - m - 140.0, h - m - 8.0);
    o.push_str("</svg>\n");
    o
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

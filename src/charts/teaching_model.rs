//! Teaching views for the model-based strategies: Bayesian optimisation's Gaussian-process
//! mean, uncertainty and acquisition over a 1-D projection, and the RL tuner's choice
//! probabilities per parameter. Both read one strategy snapshot (`serde_json::Value` map).

use leptos::prelude::*;
use serde_json::Value;

use super::axes::{self, truncate, Frame, Swatch};
use super::scale::{extent, format_num, Scale};
use super::svg::{points_attr, px, series_colour, viridis, Svg};
use super::teaching::{figure, num};

/// What Bayesian optimisation does, in two sentences.
pub const GP_TEXT: &str = "Bayesian optimisation fits a Gaussian process to the trials so far: the line is its predicted value and the shaded band its uncertainty (two standard deviations). It evaluates next where the acquisition curve below peaks, which is where a better value is likely or the model is unsure.";

/// What the reinforcement-learning tuner does, in two sentences.
pub const RL_TEXT: &str = "The reinforcement-learning tuner keeps, for each parameter, a probability of choosing each of its values. Choices that led to better-than-average results become more likely, so the bars sharpen as it learns.";

/// One GP candidate in the goal's units: (unit x, predicted value, band low, band high,
/// acquisition). The band is the model's ± 2 standard deviations mapped back to the goal.
pub type GpCandidate = (f64, f64, f64, f64, f64);

/// The snapshot's "candidates" with finite fields, sorted by x, in the goal's units ("value",
/// "low", "high" as the strategy maps them back). A snapshot without those (an older engine)
/// gives none: the card never draws the model's transformed scale as if it were the goal's.
pub fn gp_candidates(snap: &Value) -> Vec<GpCandidate> {
    let mut v: Vec<GpCandidate> = snap
        .get("candidates")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|c| {
                    let (v, lo, hi) = (num(c, "value")?, num(c, "low")?, num(c, "high")?);
                    Some((num(c, "x")?, v, lo.min(v), hi.max(v), num(c, "acquisition").unwrap_or(0.0)))
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

/// How the model's scale maps back to the goal, in words, for the snapshot's "goal_scale".
pub fn scale_words(snap: &Value) -> &'static str {
    match snap.get("goal_scale").and_then(Value::as_str) {
        Some("log") => "back from the model's log scale",
        Some("rank") => "the model fits ranks: a place among the values seen",
        Some("blend") => "back from the model's rank-and-log scale",
        _ => "in the goal's units",
    }
}

/// The snapshot's "choice_probabilities" as (parameter, probabilities) in key order;
/// non-finite probabilities become 0.
pub fn rl_probabilities(snap: &Value) -> Vec<(String, Vec<f64>)> {
    snap.get("choice_probabilities")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let p = v.as_array().map(|a| a.iter().map(|x| x.as_f64().filter(|p| p.is_finite()).unwrap_or(0.0)).collect()).unwrap_or_default();
                    (k.clone(), p)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The GP view as standalone SVG text; `x_label` names the projected parameter, `goal` the
/// goal with its unit ("tokens_per_s (tokens/s)"), the value axis's label.
pub fn gp_svg_string(snap: &Value, x_label: &str, goal: &str) -> String {
    let c = gp_candidates(snap);
    let (w, h) = (480.0, 380.0);
    let x_label = if x_label.is_empty() { "first parameter (unit scale 0–1)" } else { x_label };
    let up = Frame { bottom: h - 200.0, ..Frame::new(w, h) }.with_right(120.0);
    // The rotated value label runs along the upper panel (about 7 units a character): the
    // longest of "predicted Goal (unit)", "Goal (unit)", "predicted (unit)" that fits, so it
    // never runs into the title (`axes_with` cuts anything longer).
    let fit = ((up.plot_h() + 12.0) / 7.0).floor() as usize;
    let unit = goal.rfind(" (").map(|i| &goal[i + 1..]).filter(|u| u.ends_with(')'));
    let y_label = if goal.is_empty() {
        "predicted value".to_string()
    } else {
        [Some(format!("predicted {goal}")), Some(goal.to_string()), unit.map(|u| format!("predicted {u}"))].into_iter().flatten().find(|l| l.chars().count() <= fit).unwrap_or_else(|| goal.to_string())
    };
    let low = Frame { top: 236.0, bottom: 48.0, ..Frame::new(w, h) }.with_right(120.0);
    let title = "Bayesian optimisation: model and acquisition";
    let desc = format!("{GP_TEXT} Candidates are projected on {x_label}; predictions {}.", scale_words(snap));
    let mut svg = Svg::new(w, h, "tl-teach-gp", title, &desc);
    axes::title(&mut svg, &up, title);
    if c.is_empty() {
        axes::note(&mut svg, &Frame::new(w, h), "The model is not fitted yet (start-up phase)");
        return svg.finish();
    }
    let xs = Scale::linear(extent(c.iter().map(|p| p.0)).map(|e| (e.0.min(0.0), e.1.max(1.0))).unwrap_or((0.0, 1.0)), up.x_range());
    let ye = extent(c.iter().flat_map(|p| [p.2, p.3])).unwrap_or((0.0, 1.0));
    let ys = Scale::linear(ye, up.y_range());
    axes::axes_with(&mut svg, &up, &xs, &ys, "", &y_label, &xs.ticks(5), &ys.ticks(4), &format_num, &format_num);
    let at = |p: &GpCandidate, y: f64| Some((xs.map(p.0)?, ys.map_clamped(y)?));
    let mut band: Vec<(f64, f64)> = c.iter().filter_map(|p| at(p, p.3)).collect();
    band.extend(c.iter().rev().filter_map(|p| at(p, p.2)));
    let band_pts = points_attr(&band);
    svg.el("polygon", &[("points", &band_pts), ("fill", series_colour(5)), ("fill-opacity", "0.3")], Some("uncertainty: the model's ± 2 standard deviations, in the goal's units"));
    let mean: Vec<(f64, f64)> = c.iter().filter_map(|p| at(p, p.1)).collect();
    svg.polyline(&mean, &[("stroke", series_colour(0)), ("stroke-width", "2")], Some("predicted value"));
    // The acquisition matters only by where it peaks, and its raw values can be anything from
    // 1e-114 (expected improvement far from the best) to thousands: it is drawn relative to its
    // range over the candidates, 0 (lowest) to 1 (the peak), so the ticks read 0, 0.5, 1.
    let rel = relative_acquisition(&c);
    for (p, r) in c.iter().zip(&rel) {
        let Some((x, y)) = at(p, p.1) else { continue };
        let tip = format!("x {}: predicted {} (between {} and {}), acquisition {} of its peak", format_num(p.0), format_num(p.1), format_num(p.2), format_num(p.3), format_num(*r));
        let (cx, cy) = (px(x), px(y));
        svg.el("circle", &[("cx", &cx), ("cy", &cy), ("r", "2.5"), ("fill", series_colour(0))], Some(&tip));
    }
    // Acquisition panel, same x.
    let ya = Scale::linear((0.0, 1.0), low.y_range());
    axes::axes_with(&mut svg, &low, &xs, &ya, x_label, "acquisition", &xs.ticks(5), &[0.0, 0.5, 1.0], &format_num, &format_num);
    let acq: Vec<(f64, f64)> = c.iter().zip(&rel).filter_map(|(p, r)| Some((xs.map(p.0)?, ya.map(*r)?))).collect();
    svg.polyline(&acq, &[("stroke", series_colour(1)), ("stroke-width", "2")], Some("acquisition, relative to its peak"));
    if let Some(best) = c.iter().max_by(|a, b| a.4.total_cmp(&b.4)) {
        if let Some(x) = xs.map(best.0) {
            let (ytop, ybot) = (up.y_range().1, low.y_range().0);
            let tip = format!("next evaluation: x {}, where the acquisition peaks", format_num(best.0));
            svg.polyline(&[(x, ytop), (x, ybot)], &[("stroke", series_colour(3)), ("stroke-dasharray", "4 3"), ("stroke-width", "1.5")], Some(&tip));
        }
    }
    let entries = [
        (Swatch::Line(series_colour(0), ""), "predicted".to_string()),
        (Swatch::Box(series_colour(5)), "± 2σ".to_string()),
        (Swatch::Line(series_colour(1), ""), "acquisition".to_string()),
        (Swatch::Line(series_colour(3), "4 3"), "next point".to_string()),
    ];
    axes::legend(&mut svg, &up, &entries);
    svg.finish()
}

/// Each candidate's acquisition relative to the candidates' range: 0 the lowest, 1 the peak
/// (all 0 when every candidate's is the same).
pub fn relative_acquisition(c: &[GpCandidate]) -> Vec<f64> {
    let (lo, hi) = extent(c.iter().map(|p| p.4)).unwrap_or((0.0, 0.0));
    c.iter().map(|p| if hi > lo && p.4.is_finite() { (p.4 - lo) / (hi - lo) } else { 0.0 }).collect()
}

/// Most parameters and levels drawn in the RL view.
pub const MAX_PARAMS: usize = 16;
/// Most levels per parameter drawn.
pub const MAX_LEVELS: usize = 64;

/// The RL view as standalone SVG text.
pub fn rl_svg_string(snap: &Value) -> String {
    let all = rl_probabilities(snap);
    let rows = &all[..all.len().min(MAX_PARAMS)];
    let row_h = 44.0;
    let f = Frame { left: 120.0, ..Frame::new(480.0, (28.0 + rows.len().max(1) as f64 * row_h + 20.0).max(90.0)) }.with_right(110.0);
    let title = "Reinforcement learning: choice probabilities";
    let mut svg = Svg::new(f.width, f.height, "tl-teach-rl", title, RL_TEXT);
    axes::title(&mut svg, &f, title);
    let (x0, x1) = f.x_range();
    for (i, (name, probs)) in rows.iter().enumerate() {
        let base = f.top + (i as f64 + 1.0) * row_h - 8.0;
        svg.text(x0 - 6.0, base - 10.0, &truncate(name, 16), &[("text-anchor", "end"), ("class", "tl-tick")]);
        svg.line(x0, base, x1, base, &[("stroke", "currentColor"), ("stroke-opacity", "0.4")]);
        let n = probs.len().min(MAX_LEVELS);
        let bw = (x1 - x0) / n.max(1) as f64;
        let top = probs.iter().take(n).cloned().fold(0.0, f64::max);
        for (k, p) in probs.iter().take(n).enumerate() {
            let hgt = p.clamp(0.0, 1.0) * (row_h - 12.0);
            let fill = if *p == top && top > 0.0 { series_colour(3).to_string() } else { viridis(0.35) };
            let tip = format!("{name}: level {k} — {}%", format_num(100.0 * p));
            svg.rect(x0 + k as f64 * bw + 1.0, base - hgt, (bw - 2.0).max(1.0), hgt, &[("fill", &fill)], Some(&tip));
        }
    }
    if rows.is_empty() {
        axes::note(&mut svg, &f, "No policy yet");
    }
    let cut = all.len().saturating_sub(MAX_PARAMS);
    if cut > 0 {
        svg.text(f.width - f.right, 17.0, &format!("{cut} more parameters not shown"), &[("text-anchor", "end"), ("font-size", "11.5")]);
    }
    let other = viridis(0.35);
    axes::legend(&mut svg, &f, &[(Swatch::Box(series_colour(3)), "most likely".into()), (Swatch::Box(&other), "other values".into())]);
    svg.finish()
}

/// The card's sentence: the next point's prediction in the goal's units, with its uncertainty
/// (± half the band; the band itself when mapping back made it lopsided), and how the model's
/// scale was mapped back. `unit` is the goal's unit ("tokens/s").
fn gp_summary(s: &Value, unit: &str) -> String {
    let phase = s.get("phase").and_then(Value::as_str).unwrap_or("");
    let Some(n) = num(s, "training_points") else {
        return if phase.is_empty() { String::new() } else { format!("Now: {phase} phase.") };
    };
    let u = |v: f64| if unit.is_empty() { format_num(v) } else { format!("{} {unit}", format_num(v)) };
    let prediction = match (num(s, "predicted"), num(s, "predicted_low"), num(s, "predicted_high")) {
        (Some(v), Some(lo), Some(hi)) => {
            let half = (hi - lo) / 2.0;
            let lopsided = (hi - v - (v - lo)).abs() > 0.2 * half.max(1e-300);
            let mut out = if lopsided {
                format!("next point predicted {} (likely between {} and {})", u(v), format_num(lo), u(hi))
            } else {
                format!("next point predicted {} ± {}", u(v), format_num(half))
            };
            if s.get("goal_scale").and_then(Value::as_str) == Some("rank") {
                if let Some(q) = num(s, "predicted_quantile") {
                    out.push_str(&format!(", a place where {}% of the values seen are better", format_num((100.0 * q).round())));
                }
            }
            format!("{out}; {}", scale_words(s))
        }
        _ => "no prediction yet".to_string(),
    };
    format!(
        "Now: {} trials modelled, length scale {}, {prediction}.",
        format_num(n),
        num(s, "length_scale").map(format_num).unwrap_or_else(|| "n/a".into()),
    )
}

fn rl_summary(s: &Value) -> String {
    num(s, "baseline").map(|b| format!("Now: average reward so far (baseline) {}.", format_num(b))).unwrap_or_default()
}

/// Bayesian optimisation teaching view: GP mean ± uncertainty and the acquisition curve.
#[component]
pub fn GpView(
    /// The latest BO snapshot.
    #[prop(into)]
    snapshot: Signal<Value>,
    /// Name of the projected parameter (defaults to "first parameter (unit scale 0–1)").
    #[prop(optional, into)]
    x_label: String,
    /// The goal's unit ("tokens/s"), said with every prediction.
    #[prop(optional, into)]
    unit: String,
    /// The goal with its unit, the value axis's label ("tokens_per_s (tokens/s)").
    #[prop(optional, into)]
    goal: String,
) -> impl IntoView {
    let svg = Signal::derive(move || snapshot.with(|s| gp_svg_string(s, &x_label, &goal)));
    let summary = Signal::derive(move || snapshot.with(|s| gp_summary(s, &unit)));
    figure("gp", svg, GP_TEXT, summary)
}

/// RL teaching view: choice probabilities as bars per parameter.
#[component]
pub fn RlView(
    /// The latest RL snapshot.
    #[prop(into)]
    snapshot: Signal<Value>,
) -> impl IntoView {
    let svg = Signal::derive(move || snapshot.with(rl_svg_string));
    let summary = Signal::derive(move || snapshot.with(rl_summary));
    figure("rl", svg, RL_TEXT, summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::svg::check_well_formed;
    use serde_json::json;

    #[test]
    fn gp_reads_and_sorts_candidates() {
        let s = json!({"training_points": 5, "goal_scale": "log", "predicted": 1234.0, "predicted_low": 1178.0, "predicted_high": 1290.0, "gp_mean": -7.1, "gp_std": 0.02, "candidates": [
            {"x": 0.8, "mean": -7.0, "std": 0.5, "value": 1100.0, "low": 900.0, "high": 1300.0, "acquisition": 0.1},
            {"x": 0.2, "mean": -7.2, "std": 1.0, "value": 1300.0, "low": 1000.0, "high": 1700.0, "acquisition": 0.4},
            {"x": "bad", "mean": 1.0},
            {"x": 0.5, "mean": -7.1, "std": 0.3, "acquisition": 0.2}
        ]});
        let c = gp_candidates(&s);
        assert_eq!(c.len(), 2, "candidates without goal-unit values are not drawn");
        assert_eq!(c[0].0, 0.2);
        let svg = gp_svg_string(&s, "baseM", "tokens_per_s (tokens/s)");
        assert!(svg.contains("<polygon") && svg.contains("next evaluation: x 0.2"));
        assert!(svg.contains(">baseM</text>") && svg.contains(">tokens_per_s (tokens/s)</text>"), "the longest label that fits its panel");
        assert!(svg.contains("predicted 1300 (between 1000 and 1700)"), "tooltips speak in the goal's units");
        assert!(!svg.contains("-7.2"), "the model's transformed scale is not on screen");
        assert!(gp_svg_string(&json!({}), "", "").contains("not fitted yet"));
        let text = gp_summary(&s, "tokens/s");
        assert!(text.contains("5 trials") && text.contains("next point predicted 1234 tokens/s ± 56") && text.contains("log scale"), "{text}");
        assert!(!text.contains("-7"), "{text}");
    }

    /// The issue-46 card: expected improvement near 1e-41 read "6.00e-41" on every tick, and a
    /// long goal ran the rotated y label past its panel into the title.
    #[test]
    fn gp_acquisition_ticks_are_relative_and_readable_and_the_y_label_fits_its_panel() {
        let cands: Vec<serde_json::Value> = (0..5).map(|i| json!({"x": i as f64 / 4.0, "value": 10.0 + i as f64, "low": 9.0, "high": 16.0, "acquisition": 2e-41 * (1.0 + i as f64)})).collect();
        let s = json!({"training_points": 5, "candidates": cands});
        let svg = gp_svg_string(&s, "", "Throughput per chip, decode phase only (tokens/s/chip)");
        assert!(!svg.contains("e-41"), "no raw acquisition value on screen");
        for tick in [">0</text>", ">0.5</text>", ">1</text>"] {
            assert!(svg.contains(tick), "{tick}");
        }
        let rel = relative_acquisition(&gp_candidates(&s));
        assert!(rel.iter().zip([0.0, 0.25, 0.5, 0.75, 1.0]).all(|(a, b)| (a - b).abs() < 1e-12), "{rel:?}");
        // The upper panel's plot is 172 units high: 26 characters fit, so the label is the unit.
        assert!(svg.contains(">predicted (tokens/s/chip)</text>"), "{svg}");
        assert!(gp_svg_string(&s, "", "Kernel time (ms)").contains(">predicted Kernel time (ms)</text>"));
        assert!(svg.contains("next evaluation: x 1, where the acquisition peaks"));
        let flat = json!({"training_points": 2, "candidates": [{"x": 0.1, "value": 1.0, "low": 0.5, "high": 1.5, "acquisition": 0.0}, {"x": 0.9, "value": 1.0, "low": 0.5, "high": 1.5, "acquisition": 0.0}]});
        assert_eq!(relative_acquisition(&gp_candidates(&flat)), vec![0.0, 0.0]);
        check_well_formed(&gp_svg_string(&flat, "", "ms")).unwrap();
    }

    #[test]
    fn gp_summary_says_when_the_band_is_lopsided_and_what_a_rank_means() {
        let s = json!({"training_points": 12, "goal_scale": "rank", "predicted": 900.0, "predicted_low": 400.0, "predicted_high": 950.0, "predicted_quantile": 0.25});
        let text = gp_summary(&s, "tokens/s");
        assert!(text.contains("next point predicted 900 tokens/s (likely between 400 and 950 tokens/s)"), "{text}");
        assert!(text.contains("25% of the values seen are better") && text.contains("ranks"), "{text}");
        assert_eq!(gp_summary(&json!({"phase": "initial design"}), "ms"), "Now: initial design phase.");
        assert!(gp_summary(&json!({"training_points": 3}), "ms").contains("no prediction yet"));
    }

    #[test]
    fn rl_bars_per_parameter() {
        let s = json!({"choice_probabilities": {"tile": [0.2, 0.7, 0.1], "<x>": [1.0, null]}, "baseline": 0.25});
        let p = rl_probabilities(&s);
        assert_eq!(p[0].0, "<x>");
        assert_eq!(p[0].1, vec![1.0, 0.0]);
        let svg = rl_svg_string(&s);
        assert!(svg.contains("tile: level 1 — 70%") && svg.contains("&lt;x&gt;"));
        assert!(rl_svg_string(&json!(null)).contains("No policy yet"));
        assert!(rl_summary(&s).contains("0.25"));
    }
}

//! Teaching views for the population and trajectory strategies: the genetic algorithm's
//! generations and simulated annealing's temperature. Each reads the strategies' key/value
//! snapshots (`serde_json::Value` maps, see `tunelab_search::Snapshot`), so charts never reach
//! into a strategy, and shows a plain-language explanation beside the chart.
//! The model-based views (GP, RL) are in `teaching_model.rs`.

use std::collections::BTreeMap;

use leptos::prelude::*;
use serde_json::Value;

use super::axes::{self, Frame, Swatch};
use super::scale::{extent, format_num, positive_extent, Scale};
use super::svg::{px, series_colour, Svg};

/// What the genetic algorithm does, in two sentences.
pub const GA_TEXT: &str = "A genetic algorithm keeps a population of configurations and breeds the next generation from the fittest: it recombines pairs and mutates a few values. The bars show each generation's best and average, so you can watch the population improve and then settle.";

/// What simulated annealing does, in two sentences.
pub const ANNEALING_TEXT: &str = "Simulated annealing walks from one configuration to a neighbour, always accepting a better one and sometimes a worse one. The chance of accepting a worse step shrinks as the temperature cools, so it explores widely at first and settles later.";

/// A number under `key`, if present and finite.
pub fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64).filter(|x| x.is_finite())
}

/// (generation, population best, population mean) from a history of GA snapshots; the last
/// snapshot of each generation wins; missing values are NaN.
pub fn ga_generations(snaps: &[Value]) -> Vec<(f64, f64, f64)> {
    let mut by_gen: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
    for s in snaps {
        if let Some(g) = s.get("generation").and_then(Value::as_u64) {
            let best = num(s, "population_best").unwrap_or(f64::NAN);
            let mean = num(s, "population_mean").unwrap_or(f64::NAN);
            by_gen.insert(g, (best, mean));
        }
    }
    by_gen.into_iter().map(|(g, (b, m))| (g as f64, b, m)).collect()
}

/// (evaluations, temperature, acceptance) from annealing snapshots; x falls back to the
/// snapshot's position when "evaluations" is missing.
pub fn annealing_curve(snaps: &[Value]) -> Vec<(f64, f64, f64)> {
    snaps
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let t = num(s, "temperature")?;
            Some((num(s, "evaluations").unwrap_or((i + 1) as f64), t, num(s, "acceptance").unwrap_or(f64::NAN)))
        })
        .collect()
}

/// Most generations drawn (the latest ones).
pub const MAX_GENERATIONS: usize = 40;

/// The GA generations chart as standalone SVG text.
pub fn ga_svg_string(snaps: &[Value]) -> String {
    let all = ga_generations(snaps);
    let gens = &all[all.len().saturating_sub(MAX_GENERATIONS)..];
    let f = Frame::new(480.0, 260.0).with_right(120.0);
    let title = "Genetic algorithm: generations";
    let mut svg = Svg::new(f.width, f.height, "tl-teach-ga", title, GA_TEXT);
    axes::title(&mut svg, &f, title);
    let ye = extent(gens.iter().flat_map(|g| [g.1, g.2]));
    let (lo, hi) = ye.map(|(a, b)| (a.min(0.0), b.max(0.0))).unwrap_or((0.0, 1.0));
    let xs = Scale::linear((-0.5, gens.len() as f64 - 0.5), f.x_range());
    let ys = Scale::linear((lo, hi * 1.05), f.y_range());
    let ticks: Vec<f64> = (0..gens.len()).step_by(gens.len().div_ceil(10).max(1)).map(|i| i as f64).collect();
    let label = |v: f64| gens.get(v.round().max(0.0) as usize).map(|g| format_num(g.0)).unwrap_or_default();
    axes::axes_with(&mut svg, &f, &xs, &ys, "generation", "objective value", &ticks, &ys.ticks(5), &label, &format_num);
    let bw = f.plot_w() / gens.len().max(1) as f64 * 0.4;
    let mut skipped = 0;
    for (i, (g, best, mean)) in gens.iter().enumerate() {
        for (k, (v, what)) in [(best, "best"), (mean, "mean")].into_iter().enumerate() {
            let (Some(x), Some(y), Some(base)) = (xs.map(i as f64), ys.map(*v), ys.map(0.0)) else {
                skipped += 1;
                continue;
            };
            let left = x - bw + k as f64 * bw;
            let tip = format!("generation {}: {what} {}", format_num(*g), format_num(*v));
            svg.rect(left, y.min(base), bw, (base - y).abs(), &[("fill", series_colour(k))], Some(&tip));
        }
    }
    if gens.is_empty() {
        axes::note(&mut svg, &f, "No generation finished yet");
    }
    axes::legend(&mut svg, &f, &[(Swatch::Box(series_colour(0)), "best".into()), (Swatch::Box(series_colour(1)), "mean".into())]);
    axes::skipped(&mut svg, &f, skipped, "values");
    svg.finish()
}

/// The annealing temperature chart as standalone SVG text.
pub fn annealing_svg_string(snaps: &[Value]) -> String {
    let pts = annealing_curve(snaps);
    let f = Frame::new(480.0, 260.0);
    let title = "Simulated annealing: temperature";
    let mut svg = Svg::new(f.width, f.height, "tl-teach-annealing", title, ANNEALING_TEXT);
    axes::title(&mut svg, &f, title);
    let log = pts.iter().all(|p| p.1 > 0.0) && pts.len() > 1;
    let xs = Scale::linear(extent(pts.iter().map(|p| p.0)).unwrap_or((0.0, 10.0)), f.x_range());
    let ys = if log {
        Scale::log(positive_extent(pts.iter().map(|p| p.1)).unwrap_or((0.1, 1.0)), f.y_range())
    } else {
        Scale::linear(extent(pts.iter().map(|p| p.1)).map(|e| (e.0.min(0.0), e.1)).unwrap_or((0.0, 1.0)), f.y_range())
    };
    axes::axes(&mut svg, &f, &xs, &ys, "evaluations", if log { "temperature (log scale)" } else { "temperature" });
    let path: Vec<(f64, f64)> = pts.iter().filter_map(|p| Some((xs.map(p.0)?, ys.map(p.1)?))).collect();
    svg.polyline(&path, &[("stroke", series_colour(3)), ("stroke-width", "2")], Some("temperature over evaluations"));
    let step = pts.len().div_ceil(60).max(1);
    for p in pts.iter().step_by(step) {
        let (Some(x), Some(y)) = (xs.map(p.0), ys.map(p.1)) else { continue };
        let acc = if p.2.is_finite() { format!(", acceptance {}%", format_num(100.0 * p.2)) } else { String::new() };
        let tip = format!("after {} evaluations: temperature {}{acc}", format_num(p.0), format_num(p.1));
        let (cx, cy) = (px(x), px(y));
        svg.el("circle", &[("cx", &cx), ("cy", &cy), ("r", "2.5"), ("fill", series_colour(3))], Some(&tip));
    }
    if pts.is_empty() {
        axes::note(&mut svg, &f, "No temperature reported yet");
    }
    svg.finish()
}

fn ga_summary(snaps: &[Value]) -> String {
    let last = snaps.iter().rev().find(|s| s.get("generation").is_some());
    match last {
        Some(s) => format!(
            "Now: generation {}, population {}, best {}, generations without progress {}.",
            num(s, "generation").map(format_num).unwrap_or_default(),
            num(s, "population").map(format_num).unwrap_or_default(),
            num(s, "population_best").map(format_num).unwrap_or_else(|| "n/a".into()),
            num(s, "stalled_generations").map(format_num).unwrap_or_default()
        ),
        None => String::new(),
    }
}

fn annealing_summary(snaps: &[Value]) -> String {
    match snaps.iter().rev().find(|s| num(s, "temperature").is_some()) {
        Some(s) => {
            let acc = num(s, "acceptance").map(|a| format!(", accepting {}% of proposed steps", format_num(100.0 * a))).unwrap_or_default();
            let cur = num(s, "current").map(|c| format!(", current value {}", format_num(c))).unwrap_or_default();
            format!("Now: temperature {}{acc}{cur}.", num(s, "temperature").map(format_num).unwrap_or_default())
        }
        None => String::new(),
    }
}

/// A teaching figure: chart, explanation and a live one-line summary.
pub(super) fn figure(kind: &'static str, svg: Signal<String>, text: &'static str, summary: Signal<String>) -> impl IntoView {
    view! {
        <figure class=format!("tl-teach tl-teach-{kind}")>
            {super::svg::chart_box(kind, svg)}
            <figcaption class="tl-teach-text">
                <p>{text}</p>
                <p class="tl-teach-now">{move || summary.get()}</p>
            </figcaption>
        </figure>
    }
}

/// Genetic algorithm teaching view: best and mean per generation.
#[component]
pub fn GaView(
    /// The GA's snapshots in order (one per batch or generation).
    #[prop(into)]
    snapshots: Signal<Vec<Value>>,
) -> impl IntoView {
    let svg = Signal::derive(move || snapshots.with(|s| ga_svg_string(s)));
    let summary = Signal::derive(move || snapshots.with(|s| ga_summary(s)));
    figure("ga", svg, GA_TEXT, summary)
}

/// Simulated annealing teaching view: the temperature curve.
#[component]
pub fn AnnealingView(
    /// The annealer's snapshots in order.
    #[prop(into)]
    snapshots: Signal<Vec<Value>>,
) -> impl IntoView {
    let svg = Signal::derive(move || snapshots.with(|s| annealing_svg_string(s)));
    let summary = Signal::derive(move || snapshots.with(|s| annealing_summary(s)));
    figure("annealing", svg, ANNEALING_TEXT, summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ga_keeps_last_snapshot_per_generation() {
        let snaps = vec![
            json!({"generation": 0, "population_best": 9.0, "population_mean": 12.0}),
            json!({"generation": 1, "population_best": 7.0, "population_mean": 10.0}),
            json!({"generation": 1, "population_best": 6.0, "population_mean": 9.0}),
            json!({"evaluations": 3}),
        ];
        assert_eq!(ga_generations(&snaps), vec![(0.0, 9.0, 12.0), (1.0, 6.0, 9.0)]);
        let s = ga_svg_string(&snaps);
        assert!(s.contains("generation 1: best 6") && s.contains("generation 0: mean 12"));
        assert!(ga_svg_string(&[]).contains("No generation finished yet"));
        assert!(ga_summary(&snaps).contains("generation 1"));
    }

    #[test]
    fn annealing_curve_and_chart() {
        let snaps = vec![json!({"temperature": 1.0, "acceptance": 0.5, "evaluations": 10}), json!({"temperature": 0.1, "evaluations": 20}), json!({})];
        assert_eq!(annealing_curve(&snaps).len(), 2);
        let s = annealing_svg_string(&snaps);
        assert!(s.contains("temperature 1, acceptance 50%") && s.contains("(log scale)"));
        assert!(annealing_svg_string(&[]).contains("No temperature reported yet"));
        let one = annealing_svg_string(&[json!({"temperature": 0.0})]);
        assert!(!one.contains("\"NaN"));
        assert!(annealing_summary(&snaps[..1]).contains("accepting 50%"));
        assert!(annealing_summary(&[json!({"temperature": 2.0, "current": 3.5})]).contains("current value 3.5"));
    }
}

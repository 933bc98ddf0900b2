//! What the run charts draw of many trials, bounded: which points to keep (`decimate`, the
//! Pareto front `front_2d`), tooltip labels, the axes of discrete parameters, and the Pareto
//! chart read from the run in place. Split from `session.rs`, which owns the stepping.

use super::{Session, LABEL_CHARS, MAX_PARETO};
use crate::charts::{ParetoData, ParetoPoint};
use tunelab_search::Direction;

/// Which of `n` items to draw when at most `max` may be: all when they fit; else `must` (the
/// best, the latest), then an even stride over the rest. Sorted, without repeats.
pub fn decimate(n: usize, max: usize, best: Option<usize>, must: &[usize]) -> Vec<usize> {
    if n <= max {
        return (0..n).collect();
    }
    let mut keep: Vec<usize> = best.into_iter().chain(must.iter().copied()).filter(|&k| k < n).collect();
    keep.sort_unstable();
    keep.dedup();
    keep.truncate(max);
    let room = max.saturating_sub(keep.len());
    if room > 0 {
        let stride = n as f64 / room as f64;
        keep.extend((0..room).map(|j| ((j as f64 + 0.5) * stride) as usize).filter(|&k| k < n));
        keep.sort_unstable();
        keep.dedup();
    }
    keep
}

/// Indices of the points no other point beats on both coordinates (lower is better), in
/// O(n log n): sorted by the first, a point is on the front when its second is below all before.
pub fn front_2d(points: &[(f64, f64)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len()).filter(|&k| points[k].0.is_finite() && points[k].1.is_finite()).collect();
    order.sort_by(|&p, &q| points[p].0.total_cmp(&points[q].0).then(points[p].1.total_cmp(&points[q].1)));
    let mut out = Vec::new();
    let mut low = f64::INFINITY;
    for k in order {
        if points[k].1 < low {
            low = points[k].1;
            out.push(k);
        }
    }
    out.sort_unstable();
    out
}

/// A tooltip label: "a=1, b=x" as `Config::describe` writes it, built only up to
/// `LABEL_CHARS` characters (an operator stage's trial has hundreds of parameters; describing
/// them all for every trial cost the page's thread more than drawing).
pub(super) fn label_of(names: &[String], c: &tunelab_search::Config) -> String {
    let mut out = String::new();
    for (n, v) in names.iter().zip(&c.0) {
        if !out.is_empty() {
            out.push_str(", ");
        }
        out.push_str(&format!("{n}={v}"));
        if out.chars().count() > LABEL_CHARS {
            return short(&out);
        }
    }
    out
}

/// A label cut to `LABEL_CHARS` characters.
pub(super) fn short(s: &str) -> String {
    if s.chars().count() <= LABEL_CHARS {
        return s.to_string();
    }
    let mut out: String = s.chars().take(LABEL_CHARS).collect();
    out.push('…');
    out
}

/// Most values an axis shows as named categories; longer discrete axes are drawn by value.
const MAX_AXIS_CATEGORIES: usize = 40;

/// Category names of parameter `i` in value order, when it is discrete and short enough to
/// label every value (batch 1, 2, 4 ...; precision fp16, w8a8 ...); empty otherwise.
pub(super) fn axis_categories(space: &tunelab_search::Space, i: usize) -> Vec<String> {
    let Some(p) = space.params().get(i) else { return Vec::new() };
    match p.levels() {
        Some(n) if n <= MAX_AXIS_CATEGORIES => (0..n).map(|r| p.level_value(p.level_at_rank(r)).to_string()).collect(),
        _ => Vec::new(),
    }
}

/// Where a trial sits on the axis of parameter `i`: its rank among the categories, or its
/// numeric value for long or continuous axes.
pub(super) fn axis_coordinate(space: &tunelab_search::Space, i: usize, c: &tunelab_search::Config) -> f64 {
    let Some(p) = space.params().get(i) else { return f64::NAN };
    let v = c.0.get(i);
    match p.levels() {
        Some(n) if n <= MAX_AXIS_CATEGORIES => v.and_then(|v| p.level_of(v)).map(|l| p.ordinal_rank(l) as f64).unwrap_or(f64::NAN),
        _ => v.and_then(|v| v.as_f64()).unwrap_or_else(|| v.map(|v| p.to_unit(v)).unwrap_or(f64::NAN)),
    }
}

impl Session {
    /// The Pareto chart of objectives `a` and `b` (indices into `RunView::objectives`), or None
    /// when the trials report fewer than two metrics or an index is out of range. Read from the
    /// run's trials in place (nothing is copied per redraw but the points drawn): the whole
    /// front, then an even sample of the rest (bounded drawing cost).
    pub fn pareto(&self, a: usize, b: usize) -> Option<ParetoData> {
        let run = &self.run;
        let metrics = run.metrics();
        let (ma, mb) = (metrics.get(a)?, metrics.get(b)?);
        if a == b {
            return None;
        }
        let (min_a, min_b) = (ma.direction == Direction::Minimize, mb.direction == Direction::Minimize);
        let n = metrics.len();
        // Every Ok trial as (lane, index).
        let ok: Vec<(usize, usize)> = (0..run.lanes().len())
            .flat_map(|i| run.trials(i).iter().enumerate().filter(|(_, t)| t.is_ok() && t.values.len() == n).map(move |(k, _)| (i, k)))
            .collect();
        let value = |&(i, k): &(usize, usize)| &run.trials(i)[k].values;
        let front = if ok.len() > MAX_PARETO {
            let signed: Vec<(f64, f64)> = ok.iter().map(|p| { let v = value(p); (if min_a { v[a] } else { -v[a] }, if min_b { v[b] } else { -v[b] }) }).collect();
            front_2d(&signed)
        } else {
            Vec::new()
        };
        let points = decimate(ok.len(), MAX_PARETO, None, &front)
            .into_iter()
            .map(|k| {
                let (i, t) = ok[k];
                let v = value(&ok[k]);
                ParetoPoint { a: v[a], b: v[b], feasible: true, label: self.labels[i].get(t).cloned().unwrap_or_default() }
            })
            .collect();
        Some(ParetoData {
            title: "Pareto front".into(),
            x_label: axis_label(&ma.name, &ma.unit),
            y_label: axis_label(&mb.name, &mb.unit),
            points,
            minimize_a: min_a,
            minimize_b: min_b,
            ..ParetoData::default()
        })
    }
}

/// An axis title: the metric's label and unit from the registry ("Workload time (ms)").
pub(super) fn axis_label(name: &str, unit: &str) -> String {
    tunelab_scenario::metrics::label_unit(name, unit)
}

//! The summary of a comparison: median and mean |error| per category, and how often pairs of
//! configurations are ranked as measured.

use super::Compared;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Median and count of |error| in one group.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupSummary {
    pub values: usize,
    pub rows: usize,
    pub median_abs_error: Option<f64>,
    pub mean_abs_error: Option<f64>,
    /// Median signed error (bias): negative = predictions faster/smaller than measured.
    #[serde(default)]
    pub median_signed_error: Option<f64>,
    /// Values predicted below the measured value (for a time: optimistic).
    #[serde(default)]
    pub below: usize,
    pub within_20pct: usize,
    /// Pairs of values in one group (same model, chip and metric) whose measured values differ
    /// by more than 5%, and how many of them the predictions put in the measured order.
    pub ranked_pairs: usize,
    pub ranked_in_order: usize,
}

/// The whole comparison.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Rows of the file and rows with at least one compared value.
    pub rows_total: usize,
    pub rows_covered: usize,
    pub values_compared: usize,
    pub values_unexpressed: usize,
    pub overall: GroupSummary,
    pub by_category: BTreeMap<String, GroupSummary>,
    /// By the framework or engine that ran the row ("" rows: "unstated").
    #[serde(default)]
    pub by_framework: BTreeMap<String, GroupSummary>,
    /// By the layer the row is evidence for ("chip", "kernel:aclnn", "framework:mindie").
    #[serde(default)]
    pub by_layer: BTreeMap<String, GroupSummary>,
}

/// Median of a list (None when empty); NaN-free input assumed.
pub fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    Some(if n % 2 == 1 { s[n / 2] } else { (s[n / 2 - 1] + s[n / 2]) / 2.0 })
}

/// The summary of one group of compared values.
pub fn group(rows: &[&Compared]) -> GroupSummary {
    let pairs = super::ranking::ranking(rows);
    let errs: Vec<f64> = rows.iter().map(|c| c.error.abs()).collect();
    let signed: Vec<f64> = rows.iter().map(|c| c.error).collect();
    let mut ids: Vec<&str> = rows.iter().map(|c| c.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    GroupSummary {
        values: rows.len(),
        rows: ids.len(),
        median_abs_error: median(&errs),
        mean_abs_error: if errs.is_empty() { None } else { Some(errs.iter().sum::<f64>() / errs.len() as f64) },
        median_signed_error: median(&signed),
        below: signed.iter().filter(|e| **e < 0.0).count(),
        within_20pct: errs.iter().filter(|e| **e <= 0.2).count(),
        ranked_pairs: pairs.0,
        ranked_in_order: pairs.1,
    }
}

/// Summaries of `rows` grouped by `key`.
pub fn grouped<'a>(rows: impl IntoIterator<Item = &'a Compared>, key: impl Fn(&Compared) -> String) -> BTreeMap<String, GroupSummary> {
    let mut m: BTreeMap<String, Vec<&Compared>> = BTreeMap::new();
    for c in rows {
        m.entry(key(c)).or_default().push(c);
    }
    m.iter().map(|(k, v)| (k.clone(), group(v))).collect()
}

pub fn summarise(rows: &[Compared], unexpressed: usize, rows_total: usize) -> Summary {
    let all: Vec<&Compared> = rows.iter().collect();
    let overall = group(&all);
    Summary {
        rows_total,
        rows_covered: overall.rows,
        values_compared: rows.len(),
        values_unexpressed: unexpressed,
        by_category: grouped(rows, |c| c.category.clone()),
        by_framework: grouped(rows, |c| if c.framework.is_empty() { "unstated".into() } else { c.framework.clone() }),
        by_layer: grouped(rows, |c| c.layer.clone()),
        overall,
    }
}


/// The headline of one category: the median |error| as shipped, after an in-sample refit and
/// under each of the three leave-outs, the worst of the three, the bias (signed median) of that
/// worst leave-out, and the band coverage.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Headline {
    pub values: usize,
    pub shipped: Option<f64>,
    pub in_sample: Option<f64>,
    pub leave_source_out: Option<f64>,
    pub leave_family_out: Option<f64>,
    pub leave_release_out: Option<f64>,
    /// The largest of the three leave-out medians: the error to expect on a measurement unlike
    /// any Tunelab was fitted to.
    pub worst: Option<f64>,
    /// Which leave-out gave `worst` ("source", "model family", "engine release").
    pub worst_by: String,
    /// The signed median of the worst leave-out (negative: predicted lower than measured).
    pub bias: Option<f64>,
    /// Band coverage (share of held-out values inside the band the product prints for their kind,
    /// computed without their source), as shipped and before widening.
    pub coverage: Option<f64>,
    pub coverage_before_widening: Option<f64>,
}

/// The headline per category (and "all") of a leave-out run.
pub fn headlines(l: &super::loso::Loso) -> BTreeMap<String, Headline> {
    use super::loso::LeaveOut;
    let cov = super::bands::coverage(l);
    let by = |v: &[Compared]| {
        let mut m = grouped(v, |c| c.category.clone());
        m.insert("all".into(), group(&v.iter().collect::<Vec<_>>()));
        m
    };
    let (sh, ins) = (by(&l.shipped), by(&l.in_sample));
    let held: Vec<(LeaveOut, BTreeMap<String, GroupSummary>)> = LeaveOut::ALL.iter().map(|h| (*h, by(l.held(*h)))).collect();
    let mut out = BTreeMap::new();
    for (k, g) in &sh {
        let med = |i: usize| held[i].1.get(k).and_then(|x| x.median_abs_error);
        let mut worst: Option<(f64, usize)> = None;
        for i in 0..3 {
            if let Some(e) = med(i) {
                if worst.map_or(true, |(w, _)| e > w) {
                    worst = Some((e, i));
                }
            }
        }
        let c = cov.get(k);
        out.insert(
            k.clone(),
            Headline {
                values: g.values,
                shipped: g.median_abs_error,
                in_sample: ins.get(k).and_then(|x| x.median_abs_error),
                leave_source_out: med(0),
                leave_family_out: med(1),
                leave_release_out: med(2),
                worst: worst.map(|w| w.0),
                worst_by: worst.map(|w| held[w.1].0.name().to_string()).unwrap_or_default(),
                bias: worst.and_then(|w| held[w.1].1.get(k).and_then(|x| x.median_signed_error)),
                coverage: c.and_then(|c| c.share()),
                coverage_before_widening: c.and_then(|c| c.share_before()),
            },
        );
    }
    out
}

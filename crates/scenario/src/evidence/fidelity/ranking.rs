//! Ranking pairs in n log n: how many pairs of compared values of one group (same model, chip
//! and metric) differ by more than 5% as measured, and how many of them the predictions put in
//! the measured order. The obvious double loop was quadratic in the file: one row with 20,000
//! values took 17-20 s (issue 44). Same counts, by sorting and a Fenwick tree.

use super::Compared;
use std::collections::BTreeMap;

/// (pairs, pairs in the measured order) within groups, a pair of the same case and metric left
/// out; exactly the counts of `ranking_quadratic`.
pub fn ranking(rows: &[&Compared]) -> (usize, usize) {
    if rows.iter().any(|c| !(c.measured.is_finite() && c.measured > 0.0 && c.predicted.is_finite())) {
        // Not a value the readers let through (a compared value is finite and positive); the
        // definition, without the shortcut.
        return ranking_quadratic(rows);
    }
    let mut groups: BTreeMap<&str, Vec<&Compared>> = BTreeMap::new();
    let mut same: BTreeMap<(&str, &str, &str), Vec<&Compared>> = BTreeMap::new();
    for c in rows {
        groups.entry(c.group.as_str()).or_default().push(c);
        same.entry((c.group.as_str(), c.case.as_str(), c.metric.as_str())).or_default().push(c);
    }
    let (mut n, mut ok) = (0, 0);
    for v in groups.values() {
        let (a, b) = count(v);
        n += a;
        ok += b;
    }
    for v in same.values() {
        let (a, b) = count(v);
        n -= a;
        ok -= b;
    }
    (n, ok)
}

/// Every pair of `v`: (pairs more than 5% apart as measured, of them in the measured order).
fn count(v: &[&Compared]) -> (usize, usize) {
    if v.len() < 2 {
        return (0, 0);
    }
    let mut s: Vec<(f64, f64)> = v.iter().map(|c| (c.measured, c.predicted)).collect();
    s.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut ps: Vec<f64> = s.iter().map(|x| x.1).collect();
    ps.sort_by(f64::total_cmp);
    ps.dedup();
    let rank = |p: f64| ps.partition_point(|q| *q < p);
    // For each value j, the values far enough below it are a prefix of the sorted list (the
    // same test as the definition: (m_j - m_i) / m_j > 0.05, monotone in m_i).
    let mut queries: Vec<(usize, usize)> = (0..s.len())
        .map(|j| {
            let mj = s[j].0;
            (s[..j].partition_point(|a| (mj - a.0) / mj > 0.05), j)
        })
        .collect();
    queries.sort_unstable();
    let mut tree = vec![0usize; ps.len() + 1];
    let (mut inserted, mut n, mut ok) = (0usize, 0usize, 0usize);
    for (k, j) in queries {
        while inserted < k {
            let mut i = rank(s[inserted].1) + 1;
            while i < tree.len() {
                tree[i] += 1;
                i += i & i.wrapping_neg();
            }
            inserted += 1;
        }
        n += k;
        // Values of the prefix predicted strictly below value j.
        let mut i = rank(s[j].1);
        while i > 0 {
            ok += tree[i];
            i -= i & i.wrapping_neg();
        }
    }
    (n, ok)
}

/// The definition: every pair, one by one (the reference `ranking` is tested against).
pub fn ranking_quadratic(rows: &[&Compared]) -> (usize, usize) {
    let (mut n, mut ok) = (0, 0);
    for (i, a) in rows.iter().enumerate() {
        for b in &rows[i + 1..] {
            if a.group != b.group || a.metric == b.metric && a.case == b.case {
                continue;
            }
            let dm = (a.measured - b.measured) / a.measured.max(b.measured);
            if dm.abs() <= 0.05 {
                continue;
            }
            n += 1;
            if (a.predicted - b.predicted) * dm > 0.0 {
                ok += 1;
            }
        }
    }
    (n, ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(group: &str, case: &str, metric: &str, m: f64, p: f64) -> Compared {
        Compared {
            id: case.into(), case: case.into(), category: "op".into(), chip: "910B2".into(), metric: metric.into(), unit: "us".into(),
            measured: m, predicted: p, error: p / m - 1.0, predicted_by: String::new(), weight: 1.0, group: group.into(),
            source: String::new(), layer: String::new(), framework: String::new(), launch: String::new(), release: String::new(), family: String::new(), approximations: Vec::new(),
        }
    }

    #[test]
    fn the_fast_count_is_the_definition() {
        let mut rng = tunelab_search::Rng::seed_from_u64(7);
        for trial in 0..200 {
            let n = 1 + trial % 40;
            let v: Vec<Compared> = (0..n)
                .map(|i| {
                    let g = ["a", "b"][rng.below(2) as usize];
                    let case = ["x", "y", "z"][rng.below(3) as usize];
                    let metric = ["t", "u"][rng.below(2) as usize];
                    // Coarse values so ties and the 5% edge occur.
                    let m = 1.0 + (rng.below(20) as f64) * 0.05;
                    let p = 1.0 + rng.below(8) as f64;
                    let _ = i;
                    c(g, case, metric, m, p)
                })
                .collect();
            let r: Vec<&Compared> = v.iter().collect();
            assert_eq!(ranking(&r), ranking_quadratic(&r), "trial {trial}");
        }
    }

    #[test]
    fn one_row_with_20000_values_is_quick() {
        // Issue 44: 17-20 s before. Counted, not timed: the figure is in the benchmark.
        let v: Vec<Compared> = (0..20_000).map(|i| c("g", &format!("r/{}", i % 7), "t", 1.0 + i as f64, 2.0 + (i % 13) as f64)).collect();
        let r: Vec<&Compared> = v.iter().collect();
        let (n, ok) = ranking(&r);
        assert!(n > 100_000_000 && ok <= n, "{n} {ok}");
    }
}

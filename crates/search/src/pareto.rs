//! Pareto dominance, non-dominated sorting and crowding distance (shared by the Study's front
//! and NSGA-II). Points are in "lower is better" form.

/// True if `a` is no worse than `b` everywhere and better somewhere.
pub fn dominates(a: &[f64], b: &[f64]) -> bool {
    let mut better = false;
    for (x, y) in a.iter().zip(b) {
        if x > y {
            return false;
        }
        if x < y {
            better = true;
        }
    }
    better
}

/// Indices of the non-dominated points, in input order.
pub fn front(points: &[Vec<f64>]) -> Vec<usize> {
    (0..points.len())
        .filter(|&i| !points.iter().enumerate().any(|(j, q)| j != i && dominates(q, &points[i])))
        .collect()
}

/// Fronts of increasing rank (Deb's fast non-dominated sort).
pub fn non_dominated_sort(points: &[Vec<f64>]) -> Vec<Vec<usize>> {
    let n = points.len();
    let mut dominated_by_count = vec![0usize; n];
    let mut dominates_list: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n {
        for j in 0..n {
            if i != j && dominates(&points[i], &points[j]) {
                dominates_list[i].push(j);
            } else if i != j && dominates(&points[j], &points[i]) {
                dominated_by_count[i] += 1;
            }
        }
    }
    let mut fronts = Vec::new();
    let mut current: Vec<usize> = (0..n).filter(|&i| dominated_by_count[i] == 0).collect();
    while !current.is_empty() {
        let mut next = Vec::new();
        for &i in &current {
            for &j in &dominates_list[i] {
                dominated_by_count[j] -= 1;
                if dominated_by_count[j] == 0 {
                    next.push(j);
                }
            }
        }
        next.sort_unstable();
        fronts.push(std::mem::take(&mut current));
        current = next;
    }
    fronts
}

/// Crowding distance of each member of one front (infinite at the extremes).
pub fn crowding_distance(points: &[Vec<f64>], members: &[usize]) -> Vec<f64> {
    let m = members.len();
    let mut dist = vec![0.0; m];
    if m <= 2 {
        return vec![f64::INFINITY; m];
    }
    let dims = points[members[0]].len();
    #[allow(clippy::needless_range_loop)] // d indexes every point's objectives, not `points`
    for d in 0..dims {
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_by(|&a, &b| points[members[a]][d].total_cmp(&points[members[b]][d]));
        let lo = points[members[order[0]]][d];
        let hi = points[members[order[m - 1]]][d];
        dist[order[0]] = f64::INFINITY;
        dist[order[m - 1]] = f64::INFINITY;
        if hi > lo {
            for k in 1..m - 1 {
                let gap = points[members[order[k + 1]]][d] - points[members[order[k - 1]]][d];
                dist[order[k]] += gap / (hi - lo);
            }
        }
    }
    dist
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fronts_and_dominance() {
        let pts = vec![vec![1.0, 5.0], vec![2.0, 2.0], vec![3.0, 3.0], vec![5.0, 1.0], vec![4.0, 4.0]];
        assert_eq!(front(&pts), vec![0, 1, 3]);
        let fronts = non_dominated_sort(&pts);
        assert_eq!(fronts[0], vec![0, 1, 3]);
        assert_eq!(fronts[1], vec![2]);
        assert_eq!(fronts[2], vec![4]);
        let cd = crowding_distance(&pts, &fronts[0]);
        assert!(cd[0].is_infinite() && cd[2].is_infinite() && cd[1].is_finite());
    }
}

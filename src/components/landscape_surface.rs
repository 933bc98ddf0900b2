//! The landscape chart's data: a cache's surface projected on two parameters, the strategies'
//! samples on top and the optimum once the race is done. Pure functions of the landscape and the
//! trials, kept apart from the panel's components (`landscape.rs`) so both stay small.

use crate::charts::numbers::{describe, fmt_unit};
use crate::charts::surface::{SurfaceData, SurfaceSeries};
use tunelab_scenario::stages::landscape::{self, Landscape};

/// Default projection axes: the two parameters with the most values (ties: the first).
pub fn default_axes(space: &tunelab_search::Space) -> (usize, usize) {
    let mut idx: Vec<usize> = (0..space.params().len()).collect();
    idx.sort_by_key(|&i| std::cmp::Reverse(space.params()[i].levels().unwrap_or(0)));
    let a = idx.first().copied().unwrap_or(0);
    let b = idx.get(1).copied().unwrap_or(a);
    (a.min(b), a.max(b))
}

/// The rank of a value among parameter `i`'s levels (its column or row).
fn rank_of(space: &tunelab_search::Space, i: usize, c: &tunelab_search::Config) -> Option<usize> {
    let p = space.params().get(i)?;
    p.level_of(c.0.get(i)?).map(|l| p.ordinal_rank(l))
}

/// The surface of `land` projected on parameters `(ax, ay)`: each cell holds the best value over
/// the other parameters (the whole surface itself for a 2-D landscape), with the samples of
/// `lanes` (name, trials' configurations) on top and the optimum when `done`.
/// `slice` is the space the scenario races on (`landscape::slice_space`): only its
/// configurations are drawn, and the optimum is the slice's.
pub fn surface_data(land: &Landscape, slice: &tunelab_search::Space, (ax, ay): (usize, usize), lanes: &[(String, Vec<tunelab_search::Config>)], done: bool) -> SurfaceData {
    let space = slice;
    let m = land.metric();
    let minimize = m.direction == tunelab_search::Direction::Minimize;
    let labels = |i: usize| -> Vec<String> {
        space.params().get(i).and_then(|p| p.levels().map(|n| (0..n).map(|r| p.level_value(p.level_at_rank(r)).to_string()).collect())).unwrap_or_default()
    };
    let (xv, yv) = (labels(ax), labels(ay));
    let (nx, ny) = (xv.len(), yv.len());
    let mut cells = vec![f64::NAN; nx * ny];
    for (c, v) in land.all_points() {
        if land.space().members().is_some() && !space.contains(&c) {
            continue;
        }
        let (Some(cx), Some(cy), Some(v)) = (rank_of(space, ax, &c), rank_of(space, ay, &c), v) else { continue };
        let k = cy * nx + cx;
        if k < cells.len() && (cells[k].is_nan() || (minimize && v < cells[k]) || (!minimize && v > cells[k])) {
            cells[k] = v;
        }
    }
    let free = space.params().iter().filter(|p| p.levels().is_none_or(|n| n > 1)).count();
    let projected = free > 2;
    // Samples of one projected cell spread over it (golden-ratio offsets), so they stay apart.
    let spread = |n: usize| if projected { ((n as f64 * 0.618_034) % 1.0 - 0.5) * 0.7 } else { 0.0 };
    let series = lanes
        .iter()
        .map(|(name, configs)| SurfaceSeries {
            name: name.clone(),
            points: configs
                .iter()
                .enumerate()
                .filter_map(|(n, c)| Some((rank_of(space, ax, c)? as f64 + spread(n), rank_of(space, ay, c)? as f64 + spread(n + 7))))
                .collect(),
        })
        .collect();
    let optimum = if done {
        landscape::optimum_in(land, space).and_then(|(c, v)| {
            let what = format!("{} at {}", fmt_unit(v, &m.unit), describe(&c, space.names()));
            Some((rank_of(space, ax, &c)? as f64, rank_of(space, ay, &c)? as f64, what))
        })
    } else {
        None
    };
    let names = space.names();
    SurfaceData {
        title: land.title(),
        x_label: names.get(ax).cloned().unwrap_or_default(),
        y_label: names.get(ay).cloned().unwrap_or_default(),
        value_label: tunelab_scenario::metrics::label_unit(&m.name, &m.unit),
        x_values: xv,
        y_values: yv,
        cells,
        minimize,
        series,
        optimum,
        note: if projected {
            format!("{free} parameters projected on two: each cell is the best over the other {}", free - 2)
        } else if free < names.len() {
            let fixed: Vec<String> = space.params().iter().filter(|p| p.levels() == Some(1)).map(|p| format!("{}={}", p.name, p.level_value(0))).collect();
            format!("A slice of the cache; fixed: {}", fixed.join(", "))
        } else {
            String::new()
        },
    }
}

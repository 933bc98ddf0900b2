//! A landscape drawn whole over two of its parameters: the surface the replay panel paints.

use super::{Landscape, MAX_RESOLUTION};
use crate::spec::scenario::clip;
use serde::Serialize;
use tunelab_search::{Config, Space, Value};

/// A 2-D view of a landscape over two of its parameters, drawable whole: each cell holds the
/// best value over every other parameter (a toy's x-y grid is exactly its surface). Levels are
/// in value order for numeric parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Surface {
    pub x_param: String,
    pub y_param: String,
    pub x_values: Vec<Value>,
    pub y_values: Vec<Value>,
    /// Row-major (index iy * x_values.len() + ix): the best value of the points with those two
    /// values; None where every such point failed or none was cached.
    pub values: Vec<Option<f64>>,
    /// True when other parameters were folded in ("best over the rest"); false for a 2-D space.
    pub best_over_rest: bool,
    /// Parameter indices in the space, for `cell_of`.
    x_index: usize,
    y_index: usize,
    /// level -> rank (position on the axis) of each parameter.
    x_rank: Vec<usize>,
    y_rank: Vec<usize>,
}

impl Surface {
    /// The cell (ix, iy) of a configuration of the landscape's space: where to draw a sample.
    pub fn cell_of(&self, space: &Space, c: &Config) -> Option<(usize, usize)> {
        let ps = space.params();
        let lx = ps.get(self.x_index)?.level_of(c.0.get(self.x_index)?)?;
        let ly = ps.get(self.y_index)?.level_of(c.0.get(self.y_index)?)?;
        Some((*self.x_rank.get(lx)?, *self.y_rank.get(ly)?))
    }
}

/// Most levels per axis of a surface (the grid's own `MAX_RESOLUTION`).
pub const MAX_SURFACE_LEVELS: usize = MAX_RESOLUTION;

impl Landscape {
    /// The two parameters a surface shows by default: a toy's x and y; for a cache the two
    /// parameters whose choice moves the best reachable value most (for each parameter, the
    /// spread between its best and its worst level, each level at its best over the rest;
    /// ties keep the file's order). Parameters with one level are skipped.
    pub fn default_axes(&self) -> Option<(String, String)> {
        let space = self.space();
        let names = space.names();
        if names.len() < 2 {
            return None;
        }
        if self.grid().is_some() {
            return Some((names[0].clone(), names[1].clone()));
        }
        let m = self.metric();
        let points = self.all_points();
        let mut spread: Vec<(usize, f64)> = Vec::new();
        for (i, p) in space.params().iter().enumerate() {
            let n = p.levels().unwrap_or(0);
            if !(2..=MAX_SURFACE_LEVELS).contains(&n) {
                continue;
            }
            let mut best = vec![f64::INFINITY; n];
            for (c, v) in &points {
                if let (Some(v), Some(l)) = (v, p.level_of(c.get(i))) {
                    best[l] = best[l].min(m.signed(*v));
                }
            }
            let ok: Vec<f64> = best.into_iter().filter(|x| x.is_finite()).collect();
            if ok.len() >= 2 {
                let lo = ok.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = ok.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                spread.push((i, hi - lo));
            }
        }
        // Stable sort: equal spreads keep the file's order.
        spread.sort_by(|a, b| b.1.total_cmp(&a.1));
        match spread.as_slice() {
            [a, b, ..] => {
                let (i, j) = (a.0.min(b.0), a.0.max(b.0));
                Some((names[i].clone(), names[j].clone()))
            }
            _ => None,
        }
    }

    /// The landscape over parameters `x` and `y` (names), each cell the best value over the
    /// other parameters. Errors name an unknown parameter or one with too many levels.
    pub fn surface(&self, x: &str, y: &str) -> Result<Surface, String> {
        let space = self.space();
        let find = |n: &str| space.index_of(n).ok_or_else(|| format!("surface: no parameter '{}' (there are {})", clip(n), space.names().join(", ")));
        let (xi, yi) = (find(x)?, find(y)?);
        if xi == yi {
            return Err("surface: choose two different parameters".into());
        }
        let axis = |i: usize| -> Result<(Vec<Value>, Vec<usize>), String> {
            let p = &space.params()[i];
            let n = p.levels().filter(|n| (1..=MAX_SURFACE_LEVELS).contains(n)).ok_or_else(|| format!("surface: parameter '{}' has more than {MAX_SURFACE_LEVELS} levels", p.name))?;
            let values = (0..n).map(|r| p.level_value(p.level_at_rank(r))).collect();
            let rank = (0..n).map(|l| p.ordinal_rank(l)).collect();
            Ok((values, rank))
        };
        let ((x_values, x_rank), (y_values, y_rank)) = (axis(xi)?, axis(yi)?);
        let m = self.metric();
        let nx = x_values.len();
        let mut values: Vec<Option<f64>> = vec![None; nx * y_values.len()];
        let mut surface = Surface { x_param: x.into(), y_param: y.into(), x_values, y_values, values: Vec::new(), best_over_rest: space.names().len() > 2, x_index: xi, y_index: yi, x_rank, y_rank };
        for (c, v) in self.all_points() {
            let (Some(v), Some((ix, iy))) = (v, surface.cell_of(space, &c)) else { continue };
            let cell = &mut values[iy * nx + ix];
            if cell.is_none_or(|b| m.signed(v) < m.signed(b)) {
                *cell = Some(v);
            }
        }
        surface.values = values;
        Ok(surface)
    }
}

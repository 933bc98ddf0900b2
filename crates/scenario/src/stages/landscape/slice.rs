//! A slice of a Kernel Tuner cache: the scenario's `space` entries restrict the cached
//! configurations (`fixed` pins a parameter, `choices` or `low`/`high` keep some of its values),
//! so a race can run on two parameters of a real cache with the others held, e.g. at the best
//! measured configuration. The slice is part of the scenario, so a link carries it; the cache
//! itself is unchanged (and its digest with it). A toy landscape is a 2-D grid drawn whole:
//! `space` entries are refused there, naming the field, never ignored.

use super::{Kind, Landscape};
use crate::spec::scenario::{clip, Scenario};
use tunelab_search::{Config, Space};

/// The space the scenario races on: the landscape's own, or the cached configurations its
/// `space` entries keep (an unknown parameter, a value no cached configuration has, or an
/// empty slice is an error naming the field).
pub fn slice_space(s: &Scenario, land: &Landscape) -> Result<Space, String> {
    if s.space.is_empty() {
        return Ok(land.space().clone());
    }
    let Kind::Cache { cache, .. } = &land.kind else {
        let name = s.space.keys().next().map(|k| clip(k)).unwrap_or_default();
        return Err(format!("space.{name}: a toy landscape is drawn whole on its grid; 'space' entries slice Kernel Tuner caches only"));
    };
    let params = crate::stages::apply_overrides(s, cache.space.params().to_vec())?;
    let members = cache.space.members().unwrap_or(&[]);
    // Each restricted parameter's kept values must be values some cached configuration has.
    for (i, (p, old)) in params.iter().zip(cache.space.params()).enumerate() {
        if p.domain == old.domain {
            continue;
        }
        if !members.iter().any(|c| c.0.get(i).is_some_and(|v| p.contains(v))) {
            let seen: Vec<String> = (0..old.levels().unwrap_or(0).min(12)).map(|l| old.level_value(l).to_string()).collect();
            return Err(format!("space.{}: no cached configuration has this value (the cache has {})", clip(&p.name), seen.join(", ")));
        }
    }
    let kept: Vec<Config> = members.iter().filter(|c| params.iter().zip(&c.0).all(|(p, v)| p.contains(v))).cloned().collect();
    if kept.is_empty() {
        return Err("space: no cached configuration has all the values kept by the 'space' entries together".into());
    }
    Space::from_members(params, kept)
}

/// The best measured configuration within `space` (ties: the first in the space's order); None
/// when every measurement there failed. The whole cache's optimum when `space` is unsliced.
pub fn optimum_in(land: &Landscape, space: &Space) -> Option<(Config, f64)> {
    let m = land.metric();
    let mut best: Option<(Config, f64)> = None;
    for (c, v) in land.all_points() {
        let Some(v) = v else { continue };
        if space.contains(&c) && best.as_ref().is_none_or(|b| m.signed(v) < m.signed(b.1)) {
            best = Some((c, v));
        }
    }
    best
}

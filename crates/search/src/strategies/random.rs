//! Random sampling: uniform over the feasible space, never repeating a configuration.
//! The baseline every other strategy must beat.

use crate::rng::Rng;
use crate::strategy::{History, Strategy};
use crate::value::Config;

/// Uniform random search without replacement.
#[derive(Default)]
pub struct RandomSearch;

impl Strategy for RandomSearch {
    fn name(&self) -> &'static str {
        "random"
    }

    fn ask(&mut self, h: &History, rng: &mut Rng) -> Vec<Config> {
        for _ in 0..100 {
            match h.space.sample(rng) {
                Some(c) if !h.is_seen(&c) => return vec![c],
                Some(_) => {}
                None => return vec![],
            }
        }
        // Nearly everything seen: pick among the remaining points directly.
        if let Some(all) = h.space.feasible_points() {
            let unseen: Vec<&Config> = all.iter().filter(|c| !h.is_seen(c)).collect();
            return rng.choose(&unseen).map(|c| vec![(*c).clone()]).unwrap_or_default();
        }
        vec![]
    }
}

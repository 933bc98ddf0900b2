//! Grid search: every feasible configuration in a fixed order, enumerated lazily so huge spaces
//! cost nothing up front. Continuous floats are gridded at `points_per_float` levels.

use crate::param::{Domain, Param};
use crate::rng::Rng;
use crate::space::Space;
use crate::strategy::{History, Strategy};
use crate::value::Config;

/// Exhaustive search in mixed-radix order (last parameter fastest).
pub struct GridSearch {
    /// Levels used for a continuous float parameter.
    pub points_per_float: usize,
    /// Next position of the mixed-radix counter; None when finished.
    digits: Option<Vec<usize>>,
    radices: Vec<usize>,
    /// For member spaces: next index into the member list.
    next_member: usize,
}

impl Default for GridSearch {
    fn default() -> Self {
        GridSearch { points_per_float: 10, digits: None, radices: Vec::new(), next_member: 0 }
    }
}

impl GridSearch {
    fn value(&self, space: &Space, i: usize, level: usize) -> crate::value::Value {
        let p: &Param = &space.params()[i];
        match (&p.domain, p.levels()) {
            (Domain::Float { .. }, None) => {
                let n = self.points_per_float.max(2);
                p.from_unit(level as f64 / (n - 1) as f64)
            }
            _ => p.level_value(level),
        }
    }
}

impl Strategy for GridSearch {
    fn name(&self) -> &'static str {
        "grid"
    }

    fn ask(&mut self, h: &History, _rng: &mut Rng) -> Vec<Config> {
        if let Some(members) = h.space.members() {
            while self.next_member < members.len() {
                let c = &members[self.next_member];
                self.next_member += 1;
                if !h.is_seen(c) && h.space.contains(c) {
                    return vec![c.clone()];
                }
            }
            return vec![];
        }
        if self.radices.is_empty() {
            self.radices = h.space.params().iter().map(|p| p.levels().unwrap_or(self.points_per_float.max(2))).collect();
            self.digits = Some(vec![0; self.radices.len()]);
        }
        while let Some(d) = self.digits.clone() {
            // Advance the counter before returning, so the next ask moves on.
            let mut next = d.clone();
            let mut i = next.len();
            self.digits = loop {
                if i == 0 {
                    break None;
                }
                i -= 1;
                next[i] += 1;
                if next[i] < self.radices[i] {
                    break Some(next);
                }
                next[i] = 0;
            };
            let c = Config(d.iter().enumerate().map(|(i, &l)| self.value(h.space, i, l)).collect());
            if !h.is_seen(&c) && h.space.contains(&c) {
                return vec![c];
            }
        }
        vec![]
    }
}

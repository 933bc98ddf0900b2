//! A search space: parameters, constraints over them, and optionally an explicit member list
//! (a replayed Kernel Tuner cache is exactly the set of measured configurations).

use crate::expr::Expr;
use crate::param::Param;
use crate::rng::Rng;
use crate::value::{Config, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// Rejection-sampling attempts before falling back to enumerating the feasible set.
pub const SAMPLE_TRIES: usize = 2_000;
/// Largest product space that is enumerated to sample from a tightly constrained space.
const ENUMERATE_LIMIT: u128 = 2_000_000;

/// Parameters plus constraints; every strategy proposes points of this.
#[derive(Clone, Debug)]
pub struct Space {
    params: Vec<Param>,
    names: Vec<String>,
    constraints: Vec<Expr>,
    members: Option<Arc<Members>>,
    /// Feasible points of a tightly constrained product space, enumerated once on demand.
    feasible_cache: Arc<std::sync::OnceLock<Option<Vec<Config>>>>,
}

#[derive(Debug)]
struct Members {
    list: Vec<Config>,
    index: HashMap<Config, usize>,
    /// Unit-box coordinates of every member, flat (member i at i * dims): one contiguous
    /// array keeps the nearest-member scan in cache.
    units: Vec<f64>,
    dims: usize,
}

impl Space {
    /// A product space of `params` filtered by `constraints` (expressions over the names).
    pub fn new(params: Vec<Param>, constraints: &[String]) -> Result<Space, String> {
        if params.is_empty() {
            return Err("the search space has no parameters".into());
        }
        // Duplicate names are found with a hash set: a linear scan per parameter made set-up
        // quadratic (an operator graph of 20,000 operators took minutes; issue 13 #4).
        let mut names: Vec<String> = Vec::with_capacity(params.len());
        let mut declared: std::collections::HashSet<&str> = std::collections::HashSet::with_capacity(params.len());
        for p in &params {
            p.validate()?;
            if !declared.insert(p.name.as_str()) {
                return Err(format!("parameter '{}' is declared twice", p.name));
            }
            names.push(p.name.clone());
        }
        let constraints = constraints
            .iter()
            .map(|c| Expr::parse(c, &names))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Space { params, names, constraints, members: None, feasible_cache: Default::default() })
    }

    /// A space that is exactly the listed configurations (duplicates dropped, order kept).
    pub fn from_members(params: Vec<Param>, list: Vec<Config>) -> Result<Space, String> {
        let mut space = Space::new(params, &[])?;
        if list.is_empty() {
            return Err("the search space is empty: no configurations".into());
        }
        let mut index = HashMap::with_capacity(list.len());
        let mut kept = Vec::with_capacity(list.len());
        for c in list {
            if c.len() != space.params.len() {
                return Err(format!("a configuration has {} values for {} parameters", c.len(), space.params.len()));
            }
            for (p, v) in space.params.iter().zip(&c.0) {
                if !p.contains(v) {
                    return Err(format!("value {v} is not a value of parameter '{}'", p.name));
                }
            }
            if !index.contains_key(&c) {
                index.insert(c.clone(), kept.len());
                kept.push(c);
            }
        }
        let units = kept.iter().flat_map(|c| space.unit_of_params(c)).collect();
        let dims = space.params.len();
        space.members = Some(Arc::new(Members { list: kept, index, units, dims }));
        Ok(space)
    }

    /// The parameters, in configuration order.
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// Parameter names, in configuration order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Index of the named parameter.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// The constraint sources.
    pub fn constraint_sources(&self) -> Vec<&str> {
        self.constraints.iter().map(|c| c.source()).collect()
    }

    /// The explicit member list, if this space is one.
    pub fn members(&self) -> Option<&[Config]> {
        self.members.as_deref().map(|m| m.list.as_slice())
    }

    /// Number of points before constraints (members: the list length); None if continuous.
    pub fn cardinality(&self) -> Option<u128> {
        if let Some(m) = &self.members {
            return Some(m.list.len() as u128);
        }
        self.params.iter().try_fold(1u128, |acc, p| p.levels().map(|n| acc.saturating_mul(n as u128)))
    }

    /// Why a configuration is not a point of the space, or Ok.
    pub fn check(&self, c: &Config) -> Result<(), String> {
        if c.len() != self.params.len() {
            return Err(format!("expected {} values, got {}", self.params.len(), c.len()));
        }
        for (p, v) in self.params.iter().zip(&c.0) {
            if !p.contains(v) {
                return Err(format!("{v} is not a value of '{}'", p.name));
            }
        }
        if let Some(m) = &self.members {
            if !m.index.contains_key(c) {
                return Err("not one of the space's configurations".into());
            }
        }
        for e in &self.constraints {
            if !e.holds(c) {
                return Err(format!("violates {}", e.source()));
            }
        }
        Ok(())
    }

    /// True if the configuration is a feasible point.
    pub fn contains(&self, c: &Config) -> bool {
        self.check(c).is_ok()
    }

    /// A uniformly random feasible point, or None if none could be found (empty space).
    pub fn sample(&self, rng: &mut Rng) -> Option<Config> {
        if let Some(m) = &self.members {
            return rng.choose(&m.list).cloned();
        }
        for _ in 0..SAMPLE_TRIES {
            let c = Config(self.params.iter().map(|p| p.from_unit(rng.unit())).collect());
            if self.contains(&c) {
                return Some(c);
            }
        }
        // Tight constraints: sample from the enumerated feasible set if it is small enough.
        self.feasible_points().and_then(|pts| rng.choose(pts).cloned())
    }

    /// Every feasible point, when the product space is small enough to enumerate.
    pub fn feasible_points(&self) -> Option<&[Config]> {
        if let Some(m) = &self.members {
            return Some(&m.list);
        }
        self.feasible_cache
            .get_or_init(|| {
                let n = self.cardinality()?;
                (n <= ENUMERATE_LIMIT).then(|| self.enumerate().collect())
            })
            .as_deref()
    }

    /// Lazily enumerates the feasible points in a fixed order (members in list order; product
    /// spaces in mixed-radix order, last parameter fastest). Continuous floats yield nothing.
    pub fn enumerate(&self) -> Box<dyn Iterator<Item = Config> + '_> {
        if let Some(m) = &self.members {
            return Box::new(m.list.iter().filter(|c| self.constraints.iter().all(|e| e.holds(c))).cloned());
        }
        let radices: Option<Vec<usize>> = self.params.iter().map(|p| p.levels()).collect();
        let Some(radices) = radices else { return Box::new(std::iter::empty()) };
        let mut digits = vec![0usize; radices.len()];
        let mut done = radices.contains(&0);
        Box::new(std::iter::from_fn(move || loop {
            if done {
                return None;
            }
            let c = self.from_levels(&digits);
            let mut i = digits.len();
            loop {
                if i == 0 {
                    done = true;
                    break;
                }
                i -= 1;
                digits[i] += 1;
                if digits[i] < radices[i] {
                    break;
                }
                digits[i] = 0;
            }
            if self.constraints.iter().all(|e| e.holds(&c)) {
                return Some(c);
            }
        }))
    }

    /// The configuration at the given level of each (discrete) parameter.
    pub fn from_levels(&self, levels: &[usize]) -> Config {
        Config(self.params.iter().zip(levels).map(|(p, &l)| p.level_value(l)).collect())
    }

    /// Level of each parameter, or None if a parameter is continuous or the value foreign.
    pub fn levels_of(&self, c: &Config) -> Option<Vec<usize>> {
        self.params.iter().zip(&c.0).map(|(p, v)| p.level_of(v)).collect()
    }

    fn unit_of_params(&self, c: &Config) -> Vec<f64> {
        self.params.iter().zip(&c.0).map(|(p, v)| p.to_unit(v)).collect()
    }

    /// Maps a configuration into the unit box (one coordinate per parameter).
    pub fn to_unit(&self, c: &Config) -> Vec<f64> {
        if let Some(m) = &self.members {
            if let Some(&i) = m.index.get(c) {
                return m.units[i * m.dims..(i + 1) * m.dims].to_vec();
            }
        }
        self.unit_of_params(c)
    }

    /// Like `from_unit`, but a member space returns `anchor` unless some member is strictly
    /// closer to `u`. Variation operators pass the parent: a move that snaps back to it is
    /// retried anyway, and the parent's distance bounds the scan, which makes it much cheaper.
    pub fn from_unit_near(&self, u: &[f64], anchor: &Config) -> Config {
        let Some(m) = &self.members else { return self.from_unit(u) };
        let snapped = Config(self.params.iter().zip(u).map(|(p, &x)| p.from_unit(x)).collect());
        if m.index.contains_key(&snapped) {
            return snapped;
        }
        let Some(&a) = m.index.get(anchor) else { return self.from_unit(u) };
        let bound: f64 = m.units[a * m.dims..(a + 1) * m.dims].iter().zip(u).map(|(x, y)| (x - y) * (x - y)).sum();
        self.nearest_member(m, u, (bound, a))
    }

    /// The member nearest to `u` (Euclidean in the unit box), starting from a known candidate.
    fn nearest_member(&self, m: &Members, u: &[f64], mut best: (f64, usize)) -> Config {
        'members: for (i, pt) in m.units.chunks_exact(m.dims.max(1)).enumerate() {
            // Stop summing as soon as this member is no closer: same answer, far less work
            // on large caches where most members are far away.
            let mut d = 0.0;
            for (a, b) in pt.iter().zip(u) {
                d += (a - b) * (a - b);
                if d >= best.0 {
                    continue 'members;
                }
            }
            best = (d, i);
        }
        m.list[best.1].clone()
    }

    /// Maps a unit-box point to a configuration. Member spaces snap to the nearest member
    /// (Euclidean in the unit box), as Kernel Tuner does; product spaces snap per parameter
    /// and may still violate constraints (check with `contains`).
    pub fn from_unit(&self, u: &[f64]) -> Config {
        if let Some(m) = &self.members {
            // The grid point nearest to `u` (per-parameter snapping) is the nearest member
            // whenever it is a member: members are a subset of the grid. Checking it first makes
            // the common case O(parameters) instead of a scan of every member.
            let snapped = Config(self.params.iter().zip(u).map(|(p, &x)| p.from_unit(x)).collect());
            if m.index.contains_key(&snapped) {
                return snapped;
            }
            return self.nearest_member(m, u, (f64::INFINITY, 0));
        }
        Config(self.params.iter().zip(u).map(|(p, &x)| p.from_unit(x)).collect())
    }

    /// Feasible configurations that differ from `c` in exactly one parameter: by one level for
    /// ordered parameters (both directions), to any other level for string categories, and by
    /// a tenth of the range for continuous floats.
    pub fn neighbours(&self, c: &Config) -> Vec<Config> {
        let mut out = Vec::new();
        for (i, p) in self.params.iter().enumerate() {
            let mut push = |v: Value| {
                let mut n = c.clone();
                n.0[i] = v;
                if n != *c && self.contains(&n) {
                    out.push(n);
                }
            };
            match p.levels() {
                Some(levels) if p.is_ordinal() => {
                    let Some(l) = p.level_of(&c.0[i]) else { continue };
                    let r = p.ordinal_rank(l);
                    if r > 0 {
                        push(p.level_value(p.level_at_rank(r - 1)));
                    }
                    if r + 1 < levels {
                        push(p.level_value(p.level_at_rank(r + 1)));
                    }
                }
                Some(levels) => {
                    for l in 0..levels {
                        push(p.level_value(l));
                    }
                }
                None => {
                    let u = p.to_unit(&c.0[i]);
                    push(p.from_unit(u - 0.1));
                    push(p.from_unit(u + 0.1));
                }
            }
        }
        out
    }

    /// A random feasible point near `c`: each parameter moves with probability `rate` by a
    /// Gaussian step of `scale` in unit coordinates (string categories jump to any choice).
    /// Falls back to a random neighbour, then to `c` itself.
    pub fn perturb(&self, c: &Config, rate: f64, scale: f64, rng: &mut Rng) -> Config {
        let base = self.to_unit(c);
        for _ in 0..20 {
            let mut u = base.clone();
            let mut moved = false;
            for (i, p) in self.params.iter().enumerate() {
                if rng.chance(rate) {
                    moved = true;
                    u[i] = if p.is_ordinal() { u[i] + scale * rng.normal() } else { rng.unit() };
                }
            }
            if !moved {
                let i = rng.below(self.params.len());
                u[i] += scale * rng.normal();
            }
            let n = self.from_unit(&u);
            if n != *c && self.contains(&n) {
                return n;
            }
        }
        let ns = self.neighbours(c);
        rng.choose(&ns).cloned().unwrap_or_else(|| c.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 13 #4: set-up is linear in the number of parameters. 200,000 parameters (ten times
    /// the operator graph that took 189 s) build in well under a second here; with the former
    /// linear scan per name this test ran for minutes. A duplicate is still found, even last.
    #[test]
    fn many_parameters_set_up_without_a_quadratic_duplicate_check() {
        let n = 200_000;
        let params: Vec<Param> = (0..n).map(|i| Param::int(&format!("op{i}"), 0, 1, 1)).collect();
        let space = Space::new(params.clone(), &[]).unwrap();
        assert_eq!(space.params().len(), n);
        let mut dup = params;
        dup.push(Param::int("op7", 0, 1, 1));
        assert!(Space::new(dup, &[]).unwrap_err().contains("'op7' is declared twice"));
    }

    fn space() -> Space {
        Space::new(
            vec![Param::pow2("baseM", 16, 256), Param::pow2("baseK", 16, 256), Param::categorical("o", vec!["m".into(), "n".into()])],
            &["baseM * baseK * 2 <= 65536".into()],
        )
        .unwrap()
    }

    #[test]
    fn enumeration_respects_constraints_and_counts() {
        let s = space();
        let all: Vec<Config> = s.enumerate().collect();
        assert_eq!(s.cardinality(), Some(50));
        assert!(all.iter().all(|c| s.contains(c)));
        // pairs with m*k <= 32768: only (256,256) is excluded -> 24 of 25, times 2.
        assert_eq!(all.len(), 48);
    }

    #[test]
    fn sampling_and_neighbours_stay_feasible() {
        let s = space();
        let mut r = Rng::seed_from_u64(7);
        for _ in 0..200 {
            let c = s.sample(&mut r).unwrap();
            assert!(s.contains(&c));
            for n in s.neighbours(&c) {
                assert!(s.contains(&n));
            }
            assert!(s.contains(&s.perturb(&c, 0.5, 0.2, &mut r)));
        }
    }

    #[test]
    fn member_spaces_snap_to_members() {
        let ps = vec![Param::int("a", 0, 9, 1), Param::int("b", 0, 9, 1)];
        let pts = vec![Config(vec![Value::Int(1), Value::Int(1)]), Config(vec![Value::Int(8), Value::Int(8)])];
        let s = Space::from_members(ps, pts.clone()).unwrap();
        assert_eq!(s.from_unit(&[0.0, 0.2]), pts[0]);
        assert_eq!(s.from_unit(&[0.9, 0.7]), pts[1]);
        assert!(!s.contains(&Config(vec![Value::Int(1), Value::Int(8)])));
    }

    #[test]
    fn bad_spaces_are_errors() {
        assert!(Space::new(vec![], &[]).is_err());
        let p = || vec![Param::int("a", 0, 3, 1)];
        assert!(Space::new(p(), &["b < 2".into()]).unwrap_err().contains("'b'"));
        assert!(Space::from_members(p(), vec![]).is_err());
        let dup = vec![Param::int("a", 0, 3, 1), Param::int("a", 0, 3, 1)];
        assert!(Space::new(dup, &[]).is_err());
    }
}

//! Parameters: the axes of a search space, each with one mapping to the unit interval so that
//! strategies can treat every kind alike (the Optuna idea).

use crate::value::Value;
use serde::{Deserialize, Serialize};

/// The set of values one parameter may take.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Domain {
    /// Integers low, low+step, ... up to high.
    Int {
        low: i64,
        high: i64,
        #[serde(default = "one")]
        step: i64,
    },
    /// Powers of two from low to high (both powers of two).
    Pow2 { low: i64, high: i64 },
    /// Floats in [low, high], linear or logarithmic, optionally on a step grid.
    Float {
        low: f64,
        high: f64,
        #[serde(default)]
        log: bool,
        #[serde(default)]
        step: Option<f64>,
    },
    /// An unordered list of choices (numbers or strings). All-numeric lists are treated as
    /// ordered by value for neighbourhood moves.
    Categorical { choices: Vec<Value> },
}

fn one() -> i64 {
    1
}

/// One named parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    #[serde(flatten)]
    pub domain: Domain,
}

/// Largest number of levels a discrete parameter may have (keeps enumeration bounded).
pub const MAX_LEVELS: i64 = 10_000_000;

impl Param {
    /// Integer range with a step.
    pub fn int(name: &str, low: i64, high: i64, step: i64) -> Param {
        Param { name: name.into(), domain: Domain::Int { low, high, step } }
    }
    /// Powers of two between low and high.
    pub fn pow2(name: &str, low: i64, high: i64) -> Param {
        Param { name: name.into(), domain: Domain::Pow2 { low, high } }
    }
    /// Float range, linear or log, optionally stepped.
    pub fn float(name: &str, low: f64, high: f64, log: bool, step: Option<f64>) -> Param {
        Param { name: name.into(), domain: Domain::Float { low, high, log, step } }
    }
    /// Categorical choices.
    pub fn categorical(name: &str, choices: Vec<Value>) -> Param {
        Param { name: name.into(), domain: Domain::Categorical { choices } }
    }

    /// Checks the domain is well formed; the message names the parameter and the problem.
    pub fn validate(&self) -> Result<(), String> {
        let n = &self.name;
        if n.trim().is_empty() {
            return Err("a parameter has an empty name".into());
        }
        match &self.domain {
            Domain::Int { low, high, step } => {
                if *step <= 0 {
                    return Err(format!("parameter '{n}': step must be positive, got {step}"));
                }
                if low > high {
                    return Err(format!("parameter '{n}': low {low} is above high {high}"));
                }
                if (high - low) / step + 1 > MAX_LEVELS {
                    return Err(format!("parameter '{n}': more than {MAX_LEVELS} values"));
                }
            }
            Domain::Pow2 { low, high } => {
                if *low <= 0 || low.count_ones() != 1 || *high <= 0 || high.count_ones() != 1 {
                    return Err(format!("parameter '{n}': pow2 bounds must be powers of two, got {low}..{high}"));
                }
                if low > high {
                    return Err(format!("parameter '{n}': low {low} is above high {high}"));
                }
            }
            Domain::Float { low, high, log, step } => {
                if !low.is_finite() || !high.is_finite() {
                    return Err(format!("parameter '{n}': bounds must be finite"));
                }
                if low > high {
                    return Err(format!("parameter '{n}': low {low} is above high {high}"));
                }
                if *log && *low <= 0.0 {
                    return Err(format!("parameter '{n}': a log range needs a positive low, got {low}"));
                }
                if let Some(s) = step {
                    if !(s.is_finite() && *s > 0.0) {
                        return Err(format!("parameter '{n}': step must be positive, got {s}"));
                    }
                    if (high - low) / s + 1.0 > MAX_LEVELS as f64 {
                        return Err(format!("parameter '{n}': more than {MAX_LEVELS} values"));
                    }
                }
            }
            Domain::Categorical { choices } => {
                if choices.is_empty() {
                    return Err(format!("parameter '{n}': no choices"));
                }
                if choices.iter().any(|c| matches!(c, Value::Float(f) if !f.is_finite())) {
                    return Err(format!("parameter '{n}': choices must be finite numbers or strings"));
                }
            }
        }
        Ok(())
    }

    /// Number of distinct values, or None for a continuous float.
    pub fn levels(&self) -> Option<usize> {
        match &self.domain {
            Domain::Int { low, high, step } => Some(((high - low) / step + 1) as usize),
            Domain::Pow2 { low, high } => {
                Some((high.trailing_zeros() - low.trailing_zeros() + 1) as usize)
            }
            Domain::Float { low, high, step: Some(s), .. } => {
                Some(libm::floor((high - low) / s + 1e-9) as usize + 1)
            }
            Domain::Float { .. } => None,
            Domain::Categorical { choices } => Some(choices.len()),
        }
    }

    /// The value at level `i` of a discrete parameter (clamped to the last level).
    pub fn level_value(&self, i: usize) -> Value {
        let n = self.levels().unwrap_or(1).max(1);
        let i = i.min(n - 1);
        match &self.domain {
            Domain::Int { low, step, .. } => Value::Int(low + step * i as i64),
            Domain::Pow2 { low, .. } => Value::Int(low << i),
            Domain::Float { low, high, step: Some(s), .. } => Value::Float((low + s * i as f64).min(*high)),
            Domain::Float { low, .. } => Value::Float(*low),
            Domain::Categorical { choices } => choices[i].clone(),
        }
    }

    /// The level of a value, if the value belongs to this discrete parameter.
    pub fn level_of(&self, v: &Value) -> Option<usize> {
        match &self.domain {
            Domain::Int { low, high, step } => {
                let x = v.as_i64()?;
                (x >= *low && x <= *high && (x - low) % step == 0).then(|| ((x - low) / step) as usize)
            }
            Domain::Pow2 { low, high } => {
                let x = v.as_i64()?;
                (x >= *low && x <= *high && x.count_ones() == 1)
                    .then(|| (x.trailing_zeros() - low.trailing_zeros()) as usize)
            }
            Domain::Float { low, step: Some(s), .. } => {
                let x = v.as_f64()?;
                let i = libm::round((x - low) / s);
                let n = self.levels()?;
                (i >= 0.0 && (i as usize) < n && (low + s * i - x).abs() <= 1e-9 * (1.0 + x.abs()))
                    .then_some(i as usize)
            }
            Domain::Float { .. } => None,
            Domain::Categorical { choices } => choices.iter().position(|c| c == v),
        }
    }

    /// True if `v` is a value of this parameter.
    pub fn contains(&self, v: &Value) -> bool {
        match &self.domain {
            Domain::Float { low, high, step: None, .. } => {
                v.as_f64().is_some_and(|x| x >= *low && x <= *high)
            }
            _ => self.level_of(v).is_some(),
        }
    }

    /// True when neighbouring levels are close in value (numbers), false for string categories.
    pub fn is_ordinal(&self) -> bool {
        match &self.domain {
            Domain::Categorical { choices } => choices.iter().all(|c| c.as_f64().is_some()),
            _ => true,
        }
    }

    /// Maps a value into [0, 1]: level centres for discrete parameters, linear or log for floats.
    /// Numeric categoricals are placed by rank of value, so "close" means close in value.
    pub fn to_unit(&self, v: &Value) -> f64 {
        match &self.domain {
            Domain::Float { low, high, log, step: None } => {
                let x = v.as_f64().unwrap_or(*low).clamp(*low, *high);
                if high <= low {
                    0.5
                } else if *log {
                    (libm::log(x) - libm::log(*low)) / (libm::log(*high) - libm::log(*low))
                } else {
                    (x - low) / (high - low)
                }
            }
            _ => {
                let n = self.levels().unwrap_or(1).max(1);
                let i = self.ordinal_rank(self.level_of(v).unwrap_or(0));
                (i as f64 + 0.5) / n as f64
            }
        }
    }

    /// Maps a unit coordinate back to a value (inverse of `to_unit`, snapped to the domain).
    pub fn from_unit(&self, u: f64) -> Value {
        let u = if u.is_finite() { u.clamp(0.0, 1.0) } else { 0.5 };
        match &self.domain {
            Domain::Float { low, high, log, step: None } => {
                let x = if *log {
                    libm::exp(libm::log(*low) + u * (libm::log(*high) - libm::log(*low)))
                } else {
                    low + u * (high - low)
                };
                Value::Float(x.clamp(*low, *high))
            }
            _ => {
                let n = self.levels().unwrap_or(1).max(1);
                let rank = ((u * n as f64) as usize).min(n - 1);
                self.level_value(self.level_at_rank(rank))
            }
        }
    }

    /// Rank of a level when numeric categoricals are sorted by value (identity otherwise).
    pub fn ordinal_rank(&self, level: usize) -> usize {
        match &self.domain {
            Domain::Categorical { choices } if self.is_ordinal() => {
                let x = choices[level].as_f64().unwrap_or(0.0);
                choices.iter().filter(|c| c.as_f64().unwrap_or(0.0) < x).count()
            }
            _ => level,
        }
    }

    /// The level that has the given rank (inverse of `ordinal_rank`).
    pub fn level_at_rank(&self, rank: usize) -> usize {
        match &self.domain {
            Domain::Categorical { choices } if self.is_ordinal() => {
                let mut idx: Vec<usize> = (0..choices.len()).collect();
                idx.sort_by(|a, b| {
                    let (x, y) = (choices[*a].as_f64().unwrap_or(0.0), choices[*b].as_f64().unwrap_or(0.0));
                    x.total_cmp(&y).then(a.cmp(b))
                });
                idx[rank.min(idx.len() - 1)]
            }
            _ => rank,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_values_round_trip() {
        let ps = [
            Param::int("a", 1, 10, 3),
            Param::pow2("b", 16, 256),
            Param::float("c", 0.0, 1.0, false, Some(0.25)),
            Param::categorical("d", vec![Value::Int(8), Value::Int(2), Value::Int(4)]),
            Param::categorical("e", vec!["x".into(), "y".into()]),
        ];
        for p in &ps {
            p.validate().unwrap();
            let n = p.levels().unwrap();
            for i in 0..n {
                let v = p.level_value(i);
                assert_eq!(p.level_of(&v), Some(i), "{p:?} level {i}");
                assert_eq!(p.from_unit(p.to_unit(&v)), v, "{p:?} unit round trip at {i}");
            }
        }
        assert_eq!(ps[1].levels(), Some(5));
        assert_eq!(ps[0].level_value(3), Value::Int(10));
    }

    #[test]
    fn numeric_categoricals_are_ordered_by_value() {
        let p = Param::categorical("d", vec![Value::Int(8), Value::Int(2), Value::Int(4)]);
        assert!(p.to_unit(&Value::Int(2)) < p.to_unit(&Value::Int(4)));
        assert!(p.to_unit(&Value::Int(4)) < p.to_unit(&Value::Int(8)));
    }

    #[test]
    fn bad_domains_are_named() {
        assert!(Param::int("x", 5, 1, 1).validate().unwrap_err().contains("'x'"));
        assert!(Param::pow2("p", 3, 8).validate().is_err());
        assert!(Param::float("f", 0.0, 1.0, true, None).validate().is_err());
        assert!(Param::categorical("c", vec![]).validate().is_err());
    }

    #[test]
    fn log_float_maps_monotonically() {
        let p = Param::float("lr", 1e-5, 1e-1, true, None);
        let a = p.to_unit(&Value::Float(1e-4));
        let b = p.to_unit(&Value::Float(1e-3));
        assert!((b - a - 0.25).abs() < 1e-9);
        assert!(matches!(p.from_unit(0.5), Value::Float(x) if (x - 1e-3).abs() < 1e-12));
    }
}

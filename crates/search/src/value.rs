//! Parameter values and configurations (one point of a space).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::hash::{Hash, Hasher};

/// One parameter value: an integer, a float or a string (categoricals may hold any of them).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Int(i64),
    Float(f64),
    Str(String),
}

impl Value {
    /// The numeric value used by constraints and surrogates; strings have none.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            Value::Str(_) => None,
        }
    }

    /// The integer value, if this is an integer or an integral float.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(*f as i64),
            _ => None,
        }
    }

    /// The string value, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// 16 and 16.0 are the same value (Kernel Tuner files may mix them); NaN equals itself so that
/// configurations can be hashed and deduplicated.
impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Str(_), _) | (_, Value::Str(_)) => false,
            (Value::Int(a), Value::Int(b)) => a == b,
            _ => {
                let (a, b) = (self.as_f64().unwrap_or(0.0), other.as_f64().unwrap_or(0.0));
                a.to_bits() == b.to_bits() || a == b
            }
        }
    }
}
impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            Value::Str(s) => {
                1u8.hash(state);
                s.hash(state);
            }
            _ => {
                // Integral numbers hash as integers so Int(16) and Float(16.0) agree.
                if let Some(i) = self.as_i64() {
                    0u8.hash(state);
                    i.hash(state);
                } else {
                    let f = self.as_f64().unwrap_or(0.0);
                    2u8.hash(state);
                    (if f == 0.0 { 0.0f64 } else { f }).to_bits().hash(state);
                }
            }
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            // A huge float in scientific form ({} prints 1e300 as 301 digits); every value a
            // search draws or a report shows keeps its usual form.
            Value::Float(x) if x.is_finite() && x.abs() >= 1e16 => write!(f, "{x:e}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Str(s) => write!(f, "{s}"),
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Str(v.to_string())
    }
}

/// One point of a space: a value per parameter, in the space's parameter order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Config(pub Vec<Value>);

impl Config {
    /// The value of parameter `i`.
    pub fn get(&self, i: usize) -> &Value {
        &self.0[i]
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True for a configuration of an empty space.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// "a=1, b=x" with the given parameter names (for progress lines and reports).
    pub fn describe(&self, names: &[String]) -> String {
        names
            .iter()
            .zip(&self.0)
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

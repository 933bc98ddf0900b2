//! Reading diffusers `config.json` fields with errors that name the field (serde alone would
//! say "invalid type"), and with the limits that keep a hostile config from building a graph of
//! absurd size.

use serde_json::Value;

/// Largest channel count, width or token count accepted from a config.
pub const MAX_WIDTH: u64 = 1 << 16;
/// Largest number of layers or blocks accepted from a config.
pub const MAX_LAYERS: u64 = 256;

/// One component's config with the component's name for messages ("unet", "text_encoder_2").
pub struct Cfg<'a> {
    pub what: &'a str,
    pub v: &'a Value,
}

impl<'a> Cfg<'a> {
    pub fn new(what: &'a str, v: &'a Value) -> Result<Cfg<'a>, String> {
        if !v.is_object() {
            return Err(format!("{what}: the config must be a JSON object"));
        }
        Ok(Cfg { what, v })
    }

    fn field(&self, key: &str) -> String {
        format!("{}.{key}", self.what)
    }

    /// A positive integer no larger than `max`.
    pub fn int(&self, key: &str, max: u64) -> Result<u64, String> {
        match self.v.get(key) {
            None => Err(format!("{}: missing", self.field(key))),
            Some(x) => match x.as_u64() {
                Some(n) if n >= 1 && n <= max => Ok(n),
                _ => Err(format!("{}: must be an integer in 1..={max}, got {}", self.field(key), clip(x))),
            },
        }
    }

    /// `int`, or `default` when the field is absent or null.
    pub fn int_or(&self, key: &str, max: u64, default: u64) -> Result<u64, String> {
        match self.v.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(_) => self.int(key, max),
        }
    }

    /// A string field (None when absent).
    pub fn str(&self, key: &str) -> Option<&'a str> {
        self.v.get(key).and_then(|x| x.as_str())
    }

    /// A non-empty list of positive integers, each at most `max`.
    pub fn ints(&self, key: &str, max: u64) -> Result<Vec<u64>, String> {
        let arr = self.v.get(key).and_then(|x| x.as_array()).ok_or_else(|| format!("{}: missing or not a list", self.field(key)))?;
        if arr.is_empty() || arr.len() as u64 > MAX_LAYERS {
            return Err(format!("{}: must list 1..={MAX_LAYERS} values", self.field(key)));
        }
        arr.iter().map(|x| x.as_u64().filter(|n| *n >= 1 && *n <= max).ok_or_else(|| format!("{}: every value must be an integer in 1..={max}, got {}", self.field(key), clip(x)))).collect()
    }

    /// An integer or a list of `n` integers (diffusers writes either for per-block values).
    pub fn per_block(&self, key: &str, n: usize, max: u64, default: Option<u64>) -> Result<Vec<u64>, String> {
        match self.v.get(key) {
            None | Some(Value::Null) => default.map(|d| vec![d; n]).ok_or_else(|| format!("{}: missing", self.field(key))),
            Some(Value::Array(_)) => {
                let v = self.ints(key, max)?;
                if v.len() != n {
                    return Err(format!("{}: lists {} values for {n} blocks", self.field(key), v.len()));
                }
                Ok(v)
            }
            Some(_) => Ok(vec![self.int(key, max)?; n]),
        }
    }

    /// A list of strings.
    pub fn strs(&self, key: &str) -> Result<Vec<&'a str>, String> {
        let arr = self.v.get(key).and_then(|x| x.as_array()).ok_or_else(|| format!("{}: missing or not a list", self.field(key)))?;
        if arr.is_empty() || arr.len() as u64 > MAX_LAYERS {
            return Err(format!("{}: must list 1..={MAX_LAYERS} block types", self.field(key)));
        }
        arr.iter().map(|x| x.as_str().ok_or_else(|| format!("{}: every entry must be a string", self.field(key)))).collect()
    }
}

/// A value shortened for a message.
fn clip(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 40 { format!("{}...", &s[..s.char_indices().nth(37).map(|c| c.0).unwrap_or(s.len())]) } else { s }
}

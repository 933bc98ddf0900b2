//! Strict reading with a way out: every key a JSON input carries that the type it is read into
//! does not know is reported with its path and the nearest known key
//! ("`deployment.serving.graph_mod`: unknown key; did you mean `graph_mode`?").
//!
//! Why a Deserializer wrapper and not a list of fields: the option structs grow every week (and
//! several people add fields at once). The wrapper sits between serde's derived code and the
//! JSON: when a derived struct meets a key it does not know, serde asks the deserializer to
//! skip the value (`deserialize_ignored_any`); the wrapper records that key with its path, and
//! the `fields` list serde itself passed to `deserialize_struct` gives the known keys for the
//! suggestion. A field added to any struct is known the moment it compiles.
//!
//! Limits (tested in tests/strict_keys.rs): serde buffers the content of `#[serde(untagged)]`
//! and internally tagged enums and of structs with `#[serde(flatten)]` before choosing, and
//! reads that buffer without this wrapper: keys inside such a value are not seen (never a false
//! report). The scenario and measurement types keep their untagged values free-form (`model`,
//! `device`: checked by their own readers) or scalar (`runtime.trace`).

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};
use std::cell::RefCell;
use std::fmt;

/// Most unknown keys collected from one document (a hostile file cannot make the report grow
/// without bound; the count past it is still given).
pub const MAX_REPORTED: usize = 200;

/// One key the reader did not use.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct UnknownKey {
    /// JSON path of the key ("deployment.serving.graph_mod", "rows[3].values[0].predcit").
    pub path: String,
    /// The nearest key known at that place, when one is close.
    pub suggestion: Option<String>,
    /// Why the key is known but no longer read (a key removed on purpose), or another note.
    pub note: Option<String>,
}

impl fmt::Display for UnknownKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.note, &self.suggestion) {
            (Some(n), _) => write!(f, "`{}`: {n}", self.path),
            (None, Some(s)) => write!(f, "`{}`: unknown key; did you mean `{s}`?", self.path),
            (None, None) => write!(f, "`{}`: unknown key; ignored", self.path),
        }
    }
}

/// What one read found: the keys not used (in document order), and how many more past the cap.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    pub keys: Vec<UnknownKey>,
    pub more: usize,
}

impl Report {
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.more == 0
    }
    /// Every key as a line, then the count past the cap.
    pub fn lines(&self) -> Vec<String> {
        let mut v: Vec<String> = self.keys.iter().map(|k| k.to_string()).collect();
        if self.more > 0 {
            v.push(format!("... and {} more unknown keys (only the first {MAX_REPORTED} are listed)", self.more));
        }
        v
    }
    /// Prefixes every path (a measurement row read on its own: "rows[3]").
    pub fn prefixed(mut self, prefix: &str) -> Report {
        for k in &mut self.keys {
            k.path = join(prefix, &k.path);
        }
        self
    }
    pub fn extend(&mut self, other: Report) {
        for k in other.keys {
            self.push(k);
        }
        self.more += other.more;
    }
    fn push(&mut self, k: UnknownKey) {
        if self.keys.len() < MAX_REPORTED {
            self.keys.push(k);
        } else {
            self.more += 1;
        }
    }
    /// The error `--strict` gives.
    pub fn strict_error(&self, what: &str) -> String {
        format!("{what}: {} unknown key(s) refused (--strict):\n  {}", self.keys.len() + self.more, self.lines().join("\n  "))
    }
}

fn join(prefix: &str, rest: &str) -> String {
    if prefix.is_empty() {
        rest.to_string()
    } else if rest.is_empty() {
        prefix.to_string()
    } else if rest.starts_with('[') {
        format!("{prefix}{rest}")
    } else {
        format!("{prefix}.{rest}")
    }
}

/// Keys a type no longer reads on purpose, by the last component of their path's place
/// ("<struct fields contain>", key) -> what replaced them. Matched when the struct that skipped
/// the key knows `anchor` (so the table survives renames of the structs themselves).
pub type Retired = &'static [(&'static str, &'static str, &'static str)];

/// Deserializes `T` from `de`, recording every key `T` does not read.
pub fn read<'de, T: Deserialize<'de>, D: Deserializer<'de>>(de: D, retired: Retired) -> Result<(T, Report), D::Error> {
    let sink = Sink { report: RefCell::new(Report::default()), retired };
    let t = T::deserialize(Wrap { de, path: String::new(), sink: &sink, fields: &[] })?;
    Ok((t, sink.report.into_inner()))
}

/// `read` from a parsed JSON tree (by reference: the tree is not copied).
pub fn from_value<'a, T: Deserialize<'a>>(v: &'a serde_json::Value, retired: Retired) -> Result<(T, Report), serde_json::Error> {
    read(v, retired)
}

/// `read` from JSON text (a byte-order mark is skipped; trailing text is an error, as
/// `serde_json::from_str` makes it).
pub fn from_str<T: serde::de::DeserializeOwned>(text: &str, retired: Retired) -> Result<(T, Report), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(strip_bom(text));
    let out = read(&mut de, retired)?;
    de.end()?;
    Ok(out)
}

struct Sink {
    report: RefCell<Report>,
    retired: Retired,
}

impl Sink {
    fn record(&self, path: &str, fields: &'static [&'static str]) {
        let key = last_key(path);
        let note = self
            .retired
            .iter()
            .find(|(anchor, k, _)| *k == key && (anchor.is_empty() || fields.contains(anchor)))
            .map(|(_, _, why)| why.to_string());
        let suggestion = if note.is_some() { None } else { nearest(key, fields) };
        self.report.borrow_mut().push(UnknownKey { path: path.to_string(), suggestion, note });
    }
}

fn last_key(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

/// The known key nearest to `key` (edit distance, ignoring case and '-'/'_'), if it is close:
/// at most a third of the longer name, and at least 1 or 2 edits for short names.
pub fn nearest(key: &str, known: &[&str]) -> Option<String> {
    let norm = |s: &str| s.to_ascii_lowercase().replace('-', "_");
    let k = norm(key);
    if k.len() > 64 {
        return None;
    }
    let mut best: Option<(usize, &str)> = None;
    for f in known {
        let d = distance(&k, &norm(f));
        let allowed = (k.len().max(f.len()) / 3).max(if f.len() >= 4 { 2 } else { 1 });
        if d <= allowed && best.map_or(true, |(b, _)| d < b) {
            best = Some((d, f));
        }
    }
    best.map(|(_, f)| f.to_string())
}

/// Optimal-string-alignment distance (Levenshtein with adjacent swaps), O(|a| |b|) on short names.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for j in 0..=b.len() {
        d[0][j] = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// The wrapped deserializer of one value at `path`; `fields`: the keys known by the struct that
/// holds it (for the suggestion when the struct skips it).
struct Wrap<'s, D> {
    de: D,
    path: String,
    sink: &'s Sink,
    fields: &'static [&'static str],
}

struct WrapVisitor<'s, V> {
    inner: V,
    path: String,
    sink: &'s Sink,
    fields: &'static [&'static str],
}

impl<'s, V> WrapVisitor<'s, V> {
    fn new(inner: V, path: &str, sink: &'s Sink, fields: &'static [&'static str]) -> Self {
        WrapVisitor { inner, path: path.to_string(), sink, fields }
    }
}

macro_rules! forward {
    ($($m:ident),*) => {$(
        fn $m<V: Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
            let w = WrapVisitor::new(v, &self.path, self.sink, &[]);
            self.de.$m(w)
        }
    )*};
}

impl<'de, 's, D: Deserializer<'de>> Deserializer<'de> for Wrap<'s, D> {
    type Error = D::Error;
    forward!(
        deserialize_any, deserialize_bool, deserialize_i8, deserialize_i16, deserialize_i32, deserialize_i64, deserialize_i128,
        deserialize_u8, deserialize_u16, deserialize_u32, deserialize_u64, deserialize_u128, deserialize_f32, deserialize_f64,
        deserialize_char, deserialize_str, deserialize_string, deserialize_bytes, deserialize_byte_buf, deserialize_option,
        deserialize_unit, deserialize_seq, deserialize_map, deserialize_identifier
    );
    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
        self.sink.record(&self.path, self.fields);
        self.de.deserialize_ignored_any(v)
    }
    fn deserialize_unit_struct<V: Visitor<'de>>(self, name: &'static str, v: V) -> Result<V::Value, D::Error> {
        let w = WrapVisitor::new(v, &self.path, self.sink, &[]);
        self.de.deserialize_unit_struct(name, w)
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, v: V) -> Result<V::Value, D::Error> {
        let w = WrapVisitor::new(v, &self.path, self.sink, &[]);
        self.de.deserialize_newtype_struct(name, w)
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, D::Error> {
        let w = WrapVisitor::new(v, &self.path, self.sink, &[]);
        self.de.deserialize_tuple(len, w)
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(self, name: &'static str, len: usize, v: V) -> Result<V::Value, D::Error> {
        let w = WrapVisitor::new(v, &self.path, self.sink, &[]);
        self.de.deserialize_tuple_struct(name, len, w)
    }
    fn deserialize_struct<V: Visitor<'de>>(self, name: &'static str, fields: &'static [&'static str], v: V) -> Result<V::Value, D::Error> {
        let w = WrapVisitor::new(v, &self.path, self.sink, fields);
        self.de.deserialize_struct(name, fields, w)
    }
    fn deserialize_enum<V: Visitor<'de>>(self, name: &'static str, variants: &'static [&'static str], v: V) -> Result<V::Value, D::Error> {
        let w = WrapVisitor::new(v, &self.path, self.sink, &[]);
        self.de.deserialize_enum(name, variants, w)
    }
    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

macro_rules! visit_plain {
    ($($m:ident: $t:ty),*) => {$(
        fn $m<E: de::Error>(self, x: $t) -> Result<V::Value, E> {
            self.inner.$m(x)
        }
    )*};
}

impl<'de, 's, V: Visitor<'de>> Visitor<'de> for WrapVisitor<'s, V> {
    type Value = V::Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.expecting(f)
    }
    visit_plain!(
        visit_bool: bool, visit_i8: i8, visit_i16: i16, visit_i32: i32, visit_i64: i64, visit_i128: i128, visit_u8: u8,
        visit_u16: u16, visit_u32: u32, visit_u64: u64, visit_u128: u128, visit_f32: f32, visit_f64: f64, visit_char: char,
        visit_str: &str, visit_borrowed_str: &'de str, visit_string: String, visit_bytes: &[u8], visit_borrowed_bytes: &'de [u8],
        visit_byte_buf: Vec<u8>
    );
    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }
    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }
    fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<V::Value, D2::Error> {
        self.inner.visit_some(Wrap { de: d, path: self.path, sink: self.sink, fields: &[] })
    }
    fn visit_newtype_struct<D2: Deserializer<'de>>(self, d: D2) -> Result<V::Value, D2::Error> {
        self.inner.visit_newtype_struct(Wrap { de: d, path: self.path, sink: self.sink, fields: &[] })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.inner.visit_seq(Seq { inner: a, path: self.path, sink: self.sink, index: 0 })
    }
    fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(Map { inner: a, path: self.path, sink: self.sink, fields: self.fields, key: None })
    }
    fn visit_enum<A: EnumAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(Enum { inner: a, path: self.path, sink: self.sink })
    }
}

/// A seed deserialized through the wrapper at `path`.
struct Seed<'s, S> {
    seed: S,
    path: String,
    sink: &'s Sink,
    fields: &'static [&'static str],
}

impl<'de, 's, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<'s, S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(Wrap { de: d, path: self.path, sink: self.sink, fields: self.fields })
    }
}

struct Seq<'s, A> {
    inner: A,
    path: String,
    sink: &'s Sink,
    index: usize,
}

impl<'de, 's, A: SeqAccess<'de>> SeqAccess<'de> for Seq<'s, A> {
    type Error = A::Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, A::Error> {
        let path = format!("{}[{}]", self.path, self.index);
        self.index += 1;
        self.inner.next_element_seed(Seed { seed, path, sink: self.sink, fields: &[] })
    }
    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

struct Map<'s, A> {
    inner: A,
    path: String,
    sink: &'s Sink,
    fields: &'static [&'static str],
    key: Option<String>,
}

impl<'de, 's, A: MapAccess<'de>> MapAccess<'de> for Map<'s, A> {
    type Error = A::Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        let mut key = None;
        let r = self.inner.next_key_seed(KeySeed { seed, key: &mut key })?;
        self.key = key;
        Ok(r)
    }
    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        let key = self.key.take().unwrap_or_else(|| "?".into());
        let path = join(&self.path, &key);
        self.inner.next_value_seed(Seed { seed, path, sink: self.sink, fields: self.fields })
    }
    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

struct Enum<'s, A> {
    inner: A,
    path: String,
    sink: &'s Sink,
}

impl<'de, 's, A: EnumAccess<'de>> EnumAccess<'de> for Enum<'s, A> {
    type Error = A::Error;
    type Variant = Variant<'s, A::Variant>;
    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self::Variant), A::Error> {
        let mut key = None;
        let (v, access) = self.inner.variant_seed(KeySeed { seed, key: &mut key })?;
        let path = join(&self.path, key.as_deref().unwrap_or(""));
        Ok((v, Variant { inner: access, path, sink: self.sink }))
    }
}

struct Variant<'s, A> {
    inner: A,
    path: String,
    sink: &'s Sink,
}

impl<'de, 's, A: VariantAccess<'de>> VariantAccess<'de> for Variant<'s, A> {
    type Error = A::Error;
    fn unit_variant(self) -> Result<(), A::Error> {
        self.inner.unit_variant()
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.inner.newtype_variant_seed(Seed { seed, path: self.path, sink: self.sink, fields: &[] })
    }
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, A::Error> {
        self.inner.tuple_variant(len, WrapVisitor::new(v, &self.path, self.sink, &[]))
    }
    fn struct_variant<V: Visitor<'de>>(self, fields: &'static [&'static str], v: V) -> Result<V::Value, A::Error> {
        self.inner.struct_variant(fields, WrapVisitor::new(v, &self.path, self.sink, fields))
    }
}

/// Deserializes a map key (or an enum's variant name) and writes down its text.
struct KeySeed<'k, S> {
    seed: S,
    key: &'k mut Option<String>,
}

impl<'de, 'k, S: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'k, S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(KeyDe { de: d, key: self.key })
    }
}

struct KeyDe<'k, D> {
    de: D,
    key: &'k mut Option<String>,
}

macro_rules! key_forward {
    ($($m:ident),*) => {$(
        fn $m<V: Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
            self.de.$m(KeyVisitor { inner: v, key: self.key })
        }
    )*};
}

impl<'de, 'k, D: Deserializer<'de>> Deserializer<'de> for KeyDe<'k, D> {
    type Error = D::Error;
    key_forward!(
        deserialize_any, deserialize_bool, deserialize_i8, deserialize_i16, deserialize_i32, deserialize_i64, deserialize_i128,
        deserialize_u8, deserialize_u16, deserialize_u32, deserialize_u64, deserialize_u128, deserialize_f32, deserialize_f64,
        deserialize_char, deserialize_str, deserialize_string, deserialize_bytes, deserialize_byte_buf, deserialize_option,
        deserialize_unit, deserialize_seq, deserialize_map, deserialize_identifier, deserialize_ignored_any
    );
    fn deserialize_unit_struct<V: Visitor<'de>>(self, name: &'static str, v: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_unit_struct(name, KeyVisitor { inner: v, key: self.key })
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, v: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_newtype_struct(name, KeyVisitor { inner: v, key: self.key })
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_tuple(len, KeyVisitor { inner: v, key: self.key })
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(self, name: &'static str, len: usize, v: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_tuple_struct(name, len, KeyVisitor { inner: v, key: self.key })
    }
    fn deserialize_struct<V: Visitor<'de>>(self, name: &'static str, fields: &'static [&'static str], v: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_struct(name, fields, KeyVisitor { inner: v, key: self.key })
    }
    fn deserialize_enum<V: Visitor<'de>>(self, name: &'static str, variants: &'static [&'static str], v: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_enum(name, variants, KeyVisitor { inner: v, key: self.key })
    }
}

struct KeyVisitor<'k, V> {
    inner: V,
    key: &'k mut Option<String>,
}

macro_rules! key_visit {
    ($($m:ident: $t:ty),*) => {$(
        fn $m<E: de::Error>(self, x: $t) -> Result<V::Value, E> {
            *self.key = Some(x.to_string());
            self.inner.$m(x)
        }
    )*};
}

impl<'de, 'k, V: Visitor<'de>> Visitor<'de> for KeyVisitor<'k, V> {
    type Value = V::Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.expecting(f)
    }
    key_visit!(
        visit_bool: bool, visit_i8: i8, visit_i16: i16, visit_i32: i32, visit_i64: i64, visit_i128: i128, visit_u8: u8,
        visit_u16: u16, visit_u32: u32, visit_u64: u64, visit_u128: u128, visit_f32: f32, visit_f64: f64, visit_char: char,
        visit_str: &str, visit_borrowed_str: &'de str, visit_string: String
    );
    fn visit_bytes<E: de::Error>(self, x: &[u8]) -> Result<V::Value, E> {
        *self.key = Some(String::from_utf8_lossy(x).into_owned());
        self.inner.visit_bytes(x)
    }
    fn visit_borrowed_bytes<E: de::Error>(self, x: &'de [u8]) -> Result<V::Value, E> {
        *self.key = Some(String::from_utf8_lossy(x).into_owned());
        self.inner.visit_borrowed_bytes(x)
    }
    fn visit_byte_buf<E: de::Error>(self, x: Vec<u8>) -> Result<V::Value, E> {
        *self.key = Some(String::from_utf8_lossy(&x).into_owned());
        self.inner.visit_byte_buf(x)
    }
    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }
    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }
    fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<V::Value, D2::Error> {
        self.inner.visit_some(d)
    }
    fn visit_newtype_struct<D2: Deserializer<'de>>(self, d: D2) -> Result<V::Value, D2::Error> {
        self.inner.visit_newtype_struct(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.inner.visit_seq(a)
    }
    fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(a)
    }
    fn visit_enum<A: EnumAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(a)
    }
}

/// Longest error message echoed from a parser (a 300 KB string value would otherwise be
/// repeated whole in "invalid type: string \"...\""); the position at the end is kept.
pub const MAX_ERROR_CHARS: usize = 400;

/// A parser's message cut to `MAX_ERROR_CHARS`, keeping its " at line L column C" tail.
pub fn clip_error(msg: &str) -> String {
    if msg.chars().count() <= MAX_ERROR_CHARS {
        return msg.to_string();
    }
    let tail = msg.rfind(" at line ").map(|i| &msg[i..]).filter(|t| t.len() < 60).unwrap_or("");
    let head: String = msg.chars().take(MAX_ERROR_CHARS - tail.len().min(MAX_ERROR_CHARS)).collect();
    format!("{head}... ({} characters cut){tail}", msg.chars().count() - head.chars().count() - tail.chars().count())
}

/// A number as a person reads it: up to 6 significant digits, exponent form outside 1e-4..1e9
/// (1e308 prints as "1e308", not 309 digits).
pub fn readable(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        return "0".into();
    }
    let trim = |m: &str| if m.contains('.') { m.trim_end_matches('0').trim_end_matches('.').to_string() } else { m.to_string() };
    if (1e-4..1e9).contains(&x.abs()) {
        trim(&format!("{x:.6}"))
    } else {
        let s = format!("{x:.5e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        format!("{}e{e}", trim(m))
    }
}

/// Strips a UTF-8 byte-order mark (a file saved by a Windows editor starts with one; JSON and
/// CSV readers would otherwise fail at line 1 column 1 or miss the first column's name).
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_finds_typos_not_strangers() {
        let f = &["graph_mode", "engine", "requests", "steps"];
        assert_eq!(nearest("graph_mod", f).as_deref(), Some("graph_mode"));
        assert_eq!(nearest("stpes", f).as_deref(), Some("steps"));
        assert_eq!(nearest("Engine", f).as_deref(), Some("engine"));
        assert_eq!(nearest("zzzzzz", f), None);
    }

    #[test]
    fn numbers_and_errors_print_readably() {
        assert_eq!(readable(1e308), "1e308");
        assert_eq!(readable(-0.5), "-0.5");
        assert_eq!(readable(8.0), "8");
        assert_eq!(readable(1.5e-7), "1.5e-7");
        let long = format!("invalid type: string \"{}\", expected f64 at line 1 column 300012", "x".repeat(300_000));
        let c = clip_error(&long);
        assert!(c.len() < 600 && c.ends_with("at line 1 column 300012"), "{c}");
    }
}

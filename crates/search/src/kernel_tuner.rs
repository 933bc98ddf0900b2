//! Kernel Tuner cache files: real measured tuning data, replayed as a search problem.
//!
//! A brute-forced cache is a lookup table from configuration to measured time. Replaying it
//! the way Kernel Tuner's simulation mode does (the space is the set of cached configurations,
//! a failed measurement is a failed evaluation that still costs budget) lets our strategies be
//! compared with Kernel Tuner's published figures on real GPU data. The loader takes bytes or
//! text, not a path, so the browser can replay an uploaded or fetched file too; `load_bytes`
//! accepts `.json` and `.json.gz` alike, and the T4 results form benchmark_hub ships beside each
//! cache (`*_T4.json.gz`) as well as the cache form.

use crate::objective::{Objective, Outcome};
use crate::param::Param;
use crate::space::Space;
use crate::trial::Metric;
use crate::value::{Config, Value};
use serde_json::Value as Json;
use std::collections::HashMap;

/// The most bytes a cache may have once decompressed; a bigger file, or a gzip bomb, is refused
/// with this figure. Parsed, a cache takes about nine times its text in memory (the bundled
/// 8 MiB gemm cache peaks at 74 MB; a 32 MiB one of 100,000 records with their `times` lists
/// peaked at 313 MB in `tunelab replay`), so 24 MiB keeps the largest accepted cache under
/// 300 MB (issue 44; `tunelab bench --inputs` prints the figure). It was 256 MiB (over 2 GB
/// parsed).
pub const MAX_CACHE_BYTES: usize = 24 << 20;
/// The most bytes a gzip cache may have before it is inflated (checked first, so an oversized
/// file is never inflated; the inflater itself stops at `MAX_CACHE_BYTES` of output).
pub const MAX_GZIP_BYTES: usize = 24 << 20;
/// The most cached configurations (entries of `cache`; the bundled caches have 4,000-10,000, and
/// a real cache's records, at about 800 bytes each, reach `MAX_CACHE_BYTES` near 40,000). Each
/// costs about 1.7 KB parsed, so this holds a cache of small records near 300 MB too.
pub const MAX_CONFIGS: usize = 100_000;
/// The most tuning parameters (`tune_params_keys`; the bundled caches have 4-15).
pub const MAX_PARAMS: usize = 64;
/// The most values one parameter's list may have (the bundled caches have at most 31; levels
/// are deduplicated by a linear scan, so this also bounds that work).
pub const MAX_LEVELS: usize = 4096;

/// The loaded cache type (short name for callers: `kernel_tuner::Cache`).
pub type Cache = KernelTunerCache;

/// Loads a cache from a file's bytes: `.json` (closed or unterminated) or `.json.gz` as
/// benchmark_hub ships them, told apart by the gzip magic bytes, not by the name. This is what
/// the CLI and the browser (a dropped or fetched file) both call.
pub fn load_bytes(bytes: &[u8]) -> Result<KernelTunerCache, String> {
    KernelTunerCache::parse(&text_of(bytes)?)
}

/// The JSON text of a cache file's bytes (gunzipped when gzip, UTF-8 checked, BOM dropped).
pub fn text_of(bytes: &[u8]) -> Result<String, String> {
    let raw;
    let bytes = if crate::gzip::is_gzip(bytes) {
        if bytes.len() > MAX_GZIP_BYTES {
            return Err(format!("the gzip cache file has {} MiB; at most {} MiB compressed (MAX_GZIP_BYTES, docs/measurements.md)", bytes.len() >> 20, MAX_GZIP_BYTES >> 20));
        }
        raw = crate::gzip::decompress(bytes, MAX_CACHE_BYTES)?;
        &raw[..]
    } else {
        if bytes.len() > MAX_CACHE_BYTES {
            return Err(format!("the cache file has more than {} MiB, the most a cache may have (MAX_CACHE_BYTES, docs/measurements.md)", MAX_CACHE_BYTES >> 20));
        }
        bytes
    };
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_string()),
        Err(e) => Err(format!("the cache file is not UTF-8 text (invalid byte at offset {}); is it a JSON or .json.gz cache?", e.valid_up_to())),
    }
}

/// A loaded cache: the member space, the measured value of each member, and some metadata.
#[derive(Clone, Debug)]
pub struct KernelTunerCache {
    /// `kernel_name` from the file (may be empty).
    pub kernel_name: String,
    /// `device_name` from the file (may be empty).
    pub device_name: String,
    /// The objective looked up in each record (usually "time", in ms).
    pub objective: String,
    /// True when lower is better (time); throughput objectives such as "GFLOP/s" are maximised.
    pub minimize: bool,
    /// The set of cached configurations; numeric value lists become ordered categoricals.
    pub space: Space,
    /// Measured value of each configuration; None marks a failed one.
    values: HashMap<Config, Option<f64>>,
}

impl KernelTunerCache {
    /// Parses a cache file's text (closed, or the unterminated form an interrupted run leaves).
    pub fn parse(text: &str) -> Result<KernelTunerCache, String> {
        let mut doc = parse_json(text)?;
        let top = doc.as_object().ok_or("the cache file is not a JSON object")?;
        if !top.contains_key("tune_params_keys") && top.contains_key("results") {
            doc = from_t4(top)?;
        }
        let top = doc.as_object().ok_or("the cache file is not a JSON object")?;
        let keys = top.get("tune_params_keys").ok_or("missing key 'tune_params_keys'")?;
        let keys = keys.as_array().ok_or("'tune_params_keys' is not an array")?;
        if keys.is_empty() {
            return Err("'tune_params_keys' is empty: no parameters".into());
        }
        if keys.len() > MAX_PARAMS {
            return Err(format!("'tune_params_keys' has {} parameters; at most {MAX_PARAMS} (MAX_PARAMS, docs/measurements.md)", keys.len()));
        }
        let names = keys
            .iter()
            .enumerate()
            .map(|(i, k)| k.as_str().map(str::to_string).ok_or(format!("'tune_params_keys'[{i}] is not a string")))
            .collect::<Result<Vec<_>, _>>()?;
        let tp = top.get("tune_params").ok_or("missing key 'tune_params'")?;
        let tp = tp.as_object().ok_or("'tune_params' is not an object")?;
        let mut params = Vec::with_capacity(names.len());
        for n in &names {
            let list = tp.get(n).ok_or_else(|| format!("'tune_params' has no value list for parameter '{n}'"))?;
            let list = list.as_array().ok_or_else(|| format!("'tune_params'.'{n}' is not an array"))?;
            if list.is_empty() {
                return Err(format!("'tune_params'.'{n}' is empty"));
            }
            if list.len() > MAX_LEVELS {
                return Err(format!("'tune_params'.'{n}' has {} values; at most {MAX_LEVELS} per parameter (MAX_LEVELS, docs/measurements.md)", list.len()));
            }
            let mut choices: Vec<Value> = Vec::with_capacity(list.len());
            for (i, v) in list.iter().enumerate() {
                let v = to_value(v).ok_or_else(|| format!("'tune_params'.'{n}'[{i}] is {}, not a number, string or bool", kind(v)))?;
                // Duplicates in a value list would make levels ambiguous; keep the first.
                if !choices.contains(&v) {
                    choices.push(v);
                }
            }
            params.push(Param::categorical(n, choices));
        }
        let objective = match top.get("objective") {
            None | Some(Json::Null) => "time".to_string(),
            Some(Json::String(s)) => s.clone(),
            Some(Json::Array(a)) => match a.first() {
                Some(Json::String(s)) => s.clone(),
                None => "time".to_string(),
                _ => return Err("'objective' is a list whose first item is not a string".into()),
            },
            Some(other) => return Err(format!("'objective' is {}, not a string or a list", kind(other))),
        };
        // Kernel Tuner does not store the direction; throughputs ("GFLOP/s", "GB/s") go up, and
        // so does the "score" its hyperparameter tuner writes.
        let minimize = !(objective.ends_with("/s") || objective == "score");
        let cache = top.get("cache").ok_or("missing key 'cache'")?;
        let cache = cache.as_object().ok_or("'cache' is not an object")?;
        if cache.is_empty() {
            return Err("the cache is empty: no measured configurations".into());
        }
        if cache.len() > MAX_CONFIGS {
            return Err(format!("the cache has {} configurations; at most {MAX_CONFIGS} (MAX_CONFIGS, docs/measurements.md)", cache.len()));
        }
        let mut members = Vec::with_capacity(cache.len());
        let mut values = HashMap::with_capacity(cache.len());
        for (key, rec) in cache {
            let rec = rec.as_object().ok_or_else(|| format!("cache entry \"{key}\" is not an object"))?;
            let mut c = Vec::with_capacity(names.len());
            for (p, n) in params.iter().zip(&names) {
                let v = rec.get(n).ok_or_else(|| format!("cache entry \"{key}\" has no value for parameter '{n}'"))?;
                let v = to_value(v).ok_or_else(|| format!("cache entry \"{key}\": parameter '{n}' is {}", kind(v)))?;
                if !p.contains(&v) {
                    return Err(format!("cache entry \"{key}\": {n}={v} is not in the value list of 'tune_params'"));
                }
                c.push(v);
            }
            let measured = match rec.get(&objective) {
                // Kernel Tuner's reader marks a record failed when any field holds an error
                // name; such a record may lack the objective (a throughput it never measured).
                None if rec.values().any(is_error_name) => None,
                None => return Err(format!("cache entry \"{key}\" has no '{objective}'")),
                Some(Json::Number(x)) => {
                    let x = x.as_f64().unwrap_or(f64::NAN);
                    if !x.is_finite() {
                        return Err(format!("cache entry \"{key}\": '{objective}' is not a finite number"));
                    }
                    // A time cannot be negative; other objectives (a "score") may be.
                    if x < 0.0 && objective == "time" {
                        return Err(format!("cache entry \"{key}\": '{objective}' is negative ({x})"));
                    }
                    Some(x)
                }
                // "CompilationFailedConfig", "RuntimeFailedConfig", ...: a failed measurement.
                Some(Json::String(_)) => None,
                Some(other) => return Err(format!("cache entry \"{key}\": '{objective}' is {}, not a number or an error string", kind(other))),
            };
            let c = Config(c);
            if values.insert(c.clone(), measured).is_some() {
                return Err(format!("cache entry \"{key}\" repeats a configuration already cached"));
            }
            members.push(c);
        }
        // Member order must not depend on the JSON map's key order (a cargo feature may change
        // it), so sort by level; strategies that walk the list then behave the same everywhere.
        members.sort_by_cached_key(|c| params.iter().zip(&c.0).map(|(p, v)| p.level_of(v).unwrap_or(0)).collect::<Vec<_>>());
        let space = Space::from_members(params, members)?;
        Ok(KernelTunerCache {
            kernel_name: top.get("kernel_name").and_then(Json::as_str).unwrap_or("").to_string(),
            device_name: top.get("device_name").and_then(Json::as_str).unwrap_or("").to_string(),
            objective,
            minimize,
            space,
            values,
        })
    }

    /// Number of cached configurations (failed ones included).
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True for an empty cache (never: `parse` rejects those).
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Number of configurations whose measurement failed.
    pub fn failed(&self) -> usize {
        self.values.values().filter(|v| v.is_none()).count()
    }

    /// The measured value of a configuration: Some(None) when it failed, None when not cached.
    pub fn lookup(&self, c: &Config) -> Option<Option<f64>> {
        self.values.get(c).copied()
    }

    /// The best measured value in the whole cache (the optimum a replay is compared with).
    pub fn optimum(&self) -> Option<f64> {
        let ok = self.values.values().flatten().copied();
        if self.minimize {
            ok.min_by(f64::total_cmp)
        } else {
            ok.max_by(f64::total_cmp)
        }
    }

    /// The metric a replay optimises.
    pub fn metric(&self) -> Metric {
        if self.minimize {
            Metric::minimize(&self.objective, if self.objective == "time" { "ms" } else { "" })
        } else {
            Metric::maximize(&self.objective, "")
        }
    }

    /// An objective that looks configurations up in this cache.
    pub fn objective(&self) -> CacheObjective<'_> {
        CacheObjective { cache: self }
    }
}

/// One replayed tuning run: what the CLI's `replay` and the browser's race both report.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    /// Best measured value found (None: every evaluation failed).
    pub best: Option<f64>,
    /// Best found / optimum for a minimised objective (optimum / best when maximised): 1 is the
    /// optimum, higher is worse.
    pub ratio: Option<f64>,
    /// Distinct configurations evaluated (failed ones included).
    pub evaluations: usize,
    /// Evaluations whose measurement failed.
    pub failed: usize,
}

/// Runs strategy `name` (with its JSON options) over the cache for `budget` distinct
/// evaluations from `seed`, as Kernel Tuner's simulation mode does. `early_stop` honours the
/// strategy's own convergence rule; otherwise the whole budget is spent.
pub fn replay(cache: &KernelTunerCache, name: &str, options: &Json, budget: usize, seed: u64, early_stop: bool) -> Result<Replay, String> {
    let mut strategy = crate::strategies::by_name(name, options)?;
    let mut opts = crate::study::StudyOptions::budget(budget);
    opts.strategy_stop = early_stop;
    let mut study = crate::study::Study::new(cache.space.clone(), vec![cache.metric()], opts)?;
    let mut objective = cache.objective();
    let mut rng = crate::rng::Rng::seed_from_u64(seed);
    study.run(strategy.as_mut(), &mut objective, &mut rng);
    let best = study.best_value();
    Ok(Replay { best, ratio: best.and_then(|b| cache.ratio(b)), evaluations: study.evaluations(), failed: study.failed() })
}

impl KernelTunerCache {
    /// How far a found value is from the cache's optimum: best/optimum when minimised,
    /// optimum/best when maximised (1 = the optimum, higher is worse).
    pub fn ratio(&self, found: f64) -> Option<f64> {
        let o = self.optimum()?;
        match (self.minimize, found == o) {
            (_, true) => Some(1.0),
            (true, _) if o > 0.0 => Some(found / o),
            (false, _) if found > 0.0 && o > 0.0 => Some(o / found),
            _ => None,
        }
    }
}

/// Replays a cache as an objective: a lookup, no computation.
pub struct CacheObjective<'a> {
    cache: &'a KernelTunerCache,
}

impl Objective for CacheObjective<'_> {
    fn metrics(&self) -> Vec<Metric> {
        vec![self.cache.metric()]
    }
    fn evaluate(&mut self, config: &Config) -> Outcome {
        match self.cache.lookup(config) {
            Some(Some(v)) => Outcome::Ok(vec![v]),
            Some(None) => Outcome::Failed("the cached measurement failed".into()),
            None => Outcome::Infeasible("not a cached configuration".into()),
        }
    }
}

/// Parses the text. A file that does not parse as it is but ends where an interrupted Kernel
/// Tuner run stops (after a record's comma, or at the end of the cache object) is closed first,
/// as Kernel Tuner's `correct_open_cache` does. Truncation is detected by parsing, not by the
/// last bytes: a complete file written with `sort_keys=True` ends with another key, not the cache.
fn parse_json(text: &str) -> Result<Json, String> {
    let t = text.trim_end();
    if t.trim_start().is_empty() {
        return Err("the cache file is empty".into());
    }
    let first = match serde_json::from_str(t) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    if !(t.contains("\"cache\"") && (first.is_eof() || t.ends_with(','))) {
        return Err(describe(t, &first));
    }
    let closed = format!("{}}}\n}}", t.strip_suffix(',').unwrap_or(t));
    match serde_json::from_str(&closed) {
        Ok(v) => Ok(v),
        // Cut in the middle of a record: the closed form fails near its end; say that.
        Err(e) if first.is_eof() => Err(describe(&closed, &e)),
        // A real error before the end (NaN, a typo): the original message points at it.
        Err(_) => Err(describe(t, &first)),
    }
}

fn describe(t: &str, e: &serde_json::Error) -> String {
    // Python's json writes NaN and Infinity, which are not JSON: say so plainly.
    let line = t.lines().nth(e.line().saturating_sub(1)).unwrap_or("");
    let at = line.get(e.column().saturating_sub(1)..).unwrap_or("");
    if ["NaN", "Infinity", "-Infinity"].iter().any(|w| at.starts_with(w)) {
        format!("a non-finite number (NaN or Infinity) at line {} column {}; times must be finite", e.line(), e.column())
    } else {
        format!("malformed or truncated JSON: {e}")
    }
}

/// The error names Kernel Tuner writes in place of a measurement.
const ERROR_NAMES: [&str; 4] = ["CompilationFailedConfig", "RuntimeFailedConfig", "InvalidConfig", "ErrorConfig"];

fn is_error_name(v: &Json) -> bool {
    matches!(v, Json::String(s) if ERROR_NAMES.contains(&s.as_str()))
}

/// A T4 results file (`*_T4.json` in benchmark_hub: `{"schema_version", "metadata", "results":
/// [{"configuration": {..}, "measurements": [{"name", "value"}], "invalidity", ..}]}`) rewritten
/// as the cache form, so both go through one loader (and its checks). T4 stores no value lists:
/// each parameter's values are those its results show, in the order they first appear (numeric
/// ones are placed by value anyway), and parameters are taken in name order, which does not
/// depend on how a JSON library orders an object's keys. A result whose objective is missing or
/// not a number failed.
fn from_t4(top: &serde_json::Map<String, Json>) -> Result<Json, String> {
    let results = top.get("results").and_then(Json::as_array).ok_or("'results' is not an array (a T4 results file has one)")?;
    let first = t4_configuration(0, results.first().ok_or("the T4 file has no results: no measured configurations")?)?;
    let mut names: Vec<String> = first.keys().cloned().collect();
    names.sort();
    if names.len() > MAX_PARAMS {
        return Err(format!("the T4 results have {} parameters; at most {MAX_PARAMS} (MAX_PARAMS, docs/measurements.md)", names.len()));
    }
    if results.len() > MAX_CONFIGS {
        return Err(format!("the T4 file has {} results; at most {MAX_CONFIGS} configurations (MAX_CONFIGS, docs/measurements.md)", results.len()));
    }
    let objective = results[0]["objectives"].get(0).and_then(Json::as_str).unwrap_or("time").to_string();
    let mut lists: Vec<Vec<Json>> = vec![Vec::new(); names.len()];
    let mut cache = serde_json::Map::new();
    for (i, r) in results.iter().enumerate() {
        let c = t4_configuration(i, r)?;
        let differ = || format!("T4 result {i}: its parameters differ from result 0's {names:?}");
        if c.len() != names.len() {
            return Err(differ());
        }
        let mut rec = serde_json::Map::new();
        for (n, list) in names.iter().zip(lists.iter_mut()) {
            let v = c.get(n).ok_or_else(differ)?;
            if !list.contains(v) {
                if list.len() >= MAX_LEVELS {
                    return Err(format!("T4 result {i}: parameter '{n}' has more than {MAX_LEVELS} distinct values (MAX_LEVELS, docs/measurements.md)"));
                }
                list.push(v.clone());
            }
            rec.insert(n.clone(), v.clone());
        }
        let m = r["measurements"].as_array().and_then(|m| m.iter().find(|x| x["name"] == objective.as_str()));
        let value = match m.map(|x| &x["value"]) {
            Some(v @ (Json::Number(_) | Json::String(_))) => v.clone(),
            _ => Json::String("ErrorConfig".into()),
        };
        rec.insert(objective.clone(), value);
        // Named by position, so the loader's messages (a repeated configuration among them)
        // point at the result.
        cache.insert(format!("T4 result {i}"), Json::Object(rec));
    }
    let tune_params: serde_json::Map<String, Json> = names.iter().cloned().zip(lists.into_iter().map(Json::Array)).collect();
    Ok(serde_json::json!({"tune_params_keys": names, "tune_params": tune_params, "objective": objective, "cache": cache}))
}

fn t4_configuration(i: usize, r: &Json) -> Result<&serde_json::Map<String, Json>, String> {
    r.get("configuration").and_then(Json::as_object).ok_or_else(|| format!("T4 result {i} has no 'configuration' object"))
}

/// A parameter value from JSON; bools become Python's "True"/"False" as in cache keys.
fn to_value(v: &Json) -> Option<Value> {
    match v {
        Json::Number(n) => n.as_i64().map(Value::Int).or_else(|| n.as_f64().filter(|x| x.is_finite()).map(Value::Float)),
        Json::String(s) => Some(Value::Str(s.clone())),
        Json::Bool(b) => Some(Value::Str(if *b { "True" } else { "False" }.into())),
        _ => None,
    }
}

fn kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a bool",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

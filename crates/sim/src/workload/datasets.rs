//! Length statistics of public prompt datasets as serving benchmarks sample them
//! (assets/workloads/datasets.json: the published statistics with their sources, not the data).
//! `deployment.serving.dataset` draws request lengths from these instead of the workload's means:
//! lognormal with the stated mean and coefficient of variation, then the benchmark's filter
//! (prompts over max_input tokens, or prompt plus output over max_total, are resampled). The
//! file's own `about` stays short: the page carries the file.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

const DATASETS_JSON: &str = crate::json_asset_lean!("../../../../assets/workloads/datasets.json");

#[derive(Deserialize)]
struct Field {
    value: f64,
}

#[derive(Deserialize)]
struct File {
    datasets: BTreeMap<String, BTreeMap<String, Field>>,
}

/// One dataset's request-length statistics.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DatasetStats {
    pub input_mean: f64,
    pub output_mean: f64,
    /// Coefficient of variation of both lengths (lognormal).
    pub cv: f64,
    /// The benchmark's filter: longest prompt, longest prompt plus output, shortest of either.
    pub max_input: u64,
    pub max_total: u64,
    pub min_len: u64,
}

fn all() -> &'static Result<BTreeMap<String, DatasetStats>, String> {
    static ALL: OnceLock<Result<BTreeMap<String, DatasetStats>, String>> = OnceLock::new();
    ALL.get_or_init(|| parse(DATASETS_JSON))
}

/// Parses a datasets file (checked: positive means, a filter that leaves something).
pub fn parse(text: &str) -> Result<BTreeMap<String, DatasetStats>, String> {
    let f: File = serde_json::from_str(text).map_err(|e| format!("datasets.json: {e}"))?;
    let mut out = BTreeMap::new();
    for (name, fields) in f.datasets {
        let get = |k: &str| fields.get(k).map(|x| x.value).ok_or_else(|| format!("datasets.json: {name}: missing '{k}'"));
        let s = DatasetStats {
            input_mean: get("input_mean")?,
            output_mean: get("output_mean")?,
            cv: get("cv")?,
            max_input: get("max_input")? as u64,
            max_total: get("max_total")? as u64,
            min_len: get("min_len")? as u64,
        };
        let ok = s.input_mean >= 1.0 && s.output_mean >= 1.0 && (0.0..=4.0).contains(&s.cv) && s.min_len >= 1 && s.max_input > s.min_len && s.max_total > s.max_input;
        if !ok {
            return Err(format!("datasets.json: {name}: statistics out of range"));
        }
        out.insert(name, s);
    }
    Ok(out)
}

/// The bundled datasets' names.
pub fn names() -> Vec<String> {
    all().as_ref().map(|m| m.keys().cloned().collect()).unwrap_or_default()
}

/// A bundled dataset's statistics; an unknown name is an error listing the known ones.
pub fn dataset(name: &str) -> Result<DatasetStats, String> {
    let m = all().as_ref().map_err(|e| e.clone())?;
    m.get(name).copied().ok_or_else(|| format!("unknown dataset '{name}' (known: {})", m.keys().cloned().collect::<Vec<_>>().join(", ")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn bundled_datasets_parse() {
        let s = super::dataset("sharegpt").unwrap();
        // Before the benchmark's filter: a little above the 229.7 / 203.1 vLLM's sampler sends.
        assert!(s.input_mean > 229.7 && s.output_mean > 203.1 && s.input_mean < 300.0 && s.output_mean < 250.0, "{s:?}");
        assert!(super::dataset("nope").unwrap_err().contains("sharegpt"));
    }
}

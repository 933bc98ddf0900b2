//! Issue 44, "bounded by construction": every reader's limits (docs/measurements.md, "Limits"),
//! each met with a hostile input that must be refused with a message naming the limit, before
//! the work and without a crash: the Kernel Tuner cache (compressed and inflated bytes,
//! configurations, parameters, values per parameter), the serving trace, and JSON nested past
//! serde_json's recursion limit in every JSON reader.

use tunelab_search::kernel_tuner::{self, MAX_CACHE_BYTES, MAX_CONFIGS, MAX_GZIP_BYTES, MAX_LEVELS, MAX_PARAMS};

/// One gzip member holding `data` (RFC 1952: header, raw deflate, CRC-32, length).
fn gzip_member(data: &[u8]) -> Vec<u8> {
    let mut g = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
    g.extend(miniz_oxide::deflate::compress_to_vec(data, 6));
    g.extend(tunelab_search::gzip::crc32(data).to_le_bytes());
    g.extend((data.len() as u32).to_le_bytes());
    g
}

fn cache_text(params: usize, levels: usize, entries: usize) -> String {
    let keys: Vec<String> = (0..params).map(|i| format!("\"p{i}\"")).collect();
    let list = format!("[{}]", (0..levels).map(|v| v.to_string()).collect::<Vec<_>>().join(","));
    let tp: Vec<String> = (0..params).map(|i| format!("\"p{i}\": {list}")).collect();
    let cache: Vec<String> = (0..entries).map(|n| format!("\"{n}\": {{{}, \"time\": 1.0}}", (0..params).map(|i| format!("\"p{i}\": {}", (n / (i + 1)) % levels.max(1))).collect::<Vec<_>>().join(", "))).collect();
    format!("{{\"tune_params_keys\": [{}], \"tune_params\": {{{}}}, \"cache\": {{{}}}}}", keys.join(","), tp.join(","), cache.join(","))
}

#[test]
fn a_small_cache_and_its_gzip_load() {
    let t = cache_text(2, 4, 8);
    assert_eq!(kernel_tuner::load_bytes(t.as_bytes()).unwrap().len(), 8);
    assert_eq!(kernel_tuner::load_bytes(&gzip_member(t.as_bytes())).unwrap().len(), 8);
}

#[test]
fn an_oversized_gzip_cache_is_refused_before_it_is_inflated() {
    // The gzip magic, then more bytes than a compressed cache may have: not inflated at all
    // (the bytes are not even valid deflate; the size refusal comes first).
    let mut big = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
    big.resize(MAX_GZIP_BYTES + 1, 0);
    let e = kernel_tuner::load_bytes(&big).unwrap_err();
    assert!(e.contains("MAX_GZIP_BYTES") && e.contains(&format!("at most {} MiB", MAX_GZIP_BYTES >> 20)), "{e}");
}

#[test]
fn a_gzip_bomb_stops_at_the_inflated_limit() {
    // 1 MiB of spaces compresses to about 1 KB; members one after another inflate past the limit.
    let member = gzip_member(&vec![b' '; 1 << 20]);
    let n = (MAX_CACHE_BYTES >> 20) + 1;
    let bomb: Vec<u8> = std::iter::repeat_n(member, n).flatten().collect();
    assert!(bomb.len() < MAX_GZIP_BYTES / 100, "the bomb is small: {} bytes", bomb.len());
    let e = kernel_tuner::load_bytes(&bomb).unwrap_err();
    assert!(e.contains(&format!("more than {} MiB", MAX_CACHE_BYTES >> 20)), "{e}");
}

#[test]
fn an_oversized_plain_cache_is_refused_naming_the_limit() {
    let mut big = b"{\"cache\": {".to_vec();
    big.resize(MAX_CACHE_BYTES + 1, b' ');
    let e = kernel_tuner::load_bytes(&big).unwrap_err();
    assert!(e.contains("MAX_CACHE_BYTES") && e.contains(&format!("{} MiB", MAX_CACHE_BYTES >> 20)), "{e}");
}

#[test]
fn too_many_parameters_levels_or_configurations_are_refused_naming_the_limit() {
    let e = kernel_tuner::load_bytes(cache_text(MAX_PARAMS + 1, 2, 1).as_bytes()).unwrap_err();
    assert!(e.contains("MAX_PARAMS") && e.contains(&format!("{} parameters", MAX_PARAMS + 1)), "{e}");
    let e = kernel_tuner::load_bytes(cache_text(1, MAX_LEVELS + 1, 1).as_bytes()).unwrap_err();
    assert!(e.contains("MAX_LEVELS") && e.contains(&format!("{} values", MAX_LEVELS + 1)), "{e}");
    // More entries than a cache may hold: the count is checked before any entry is read (the
    // entries here are not even records).
    let mut t = cache_text(1, 2, 0).trim_end_matches("}}").to_string();
    for n in 0..=MAX_CONFIGS {
        if n > 0 {
            t.push(',');
        }
        t += &format!("\"{n}\":0");
    }
    t += "}}";
    let e = kernel_tuner::load_bytes(t.as_bytes()).unwrap_err();
    assert!(e.contains("MAX_CONFIGS") && e.contains(&format!("{} configurations", MAX_CONFIGS + 1)), "{e}");
}

#[test]
fn a_t4_file_with_too_many_distinct_values_is_refused_not_walked_quadratically() {
    let results: Vec<String> = (0..=MAX_LEVELS).map(|i| format!("{{\"configuration\": {{\"x\": {i}}}, \"objectives\": [\"time\"], \"measurements\": [{{\"name\": \"time\", \"value\": 1.0}}]}}")).collect();
    let t = format!("{{\"schema_version\": \"1.0.0\", \"results\": [{}]}}", results.join(","));
    let e = kernel_tuner::load_bytes(t.as_bytes()).unwrap_err();
    assert!(e.contains("MAX_LEVELS") && e.contains("'x'"), "{e}");
}

const SERVING: &str = r#"{"stage": "deployment", "model": "llama-2-7b", "device": "910B2", "budget": 1,
 "deployment": {"serving": {"trace": TRACE}}}"#;

#[test]
fn a_serving_trace_past_its_limit_is_refused_naming_the_field_and_the_limit() {
    let max = tunelab_scenario::spec::options::serving::MAX_REQUESTS;
    assert_eq!(max, 100_000, "docs/measurements.md states 100,000 arrivals");
    let trace = |n: usize| format!("[{}]", (0..n).map(|i| format!("{}", i as f64 * 0.01)).collect::<Vec<_>>().join(","));
    let ok = tunelab_scenario::Scenario::from_json(&SERVING.replace("TRACE", &trace(max)));
    assert!(ok.is_ok(), "{} arrivals are accepted: {:?}", max, ok.err());
    let e = tunelab_scenario::Scenario::from_json(&SERVING.replace("TRACE", &trace(max + 1))).unwrap_err();
    assert!(e.contains("deployment.serving.trace") && e.contains(&format!("{} arrivals", max + 1)) && e.contains(&max.to_string()), "{e}");
}

/// `[[[...1...]]]` nested `depth` deep inside `{"key": ...}`.
fn nested(key: &str, depth: usize) -> String {
    format!("{{\"{key}\": {}1{}}}", "[".repeat(depth), "]".repeat(depth))
}

fn says_nesting(e: &str) -> bool {
    e.contains("nested") || e.contains("recursion limit")
}

#[test]
fn json_nested_past_the_recursion_limit_is_a_clear_error_in_every_reader() {
    // 100,000 levels: far past serde_json's 128, so a reader without the limit would overflow
    // the stack; each must stop with a message that says the input is nested too deep.
    let deep = 100_000;
    let e = tunelab_scenario::Scenario::from_json(&nested("view", deep)).unwrap_err();
    assert!(says_nesting(&e), "scenario: {e}");
    let e = tunelab_sim::model::load_model(&nested("hidden_size", deep)).err().unwrap();
    assert!(says_nesting(&e), "model config: {e}");
    let e = tunelab_sim::device::Device::from_json(&nested("fields", deep)).unwrap_err();
    assert!(says_nesting(&e), "chip profile: {e}");
    let e = kernel_tuner::load_bytes(nested("cache", deep).as_bytes()).unwrap_err();
    assert!(says_nesting(&e), "Kernel Tuner cache: {e}");
    let e = tunelab_scenario::fidelity::MeasurementSet::from_json_reporting(&nested("rows", deep)).err().unwrap();
    assert!(says_nesting(&e), "measurement file: {e}");
    // An unknown key is skipped by serde_json without recursion (an explicit stack), so a deep
    // value under one is read through and reported as unknown, not refused and not a crash.
    let (loaded, unknown) = tunelab_scenario::knowledge::KnowledgeBase::load_reporting(&nested("unread", deep));
    match loaded.set_aside {
        Some((e, _)) => assert!(says_nesting(&e), "knowledge base: {e}"),
        None => assert!(format!("{unknown:?}").contains("unread"), "knowledge base: the deep key is reported: {unknown:?}"),
    }
    // Under a typed field the reader stops at the first wrong type, long before the depth.
    let e = tunelab_scenario::knowledge::KnowledgeBase::load(&nested("format", deep)).set_aside.unwrap().0;
    assert!(e.contains("invalid type") && e.len() < 300, "knowledge base: {e}");
    let link = tunelab_scenario::spec::url::encode_json(&nested("view", 2000));
    let e = tunelab_scenario::spec::url::decode(&link).err().unwrap();
    assert!(says_nesting(&e), "link: {e}");
}

#[test]
fn no_refusal_carries_a_wall_of_digits() {
    use tunelab_scenario::spec::messages::shorten_numbers;
    let huge = format!("training.moe_imbalance: must be within [1, 4], got {}", 1e300);
    assert!(huge.len() > 300);
    assert_eq!(shorten_numbers(&huge), "training.moe_imbalance: must be within [1, 4], got 1e300");
    assert_eq!(shorten_numbers(&format!("x = -{}", 2.5e40)), "x = -2.5e40");
    // Ordinary numbers, identifiers and hashes are left alone.
    let plain = "rows[3].value: 12.5 us, row a1234567890123456789012345, 1.5";
    assert_eq!(shorten_numbers(plain), plain);
    // The configuration as the report prints it.
    assert_eq!(tunelab_search::Value::Float(1e300).to_string(), "1e300");
    assert_eq!(tunelab_search::Value::Float(0.25).to_string(), "0.25");
}

#[test]
fn a_value_whose_predict_is_misspelt_is_listed_with_the_reason() {
    // `predcit` for `predict`: the key is reported as unknown, and the value is listed as not
    // compared because it names no metric (it once read "not compared: not compared").
    let set: serde_json::Value = serde_json::from_str(include_str!("../../../assets/measurements/ascend-910b.json")).unwrap();
    let mut row = set["rows"][0].clone();
    let v = row["values"][0].as_object_mut().unwrap();
    let p = v.remove("predict").unwrap();
    v.insert("predcit".into(), p);
    let text = serde_json::json!({"schema": set["schema"], "name": "typo", "rows": [row]}).to_string();
    let (set, unknown) = tunelab_scenario::fidelity::MeasurementSet::from_json_reporting(&text).unwrap();
    assert!(format!("{unknown:?}").contains("predcit"), "{unknown:?}");
    let rep = tunelab_scenario::fidelity::evaluate(&set, &Default::default(), None);
    let u = rep.unexpressed.iter().find(|u| u.metric == set.rows[0].values[0].metric).expect("the value is listed");
    assert!(u.reason.contains("no 'predict'"), "{}", u.reason);
}

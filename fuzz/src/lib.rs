//! Fuzz target functions, one per parser family, shared by the cargo-fuzz binaries
//! (fuzz/fuzz_targets/*.rs, nightly) and the stable smoke test
//! (crates/scenario/tests/fuzz_smoke.rs, which includes this file as a module).
//!
//! Each function takes arbitrary bytes and panics only when an invariant breaks:
//! - no panic anywhere in parsing, validation, set-up, a short run or a report;
//! - no NaN or infinity in a reported metric;
//! - bounded work per input (budgets are clamped; every study's evaluations stay within them);
//! - determinism: the same input run twice gives the same digest / the same result.
//!
//! Time per input is bounded by the runner: libFuzzer's `-timeout`, and the smoke test prints
//! its slowest input (figures are printed, never asserted).

#![allow(dead_code)]

use tunelab_scenario::knowledge::{import_package, KnowledgeBase, WARM_LIMIT};
use tunelab_scenario::{Run, Scenario};
use tunelab_search::kernel_tuner::KernelTunerCache;
use tunelab_search::{Config, Outcome, Param, Rng, Space, Study, StudyOptions, Value};
use tunelab_sim::{default_tiling, estimate, DType, Device, Epilogue, Op, VectorKind};

/// Largest budget a fuzzed scenario is run with (the scenario's own budget is validated first).
pub const FUZZ_BUDGET: usize = 6;

fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

fn finite(what: &str, x: f64) {
    assert!(x.is_finite(), "{what} is not finite: {x}");
}

/// Clamps a valid scenario to a short run: small budget, at most two strategies.
fn shorten(mut s: Scenario) -> Scenario {
    s.budget = s.budget.min(FUZZ_BUDGET);
    s.compare.truncate(1);
    s
}

/// Runs a scenario to the end and checks the report; returns its digest.
fn run_and_check(s: &Scenario) -> Option<String> {
    let mut run = Run::new(s).ok()?;
    let mut steps = 0;
    while !run.is_done() {
        run.step(64);
        steps += 1;
        assert!(steps < 10_000, "a run of budget {} did not finish", s.budget);
    }
    for l in run.lanes() {
        assert!(l.study.evaluations() <= l.study.options().budget, "a lane spent more than its budget");
        for t in l.study.trials() {
            for v in &t.values {
                finite("a trial's metric", *v);
            }
        }
    }
    let r = run.report();
    if let Some(b) = r.best {
        finite("best", b);
    }
    for c in &r.comparison {
        for x in [c.before, c.after].into_iter().flatten() {
            finite(&format!("metric {}", c.metric), x);
        }
    }
    for st in &r.strategies {
        if let Some(b) = st.best {
            finite("a strategy's best", b);
        }
    }
    let _ = r.to_text();
    let _ = r.to_json();
    Some(run.digest())
}

/// Scenario JSON: parse + validate + a short run + report; a second run gives the same digest.
pub fn scenario(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let Ok(s) = Scenario::from_json(t) else { return };
    let _ = s.to_json();
    let s = shorten(s);
    if let Some(d1) = run_and_check(&s) {
        let d2 = run_and_check(&s).expect("the same scenario set up once and failed the second time");
        assert_eq!(d1, d2, "same scenario, different trials");
    }
}

/// URL fragment: decode; a decoded scenario re-encodes and decodes to itself; its JSON is bounded.
pub fn url(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let _ = tunelab_scenario::url::decode_json(t);
    let Ok(s) = tunelab_scenario::url::decode(t) else { return };
    let json = s.to_json();
    assert!(json.len() <= 64 * 1024 * 1024, "a decoded link prints as {} bytes", json.len());
    let again = tunelab_scenario::url::decode(&tunelab_scenario::url::encode(&s)).expect("a decoded scenario re-encodes");
    assert_eq!(again, s, "URL round trip changed the scenario");
}

/// A few operators every device should price (or refuse with a reason).
fn probe_ops() -> Vec<Op> {
    vec![
        Op::Matmul { batch: 1, m: 1024, n: 1024, k: 1024, dtype: DType::Fp16, weight_dtype: None, epilogue: Epilogue::None },
        Op::Matmul { batch: 1, m: 1, n: 4096, k: 4096, dtype: DType::Bf16, weight_dtype: Some(DType::Int8), epilogue: Epilogue::Bias },
        Op::Vector { kind: VectorKind::Softmax, rows: 4096, row_len: 4096, dtype: DType::Fp16 },
        Op::Vector { kind: VectorKind::RmsNorm, rows: 1, row_len: 7, dtype: DType::Fp32 },
        Op::GroupedMatmul { groups: 32, m: 1024, n: 2048, k: 4096, dtype: DType::Fp16, weight_dtype: None },
        Op::MoeComm { phase: tunelab_sim::MoePhase::Dispatch, form: tunelab_sim::MoeCommForm::DeepepNormal, tokens: 4096, hidden: 7168, top_k: 8, ranks: 8, dtype: DType::Int8, link: tunelab_sim::Link::Hccs },
    ]
}

/// Chip profile: parse; every estimate on a parsed profile is finite and non-negative, twice the same.
pub fn device(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let Ok(d) = Device::from_json(t) else { return };
    let _ = d.to_json();
    check_device(&d);
}

fn check_device(d: &Device) {
    for op in probe_ops() {
        let tiling = default_tiling(&op, d);
        let (a, b) = (estimate(&op, &tiling, d), estimate(&op, &tiling, d));
        match (a, b) {
            (Ok(e), Ok(f)) => {
                for (what, x) in [("time_us", e.time_us), ("energy_uj", e.energy_uj), ("hbm_bytes", e.hbm_bytes), ("flops", e.flops)] {
                    finite(what, x);
                    assert!(x >= 0.0, "{what} is negative: {x}");
                }
                assert_eq!(e.time_us.to_bits(), f.time_us.to_bits(), "estimate is not deterministic");
            }
            (Err(_), Err(_)) => {}
            _ => panic!("the same estimate once feasible, once not"),
        }
    }
}

/// Model description (Hugging Face config, operator graph, serialised model): load; a loaded
/// model sets up and runs a short deployment (language model) or operator study.
pub fn model(data: &[u8]) {
    let Some(t) = text(data) else { return };
    if !t.trim_start().starts_with(['{', '[']) {
        return;
    }
    let Ok(loaded) = tunelab_sim::load_model(t) else { return };
    let _ = loaded.model.params();
    // One formula (issue 41): on one chip, a language model without a vision tower holds exactly
    // its counted parameters (audio towers, per-layer blocks and hybrid patterns included).
    if loaded.model.llm.is_some() && loaded.model.vision.is_none() {
        let held = tunelab_sim::memory::chip_params(&loaded.model, &tunelab_sim::workload::ParallelPlan::default()).total();
        assert_eq!(held, loaded.model.params().total, "memory and the parameter count disagree");
    }
    // The compressed-attention prefill table (DeepSeek-V4, MiniMax-M3) answers or declines, and
    // its cores attend to no more keys than the chunk's context.
    if let Some(ops) = tunelab_sim::workload::compressed_attention::chunk_cores(&loaded.model, &tunelab_sim::workload::ParallelPlan::default(), &tunelab_sim::workload::GraphOptions::default(), 1, 8, 64) {
        for o in ops {
            if let tunelab_sim::op::Op::Attention { kv_len, .. } = o.op {
                assert!(kv_len <= 64, "{} attends to {kv_len} keys of a 64-token context", o.name);
            }
        }
    }
    let mut s = Scenario { budget: 3, ..Scenario::default() };
    s.model = tunelab_scenario::scenario::ModelRef::Id(t.to_string());
    if !loaded.model.is_llm() {
        s.stage = tunelab_scenario::scenario::Stage::Operator;
    }
    if s.validate().is_ok() {
        let a = run_and_check(&s);
        let b = run_and_check(&s);
        assert_eq!(a, b, "same model, different trials");
    }
}

/// Kernel Tuner cache: parse; a short replay stays within budget, never beats the optimum, and
/// replays identically.
pub fn kernel_tuner(data: &[u8]) {
    let Ok(cache) = tunelab_search::kernel_tuner::load_bytes(data) else { return };
    let _ = KernelTunerCache::parse(text(data).unwrap_or(""));
    let replay = |seed: u64| -> (Option<f64>, usize) {
        let Ok(mut strategy) = tunelab_search::strategies::by_name("random", &serde_json::json!({})) else { return (None, 0) };
        let Ok(mut study) = Study::new(cache.space.clone(), vec![cache.metric()], StudyOptions::budget(20)) else { return (None, 0) };
        let mut obj = cache.objective();
        let mut rng = Rng::seed_from_u64(seed);
        study.run(strategy.as_mut(), &mut obj, &mut rng);
        assert!(study.evaluations() <= 20);
        (study.best_value(), study.evaluations())
    };
    let (a, b) = (replay(1), replay(1));
    assert_eq!(a.0.map(f64::to_bits), b.0.map(f64::to_bits), "replay is not deterministic");
    assert_eq!(a.1, b.1);
    if let (Some(best), Some(opt)) = (a.0, cache.optimum()) {
        finite("replay best", best);
        let m = cache.metric();
        assert!(m.signed(best) >= m.signed(opt), "replay found {best}, better than the cache's optimum {opt}");
    }
}

/// Knowledge base store or package: load never fails hard; similarity is in [0, 1] for any
/// names; a warm start from the cases re-prices every transferred configuration.
pub fn knowledge(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let mut kb = KnowledgeBase::load(t).kb;
    if let Ok(p) = import_package(t) {
        kb.add(p.case);
    }
    if kb.cases.is_empty() {
        return;
    }
    let _ = kb.to_json();
    for c in &kb.cases {
        for d in &kb.cases {
            let s = c.fingerprint.similarity(&d.fingerprint);
            assert!((0.0..=1.0).contains(&s), "similarity {s}");
        }
    }
    let s = Scenario { budget: 2, ..Scenario::default() };
    let Ok(fp) = tunelab_scenario::cases::fingerprint_of(&s) else { return };
    let Ok(mut run) = Run::new(&s) else { return };
    let warm = kb.warm_trials(&fp, run.space(), run.metrics(), WARM_LIMIT);
    if warm.is_empty() {
        return;
    }
    run.warm_start(&warm).expect("warm start before any evaluation");
    assert!(run.transferred().len() <= WARM_LIMIT);
    for t in run.transferred().to_vec() {
        match run.evaluate(&t.config) {
            Outcome::Ok(v) => assert_eq!(v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), t.values.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), "a transferred value was not re-priced"),
            _ => assert!(!t.is_ok(), "an infeasible configuration was transferred as ok"),
        }
    }
}

/// Constraint expression over a fixed space: parses or is refused; checking and sampling are
/// bounded and deterministic.
pub fn constraints(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let params = vec![
        Param::int("a", 0, 9, 1),
        Param::pow2("b", 1, 64),
        Param::categorical("c", vec![Value::from("x"), Value::from("y")]),
        Param::float("d", 0.5, 2.0, false, None),
    ];
    let Ok(space) = Space::new(params, &[t.to_string()]) else { return };
    let probe = Config(vec![Value::Int(3), Value::Int(8), Value::from("x"), Value::Float(1.0)]);
    let _ = space.check(&probe);
    let (mut r1, mut r2) = (Rng::seed_from_u64(7), Rng::seed_from_u64(7));
    for _ in 0..4 {
        let (x, y) = (space.sample(&mut r1), space.sample(&mut r2));
        assert_eq!(x, y, "sampling is not deterministic");
        if let Some(c) = x {
            assert!(space.contains(&c), "sample outside the constrained space");
        }
    }
}

/// Diffusion pipeline JSON (diffusers configs): parse; a parsed pipeline builds every component
/// at its defaults, and a diffusion scenario over it prices its baseline twice the same.
pub fn diffusion_pipeline(data: &[u8]) {
    let Some(t) = text(data) else { return };
    if !t.trim_start().starts_with('{') {
        return;
    }
    let Ok(p) = tunelab_sim::workload::diffusers::Pipeline::load(t) else { return };
    let d = p.defaults;
    let Ok(l) = p.latent(d.height, d.width, d.frames) else { return };
    // A small size keeps the smoke run fast; the builders must not panic at any valid size.
    let mut s = Scenario { budget: 2, stage: tunelab_scenario::Stage::Diffusion, ..Scenario::default() };
    s.model = tunelab_scenario::scenario::ModelRef::Id(t.to_string());
    let m = p.side_multiple();
    s.diffusion = Some(tunelab_scenario::spec::diffusion::DiffusionOptions { height: Some(m), width: Some(m), frames: Some(if p.is_video() { 5 } else { 1 }), steps: Some(2), ..Default::default() });
    let _ = l;
    s.device = tunelab_scenario::scenario::DeviceRef::Name("910B2".into());
    if s.validate().is_ok() {
        let a = run_and_check(&s);
        let b = run_and_check(&s);
        assert_eq!(a, b, "same pipeline, different trials");
    }
}

/// Serving options (`deployment.serving`: speculative decoding, KV type, dataset, prefix cache,
/// max concurrency, attention) on a small deployment scenario: `data` is the serving object,
/// with an optional "model" key choosing the bundled model (a hybrid, an encoder, a dense LLM,
/// or an id that does not exist). Refused with an error, or run with finite metrics, twice alike.
pub fn serving_features(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let Ok(serde_json::Value::Object(mut serving)) = serde_json::from_str::<serde_json::Value>(t) else { return };
    let model = match serving.remove("model") {
        Some(serde_json::Value::String(m)) => m,
        _ => "qwen3.5-2b".into(),
    };
    // Bounded work: a few requests.
    if let Some(n) = serving.get("requests").and_then(|v| v.as_u64()) {
        serving.insert("requests".into(), (n.min(24)).into());
    } else {
        serving.insert("requests".into(), 8.into());
    }
    if serving.get("trace").and_then(|v| v.as_array()).is_some_and(|a| a.len() > 24) {
        serving.remove("trace");
    }
    let s = serde_json::json!({
        "stage": "deployment", "model": model, "device": "910B2", "budget": 2,
        "workload": {"batch": 4, "input_len": 64, "output_len": 16},
        "deployment": {"serving": serving, "batches": [4], "tensor_parallel": [1], "precisions": ["bf16", "w4a4"], "tile_operators": false},
    });
    let Ok(s) = Scenario::from_json(&s.to_string()) else { return };
    let s = shorten(s);
    if let Some(d1) = run_and_check(&s) {
        let d2 = run_and_check(&s).expect("the same scenario set up once and failed the second time");
        assert_eq!(d1, d2, "same serving scenario, different trials");
    }
}

/// A multi-node deployment (`deployment.cluster`, issue 22): the bytes are the cluster object
/// (or `{"cluster": {...}, "device", "tensor_parallel"}`), set into a small MoE deployment
/// scenario; layouts that do not divide the chips, bad xPyD strings and impossible EPLB
/// settings must come back as errors naming the field, never a panic; a valid one runs short.
pub fn cluster(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(t) else { return };
    for l in v.get("cluster").unwrap_or(&v).get("disaggregation").and_then(|d| d.as_array()).into_iter().flatten() {
        if let Some(l) = l.as_str() {
            if let Err(e) = tunelab_scenario::spec::cluster::parse_layout(l) {
                assert!(e.contains("deployment.cluster.disaggregation"), "{e}");
            }
        }
    }
    let mut base = serde_json::json!({
        "stage": "deployment", "model": "mixtral-8x7b", "device": "910B2", "budget": 3,
        "workload": { "batch": 8, "input_len": 256, "output_len": 16 },
        "deployment": { "serving": { "requests": 16, "arrival": "poisson", "request_rate": 4 }, "precisions": ["w8a8"] }
    });
    base["deployment"]["cluster"] = v.get("cluster").cloned().unwrap_or_else(|| v.clone());
    if let Some(x) = v.get("device") {
        base["device"] = x.clone();
    }
    if let Some(x) = v.get("tensor_parallel") {
        base["deployment"]["tensor_parallel"] = x.clone();
    }
    if let Some(x) = v.get("max_concurrency") {
        base["deployment"]["serving"]["max_concurrency"] = x.clone();
    }
    let Ok(s) = Scenario::from_value(base) else { return };
    match tunelab_scenario::stages::setup(&s) {
        Err(e) => assert!(!e.is_empty()),
        Ok(_) => {
            assert!(run_and_check(&shorten(s)).is_some(), "a cluster scenario that sets up must run");
        }
    }
}

// Issue 44: the input readers. Every key is read or reported; the readers are bounded and
// deterministic.

/// Every object key of `v` with its path as `spec::strict` writes it ("a.b[0].c"), at most
/// `cap` of them; free-form subtrees named in `skip` (by path) are not entered.
fn key_paths(v: &serde_json::Value, at: &str, skip: &dyn Fn(&str) -> bool, out: &mut Vec<String>, cap: usize) {
    if out.len() >= cap || skip(at) {
        return;
    }
    match v {
        serde_json::Value::Object(o) => {
            for (k, x) in o {
                // A key whose name would make its path ambiguous is not checked.
                if k.contains(['.', '[', ']', '/', '~']) || k.is_empty() {
                    continue;
                }
                let p = if at.is_empty() { k.clone() } else { format!("{at}.{k}") };
                out.push(p.clone());
                key_paths(x, &p, skip, out, cap);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                key_paths(x, &format!("{at}[{i}]"), skip, out, cap);
            }
        }
        _ => {}
    }
}

/// Whether `path` exists in `v` (the same path syntax).
fn has_path(v: &serde_json::Value, path: &str) -> bool {
    let mut node = v;
    for part in path.split('.') {
        // `name[3][0]` is a key and its indices; any other `[` (a mutated `max_tpot_ms[[[[`) is part of the key.
        let (key, idx) = match part.find('[') {
            Some(i) if part[i..].split_inclusive(']').all(|g| g.len() > 2 && g.starts_with('[') && g.ends_with(']') && g[1..g.len() - 1].bytes().all(|b| b.is_ascii_digit())) => (&part[..i], &part[i..]),
            _ => (part, ""),
        };
        match node.get(key) {
            Some(n) => node = n,
            None => return false,
        }
        for ix in idx.split(|c| c == '[' || c == ']').filter(|s| !s.is_empty()) {
            match ix.parse::<usize>().ok().and_then(|i| node.get(i)) {
                Some(n) => node = n,
                None => return false,
            }
        }
    }
    true
}

/// Removes the key at `path` (for the "held its default" check).
fn without_path(v: &serde_json::Value, path: &str) -> serde_json::Value {
    let mut out = v.clone();
    let (parent, key) = match path.rfind('.') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => ("", path),
    };
    let mut node = &mut out;
    if !parent.is_empty() {
        for part in parent.split('.') {
            let (k, idx) = match part.find('[') {
                Some(i) => (&part[..i], &part[i..]),
                None => (part, ""),
            };
            let Some(n) = node.get_mut(k) else { return out };
            node = n;
            for ix in idx.split(|c| c == '[' || c == ']').filter(|s| !s.is_empty()) {
                let Some(n) = ix.parse::<usize>().ok().and_then(move |i| node.get_mut(i)) else { return out };
                node = n;
            }
        }
    }
    if let Some(o) = node.as_object_mut() {
        o.remove(key);
    }
    out
}

fn digest(s: &str) -> u64 {
    tunelab_scenario::knowledge::fnv1a64(s.as_bytes())
}

/// The unknown-key report of a scenario: parsing twice gives the same scenario and report; no
/// key is lost silently (each input key is in the scenario as read, reported, or held the
/// value the scenario has without it); a reported key is never one the scenario reads.
pub fn unknown_keys(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let Ok((s, rep)) = Scenario::from_json_reporting(t) else { return };
    let (s2, rep2) = Scenario::from_json_reporting(t).expect("parsed once, refused the second time");
    assert_eq!(s, s2);
    assert_eq!(rep, rep2, "the same input, a different report");
    let Ok(input) = serde_json::from_str::<serde_json::Value>(tunelab_scenario::spec::strict::strip_bom(t)) else { return };
    if tunelab_scenario::autotune::is_autotune_config(&input) {
        return;
    }
    let out = serde_json::to_value(&s).expect("a scenario serialises");
    let reported: Vec<&str> = rep.keys.iter().map(|k| k.path.as_str()).collect();
    // Free-form fields keep whatever they are given.
    let free = |p: &str| ["view", "model", "device", "strategy.options"].contains(&p) || p.starts_with("compare[") && p.ends_with(".options") || p.starts_with("space.") && (p.ends_with(".choices") || p.ends_with(".fixed"));
    let mut paths = Vec::new();
    key_paths(&input, "", &free, &mut paths, 64);
    for p in paths {
        if reported.iter().any(|r| p == *r || p.starts_with(&format!("{r}.")) || p.starts_with(&format!("{r}["))) {
            continue;
        }
        if has_path(&out, &p) {
            continue;
        }
        // A key serialisation leaves out when it holds its default: the scenario is the same
        // without it.
        if let Ok(s3) = Scenario::from_value(without_path(&input, &p)) {
            if s3 == s {
                continue;
            }
        }
        if rep.more > 0 {
            continue; // past the report's cap: counted, not listed
        }
        panic!("key `{p}` was neither read nor reported");
    }
    for r in &reported {
        assert!(!has_path(&out, r), "`{r}` was reported unknown but the scenario reads it");
    }
    let _ = digest(&format!("{:?}", rep.lines()));
}

/// A measurement file: the reader is bounded (input size is refused before parsing beyond the
/// limits), deterministic (same set and report twice), loses no key (every key of a row is
/// read or reported), and every value it accepts for comparison is finite and positive.
pub fn measurements(data: &[u8]) {
    use tunelab_scenario::fidelity::MeasurementSet;
    let Some(t) = text(data) else { return };
    let Ok((set, rep)) = MeasurementSet::from_json_reporting(t) else { return };
    let (set2, rep2) = MeasurementSet::from_json_reporting(t).expect("read once, refused the second time");
    assert_eq!(set, set2);
    assert_eq!(rep, rep2);
    assert!(set.rows.len() <= tunelab_scenario::fidelity::rows::MAX_ROWS);
    for r in &set.rows {
        for m in r.values.iter().chain(r.variants.iter().flat_map(|v| v.values.iter())) {
            if let (Some(x), Some(_)) = (m.value, &m.predict) {
                assert!(x.is_finite() && x > 0.0, "a compared value {x} was accepted");
            }
        }
        let n = r.values.len() + r.variants.iter().map(|v| v.values.len()).sum::<usize>();
        assert!(n <= tunelab_scenario::fidelity::rows::MAX_VALUES_PER_ROW);
    }
    let Ok(input) = serde_json::from_str::<serde_json::Value>(tunelab_scenario::spec::strict::strip_bom(t)) else { return };
    let out = serde_json::to_value(&set).expect("a set serialises");
    let reported: Vec<&str> = rep.keys.iter().map(|k| k.path.as_str()).collect();
    let free = |p: &str| {
        let last = p.rsplit('.').next().unwrap_or(p);
        ["model", "scenario", "space", "converted_from"].iter().any(|f| last == *f || last.starts_with(&format!("{f}[")))
    };
    let mut paths = Vec::new();
    key_paths(&input, "", &free, &mut paths, 256);
    for p in paths {
        let read = has_path(&out, &p) || reported.iter().any(|r| p == *r || p.starts_with(&format!("{r}.")) || p.starts_with(&format!("{r}[")));
        // An explicit null in an optional field serialises as absent.
        let null = matches!(input.pointer(&format!("/{}", p.replace('.', "/").replace('[', "/").replace(']', ""))), Some(serde_json::Value::Null));
        assert!(read || null || rep.more > 0, "key `{p}` was neither read nor reported");
    }
}

/// An msprof op summary (bytes as they come: any encoding): decoded or refused with a message;
/// read into rows or refused naming a limit; deterministic; ids unique; every duration finite
/// and positive; at most `MAX_DISTINCT_OPS` rows.
pub fn msprof(data: &[u8]) {
    use tunelab_scenario::calibrate::{encoding, msprof};
    let Ok(t) = encoding::decode(data, "fuzz.csv") else { return };
    let a = msprof::op_summary_to_set(&t, "910B2", "fuzz.csv");
    let b = msprof::op_summary_to_set(&t, "910B2", "fuzz.csv");
    assert_eq!(a, b, "the same CSV read twice differs");
    let Ok((set, skipped)) = a else { return };
    assert!(set.rows.len() <= msprof::MAX_DISTINCT_OPS);
    assert!(skipped.len() <= msprof::MAX_DISTINCT_OPS + 21, "{} skipped entries", skipped.len());
    let mut ids: Vec<&str> = set.rows.iter().map(|r| r.id.as_str()).collect();
    ids.sort();
    let n = ids.len();
    ids.dedup();
    assert_eq!(n, ids.len(), "two rows share an id");
    for r in &set.rows {
        let v = r.values[0].value.expect("a duration");
        assert!(v.is_finite() && v >= msprof::MIN_DURATION_US, "duration {v}");
    }
}

/// A benchmark file read by one reader (`format`): refused with a message naming where, or read
/// into runs whose counts, lengths and measured values are finite and in range; the same bytes
/// read twice give the same runs; every run replays on a deployment scenario or is refused with
/// a message (never a panic).
fn benchrun(data: &[u8], format: &str) {
    use tunelab_scenario::evidence::benchruns::{self, Format};
    let Some(t) = text(data) else { return };
    let f = Format::parse(format).expect("a format name");
    let a = benchruns::read_all(t, "fuzz", f);
    assert_eq!(a, benchruns::read_all(t, "fuzz", f), "the same file read twice differs");
    let Ok(runs) = a else {
        assert!(!a.unwrap_err().is_empty());
        return;
    };
    assert!(!runs.is_empty() && runs.len() <= 1000);
    for r in &runs {
        assert!(r.completed >= 1 && r.completed <= 100_000, "completed {}", r.completed);
        finite("mean input", r.mean_input);
        finite("mean output", r.mean_output);
        assert!(r.input_lens.len() <= 100_000);
        for m in &r.measured {
            assert!(m.1.is_finite() && m.1 >= 0.0, "{} = {}", m.0, m.1);
        }
        if let Some(rate) = r.request_rate {
            assert!(rate.is_finite() && rate > 0.0);
        }
    }
    let launch = bench_launch();
    for r in runs.into_iter().take(4) {
        if let Ok(r) = r.with_rate(Some(2.0), false) {
            let _ = r.row(&launch, "fuzz");
        }
    }
}

fn bench_launch() -> Scenario {
    let v: serde_json::Value = serde_json::from_str(include_str!("../../assets/scenarios/llama2-7b-910B2-deployment.json")).unwrap();
    Scenario::from_value(v).unwrap()
}

/// `vllm bench serve --save-result` JSON.
pub fn benchrun_vllm(data: &[u8]) {
    benchrun(data, "vllm")
}

/// SGLang bench_serving JSONL.
pub fn benchrun_sglang(data: &[u8]) {
    benchrun(data, "sglang")
}

/// AISBench's performance JSON and CSV, and its per-request `_details.jsonl`.
pub fn benchrun_aisbench(data: &[u8]) {
    benchrun(data, "aisbench")
}

/// MindIE Benchmark's result CSVs and per-request JSON.
pub fn benchrun_mindie(data: &[u8]) {
    benchrun(data, "mindie")
}

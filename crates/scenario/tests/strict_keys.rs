//! Issue 44, part 1: every JSON input is read as written, or the user is told. Each misspelled
//! key of the issue is reported with its path and the nearest known key; what the user wrote
//! otherwise is kept; the bundled files carry no unknown key; serde's flatten, untagged enums
//! and deny_unknown_fields behave as documented in `spec::strict`.

use serde::Deserialize;
use serde_json::json;
use tunelab_scenario::spec::strict::{self, Report};
use tunelab_scenario::Scenario;

fn unknown_of(json: &serde_json::Value) -> (Scenario, Vec<String>) {
    let (s, r) = Scenario::from_json_reporting(&json.to_string()).unwrap();
    (s, r.lines())
}

#[test]
fn the_issues_typos_are_reported_with_the_nearest_key() {
    let (s, lines) = unknown_of(&json!({"stage": "deployment", "deployment": {"serving": {"graph_mod": "full"}}}));
    assert_eq!(lines, vec!["`deployment.serving.graph_mod`: unknown key; did you mean `graph_mode`?"]);
    assert_eq!(s.deployment.serving, Default::default(), "the unknown key changes nothing else");
    let (_, lines) = unknown_of(&json!({"stage": "training", "training": {"framwork": "deepspeed"}}));
    assert_eq!(lines, vec!["`training.framwork`: unknown key; did you mean `framework`?"]);
    let (_, lines) = unknown_of(&json!({"stage": "diffusion", "model": "sd2.1-base", "diffusion": {"stpes": 20}}));
    assert!(lines.contains(&"`diffusion.stpes`: unknown key; did you mean `steps`?".to_string()), "{lines:?}");
    let (_, lines) = unknown_of(&json!({"deployment": {"cluster": {"disagregation": ["1P1D"]}}}));
    assert_eq!(lines, vec!["`deployment.cluster.disagregation`: unknown key; did you mean `disaggregation`?"]);
    // Deep in lists, with the index; and a key far from any known one gets no suggestion.
    let (_, lines) = unknown_of(&json!({"objectives": [{"metric": "tpot_ms"}, {"metric": "ttft_ms", "priorty": 2}], "zzz_unrelated": 1}));
    assert_eq!(lines, vec!["`objectives[1].priorty`: unknown key; did you mean `priority`?", "`zzz_unrelated`: unknown key; ignored"]);
    // Free-form fields (view, strategy options, inline models) are not typos.
    let (_, lines) = unknown_of(&json!({"view": {"anything": 1}, "strategy": {"name": "random", "options": {"x": 1}}}));
    assert!(lines.is_empty(), "{lines:?}");
}

#[test]
fn links_report_unknown_keys_and_open() {
    let frag = tunelab_scenario::url::encode_json(&json!({"name": "old link", "budget": 33, "deployment": {"serving": {"graph_mod": "full"}}}).to_string());
    let (s, r) = tunelab_scenario::url::decode_reporting(&frag).unwrap();
    assert_eq!((s.name.as_str(), s.budget), ("old link", 33));
    assert_eq!(r.keys.len(), 1);
    assert_eq!(r.keys[0].suggestion.as_deref(), Some("graph_mode"));
}

#[test]
fn retired_keys_say_what_replaced_them() {
    // The scenario format has retired no key yet (its table is empty); the mechanism is tested
    // with a table of its own.
    assert!(tunelab_scenario::validate::RETIRED_SCENARIO_KEYS.is_empty());
    let v = json!({"deployment": {"serving": {"old_rate": 3}}});
    let table: strict::Retired = &[("graph_mode", "old_rate", "retired in v2: use `request_rate`")];
    let (_, r): (Scenario, Report) = strict::from_value(&v, table).unwrap();
    assert_eq!(r.lines(), vec!["`deployment.serving.old_rate`: retired in v2: use `request_rate`"]);
}

#[test]
fn bundled_inputs_carry_no_unknown_key() {
    for (id, text) in tunelab_scenario::bundled::BUNDLED_SCENARIOS {
        let (_, r) = Scenario::from_json_reporting(text).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert!(r.is_empty(), "{id}: {:?}", r.lines());
    }
    for t in tunelab_scenario::templates::bundled_templates() {
        let r = tunelab_scenario::spec::strict_inputs::template_keys(tunelab_scenario::templates::bundled_template_source(&t.name).unwrap()).unwrap();
        assert!(r.is_empty(), "template {}: {:?}", t.name, r.lines());
    }
    for name in tunelab_sim::device::bundled_names() {
        let v: serde_json::Value = serde_json::from_str(tunelab_sim::device::bundled_profile_text(name).unwrap()).unwrap();
        let r = tunelab_scenario::spec::strict_inputs::profile_keys(&v);
        assert!(r.is_empty(), "profile {name}: {:?}", r.lines());
    }
    for f in ["ascend-910b.json", "ascend-set2.json"] {
        let text = std::fs::read_to_string(format!("{}/../../assets/measurements/{f}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let (_, r) = tunelab_scenario::fidelity::MeasurementSet::from_json_reporting(&text).unwrap();
        assert!(r.is_empty(), "{f}: {:?}", r.lines());
    }
}

#[test]
fn an_inline_chip_profile_and_a_template_are_checked_too() {
    let mut p: serde_json::Value = serde_json::from_str(tunelab_sim::device::bundled_profile_text("910B2").unwrap()).unwrap();
    let v = p["fields"]["hccs_efficiency"].clone();
    p["fields"]["hccs_efficency"] = v;
    let (_, lines) = unknown_of(&json!({"device": p}));
    assert!(lines.contains(&"`device.fields.hccs_efficency`: unknown key; did you mean `hccs_efficiency`?".to_string()), "{lines:?}");
    let t = r#"{"name": "t", "title": "t", "model_families": ["*"], "devices": ["*"], "scenario_kind": "*", "stage": "deployment",
        "strategy": "auto", "budget": 8, "objectives": [{"metric": "tpot_ms"}], "options": {"lanch": "graph", "serving": {"enigne": "mindie"}}}"#;
    let r = tunelab_scenario::spec::strict_inputs::template_keys(t).unwrap();
    assert_eq!(r.lines(), vec!["`options.lanch`: unknown key; did you mean `launch`?", "`options.serving.enigne`: unknown key; did you mean `engine`?"]);
}

#[test]
fn knowledge_bases_report_unknown_keys() {
    let (loaded, r) = tunelab_scenario::knowledge::KnowledgeBase::load_reporting(r#"{"format": "tunelab-kb/1", "cases": [], "casess": []}"#);
    assert!(loaded.set_aside.is_none() || loaded.kb.cases.is_empty());
    if loaded.set_aside.is_none() {
        assert_eq!(r.keys[0].path, "casess");
        assert_eq!(r.keys[0].suggestion.as_deref(), Some("cases"));
    }
}

#[test]
fn a_byte_order_mark_a_huge_string_and_numbers() {
    let s = Scenario::from_json("\u{feff}{\"seed\": 5}").unwrap();
    assert_eq!(s.seed, 5);
    let big = "x".repeat(300_000);
    let e = Scenario::from_json(&json!({"budget": big}).to_string()).unwrap_err();
    assert!(e.len() < 1_000, "{} characters", e.len());
    assert!(e.contains("budget"), "{e}");
}

// serde's special forms, as `spec::strict` documents them.

#[derive(Deserialize, Default)]
#[serde(default)]
struct Inner {
    alpha: u32,
}

#[derive(Deserialize)]
struct WithFlatten {
    #[serde(default)]
    name: String,
    #[serde(flatten)]
    inner: Inner,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(untagged)]
enum Either {
    Num(f64),
    Obj { beta: u32 },
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Denying {
    gamma: u32,
}

#[allow(dead_code)]
#[derive(Deserialize)]
struct Holder {
    e: Either,
    #[serde(default)]
    d: Option<Denying>,
}

#[test]
fn flatten_untagged_and_deny_unknown_fields() {
    // Flatten: the flattened keys are read, never reported; an unknown key among them is not
    // seen (serde buffers it): no false report.
    let (w, r): (WithFlatten, Report) = strict::from_value(&json!({"name": "n", "alpha": 3, "omega": 1}), &[]).unwrap();
    assert_eq!((w.name.as_str(), w.inner.alpha), ("n", 3));
    assert!(r.keys.iter().all(|k| k.path != "alpha" && k.path != "name"), "{:?}", r.lines());
    // Untagged: the variant is chosen as before; keys inside it are not reported.
    let (h, r): (Holder, Report) = strict::from_value(&json!({"e": {"beta": 2, "zeta": 1}, "f": 0}), &[]).unwrap();
    assert!(matches!(h.e, Either::Obj { beta: 2 }));
    assert_eq!(r.lines(), vec!["`f`: unknown key; did you mean `e`?"]);
    // deny_unknown_fields still refuses, through the wrapper, naming the key.
    let e = strict::from_value::<Holder>(&json!({"e": 1, "d": {"gamma": 1, "gamm": 2}}), &[]).err().unwrap();
    assert!(e.to_string().contains("gamm"), "{e}");
    // The landscape source (deny_unknown_fields in the scenario) is refused as before.
    let e = Scenario::from_json(&json!({"stage": "landscape", "landscape": {"toy": {"function": "branin", "resolutoin": 8}}}).to_string()).unwrap_err();
    assert!(e.contains("resolutoin"), "{e}");
}

#[test]
fn the_report_is_bounded() {
    let mut o = serde_json::Map::new();
    for i in 0..1000 {
        o.insert(format!("k{i}"), json!(i));
    }
    let (_, r) = Scenario::from_json_reporting(&serde_json::Value::Object(o).to_string()).unwrap();
    assert_eq!(r.keys.len(), strict::MAX_REPORTED);
    assert_eq!(r.more, 1000 - strict::MAX_REPORTED);
    assert!(r.lines().last().unwrap().contains("800 more"));
}

#[test]
fn a_serving_trace_of_100000_arrivals_is_read_and_the_note_counts_it() {
    // Issue 44: about 8,500 arrivals was the real cap (the options' size bound, naming
    // `deployment`), and the note said `requests` while the trace's arrivals were simulated.
    let trace: Vec<f64> = (0..100_000).map(|i| i as f64 * 0.001).collect();
    let v = json!({"stage": "deployment", "budget": 1, "deployment": {"serving": {"arrival": "trace", "trace": trace}}});
    let s = Scenario::from_json(&v.to_string()).unwrap();
    assert_eq!(s.deployment.serving.trace.len(), 100_000);
    let over: Vec<f64> = (0..100_001).map(|i| i as f64).collect();
    let e = Scenario::from_json(&json!({"deployment": {"serving": {"arrival": "trace", "trace": over}}}).to_string()).unwrap_err();
    assert!(e.contains("deployment.serving.trace") && e.contains("100000"), "{e}");
    let small: Vec<f64> = (0..1000).map(|i| i as f64 * 0.01).collect();
    let s = Scenario::from_json(&json!({"stage": "deployment", "budget": 1, "deployment": {"batches": [8], "precisions": ["fp16"], "tensor_parallel": [1], "serving": {"arrival": "trace", "trace": small, "requests": 10}}}).to_string()).unwrap();
    let setup = tunelab_scenario::setup(&s).unwrap();
    let note = setup.notes.iter().find(|n| n.contains("continuous-batching")).expect("the scheduler note");
    assert!(note.contains("1000 requests, 1000 traced arrivals"), "{note}");
}

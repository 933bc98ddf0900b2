//! MindIE's offline encoder benchmark (issue 43): the BGE / bge-reranker rows time one model call
//! per batch from MindIE-LLM's embedding test.py, not a step of MindIE's text generator, so they
//! carry the call's host work (`offline_call_host_us`) and none of the text generator's
//! per-step or per-sequence costs, and the two fits no longer pull on each other.

use tunelab_scenario::fidelity::{evaluate, MeasurementSet};
use tunelab_scenario::stages::scheduler::with_fitted_fields;
use tunelab_scenario::Scenario;

const SET1: &str = include_str!("../../../assets/measurements/ascend-910b.json");
const SET2: &str = include_str!("../../../assets/measurements/ascend-set2.json");

fn rows(text: &str, prefix: &str) -> MeasurementSet {
    let set = MeasurementSet::from_json(text).unwrap();
    let rows: Vec<_> = set.rows.iter().filter(|r| r.id.starts_with(prefix)).cloned().collect();
    assert!(!rows.is_empty(), "no rows {prefix}");
    MeasurementSet { rows, ..set }
}

fn predicted(set: &MeasurementSet, fields: &[(String, String, f64)]) -> Vec<(String, f64)> {
    let r = with_fitted_fields(fields, || evaluate(set, &Default::default(), None));
    r.rows.iter().map(|c| (format!("{}/{}", c.case, c.metric), c.predicted)).collect()
}

fn field(name: &str, v: f64) -> (String, String, f64) {
    ("mindie".into(), name.into(), v)
}

/// The encoder rows move with the benchmark call's cost and not with the text generator's; the
/// Qwen1.5-7B serving rows the other way round.
#[test]
fn the_offline_encoder_rows_and_the_serving_rows_price_different_host_work() {
    let bge = rows(SET2, "inf-mindie-bge-large-zh-800ia2");
    let shipped = predicted(&bge, &[]);
    assert_eq!(shipped.len(), 6, "{shipped:?}");
    let text_generator = predicted(&bge, &[field("step_host_us", 10000.0), field("step_host_us_per_seq", 400.0)]);
    assert_eq!(shipped, text_generator, "the BGE benchmark runs no text generator");
    let slow_call = predicted(&bge, &[field("offline_call_host_us", 15000.0)]);
    for ((name, a), (_, b)) in shipped.iter().zip(&slow_call) {
        assert!(b < a, "{name}: {b} sequences/s with a 15 ms call is not below {a}");
    }
    // The short shape feels the call most: 8 x 100 tokens is a few ms of device time.
    let drop = |k: &str| {
        let i = shipped.iter().position(|(n, _)| n.contains(k)).unwrap();
        slow_call[i].1 / shipped[i].1
    };
    assert!(drop("accel_fp16_bs8_seq100") < drop("accel_fp16_bs128_seq512"));

    let qwen = rows(SET1, "srv-qwen1.5-7b-mindie");
    let shipped = predicted(&qwen, &[]);
    assert_eq!(shipped, predicted(&qwen, &[field("offline_call_host_us", 15000.0)]), "the serving rows run no offline benchmark");
    assert_ne!(shipped, predicted(&qwen, &[field("step_host_us", 10000.0)]), "the serving rows run the text generator");
}

/// What a user sees: the stage's note and the step breakdown name the benchmark's call, and the
/// static step carries no per-sequence text-generator cost (the bundled BGE scenario).
#[test]
fn the_bge_scenario_names_the_offline_call_in_its_notes_and_breakdown() {
    let s = tunelab_scenario::bundled_scenario("bge-large-910B4-embedding").unwrap();
    let mut st = tunelab_scenario::stages::setup(&s).unwrap();
    let note = st.notes.iter().find(|n| n.contains("offline encoder benchmark")).unwrap_or_else(|| panic!("no offline note in {:?}", st.notes));
    assert!(note.contains("offline_call_host_us") && note.contains("no text generator"), "{note}");
    let names = st.space.names().to_vec();
    let values = match st.objective.evaluate(&st.baseline) {
        tunelab_search::Outcome::Ok(v) => v,
        o => panic!("{o:?}"),
    };
    let metrics: Vec<(String, f64, String)> = st.metrics.iter().zip(&values).map(|(m, v)| (m.name.clone(), *v, m.unit.clone())).collect();
    let b = tunelab_scenario::explore::breakdown(&s, &names, &st.baseline, &metrics).unwrap();
    assert!(b.label.contains("the offline benchmark's model call") && b.label.contains("sequences x 0 us"), "{}", b.label);
    assert!(!b.label.contains("scheduler, input preparation, sampler"), "{}", b.label);
}

/// The diagnosis of a short batch, which the call's host work holds up, names that work as the
/// benchmark's call, not as scheduling and sampling.
#[test]
fn the_diagnosis_of_a_host_bound_encoder_batch_names_the_offline_call() {
    use tunelab_scenario::diagnosis::{diagnose, Weights};
    let s = tunelab_scenario::bundled_scenario("bge-large-910B4-embedding").unwrap();
    let mut v: serde_json::Value = serde_json::to_value(&s).unwrap();
    v["workload"]["input_len"] = 100.into();
    v["deployment"]["batches"] = serde_json::json!([8]);
    v["workload"]["batch"] = 8.into();
    v["deployment"]["precisions"] = serde_json::json!(["fp16"]);
    let s = Scenario::from_json(&v.to_string()).unwrap();
    let d = diagnose(&s, None, Weights::default()).unwrap();
    let host = d.cause_chain.iter().find(|c| c.contains("host-bound")).unwrap_or_else(|| panic!("not host-bound: {:#?}", d.cause_chain));
    assert!(host.contains("the offline benchmark's model call"), "{host}");
    assert!(!host.contains("scheduling and sampling each step"), "{host}");
}

/// A MindIE serving scenario (continuous batching) keeps the text generator's costs and says
/// nothing of an offline benchmark; so does an encoder under an engine without one.
#[test]
fn only_a_static_encoder_under_mindie_is_the_offline_benchmark() {
    let base = tunelab_scenario::bundled_scenario("bge-large-910B4-embedding").unwrap();
    let mut v: serde_json::Value = serde_json::to_value(&base).unwrap();
    v["deployment"]["serving"]["engine"] = "vllm-ascend".into();
    let other = Scenario::from_json(&v.to_string()).unwrap();
    let st = tunelab_scenario::stages::setup(&other).unwrap();
    assert!(!st.notes.iter().any(|n| n.contains("offline encoder benchmark")), "{:?}", st.notes);
    let serving = r#"{"stage": "deployment", "model": "qwen1.5-7b", "device": "910B4",
        "workload": {"batch": 16, "input_len": 128, "output_len": 64},
        "deployment": {"tensor_parallel": [1], "precisions": ["fp16"], "batches": [16], "launch_modes": ["graph"],
                       "serving": {"mode": "scheduler", "engine": "mindie", "requests": 16}},
        "objectives": [{"metric": "tokens_per_s", "priority": 1}], "strategy": {"name": "auto"}, "budget": 1, "seed": 1}"#;
    let st = tunelab_scenario::stages::setup(&Scenario::from_json(serving).unwrap()).unwrap();
    assert!(!st.notes.iter().any(|n| n.contains("offline encoder benchmark")), "{:?}", st.notes);
}

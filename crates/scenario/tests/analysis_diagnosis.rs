//! Diagnosis of Llama-2-7B decode on 910B2: names HBM and the KV cache; every suggestion's
//! predicted effect equals a re-simulation of the changed point; guards report reasons.

use tunelab_scenario::diagnosis::{diagnose, Weights};
use tunelab_scenario::guards::{delta_check, protect_layers, DEFAULT_PROTECTED};
use tunelab_scenario::serving::{cost_phase_with, tile_mode, Memo, Phase, ServingPoint, TileMode};
use tunelab_scenario::Scenario;
use tunelab_sim::Precision;

fn scenario() -> Scenario {
    let mut s = Scenario::default(); // llama-2-7b on 910B2
    s.workload.batch = 16;
    s.workload.input_len = 2048;
    s.workload.output_len = 512;
    s
}

#[test]
fn decode_is_hbm_bound_on_kv_cache_or_weights() {
    let s = scenario();
    let d = diagnose(&s, &[], None, Phase::Decode, Weights::default()).unwrap();
    let first = &d.cause_chain[0];
    println!("{first}\n{:#?}", &d.cause_chain[1..]);
    assert!(first.starts_with("decode is HBM-bound"), "{first}");
    assert!(first.contains("KV-cache") || first.contains("weight reads"), "{first}");
    assert!(d.bottlenecks.get("memory").copied().unwrap_or(0.0) > 0.5);
    let shares: f64 = d.hot_spots.iter().map(|h| h.share).sum();
    assert!((shares - 1.0).abs() < 1e-9);
    assert!(d.hot_spots.windows(2).all(|w| w[0].share >= w[1].share));
}

#[test]
fn long_context_decode_names_the_kv_cache() {
    let mut s = scenario();
    s.workload.input_len = 4096;
    let d = diagnose(&s, &[], None, Phase::Decode, Weights::default()).unwrap();
    assert!(d.cause_chain[0].contains("KV-cache reads take"), "{}", d.cause_chain[0]);
}

#[test]
fn predicted_effects_equal_a_resimulation() {
    let s = scenario();
    let d = diagnose(&s, &[], None, Phase::Decode, Weights::default()).unwrap();
    let (model, device, _) = tunelab_scenario::context::resolve(&s).unwrap();
    assert!(!d.suggestions.is_empty());
    for sg in &d.suggestions {
        let mode = tile_mode(&s);
        assert_eq!(d.tiling, if mode == TileMode::Best { "tuned" } else { "default" });
        let re = cost_phase_with(&model, &device, Phase::Decode, &sg.point, 2048, 512, &mut Memo::default(), mode);
        match (re, sg.predicted_step_ms) {
            (Ok(pc), Some(ms)) => assert_eq!((pc.total_us / 1e3).to_bits(), ms.to_bits(), "{}", sg.title),
            (Err(e), None) => assert_eq!(Some(e), sg.infeasible.clone()),
            (r, p) => panic!("{}: resimulation {r:?} vs prediction {p:?}", sg.title),
        }
        let w = d.weights;
        if sg.infeasible.is_none() {
            let want = w.effectiveness * sg.effectiveness + w.cost * (1.0 - sg.cost) + w.risk * (1.0 - sg.risk);
            assert!((sg.score - want).abs() < 1e-12);
        }
    }
    // Ranked: feasible first, by score.
    let feasible: Vec<_> = d.suggestions.iter().filter(|x| x.infeasible.is_none()).collect();
    assert!(feasible.windows(2).all(|p| p[0].score >= p[1].score));
    assert!(d.suggestions.iter().any(|x| x.title.contains("W8A16")));
}

#[test]
fn guards_protect_layers_and_check_deltas() {
    let mut s = scenario();
    let p = ServingPoint { batch: 8, precision: Precision::W8a16, ..ServingPoint::default() };
    let pats: Vec<String> = DEFAULT_PROTECTED.iter().map(|x| x.to_string()).collect();
    let r = protect_layers(&s, &p, &pats).unwrap();
    assert!(r.protected_ops.iter().any(|n| n.contains("lm_head")));
    assert!(r.step_ms_protected >= r.step_ms_all_quantised);
    s.constraints.max_rel_error = Some(1e-9);
    let before = ServingPoint { batch: 8, ..ServingPoint::default() };
    let d = delta_check(&s, &before, &p).unwrap();
    assert!(!d.pass && d.note.contains("no tensors"));
    s.constraints.max_rel_error = None;
    assert!(delta_check(&s, &before, &p).unwrap().pass);
}

#[test]
fn training_diagnosis_and_search_signals() {
    use tunelab_scenario::train_diagnosis::{diagnose_training, search_signals};
    let mut s = Scenario::default();
    s.stage = tunelab_scenario::Stage::Training;
    s.workload.global_batch = 64;
    let st = tunelab_scenario::training::setup(&s).unwrap();
    let names = st.space.names().to_vec();
    let d = diagnose_training(&s, &names, &st.baseline, Weights::default()).unwrap();
    println!("{:#?}", d.cause_chain);
    assert!(d.cause_chain[0].starts_with("the training step is"));
    assert!(d.mfu > 0.0 && d.mfu < 1.0);
    assert!(d.suggestions.iter().any(|x| x.title.contains("ZeRO") || x.title.contains("recompute")));
    // Signals over a short real search.
    s.budget = 12;
    let mut run = tunelab_scenario::Run::new(&s).unwrap();
    run.run_to_end();
    let sig = search_signals(run.trials(0), run.metrics());
    assert_eq!(sig.evaluations, 12);
    println!("{}", sig.summary);
    assert!(sig.summary.contains("12 evaluations"));
    if sig.infeasible_share > 0.0 {
        assert!(!sig.top_reasons.is_empty());
    }
}

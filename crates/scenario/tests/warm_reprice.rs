//! Issue 13 #3: a warm start transfers CONFIGURATIONS and re-prices them on the new scenario; a
//! value measured on another scenario (another model) never becomes this run's best.

use tunelab_scenario::cases::{case_from_run, fingerprint_of};
use tunelab_scenario::knowledge::{KnowledgeBase, WARM_LIMIT};
use tunelab_scenario::{Run, Scenario};
use tunelab_search::Outcome;

fn deployment(model: &str, seed: u64, budget: usize) -> Scenario {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/scenarios/llama2-7b-910B2-deployment.json")).unwrap();
    let mut s = Scenario::from_json(&text).unwrap();
    s.model = tunelab_scenario::scenario::ModelRef::Id(model.into());
    s.seed = seed;
    s.budget = budget;
    s
}

#[test]
fn warm_start_from_another_model_reprices_every_transferred_configuration() {
    // A Qwen2.5-7B case in the knowledge base ...
    let mut qwen = Run::new(&deployment("qwen2.5-7b", 1, 60)).unwrap();
    qwen.run_to_end();
    let mut kb = KnowledgeBase::new();
    kb.add(case_from_run(&qwen, "qwen").unwrap());

    // ... is similar enough (same stage and chip) to warm-start Llama-2-7B.
    let llama_s = deployment("llama-2-7b", 2, 1);
    let mut llama = Run::new(&llama_s).unwrap();
    let fp = fingerprint_of(&llama_s).unwrap();
    let earlier = kb.warm_trials(&fp, llama.space(), llama.metrics(), WARM_LIMIT);
    assert!(!earlier.is_empty(), "the Qwen case is offered for transfer");
    assert!(llama.warm_start(&earlier).unwrap() > 0);
    llama.run_to_end();

    // Every warm trial carries Llama's own numbers: re-pricing it gives the same bits.
    let warm: Vec<_> = llama.lanes()[0].study.trials().iter().filter(|t| t.warm).cloned().collect();
    assert!(warm.len() > 1);
    let mut differs = 0;
    for t in &warm {
        match llama.evaluate(&t.config) {
            Outcome::Ok(v) => {
                assert_eq!(t.values.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), "{:?}", t.config);
                if let Some(q) = earlier.iter().find(|e| e.config == t.config && e.is_ok()) {
                    differs += (q.values[0] != v[0]) as usize;
                }
            }
            _ => assert!(!t.is_ok(), "{:?} is infeasible for Llama but was kept as ok", t.config),
        }
    }
    assert!(differs > 0, "Qwen's values differ from Llama's for the same configurations (else this test shows nothing)");

    // The best is Llama's value of the best configuration, and the report lists the transfer.
    let (_, best) = llama.overall_best().unwrap();
    let best_cfg = best.config.clone();
    let best_v = best.values[0];
    match llama.evaluate(&best_cfg) {
        Outcome::Ok(v) => assert_eq!(v[0].to_bits(), best_v.to_bits()),
        o => panic!("best is not feasible when re-priced: {o:?}"),
    }
    let report = llama.report();
    assert_eq!(report.transferred.len(), llama.transferred().len());
    assert!(!report.transferred.is_empty());
    assert!(report.to_text().contains("transferred from similar cases"));
    assert!(llama.transferred().len() <= WARM_LIMIT);
}

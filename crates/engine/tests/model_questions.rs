//! The questions the page asks its engine worker about the model (its first-load module reads
//! no model): they answer with the functions the CLI and the report use, so the page shows the
//! same figures.

use tunelab_engine::questions::{answer, model_facts, Answer, Question};
use tunelab_scenario::{bundled_scenario, cases, report, Report, Run};

#[test]
fn the_model_question_reads_a_bundled_model_as_the_loader_does() {
    let text = tunelab_sim::bundled_models().into_iter().find(|(n, _)| *n == "mixtral-8x7b").unwrap().1.to_string();
    let m = tunelab_sim::load_model(&text).unwrap();
    let Answer::Model { facts } = answer(Question::Model { text: text.clone() }).unwrap() else { panic!("not a model answer") };
    assert_eq!(facts, model_facts(&text).unwrap());
    assert_eq!(facts.warnings, m.warnings);
    let (line, stack, approx) = facts.identity.expect("a language model has a banner");
    assert_eq!((line, stack, approx), (m.model.identity_line(), m.model.stack_summary(), m.model.approximations()));
    // A model that does not load says why (the page shows it as "The model was not loaded: ...").
    let e = answer(Question::Model { text: r#"{"model_type": "llama"}"#.into() }).unwrap_err();
    assert!(!e.is_empty());
    assert!(answer(Question::Model { text: "not json".into() }).is_err());
    // The page sends a bundled model by its id (its module links no model text): the same facts.
    assert_eq!(model_facts("mixtral-8x7b").unwrap(), model_facts(&text).unwrap());
    assert!(model_facts("no-such-model").unwrap_err().contains("no-such-model"));
}

#[test]
fn the_report_is_its_page_part_and_the_workers_model_parts_together() {
    for id in ["llama2-7b-910B2-deployment", "mixtral-8x7b-910B2-deployment", "qwen2.5-7b-910B2-runtime", "sd2.1-910B2-diffusion", "llava-1.5-7b-910B2-deployment"] {
        let mut s = bundled_scenario(id).unwrap();
        s.budget = 6;
        let mut run = Run::new(&s).unwrap();
        run.run_to_end();
        let whole = Report::from_run(&run);
        let page = Report::from_run_without_model(&run);
        assert!(page.model_identity.is_empty() && page.deployment.is_none(), "{id}");
        let Answer::ReportModel { parts } = answer(Question::ReportModel { scenario: Box::new(s.clone()), best: page.best_config.clone(), has_best: page.best_strategy.is_some() }).unwrap() else { panic!() };
        assert_eq!(parts, report::model_parts(&s, &page.best_config, page.best_strategy.is_some()));
        // Through the worker's message text, as the page receives it.
        let text = serde_json::to_string(&parts).unwrap();
        let parts: report::ModelParts = serde_json::from_str(&text).unwrap();
        assert_eq!(page.with_model_parts(parts), whole, "{id}");
        if id.ends_with("deployment") {
            assert!(!whole.model_identity.is_empty() && whole.deployment.is_some(), "{id}");
        }
    }
}

#[test]
fn the_fingerprint_question_is_fingerprint_of() {
    for id in ["llama2-7b-910B2-deployment", "llama2-7b-8x910B2-training"] {
        let s = bundled_scenario(id).unwrap();
        let Answer::Fingerprint { fingerprint } = answer(Question::Fingerprint { scenario: Box::new(s.clone()) }).unwrap() else { panic!() };
        assert_eq!(fingerprint, cases::fingerprint_of(&s).unwrap());
    }
}

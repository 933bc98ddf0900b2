//! The over-optimisation guards and the report on the diffusion stage: every knob that changes
//! the output is named with the guard that covers it, the protected layers are priced by the
//! stage (the figures `tunelab eval` prints), and the report carries the pipeline timeline.

use tunelab_scenario::guards::{check_all, DEFAULT_PROTECTED};
use tunelab_scenario::{bundled_scenario, Run};
use tunelab_search::{Config, Outcome, Value};

fn with(run: &Run, sets: &[(&str, Value)]) -> Config {
    let mut c = run.baseline_config().clone();
    for (n, v) in sets {
        let i = run.space().index_of(n).unwrap_or_else(|| panic!("no parameter {n}"));
        c.0[i] = v.clone();
    }
    c
}

fn s(x: &str) -> Value {
    Value::Str(x.into())
}

fn defaults() -> Vec<String> {
    DEFAULT_PROTECTED.iter().map(|x| x.to_string()).collect()
}

#[test]
fn each_output_changing_knob_is_named_with_its_guard() {
    let sc = bundled_scenario("sd2.1-910B2-diffusion").unwrap();
    let run = Run::new(&sc).unwrap();
    let names = run.space().names().to_vec();
    let c = with(&run, &[("precision", s("w8a8")), ("tome", Value::Float(0.5)), ("step_cache", Value::Float(2.0))]);
    let r = check_all(&sc, &names, &c, None, &defaults()).unwrap();
    let guard_of = |knob: &str| r.output_knobs.iter().find(|o| o.knob == knob).map(|o| o.guard.clone());
    assert_eq!(guard_of("precision").as_deref(), Some("protected layers + delta check"));
    assert_eq!(guard_of("tome").as_deref(), Some("delta check"));
    assert_eq!(guard_of("step_cache").as_deref(), Some("delta check"));
    assert_eq!(r.output_knobs.len(), 3);
    let d = r.delta.expect("the delta check runs on the diffusion stage");
    assert!(d.rel_error_after > d.rel_error_before, "W8A8 raises the expected error");
    assert!(d.note.contains("token merging") && d.note.contains("step caching"), "knobs the data-type estimate cannot see are named: {}", d.note);
    // The exact pipeline changes nothing.
    let exact = check_all(&sc, &names, run.baseline_config(), None, &defaults()).unwrap();
    assert!(exact.output_knobs.is_empty());
}

#[test]
fn protected_layers_are_priced_by_the_stage() {
    let sc = bundled_scenario("sd2.1-910B2-diffusion").unwrap();
    let mut run = Run::new(&sc).unwrap();
    let names = run.space().names().to_vec();
    let c = with(&run, &[("precision", s("w8a8")), ("launch", s("graph"))]);
    let r = check_all(&sc, &names, &c, None, &defaults()).unwrap();
    let p = r.protected.expect("protected layers on the diffusion stage");
    assert_eq!(p.step, "denoising step");
    assert!(p.patterns.iter().any(|x| x == "conv_in"), "the stage's own protected layers, not the language model's: {:?}", p.patterns);
    assert!(p.protected_ops.iter().any(|n| n.starts_with("conv_in")) && p.protected_ops.iter().any(|n| n.starts_with("time_embedding")), "{:?}", p.protected_ops);
    // The protected figure is the stage's own latency for this configuration (one evaluation path).
    let i = run.metrics().iter().position(|m| m.name == "latency_ms").unwrap();
    let Outcome::Ok(v) = run.evaluate(&c) else { panic!() };
    assert_eq!(p.latency_ms_protected, Some(v[i]));
    assert_ne!(p.latency_ms_all_quantised, p.latency_ms_protected, "keeping layers in 16-bit changes the time");
    // Named patterns replace the stage's list.
    let own = check_all(&sc, &names, &c, None, &["time_embedding".to_string()]).unwrap().protected.unwrap();
    assert!(own.protected_ops.iter().all(|n| n.starts_with("time_embedding")) && !own.protected_ops.is_empty());
}

#[test]
fn the_report_carries_the_pipeline_timeline() {
    let mut sc = bundled_scenario("sd2.1-910B2-diffusion").unwrap();
    sc.budget = 20;
    sc.compare.clear();
    let mut run = Run::new(&sc).unwrap();
    run.run_to_end();
    let r = run.report();
    let p = r.pipeline.as_ref().expect("a diffusion report has its pipeline");
    let kinds = |t: &tunelab_scenario::stages::diffusion::timeline::Timeline| t.segments.iter().map(|s| s.kind.clone()).collect::<Vec<_>>();
    for k in ["text_encoder", "denoise", "vae"] {
        assert!(kinds(&p.baseline).iter().any(|x| x == k), "baseline has {k}");
    }
    let best = p.best.as_ref().expect("a best configuration");
    assert_eq!(Some(best.total_ms), r.best, "the best timeline is the best latency");
    let json = r.to_json();
    assert!(json.contains("\"pipeline\"") && json.contains("\"step_ms\""));
    let text = r.to_text();
    assert!(text.contains("pipeline timeline, baseline") && text.contains("VAE decoder"), "{text}");
    let md = r.to_markdown();
    assert!(md.contains("### Pipeline, best") && md.contains("| one denoising step | time |") && md.contains("| VAE decoder |"), "{md}");
}

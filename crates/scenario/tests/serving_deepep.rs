//! SGLang's DeepEP exchange in the serving step (issue 42, item 4): `deployment.serving.
//! deepep_mode` (SGLang `--moe-a2a-backend deepep --deepep-mode`) makes every expert-parallel
//! MoE layer dispatch and combine with DeepEP-Ascend's kernels, priced as `Op::MoeComm` on the
//! link the EP group crosses: `auto` runs the low-latency kernels for a decode batch and the
//! normal ones for a prefill (SGLang's DeepEPMode.resolve), `normal` / `low_latency` one form
//! for every step. The option is validated by name and written into the SGLang launch.

mod common;
use std::collections::BTreeMap;
use tunelab_scenario::bundled::bundled_scenario;
use tunelab_scenario::serving::Phase;
use tunelab_scenario::spec::scenario::ModelRef;
use tunelab_scenario::stages::deployment::StepOperators;
use tunelab_scenario::stages::scale::{flags, sglang};
use tunelab_scenario::stages::setup;
use tunelab_scenario::Scenario;
use tunelab_search::Value;
use tunelab_sim::{MoeCommForm, Op};

fn step(s: &Scenario, set: &[(&str, Value)], phase: Phase) -> StepOperators {
    common::step_with(s, set, phase)
}

/// (name, form or None for a plain collective, us over the step's layers) of the EP exchanges.
fn exchanges(st: &StepOperators) -> Vec<(String, Option<MoeCommForm>, f64)> {
    st.ops.iter().filter(|o| o.name.contains(".ep.")).map(|o| (o.name.clone(), if let Op::MoeComm { form, .. } = o.op { Some(form) } else { None }, o.time_us)).collect()
}

fn wide_ep() -> Vec<(&'static str, Value)> {
    vec![("tp", Value::Int(1)), ("dp", Value::Int(32)), ("expert_parallel", Value::Str("on".into())), ("batch", Value::Int(16))]
}

/// DeepSeek-V3 on 2 A3 nodes served by SGLang, attention DP 32, experts over all 32 dies.
fn sglang_dsv3(mode: Option<&str>) -> Scenario {
    let mut s = bundled_scenario("deepseek-v3-2xA3-deployment").unwrap();
    s.deployment.serving.requests = 64;
    s.deployment.serving.engine = "sglang".into();
    s.deployment.serving.graph_mode = "auto".into();
    s.deployment.serving.deepep_mode = mode.map(String::from);
    s
}

#[test]
fn auto_runs_low_latency_for_decode_and_normal_for_prefill() {
    let s = sglang_dsv3(Some("auto"));
    let dec = exchanges(&step(&s, &wide_ep(), Phase::Decode));
    let pre = exchanges(&step(&s, &wide_ep(), Phase::Prefill));
    eprintln!("decode: {dec:?}\nprefill: {pre:?}");
    assert!(!dec.is_empty() && dec.iter().all(|x| x.1 == Some(MoeCommForm::DeepepLowLatency)), "{dec:?}");
    assert!(!pre.is_empty() && pre.iter().all(|x| x.1 == Some(MoeCommForm::DeepepNormal)), "{pre:?}");
    // Pinned modes: one form for every step.
    let normal = exchanges(&step(&sglang_dsv3(Some("normal")), &wide_ep(), Phase::Decode));
    assert!(normal.iter().all(|x| x.1 == Some(MoeCommForm::DeepepNormal)), "{normal:?}");
    // Without it SGLang keeps the plain all-to-all collectives, which issue a task to each of
    // the 31 peers in turn; DeepEP's low-latency kernels reach them all at once.
    let plain = exchanges(&step(&sglang_dsv3(None), &wide_ep(), Phase::Decode));
    assert!(!plain.is_empty() && plain.iter().all(|x| x.1.is_none()), "{plain:?}");
    let us = |v: &[(String, Option<MoeCommForm>, f64)]| v.iter().map(|x| x.2).sum::<f64>();
    eprintln!("decode step exchange: DeepEP low-latency {:.1} us, plain all-to-all {:.1} us", us(&dec), us(&plain));
    assert!(us(&dec) < us(&plain), "DeepEP {} us vs all-to-all {} us", us(&dec), us(&plain));
}

#[test]
fn the_option_is_checked_by_name() {
    let mut vllm = sglang_dsv3(Some("auto"));
    vllm.deployment.serving.engine = "vllm-ascend".into();
    let e = setup(&vllm).err().expect("DeepEP on vLLM-Ascend is refused");
    assert!(e.contains("deployment.serving.deepep_mode") && e.contains("sglang"), "{e}");
    let e = setup(&sglang_dsv3(Some("fast"))).err().expect("an unknown mode is refused");
    assert!(e.contains("deployment.serving.deepep_mode") && e.contains("low_latency"), "{e}");
    let mut dense = sglang_dsv3(Some("auto"));
    dense.model = ModelRef::Id("qwen3-32b".into());
    dense.deployment.cluster = None;
    let e = setup(&dense).err().expect("DeepEP on a dense model is refused");
    assert!(e.contains("deployment.serving.deepep_mode") && e.contains("no routed experts"), "{e}");
}

#[test]
fn the_sglang_launch_writes_the_deepep_flags() {
    let s = sglang_dsv3(Some("auto"));
    let best: BTreeMap<String, Value> = wide_ep().into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let l = sglang::launch(&s, &best, &flags::newest("sglang"));
    let text = l.to_text();
    assert!(text.contains("--moe-a2a-backend deepep --deepep-mode auto"), "{text}");
    // Without expert parallelism there is nothing for DeepEP to exchange: no flag.
    let mut off = best.clone();
    off.insert("expert_parallel".into(), Value::Str("off".into()));
    let text = sglang::launch(&s, &off, &flags::newest("sglang")).to_text();
    assert!(!text.contains("deepep"), "{text}");
}

//! MoE dispatch and combine inside the serving step (issue 42, item 2): an expert-parallel step
//! exchanges its tokens as the engine picks it per step (vLLM-Ascend's select_moe_comm_method,
//! MindIE's likewise): MC2 for a decode step, all-to-all for a prefill step on A3, the
//! all-gather path on A2 under 16 EP ranks; each priced as `Op::MoeComm` on the link its EP
//! group crosses (RoCE between A3 nodes, or the SuperPOD fabric).

mod common;
use tunelab_scenario::bundled::bundled_scenario;
use tunelab_scenario::serving::Phase;
use tunelab_scenario::stages::deployment::StepOperators;
use tunelab_scenario::Scenario;
use tunelab_search::Value;
use tunelab_sim::{Link, MoeCommForm, Op};

fn step(s: &Scenario, set: &[(&str, Value)], phase: Phase) -> StepOperators {
    common::step_with(s, set, phase)
}

/// The EP exchanges of a step: (name, form or None for a plain collective, link, us over the
/// step's layers).
fn exchanges(st: &StepOperators) -> Vec<(String, Option<MoeCommForm>, Link, f64)> {
    st.ops
        .iter()
        .filter(|o| o.name.contains(".ep."))
        .map(|o| match o.op {
            Op::MoeComm { form, link, .. } => (o.name.clone(), Some(form), link, o.time_us),
            Op::Comm { link, .. } => (o.name.clone(), None, link, o.time_us),
            _ => (o.name.clone(), None, Link::Hccs, o.time_us),
        })
        .collect()
}

fn i(x: i64) -> Value {
    Value::Int(x)
}

fn st(x: &str) -> Value {
    Value::Str(x.into())
}

/// DeepSeek-V3 on 2 A3 nodes, attention DP 32, experts over all 32 dies.
fn dsv3(superpod: bool) -> Scenario {
    let mut s = bundled_scenario("deepseek-v3-2xA3-deployment").unwrap();
    s.deployment.serving.requests = 64;
    s.deployment.cluster.as_mut().unwrap().superpod = superpod;
    s
}

fn wide_ep() -> Vec<(&'static str, Value)> {
    vec![("tp", i(1)), ("dp", i(32)), ("expert_parallel", st("on")), ("batch", i(16))]
}

#[test]
fn a_decode_step_runs_mc2_and_a_prefill_step_all_to_all_on_the_link_the_ep_group_crosses() {
    let roce = dsv3(false);
    let dec = exchanges(&step(&roce, &wide_ep(), Phase::Decode));
    let pre = exchanges(&step(&roce, &wide_ep(), Phase::Prefill));
    eprintln!("decode: {dec:?}\nprefill: {pre:?}");
    assert!(dec.iter().any(|(n, f, l, _)| n.ends_with("dispatch_mc2") && *f == Some(MoeCommForm::Mc2) && *l == Link::InterNode), "{dec:?}");
    assert!(dec.iter().any(|(n, f, ..)| n.ends_with("combine_mc2") && *f == Some(MoeCommForm::Mc2)), "{dec:?}");
    assert!(pre.iter().any(|(n, f, l, _)| n.ends_with("dispatch_all_to_all") && *f == Some(MoeCommForm::AllToAll) && *l == Link::InterNode), "{pre:?}");
    // Over the SuperPOD fabric the same exchange takes the fabric and is faster than RoCE.
    let pod = exchanges(&step(&dsv3(true), &wide_ep(), Phase::Decode));
    let us = |v: &[(String, Option<MoeCommForm>, Link, f64)]| v.iter().map(|x| x.3).sum::<f64>();
    assert!(pod.iter().all(|x| x.2 == Link::SuperPod), "{pod:?}");
    assert!(us(&pod) < us(&dec), "SuperPOD {} us vs RoCE {} us per step", us(&pod), us(&dec));
    // An engine without this policy keeps the plain all-to-all collectives, which issue a task
    // to each of the 31 peers in turn: MC2 reaches them all at once and is faster.
    let mut generic = dsv3(false);
    generic.deployment.serving.engine = "generic".into();
    generic.deployment.serving.graph_mode = "auto".into();
    let plain = exchanges(&step(&generic, &wide_ep(), Phase::Decode));
    assert!(plain.iter().all(|x| x.1.is_none() && x.0.contains("alltoall")), "{plain:?}");
    eprintln!("decode step exchange (all MoE layers): MC2 {:.1} us, plain all-to-all {:.1} us", us(&dec), us(&plain));
    assert!(us(&dec) < us(&plain), "MC2 {} us vs all-to-all {} us", us(&dec), us(&plain));
}

#[test]
fn an_a2_node_under_sixteen_ep_ranks_takes_the_all_gather_path() {
    // Mixtral-8x7B on one Atlas 800 A2 node, tp 8 with expert parallelism (ep = 8 < 16).
    let mut s = bundled_scenario("mixtral-8x7b-910B2-deployment").unwrap();
    s.constraints = Default::default();
    s.deployment.serving.requests = 16;
    let set = [("tp", i(8)), ("expert_parallel", st("on"))];
    let dec = exchanges(&step(&s, &set, Phase::Decode));
    assert!(dec.iter().any(|x| x.0.ends_with("dispatch_allgather")) && dec.iter().all(|x| x.1.is_none()), "{dec:?}");
}

//! The MC2 capacity as vLLM-Ascend sets it (issue 42, item 4): not a fixed 512 tokens, but the
//! release's largest captured graph when the launch captures graphs (max_num_seqs x (1 + draft
//! tokens) when eager), split over the TP ranks with each share capped at 512
//! (`set_mc2_tokens_capacity`); and on A2, MC2 only when the EP group holds at most 24 of the
//! model's experts per rank (`_select_a2_moe_comm_method`, vLLM-Ascend #7364), so Qwen3.5's
//! 512 experts on 16 A2 ranks take the all-gather path.

mod common;
use tunelab_scenario::bundled::bundled_scenario;
use tunelab_scenario::serving::Phase;
use tunelab_scenario::spec::scenario::{DeviceRef, ModelRef};
use tunelab_scenario::stages::deployment::StepOperators;
use tunelab_scenario::Scenario;
use tunelab_search::Value;
use tunelab_sim::{MoeCommForm, Op};

fn step(s: &Scenario, set: &[(&str, Value)], phase: Phase) -> StepOperators {
    common::step_with(s, set, phase)
}

/// The forms of the step's EP dispatches (None: the all-gather dispatcher or a plain collective).
fn dispatch_forms(st: &StepOperators) -> Vec<(String, Option<MoeCommForm>)> {
    st.ops
        .iter()
        .filter(|o| o.name.contains(".ep.") && o.name.contains("dispatch"))
        .map(|o| (o.name.clone(), if let Op::MoeComm { form, .. } = o.op { Some(form) } else { None }))
        .collect()
}

fn i(x: i64) -> Value {
    Value::Int(x)
}

fn st(x: &str) -> Value {
    Value::Str(x.into())
}

#[test]
fn the_capacity_follows_the_largest_captured_graph() {
    // DeepSeek-V3 on 2 A3 nodes, attention DP 32 at tp 1, one draft token: a 48-token prefill
    // step per DP rank against a capture of max_num_seqs x 2 tokens.
    let mut s = bundled_scenario("deepseek-v3-2xA3-deployment").unwrap();
    s.deployment.serving.requests = 64;
    let at = |seqs: i64| {
        let set = [("tp", i(1)), ("dp", i(32)), ("expert_parallel", st("on")), ("batch", i(seqs)), ("num_speculative_tokens", i(1)), ("max_num_batched_tokens", i(48))];
        dispatch_forms(&step(&s, &set, Phase::Prefill))
    };
    // max_num_seqs 16: graphs up to 32 tokens, so 48 tokens exceed MC2's capacity (all-to-all);
    // under a fixed 512 they ran MC2.
    let small = at(16);
    assert!(!small.is_empty() && small.iter().all(|x| x.1 == Some(MoeCommForm::AllToAll)), "{small:?}");
    // max_num_seqs 32: graphs up to 64 tokens; the 48-token step runs MC2.
    let big = at(32);
    assert!(!big.is_empty() && big.iter().all(|x| x.1 == Some(MoeCommForm::Mc2)), "{big:?}");
}

#[test]
fn on_a2_more_than_24_experts_a_rank_take_the_all_gather_path() {
    // Two Atlas 800 A2 nodes (16 x 910B2), one TP8 DP rank each, experts over all 16 ranks.
    let a2 = |model: &str| {
        let mut s = bundled_scenario("deepseek-v3-2xA3-deployment").unwrap();
        s.model = ModelRef::Id(model.into());
        s.device = DeviceRef::Name("910B2".into());
        s.deployment.serving.requests = 16;
        s.deployment.serving.speculative = None;
        s.deployment.tensor_parallel = vec![8];
        s.deployment.precisions = vec!["w8a8".into()];
        s.deployment.cluster.as_mut().unwrap().redundant_experts = vec![0];
        let set = [("tp", i(8)), ("dp", i(2)), ("expert_parallel", st("on")), ("batch", i(8))];
        dispatch_forms(&step(&s, &set, Phase::Decode))
    };
    // DeepSeek-V3: 256 experts, 16 a rank: MC2 for the decode step.
    let ds = a2("deepseek-v3");
    assert!(!ds.is_empty() && ds.iter().all(|x| x.1 == Some(MoeCommForm::Mc2)), "{ds:?}");
    // Qwen3.5-397B-A17B: 512 experts, 32 a rank: the all-gather dispatcher.
    let qw = a2("qwen3.5-397b-a17b");
    assert!(!qw.is_empty() && qw.iter().all(|x| x.1.is_none()), "{qw:?}");
}

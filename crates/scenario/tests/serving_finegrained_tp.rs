//! Fine-grained TP under attention DP (issue 42, "per-module TP under attention-DP"):
//! vLLM-Ascend's `finegrained_tp_config` splits the LM head (and the embedding) of a tp-1
//! instance over a group of its DP ranks. DeepSeek-V3 decode at DP 32 x TP 1 on two A3 nodes:
//! the head's 0.9 GiB of bf16 weights per die fall 16-fold, a decode step reads 1/16 of them
//! (the head of a small decode batch is weight-bound), and two small collectives are added.

use tunelab_scenario::bundled::bundled_scenario;
use tunelab_scenario::serving::Phase;
use tunelab_scenario::stages::setup;
use tunelab_scenario::Scenario;
use tunelab_search::Value;

mod common;

fn scenario(lmhead: &[i64], embed: &[i64]) -> Scenario {
    let mut s = bundled_scenario("deepseek-v3-2xA3-deployment").unwrap();
    s.deployment.serving.requests = 320;
    let c = s.deployment.cluster.as_mut().unwrap();
    c.lmhead_tp = lmhead.to_vec();
    c.embedding_tp = embed.to_vec();
    s
}

fn i(x: i64) -> Value {
    Value::Int(x)
}

fn base() -> Vec<(&'static str, Value)> {
    vec![("tp", i(1)), ("dp", i(32)), ("expert_parallel", Value::Str("on".into())), ("batch", i(16)), ("num_speculative_tokens", i(0))]
}

#[test]
fn the_lm_head_split_over_sixteen_dp_ranks_holds_and_reads_a_sixteenth() {
    let s = scenario(&[1, 16], &[1, 16]);
    let at = |lm: i64, em: i64| {
        let mut set = base();
        set.extend([("lmhead_tp", i(lm)), ("embedding_tp", i(em))]);
        common::step_with(&s, &set, Phase::Decode)
    };
    let (off, on) = (at(1, 1), at(16, 16));
    // Weights: DeepSeek-V3's head and embedding are 129280 x 7168 bf16 each (1.73 GiB); split
    // 16-fold each keeps 1/16.
    let saved = off.memory.weights as f64 - on.memory.weights as f64;
    let both = 2.0 * 129280.0 * 7168.0 * 2.0;
    assert!((saved / (both * 15.0 / 16.0) - 1.0).abs() < 0.01, "saved {saved} bytes of {both}");
    // The head's matmul: 16 ranks' rows against 1/16 of the vocabulary.
    let head = |o: &tunelab_scenario::stages::deployment::StepOperators| o.ops.iter().filter(|c| c.name == "lm_head").map(|c| c.time_us * c.repeat as f64).sum::<f64>();
    let (h_off, h_on) = (head(&off), head(&on));
    eprintln!("lm_head per decode step: {h_off:.1} us whole, {h_on:.1} us split 16-way");
    assert!(h_on < h_off * 0.3, "{h_on} vs {h_off}");
    for name in ["ftp.lmhead.hidden_allgather", "ftp.lmhead.logits_alltoall", "ftp.embed.reduce_scatter"] {
        assert!(on.ops.iter().any(|c| c.name == name), "{name} missing");
        assert!(!off.ops.iter().any(|c| c.name == name), "{name} without the option");
    }
    // The whole step: less time (the head's weight read falls more than the collectives add).
    let step = |o: &tunelab_scenario::stages::deployment::StepOperators| o.ops.iter().map(|c| c.time_us * c.repeat as f64).sum::<f64>();
    assert!(step(&on) < step(&off), "{} vs {}", step(&on), step(&off));
    // Served: the TPOT falls with it.
    let mut set = base();
    set.extend([("lmhead_tp", i(16)), ("embedding_tp", i(1))]);
    let fine = common::serve_with(&s, &set).unwrap();
    let mut set = base();
    set.extend([("lmhead_tp", i(1)), ("embedding_tp", i(1))]);
    let whole = common::serve_with(&s, &set).unwrap();
    assert!(fine.tpot_ms.mean < whole.tpot_ms.mean, "{} vs {}", fine.tpot_ms.mean, whole.tpot_ms.mean);
}

#[test]
fn fine_grained_tp_is_refused_where_vllm_ascend_cannot_run_it() {
    // tp 2: vLLM-Ascend leaves it without effect; the point says so instead of pricing it.
    let s = scenario(&[8], &[]);
    let set = vec![("tp", i(2)), ("dp", i(16)), ("expert_parallel", Value::Str("on".into())), ("lmhead_tp", i(8)), ("num_speculative_tokens", i(0))];
    let e = common::serve_with(&s, &set).unwrap_err();
    assert!(e.contains("lmhead_tp 8") && e.contains("tp 2"), "{e}");
    // A size that does not divide dp.
    let s = scenario(&[], &[3]);
    let mut set = base();
    set.push(("embedding_tp", i(3)));
    let e = common::serve_with(&s, &set).unwrap_err();
    assert!(e.contains("embedding_tp 3") && e.contains("divide"), "{e}");
    // Out of range: named by field.
    let e = setup(&scenario(&[0], &[])).err().unwrap_or_default();
    assert!(e.contains("deployment.cluster.lmhead_tp"), "{e}");
    let e = setup(&scenario(&[], &[65])).err().unwrap_or_default();
    assert!(e.contains("deployment.cluster.embedding_tp"), "{e}");
    // An old scenario serialises without the new fields, and the stage has no such parameter.
    let old = scenario(&[], &[]);
    assert!(!old.to_json().contains("lmhead") && !old.to_json().contains("embedding_tp"));
    assert!(!setup(&old).unwrap().space.names().iter().any(|n| n == "lmhead_tp"));
}

#[test]
fn the_export_writes_the_release_s_own_key() {
    use tunelab_scenario::stages::scale::finegrained::additional_config;
    let list = |v: &str| tunelab_scenario::stages::scale::flags::all().iter().find(|(n, _)| *n == format!("vllm-ascend-{v}.json")).map(|(_, l)| l.clone()).unwrap();
    let (c, notes) = additional_config(&list("0.13"), 16, 8);
    assert_eq!(c.unwrap().to_string(), r#"{"finegrained_tp_config":{"embedding_tensor_parallel_size":8,"lmhead_tensor_parallel_size":16}}"#);
    assert!(notes.is_empty());
    // 0.11 reads the LM head's size at the top level and has no embedding split.
    let (c, notes) = additional_config(&list("0.11"), 16, 8);
    assert_eq!(c.unwrap().to_string(), r#"{"lmhead_tensor_parallel_size":16}"#);
    assert!(notes[0].contains("embedding_tensor_parallel_size 8"), "{notes:?}");
    // 0.9 has neither.
    let (c, notes) = additional_config(&list("0.9"), 16, 1);
    assert!(c.is_none() && notes.len() == 1);
}

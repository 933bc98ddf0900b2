//! Fine-grained TP under attention DP (issue 42, "per-module TP under attention-DP"):
//! vLLM-Ascend's `finegrained_tp_config` (docs/source/user_guide/feature_guide/Fine_grained_TP.md
//! and vllm_ascend/ascend_config.py `FinegrainedTPConfig` at vllm-project/vllm-ascend@182b75ea;
//! 0.10.2-0.11 read the LM head's size as the top-level `lmhead_tensor_parallel_size`, "only
//! supported in the pure DP scenario"). The LM head and the embedding of a tp-1 instance split
//! over a group of its DP ranks (`deployment.cluster.lmhead_tp`, `embedding_tp`); the graph
//! prices the group's gathers and exchanges and the smaller weight slice
//! (`tunelab_sim::workload::llm::finegrained`), the memory the smaller slice.
//!
//! Where it applies: the guide's limits (the size must divide the DP size) and its note that
//! with `tensor_parallel_size` > 1 the LM head and embedding settings "do not take effect". A
//! point whose decode (or co-located) instance breaks them is refused with the reason; a
//! disaggregated prefill instance of prefill_tp > 1 runs without it, as vLLM-Ascend does, and the
//! stage's note says so.

use super::ScaleKnobs;
use tunelab_sim::workload::ParallelPlan;

pub const NOTE: &str = "lmhead_tp / embedding_tp: fine-grained TP under attention DP (vLLM-Ascend finegrained_tp_config): on an instance of tp 1 the LM head (embedding) splits over this many of its DP ranks, which all-gather their hidden states (token ids), compute their vocabulary slice for all of them and return the rows by all-to-all (reduce-scatter); each holds 1/k of the weights and reads 1/k of them per step. It must divide the instance's dp; a prefill instance of prefill_tp > 1 runs without it (vLLM-Ascend: no effect with tensor_parallel_size > 1)";

/// Sets the plan's fine-grained TP for an instance of `tp` x `dp` (unchanged where it does not
/// apply: tp > 1 or a size that does not divide dp).
pub fn apply(p: &mut ParallelPlan, k: &ScaleKnobs, tp: u64, dp: u64) {
    let fits = |g: u64| g > 1 && tp == 1 && dp.is_multiple_of(g);
    if fits(k.lmhead_tp) {
        p.lmhead_tp = k.lmhead_tp;
    }
    if fits(k.embed_tp) {
        p.embed_tp = k.embed_tp;
    }
}

/// Why the decode (or co-located) instance of `tp` x `dp` cannot run these sizes (None: it can).
pub fn refusal(k: &ScaleKnobs, tp: u64, dp: u64) -> Option<String> {
    for (name, g) in [("lmhead_tp", k.lmhead_tp), ("embedding_tp", k.embed_tp)] {
        if g <= 1 {
            continue;
        }
        if tp != 1 {
            return Some(format!("{name} {g}: fine-grained TP splits over DP ranks of a tp-1 instance; with tp {tp} vLLM-Ascend leaves it without effect (Fine_grained_TP.md), so list it for tp 1 layouts"));
        }
        if !dp.is_multiple_of(g) {
            return Some(format!("{name} {g}: must divide the instance's dp {dp} (Fine_grained_TP.md: dp_size % tp_size == 0)"));
        }
    }
    None
}

/// The `--additional-config` keys of these sizes as `list`'s release reads them (0.13 on:
/// `finegrained_tp_config`; 0.10.2-0.11: the LM head's top-level key) and notes for what it
/// cannot launch.
pub fn additional_config(list: &super::flags::ArgList, lmhead: u64, embed: u64) -> (Option<serde_json::Value>, Vec<String>) {
    let mut out = serde_json::Map::new();
    let mut fine = serde_json::Map::new();
    let mut notes = Vec::new();
    for (key, g) in [("lmhead_tensor_parallel_size", lmhead), ("embedding_tensor_parallel_size", embed)] {
        if g <= 1 {
            continue;
        }
        if list.additional_config.contains_key(&format!("finegrained_tp_config.{key}")) {
            fine.insert(key.into(), g.into());
        } else if list.additional_config.contains_key(key) {
            out.insert(key.into(), g.into());
        } else {
            notes.push(format!("{key} {g}: {} has no such --additional-config key, so the command runs without it", list.release));
        }
    }
    if !fine.is_empty() {
        out.insert("finegrained_tp_config".into(), serde_json::Value::Object(fine));
    }
    ((!out.is_empty()).then_some(serde_json::Value::Object(out)), notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applies_only_where_vllm_ascend_runs_it() {
        let k = ScaleKnobs { lmhead_tp: 8, embed_tp: 4, ..Default::default() };
        let mut p = ParallelPlan::default();
        apply(&mut p, &k, 1, 16);
        assert_eq!((p.lmhead_tp, p.embed_tp), (8, 4));
        let mut q = ParallelPlan::default();
        apply(&mut q, &k, 2, 16);
        assert_eq!((q.lmhead_tp, q.embed_tp), (1, 1));
        assert!(refusal(&k, 1, 16).is_none());
        assert!(refusal(&k, 2, 8).unwrap().contains("lmhead_tp 8"));
        assert!(refusal(&k, 1, 12).unwrap().contains("divide"));
        assert!(refusal(&ScaleKnobs::default(), 4, 3).is_none());
    }
}

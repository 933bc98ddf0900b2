//! Large-scale serving for the deployment stage (issue 22): deployments over several nodes
//! (`deployment.cluster`), data-parallel attention with wide expert parallelism, redundant
//! experts (EPLB) and prefill-decode disaggregation (`disagg`).
//!
//! The layout, as vLLM-Ascend runs it (`--data-parallel-size` x `--tensor-parallel-size`,
//! `--enable-expert-parallel`): `dp` engine ranks, each running attention tensor-parallel over
//! `tp` chips with its own batch (`max_num_seqs` per rank) and its own share of the requests;
//! with expert parallelism the routed experts are spread whole over all tp x dp chips (ep =
//! tp x dp) and every MoE layer exchanges tokens by all-to-all over that whole group, on the
//! link the group crosses (`tunelab_sim::topology`). The ranks are symmetric, so one rank is
//! simulated with every dp-th request and the throughput is dp times its own.

pub mod context;
pub mod disagg;
pub mod export;
pub mod finegrained;
pub mod flags;
pub mod launch;
pub mod pipeline;
pub mod pp_serve;
pub mod sglang;

use crate::spec::cluster::{parse_layout, ClusterOptions};
use serde::Deserialize;
use std::collections::BTreeMap;
use tunelab_search::{Param, Value};
use tunelab_sim::device::Device;
use tunelab_sim::model::ModelDesc;
use tunelab_sim::topology::Placement;
use tunelab_sim::workload::ParallelPlan;

const CONSTANTS: &str = tunelab_sim::json_asset!("../../../../../assets/constants/scale-serving.json");

#[derive(Deserialize)]
struct Field {
    value: f64,
    #[allow(dead_code)]
    source: String,
}

#[derive(Deserialize)]
struct File {
    fields: BTreeMap<String, Field>,
}

/// The bundled large-scale serving parameters (`assets/constants/scale-serving.json`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaleConstants {
    pub moe_imbalance: f64,
    pub kv_transfer_efficiency: f64,
    pub kv_transfer_setup_us: f64,
    /// Dynamic chunked pipeline parallel: the smallest chunk it sizes (`pipeline`).
    pub cpp_min_chunk: u64,
    /// Tokens per DP rank up to which an EP step runs MC2 (`deployment::options::moe_comm`).
    pub mc2_tokens_capacity: u64,
    /// On A2, MC2 only when the EP group holds at most this many experts per rank.
    pub a2_mc2_max_experts_per_rank: u64,
}

pub fn constants() -> ScaleConstants {
    let f: File = serde_json::from_str(CONSTANTS).unwrap_or(File { fields: BTreeMap::new() });
    let g = |k: &str, d: f64| f.fields.get(k).map_or(d, |x| x.value);
    ScaleConstants { moe_imbalance: g("moe_imbalance", 1.0), kv_transfer_efficiency: g("kv_transfer_efficiency", 1.0), kv_transfer_setup_us: g("kv_transfer_setup_us", 0.0), cpp_min_chunk: g("cpp_min_chunk", 4096.0) as u64, mc2_tokens_capacity: g("mc2_tokens_capacity", 512.0) as u64, a2_mc2_max_experts_per_rank: g("a2_mc2_max_experts_per_rank", 24.0) as u64 }
}

/// One configuration's large-scale knobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScaleKnobs {
    pub dp: u64,
    pub redundant: u64,
    /// Disaggregated (x prefill, y decode instances), else colocated.
    pub pd: Option<(u64, u64)>,
    /// TP of a prefill instance (disaggregated).
    pub prefill_tp: u64,
    /// Pipeline stages of a prefill instance (disaggregated; 1: none) and whether its chunks
    /// are sized dynamically (`pipeline`).
    pub prefill_pp: u64,
    pub dynamic_chunks: bool,
    /// Prefill context-parallel ranks of a prefill instance (1: none; `context`) and decode
    /// context-parallel ranks within a decode rank's TP group (1: none).
    pub prefill_cp: u64,
    pub decode_cp: u64,
    /// Pipeline stages of a co-located engine rank (1: none; `pp_serve`).
    pub pp: u64,
    /// Fine-grained TP of the LM head and of the embedding over DP ranks (1: off; effective
    /// on an instance of tp 1 whose dp it divides: `finegrained`).
    pub lmhead_tp: u64,
    pub embed_tp: u64,
    /// Decode context parallel ranks of a prefill instance's TP group (1: none).
    pub prefill_dcp: u64,
}

impl Default for ScaleKnobs {
    fn default() -> Self {
        ScaleKnobs { dp: 1, redundant: 0, pd: None, prefill_tp: 1, prefill_pp: 1, dynamic_chunks: false, prefill_cp: 1, decode_cp: 1, pp: 1, lmhead_tp: 1, embed_tp: 1, prefill_dcp: 1 }
    }
}

/// The serving plan of one engine instance: tp x dp chips, experts over all of them with EP.
pub fn plan(tp: u64, dp: u64, expert_parallel: bool, redundant: u64, placement: Option<Placement>) -> ParallelPlan {
    let (tp, dp) = (tp.max(1), dp.max(1));
    let mut p = crate::serving::plan(tp, expert_parallel);
    if expert_parallel {
        p.dp = dp;
        p.ep = tp.saturating_mul(dp);
        p.redundant_experts = redundant;
    }
    p.placement = placement;
    p
}

/// The cluster of a scenario, checked against the chip: its chips in all and its placement.
pub struct Cluster {
    pub opts: ClusterOptions,
    pub chips: u64,
    pub placement: Placement,
    /// Heterogeneous disaggregation: the prefill side's own chip and nodes.
    pub prefill: Option<PrefillSide>,
}

/// The prefill instances' own system (`deployment.cluster.prefill_device`).
pub struct PrefillSide {
    pub device: Device,
    pub chips: u64,
    pub placement: Placement,
}

impl Cluster {
    pub fn new(opts: &ClusterOptions, device: &Device) -> Result<Cluster, String> {
        opts.validate()?;
        let placement = Placement::of(device, opts.superpod).map_err(|e| format!("deployment.cluster.superpod: {e}"))?;
        let chips = opts.nodes.saturating_mul(device.node_chips.max(1) as u64);
        let prefill = match (&opts.prefill_device, opts.prefill_nodes) {
            (Some(name), Some(nodes)) => {
                let d = tunelab_sim::bundled_device(name).map_err(|e| format!("deployment.cluster.prefill_device: {e}"))?;
                let placement = Placement::of(&d, false).map_err(|e| format!("deployment.cluster.prefill_device: {e}"))?;
                Some(PrefillSide { chips: nodes.saturating_mul(d.node_chips.max(1) as u64), device: d, placement })
            }
            _ => None,
        };
        Ok(Cluster { opts: opts.clone(), chips, placement, prefill })
    }

    /// Chips of the prefill side's own nodes (0: prefill shares the scenario's).
    pub fn prefill_chips(&self) -> u64 {
        self.prefill.as_ref().map_or(0, |p| p.chips)
    }

    /// The stage's extra parameters (appended after the deployment's own): dp, and for a
    /// mixture-of-experts model redundant_experts; pd and prefill_tp when disaggregation is
    /// listed. `tps` are the tensor-parallel sizes the stage keeps.
    pub fn params(&self, model: &ModelDesc, tps: &[i64]) -> Result<(Vec<Param>, Vec<String>, Vec<String>), String> {
        let chips = self.chips as i64;
        let o = &self.opts;
        let layouts: Vec<Option<(u64, u64)>> = o.disaggregation.iter().map(|l| parse_layout(l)).collect::<Result<_, _>>()?;
        let disagg = layouts.iter().any(Option::is_some);
        // Pipeline stages of a co-located rank (1 when none are listed).
        let pps: Vec<i64> = if o.pipeline_parallel.is_empty() { vec![1] } else { o.pipeline_parallel.clone() };
        let dps: Vec<i64> = if o.data_parallel.is_empty() {
            let mut v: Vec<i64> = tps.iter().flat_map(|t| pps.iter().map(move |p| t * p)).filter(|g| chips % *g == 0).map(|g| chips / g).collect();
            if disagg {
                // A decode instance may take a share of the chips: every divisor is a candidate.
                v.extend((1..=chips).filter(|d| chips % d == 0));
            }
            v.sort_unstable();
            v.dedup();
            v.reverse();
            // The first tp's filling dp first, so the baseline is a valid layout.
            if let Some(first) = tps.first().map(|t| t * pps[0]).filter(|g| chips % *g == 0).map(|g| chips / g) {
                v.retain(|d| *d != first);
                v.insert(0, first);
            }
            v
        } else {
            o.data_parallel.clone()
        };
        if !disagg && !dps.iter().any(|d| tps.iter().any(|t| pps.iter().any(|p| t * d * p == chips))) {
            return Err(format!(
                "deployment.cluster.data_parallel: no listed layout fills the {} chips of {} node(s): tp x dp x pp must equal {chips} (tp from {:?}, dp from {:?}, pp from {:?})",
                chips, o.nodes, tps, dps, pps
            ));
        }
        let cat_i = |name: &str, v: &[i64]| Param::categorical(name, v.iter().map(|&x| Value::Int(x)).collect());
        let mut params = vec![cat_i("dp", &dps)];
        let mut constraints = Vec::new();
        let mut notes = vec![format!(
            "cluster: {} node(s) x {} chips = {chips} chips on {}; dp attention ranks x tp chips per rank; with expert_parallel on, ep = tp x dp",
            o.nodes,
            chips / o.nodes.max(1) as i64,
            if o.superpod { "a SuperPOD fabric" } else { "RoCE between nodes" }
        )];
        if model.llm.as_ref().and_then(|t| t.moe.as_ref()).is_some() {
            let red = if o.redundant_experts.is_empty() { vec![0] } else { o.redundant_experts.clone() };
            params.push(cat_i("redundant_experts", &red));
        }
        if !o.decode_cp.is_empty() {
            params.push(cat_i("decode_cp", &o.decode_cp));
            notes.push("decode_cp: decode context parallel (vLLM --decode-context-parallel-size): every sequence's KV cache sharded over decode_cp ranks of a decode rank's TP group (no extra chips), so a rank holds decode_cp times the tokens; a decode step gathers the group's query heads, attends its shard, and merges the partial outputs by log-sum-exp (all-gather, reduce-scatter). It must divide tp (MLA) or tp / kv_heads (GQA)".into());
        }
        for (name, v) in [("lmhead_tp", &o.lmhead_tp), ("embedding_tp", &o.embedding_tp)] {
            if !v.is_empty() {
                params.push(cat_i(name, v));
            }
        }
        if !o.lmhead_tp.is_empty() || !o.embedding_tp.is_empty() {
            notes.push(finegrained::NOTE.into());
        }
        if disagg {
            let names: Vec<Value> = o.disaggregation.iter().map(|s| Value::Str(s.trim().to_string())).collect();
            params.push(Param::categorical("pd", names));
            let ptp = if o.prefill_tp.is_empty() { tps.to_vec() } else { o.prefill_tp.clone() };
            params.push(cat_i("prefill_tp", &ptp));
            if !o.prefill_pp.is_empty() {
                params.push(cat_i("prefill_pp", &o.prefill_pp));
                let chunking = if o.prefill_chunking.is_empty() { vec!["dynamic".to_string(), "static".to_string()] } else { o.prefill_chunking.clone() };
                params.push(Param::categorical("prefill_chunking", chunking.into_iter().map(Value::Str).collect()));
                notes.push("prefill_pp: a prefill instance of prefill_tp x prefill_pp chips per rank, its layers in prefill_pp pipeline stages (vLLM --pipeline-parallel-size); each prompt flows through them in chunks of max_num_batched_tokens (static) or sized to the first chunk's stage time (dynamic: vLLM-Ascend's dynamic chunked pipeline parallel, profiling_chunk_config)".into());
            }
            if !o.prefill_dcp.is_empty() {
                params.push(cat_i("prefill_dcp", &o.prefill_dcp));
                notes.push("prefill_dcp: decode context parallel on the prefill instances (vLLM --decode-context-parallel-size there, as vLLM-Ascend's 1M-context PD layout runs prefill TP8 DCP8): each prompt's cache sharded over prefill_dcp ranks of the prefill TP group (no extra chips), so a prefill rank holds prefill_dcp times the prompt; a chunk after the first gathers the earlier context's shards at every layer (an all-gather in the cache's type). The longest prompt's cache must fit a prefill rank. It must divide prefill_tp (MLA) or prefill_tp / kv_heads (GQA)".into());
            }
            if !o.prefill_cp.is_empty() {
                params.push(cat_i("prefill_cp", &o.prefill_cp));
                notes.push("prefill_cp: prefill context parallel (vLLM --prefill-context-parallel-size): a prefill instance of prefill_tp x prefill_pp x prefill_cp chips per rank; each prompt's tokens split over the prefill_cp ranks in load-balanced head-and-tail pieces, each rank running its tokens through every layer, the keys and values all-gathered over the group at every layer (priced on the link the group crosses, not overlapped)".into());
            }
            notes.push("pd: prefill-decode disaggregation xPyD: x prefill instances (prefill_tp chips each, times the dp that fills their share) and y decode instances (tp x dp chips each); with expert_parallel each side spreads the experts over its own instance (ep = its tp x dp); the KV cache of every prompt crosses the link between them, and a request waiting for a decode slot (max_num_seqs, KV memory) waits in TTFT, not TPOT".into());
            if let Some(p) = &self.prefill {
                notes.push(format!(
                    "heterogeneous pd: the prefill instances run on {} node(s) of {} ({} chips), the decode instances on the {} node(s) of the scenario's chip; the KV cache crosses the RoCE network between the two systems",
                    o.prefill_nodes.unwrap_or(0), p.device.name, p.chips, o.nodes
                ));
            }
            if layouts.iter().any(Option::is_none) {
                constraints.push(format!("pd != \"colocated\" || tp * dp == {chips}"));
            }
        } else if o.pipeline_parallel.is_empty() {
            constraints.push(format!("tp * dp == {chips}"));
        } else {
            params.push(cat_i("pp", &o.pipeline_parallel));
            constraints.push(format!("tp * dp * pp == {chips}"));
            notes.push("pp: pipeline parallelism of a co-located engine rank (vLLM --pipeline-parallel-size): tp x pp chips per rank, its layers in pp stages, the activations passed between stages on the link they cross; the running sequences run as up to pp micro-batches, so a step takes max(micro-batches, pp) stage times: with fewer sequences than stages the stages idle (the bubble)".into());
        }
        Ok((params, constraints, notes))
    }
}

/// A layout that does not fill the chips, in words (None: it fits). `prefill_chips`: the
/// prefill side's own chips (heterogeneous disaggregation), 0 when it shares `chips`.
pub fn layout_error(chips: u64, tp: u64, k: &ScaleKnobs, prefill_chips: u64) -> Option<String> {
    match k.pd {
        None if tp * k.dp * k.pp.max(1) != chips => Some(format!("tp x dp x pp = {tp} x {} x {} = {} does not fill the deployment's {chips} chips", k.dp, k.pp.max(1), tp * k.dp * k.pp.max(1))),
        None => None,
        Some((x, y)) if prefill_chips > 0 => {
            let decode = y * tp * k.dp;
            if decode != chips {
                return Some(format!("{x}P{y}D: the {y} decode instance(s) of tp x dp = {tp} x {} take {decode} chips, not the decode side's {chips}", k.dp));
            }
            let group = k.prefill_tp * k.prefill_pp.max(1) * k.prefill_cp.max(1);
            if !prefill_chips.is_multiple_of(x) || !(prefill_chips / x).is_multiple_of(group) {
                return Some(format!("{x}P{y}D: the prefill side's {prefill_chips} chips do not split into {x} prefill instance(s) of whole prefill_tp x prefill_pp x prefill_cp = {group} groups"));
            }
            None
        }
        Some((x, y)) => {
            let decode = y * tp * k.dp;
            if decode >= chips {
                return Some(format!("{x}P{y}D: the {y} decode instance(s) of tp x dp = {tp} x {} take all {chips} chips, none left for prefill", k.dp));
            }
            let left = chips - decode;
            let group = k.prefill_tp * k.prefill_pp.max(1) * k.prefill_cp.max(1);
            if !left.is_multiple_of(x) || !(left / x).is_multiple_of(group) {
                return Some(format!("{x}P{y}D: the {left} chips left after decode do not split into {x} prefill instance(s) of whole prefill_tp x prefill_pp x prefill_cp = {group} groups"));
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_that_do_not_fill_the_chips_say_so() {
        let k = ScaleKnobs { dp: 3, ..Default::default() };
        assert!(layout_error(32, 4, &k, 0).unwrap().contains("does not fill"));
        assert!(layout_error(32, 4, &ScaleKnobs { dp: 8, ..Default::default() }, 0).is_none());
        let pd = ScaleKnobs { dp: 16, pd: Some((1, 1)), prefill_tp: 4, ..Default::default() };
        assert!(layout_error(32, 1, &pd, 0).is_none());
        assert!(layout_error(32, 2, &pd, 0).unwrap().contains("none left for prefill"));
        // Heterogeneous: decode fills its own chips, prefill splits its side's.
        assert!(layout_error(16, 1, &pd, 16).is_none());
        assert!(layout_error(32, 1, &pd, 16).unwrap().contains("not the decode side's"));
        assert!(layout_error(16, 1, &ScaleKnobs { prefill_tp: 32, ..pd }, 16).unwrap().contains("prefill_tp"));
        let c = constants();
        assert!(c.moe_imbalance >= 1.0 && c.kv_transfer_efficiency > 0.0);
    }

    #[test]
    fn wide_ep_spreads_experts_over_every_rank() {
        let p = plan(2, 16, true, 32, None);
        assert_eq!((p.tp, p.dp, p.ep, p.experts_tp(), p.redundant_experts), (2, 16, 32, 1, 32));
        let q = plan(2, 16, false, 32, None);
        assert_eq!((q.ep, q.redundant_experts), (1, 0));
    }
}

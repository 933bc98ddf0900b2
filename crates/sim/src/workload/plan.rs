//! How a model is split across chips (tensor, pipeline, data, expert and context parallelism,
//! one stage of an uneven pipeline split, where the ranks sit) and the check of a split against
//! a model.

use crate::model::ModelDesc;
use serde::{Deserialize, Serialize};

/// How a model is split across chips.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct ParallelPlan {
    /// Tensor parallel (Megatron column/row split of attention heads and MLP width).
    pub tp: u64,
    /// Pipeline parallel (layers split into stages).
    pub pp: u64,
    /// Data parallel replicas.
    pub dp: u64,
    /// Expert parallel (MoE experts split across chips, tokens exchanged by all-to-all).
    pub ep: u64,
    /// Megatron sequence parallelism: norms/dropout sharded by sequence inside the TP group.
    pub sequence_parallel: bool,
    /// Context parallel (training): each sequence split cp-way, keys/values exchanged in a ring.
    pub cp: u64,
    /// Virtual pipeline stages per chip (Megatron interleaved 1F1B; 1 = plain 1F1B).
    pub vpp: u64,
    /// Tensor-parallel split of the routed (and shared) experts' width; `None` = `tp`, as
    /// Megatron's default and as serving without expert parallelism. `Some(1)` with tp > 1 is
    /// vLLM's `--enable-expert-parallel` (ep = tp): every expert whole on one TP rank, each TP
    /// rank taking 1/tp of the tokens through the MoE block (dispatched to the experts' ranks by
    /// all-to-all) and the outputs all-gathered back over TP. Only 1 and tp are modelled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expert_tp: Option<u64>,
    /// Redundant expert slots over the EP group (EPLB: the hottest experts get a second copy,
    /// so each EP rank holds (experts + redundant) / ep experts and the busiest rank's load
    /// falls; `GraphOptions::moe_imbalance` is the load before balancing).
    #[serde(skip_serializing_if = "is_zero")]
    pub redundant_experts: u64,
    /// Where the ranks sit (nodes, packages, SuperPOD): inference collectives are priced on the
    /// link their group crosses (`crate::topology`). None: one node, every collective on HCCS.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<crate::topology::Placement>,
    /// One pipeline stage of an uneven layer split (MindSpeed's --num-layer-list): the graph and
    /// the memory are this stage's, with its own layer count, its place in the pipeline (the
    /// first holds the embedding and the most micro-batches in flight, the last the LM head).
    /// None: the even split, `layers / pp` per stage, priced at its busiest stage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage: Option<PipelineStage>,
    /// Decode context parallel (serving; vLLM `--decode-context-parallel-size`): the KV cache
    /// sharded by sequence over `dcp` ranks of the TP group (no extra chips). Each rank keeps
    /// 1 / dcp of every sequence's cache; a decode step gathers the query heads of the group,
    /// attends its shard, and merges the partial outputs by their log-sum-exp. 1: off.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub dcp: u64,
    /// Fine-grained TP of the LM head under attention DP (serving; vLLM-Ascend's
    /// `finegrained_tp_config.lmhead_tensor_parallel_size`): the head's vocabulary split over
    /// `lmhead_tp` DP ranks (tp = 1), each all-gathering the group's hidden states, computing its
    /// slice of every gathered row's logits and returning them by all-to-all. 1: off.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub lmhead_tp: u64,
    /// Fine-grained TP of the token embedding (`embedding_tensor_parallel_size`): the table split
    /// over `embed_tp` DP ranks, the group's token ids all-gathered, each rank looking up its
    /// vocabulary slice, the rows reduce-scattered back. 1: off.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub embed_tp: u64,
}

fn one() -> u64 {
    1
}

fn is_one(x: &u64) -> bool {
    *x == 1
}

/// One stage of an uneven pipeline split.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PipelineStage {
    /// Position in the pipeline, 0 = first.
    pub index: u64,
    /// Transformer layers on the stage.
    pub layers: u64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

impl Default for ParallelPlan {
    fn default() -> Self {
        ParallelPlan { tp: 1, pp: 1, dp: 1, ep: 1, sequence_parallel: false, cp: 1, vpp: 1, expert_tp: None, redundant_experts: 0, placement: None, stage: None, dcp: 1, lmhead_tp: 1, embed_tp: 1 }
    }
}

impl ParallelPlan {
    /// Transformer layers on the stage the plan describes: its own under an uneven split, else
    /// `total / pp` rounded up (the busiest stage of the even split).
    pub fn layers_here(&self, total: u64) -> u64 {
        match self.stage {
            Some(s) => s.layers.min(total),
            None => total.div_ceil(self.pp.max(1)),
        }
    }

    /// How many of `count` layers of one kind (MoE, attention, linear attention), spread evenly
    /// over the model's `total` layers, fall on the stage, rounded up.
    pub fn share_here(&self, count: u64, total: u64) -> u64 {
        match self.stage {
            Some(s) => count.saturating_mul(s.layers).div_ceil(total.max(1)).min(count),
            None => count.div_ceil(self.pp.max(1)),
        }
    }

    /// (holds the embedding, holds the LM head): an even split prices its last stage (the LM
    /// head's, the heavier end) and, with one stage, both.
    pub fn stage_ends(&self) -> (bool, bool) {
        match self.stage {
            Some(s) => (s.index == 0, s.index + 1 >= self.pp.max(1)),
            None => (self.pp <= 1, true),
        }
    }

    /// The TP split of the experts' width (`expert_tp`, else `tp`).
    pub fn experts_tp(&self) -> u64 {
        self.expert_tp.unwrap_or(self.tp).max(1)
    }

    /// Expert slots per MoE layer across the EP group: the routed experts plus the redundant
    /// copies (EPLB).
    pub fn expert_slots(&self, experts: u64) -> u64 {
        experts.saturating_add(self.redundant_experts)
    }

    /// Chips the plan occupies (tp x pp x dp x cp).
    pub fn world(&self) -> u64 {
        self.tp.max(1).saturating_mul(self.pp.max(1)).saturating_mul(self.dp.max(1)).saturating_mul(self.cp.max(1))
    }

    /// How many ways each TP group splits its tokens in the MoE block: tp / experts_tp (1 unless
    /// the experts are not TP-split as the attention is).
    pub fn moe_token_split(&self) -> u64 {
        (self.tp.max(1) / self.experts_tp()).max(1)
    }

    /// Chips used: tp x pp x cp x dp (expert parallelism reuses the data- and context-parallel
    /// ranks, as in Megatron-Core).
    pub fn chips(&self) -> u64 {
        self.tp.saturating_mul(self.pp).saturating_mul(self.dp).saturating_mul(self.cp.max(1))
    }
}

/// Checks a plan against a model: degrees positive and dividing what they split.
pub fn validate_plan(model: &ModelDesc, plan: &ParallelPlan) -> Result<(), String> {
    for (f, v) in [("tp", plan.tp), ("pp", plan.pp), ("dp", plan.dp), ("ep", plan.ep), ("cp", plan.cp), ("vpp", plan.vpp), ("dcp", plan.dcp)] {
        if v == 0 || v > 1 << 16 {
            return Err(format!("parallel plan field '{f}' = {v} is out of range (1..=65536)"));
        }
    }
    let Some(t) = &model.llm else {
        if plan.tp > 1 || plan.pp > 1 || plan.ep > 1 {
            return Err(format!(
                "'{}' is an operator graph: only data parallelism is modelled (tp = pp = ep = 1)",
                model.name
            ));
        }
        return Ok(());
    };
    if !t.heads.is_multiple_of(plan.tp) {
        return Err(format!("tp = {} must divide the {} attention heads", plan.tp, t.heads));
    }
    if !t.kv_heads.is_multiple_of(plan.tp) && !plan.tp.is_multiple_of(t.kv_heads) {
        return Err(format!(
            "tp = {} and the {} KV heads must divide one another",
            plan.tp, t.kv_heads
        ));
    }
    if let Some(v) = model.active_vision() {
        if !v.encoder.heads.is_multiple_of(plan.tp) {
            return Err(format!(
                "tp = {} must divide the vision encoder's {} heads",
                plan.tp, v.encoder.heads
            ));
        }
    }
    if plan.dcp > 1 {
        // vLLM-Ascend's context parallel guide: DCP shards the copies of the cache the TP group
        // would hold. MLA keeps one latent per TP rank (tp % dcp == 0); GQA keeps
        // tp / kv_heads copies of each KV head ((tp / kv_heads) % dcp == 0).
        let copies = if t.mla.is_some() { plan.tp } else { plan.tp / t.kv_heads.max(1) };
        if copies < plan.dcp || !copies.is_multiple_of(plan.dcp) {
            return Err(if t.mla.is_some() {
                format!("decode context parallel {} must divide tp = {} (MLA: tensor_parallel_size % decode_context_parallel_size == 0)", plan.dcp, plan.tp)
            } else {
                format!("decode context parallel {} must divide tp / kv_heads = {} / {} = {} (GQA: the TP ranks holding copies of one KV head; vLLM-Ascend's constraint)", plan.dcp, plan.tp, t.kv_heads, copies)
            });
        }
    }
    if plan.pp > t.layers {
        return Err(format!("pp = {} exceeds the {} layers", plan.pp, t.layers));
    }
    if let Some(s) = plan.stage {
        if s.index >= plan.pp || s.layers == 0 || s.layers > t.layers || plan.vpp > 1 {
            return Err(format!(
                "pipeline stage {} with {} layers does not fit pp = {}, vpp = {} and the {} layers (an uneven split needs 1..=layers per stage and no virtual stages)",
                s.index, s.layers, plan.pp, plan.vpp, t.layers
            ));
        }
    }
    if plan.pp.saturating_mul(plan.vpp) > t.layers {
        return Err(format!(
            "pp x vpp = {} x {} exceeds the {} layers (each virtual stage needs a layer)",
            plan.pp, plan.vpp, t.layers
        ));
    }
    if plan.vpp > 1 && plan.pp == 1 {
        return Err("vpp > 1 (virtual pipeline stages) needs pp > 1".into());
    }
    if let Some(e) = plan.expert_tp {
        if e != 1 && e != plan.tp {
            return Err(format!("expert_tp = {e}: only 1 (experts whole, expert parallelism over the TP ranks) or tp = {} is modelled", plan.tp));
        }
        if t.moe.is_none() && e != plan.tp {
            return Err("expert_tp needs a mixture-of-experts model".into());
        }
    }
    match &t.moe {
        Some(m) if !plan.expert_slots(m.experts).is_multiple_of(plan.ep) => {
            if plan.redundant_experts > 0 {
                Err(format!("ep = {} must divide the {} experts plus {} redundant copies", plan.ep, m.experts, plan.redundant_experts))
            } else {
                Err(format!("ep = {} must divide the {} experts", plan.ep, m.experts))
            }
        }
        Some(_) if plan.redundant_experts > 0 && plan.ep == 1 => Err("redundant experts (EPLB) need expert parallelism (ep > 1)".into()),
        None if plan.redundant_experts > 0 => Err("redundant experts need a mixture-of-experts model".into()),
        None if plan.ep > 1 => Err("ep > 1 needs a mixture-of-experts model".into()),
        _ => Ok(()),
    }
}

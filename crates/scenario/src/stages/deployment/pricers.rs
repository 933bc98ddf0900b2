//! The deployment objective's parallel plans and step pricers (split from `mod.rs`, no change):
//! the plan of a rank on either side of a layout, the graph options, and one step pricer per
//! layout (keyed by `PricerKey`), each with the engine's MoE exchange.

use super::{options, step_graph_options, DeploymentObjective, Knobs, PricerKey};
use crate::stages::scheduler::price::StepPricer;
use tunelab_sim::workload::{GraphOptions, ParallelPlan};

impl DeploymentObjective {
    /// The plan of an engine rank of `tp` chips in an instance of `dp` ranks, placed on the
    /// cluster (or on one node of the chip's system).
    pub(super) fn plan_at(&self, k: &Knobs, tp: u64, dp: u64) -> ParallelPlan {
        self.plan_side(k, tp, dp, false)
    }

    /// `plan_at` on one side of a disaggregated layout: a prefill instance on its own chip
    /// (`deployment.cluster.prefill_device`) takes that system's placement.
    pub(super) fn plan_side(&self, k: &Knobs, tp: u64, dp: u64, prefill: bool) -> ParallelPlan {
        let mut p = self.plan_unpiped(k, tp, dp, prefill);
        if prefill {
            p.pp = k.scale.prefill_pp.max(1);
            // A prefill instance on its own chip takes its DCP and fine-grained TP too.
            if k.scale.pd.is_some() {
                p.dcp = k.scale.prefill_dcp.max(1);
            }
            crate::stages::scale::finegrained::apply(&mut p, &k.scale, tp, dp);
        } else if k.scale.pd.is_none() {
            // A co-located rank's pipeline stages (`scale::pp_serve`).
            p.pp = k.scale.pp.max(1);
        }
        p
    }

    pub(super) fn plan_unpiped(&self, k: &Knobs, tp: u64, dp: u64, prefill: bool) -> ParallelPlan {
        if let Some(p) = self.cluster.as_ref().and_then(|c| c.prefill.as_ref()).filter(|_| prefill) {
            return crate::stages::scale::plan(tp, dp, k.expert_parallel, k.scale.redundant, Some(p.placement));
        }
        let placement = self.cluster.as_ref().map(|c| c.placement).or_else(|| tunelab_sim::topology::Placement::of(&self.device, false).ok());
        let mut p = crate::stages::scale::plan(tp, dp, k.expert_parallel, k.scale.redundant, placement);
        // Decode context parallel: the decode side's (or a colocated engine's) cache sharding.
        if !prefill {
            p.dcp = k.scale.decode_cp.max(1);
        } else if k.scale.pd.is_some() {
            // DCP on a disaggregated prefill instance (`deployment.cluster.prefill_dcp`).
            p.dcp = k.scale.prefill_dcp.max(1);
        }
        crate::stages::scale::finegrained::apply(&mut p, &k.scale, tp, dp);
        p
    }

    pub(super) fn plan(&self, k: &Knobs) -> ParallelPlan {
        self.plan_at(k, k.tp, k.scale.dp)
    }

    pub(super) fn opts(&self, k: &Knobs) -> GraphOptions {
        let mut o = step_graph_options(&self.spec, &self.host, &self.model, self.moe_imbalance, k.precision, k.graph_launch);
        // An OM model on an NZ-only cube runs ATC's TransData around its matmuls (offline.rs).
        o.om_nz_transdata = super::offline::om_nz_transdata(&o, &self.device);
        o
    }

    pub(super) fn pricer(&mut self, k: &Knobs) -> &mut StepPricer {
        let (tp, dp) = (k.tp, k.scale.dp);
        self.pricer_at(k, tp, dp, false)
    }

    /// The key of the step pricer `pricer_at` keeps for these knobs. One pricer per layout
    /// whatever the number of draft tokens (see `pricer_at`).
    pub(super) fn pricer_key(&self, k: &Knobs, tp: u64, dp: u64, prefill: bool) -> PricerKey {
        // A pipelined prefill instance prices one stage's layers: its own pricer per depth.
        let pp = if prefill { k.scale.prefill_pp.max(1) } else { self.colocated_pp(k) };
        let dcp = if prefill { k.scale.prefill_dcp.max(1) } else { k.scale.decode_cp.max(1) };
        (k.precision, tp, k.expert_parallel, dp, k.scale.redundant, prefill, k.spec_k.min(1) + 2 * (pp - 1), options::collectives_pre_expanded(&self.spec, &self.host, k.graph_launch), dcp, self.mc2_capacity(k, tp), (k.scale.lmhead_tp, k.scale.embed_tp))
    }

    /// The MC2 token capacity of a step of these knobs on a rank of `tp` chips
    /// (`options::mc2_capacity`: the release's capture where the engine ties them).
    pub(super) fn mc2_capacity(&self, k: &Knobs, tp: u64) -> u64 {
        options::mc2_capacity(&self.spec, &self.host, k.batch, k.spec_k, k.max_tokens, k.graph_launch, tp)
    }

    /// The step pricer of a rank of `tp` chips in `dp` ranks (`prefill`: a disaggregated
    /// prefill instance's, kept apart from the decode side's).
    pub(super) fn pricer_at(&mut self, k: &Knobs, tp: u64, dp: u64, prefill: bool) -> &mut StepPricer {
        let plan = self.plan_side(k, tp, dp, prefill);
        let mut opts = self.opts(k);
        // A heterogeneous layout's prefill side prices on its own chip (and memo: the operator
        // memo is one chip's).
        let other = self.cluster.as_ref().and_then(|c| c.prefill.as_ref()).filter(|_| prefill).map(|p| &p.device);
        // The engine's MoE exchange per step, on the side's chip generation.
        opts.moe_comm = options::moe_comm(&self.spec, other.unwrap_or(&self.device), &self.model, self.mc2_capacity(k, tp));
        let (model, device, mode, host) = (&self.model, other.unwrap_or(&self.device), self.mode, self.host);
        // An engine that reads each sequence's whole KV allocation (torchair's fixed cache):
        // the static batch allocates prompt plus output; the scheduler the longest request.
        let allocated = options::allocated_ctx(&self.spec, &host, model, self.input + self.output, || self.reqs.iter().map(|r| r.input + r.output).max().unwrap_or(0));
        let (spec, memo) = (&self.spec, &self.memo);
        let spec_k = k.spec_k;
        // One pricer per layout whatever the number of draft tokens: the target's step shapes
        // and the draft's are the same for every k (verify attention is keyed by its k + 1
        // positions), so only the setting is swapped (`serving_features::stage::retune`).
        let key = self.pricer_key(k, tp, dp, prefill);
        let pipeline = if prefill { 1 } else { self.colocated_pp(k) };
        let p = self.pricers.entry(key).or_insert_with(|| {
            let mut p = StepPricer::new(model.clone(), device.clone(), plan, opts, mode, host);
            p.allocated_ctx = allocated;
            p.pipeline = pipeline;
            // Checked in setup (`serving_features::stage::extend`), so this cannot fail here.
            p.spec = crate::stages::serving_features::stage::spec_pricing(model, device, spec, k.spec_k, plan, opts, mode, host).ok().flatten();
            if other.is_none() {
                p.share_memo(memo);
            }
            p
        });
        if let Some(sp) = p.spec.as_mut() {
            if sp.k != spec_k {
                crate::stages::serving_features::stage::retune(spec, spec_k, sp);
            }
        }
        p
    }
}

//! Where each collective runs (issue 22, section 1): a serving deployment's ranks are laid out
//! over dies, packages, nodes and (on Atlas A3) a SuperPOD, and every collective of the graph is
//! priced on the slowest link its group crosses.
//!
//! Rank order, as vLLM and HCCL number them: tensor-parallel ranks fastest, then data-parallel
//! ranks; the expert-parallel group of wide EP is the whole tp x dp world. A group of `degree`
//! consecutive ranks stays
//! - inside one package (the 910C's two dies, `Link::DieToDie`) when it fits one,
//! - inside one node (HCCS, `Link::Hccs`) when it fits `node_chips`,
//! - else across nodes: over the SuperPOD fabric (`Link::SuperPod`, an HCCS-class UB network
//!   every die reaches at the same rate) when the deployment sits in one, else RoCE
//!   (`Link::InterNode`).
//!
//! All-to-all across RoCE nodes: each rank's traffic to peers in its own node goes over HCCS
//! while the traffic to other nodes goes through the NIC at the same time, so the slow part
//! (the (p - g) / p of the data bound for other nodes, g ranks per node) sets the pace; the op
//! is priced on RoCE with that share of the bytes. Across a SuperPOD the fabric is one flat
//! network, so the whole exchange runs at its rate. Either way a cross-node all-to-all is issued
//! to every peer at once (HCCL's cross-node all-to-all, vLLM-Ascend's MC2 dispatch/combine), so
//! it pays ceil(log2 p) latency steps (`CommAlgorithm::Mesh`), not the ring's p - 1. Other collectives that cross nodes (an
//! all-reduce of a TP group wider than a node) are priced whole on the slowest link, as the
//! training stage does.

use crate::device::Device;
use crate::op::{CommAlgorithm, CommKind, Link, Op};
use crate::workload::{GraphOp, ParallelPlan};
use serde::{Deserialize, Serialize};

/// How the deployment's chips sit in the machine room.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Placement {
    /// NPUs (dies) per node.
    pub node_chips: u32,
    /// Dies per package (2 on the 910C).
    pub dies_per_package: u32,
    /// The nodes are joined by a SuperPOD fabric (else RoCE).
    pub superpod: bool,
}

impl Placement {
    /// The placement of a deployment on `d`'s nodes; `superpod` asks for the SuperPOD fabric
    /// (an error when the chip's system has none).
    pub fn of(d: &Device, superpod: bool) -> Result<Placement, String> {
        if superpod && d.superpod_gbs <= 0.0 {
            return Err(format!("{} nodes have no SuperPOD fabric (superpod_gbs = 0 in its profile): use the RoCE network", d.name));
        }
        Ok(Placement { node_chips: d.node_chips.max(1), dies_per_package: d.dies_per_package.max(1), superpod })
    }

    /// The link a group of `degree` consecutive ranks crosses, each rank `inner` ranks apart.
    pub fn group_link(&self, inner: u64, degree: u64) -> Link {
        let span = inner.saturating_mul(degree);
        if span <= 1 {
            Link::Hccs
        } else if self.dies_per_package > 1 && span <= self.dies_per_package as u64 {
            Link::DieToDie
        } else if span <= self.node_chips as u64 {
            Link::Hccs
        } else if self.superpod {
            Link::SuperPod
        } else {
            Link::InterNode
        }
    }

    /// Nodes a deployment of `chips` NPUs occupies.
    pub fn nodes(&self, chips: u64) -> u64 {
        chips.div_ceil(self.node_chips.max(1) as u64)
    }
}

/// The group a serving collective runs over, by the graph's naming (`tp.` / `.tp.` for the
/// tensor-parallel group, `.ep.` for the expert-parallel group): (stride, degree).
fn group(name: &str, plan: &ParallelPlan) -> Option<(u64, u64)> {
    if name.contains(".ep.") {
        Some((1, plan.ep))
    } else if name.starts_with("ftp.lmhead.") {
        // Fine-grained TP groups are DP ranks, tp apart.
        Some((plan.tp.max(1), plan.lmhead_tp))
    } else if name.starts_with("ftp.embed.") {
        Some((plan.tp.max(1), plan.embed_tp))
    } else if name.starts_with("pp.") {
        // Neighbouring pipeline stages sit tp ranks apart (vLLM's rank order puts TP innermost).
        Some((plan.tp.max(1), 2))
    } else if name.starts_with("tp.") || name.contains(".tp.") {
        Some((1, plan.tp))
    } else {
        None
    }
}

/// Sets the link of every collective of an inference graph from the plan's placement (no
/// placement: the graph keeps HCCS, as a single node). See the module notes for the all-to-all
/// across RoCE nodes.
pub fn assign_links(ops: &mut [GraphOp], plan: &ParallelPlan) {
    let Some(place) = plan.placement else { return };
    for o in ops.iter_mut() {
        let Some((inner, degree)) = group(&o.name, plan) else { continue };
        if let Op::MoeComm { link, tokens, ranks, .. } = &mut o.op {
            // A dispatch or combine prices its own share leaving the rank (`cost::moe_comm`);
            // across RoCE nodes only the copies bound for other nodes cross the network (the
            // rest go over the node's HCCS at the same time), as for the all-to-all below.
            let l = place.group_link(inner, degree);
            *link = l;
            if l == Link::InterNode && *ranks > 1 {
                let p = *ranks;
                let g = (place.node_chips as u64).min(p);
                *tokens = ((*tokens as f64) * (p - g) as f64 / (p - 1) as f64).ceil().max(1.0) as u64;
            }
            continue;
        }
        if let Op::Comm { kind, bytes, ranks, link, algorithm } = &mut o.op {
            let l = place.group_link(inner, degree);
            *link = l;
            if matches!(l, Link::InterNode | Link::SuperPod) && *kind == CommKind::AllToAll {
                // Across nodes the exchange goes to every peer at once (module notes).
                *algorithm = CommAlgorithm::Mesh;
            }
            if l == Link::InterNode && *kind == CommKind::AllToAll && *ranks > 1 {
                let p = *ranks;
                let g = (place.node_chips as u64).min(p);
                // Ring all-to-all moves (p - 1) / p of `bytes`; only (p - g) / p leaves the node.
                *bytes = ((*bytes as f64) * (p - g) as f64 / (p - 1) as f64).ceil() as u64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a3(superpod: bool) -> Placement {
        Placement { node_chips: 16, dies_per_package: 2, superpod }
    }

    #[test]
    fn groups_land_on_the_link_they_cross() {
        let p = a3(false);
        assert_eq!(p.group_link(1, 2), Link::DieToDie);
        assert_eq!(p.group_link(1, 16), Link::Hccs);
        assert_eq!(p.group_link(1, 32), Link::InterNode);
        assert_eq!(a3(true).group_link(1, 32), Link::SuperPod);
        let a2 = Placement { node_chips: 8, dies_per_package: 1, superpod: false };
        assert_eq!(a2.group_link(1, 2), Link::Hccs);
        assert_eq!(a2.group_link(1, 16), Link::InterNode);
        assert_eq!(a2.nodes(16), 2);
    }
}

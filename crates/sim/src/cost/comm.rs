//! Collectives over HCCS, between nodes, or PCIe (S2 link figures): the classic alpha-beta
//! costs. Ring: all-reduce moves 2(p-1)/p of the data over 2(p-1) steps; all-gather and
//! reduce-scatter (p-1)/p over p-1 steps; all-to-all (p-1)/p of the data over p-1 exchanges.
//! Tree all-reduce: 2 ceil(log2 p) latency steps, each moving the whole buffer.
//!
//! Inside an A2 node the HCCS links form a full mesh (`hccs_links` per NPU, one to each peer),
//! so a group of n ranks reaches (n - 1) / links of `hccs_gbs` (op-limulidae-collectives-910b:
//! 2 / 4 / 8 cards measure 18 / 45 / 126 GB/s bus bandwidth, 15-18 GB/s per link used).
//!
//! On that mesh HCCL's algorithm is Mesh (CANN HCCL user guide, "Mesh": every NPU reads or
//! writes each peer's share over that peer's link at once, O(1) in the ranks; the intra-server
//! algorithm follows the topology and cannot be configured). How many latency steps a
//! collective pays depends on where its task list is built (HCCL_OP_EXPANSION_MODE, CANN
//! environment-variable reference: by default a static-shape graph's collectives are expanded
//! on the device when the graph is compiled, a dynamic-shape graph's and single-operator
//! mode's on the host at every call). Built per call, the tasks to the p - 1 peers are issued
//! one after another, priced as the ring's 2(p - 1) steps of an all-reduce (`Ring`, the
//! default); pre-expanded in a compiled static graph they run as the mesh's two
//! (`CommAlgorithm::Mesh`, chosen by the graph builder for such graphs: torchair's GE graphs).
//! The bytes, and so the bandwidth term, are the same either way.
//!
//! Alpha-beta per algorithm: time = launch + steps x per-step latency + bytes moved / (link
//! rate x sustained efficiency). The per-step latency is HCCL's (notify record/wait plus the
//! SDMA issue, `hccs_latency_us`), not the wire's; the sustained fraction of the HCCS rate is
//! `hccs_efficiency`, a kernel-library field (assets/kernels: HCCL's ring as frameworks call it,
//! fitted to the 8-rank all-reduce sweep of set 2; a hand-written kernel's to its own row): the
//! chip profile keeps the link rate and latency. `collective_us`
//! is the function the serving and training models call (MoE all-to-all included).

use super::{finish, Raw, COMM, LAUNCH};
use crate::device::Device;
use crate::estimate::{Estimate, Infeasible};
use crate::op::{CommAlgorithm, CommKind, Link, Op};
use crate::tiling::Tiling;

/// Bandwidth (GB/s) and latency (us) of a link on this device.
pub fn link(d: &Device, l: Link) -> (f64, f64, &'static str) {
    match l {
        Link::Hccs => (d.hccs_gbs, d.hccs_latency_us, "HCCS"),
        Link::InterNode => (d.internode_gbs, d.internode_latency_us, "inter-node"),
        Link::Pcie => (d.pcie_gbs, d.pcie_latency_us, "PCIe"),
        Link::DieToDie => (d.die_link_gbs, d.die_link_latency_us, "die-to-die"),
        Link::SuperPod => (d.superpod_gbs, d.superpod_latency_us, "SuperPOD fabric"),
    }
}

/// Steps and bytes moved per rank of one collective (alpha and beta counts).
pub fn steps_and_bytes(kind: CommKind, algorithm: CommAlgorithm, bytes: f64, ranks: u64) -> (f64, f64) {
    let p = ranks as f64;
    let data = bytes;
    let steps_log = libm::ceil(libm::log2(p));
    match (kind, algorithm) {
        (CommKind::AllReduce, CommAlgorithm::Ring) => (2.0 * (p - 1.0), 2.0 * (p - 1.0) / p * data),
        (CommKind::AllToAll, CommAlgorithm::Mesh) => (steps_log, (p - 1.0) / p * data),
        (CommKind::AllReduce, CommAlgorithm::Tree) => (2.0 * steps_log, 2.0 * steps_log * data),
        // HCCL's Mesh: reduce-scatter then all-gather, each one step to every peer at once.
        (CommKind::AllReduce, CommAlgorithm::Mesh) => (2.0, 2.0 * (p - 1.0) / p * data),
        (CommKind::AllGather | CommKind::ReduceScatter, CommAlgorithm::Ring) => (p - 1.0, (p - 1.0) / p * data),
        (CommKind::AllGather | CommKind::ReduceScatter, CommAlgorithm::Tree) => (steps_log, (p - 1.0) / p * data),
        (CommKind::AllGather | CommKind::ReduceScatter, CommAlgorithm::Mesh) => (1.0, (p - 1.0) / p * data),
        (CommKind::AllToAll, _) => (p - 1.0, (p - 1.0) / p * data),
    }
}

/// Whether a group of `ranks` on link `l` sits on a full mesh: inside an A2 node every NPU has
/// its own HCCS link to each peer (`hccs_links` >= ranks - 1); inside an A3 node every die
/// reaches every peer through the node's UB switches (`hccs_switched`).
pub fn full_mesh(d: &Device, l: Link, ranks: u64) -> bool {
    l == Link::Hccs && (d.hccs_switched >= 0.5 || (d.hccs_links > 1 && ranks.saturating_sub(1) <= d.hccs_links as u64))
}

/// Sustained bytes per microsecond and per-step latency of a link (efficiency applied; `aiv`:
/// the AIV row kernels' share on the HCCS-class links instead of HCCL's).
fn rate(d: &Device, l: Link, aiv: bool) -> (f64, f64) {
    let (gbs, lat, _) = link(d, l);
    // The die-to-die and SuperPOD links run the same HCCS/UB protocol as inside a node.
    let eff = match l {
        Link::Hccs | Link::DieToDie | Link::SuperPod if aiv => d.aiv_link_efficiency,
        Link::Hccs | Link::DieToDie | Link::SuperPod => d.hccs_efficiency,
        Link::InterNode => d.internode_efficiency,
        Link::Pcie => 1.0,
    };
    (gbs * 1.0e3 * eff, lat)
}

/// Time in microseconds of one collective of `bytes` (the full logical tensor) over `ranks`
/// devices, launch included; 0 for one rank or no data. Errors name a missing link.
pub fn collective_us(d: &Device, kind: CommKind, bytes: u64, ranks: u64, l: Link, algorithm: CommAlgorithm) -> Result<f64, Infeasible> {
    let op = Op::Comm { kind, bytes, ranks, link: l, algorithm };
    estimate(&op, &Tiling::Default, d).map(|e| e.time_us)
}

/// MoE token dispatch (or combine): an all-to-all of `bytes` over `ranks` experts' devices.
pub fn all_to_all_us(d: &Device, bytes: u64, ranks: u64, l: Link) -> Result<f64, Infeasible> {
    collective_us(d, CommKind::AllToAll, bytes, ranks, l, CommAlgorithm::Ring)
}

/// `Op::Comm` entry point.
pub fn estimate(op: &Op, tiling: &Tiling, d: &Device) -> Result<Estimate, Infeasible> {
    estimate_as(op, tiling, d, false)
}

/// The wire part of a MoE row kernel (`cost::moe_comm`): the collective's alpha-beta cost at
/// the AIV kernels' sustained share of the link (`aiv_link_efficiency`).
pub fn estimate_aiv(op: &Op, d: &Device) -> Result<Estimate, Infeasible> {
    estimate_as(op, &Tiling::Default, d, true)
}

fn estimate_as(op: &Op, tiling: &Tiling, d: &Device, aiv: bool) -> Result<Estimate, Infeasible> {
    let Op::Comm { kind, bytes, ranks, link: l, algorithm } = *op else {
        return Err(Infeasible::new("not a collective"));
    };
    if *tiling != Tiling::Default {
        return Err(Infeasible::new("a collective has no tiling (use the default)"));
    }
    super::check_dims(&[("ranks", ranks)])?;
    if bytes > 1 << 50 {
        return Err(Infeasible::new(format!("bytes = {bytes} is beyond what the model handles (2^50)")));
    }
    let mut raw = Raw { cores_used: 0, waves: 1, ..Raw::default() };
    if ranks == 1 || bytes == 0 {
        return Ok(finish(&raw, d));
    }
    let (gbs, _, name) = link(d, l);
    if gbs <= 0.0 {
        return Err(Infeasible::new(format!("{} has no {name} link in its profile", d.name)));
    }
    let (mut bw, lat) = rate(d, l, aiv);
    // A full mesh (A2: one HCCS link to each of the node's peers) gives a group of n ranks n - 1
    // of the chip's `hccs_links` links: a TP2 all-reduce crosses one link, not all seven.
    if l == Link::Hccs && d.hccs_links > 1 {
        let links = d.hccs_links as f64;
        bw *= ((ranks as f64 - 1.0).min(links) / links).max(1.0 / links);
    }
    // Mesh reaches every peer over its own link; on a link that is not a full mesh for this
    // group, HCCL runs a ring.
    let algorithm = if algorithm == CommAlgorithm::Mesh && kind != CommKind::AllToAll && !full_mesh(d, l, ranks) { CommAlgorithm::Ring } else { algorithm };
    let (steps, moved) = steps_and_bytes(kind, algorithm, bytes as f64, ranks);
    raw.exposed[COMM] = steps * lat + moved / bw;
    raw.exposed[LAUNCH] = d.launch_comm_us;
    raw.busy = raw.exposed;
    // The bytes each rank sends and receives cross its device memory once each way.
    raw.hbm_bytes = 2.0 * moved;
    Ok(finish(&raw, d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::bundled_device;

    fn us(d: &Device, kind: CommKind, bytes: u64, ranks: u64, algorithm: CommAlgorithm) -> f64 {
        collective_us(d, kind, bytes, ranks, Link::Hccs, algorithm).unwrap()
    }

    #[test]
    fn a_pre_expanded_mesh_pays_two_steps_per_all_reduce_whatever_the_ranks() {
        let d = bundled_device("910B4").unwrap();
        let small = 16 * 1024;
        // Built per call: 2(p - 1) steps; pre-expanded on the A2 full mesh: 2, so the gap is
        // 2(p - 2) steps of HCCL's step latency.
        for p in [2u64, 4, 8] {
            let (ring, mesh) = (us(&d, CommKind::AllReduce, small, p, CommAlgorithm::Ring), us(&d, CommKind::AllReduce, small, p, CommAlgorithm::Mesh));
            let gap = 2.0 * (p as f64 - 2.0) * d.hccs_latency_us;
            assert!((ring - mesh - gap).abs() < 0.5, "p = {p}: ring {ring:.1} us, mesh {mesh:.1} us, expected gap {gap:.1}");
        }
        // The same bytes either way: at 1 GiB the latency is noise.
        let big = 1 << 30;
        let (ring, mesh) = (us(&d, CommKind::AllReduce, big, 8, CommAlgorithm::Ring), us(&d, CommKind::AllReduce, big, 8, CommAlgorithm::Mesh));
        assert!(mesh < ring && (ring - mesh) / ring < 0.01, "ring {ring:.0} us, mesh {mesh:.0} us");
        // An all-gather on the mesh is one step.
        let ag = us(&d, CommKind::AllGather, 8, 8, CommAlgorithm::Mesh);
        assert!((ag - d.launch_comm_us - d.hccs_latency_us).abs() < 0.1, "{ag}");
    }

    #[test]
    fn mesh_needs_a_full_mesh_and_runs_as_a_ring_elsewhere() {
        // The 910C's node is switched (hccs_switched): any in-node group is a full mesh, two
        // steps for an all-reduce against the ring's 2(p - 1), over the same bytes; its dies
        // keep the whole link (no per-peer split). A 4-rank reduce-scatter: one step, not three.
        let d = bundled_device("910C").unwrap();
        let bytes = 64 * 1024;
        let (mesh, ring) = (us(&d, CommKind::AllReduce, bytes, 8, CommAlgorithm::Mesh), us(&d, CommKind::AllReduce, bytes, 8, CommAlgorithm::Ring));
        assert!((ring - mesh - 12.0 * d.hccs_latency_us).abs() < 0.01, "ring {ring} mesh {mesh}");
        let rs = us(&d, CommKind::ReduceScatter, 8, 4, CommAlgorithm::Mesh);
        assert!((rs - d.launch_comm_us - d.hccs_latency_us).abs() < 0.01, "{rs}");
        // Between nodes (RoCE) no mesh, switched or not.
        assert!(full_mesh(&d, Link::Hccs, 16) && !full_mesh(&d, Link::InterNode, 16));
        // Nine ranks do not fit the A2's seven links per NPU either.
        let a2 = bundled_device("910B2").unwrap();
        assert!(!full_mesh(&a2, Link::Hccs, 9) && full_mesh(&a2, Link::Hccs, 8) && !full_mesh(&a2, Link::InterNode, 8));
    }
}

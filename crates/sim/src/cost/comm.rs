//! Collectives over HCCS, between nodes, or PCIe (S2 link figures): the classic alpha-beta
//! costs. Ring: all-reduce moves 2(p-1)/p of the data over 2(p-1) steps; all-gather and
//! reduce-scatter (p-1)/p over p-1 steps; all-to-all (p-1)/p of the data over p-1 exchanges.
//! Tree all-reduce: 2 ceil(log2 p) latency steps, each moving the whole buffer.

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
    }
}

/// `Op::Comm` entry point.
pub fn estimate(op: &Op, tiling: &Tiling, d: &Device) -> Result<Estimate, Infeasible> {
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
    let (gbs, lat, name) = link(d, l);
    if gbs <= 0.0 {
        return Err(Infeasible::new(format!("{} has no {name} link in its profile", d.name)));
    }
    let p = ranks as f64;
    let data = bytes as f64;
    let bw = gbs * 1.0e3; // bytes per microsecond
    let steps_log = libm::ceil(libm::log2(p));
    let (steps, moved) = match (kind, algorithm) {
        (CommKind::AllReduce, CommAlgorithm::Ring) => (2.0 * (p - 1.0), 2.0 * (p - 1.0) / p * data),
        (CommKind::AllReduce, CommAlgorithm::Tree) => (2.0 * steps_log, 2.0 * steps_log * data),
        (CommKind::AllGather | CommKind::ReduceScatter, CommAlgorithm::Ring) => (p - 1.0, (p - 1.0) / p * data),
        (CommKind::AllGather | CommKind::ReduceScatter, CommAlgorithm::Tree) => (steps_log, (p - 1.0) / p * data),
        (CommKind::AllToAll, _) => (p - 1.0, (p - 1.0) / p * data),
    };
    raw.exposed[COMM] = steps * lat + moved / bw;
    raw.exposed[LAUNCH] = d.launch_comm_us;
    raw.busy = raw.exposed;
    // The bytes each rank sends and receives cross its device memory once each way.
    raw.hbm_bytes = 2.0 * moved;
    Ok(finish(&raw, d))
}

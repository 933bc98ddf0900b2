//! Chip profiles as data. Every number in `assets/devices/*.json` carries its source (S1..S4, D,
//! press, assumption; see `ascend-devices.md`); numbers that follow from others (peak TFLOPS,
//! bandwidths) are *derived* here in code so that an edited profile stays consistent.
//!
//! File format (`tunelab-device/1`): `{"schema", "name", "soc", "sources": {id: text},
//! "fields": {field: {"value": v, "source": id, "note"?: text}}, "derived": {...}}`. The
//! `derived` block is informational (written by `to_json`, ignored when loading): each entry is
//! `{"value", "derived": true, "formula"}`.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// How cube and vector units are packaged (S1 `cube_vector_combine`, D `_10_0007`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arch {
    /// 910B: one cube core (AIC) per two vector cores (AIV); FixPipe writes L0C to GM.
    Split,
    /// 910, 310P, 310B: cube and vector in one AI Core.
    Coupled,
}

/// Numbers computed from the documented ones (never read from the file).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    /// Cube MACs per cycle per core for FP16/BF16 (16x16x16 fractal, D `_10_0007`).
    pub macs_per_cycle_fp16: f64,
    pub peak_tflops_fp16: f64,
    pub peak_tflops_fp32: f64,
    pub peak_tops_int8: f64,
    /// Vector FP16 TFLOPS: vector cores x lanes x 2 x vector clock (S2's formula).
    pub vector_tflops_fp16: f64,
    /// Achievable chip-wide HBM bandwidth, GB/s: hbm_peak x hbm_efficiency (S2).
    pub hbm_gbs: f64,
    /// Sum of the per-core GM copy rates, GB/s (S1 rates x cores x clock).
    pub gm_cores_gbs: f64,
    /// Sum of the per-core L2 read rates, GB/s.
    pub l2_read_gbs: f64,
    /// Cube clock in Hz and vector clock in Hz.
    pub cube_hz: f64,
    pub vector_hz: f64,
}

/// One chip profile: plain data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Device {
    pub name: String,
    pub soc: String,
    pub arch: Arch,
    pub cube_cores: u32,
    pub vector_cores: u32,
    pub cube_clock_mhz: f64,
    pub vector_clock_mhz: f64,
    pub l1_bytes: u64,
    pub l0a_bytes: u64,
    pub l0b_bytes: u64,
    pub l0c_bytes: u64,
    pub ub_bytes: u64,
    pub l2_bytes: u64,
    /// Device (HBM / DDR) memory capacity.
    pub memory_bytes: u64,
    /// Per-core copy rates in bytes per cycle (S1 `[AICoreMemoryRates]`).
    pub gm_bytes_per_cycle: f64,
    pub l2_read_bytes_per_cycle: f64,
    pub l2_write_bytes_per_cycle: f64,
    pub l1_to_l0a_bytes_per_cycle: f64,
    pub l1_to_l0b_bytes_per_cycle: f64,
    pub l1_to_ub_bytes_per_cycle: f64,
    pub l0c_out_bytes_per_cycle: f64,
    pub ub_to_gm_bytes_per_cycle: f64,
    /// Chip-wide memory bandwidth (GB/s) and the achievable fraction of it.
    pub hbm_peak_gbs: f64,
    pub hbm_efficiency: f64,
    /// FP16 elements per cycle per vector core (S2: 128 lanes).
    pub vector_lanes_fp16: f64,
    /// Fixed per-launch costs (S2, marked "to be confirmed" there).
    pub launch_matmul_us: f64,
    pub launch_vector_us: f64,
    pub launch_comm_us: f64,
    /// Interconnects: GB/s one way and latency in us (0 GB/s: the link is absent).
    pub hccs_gbs: f64,
    pub hccs_latency_us: f64,
    pub internode_gbs: f64,
    pub internode_latency_us: f64,
    pub pcie_gbs: f64,
    pub pcie_latency_us: f64,
    /// Power envelope (approximate, editable) and the idle share of it.
    pub power_tdp_w: f64,
    pub power_idle_w: f64,
    /// Share of the dynamic power drawn by the cube, vector and memory system at full load.
    pub power_share_cube: f64,
    pub power_share_vector: f64,
    pub power_share_memory: f64,
    /// Host dispatch in eager mode (PyTorch / aclnn): host time per framework kernel launch,
    /// and the extra host time of a fused-attention call (its tiling is computed on the host).
    pub eager_host_us_per_launch: f64,
    pub eager_host_us_attention: f64,
    /// Graph mode: one captured-graph launch per step on the host (the per-operator device-side
    /// costs `launch_*_us` remain).
    pub graph_launch_us: f64,
    /// Cube pipeline hand-offs (set_flag / wait_flag), in cube cycles: per MMAD issue (K step),
    /// per L1 panel load (MTE2 -> MTE1), per output base tile drained (cube -> FixPipe).
    pub cube_kstep_sync_cycles: f64,
    pub l1_load_sync_cycles: f64,
    pub fixpipe_sync_cycles: f64,
    /// Vector kernels: hand-off cycles per UB tile (MTE2 -> V -> MTE3 flags, loop control) and
    /// the sustained fraction of the vector lanes' peak.
    pub vector_tile_sync_cycles: f64,
    pub vector_efficiency: f64,
    /// Flash attention on split chips: cube <-> vector hand-off per KV block (S through GM/L2
    /// to the AIVs, cross-core flags, P back), cube cycles.
    pub fa_handoff_cycles: f64,
    /// Sustained fraction of the HCCS link rate a collective achieves.
    pub hccs_efficiency: f64,
    /// Sustained fraction of a link's rate the AIV kernels that move MoE rows over the HCCL
    /// windows themselves reach (DeepEP-Ascend, MC2; `cost::moe_comm`).
    pub aiv_link_efficiency: f64,
    /// DeepEP-Ascend normal mode: the time each peer adds to a cross-rank wait that follows
    /// host work on every rank (the latest peer's arrival; `cost::moe_comm`), us per peer.
    pub normal_peer_wait_us: f64,
    /// Share of the HBM peak the library's grouped matmul sustains on its read stream (each
    /// touched expert's weight once; `cost::moe_comm`), where `hbm_efficiency` is the all-core
    /// copy's (half writes).
    pub grouped_matmul_hbm_efficiency: f64,
    /// FP32 MACs per cube cycle as a fraction of the FP16 MACs (16x16x16 = 4096): what the
    /// vendor's FP32 peak test reaches relative to its FP16 one. A chip fact (S2 lists the A2/A3
    /// FP32 cube rate at about a quarter of FP16, not the half the C0 = 8 fractal alone gives).
    pub cube_fp32_rate: f64,
    /// INT4 MACs per cube cycle as a multiple of the FP16 MACs: 4 where the s4 fractal
    /// (16x64x16, C0 = 64) issues at the FP16 rate (310P), 2 where INT4 runs at the INT8 rate
    /// (Atlas A2/A3: CANN's AMCT documents no INT4 performance benefit there). A chip fact.
    pub cube_int4_rate: f64,
    /// HCCS links per NPU that the chip's `hccs_gbs` is spread over: on the A2's 8-NPU full mesh
    /// each NPU reaches each peer over its own link (7), so a collective over n ranks of the node
    /// uses n - 1 of them; 1 where a switch gives every group the whole rate.
    pub hccs_links: u32,
    /// 1 when the node's NPUs reach each other through switches (Atlas A3's UB CLOS), so any
    /// in-node group is a full mesh for HCCL's Mesh algorithm; 0 for point-to-point links.
    pub hccs_switched: f64,
    /// The system around the chip (issue 22): NPUs per node (8 on Atlas 800 A2, 16 dies on
    /// Atlas 800 A3), dies per package (2 on the 910C: each die is one NPU to software), the
    /// die-to-die link inside a package (0 GB/s: none) and the SuperPOD fabric that joins
    /// nodes at HCCS-class rates (0 GB/s: nodes meet over RoCE only). `topology` picks the
    /// link each collective crosses from these.
    pub node_chips: u32,
    pub dies_per_package: u32,
    pub die_link_gbs: f64,
    pub die_link_latency_us: f64,
    pub superpod_gbs: f64,
    pub superpod_latency_us: f64,
    /// Sustained share of the RoCE line rate a collective reaches between nodes.
    pub internode_efficiency: f64,
    /// The kernel library whose per-family efficiencies the kernel fields come from
    /// (assets/kernels/libraries.json; `kernel_library` in the profile).
    #[serde(default)]
    pub kernel_library: String,
    /// Declared physical bounds `[min, max]` of fitted / fittable fields (from the file).
    #[serde(default)]
    pub bounds: BTreeMap<String, [f64; 2]>,
    /// Field name -> source id, as in the file.
    #[serde(default)]
    pub sources: BTreeMap<String, String>,
    /// Source id -> description.
    #[serde(default)]
    pub source_texts: BTreeMap<String, String>,
    #[serde(default)]
    pub derived: Derived,
}

/// One numeric field: name, kind (`u` positive integer, `f` positive, `z` >= 0, `r` fraction
/// in (0, 1]), and the physically plausible range any profile must respect (issue 13 #10: a
/// 1e308 W chip or a 5e-324 GB/s memory is refused at load, naming the field). `new` fields
/// were added after the first profile format; a profile without them (an old shared link)
/// takes them from the bundled profile of the same name, else from 910B2 (a migration).
struct Field {
    name: &'static str,
    kind: char,
    min: f64,
    max: f64,
    new: bool,
}

const fn f(name: &'static str, kind: char, min: f64, max: f64) -> Field {
    Field { name, kind, min, max, new: false }
}

const fn n(name: &'static str, kind: char, min: f64, max: f64) -> Field {
    Field { name, kind, min, max, new: true }
}

const KI: f64 = 1024.0;
const MI: f64 = 1024.0 * 1024.0;
const GI: f64 = 1024.0 * 1024.0 * 1024.0;

/// Every numeric field in file order, with its plausible range (validation limits: wide
/// enough for any NPU from an edge SoC to a future data-centre part, narrow enough to keep
/// every derived rate finite and non-zero).
const NUMERIC: &[Field] = &[
    f("cube_cores", 'u', 1.0, 4096.0), f("vector_cores", 'u', 1.0, 8192.0),
    f("cube_clock_mhz", 'f', 50.0, 10_000.0), f("vector_clock_mhz", 'f', 50.0, 10_000.0),
    f("l1_bytes", 'u', 4.0 * KI, 1.0 * GI), f("l0a_bytes", 'u', 1.0 * KI, 256.0 * MI),
    f("l0b_bytes", 'u', 1.0 * KI, 256.0 * MI), f("l0c_bytes", 'u', 1.0 * KI, 256.0 * MI),
    f("ub_bytes", 'u', 4.0 * KI, 1.0 * GI), f("l2_bytes", 'u', 1.0, 1024.0 * GI),
    f("memory_bytes", 'u', 1.0 * MI, 1024.0 * 1024.0 * GI), f("gm_bytes_per_cycle", 'f', 0.5, 65_536.0),
    f("l2_read_bytes_per_cycle", 'f', 0.5, 65_536.0), f("l2_write_bytes_per_cycle", 'f', 0.5, 65_536.0),
    f("l1_to_l0a_bytes_per_cycle", 'f', 0.5, 65_536.0), f("l1_to_l0b_bytes_per_cycle", 'f', 0.5, 65_536.0),
    f("l1_to_ub_bytes_per_cycle", 'f', 0.5, 65_536.0), f("l0c_out_bytes_per_cycle", 'f', 0.5, 65_536.0),
    f("ub_to_gm_bytes_per_cycle", 'f', 0.5, 65_536.0), f("hbm_peak_gbs", 'f', 0.1, 1.0e6),
    f("hbm_efficiency", 'r', 0.05, 1.0), f("vector_lanes_fp16", 'f', 1.0, 65_536.0),
    f("launch_matmul_us", 'z', 0.0, 100_000.0), f("launch_vector_us", 'z', 0.0, 100_000.0),
    f("launch_comm_us", 'z', 0.0, 100_000.0), f("hccs_gbs", 'z', 0.0, 1.0e6),
    f("hccs_latency_us", 'z', 0.0, 100_000.0), f("internode_gbs", 'z', 0.0, 1.0e6),
    f("internode_latency_us", 'z', 0.0, 100_000.0), f("pcie_gbs", 'z', 0.0, 1.0e6),
    f("pcie_latency_us", 'z', 0.0, 100_000.0), f("power_tdp_w", 'f', 0.1, 100_000.0),
    f("power_idle_w", 'z', 0.0, 100_000.0), f("power_share_cube", 'r', 0.0, 1.0),
    f("power_share_vector", 'r', 0.0, 1.0), f("power_share_memory", 'r', 0.0, 1.0),
    n("eager_host_us_per_launch", 'z', 0.0, 10_000.0), n("eager_host_us_attention", 'z', 0.0, 100_000.0),
    n("graph_launch_us", 'z', 0.0, 1.0e6), n("cube_kstep_sync_cycles", 'z', 0.0, 1.0e6),
    n("l1_load_sync_cycles", 'z', 0.0, 1.0e6), n("fixpipe_sync_cycles", 'z', 0.0, 1.0e6),
    n("vector_tile_sync_cycles", 'z', 0.0, 1.0e6), n("vector_efficiency", 'r', 0.01, 1.0),
    n("fa_handoff_cycles", 'z', 0.0, 1.0e7), n("hccs_efficiency", 'r', 0.01, 1.0), n("aiv_link_efficiency", 'r', 0.01, 1.0),
    n("normal_peer_wait_us", 'z', 0.0, 100_000.0), n("grouped_matmul_hbm_efficiency", 'r', 0.05, 1.0),
    n("node_chips", 'u', 1.0, 4096.0), n("dies_per_package", 'u', 1.0, 64.0),
    n("die_link_gbs", 'z', 0.0, 1.0e6), n("die_link_latency_us", 'z', 0.0, 100_000.0),
    n("superpod_gbs", 'z', 0.0, 1.0e6), n("superpod_latency_us", 'z', 0.0, 100_000.0),
    n("internode_efficiency", 'r', 0.01, 1.0), n("cube_fp32_rate", 'r', 0.01, 1.0),
    n("cube_int4_rate", 'f', 0.01, 8.0),
    n("hccs_links", 'u', 1.0, 64.0), n("hccs_switched", 'z', 0.0, 1.0),
];

/// The plausible range of a numeric profile field (None: not a numeric field).
pub fn field_range(name: &str) -> Option<(f64, f64)> {
    NUMERIC.iter().find(|x| x.name == name).map(|x| (x.min, x.max))
}

/// Names of the numeric profile fields, in file order.
pub fn numeric_fields() -> Vec<&'static str> {
    NUMERIC.iter().map(|x| x.name).collect()
}

impl Device {
    /// Parses a profile; a malformed or incomplete one is an error naming the field. The last
    /// few texts parsed on this thread are remembered (by their whole text): a fit prices every
    /// measurement row on the same inline profile, and parsing it once per row was most of
    /// `tunelab calibrate`'s time. Pure: the same text gives the same result either way.
    pub fn from_json(text: &str) -> Result<Device, String> {
        const KEPT: usize = 4;
        thread_local! {
            static LAST: std::cell::RefCell<Vec<(String, Result<Device, String>)>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        if text.len() > 1 << 20 {
            return Device::from_json_once(text);
        }
        if let Some(hit) = LAST.with(|l| l.borrow().iter().find(|(t, _)| t == text).map(|(_, d)| d.clone())) {
            return hit;
        }
        let d = Device::from_json_once(text);
        LAST.with(|l| {
            let mut l = l.borrow_mut();
            if l.len() >= KEPT {
                drop(l.remove(0));
            }
            l.push((text.to_string(), d.clone()));
        });
        d
    }

    fn from_json_once(text: &str) -> Result<Device, String> {
        let root: Value = serde_json::from_str(text).map_err(|e| format!("device profile is not valid JSON: {e}"))?;
        let obj = root.as_object().ok_or("device profile must be a JSON object")?;
        let name = str_field(obj, "name")?;
        let soc = obj.get("soc").and_then(Value::as_str).unwrap_or(&name).to_string();
        let fields = obj.get("fields").and_then(Value::as_object)
            .ok_or("device profile: field 'fields' is missing or not an object")?;
        let mut sources = BTreeMap::new();
        let mut bounds = BTreeMap::new();
        let mut nums = [0.0f64; NUMERIC.len()];
        let mut fallback: Option<Device> = None;
        // Kernel-library fields come from the library the profile names (assets/kernels),
        // unless the profile's own fields still carry them (an old link, a calibrated profile).
        let (lib_name, lib_fields, lib_sources) = crate::kernels::resolve(obj.get("kernel_library"), obj.get("kernel_libraries"))?;
        let mut lib_used = false;
        for (i, fd) in NUMERIC.iter().enumerate() {
            let key = fd.name;
            let from_lib = crate::kernels::KERNEL_FIELDS.contains(&key) && !fields.contains_key(key);
            let fields = if from_lib { &lib_fields } else { fields };
            if fd.new && !fields.contains_key(key) {
                // Migration: an older profile lacks this field; take the bundled value.
                if fallback.is_none() {
                    fallback = Some(migration_base(&name, &soc)?);
                }
                let base = fallback.as_ref().map_or(0.0, |b| b.numeric(key));
                nums[i] = base;
                let from = fallback.as_ref().map_or("910B2", |b| b.name.as_str());
                sources.insert(key.to_string(), format!("default:{from}"));
                continue;
            }
            let (v, src) = entry(fields, key)?;
            let x = v.as_f64().ok_or_else(|| format!("device field '{key}': value must be a number"))?;
            let ok = match fd.kind {
                'u' => x >= 1.0 && x.fract() == 0.0,
                'f' => x.is_finite() && x > 0.0,
                'z' => x.is_finite() && x >= 0.0,
                _ => x.is_finite() && x > 0.0 && x <= 1.0,
            };
            if !ok {
                let want = match fd.kind {
                    'u' => "a positive integer",
                    'f' => "a positive number",
                    'z' => "a number >= 0",
                    _ => "a fraction in (0, 1]",
                };
                return Err(format!("device field '{key}': value must be {want}, got {x}"));
            }
            if !(fd.min..=fd.max).contains(&x) {
                return Err(format!("device field '{key}': value {x} is not physically plausible; it must be within [{}, {}]", fd.min, fd.max));
            }
            // Declared bounds of a fitted / fittable parameter: inside the plausible range, and
            // the value inside them.
            if let Some(o) = fields.get(key).and_then(Value::as_object) {
                let lo = o.get("min").map(|v| v.as_f64().ok_or_else(|| format!("device field '{key}': min must be a number")));
                let hi = o.get("max").map(|v| v.as_f64().ok_or_else(|| format!("device field '{key}': max must be a number")));
                match (lo.transpose()?, hi.transpose()?) {
                    (None, None) => {}
                    (Some(lo), Some(hi)) => {
                        if !(fd.min <= lo && lo <= hi && hi <= fd.max) {
                            return Err(format!("device field '{key}': bounds [{lo}, {hi}] must be ordered and within [{}, {}]", fd.min, fd.max));
                        }
                        if !(lo..=hi).contains(&x) {
                            return Err(format!("device field '{key}': value {x} must be within its declared bounds [{lo}, {hi}]"));
                        }
                        bounds.insert(key.to_string(), [lo, hi]);
                    }
                    _ => return Err(format!("device field '{key}': give both min and max, or neither")),
                }
            }
            nums[i] = x;
            if from_lib {
                lib_used = true;
                sources.insert(key.to_string(), format!("{lib_name}:{src}"));
            } else {
                sources.insert(key.to_string(), src);
            }
        }
        let (arch_v, arch_src) = entry(fields, "arch")?;
        let arch = match arch_v.as_str() {
            Some("split") => Arch::Split,
            Some("coupled") => Arch::Coupled,
            _ => return Err("device profile: field 'arch.value' must be \"split\" or \"coupled\"".into()),
        };
        sources.insert("arch".into(), arch_src);
        let mut source_texts = BTreeMap::new();
        if let Some(s) = obj.get("sources").and_then(Value::as_object) {
            for (k, v) in s {
                source_texts.insert(k.clone(), v.as_str().unwrap_or("").to_string());
            }
        }
        if lib_used {
            for (k, v) in &lib_sources {
                source_texts.insert(format!("{lib_name}:{k}"), format!("kernel library '{lib_name}' (assets/kernels/libraries.json): {}", v.as_str().unwrap_or("")));
            }
        }
        let n = |k: &str| nums[NUMERIC.iter().position(|f| f.name == k).unwrap_or(0)];
        let mut d = Device {
            name, soc, arch,
            cube_cores: n("cube_cores") as u32, vector_cores: n("vector_cores") as u32,
            cube_clock_mhz: n("cube_clock_mhz"), vector_clock_mhz: n("vector_clock_mhz"),
            l1_bytes: n("l1_bytes") as u64, l0a_bytes: n("l0a_bytes") as u64,
            l0b_bytes: n("l0b_bytes") as u64, l0c_bytes: n("l0c_bytes") as u64,
            ub_bytes: n("ub_bytes") as u64, l2_bytes: n("l2_bytes") as u64,
            memory_bytes: n("memory_bytes") as u64,
            gm_bytes_per_cycle: n("gm_bytes_per_cycle"),
            l2_read_bytes_per_cycle: n("l2_read_bytes_per_cycle"),
            l2_write_bytes_per_cycle: n("l2_write_bytes_per_cycle"),
            l1_to_l0a_bytes_per_cycle: n("l1_to_l0a_bytes_per_cycle"),
            l1_to_l0b_bytes_per_cycle: n("l1_to_l0b_bytes_per_cycle"),
            l1_to_ub_bytes_per_cycle: n("l1_to_ub_bytes_per_cycle"),
            l0c_out_bytes_per_cycle: n("l0c_out_bytes_per_cycle"),
            ub_to_gm_bytes_per_cycle: n("ub_to_gm_bytes_per_cycle"),
            hbm_peak_gbs: n("hbm_peak_gbs"), hbm_efficiency: n("hbm_efficiency"),
            vector_lanes_fp16: n("vector_lanes_fp16"),
            launch_matmul_us: n("launch_matmul_us"), launch_vector_us: n("launch_vector_us"),
            launch_comm_us: n("launch_comm_us"),
            hccs_gbs: n("hccs_gbs"), hccs_latency_us: n("hccs_latency_us"),
            internode_gbs: n("internode_gbs"), internode_latency_us: n("internode_latency_us"),
            pcie_gbs: n("pcie_gbs"), pcie_latency_us: n("pcie_latency_us"),
            power_tdp_w: n("power_tdp_w"), power_idle_w: n("power_idle_w"),
            power_share_cube: n("power_share_cube"), power_share_vector: n("power_share_vector"),
            power_share_memory: n("power_share_memory"),
            eager_host_us_per_launch: n("eager_host_us_per_launch"),
            eager_host_us_attention: n("eager_host_us_attention"),
            graph_launch_us: n("graph_launch_us"),
            cube_kstep_sync_cycles: n("cube_kstep_sync_cycles"),
            l1_load_sync_cycles: n("l1_load_sync_cycles"),
            fixpipe_sync_cycles: n("fixpipe_sync_cycles"),
            vector_tile_sync_cycles: n("vector_tile_sync_cycles"),
            vector_efficiency: n("vector_efficiency"),
            fa_handoff_cycles: n("fa_handoff_cycles"),
            hccs_efficiency: n("hccs_efficiency"),
            aiv_link_efficiency: n("aiv_link_efficiency"),
            normal_peer_wait_us: n("normal_peer_wait_us"),
            grouped_matmul_hbm_efficiency: n("grouped_matmul_hbm_efficiency"),
            node_chips: n("node_chips") as u32,
            dies_per_package: n("dies_per_package") as u32,
            die_link_gbs: n("die_link_gbs"),
            die_link_latency_us: n("die_link_latency_us"),
            superpod_gbs: n("superpod_gbs"),
            superpod_latency_us: n("superpod_latency_us"),
            internode_efficiency: n("internode_efficiency"),
            cube_fp32_rate: n("cube_fp32_rate"),
            cube_int4_rate: n("cube_int4_rate"),
            hccs_links: n("hccs_links") as u32,
            hccs_switched: n("hccs_switched"),
            bounds, kernel_library: lib_name,
            sources, source_texts, derived: Derived::default(),
        };
        if d.power_idle_w > d.power_tdp_w {
            return Err(format!("device field 'power_idle_w': value {} exceeds 'power_tdp_w' ({})", d.power_idle_w, d.power_tdp_w));
        }
        let shares = d.power_share_cube + d.power_share_vector + d.power_share_memory;
        if shares > 1.0 + 1e-9 {
            return Err(format!("device field 'power_share_memory': the cube, vector and memory shares add up to {shares}, more than 1"));
        }
        d.refresh();
        Ok(d)
    }

    /// A numeric field's value by its file name (0 for an unknown name).
    pub fn numeric(&self, key: &str) -> f64 {
        serde_json::to_value(self).ok().and_then(|v| v.get(key).and_then(Value::as_f64)).unwrap_or(0.0)
    }

    /// Recomputes the derived numbers after an edit of the documented ones.
    pub fn refresh(&mut self) {
        let cube_hz = self.cube_clock_mhz * 1.0e6;
        let vector_hz = self.vector_clock_mhz * 1.0e6;
        let cores = self.cube_cores as f64;
        // 16x16x16 FP16 MACs per cycle per core; FP32 at the chip's `cube_fp32_rate` of that
        // (a 16x8x16 fractal, C0 = 8, issued at a lower rate on the A2/A3 parts), INT8 16x32x16
        // (ascend-devices.md, D `_10_0007`).
        let macs = 4096.0;
        let fp16 = cores * macs * 2.0 * cube_hz / 1.0e12;
        self.derived = Derived {
            macs_per_cycle_fp16: macs,
            peak_tflops_fp16: fp16,
            peak_tflops_fp32: fp16 * self.cube_fp32_rate,
            peak_tops_int8: fp16 * 2.0,
            vector_tflops_fp16: self.vector_cores as f64 * self.vector_lanes_fp16 * 2.0 * vector_hz / 1.0e12,
            hbm_gbs: self.hbm_peak_gbs * self.hbm_efficiency,
            gm_cores_gbs: cores * self.gm_bytes_per_cycle * cube_hz / 1.0e9,
            l2_read_gbs: cores * self.l2_read_bytes_per_cycle * cube_hz / 1.0e9,
            cube_hz,
            vector_hz,
        };
    }

    /// The profile in the file format, derived numbers included (marked `derived: true`).
    pub fn to_json(&self) -> String {
        let full = serde_json::to_value(self).unwrap_or(Value::Null);
        let mut fields = Map::new();
        let mut keys: Vec<&str> = vec!["arch"];
        keys.extend(NUMERIC.iter().map(|f| f.name));
        let lib_prefix = format!("{}:", self.kernel_library);
        for k in keys {
            let v = full.get(k).cloned().unwrap_or(Value::Null);
            let src = self.sources.get(k).cloned().unwrap_or_else(|| "user".into());
            // A value the kernel library supplied stays there (the profile names the library).
            if !self.kernel_library.is_empty() && src.starts_with(&lib_prefix) && crate::kernels::KERNEL_FIELDS.contains(&k) {
                continue;
            }
            let mut e = json!({ "value": v, "source": src });
            if let Some([lo, hi]) = self.bounds.get(k) {
                e["min"] = json!(lo);
                e["max"] = json!(hi);
            }
            fields.insert(k.to_string(), e);
        }
        let d = &self.derived;
        let der = |v: f64, f: &str| json!({ "value": v, "derived": true, "formula": f });
        let out = json!({
            "schema": "tunelab-device/1",
            "name": self.name,
            "soc": self.soc,
            "kernel_library": if self.kernel_library.is_empty() { Value::Null } else { json!(self.kernel_library) },
            "sources": self.source_texts,
            "fields": fields,
            "derived": {
                "peak_tflops_fp16": der(d.peak_tflops_fp16, "cube_cores x 4096 MAC x 2 x cube_clock"),
                "peak_tflops_fp32": der(d.peak_tflops_fp32, "peak_tflops_fp16 x cube_fp32_rate"),
                "peak_tops_int8": der(d.peak_tops_int8, "peak_tflops_fp16 x 2 (16x32x16 fractal)"),
                "vector_tflops_fp16": der(d.vector_tflops_fp16, "vector_cores x vector_lanes_fp16 x 2 x vector_clock"),
                "hbm_gbs": der(d.hbm_gbs, "hbm_peak_gbs x hbm_efficiency"),
                "gm_cores_gbs": der(d.gm_cores_gbs, "cube_cores x gm_bytes_per_cycle x cube_clock"),
                "l2_read_gbs": der(d.l2_read_gbs, "cube_cores x l2_read_bytes_per_cycle x cube_clock"),
            }
        });
        serde_json::to_string_pretty(&out).unwrap_or_default()
    }
}

/// The bundled profile an older profile takes its missing (newer) fields from: the one with
/// the same name or SoC, else 910B2.
fn migration_base(name: &str, soc: &str) -> Result<Device, String> {
    let key = |s: &str| s.trim().to_ascii_lowercase().trim_start_matches("ascend").to_string();
    let pick = BUNDLED.iter().find(|(n, _)| key(n) == key(name) || key(n) == key(soc)).or_else(|| BUNDLED.iter().find(|(n, _)| *n == "910B2"));
    match pick {
        Some((n, text)) => Device::from_json(text).map_err(|e| format!("bundled profile {n}: {e}")),
        None => Err("no bundled profile to migrate from".into()),
    }
}

fn str_field(obj: &Map<String, Value>, key: &str) -> Result<String, String> {
    match obj.get(key).and_then(Value::as_str) {
        Some(s) if !s.trim().is_empty() => Ok(s.to_string()),
        _ => Err(format!("device profile: field '{key}' is missing or not a non-empty string")),
    }
}

/// `fields.<key>` as (value, source); both must be present.
fn entry<'a>(fields: &'a Map<String, Value>, key: &str) -> Result<(&'a Value, String), String> {
    let e = fields.get(key).ok_or_else(|| format!("device field '{key}' is missing"))?;
    let e = e.as_object().ok_or_else(|| format!("device profile: field '{key}' must be an object {{\"value\", \"source\"}}"))?;
    let v = e.get("value").ok_or_else(|| format!("device profile: field '{key}.value' is missing"))?;
    let src = match e.get("source").and_then(Value::as_str) {
        Some(s) if !s.trim().is_empty() => s.to_string(),
        _ => return Err(format!("device profile: field '{key}.source' is missing (every number needs its source)")),
    };
    Ok((v, src))
}

pub(crate) const BUNDLED: &[(&str, &str)] = &[
    ("910B1", crate::json_asset!("../../../assets/devices/910B1.json")),
    ("910B2", crate::json_asset!("../../../assets/devices/910B2.json")),
    ("910B3", crate::json_asset!("../../../assets/devices/910B3.json")),
    ("910B4", crate::json_asset!("../../../assets/devices/910B4.json")),
    ("910B4-64G", crate::json_asset!("../../../assets/devices/910B4-64G.json")),
    ("910C", crate::json_asset!("../../../assets/devices/910C.json")),
    ("910", crate::json_asset!("../../../assets/devices/910.json")),
    ("310P3", crate::json_asset!("../../../assets/devices/310P3.json")),
    ("310B1", crate::json_asset!("../../../assets/devices/310B1.json")),
];

/// Every bundled profile (compiled in, so it works in WebAssembly without a filesystem).
pub fn bundled() -> Vec<Device> {
    BUNDLED.iter().filter_map(|(_, t)| Device::from_json(t).ok()).collect()
}

/// Names of the bundled profiles.
pub fn bundled_names() -> Vec<&'static str> {
    BUNDLED.iter().map(|b| b.0).collect()
}

/// The file text of a bundled profile (case-insensitive name), with every key the file has
/// (declared `min`/`max` bounds included), for calibration.
pub fn bundled_profile_text(name: &str) -> Option<&'static str> {
    let want = name.trim().to_ascii_lowercase();
    let want = want.strip_prefix("ascend").unwrap_or(&want).to_string();
    BUNDLED.iter().find(|(n, _)| n.to_ascii_lowercase() == want).map(|b| b.1)
}

/// One bundled profile by name (case-insensitive; "Ascend910B2" also accepted).
pub fn bundled_device(name: &str) -> Result<Device, String> {
    let want = name.trim().to_ascii_lowercase();
    let want = want.strip_prefix("ascend").unwrap_or(&want);
    for (n, text) in BUNDLED {
        if n.to_ascii_lowercase() == want {
            return Device::from_json(text).map_err(|e| format!("bundled profile {n}: {e}"));
        }
    }
    Err(format!("unknown device '{name}'; bundled: {}", bundled_names().join(", ")))
}

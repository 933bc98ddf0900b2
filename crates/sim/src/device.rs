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
    /// Field name -> source id, as in the file.
    #[serde(default)]
    pub sources: BTreeMap<String, String>,
    /// Source id -> description.
    #[serde(default)]
    pub source_texts: BTreeMap<String, String>,
    #[serde(default)]
    pub derived: Derived,
}

/// (field, unit/kind) of every numeric field in file order; `u` = positive integer count.
const NUMERIC: &[(&str, char)] = &[
    ("cube_cores", 'u'), ("vector_cores", 'u'), ("cube_clock_mhz", 'f'), ("vector_clock_mhz", 'f'),
    ("l1_bytes", 'u'), ("l0a_bytes", 'u'), ("l0b_bytes", 'u'), ("l0c_bytes", 'u'), ("ub_bytes", 'u'),
    ("l2_bytes", 'u'), ("memory_bytes", 'u'), ("gm_bytes_per_cycle", 'f'),
    ("l2_read_bytes_per_cycle", 'f'), ("l2_write_bytes_per_cycle", 'f'),
    ("l1_to_l0a_bytes_per_cycle", 'f'), ("l1_to_l0b_bytes_per_cycle", 'f'),
    ("l1_to_ub_bytes_per_cycle", 'f'), ("l0c_out_bytes_per_cycle", 'f'),
    ("ub_to_gm_bytes_per_cycle", 'f'), ("hbm_peak_gbs", 'f'), ("hbm_efficiency", 'r'),
    ("vector_lanes_fp16", 'f'), ("launch_matmul_us", 'z'), ("launch_vector_us", 'z'),
    ("launch_comm_us", 'z'), ("hccs_gbs", 'z'), ("hccs_latency_us", 'z'), ("internode_gbs", 'z'),
    ("internode_latency_us", 'z'), ("pcie_gbs", 'z'), ("pcie_latency_us", 'z'),
    ("power_tdp_w", 'f'), ("power_idle_w", 'z'), ("power_share_cube", 'r'),
    ("power_share_vector", 'r'), ("power_share_memory", 'r'),
];

impl Device {
    /// Parses a profile; a malformed or incomplete one is an error naming the field.
    pub fn from_json(text: &str) -> Result<Device, String> {
        let root: Value = serde_json::from_str(text).map_err(|e| format!("device profile is not valid JSON: {e}"))?;
        let obj = root.as_object().ok_or("device profile must be a JSON object")?;
        let name = str_field(obj, "name")?;
        let soc = obj.get("soc").and_then(Value::as_str).unwrap_or(&name).to_string();
        let fields = obj.get("fields").and_then(Value::as_object)
            .ok_or("device profile: field 'fields' is missing or not an object")?;
        let mut sources = BTreeMap::new();
        let mut nums = [0.0f64; NUMERIC.len()];
        for (i, (key, kind)) in NUMERIC.iter().enumerate() {
            let (v, src) = entry(fields, key)?;
            let x = v.as_f64().ok_or_else(|| format!("device profile: field '{key}.value' must be a number"))?;
            let ok = match kind {
                'u' => x >= 1.0 && x.fract() == 0.0 && x < 1.0e15,
                'f' => x.is_finite() && x > 0.0,
                'z' => x.is_finite() && x >= 0.0,
                _ => x.is_finite() && x > 0.0 && x <= 1.0,
            };
            if !ok {
                let want = match kind {
                    'u' => "a positive integer",
                    'f' => "a positive number",
                    'z' => "a number >= 0",
                    _ => "a fraction in (0, 1]",
                };
                return Err(format!("device profile: field '{key}.value' must be {want}, got {x}"));
            }
            nums[i] = x;
            sources.insert(key.to_string(), src);
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
        let n = |k: &str| nums[NUMERIC.iter().position(|f| f.0 == k).unwrap_or(0)];
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
            sources, source_texts, derived: Derived::default(),
        };
        if d.cube_cores > 4096 || d.vector_cores > 8192 {
            return Err("device profile: field 'cube_cores.value' / 'vector_cores.value' is implausibly large (> 4096)".into());
        }
        if d.power_idle_w > d.power_tdp_w {
            return Err("device profile: field 'power_idle_w.value' exceeds 'power_tdp_w.value'".into());
        }
        d.refresh();
        Ok(d)
    }

    /// Recomputes the derived numbers after an edit of the documented ones.
    pub fn refresh(&mut self) {
        let cube_hz = self.cube_clock_mhz * 1.0e6;
        let vector_hz = self.vector_clock_mhz * 1.0e6;
        let cores = self.cube_cores as f64;
        // 16x16x16 FP16 MACs per cycle per core; FP32 uses a 16x8x16 fractal (C0 = 8), INT8
        // 16x32x16 (ascend-devices.md, D `_10_0007`).
        let macs = 4096.0;
        let fp16 = cores * macs * 2.0 * cube_hz / 1.0e12;
        self.derived = Derived {
            macs_per_cycle_fp16: macs,
            peak_tflops_fp16: fp16,
            peak_tflops_fp32: fp16 / 2.0,
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
        keys.extend(NUMERIC.iter().map(|f| f.0));
        for k in keys {
            let v = full.get(k).cloned().unwrap_or(Value::Null);
            let src = self.sources.get(k).cloned().unwrap_or_else(|| "user".into());
            fields.insert(k.to_string(), json!({ "value": v, "source": src }));
        }
        let d = &self.derived;
        let der = |v: f64, f: &str| json!({ "value": v, "derived": true, "formula": f });
        let out = json!({
            "schema": "tunelab-device/1",
            "name": self.name,
            "soc": self.soc,
            "sources": self.source_texts,
            "fields": fields,
            "derived": {
                "peak_tflops_fp16": der(d.peak_tflops_fp16, "cube_cores x 4096 MAC x 2 x cube_clock"),
                "peak_tflops_fp32": der(d.peak_tflops_fp32, "peak_tflops_fp16 / 2 (C0 = 8)"),
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

fn str_field(obj: &Map<String, Value>, key: &str) -> Result<String, String> {
    match obj.get(key).and_then(Value::as_str) {
        Some(s) if !s.trim().is_empty() => Ok(s.to_string()),
        _ => Err(format!("device profile: field '{key}' is missing or not a non-empty string")),
    }
}

/// `fields.<key>` as (value, source); both must be present.
fn entry<'a>(fields: &'a Map<String, Value>, key: &str) -> Result<(&'a Value, String), String> {
    let e = fields.get(key).ok_or_else(|| format!("device profile: field '{key}' is missing"))?;
    let e = e.as_object().ok_or_else(|| format!("device profile: field '{key}' must be an object {{\"value\", \"source\"}}"))?;
    let v = e.get("value").ok_or_else(|| format!("device profile: field '{key}.value' is missing"))?;
    let src = match e.get("source").and_then(Value::as_str) {
        Some(s) if !s.trim().is_empty() => s.to_string(),
        _ => return Err(format!("device profile: field '{key}.source' is missing (every number needs its source)")),
    };
    Ok((v, src))
}

const BUNDLED: &[(&str, &str)] = &[
    ("910B1", include_str!("../../../assets/devices/910B1.json")),
    ("910B2", include_str!("../../../assets/devices/910B2.json")),
    ("910B3", include_str!("../../../assets/devices/910B3.json")),
    ("910B4", include_str!("../../../assets/devices/910B4.json")),
    ("910", include_str!("../../../assets/devices/910.json")),
    ("310P3", include_str!("../../../assets/devices/310P3.json")),
    ("310B1", include_str!("../../../assets/devices/310B1.json")),
];

/// Every bundled profile (compiled in, so it works in WebAssembly without a filesystem).
pub fn bundled() -> Vec<Device> {
    BUNDLED.iter().filter_map(|(_, t)| Device::from_json(t).ok()).collect()
}

/// Names of the bundled profiles.
pub fn bundled_names() -> Vec<&'static str> {
    BUNDLED.iter().map(|b| b.0).collect()
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

//! Tilings: how an operator is cut into per-core blocks and on-chip tiles. The matmul tiling
//! mirrors Ascend C's TCubeTiling (D `atlasascendc_api_07_0673`); field names serialise as in it.

use serde::{Deserialize, Serialize};

/// A tiling for one operator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Tiling {
    /// The model's own heuristic tiling (`default_tiling`).
    #[default]
    Default,
    Matmul(MatmulTiling),
    Vector(VectorTiling),
    Flash(FlashTiling),
}

/// TCubeTiling's tunable fields.
///
/// The output is split over cores in `single_core_m x single_core_n` blocks (K is not split);
/// one Mmad computes `base_m x base_n x base_k`; L1 holds `depth_a1` A base blocks and
/// `depth_b1` B base blocks; one L1 load brings `step_m x step_ka` A blocks (and `step_n x
/// step_kb` B blocks); `depth_a1` is a multiple of `step_m x step_ka`, and twice or more
/// double-buffers L1. `iterate_order` 0
/// walks M first (inner loop over M), 1 walks N first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MatmulTiling {
    #[serde(rename = "singleCoreM")]
    pub single_core_m: u32,
    #[serde(rename = "singleCoreN")]
    pub single_core_n: u32,
    #[serde(rename = "baseM")]
    pub base_m: u32,
    #[serde(rename = "baseN")]
    pub base_n: u32,
    #[serde(rename = "baseK")]
    pub base_k: u32,
    #[serde(rename = "depthA1")]
    pub depth_a1: u32,
    #[serde(rename = "depthB1")]
    pub depth_b1: u32,
    #[serde(rename = "stepM")]
    pub step_m: u32,
    #[serde(rename = "stepN")]
    pub step_n: u32,
    #[serde(rename = "stepKa")]
    pub step_ka: u32,
    #[serde(rename = "stepKb")]
    pub step_kb: u32,
    #[serde(rename = "iterateOrder")]
    pub iterate_order: u8,
    #[serde(rename = "dbL0A")]
    pub db_l0a: bool,
    #[serde(rename = "dbL0B")]
    pub db_l0b: bool,
    #[serde(rename = "dbL0C")]
    pub db_l0c: bool,
}

/// UB tiling of a vector operator: elements per tile per core, and double buffering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct VectorTiling {
    pub tile_len: u32,
    pub double_buffer: bool,
}

/// Flash-attention block sizes: query rows and key/value rows per inner step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FlashTiling {
    pub block_q: u32,
    pub block_kv: u32,
}

/// One tunable field and its candidate values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Axis {
    pub name: String,
    pub values: Vec<i64>,
}

/// Matmul axis names, in `tiling_axes` order.
pub const MATMUL_AXES: [&str; 15] = [
    "singleCoreM", "singleCoreN", "baseM", "baseN", "baseK", "depthA1", "depthB1", "stepM",
    "stepN", "stepKa", "stepKb", "iterateOrder", "dbL0A", "dbL0B", "dbL0C",
];

impl MatmulTiling {
    /// The value of a field by its TCubeTiling name.
    pub fn get(&self, name: &str) -> Option<i64> {
        let v = match name {
            "singleCoreM" => self.single_core_m as i64,
            "singleCoreN" => self.single_core_n as i64,
            "baseM" => self.base_m as i64,
            "baseN" => self.base_n as i64,
            "baseK" => self.base_k as i64,
            "depthA1" => self.depth_a1 as i64,
            "depthB1" => self.depth_b1 as i64,
            "stepM" => self.step_m as i64,
            "stepN" => self.step_n as i64,
            "stepKa" => self.step_ka as i64,
            "stepKb" => self.step_kb as i64,
            "iterateOrder" => self.iterate_order as i64,
            "dbL0A" => self.db_l0a as i64,
            "dbL0B" => self.db_l0b as i64,
            "dbL0C" => self.db_l0c as i64,
            _ => return None,
        };
        Some(v)
    }

    /// Sets a field by its TCubeTiling name; errors name the field.
    pub fn set(&mut self, name: &str, v: i64) -> Result<(), String> {
        match Self::field_index(name) {
            Some(i) => self.set_at(i, v),
            None => Err(format!("unknown matmul tiling field '{name}' (known: {})", MATMUL_AXES.join(", "))),
        }
    }

    /// The position of a field in `MATMUL_AXES` by its TCubeTiling name. Lets a hot loop (the
    /// tuner's coordinate descent) resolve names once and set fields by position.
    pub fn field_index(name: &str) -> Option<usize> {
        MATMUL_AXES.iter().position(|n| *n == name)
    }

    /// Sets the field at position `i` of `MATMUL_AXES` (as `set` does by name); errors name the
    /// field.
    pub fn set_at(&mut self, i: usize, v: i64) -> Result<(), String> {
        let name = MATMUL_AXES.get(i).copied().unwrap_or("?");
        let u = |v: i64| -> Result<u32, String> {
            if (1..=1 << 24).contains(&v) {
                Ok(v as u32)
            } else {
                Err(format!("tiling field {name} = {v} out of range 1..16777216"))
            }
        };
        let b = |v: i64| -> Result<bool, String> {
            match v {
                0 => Ok(false),
                1 => Ok(true),
                _ => Err(format!("tiling field {name} = {v} must be 0 or 1")),
            }
        };
        match i {
            0 => self.single_core_m = u(v)?,
            1 => self.single_core_n = u(v)?,
            2 => self.base_m = u(v)?,
            3 => self.base_n = u(v)?,
            4 => self.base_k = u(v)?,
            5 => self.depth_a1 = u(v)?,
            6 => self.depth_b1 = u(v)?,
            7 => self.step_m = u(v)?,
            8 => self.step_n = u(v)?,
            9 => self.step_ka = u(v)?,
            10 => self.step_kb = u(v)?,
            11 => self.iterate_order = b(v)? as u8,
            12 => self.db_l0a = b(v)?,
            13 => self.db_l0b = b(v)?,
            14 => self.db_l0c = b(v)?,
            _ => return Err(format!("no matmul tiling field at position {i} (known: {})", MATMUL_AXES.join(", "))),
        }
        Ok(())
    }

    /// `k=v` pairs in axis order, e.g. "singleCoreM=1024,baseM=128,...".
    pub fn describe(&self) -> String {
        MATMUL_AXES
            .iter()
            .map(|n| format!("{n}={}", self.get(n).unwrap_or(0)))
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl Tiling {
    /// `k=v` pairs describing the tiling ("default" for the heuristic).
    pub fn describe(&self) -> String {
        match self {
            Tiling::Default => "default".into(),
            Tiling::Matmul(t) => t.describe(),
            Tiling::Vector(t) => format!("tileLen={},doubleBuffer={}", t.tile_len, t.double_buffer as u8),
            Tiling::Flash(t) => format!("blockQ={},blockKv={}", t.block_q, t.block_kv),
        }
    }
}

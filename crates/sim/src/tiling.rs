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

/// Position in `MATMUL_AXES` of the first 0/1 switch (`iterateOrder`); the fields before it are
/// sizes.
const FIRST_SWITCH: usize = 11;

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
        if self.try_set_at(i, v) {
            return Ok(());
        }
        match MATMUL_AXES.get(i) {
            None => Err(format!("no matmul tiling field at position {i} (known: {})", MATMUL_AXES.join(", "))),
            Some(name) if i >= FIRST_SWITCH => Err(format!("tiling field {name} = {v} must be 0 or 1")),
            Some(name) => Err(format!("tiling field {name} = {v} out of range 1..16777216")),
        }
    }

    /// `set_at` without the error text, for hot loops (the tuner's coordinate descent times
    /// hundreds of candidates per matmul): false, the tiling unchanged, when `v` is out of the
    /// field's range (1..=2^24 for sizes, 0 or 1 for switches) or `i` names no field.
    pub fn try_set_at(&mut self, i: usize, v: i64) -> bool {
        let size = (1..=1 << 24).contains(&v);
        let switch = v == 0 || v == 1;
        let (u, b) = (v as u32, v == 1);
        match i {
            0 if size => self.single_core_m = u,
            1 if size => self.single_core_n = u,
            2 if size => self.base_m = u,
            3 if size => self.base_n = u,
            4 if size => self.base_k = u,
            5 if size => self.depth_a1 = u,
            6 if size => self.depth_b1 = u,
            7 if size => self.step_m = u,
            8 if size => self.step_n = u,
            9 if size => self.step_ka = u,
            10 if size => self.step_kb = u,
            11 if switch => self.iterate_order = b as u8,
            12 if switch => self.db_l0a = b,
            13 if switch => self.db_l0b = b,
            14 if switch => self.db_l0c = b,
            _ => return false,
        }
        true
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

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> MatmulTiling {
        MatmulTiling {
            single_core_m: 128, single_core_n: 256, base_m: 128, base_n: 256, base_k: 64, depth_a1: 8, depth_b1: 8,
            step_m: 1, step_n: 1, step_ka: 4, step_kb: 4, iterate_order: 0, db_l0a: true, db_l0b: true, db_l0c: false,
        }
    }

    /// The tuner sets fields by position (`set_at`, `try_set_at`); each position must be the
    /// field its name reads, and no other field may move.
    #[test]
    fn setting_by_position_sets_the_named_field_only() {
        for (i, name) in MATMUL_AXES.iter().enumerate() {
            assert_eq!(MatmulTiling::field_index(name), Some(i));
            let v = if i >= FIRST_SWITCH { 1 - base().get(name).unwrap() } else { 1000 + i as i64 };
            let mut t = base();
            assert!(t.try_set_at(i, v), "{name}");
            let mut by_name = base();
            by_name.set(name, v).unwrap();
            assert_eq!(t, by_name, "{name}");
            for other in MATMUL_AXES.iter().filter(|n| *n != name) {
                assert_eq!(t.get(other), base().get(other), "{name} moved {other}");
            }
            assert_eq!(t.get(name), Some(v));
        }
    }

    #[test]
    fn out_of_range_values_are_refused_naming_the_field() {
        let mut t = base();
        assert!(!t.try_set_at(2, 0) && !t.try_set_at(12, 2) && !t.try_set_at(15, 1));
        assert_eq!(t, base(), "a refused value leaves the tiling as it was");
        assert_eq!(t.set("baseM", 0).unwrap_err(), "tiling field baseM = 0 out of range 1..16777216");
        assert_eq!(t.set("dbL0A", 2).unwrap_err(), "tiling field dbL0A = 2 must be 0 or 1");
        assert!(t.set("baseQ", 1).unwrap_err().starts_with("unknown matmul tiling field 'baseQ'"));
    }
}

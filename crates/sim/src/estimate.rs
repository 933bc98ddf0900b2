//! What the device model returns: time, traffic, energy, and a breakdown by engine that adds up
//! to the total. Plain serde data.

use serde::{Deserialize, Serialize};

/// What limits an estimate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    Cube,
    Vector,
    Hbm,
    L2,
    Mte1,
    Mte2,
    Mte3,
    FixPipe,
    #[default]
    Launch,
    Communication,
}

impl Bound {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Bound::Cube => "cube",
            Bound::Vector => "vector",
            Bound::Hbm => "hbm",
            Bound::L2 => "l2",
            Bound::Mte1 => "mte1",
            Bound::Mte2 => "mte2",
            Bound::Mte3 => "mte3",
            Bound::FixPipe => "fixpipe",
            Bound::Launch => "launch",
            Bound::Communication => "communication",
        }
    }
}

/// Number of engines tracked in a `Parts` vector (the order of `Bound`).
pub const ENGINES: usize = 10;
/// All engines in `Parts` order.
pub const ALL_BOUNDS: [Bound; ENGINES] = [
    Bound::Cube, Bound::Vector, Bound::Hbm, Bound::L2, Bound::Mte1, Bound::Mte2, Bound::Mte3,
    Bound::FixPipe, Bound::Launch, Bound::Communication,
];

/// Time per engine in microseconds, indexed like `ALL_BOUNDS` (fixed size: no allocation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineTimes {
    pub cube: f64,
    pub vector: f64,
    /// Waiting on chip-wide memory bandwidth beyond what the cores' own copy engines need.
    pub hbm: f64,
    pub l2: f64,
    pub mte1: f64,
    pub mte2: f64,
    pub mte3: f64,
    pub fixpipe: f64,
    pub launch: f64,
    pub communication: f64,
}

impl EngineTimes {
    /// From a `Parts` array (index order of `ALL_BOUNDS`).
    pub fn from_array(a: [f64; ENGINES]) -> Self {
        EngineTimes {
            cube: a[0], vector: a[1], hbm: a[2], l2: a[3], mte1: a[4], mte2: a[5], mte3: a[6],
            fixpipe: a[7], launch: a[8], communication: a[9],
        }
    }
    /// As an array in `ALL_BOUNDS` order.
    pub fn to_array(&self) -> [f64; ENGINES] {
        [self.cube, self.vector, self.hbm, self.l2, self.mte1, self.mte2, self.mte3, self.fixpipe,
         self.launch, self.communication]
    }
    /// Sum over engines.
    pub fn sum(&self) -> f64 {
        self.to_array().iter().sum()
    }
}

/// How the total splits over engines.
///
/// `exposed` is the time each engine is on the critical path, not hidden behind another engine
/// by double buffering; the exposed parts add up to `Estimate::time_us`. `busy` is how long
/// each engine works in total on one core (the busiest core), overlap included.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    pub exposed: EngineTimes,
    pub busy: EngineTimes,
    /// Cores used and the number of waves of per-core blocks (tail imbalance = waves x cores
    /// - blocks idle slots).
    pub cores_used: u32,
    pub waves: u64,
    /// Sum of busy minus sum of exposed: time hidden by overlap.
    pub overlapped_us: f64,
}

/// One operator's cost on one device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub time_us: f64,
    /// Useful floating-point (or integer) operations, padding excluded.
    pub flops: f64,
    /// Bytes moved to or from device memory.
    pub hbm_bytes: f64,
    /// Energy estimate in microjoules (static + dynamic per engine; see `cost::energy`).
    pub energy_uj: f64,
    pub bound: Bound,
    pub breakdown: Breakdown,
    /// Roofline coordinates: flops per HBM byte, and attained TFLOPS.
    pub arithmetic_intensity: f64,
    pub attained_tflops: f64,
    /// Expected relative error (root-mean-square, relative to the output magnitude) from the
    /// data types used; see `cost::error`.
    pub relative_error: f64,
}

/// A tiling the device cannot run, and exactly why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Infeasible {
    pub reason: String,
}

impl Infeasible {
    /// An infeasible result with this reason.
    pub fn new(reason: impl Into<String>) -> Self {
        Infeasible { reason: reason.into() }
    }
}

impl std::fmt::Display for Infeasible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

//! tunelab-sim: an analytic device model of Ascend NPUs. It knows nothing of search.
//!
//! Why this shape: chips are data (sourced JSON profiles), operators are plain data, and every
//! estimate is a pure function (op, tiling, device) -> Estimate with a Breakdown by engine, so
//! the numbers can be explained, tested for physical properties, and evaluated millions of
//! times per second by the tuner.

pub mod asset;
pub mod bench;
pub mod cost;
pub mod device;
pub mod kernels;
pub mod dtype;
pub mod estimate;
pub mod memory;
pub mod model;
pub mod op;
pub mod tiling;
pub mod topology;
pub mod tuning;
pub mod workload;

pub use cost::estimate;
pub use device::{bundled, bundled_device, Arch, Device};
pub use dtype::{DType, Precision};
pub use estimate::{Bound, Breakdown, EngineTimes, Estimate, Infeasible};
pub use op::{AttentionKind, CommAlgorithm, CommKind, Epilogue, Link, MoeCommForm, MoePhase, Op, VectorKind};
pub use tiling::{Axis, FlashTiling, MatmulTiling, Tiling, VectorTiling};
pub use tuning::{best_tiling, default_tiling, tiling_axes, tiling_from_assignment};
pub use memory::{max_batch, memory_per_chip, MemoryBreakdown, MemoryStrategy};
pub use model::{bundled_model_ids, bundled_model_text, bundled_models, load_bundled, load_model, LoadedModel, ModelDesc, ModelFamily, OpClass};
pub use workload::{build_graph, Graph, GraphOp, GraphOptions, ParallelPlan, Recompute, TrainOptions, Workload};

//! tunelab-sim: an analytic device model of Ascend NPUs. It knows nothing of search.
//!
//! Why this shape: chips are data (sourced JSON profiles), operators are plain data, and every
//! estimate is a pure function (op, tiling, device) -> Estimate with a Breakdown by engine, so
//! the numbers can be explained, tested for physical properties, and evaluated millions of
//! times per second by the tuner.

pub mod dtype;
pub mod op;

pub use dtype::{DType, Precision};
pub use op::{AttentionKind, CommAlgorithm, CommKind, Epilogue, Link, Op, VectorKind};

//! Token merging for Stable Diffusion (Bolya & Hoffman 2023, "Token Merging for Fast Stable
//! Diffusion", the `tomesd` package): before a self-attention, a ratio of the tokens is merged
//! into their most similar partner and unmerged after it, so the attention runs on fewer tokens.
//!
//! What it costs, as tomesd computes it: one destination token per 2x2 patch (a quarter of the
//! tokens), a similarity matmul of the other three quarters against them, a max over each row,
//! a gather to merge and a scatter to unmerge. What it changes: the output (approximate), so the
//! stage lists it with the guards.

use super::emit::Emit;
use crate::model::OpClass;
use crate::op::{Epilogue, VectorKind};

/// A merge ratio (0: off). Applied where the builder says (the highest-resolution attention).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tome {
    pub ratio: f64,
}

impl Tome {
    pub fn none() -> Tome {
        Tome { ratio: 0.0 }
    }

    /// Whether any token is merged.
    pub fn on(&self) -> bool {
        self.ratio > 0.0
    }

    /// Tokens left of `px` after merging (tomesd merges at most the source three quarters).
    pub fn kept(&self, px: u64) -> u64 {
        if !self.on() {
            return px;
        }
        let r = self.ratio.clamp(0.0, 0.75);
        let merged = (px as f64 * r) as u64;
        px.saturating_sub(merged).max(1)
    }

    /// The matching and merge kernels before a self-attention (`layers` times).
    pub fn emit_merge(&self, e: &mut Emit, name: &str, b: u64, px: u64, c: u64, layers: u64) {
        if !self.on() {
            return;
        }
        let (dst, src) = ((px / 4).max(1), (px - px / 4).max(1));
        e.matmul(&format!("{name}.similarity"), b * src, dst, c, Epilogue::None, OpClass::Other, layers);
        e.vector(&format!("{name}.match_max"), VectorKind::Reduce, b * src, dst, OpClass::Other, layers);
        e.vector(&format!("{name}.merge"), VectorKind::Gather, b * px, c, OpClass::Other, layers);
    }

    /// The unmerge scatter after the self-attention.
    pub fn emit_unmerge(&self, e: &mut Emit, name: &str, b: u64, px: u64, c: u64, layers: u64) {
        if self.on() {
            e.vector(&format!("{name}.unmerge"), VectorKind::Gather, b * px, c, OpClass::Other, layers);
        }
    }
}

//! DeepSeek-V4's KV compressors, lightning indexer and manifold-constrained hyper-connections,
//! and MiniMax-M3's block index: their parameters (counted, held in memory by the same
//! formulas) and the indexers' cached keys. The operators they run are in
//! `workload::compressed_attention`.
//!
//! MiniMax-M3 (Ascend/msmodeling `tensor_cast/layers/minimax_m3_attention.py` @ 1305a909,
//! `MiniMaxM3AttentionWrapper`, mirroring the upstream `MiniMaxM3VLAttention`): each sparse
//! layer's index projects the hidden state to `sparse_num_index_heads` query heads and one key
//! of `sparse_index_dim` (q_proj, k_proj, their norms, rotary), caches the index key of every
//! token, and scores every cached key per query (`minimax_indexer`) to pick the top blocks.
//!
//! Sources (module shapes, op for op):
//! - Ascend/msmodeling `tensor_cast/layers/deepseek_v4.py` @ c2913fb73de64c7645aa58a309d4add59710ab7b
//!   (`DeepseekV4SparseAttention`, `DeepseekV4SparseAttentionIndexer`,
//!   `HyperConnectedMultiTokenPredictorLayer`), which mirrors deepseek-ai/DeepSeek-V4-Flash
//!   `inference/model.py` (`Attention.forward`, `Indexer.forward`, `Compressor`).
//! - The `Compressor` module of the Ascend inference port of DeepSeek-V4 (`wkv` and `wgate`:
//!   hidden -> coff x head_dim, coff = 2 when the ratio is 4 (overlapping windows) else 1; `ape`:
//!   ratio x coff x head_dim in FP32; an RMSNorm over head_dim).
//!
//! Per layer, as the reference builds it:
//! - every compressed layer (`compress_ratios` 4 or 128): the attention's compressor (head_dim
//!   512 rows);
//! - every ratio-4 layer: the indexer, `wq_b` (q_lora_rank -> index_n_heads x index_head_dim),
//!   `weights_proj` (hidden -> index_n_heads) and its own ratio-4 compressor of index_head_dim
//!   rows; its compressed keys are cached, one index_head_dim row per 4 tokens;
//! - every layer: two hyper-connection mixers (around the attention and the MoE), each
//!   `hc_fn` ((2 + hc) x hc rows over the hc x hidden streams), `hc_base` ((2 + hc) x hc) and
//!   `hc_scale` (3), in FP32.

use super::{Mixer, TransformerDesc};
use serde::{Deserialize, Serialize};

/// DeepSeek-V4's indexer widths and residual streams (config.json's `index_n_heads`,
/// `index_head_dim`, `hc_mult`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CompressorDesc {
    /// Indexer query heads (64 in V4-Flash and V4-Pro).
    pub index_heads: u64,
    /// Width of an indexer head and of its cached compressed key (128).
    pub index_head_dim: u64,
    /// Residual streams of the hyper-connections (4); 1: a plain residual.
    pub hc_mult: u64,
    /// Sinkhorn iterations projecting each block's stream combination (`hc_sinkhorn_iters`, 20).
    #[serde(default)]
    pub hc_sinkhorn_iters: u64,
}

/// Parameters of one compressor pooling `ratio` tokens into rows `dim` wide from a `hidden`
/// input: wkv and wgate (hidden -> coff x dim), the FP32 position bias (ratio x coff x dim)
/// and the row norm (dim).
fn compressor(hidden: u64, dim: u64, ratio: u64) -> u64 {
    let coff = if ratio == 4 { 2 } else { 1 };
    let w = coff * dim;
    (2 * hidden * w).saturating_add(ratio.saturating_mul(w)).saturating_add(dim)
}

impl CompressorDesc {
    /// Mixing rows of one hyper-connection: (2 + hc) x hc (pre weights, post weights, the
    /// hc x hc combination).
    pub fn mix(&self) -> u64 {
        (2 + self.hc_mult) * self.hc_mult
    }

    /// Parameters of one hyper-connection around a block of a `hidden`-wide model (0 for a
    /// plain residual).
    pub fn hc_block_params(&self, hidden: u64) -> u64 {
        if self.hc_mult <= 1 {
            return 0;
        }
        let mix = self.mix();
        mix.saturating_mul(self.hc_mult).saturating_mul(hidden).saturating_add(mix).saturating_add(3)
    }
}

impl TransformerDesc {
    /// The compressor and indexer parameters of a layer with mixer `m`, as (split over tensor
    /// parallel: the indexer's wq_b and weights_proj, column-parallel in msmodeling's plan;
    /// replicated: the compressors); (0, 0) for a model or layer without them.
    pub fn compressor_params(&self, m: &Mixer) -> (u64, u64) {
        let (Some(c), Mixer::Attention { compress, topk, .. }) = (self.compressor, *m) else { return (0, 0) };
        if compress == 0 {
            return (0, 0);
        }
        let h = self.hidden;
        if compress == 1 {
            // MiniMax-M3's block index (MiniMax Sparse Attention): q_proj (hidden -> index
            // heads x index_dim, split), k_proj (hidden -> index_dim) and the two norms.
            if topk == 0 || c.index_heads == 0 {
                return (0, 0);
            }
            return (h.saturating_mul(c.index_heads * c.index_head_dim), h.saturating_mul(c.index_head_dim).saturating_add(2 * c.index_head_dim));
        }
        let mut replicated = compressor(h, self.head_dim, compress);
        let mut split = 0;
        if topk > 0 {
            let q_in = if self.q_bottleneck > 0 { self.q_bottleneck } else { h };
            split = q_in.saturating_mul(c.index_heads * c.index_head_dim).saturating_add(h * c.index_heads);
            replicated = replicated.saturating_add(compressor(h, c.index_head_dim, compress));
        }
        (split, replicated)
    }

    /// Hyper-connection parameters of one layer with `blocks` blocks (mixer and MLP).
    pub fn hc_layer_params(&self, blocks: u64) -> u64 {
        self.compressor.map_or(0, |c| blocks.saturating_mul(c.hc_block_params(self.hidden)))
    }

    /// Indexer key elements a layer with mixer `m` caches for a `tokens`-long sequence: one
    /// index_head_dim row per `compress` tokens on the layers with an indexer.
    pub fn indexer_cached_elems(&self, m: &Mixer, tokens: u64) -> u64 {
        match (self.compressor, *m) {
            (Some(c), Mixer::Attention { compress, topk, .. }) if compress > 0 && topk > 0 && c.index_heads > 0 => (tokens / compress).saturating_mul(c.index_head_dim),
            _ => 0,
        }
    }

    /// The indexer keys of the `layers_here` layers of a pipeline stage for a `tokens`-long
    /// sequence (0 without an indexer).
    pub fn indexer_cache_elems_here(&self, tokens: u64, layers_here: u64) -> u64 {
        if self.compressor.is_none() {
            return 0;
        }
        self.runs_here(layers_here).iter().map(|r| r.count.saturating_mul(self.indexer_cached_elems(&r.mixer, tokens))).fold(0, u64::saturating_add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_four_compressor_overlaps_two_windows() {
        // V4-Flash: hidden 4096, head_dim 512: ratio 4 -> wkv, wgate 4096 x 1024 each, ape 4 x
        // 1024, norm 512; ratio 128 -> 4096 x 512 each, ape 128 x 512.
        assert_eq!(compressor(4096, 512, 4), 2 * 4096 * 1024 + 4 * 1024 + 512);
        assert_eq!(compressor(4096, 512, 128), 2 * 4096 * 512 + 128 * 512 + 512);
        let c = CompressorDesc { index_heads: 64, index_head_dim: 128, hc_mult: 4, hc_sinkhorn_iters: 20 };
        // (2 + 4) x 4 = 24 rows over 4 x 4096 streams, + 24 + 3.
        assert_eq!(c.hc_block_params(4096), 24 * 16384 + 27);
    }
}

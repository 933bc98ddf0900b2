//! Operators: plain data describing one kernel launch (shapes, dtypes). The device model costs
//! an `Op` under a `Tiling` on a `Device`; workloads are lists of `Op`s with repeat counts.

use crate::dtype::DType;
use serde::{Deserialize, Serialize};

/// One operator instance.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// C[b, m, n] = A[b, m, k] x B[b, k, n] on the cube unit (b = 1: plain matmul).
    Matmul {
        #[serde(default = "one")]
        batch: u64,
        m: u64,
        n: u64,
        k: u64,
        /// Activation (A) type; the output is written in this type too (INT8 writes FP16).
        dtype: DType,
        /// Weight (B) type: differs from `dtype` for W8A16.
        #[serde(default)]
        weight_dtype: Option<DType>,
        /// A fused epilogue (bias, activation, residual add) applied by FixPipe / vector.
        #[serde(default)]
        epilogue: Epilogue,
    },
    /// An elementwise, normalisation, reduction or conversion kernel on the vector unit.
    Vector {
        kind: VectorKind,
        /// Rows x row_len elements (row_len is the reduced axis for norms, softmax, reductions).
        rows: u64,
        row_len: u64,
        dtype: DType,
    },
    /// Scaled dot-product attention.
    Attention {
        kind: AttentionKind,
        batch: u64,
        heads: u64,
        kv_heads: u64,
        q_len: u64,
        kv_len: u64,
        head_dim: u64,
        #[serde(default)]
        causal: bool,
        dtype: DType,
    },
    /// 2-D convolution, lowered to img2col + matmul on the cube.
    Conv2d {
        batch: u64,
        in_ch: u64,
        out_ch: u64,
        h: u64,
        w: u64,
        kh: u64,
        kw: u64,
        #[serde(default = "one")]
        stride: u64,
        #[serde(default)]
        pad: u64,
        dtype: DType,
    },
    /// A collective over `ranks` devices.
    Comm {
        kind: CommKind,
        /// Bytes of the full (logical) tensor each rank contributes or receives.
        bytes: u64,
        ranks: u64,
        #[serde(default)]
        link: Link,
        #[serde(default)]
        algorithm: CommAlgorithm,
    },
}

fn one() -> u64 {
    1
}

/// Work fused after a matmul.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Epilogue {
    #[default]
    None,
    Bias,
    BiasGelu,
    SwiGlu,
    ResidualAdd,
}

/// Vector-unit operator kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VectorKind {
    /// Two inputs, one output (add, mul).
    Elementwise,
    /// One input, transcendental per element (GELU, SiLU).
    Activation,
    /// SwiGLU gate: silu(a) * b, two inputs.
    SwiGlu,
    Softmax,
    LayerNorm,
    RmsNorm,
    Rotary,
    /// Sum or max over row_len.
    Reduce,
    /// Cast between float types.
    Cast,
    /// Quantise to INT8 with per-row scales.
    Quantize,
    /// Gather rows (embedding lookup): reads rows of row_len.
    Gather,
    /// One input and a broadcast operand (x / c, x + a mask row): one pass, one instruction
    /// per element (an ONNX graph's separate Div and Add on the attention scores).
    Scale,
}

/// How attention is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttentionKind {
    /// QK^T materialised in HBM, softmax, then PV: three kernels' worth of traffic.
    Unfused,
    /// Fused flash attention: scores stay on chip; block sizes come from the tiling.
    Flash,
    /// Decode: one query token per sequence reading the whole KV cache.
    Decode,
    /// Unfused as an ONNX export runs after ATC with mixed_float16 (an offline OM model):
    /// BatchMatMul, Div, Cast, mask Add and Softmax in fp32, Cast, BatchMatMul, each a pass over
    /// the scores in device memory (`cost::attention::exported`).
    Exported,
}

/// Collective kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommKind {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
}

/// Which interconnect a collective crosses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Link {
    /// HCCS inside a node.
    #[default]
    Hccs,
    /// Between nodes (RoCE).
    InterNode,
    Pcie,
    /// Between the two dies of one package (the 910C's SIO link).
    DieToDie,
    /// Between nodes of a SuperPOD over its HCCS/UB fabric (Atlas A3 CloudMatrix).
    SuperPod,
}

/// Collective algorithm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommAlgorithm {
    #[default]
    Ring,
    Tree,
    /// Every peer at once. An all-to-all issued to all ranks together (HCCL's cross-node
    /// all-to-all, the MC2 dispatch/combine kernels): ceil(log2 p) latency steps for the
    /// notifications. An all-reduce, all-gather or reduce-scatter on a full mesh whose task
    /// list was built in advance (HCCL's Mesh in a compiled static graph): two steps for an
    /// all-reduce, one for the others, whatever p (`cost::comm` notes); off a full mesh it
    /// runs as Ring. The same bytes as the ring either way.
    Mesh,
}

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
    /// A grouped matmul (the MoE experts' GEMM, torch_npu's `npu_grouped_matmul`):
    /// x [m, k] split by rows into `groups` contiguous groups (uniform `group_list`), group g
    /// times its own weight [k, n]: `groups` weight matrices read, m rows in all.
    GroupedMatmul {
        groups: u64,
        /// Rows in all (tokens routed to the local experts).
        m: u64,
        n: u64,
        k: u64,
        dtype: DType,
        #[serde(default)]
        weight_dtype: Option<DType>,
    },
    /// MoE token dispatch or combine over `ranks` expert-parallel ranks, as one rank sees it:
    /// `tokens` tokens of `hidden` elements, each routed to `top_k` experts spread evenly over
    /// the ranks, in the kernel form `form` (`cost::moe_comm`).
    MoeComm {
        phase: MoePhase,
        #[serde(default)]
        form: MoeCommForm,
        tokens: u64,
        hidden: u64,
        top_k: u64,
        ranks: u64,
        /// Element type on the wire (INT8 dispatch carries a 4-byte scale per token copy).
        dtype: DType,
        #[serde(default)]
        link: Link,
    },
}

fn one() -> u64 {
    1
}

impl Op {
    /// The plain operator a composite one runs as (a grouped matmul: its groups batched, the
    /// rows split evenly); None for every other operator.
    pub fn lowered(&self) -> Option<Op> {
        match *self {
            Op::GroupedMatmul { groups, m, n, k, dtype, weight_dtype } => {
                let g = groups.max(1);
                Some(Op::Matmul { batch: g, m: m.div_ceil(g).max(1), n, k, dtype, weight_dtype, epilogue: Epilogue::None })
            }
            _ => None,
        }
    }
}

/// Which half of the MoE token exchange.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MoePhase {
    /// Tokens to their experts' ranks.
    #[default]
    Dispatch,
    /// Expert outputs back to the tokens' ranks (weighted and summed there).
    Combine,
}

/// How the MoE token exchange is implemented.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MoeCommForm {
    /// HCCL all-to-all(v) of every routed copy (vLLM-Ascend's `alltoall` MoE comm, Megatron's
    /// all-to-all dispatcher): the task to each peer in turn, a copy per (token, expert).
    #[default]
    AllToAll,
    /// DeepEP normal mode (DeepEP-Ascend `dispatch`/`combine`): a layout exchange (the counts
    /// per rank) first, then each token sent once per destination rank (de-duplicated), to
    /// every peer at once.
    DeepepNormal,
    /// DeepEP low-latency mode: no layout exchange (fixed-size receive buffers), a copy per
    /// (token, expert), every peer at once.
    DeepepLowLatency,
    /// Ascend MC2 (`npu_moe_distribute_dispatch` / `_combine`, vLLM-Ascend's `mc2` MoE comm):
    /// the low-latency exchange with the dispatch quantisation fused in.
    Mc2,
}

impl MoeCommForm {
    /// The scenario / graph-file spelling.
    pub fn name(self) -> &'static str {
        match self {
            MoeCommForm::AllToAll => "all_to_all",
            MoeCommForm::DeepepNormal => "deepep_normal",
            MoeCommForm::DeepepLowLatency => "deepep_low_latency",
            MoeCommForm::Mc2 => "mc2",
        }
    }

    pub const ALL: [MoeCommForm; 4] = [MoeCommForm::AllToAll, MoeCommForm::DeepepNormal, MoeCommForm::DeepepLowLatency, MoeCommForm::Mc2];

    pub fn parse(s: &str) -> Result<MoeCommForm, String> {
        Self::ALL.into_iter().find(|f| f.name() == s.trim()).ok_or_else(|| format!("'{}' is not a MoE exchange form (all_to_all, deepep_normal, deepep_low_latency, mc2)", s.chars().take(40).collect::<String>()))
    }
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
    /// Dequantise packed integer weights (the op's dtype: INT4 or INT8) to the 16-bit activation
    /// type with their per-group scale and offset, written to a workspace: the vector phase of
    /// the grouped matmul's W4A16 / W8A16 path (`GraphOptions::expert_dequant_workspace`).
    Antiquant,
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

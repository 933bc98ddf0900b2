//! The operator emitter the diffusers builders share: one place decides how a linear layer, a
//! convolution, a GroupNorm or an attention core becomes `Op`s under the pipeline's precision
//! and attention choice, so every network quantises and fuses the same way.
//!
//! Conventions (those of the hand-written `assets/models/sd15-unet.graph.json`): GroupNorm(32)
//! is a norm over 32 rows per sample; the batch is folded into a linear layer's M; biases of
//! convolutions and skip concatenations are not separate operators.

use crate::dtype::DType;
use crate::model::OpClass;
use crate::op::{AttentionKind, CommKind, Epilogue, Link, Op, VectorKind};
use crate::workload::GraphOp;

/// How a component is built: numeric types and kernel choices.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EmitOptions {
    /// Floating activation type (fp16 or bf16; fp32 for an fp32 run).
    pub dtype: DType,
    /// W8A8: linear layers and convolutions in INT8, each input quantised by a vector kernel.
    pub int8: bool,
    /// Fused flash attention, or QK^T / softmax / PV through HBM.
    pub attention: AttentionKind,
}

impl Default for EmitOptions {
    fn default() -> Self {
        EmitOptions { dtype: DType::Fp16, int8: false, attention: AttentionKind::Flash }
    }
}

/// Collects the operators of one component.
pub struct Emit {
    pub o: EmitOptions,
    pub ops: Vec<GraphOp>,
    /// Weight parameters of the layers emitted so far (linear and convolution weights).
    pub weights: u64,
}

impl Emit {
    pub fn new(o: EmitOptions) -> Emit {
        Emit { o, ops: Vec::new(), weights: 0 }
    }

    fn push(&mut self, name: String, op: Op, repeat: u64, class: OpClass) {
        if repeat > 0 {
            self.ops.push(GraphOp { name, op, repeat, class });
        }
    }

    /// A linear layer y[m, n] = x[m, k] W[k, n] (the batch already folded into m).
    pub fn linear(&mut self, name: &str, m: u64, n: u64, k: u64, epilogue: Epilogue, class: OpClass, repeat: u64) {
        self.weights = self.weights.saturating_add(n.saturating_mul(k).saturating_mul(repeat));
        self.matmul(name, m, n, k, epilogue, class, repeat);
    }

    /// A matmul of two activations (no weights: a similarity or score product).
    #[allow(clippy::too_many_arguments)]
    pub fn matmul(&mut self, name: &str, m: u64, n: u64, k: u64, epilogue: Epilogue, class: OpClass, repeat: u64) {
        let dtype = if self.o.int8 {
            self.vector(&format!("{name}.quant"), VectorKind::Quantize, m, k, class, repeat);
            DType::Int8
        } else {
            self.o.dtype
        };
        self.push(name.into(), Op::Matmul { batch: 1, m, n, k, dtype, weight_dtype: None, epilogue }, repeat, class);
    }

    /// A 2-D convolution over `b` images of h x w (input size) with a k x k kernel.
    #[allow(clippy::too_many_arguments)]
    pub fn conv(&mut self, name: &str, b: u64, cin: u64, cout: u64, h: u64, w: u64, k: u64, stride: u64, repeat: u64) {
        let dtype = if self.o.int8 && cin >= 16 {
            self.vector(&format!("{name}.quant"), VectorKind::Quantize, b * h * w, cin, OpClass::Conv, repeat);
            DType::Int8
        } else {
            self.o.dtype
        };
        self.weights = self.weights.saturating_add(cin.saturating_mul(cout).saturating_mul(k * k).saturating_mul(repeat));
        let pad = k / 2;
        self.push(name.into(), Op::Conv2d { batch: b, in_ch: cin, out_ch: cout, h, w, kh: k, kw: k, stride, pad, dtype }, repeat, OpClass::Conv);
    }

    /// A matmul of two activations in `dtype`, whatever the pipeline's precision (code that
    /// upcasts its operands, as Sana's linear attention does: never quantised).
    #[allow(clippy::too_many_arguments)]
    pub fn matmul_in(&mut self, dtype: DType, name: &str, m: u64, n: u64, k: u64, class: OpClass, repeat: u64) {
        self.push(name.into(), Op::Matmul { batch: 1, m, n, k, dtype, weight_dtype: None, epilogue: Epilogue::None }, repeat, class);
    }

    /// A vector kernel in `dtype` (for a cast, the type read: 16-bit reads and writes fp32,
    /// fp32 reads and writes 16-bit).
    pub fn vector_in(&mut self, dtype: DType, name: &str, kind: VectorKind, rows: u64, row_len: u64, class: OpClass, repeat: u64) {
        self.push(name.into(), Op::Vector { kind, rows, row_len, dtype }, repeat, class);
    }

    /// A vector kernel over rows x row_len elements.
    pub fn vector(&mut self, name: &str, kind: VectorKind, rows: u64, row_len: u64, class: OpClass, repeat: u64) {
        let dtype = self.o.dtype;
        self.push(name.into(), Op::Vector { kind, rows, row_len, dtype }, repeat, class);
    }

    /// GroupNorm(32) over `b` images of c x h x w: 32 rows per image.
    pub fn group_norm(&mut self, name: &str, b: u64, c: u64, hw: u64, repeat: u64) {
        self.vector(name, VectorKind::LayerNorm, 32 * b, (c * hw / 32).max(1), OpClass::Norm, repeat);
    }

    /// A token-wise LayerNorm / RMSNorm over `tokens` rows of `width`.
    pub fn norm(&mut self, name: &str, kind: VectorKind, tokens: u64, width: u64, repeat: u64) {
        self.vector(name, kind, tokens, width, OpClass::Norm, repeat);
    }

    /// The attention core over `b` sequences.
    #[allow(clippy::too_many_arguments)]
    pub fn attention(&mut self, name: &str, b: u64, heads: u64, q: u64, kv: u64, head_dim: u64, causal: bool, repeat: u64) {
        let dtype = self.o.dtype;
        let kind = self.o.attention;
        self.push(name.into(), Op::Attention { kind, batch: b, heads, kv_heads: heads, q_len: q, kv_len: kv, head_dim, causal, dtype }, repeat, OpClass::Attention);
    }

    /// The attention core with grouped-query heads (`kv_heads` key/value heads).
    #[allow(clippy::too_many_arguments)]
    pub fn attention_gqa(&mut self, name: &str, b: u64, heads: u64, kv_heads: u64, q: u64, kv: u64, head_dim: u64, causal: bool, repeat: u64) {
        let dtype = self.o.dtype;
        let kind = self.o.attention;
        self.push(name.into(), Op::Attention { kind, batch: b, heads, kv_heads, q_len: q, kv_len: kv, head_dim, causal, dtype }, repeat, OpClass::Attention);
    }

    /// A collective over `ranks` chips inside the node.
    pub fn comm(&mut self, name: &str, kind: CommKind, bytes: u64, ranks: u64, repeat: u64) {
        if ranks > 1 {
            self.push(name.into(), Op::Comm { kind, bytes, ranks, link: Link::Hccs, algorithm: Default::default() }, repeat, OpClass::Comm);
        }
    }

    /// Bytes per element of the activation type.
    pub fn elem_bytes(&self) -> u64 {
        self.o.dtype.bytes()
    }
}

//! Data types the device model understands, and the deployment precisions built from them.

use serde::{Deserialize, Serialize};

/// A tensor element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    Fp32,
    Fp16,
    Bf16,
    Int8,
    /// 4-bit integers, two per byte (msModelSlim W4A16/W4A8/W4A4 weights, W4A4 activations).
    Int4,
}

impl DType {
    /// Bytes per element, rounded up to whole bytes (INT4: 1, two elements share it). Use
    /// `bits` or `size` where packed INT4 tensors are counted.
    pub fn bytes(self) -> u64 {
        match self {
            DType::Fp32 => 4,
            DType::Fp16 | DType::Bf16 => 2,
            DType::Int8 | DType::Int4 => 1,
        }
    }

    /// Bits per element.
    pub fn bits(self) -> u64 {
        match self {
            DType::Int4 => 4,
            d => 8 * d.bytes(),
        }
    }

    /// Bytes per element as a fraction (INT4: 0.5): what packed tensors occupy and move.
    pub fn size(self) -> f64 {
        self.bits() as f64 / 8.0
    }

    /// Whether this is an integer (quantised) type.
    pub fn is_int(self) -> bool {
        matches!(self, DType::Int8 | DType::Int4)
    }

    /// Parses "fp16", "bf16", "fp32", "int8" (case-insensitive; "float16" etc. accepted).
    pub fn parse(s: &str) -> Result<DType, String> {
        match s.to_ascii_lowercase().as_str() {
            "fp32" | "float32" | "float" => Ok(DType::Fp32),
            "fp16" | "float16" | "half" => Ok(DType::Fp16),
            "bf16" | "bfloat16" => Ok(DType::Bf16),
            "int8" | "i8" => Ok(DType::Int8),
            "int4" | "i4" => Ok(DType::Int4),
            other => Err(format!("unknown dtype '{other}' (fp32, fp16, bf16, int8, int4)")),
        }
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            DType::Fp32 => "fp32",
            DType::Fp16 => "fp16",
            DType::Bf16 => "bf16",
            DType::Int8 => "int8",
            DType::Int4 => "int4",
        }
    }
}

/// A deployment precision: the weight and activation types of matmuls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    Fp32,
    Fp16,
    Bf16,
    /// INT8 weights, FP16 activations (weights dequantised on the fly).
    W8a16,
    /// INT8 weights and activations (msModelSlim W8A8, per-channel weights, per-token
    /// dynamic activation scales: vLLM-Ascend `--quantization ascend`).
    W8a8,
    /// INT4 weights, FP16/BF16 activations (weights dequantised on the fly).
    W4a16,
    /// INT4 weights, INT8 activations: weights widened to INT8 in the kernel, INT8 cube.
    W4a8,
    /// INT4 weights and activations (msModelSlim W4A4): the cube's INT4 path.
    W4a4,
}

impl Precision {
    /// The activation type.
    pub fn activation(self) -> DType {
        match self {
            Precision::Fp32 => DType::Fp32,
            Precision::Fp16 | Precision::W8a16 => DType::Fp16,
            Precision::Bf16 => DType::Bf16,
            Precision::W8a8 | Precision::W4a8 => DType::Int8,
            Precision::W4a16 => DType::Fp16,
            Precision::W4a4 => DType::Int4,
        }
    }
    /// The weight type.
    pub fn weight(self) -> DType {
        match self {
            Precision::Fp32 => DType::Fp32,
            Precision::Fp16 => DType::Fp16,
            Precision::Bf16 => DType::Bf16,
            Precision::W8a16 | Precision::W8a8 => DType::Int8,
            Precision::W4a16 | Precision::W4a8 | Precision::W4a4 => DType::Int4,
        }
    }
    /// Whether the weights are quantised (an integer type).
    pub fn quantised(self) -> bool {
        self.weight().is_int()
    }
    /// The lower-case name `parse` reads.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Fp16 => "fp16",
            Precision::Bf16 => "bf16",
            Precision::W8a16 => "w8a16",
            Precision::W8a8 => "w8a8",
            Precision::W4a16 => "w4a16",
            Precision::W4a8 => "w4a8",
            Precision::W4a4 => "w4a4",
        }
    }
    /// Parses "fp16", "bf16", "fp32", "w8a16", "w8a8", "w4a16", "w4a8", "w4a4".
    pub fn parse(s: &str) -> Result<Precision, String> {
        match s.to_ascii_lowercase().as_str() {
            "fp32" => Ok(Precision::Fp32),
            "fp16" => Ok(Precision::Fp16),
            "bf16" => Ok(Precision::Bf16),
            "w8a16" => Ok(Precision::W8a16),
            "w8a8" | "w8a8_dynamic" => Ok(Precision::W8a8),
            "w4a16" => Ok(Precision::W4a16),
            "w4a8" | "w4a8_dynamic" => Ok(Precision::W4a8),
            "w4a4" | "w4a4_dynamic" => Ok(Precision::W4a4),
            other => Err(format!("unknown precision '{other}' (fp32, fp16, bf16, w8a16, w8a8, w4a16, w4a8, w4a4)")),
        }
    }
}

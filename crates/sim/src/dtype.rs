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
}

impl DType {
    /// Bytes per element.
    pub fn bytes(self) -> u64 {
        match self {
            DType::Fp32 => 4,
            DType::Fp16 | DType::Bf16 => 2,
            DType::Int8 => 1,
        }
    }

    /// Parses "fp16", "bf16", "fp32", "int8" (case-insensitive; "float16" etc. accepted).
    pub fn parse(s: &str) -> Result<DType, String> {
        match s.to_ascii_lowercase().as_str() {
            "fp32" | "float32" | "float" => Ok(DType::Fp32),
            "fp16" | "float16" | "half" => Ok(DType::Fp16),
            "bf16" | "bfloat16" => Ok(DType::Bf16),
            "int8" | "i8" => Ok(DType::Int8),
            other => Err(format!("unknown dtype '{other}' (fp32, fp16, bf16, int8)")),
        }
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            DType::Fp32 => "fp32",
            DType::Fp16 => "fp16",
            DType::Bf16 => "bf16",
            DType::Int8 => "int8",
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
    /// INT8 weights and activations.
    W8a8,
}

impl Precision {
    /// The activation type.
    pub fn activation(self) -> DType {
        match self {
            Precision::Fp32 => DType::Fp32,
            Precision::Fp16 | Precision::W8a16 => DType::Fp16,
            Precision::Bf16 => DType::Bf16,
            Precision::W8a8 => DType::Int8,
        }
    }
    /// The weight type.
    pub fn weight(self) -> DType {
        match self {
            Precision::Fp32 => DType::Fp32,
            Precision::Fp16 => DType::Fp16,
            Precision::Bf16 => DType::Bf16,
            Precision::W8a16 | Precision::W8a8 => DType::Int8,
        }
    }
    /// Parses "fp16", "bf16", "fp32", "w8a16", "w8a8".
    pub fn parse(s: &str) -> Result<Precision, String> {
        match s.to_ascii_lowercase().as_str() {
            "fp32" => Ok(Precision::Fp32),
            "fp16" => Ok(Precision::Fp16),
            "bf16" => Ok(Precision::Bf16),
            "w8a16" => Ok(Precision::W8a16),
            "w8a8" => Ok(Precision::W8a8),
            other => Err(format!("unknown precision '{other}' (fp32, fp16, bf16, w8a16, w8a8)")),
        }
    }
}

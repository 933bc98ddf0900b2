//! Numeric error estimates per data type and operator, for precision constraints.
//!
//! The model (documented, not measured): each rounding to a format with unit roundoff u adds an
//! independent relative error of root-mean-square u/sqrt(3) (uniform rounding error), and
//! independent errors add in quadrature. A K-term accumulation in FP32 (L0C accumulates in FP32,
//! or INT32 for INT8, D `_10_0007`) adds sqrt(K) FP32 roundings. INT8 symmetric per-tensor
//! quantisation has a step of max/127; relative to a typical (RMS) value about a quarter of the
//! max, that is 4/127 x 1/sqrt(12) per operand.

use crate::dtype::DType;

/// RMS relative error of one rounding to `t` (for INT8: one quantisation).
pub fn unit(t: DType) -> f64 {
    const INV_SQRT3: f64 = 0.577_350_269_189_625_8;
    match t {
        DType::Fp32 => 5.960_464_477_539_063e-8 * INV_SQRT3, // 2^-24
        DType::Fp16 => 4.882_812_5e-4 * INV_SQRT3,           // 2^-11
        DType::Bf16 => 3.906_25e-3 * INV_SQRT3,              // 2^-8
        DType::Int8 => 4.0 / 127.0 * 0.288_675_134_594_812_9, // step/sqrt(12), RMS ~ max/4
        DType::Int4 => 4.0 / 7.0 * 0.288_675_134_594_812_9,   // the same with a step of max/7
    }
}

/// Output type of a kernel whose inputs are `t` (INT8 matmuls write FP16).
pub fn output_type(t: DType) -> DType {
    match t {
        DType::Int8 | DType::Int4 => DType::Fp16,
        other => other,
    }
}

/// A matmul with activations `a`, weights `b`, reduction length `k`.
pub fn matmul(a: DType, b: DType, k: u64) -> f64 {
    let ua = unit(a);
    let ub = unit(b);
    let uo = unit(output_type(a));
    // INT8 x INT8 accumulates exactly in INT32; the rest accumulate in FP32.
    let acc = if a.is_int() && b.is_int() { 0.0 } else { unit(DType::Fp32) };
    let k = k.max(1) as f64;
    libm::sqrt(ua * ua + ub * ub + uo * uo + k * acc * acc)
}

/// A vector kernel doing `ops` roundings per element in its compute type and a reduction of
/// `reduce_len` terms (0: none), reading and writing `t`.
pub fn vector(t: DType, ops: f64, reduce_len: u64) -> f64 {
    let compute = match t {
        DType::Fp16 => DType::Fp16,
        // BF16 and INT8 inputs are computed in FP32 on the vector unit (see vector.rs).
        _ => DType::Fp32,
    };
    let uc = unit(compute);
    let uo = unit(t);
    let acc = unit(DType::Fp32);
    libm::sqrt(uo * uo + ops.max(0.0) * uc * uc + reduce_len as f64 * acc * acc)
}

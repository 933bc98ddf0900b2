//! 2-D convolution lowered to img2col + matmul on the cube (the Ascend convolution path):
//! M = batch x out_h x out_w output pixels, N = out_ch, K = in_ch x kh x kw. The img2col
//! expansion happens on the way from L1 to L0A (load3d, D `_10_0007`), so GM is read at the
//! input's own size: A's GM bytes are scaled by stride^2 / (kh x kw), at most 1 (the halo of
//! each block is ignored, a documented approximation). The TCubeTiling applies as for matmul.

use super::matmul::{self, Problem};
use crate::device::Device;
use crate::estimate::{Estimate, Infeasible};
use crate::op::{Epilogue, Op};
use crate::tiling::Tiling;

/// Output height and width of a convolution.
pub fn output_hw(h: u64, w: u64, kh: u64, kw: u64, stride: u64, pad: u64) -> Result<(u64, u64), Infeasible> {
    let (hp, wp) = (h.saturating_add(pad.saturating_mul(2)), w.saturating_add(pad.saturating_mul(2)));
    if kh > hp || kw > wp {
        return Err(Infeasible::new(format!("kernel {kh}x{kw} is larger than the padded input {hp}x{wp}")));
    }
    Ok(((hp - kh) / stride + 1, (wp - kw) / stride + 1))
}

/// The matmul problem behind an `Op::Conv2d`.
pub fn problem(op: &Op) -> Result<Problem, Infeasible> {
    match *op {
        Op::Conv2d { batch, in_ch, out_ch, h, w, kh, kw, stride, pad, dtype } => {
            super::check_dims(&[("batch", batch), ("in_ch", in_ch), ("out_ch", out_ch), ("h", h), ("w", w), ("kh", kh), ("kw", kw), ("stride", stride)])?;
            let (oh, ow) = output_hw(h, w, kh, kw, stride, pad)?;
            let m = batch.saturating_mul(oh).saturating_mul(ow);
            let k = in_ch.saturating_mul(kh).saturating_mul(kw);
            super::check_dims(&[("batch x out_h x out_w", m), ("out_ch", out_ch), ("in_ch x kh x kw", k)])?;
            let reuse = (stride * stride) as f64 / (kh * kw) as f64;
            Ok(Problem { batch: 1, m, n: out_ch, k, a: dtype, b: dtype, a_gm_scale: reuse.min(1.0), epilogue: Epilogue::None })
        }
        _ => Err(Infeasible::new("not a convolution")),
    }
}

/// `Op::Conv2d` entry point.
pub fn estimate(op: &Op, tiling: &Tiling, d: &Device) -> Result<Estimate, Infeasible> {
    matmul::estimate_problem(problem(op)?, tiling, d)
}

//! The weight format a serving release loads float linear weights in (engine layer, by release).
//!
//! vLLM-Ascend v0.11.0rc1 made `VLLM_ASCEND_ENABLE_NZ=1` (its default) cast the weights of
//! unquantised BF16/FP16 linear layers to FRACTAL_NZ at load (PR #3356); the v0.11.0 branch
//! turned that off for float weights in v0.11.0rc3 (#4495, "to speed up dense model"), main
//! kept it through v0.12.0rc1 (whose notes name it as why BF16/FP16 models ran slow) and
//! v0.13.0rc1 turned it off (#4878). Which releases cast is release data
//! (assets/engines/releases.json `float_weight_nz`); what the cast costs is the engine's
//! `float_nz_linear_factor` (assets/constants/serving-host.json, source I4110: the same launch
//! 12% slower per token on the v0.11.0rc1 image than on v0.9.1).
//!
//! Why a factor on the linear layers' time and not a different matmul model: this tool's matmul
//! model reproduces the GEMV times profiled on an ND-weight launch of the same shapes
//! (op-qwq32b-tp4-decode-ffn-matmul), and the sources give the cast's cost only as a step
//! ratio; the factor is the step ratio moved onto the operators it acts on. Quantised weights
//! are NZ in every release (they are not priced here), and so are the other operators.

use super::host::HostCosts;
use crate::stages::serving::OpCost;
use tunelab_sim::dtype::DType;
use tunelab_sim::op::Op;

/// The factor the device time of `op` (named `name` in the step) takes under `host`'s release:
/// `float_nz_linear_factor` for a linear layer (a plain matmul) with BF16/FP16 weights in a
/// release that casts them to NZ, 1 otherwise. The LM head is not one: it loads through vLLM's
/// embedding method (ParallelLMHead), not the linear method #3356 changed.
pub fn factor(host: &HostCosts, op: &Op, name: &str) -> f64 {
    if !host.float_weight_nz || host.float_nz_linear_factor <= 1.0 || name.contains("lm_head") {
        return 1.0;
    }
    match op {
        Op::Matmul { batch: 1, dtype, weight_dtype, .. } if matches!(weight_dtype.unwrap_or(*dtype), DType::Bf16 | DType::Fp16) => host.float_nz_linear_factor,
        _ => 1.0,
    }
}

/// `e` (the estimate of `op`, named `name`) with the release's weight-format factor applied to its time and
/// energy (the breakdown by engine stays the ND kernel's: the sources give no split).
pub fn scaled(host: &HostCosts, op: &Op, name: &str, mut e: tunelab_sim::estimate::Estimate) -> tunelab_sim::estimate::Estimate {
    let f = factor(host, op, name);
    if f != 1.0 {
        e.time_us *= f;
        e.energy_uj *= f;
        e.attained_tflops /= f;
    }
    e
}

/// The named line of a step's breakdown: the linear layers' extra time under the release's
/// NZ float weights (None when the release leaves them ND or the step has none).
pub fn line(host: &HostCosts, ops: &[OpCost]) -> Option<String> {
    let mut total = 0.0;
    for o in ops {
        let f = factor(host, &o.op, &o.name);
        if f > 1.0 {
            total += o.time_us - o.time_us / f;
        }
    }
    (total > 0.0).then(|| {
        format!(
            "release weight format: BF16/FP16 linear weights cast to FRACTAL_NZ at load (vllm-ascend v0.11.0rc1-rc2: VLLM_ASCEND_ENABLE_NZ=1), linear layers x{} = {} ms of the step's device time",
            host.float_nz_linear_factor,
            crate::spec::metrics::fmt4(total / 1e3)
        )
    })
}

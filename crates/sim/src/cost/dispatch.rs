//! Host dispatch: what it costs to get operators onto the device, eagerly or as one graph.
//!
//! Mechanism. Every kernel also pays a device-side launch (`launch_matmul_us`,
//! `launch_vector_us`, `launch_comm_us`: task scheduling, core start, tail sync), already part
//! of each operator's `Estimate`. On top of that:
//! - **Eager** (PyTorch + torch_npu / aclnn, op by op): the host spends
//!   `eager_host_us_per_launch` on every framework kernel launch, plus
//!   `eager_host_us_attention` for a fused-attention call (its tiling is computed on the host).
//!   The host runs ahead of the device through the stream queue, so a step takes the longer of
//!   the host's and the device's totals, plus one launch before the device can start.
//! - **Graph** (torchair / GE, ACL graph): one `graph_launch_us` per step replaces the host's
//!   per-operator work; the device still pays each kernel's device-side launch.
//!
//! Launch counts: one modelled operator is one fused kernel, but the eager reference code (the
//! Hugging Face modeling code run op by op on torch_npu) issues several framework launches for
//! some of them: RMSNorm is cast, pow, mean, add, rsqrt, mul, cast, mul (8); rotary embedding
//! is mul, neg, cat, mul, add for q and for k (10); softmax is softmax + cast (2); SwiGLU is
//! silu + mul (2). These counts come from the structure of that code, not from measurements.
//!
//! Both host costs are the kernel library's (assets/kernels/libraries.json, family `dispatch`):
//! what calling the library through torch_npu costs the host, not a chip fact.
//!
//! Derivation of the per-launch cost (see the library's notes): back-to-back `torch.matmul`
//! calls of 255^3..768^3 take 16-22 us each on 910B2 (op-matmul-fp32-768cube, host-bound);
//! Llama-2-7B decode on 800I A2 takes 28.1 ms eager vs 14.2 ms in graph mode. The modelled
//! decode step issues ~34 framework launches per layer (norms 2 x 8, rotary 10, five matmuls,
//! attention, SwiGLU 2, two residual adds), ~1130 for 32 layers: 28.1 ms host-bound gives ~25 us per launch, the matmul floor
//! ~18 us; 20 us sits between them, bounded by [5, 60] us (below 5 us no Python framework
//! dispatch has been reported; above 60 us a 7B decode step would exceed 65 ms eager).

use crate::device::Device;
use crate::op::{AttentionKind, Epilogue, Op, VectorKind};
use serde::{Deserialize, Serialize};

/// How a step's operators reach the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LaunchMode {
    /// Op by op from the framework (PyTorch eager).
    #[default]
    Eager,
    /// One captured graph per step.
    Graph,
}

impl LaunchMode {
    /// "eager" or "graph" (the deployment stage's knob values).
    pub fn parse(s: &str) -> Result<LaunchMode, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "eager" => Ok(LaunchMode::Eager),
            "graph" => Ok(LaunchMode::Graph),
            o => Err(format!("unknown launch mode '{o}' (eager, graph)")),
        }
    }
}

/// Framework kernel launches the eager reference code issues for one modelled operator.
pub fn eager_launches(op: &Op) -> f64 {
    match op {
        Op::Matmul { epilogue, .. } => match epilogue {
            // addmm takes the bias; an activation or a residual add is one more launch.
            Epilogue::None | Epilogue::Bias => 1.0,
            Epilogue::BiasGelu | Epilogue::ResidualAdd => 2.0,
            Epilogue::SwiGlu => 3.0,
        },
        Op::Vector { kind, .. } => match kind {
            VectorKind::RmsNorm => 8.0,
            VectorKind::Rotary => 10.0,
            VectorKind::Softmax | VectorKind::SwiGlu => 2.0,
            VectorKind::Quantize => 3.0,
            VectorKind::Elementwise | VectorKind::Activation | VectorKind::LayerNorm | VectorKind::Reduce | VectorKind::Cast | VectorKind::Gather | VectorKind::Scale => 1.0,
            // The vector phase of a grouped matmul's antiquant path: inside that one call.
            VectorKind::Antiquant => 0.0,
        },
        // Unfused: QK^T, scale, mask add, softmax, cast, PV, transpose.
        Op::Attention { kind: AttentionKind::Unfused | AttentionKind::Exported, .. } => 7.0,
        Op::Attention { .. } => 1.0,
        // Conv2d is one aclnn call; a collective is one HCCL call.
        // A grouped matmul and a MoE exchange kernel are one call each.
        Op::Conv2d { .. } | Op::Comm { .. } | Op::GroupedMatmul { .. } | Op::MoeComm { .. } => 1.0,
    }
}

/// Host time to issue `op` once in `mode` (graph mode: nothing per operator).
pub fn host_us(d: &Device, op: &Op, mode: LaunchMode) -> f64 {
    match mode {
        LaunchMode::Graph => 0.0,
        LaunchMode::Eager => {
            let extra = match op {
                Op::Attention { kind: AttentionKind::Flash | AttentionKind::Decode, .. } => d.eager_host_us_attention,
                _ => 0.0,
            };
            eager_launches(op) * d.eager_host_us_per_launch + extra
        }
    }
}

/// Wall time of a step whose operators take `device_us` on the device in total (device-side
/// launches included, as in their estimates) and `host_us` on the host in total (the sum of
/// `host_us` over the operators, repeats included).
pub fn step_us(d: &Device, mode: LaunchMode, device_us: f64, host_us: f64) -> f64 {
    match mode {
        LaunchMode::Graph => d.graph_launch_us + device_us,
        // The device starts after the first launch; the host then runs ahead via the queue.
        LaunchMode::Eager => d.eager_host_us_per_launch + if host_us > device_us { host_us } else { device_us },
    }
}

/// One operator timed on its own between two device events in eager mode (as in the operator
/// rows of the calibration set): the host issues it, then the device runs it.
pub fn single_call_us(d: &Device, op: &Op, device_us: f64) -> f64 {
    host_us(d, op, LaunchMode::Eager) + device_us
}

/// The same operator called back to back `n` times (inner iterations): per call, the longer of
/// host and device time (the queue hides the shorter), plus the first launch spread over `n`.
pub fn back_to_back_us(d: &Device, op: &Op, device_us: f64, n: f64) -> f64 {
    let h = host_us(d, op, LaunchMode::Eager);
    let n = if n >= 1.0 { n } else { 1.0 };
    (if h > device_us { h } else { device_us }) + h / n
}

/// How an operator's time is measured: what a benchmark's timer sees around the kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Timing {
    /// The kernel alone on the device (a profiler's task duration, a kernel's compute-only time).
    #[default]
    Device,
    /// One framework call timed around it (device events or a host timer with a sync): the eager
    /// host dispatch, then the kernel (`single_call_us`).
    SingleCall,
    /// The call repeated `calls` times in a timed loop, per call (`back_to_back_us`).
    BackToBack { calls: f64 },
}

impl Timing {
    /// "device", "single_call" or "back_to_back" (the operator stage's `timing` option) with
    /// the loop's call count for "back_to_back".
    pub fn parse(s: &str, calls: u64) -> Result<Timing, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "device" => Ok(Timing::Device),
            "single_call" => Ok(Timing::SingleCall),
            "back_to_back" if calls >= 1 => Ok(Timing::BackToBack { calls: calls as f64 }),
            "back_to_back" => Err("back_to_back timing needs at least 1 call per loop".into()),
            o => Err(format!("unknown timing '{o}' (device, single_call, back_to_back)")),
        }
    }

    /// Time per call of `op`, whose kernel takes `device_us` on the device, as this timing sees it.
    pub fn time_us(&self, d: &Device, op: &Op, device_us: f64) -> f64 {
        match *self {
            Timing::Device => device_us,
            Timing::SingleCall => single_call_us(d, op, device_us),
            Timing::BackToBack { calls } => back_to_back_us(d, op, device_us, calls),
        }
    }
}

/// Host, device and wall time of one step of operators.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepTime {
    pub host_us: f64,
    pub device_us: f64,
    pub total_us: f64,
}

/// A step from `(op, device time per call, repeat)` triples: the graph-level time in `mode`.
pub fn graph_time<'a>(d: &Device, mode: LaunchMode, ops: impl IntoIterator<Item = (&'a Op, f64, f64)>) -> StepTime {
    let (mut host, mut dev) = (0.0, 0.0);
    for (op, us, repeat) in ops {
        host += host_us(d, op, mode) * repeat;
        dev += us * repeat;
    }
    StepTime { host_us: host, device_us: dev, total_us: step_us(d, mode, dev, host) }
}

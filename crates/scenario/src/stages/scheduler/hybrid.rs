//! Host cost of a hybrid (linear-attention) model's token mixer under an engine that runs it as
//! Triton kernels (vLLM-Ascend: `vllm_ascend/ops/triton/fla`, `ops/triton/mamba`).
//!
//! Why its own term: a Triton kernel is launched from Python through Triton's launcher (argument
//! binding, grid and constexpr specialisation lookup), which costs far more host time than an
//! aclnn call through torch_npu: vLLM-Ascend's own GDN code measures "~220 us of host Python
//! whatever the row count" per l2norm_fwd launch (`vllm_ascend/ops/gdn.py`, `_l2norm_qk`), and
//! prefill steps run eagerly, so those launches set how long the device idles. The engine's
//! `triton_launch_host_us` (assets/constants/serving-host.json) prices one launch; the launch
//! counts per linear layer come from the structure of that code
//! (`tunelab_sim::workload::linear_attention::TRITON_LAUNCHES_*`). The mixer operators those
//! kernels implement then pay no aclnn dispatch of their own (`runs_as_triton`).
//!
//! When: a step with prompt tokens always launches them (prefill steps are never captured); a
//! decode-only step launches them eagerly, or only the attention custom op's share between the
//! pieces of a piecewise-captured step, or none inside a fully captured graph. The chunked
//! delta rule's wrapper copies sequence boundaries to the host once per layer, which waits for
//! the device: the launches after that sync add to the step's time instead of hiding under the
//! device's (`serial`); the others are part of the step's eager dispatch, which races the
//! device and is floored by the engine's per-layer Python path (`price`, `overlapped`).

use super::price::{HostCosts, StepPricer, StepShape};
use tunelab_sim::model::Mixer;
use tunelab_sim::workload::linear_attention as la;
use tunelab_sim::workload::ssm;

/// Whether operator `name` runs inside a hybrid mixer's Triton kernels (or the Mamba-2
/// torch-native convolution) under engine costs `h`: then its launch is priced per step by
/// `StepPricer::mixer_host_us`, not as an aclnn dispatch of its own.
pub fn in_mixer_kernels(h: &HostCosts, name: &str) -> bool {
    h.triton_launch_host_us > 0.0 && (la::runs_as_triton(name) || ssm::runs_in_mamba2_kernels(name))
}

/// Host time of one step's Triton launches, us: (overlapped with the device, serial with it).
pub fn triton_host_us(h: &HostCosts, linear_layers: u64, s: &StepShape, graph: bool, piecewise: bool) -> (f64, f64) {
    if (h.triton_launch_host_us <= 0.0 && h.linear_prefill_python_us <= 0.0) || linear_layers == 0 || s.prefill_tokens + s.decode_seqs == 0 {
        return (0.0, 0.0);
    }
    let per = h.triton_launch_host_us * linear_layers as f64;
    if s.prefill_tokens > 0 {
        // The decode slice's own launches: the release's count (`gdn_mixed_decode_launches`:
        // vLLM-Ascend's ops/gdn.py, absent before v0.19.1, where decodes ride the chunk path).
        let mixed = if s.decode_seqs > 0 { h.gdn_mixed_decode_launches } else { 0.0 };
        let serial = la::TRITON_LAUNCHES_PREFILL_AFTER_SYNC;
        let before = (la::TRITON_LAUNCHES_PREFILL - serial) as f64 + mixed;
        // The layer's Python around those launches also waits behind the sync.
        let python = h.linear_prefill_python_us * linear_layers as f64;
        return (per * before, per * serial as f64 + python);
    }
    let n = match (graph, piecewise) {
        (true, false) => 0,
        (true, true) => la::TRITON_LAUNCHES_DECODE_CORE,
        (false, _) => la::TRITON_LAUNCHES_DECODE,
    };
    (per * n as f64, 0.0)
}

/// Host time of one step's Mamba-2 mixers (Nemotron-H) under an engine that runs them as Triton
/// kernels (`layers` of them), us: (racing the device, serial with it). The launch counts and the host syncs come
/// from vLLM-Ascend's code (`tunelab_sim::workload::ssm::mamba2_host_us`); a Triton launch
/// costs the engine's `triton_launch_host_us`, a framework launch the chip's
/// `eager_host_us_per_launch`.
/// A step with prompt tokens also waits for each Mamba-2 layer's Python forward after the
/// convolution's host sync (`mamba2_prefill_python_us`), as a Gated DeltaNet layer's
/// (`linear_prefill_python_us`).
pub fn mamba2_host_us(h: &HostCosts, layers: u64, aclnn_us: f64, s: &StepShape, graph: bool, piecewise: bool) -> (f64, f64) {
    let (racing, serial) = ssm::mamba2_host_us(h.triton_launch_host_us, aclnn_us, layers, s.prefill_seqs, s.decode_seqs, graph, piecewise);
    let python = if h.triton_launch_host_us > 0.0 && s.prefill_tokens > 0 { h.mamba2_prefill_python_us * layers as f64 } else { 0.0 };
    (racing, serial + python)
}

/// Device time of a step's chunked delta rule over `seqs` prompts of `q` new tokens each under
/// an engine that launches it as Triton kernels, us: their measured per-token speed, and no
/// less than the per-sequence-and-head programs of the recurrent stages take when they are too
/// few to fill the chip (`la::triton_chunk_us_seqs`). None when the engine runs no Triton mixer.
pub fn triton_chunk_seqs_us(h: &HostCosts, l: &tunelab_sim::model::LinearAttention, tp: u64, seqs: u64, q: u64, device: &tunelab_sim::device::Device) -> Option<f64> {
    if h.triton_launch_host_us <= 0.0 {
        return None;
    }
    la::triton_chunk_us_seqs(l, tp, seqs, q, device).map(|(us, _)| us)
}

/// The mixer layers an engine launches through Triton kernels from Python: (Gated DeltaNet
/// layers, Mamba-2 layers) of the pricer's model.
fn mixer_layers(p: &StepPricer) -> (u64, u64) {
    let t = p.model.llm.as_ref();
    let linear = t.and_then(|t| t.linear_attention.as_ref()).map_or(0, |l| l.layers);
    let mamba = t.filter(|t| t.mamba.is_some()).map_or(0, |t| t.count_mixers(|m| matches!(m, Mixer::Mamba2)));
    (linear, mamba)
}

impl StepPricer {
    /// The breakdown's line for the recurrent chunk stages of step `s` when their programs (one
    /// per prompt and value head) are too few to fill the chip, so that they take longer than
    /// the measured per-token speed (`la::triton_chunk_us_seqs`); None otherwise, or without
    /// Triton linear-attention kernels. The prompts are taken at their mean length.
    pub fn chunk_occupancy_line(&self, s: &StepShape) -> Option<String> {
        let l = self.model.llm.as_ref()?.linear_attention.as_ref()?;
        if self.host.triton_launch_host_us <= 0.0 || s.prefill_seqs == 0 || s.prefill_tokens <= s.prefill_seqs {
            return None;
        }
        let q = s.prefill_tokens.div_ceil(s.prefill_seqs);
        let tp = self.plan.tp.max(1);
        let (_, extra) = la::triton_chunk_us_seqs(l, tp, s.prefill_seqs, q, &self.device)?;
        if extra <= 0.0 {
            return None;
        }
        let heads = l.value_heads.div_ceil(tp);
        let programs = s.prefill_seqs * heads;
        let cores = u64::from(self.device.cube_cores.max(1));
        Some(format!(
            "Gated DeltaNet chunk recurrence (Triton chunk_gated_delta_rule_fwd_h and chunk_fwd_o, one program per prompt and value head walking its {} chunks of {} tokens in turn): {} prompts x {heads} value heads per rank = {programs} programs on {cores} cores, {} wave(s), {} ms more than the per-token speed over the {} linear layers",
            q.div_ceil(la::CHUNK),
            la::CHUNK,
            s.prefill_seqs,
            programs.div_ceil(cores),
            crate::spec::metrics::fmt4(extra / 1e3),
            l.layers
        ))
    }

    /// Host time of step `s`'s hybrid mixer kernels launched from Python, us: (racing the
    /// device, serial with it after the mixers' host syncs). `graph`: the step runs as a
    /// captured graph (piecewise or whole, as the engine captures). The one place the step
    /// pricer (`price::step_with`) and the breakdown's lines (`load_lines`) take it from.
    pub fn mixer_host_us(&self, s: &StepShape, graph: bool) -> (f64, f64) {
        let h = &self.host;
        let (linear, mamba_layers) = mixer_layers(self);
        let (triton, serial) = triton_host_us(h, linear, s, graph, h.piecewise);
        let (mamba, mamba_serial) = mamba2_host_us(h, mamba_layers, self.device.eager_host_us_per_launch, s, graph, h.piecewise);
        (triton + mamba, serial + mamba_serial)
    }

    /// Named lines for step `s`'s hybrid mixers (the app's Explore detail, `tunelab eval
    /// --ops`): what each mixer layer launches from Python (counted from the engine's code:
    /// `la::TRITON_LAUNCHES_*`, `ssm::MAMBA2_*`), at which per-launch cost, and whether that
    /// host time races the device or waits behind a host sync. Empty without such mixers or
    /// when the step runs inside one captured graph.
    pub fn mixer_lines(&self, s: &StepShape, graph: bool) -> Vec<String> {
        let h = &self.host;
        let (linear, mamba) = mixer_layers(self);
        let (racing, serial) = self.mixer_host_us(s, graph);
        if racing + serial <= 0.0 {
            return Vec::new();
        }
        let ms = |us: f64| crate::spec::metrics::fmt4(us / 1e3);
        let (t, a) = (h.triton_launch_host_us, self.device.eager_host_us_per_launch);
        let mut parts = Vec::new();
        if s.prefill_tokens > 0 {
            if linear > 0 {
                let after = la::TRITON_LAUNCHES_PREFILL_AFTER_SYNC;
                parts.push(format!(
                    "{linear} Gated DeltaNet layers x ({} Triton launches before the chunk wrapper's cu_seqlens.tolist() host sync{}, {after} after it, and {} us of the layer's Python after it)",
                    la::TRITON_LAUNCHES_PREFILL - after,
                    if s.decode_seqs > 0 && h.gdn_mixed_decode_launches > 0.0 { format!(" + {} for the decode slice", h.gdn_mixed_decode_launches) } else { String::new() },
                    h.linear_prefill_python_us
                ));
            }
            if mamba > 0 {
                parts.push(format!(
                    "{mamba} Mamba-2 layers x ({} Triton SSD launches, {} aclnn launches ({} of them per prompt) and {} us of the layer's Python, all after the torch-native convolution's seqlens.tolist() / .item() host syncs{})",
                    ssm::MAMBA2_TRITON_LAUNCHES_PREFILL,
                    ssm::MAMBA2_PREFILL_LAUNCHES_PER_LAYER + ssm::MAMBA2_CONV_LAUNCHES_PER_PROMPT * s.prefill_seqs,
                    ssm::MAMBA2_CONV_LAUNCHES_PER_PROMPT,
                    h.mamba2_prefill_python_us,
                    if s.decode_seqs > 0 { format!("; the decode slice's {} Triton + {} aclnn before them", ssm::MAMBA2_TRITON_LAUNCHES_DECODE, ssm::MAMBA2_ACLNN_LAUNCHES_DECODE) } else { String::new() }
                ));
            }
        } else {
            if linear > 0 {
                let n = if graph { la::TRITON_LAUNCHES_DECODE_CORE } else { la::TRITON_LAUNCHES_DECODE };
                let what = if graph { "inside the attention custom op, between the captured pieces" } else { "conv1d update, gating, recurrent kernel, gated norm" };
                parts.push(format!("{linear} Gated DeltaNet layers x {n} Triton launches ({what})"));
            }
            if mamba > 0 {
                parts.push(format!(
                    "{mamba} Mamba-2 layers x ({} Triton launches: causal_conv1d_update, selective_state_update; {} aclnn: the conv weight's transposed copy)",
                    ssm::MAMBA2_TRITON_LAUNCHES_DECODE,
                    ssm::MAMBA2_ACLNN_LAUNCHES_DECODE
                ));
            }
        }
        let cost = format!("{t} us per Triton launch (the engine's triton_launch_host_us), {a} us per aclnn launch");
        let mut out = vec![format!("hybrid mixers, launched from Python (counted from the engine's code): {} at {cost}", parts.join(" + "))];
        if racing > 0.0 {
            out.push(format!("host, racing the device: the hybrid mixers' launches before any host sync = {} ms, part of the step's host side above", ms(racing)));
        }
        if serial > 0.0 {
            out.push(format!("host, in series after the mixers' host syncs (the device has drained and waits): {} ms", ms(serial)));
        }
        out
    }

    /// The diagnosis's sentence when the hybrid mixers' host launches shape step `s` (`graph`
    /// as priced, `device_us` its device time, `time_us` its wall time): they set the step when
    /// the eager host side they belong to is longer than both the device and the engine's
    /// per-layer Python floor, or when their launches after a host sync take a fifth of it.
    pub fn mixer_sentence(&self, s: &StepShape, dispatch_us: f64, graph: bool, device_us: f64, time_us: f64, label: &str) -> Option<String> {
        let (racing, serial) = self.mixer_host_us(s, graph);
        if racing + serial <= 0.0 || time_us <= 0.0 {
            return None;
        }
        let ms = |us: f64| crate::spec::metrics::fmt4(us / 1e3);
        let layers = self.model.llm.as_ref().map_or(0, |t| t.layers) as f64;
        let floor = self.host.piecewise_host_us_per_layer * layers;
        let host = dispatch_us + racing;
        if serial >= 0.2 * time_us {
            return Some(format!(
                "the hybrid mixers' host work after their host syncs (Triton and framework launches and the layers' Python, after .tolist() / .item() in the engine's mixer code) takes {} ms of the {label} step's {} ms ({:.0}%): the device has drained and waits for each of them, so they add to the step instead of hiding under the device's {} ms",
                ms(serial),
                ms(time_us),
                100.0 * serial / time_us,
                ms(device_us)
            ));
        }
        (!graph && host > floor && host > device_us && racing >= 0.2 * host).then(|| {
            format!(
                "the hybrid mixers' Triton launches from Python set the {label} step: {} ms of them on top of {} ms of eager dispatch make the host side {} ms, longer than the device's {} ms and the engine's per-layer Python floor ({} ms); a captured decode graph (FULL_DECODE_ONLY) launches none of them",
                ms(racing),
                ms(dispatch_us),
                ms(host),
                ms(device_us),
                ms(floor)
            )
        })
    }
}

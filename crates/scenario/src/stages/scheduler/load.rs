//! What load does to a serving step, in words (issue 43 §3, "load that moves the step"): the
//! experts the step's tokens touch on the busiest expert-parallel rank (each touched expert's
//! weights are read, and on the W4A16 workspace path dequantised, once per layer:
//! `tunelab_sim::workload::experts_touched`), and the engine's host terms (the per-layer Python
//! of a piecewise step or the eager dispatch, which race the device; the per-step and
//! per-sequence work, which the device waits for). The operator breakdown's label (Explore's
//! detail in the app, `tunelab eval --ops`) lists these lines, and the diagnosis says when the
//! experts touched drive the step. The numbers are the step pricer's own (`price::step_with`).

use super::price::{StepPricer, StepShape};
use crate::stages::serving::OpCost;
use tunelab_sim::cost::dispatch::{self, LaunchMode};
use tunelab_sim::Op;

/// The routed experts of a step's operator list: the experts the busiest rank runs per layer
/// (the grouped matmul's batch), the device time of the experts' matmuls and of their W4A16
/// workspace dequantisation, and the step's device time, in us. None without routed experts.
pub struct ExpertLoad {
    pub experts: u64,
    pub experts_us: f64,
    pub antiquant_us: f64,
    pub total_us: f64,
}

pub fn expert_load(ops: &[OpCost]) -> Option<ExpertLoad> {
    let total_us: f64 = ops.iter().map(|o| o.time_us).sum();
    let mut experts = 0;
    let (mut experts_us, mut antiquant_us) = (0.0, 0.0);
    for o in ops.iter().filter(|o| o.name.contains(".moe.experts.") && !o.name.starts_with("draft.")) {
        experts_us += o.time_us;
        if o.name.ends_with(".antiquant") {
            antiquant_us += o.time_us;
        } else if let Op::Matmul { batch, .. } = o.op {
            // A grouped matmul's batch is the experts it runs (SequentialMLP's one-expert
            // matmuls leave it at 1).
            experts = experts.max(batch);
        }
    }
    (experts_us > 0.0).then_some(ExpertLoad { experts: experts.max(1), experts_us, antiquant_us, total_us })
}

/// The sentence the diagnosis says when the experts a step's tokens touch take at least a
/// fifth of its device time: more requests in a step touch more experts, so the step slows
/// with load.
pub fn load_sentence(ops: &[OpCost], label: &str) -> Option<String> {
    let l = expert_load(ops)?;
    let share = l.experts_us / l.total_us.max(1e-9);
    (share >= 0.2).then(|| {
        let deq = if l.antiquant_us > 0.0 {
            format!(", {:.0}% of it dequantising the packed weights into the grouped matmul's 16-bit workspace (the W4A16 path of the kernel library)", 100.0 * l.antiquant_us / l.experts_us)
        } else {
            String::new()
        };
        format!(
            "load drives the {label} step: the routed experts the busiest expert-parallel rank runs ({} per layer this step) take {:.0}% of it{deq}; each expert a token touches is read whole, so more requests per step touch more experts and the step slows with concurrency until every local expert is touched",
            l.experts,
            100.0 * share
        )
    })
}

impl StepPricer {
    /// Named lines for a step of shape `s` whose operators are `ops` (`step_operators`), priced
    /// as `graph` (it ran as a captured graph) with `device_us` of device time: the experts
    /// touched, then the host terms as `price::step_with` takes them.
    pub fn load_lines(&self, s: &StepShape, ops: &[OpCost], graph: bool, device_us: f64) -> Vec<String> {
        let mut out = Vec::new();
        let ms = |us: f64| crate::spec::metrics::fmt4(us / 1e3);
        if let (Some(l), Some(m)) = (expert_load(ops), self.model.llm.as_ref().and_then(|t| t.moe.as_ref())) {
            let ep = self.plan.ep.max(1);
            let per_rank = (self.plan.expert_slots(m.experts) / ep).max(1);
            let deq = if l.antiquant_us > 0.0 { format!(", {} ms of it dequantising W4A16 weights into the grouped matmul's workspace", ms(l.antiquant_us)) } else { String::new() };
            out.push(format!("experts touched: {} of the busiest EP rank's {per_rank} per layer (of {ep} ranks) for {} routed tokens, {} ms of device time{deq}", l.experts, s.prefill_tokens + s.decode_seqs, ms(l.experts_us)));
        }
        let h = &self.host;
        let layers = self.model.llm.as_ref().map_or(0, |t| t.layers) as f64;
        let python = h.piecewise_host_us_per_layer * layers;
        // The hybrid mixers' Triton launches before any host sync race the device with the
        // rest of the host side (`hybrid::mixer_host_us`, as `price::step_with` takes them).
        let (mixers, _) = self.mixer_host_us(s, graph);
        let with_mixers = |what: String| if mixers > 0.0 { format!("{what} + the hybrid mixers' launches {} ms", ms(mixers)) } else { what };
        // What races the device (the step takes the longer of it and the device time).
        let racing = if graph && h.piecewise {
            Some(if mixers > python {
                (format!("the hybrid mixers' launches between captured pieces (longer than the Python floor of {layers} layers x {} us)", h.piecewise_host_us_per_layer), mixers)
            } else {
                (format!("the Python between captured pieces, {layers} layers x {} us", h.piecewise_host_us_per_layer), python)
            })
        } else if graph {
            None
        } else {
            let eager = self.eager_dispatch_us(ops) + mixers;
            Some(if python > eager {
                (format!("the Python floor of {layers} layers x {} us ({})", h.piecewise_host_us_per_layer, with_mixers(format!("eager dispatch {} ms", ms(eager - mixers)))), python)
            } else {
                (with_mixers(format!("eager dispatch of every launch {} ms", ms(eager - mixers))), eager)
            })
        };
        if let Some((what, host_us)) = racing.clone() {
            let longer = if device_us >= host_us { "the device is the longer, so load shows in the step" } else { "the host is the longer, so the step stays at it until the device time passes it" };
            out.push(format!("host, racing the device: {what} = {} ms; device {} ms: {longer}", ms(host_us), ms(device_us)));
        }
        let a2a = self.a2a_sync(s, super::step_ops::verify_positions(self.spec.as_ref(), s));
        if a2a.moe_layers > 0 {
            out.push(format!(
                "host syncs of the all-to-all MoE dispatcher (the engine reads the split sizes back): {} MoE layers x {} x ({} us) = {} ms the device waits for the host's next collective launch",
                a2a.moe_layers,
                a2a.syncs_per_layer,
                a2a.per_sync_us,
                ms(a2a.us())
            ));
        }
        let verify = super::step_ops::verify_positions(self.spec.as_ref(), s);
        let serial_share = self.ep_serial_share(s, verify, graph);
        if let (Some((_, host_us)), true) = (racing.as_ref(), serial_share > 0.0) {
            let shorter = (device_us + a2a.us()).min(*host_us);
            out.push(format!(
                "{} (MC2 / all-to-all): {} of the shorter side ({} ms) = {} ms added to the race",
                super::a2a_sync::EP_SERIAL_WORDS,
                serial_share,
                ms(shorter),
                ms(serial_share * shorter)
            ));
        }
        out.extend(self.mixer_lines(s, graph));
        out.extend(super::weight_format::line(&self.host, ops));
        let seqs = s.decode_seqs + s.prefill_seqs;
        out.push(format!(
            "host, in series: per step {} ms ({}) + {seqs} sequences x {} us = {} ms",
            ms(h.step_host_us),
            if h.offline_call { format!("{}: Python wrapper, mask, normalize, output copy", super::host::OFFLINE_CALL_WORDS) } else { "scheduler, input preparation, sampler".to_string() },
            h.step_host_us_per_seq,
            ms(h.step_host_us_per_seq * seqs as f64)
        ));
        out
    }

    /// Host time of eager dispatch of a step's operators `ops`, us: every framework launch at
    /// the chip's per-launch cost and every collective at the engine's
    /// (`eager_host_us_per_collective`), as `price::step_with` sums them.
    pub fn eager_dispatch_us(&self, ops: &[OpCost]) -> f64 {
        let launches: f64 = ops.iter().filter(|o| !super::hybrid::in_mixer_kernels(&self.host, &o.name)).map(|o| dispatch::host_us(&self.device, &o.op, LaunchMode::Eager) * o.repeat as f64).sum();
        let collectives: f64 = ops.iter().filter(|o| matches!(o.op, Op::Comm { .. } | Op::MoeComm { .. })).map(|o| o.repeat as f64).sum();
        launches + self.host.eager_host_us_per_collective * collectives
    }
}

//! The operators of one step of a configuration, from the step pricer the stage serves it with
//! (Explore's detail and the diagnosis' "where the time goes").
//!
//! Why through the objective: the stage builds its pricer from the scenario (the engine's host
//! costs and cache handling, the cluster's placement, the draft model of speculative decoding)
//! and decodes the configuration its own way. Building the same step a second time elsewhere
//! drifted from it before (cache copies, verify steps); asking the stage's own pricer cannot.

use super::{knobs_named, setup_raw};
use crate::spec::scenario::Scenario;
use crate::stages::scheduler::price::StepShape;
use crate::stages::serving::{OpCost, Phase};
use tunelab_search::Config;
use tunelab_sim::memory::MemoryBreakdown;
use tunelab_sim::workload::{validate_plan, Workload};

/// Speculative decoding as the listed step runs it.
#[derive(Clone, Debug, PartialEq)]
pub struct SpecStep {
    /// The draft method (`deployment.serving.speculative.method`).
    pub method: String,
    /// Draft tokens per verify step.
    pub k: u64,
    /// Mean tokens one verify step yields per sequence (the accept length).
    pub tokens_per_step: f64,
}

/// One step of a configuration, operator by operator.
pub struct StepOperators {
    /// Device time of each operator, its own launch included, in the order the pricer sums them.
    pub ops: Vec<OpCost>,
    /// Memory per chip of the phase's workload under the stage's plan and options.
    pub memory: MemoryBreakdown,
    /// Set when the listed decode step verifies a draft's tokens.
    pub spec: Option<SpecStep>,
    /// Whether a hybrid model's chunked recurrence runs at the engine's Triton speed.
    pub triton_chunks: bool,
    /// The listed step in words, with the sequences it carries ("one decode step at the mean
    /// context, batch 16", "one prefill step of 4 whole 2048-token prompts (...)").
    pub what: String,
    pub tp: u64,
    /// Data-parallel attention ranks of the phase, and the expert-parallel degree of its plan
    /// (the one definition: `stages::scale::plan`, ep = tp x dp with expert parallelism).
    pub dp: u64,
    pub ep: u64,
    pub expert_parallel: bool,
    pub graph_launch: bool,
    /// The step as the stage prices it: device time, and wall time with the engine's host work
    /// (per-step scheduling and sampling, eager dispatch beyond the device time).
    pub device_ms: f64,
    pub wall_ms: f64,
    /// Host time of a hybrid model's mixer kernels launched from Python in this step, ms: the
    /// share racing the device and the share serial with it (`StepCost::mixer_kernels_*`).
    pub mixer_host_ms: (f64, f64),
    /// The diagnosis's sentence when the hybrid mixers' host launches set or lengthen this
    /// step (`scheduler::hybrid`, `StepPricer::mixer_sentence`); None otherwise.
    pub host_note: Option<String>,
}

/// The operators of one `phase` step of configuration `c` (parameter `names`) of a deployment
/// or runtime scenario, through the pricer the stage serves the configuration with. The simple
/// mode's steps are the ones it prices TTFT and TPOT with (`serve_static`): the prefill of the
/// batch's prompts, one decode step of the batch at the midpoint context. Under the scheduler
/// a prefill step is what fits max_num_batched_tokens, and the decode step carries `running`
/// sequences, the simulation's mean (rounded, at least 1, at most max_num_seqs). A
/// disaggregated layout's prefill is its prefill instance's.
pub fn step_operators(s: &Scenario, names: &[String], c: &Config, phase: Phase, running: Option<f64>) -> Result<StepOperators, String> {
    let mut obj = setup_raw(s)?;
    let k = knobs_named(names, c)?;
    // The ranks that run the phase: a disaggregated layout prefills on its prefill instances
    // (`serve_disagg`'s split of the chips), everything else on the configuration's ranks.
    let (tp, dp, prefill_side) = match (phase, k.scale.pd) {
        (Phase::Prefill, Some((x, y))) => {
            let chips = obj.cluster.as_ref().map_or(k.tp * k.scale.dp, |c| c.chips);
            // A prefill rank is prefill_tp x prefill_pp x prefill_cp chips.
            let ptp = k.scale.prefill_tp.max(1);
            let group = ptp * k.scale.prefill_pp.max(1) * k.scale.prefill_cp.max(1);
            (ptp, (chips.saturating_sub(y * k.tp * k.scale.dp) / x.max(1) / group).max(1), true)
        }
        _ => (k.tp, k.scale.dp, false),
    };
    let plan = obj.plan_at(&k, tp, dp);
    validate_plan(&obj.model, &plan)?;
    let opts = obj.opts(&k);
    let (pre, dec) = obj.workloads(k.batch);
    let Workload::Decode { context_len, .. } = dec else { return Err("decode workload expected".into()) };
    let input = obj.input;
    let w = if phase == Phase::Prefill { pre } else { dec };
    let memory = tunelab_sim::memory::memory_per_chip(&obj.model, &w, &plan, &opts, None)?;
    let method = obj.spec.speculative.as_ref().map(|o| o.method.clone()).unwrap_or_default();
    let decode_batch = running.map_or(k.batch, |r| (r.round() as u64).clamp(1, k.batch));
    let scheduled = !obj.spec.is_static();
    // A prefill step never holds more prompts than are in flight at once: a benchmark's
    // concurrency cap or a closed loop's clients, and the requests simulated (per rank).
    let in_flight = super::serve::clients_per_rank(&obj.spec, k.batch, dp).unwrap_or(u64::MAX).min((obj.spec.requests as u64).div_ceil(dp.max(1)));
    let pricer = obj.pricer_at(&k, tp, dp, prefill_side);
    if scheduled {
        // The graph capture the simulation's steps had (`scheduler::StepPricer::engine_limits`).
        pricer.engine_limits(k.batch, k.max_tokens);
    }
    let (shape, what) = match phase {
        // The scheduler admits prompts into a step up to max_num_batched_tokens: as many whole
        // prompts as fit, or with chunked prefill one budget-sized chunk of a longer prompt
        // (its last, which attends to the whole prompt).
        Phase::Prefill if scheduled => {
            // One prompt's tokens, a multimodal model's image tokens included.
            let len = pricer.prefill_shape(1, input).prefill_kv.max(1);
            let budget = k.max_tokens.max(1);
            if len > budget && k.chunked {
                let chunk = StepShape { prefill_seqs: 1, prefill_tokens: budget, prefill_kv: len, new_requests: 1, emitting: 1, ..Default::default() };
                (chunk, format!("one prefill step: the last {budget}-token chunk of a {len}-token prompt (chunked prefill, max_num_batched_tokens {budget})"))
            } else {
                let cap = k.batch.min(in_flight).max(1);
                let n = (budget / len).clamp(1, cap);
                let bound = match cap {
                    1 => "1 request in flight".to_string(),
                    c if c < k.batch => format!("{c} requests in flight"),
                    _ => format!("max_num_seqs {}", k.batch),
                };
                let prompts = if n == 1 { format!("one whole {len}-token prompt") } else { format!("{n} whole {len}-token prompts") };
                (pricer.prefill_shape(n, input), format!("one prefill step of {prompts} (max_num_batched_tokens {budget}, {bound})"))
            }
        }
        Phase::Prefill => (pricer.prefill_shape(k.batch, input), if k.batch == 1 { "one prefill of the batch, 1 prompt".to_string() } else { format!("one prefill of the batch, {} prompts", k.batch) }),
        Phase::Decode => {
            let step = if pricer.spec.is_some() { "one verify step at the mean context" } else { "one decode step at the mean context" };
            let seqs = if decode_batch < k.batch { format!("{decode_batch} running sequences (the simulation's mean, of max_num_seqs {})", k.batch) } else { format!("batch {decode_batch}") };
            (pricer.decode_shape(decode_batch, context_len), format!("{step}, {seqs}"))
        }
    };
    let spec = match (&pricer.spec, phase) {
        (Some(sp), Phase::Decode) => Some(SpecStep { method, k: sp.k, tokens_per_step: sp.tokens_per_step }),
        _ => None,
    };
    // Prefill context parallel: one PCP rank's share of the step and the key/value all-gather
    // at every layer (`scale::context`), priced as the stage prices it.
    let pcp = if prefill_side { k.scale.prefill_cp.max(1) } else { 1 };
    let (mut ops, triton_chunks) = pricer.step_operators(&crate::stages::scale::context::rank_shape(&shape, pcp))?;
    let mut what = what;
    if let Some((op, layers, estimate)) = crate::stages::scale::context::exchange(pricer, shape.prefill_tokens, pcp)? {
        ops.push(crate::stages::serving::OpCost { name: "layer.pcp.kv_allgather".into(), class: tunelab_sim::OpClass::Comm, repeat: layers, op, time_us: estimate.time_us, estimate });
        what.push_str(&format!(", on one of {pcp} prefill context-parallel ranks (its 1/{pcp} of the tokens, keys and values all-gathered at every layer)"));
    }
    // The same step priced as the stage prices it (grid tables, host work); a verify step's
    // price is per generated token, so it is scaled back to the whole step.
    let cost = crate::stages::scale::context::step(pricer, &shape, pcp, k.graph_launch)?;
    let per_step = spec.as_ref().map_or(1.0, |sp| sp.tokens_per_step.max(1.0));
    // What load does to this step, in named lines (experts touched, host terms): `scheduler::load`.
    for line in pricer.load_lines(&shape, &ops, cost.graph, cost.device_us) {
        what.push_str(&format!("; {line}"));
    }
    if let Some(line) = pricer.chunk_occupancy_line(&shape) {
        what.push_str(&format!("; {line}"));
    }
    let host_note = pricer.mixer_sentence(&shape, pricer.eager_dispatch_us(&ops), cost.graph, cost.device_us, cost.time_us, phase.name());
    Ok(StepOperators { ops, memory, spec, triton_chunks, what, tp, dp, ep: plan.ep, expert_parallel: k.expert_parallel, graph_launch: k.graph_launch, device_ms: cost.device_us * per_step / 1e3, wall_ms: cost.time_us * per_step / 1e3, mixer_host_ms: (cost.mixer_kernels_host_us * per_step / 1e3, cost.mixer_kernels_serial_us * per_step / 1e3), host_note })
}

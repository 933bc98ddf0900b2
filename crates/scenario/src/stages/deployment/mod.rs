//! The deployment stage: batch (max_num_seqs), precision (FP16, BF16, W8A16, W8A8),
//! tensor-parallel degree, KV-cache memory budget, memory allocation strategy, graph vs. eager
//! launch and, with the scheduler, the per-step token budget and chunked prefill, for serving a
//! model; every distinct operator tiled by the device model. A mixture-of-experts model also gets
//! `expert_parallel` ("off" first, then "on"): vLLM's `--enable-expert-parallel`, the routed
//! experts spread whole over the TP ranks (ep = tp) with all-to-all dispatch and combine,
//! attention still TP (`crate::stages::serving::plan`). Dense models' spaces do not have it.
//!
//! Two modes (`deployment.serving.mode`):
//! - "scheduler" (default): the continuous-batching simulation of `crate::scheduler` serves the
//!   scenario's request stream; TTFT, TPOT and inter-token latency are percentiles over the
//!   simulated requests (`ttft_ms` and `tpot_ms` are the p90s), throughput is generated tokens
//!   over the whole run, queueing delay is reported apart from compute, and goodput counts the
//!   requests within the scenario's TTFT and TPOT limits.
//! - "static" (simple mode, labelled so in the notes): TTFT is one prefill of `batch` prompts,
//!   TPOT one decode step at the midpoint context (`serving::workload`), and the instance
//!   generates `batch x output_len` tokens in TTFT + output_len x TPOT.
//!
//! Both price every step through `scheduler::price::StepPricer` (device model plus host work:
//! eager dispatch, graph launch, per-step scheduling and sampling). Memory: the engine reserves
//! `kv_cache_fraction` of the chip (as vLLM's `gpu_memory_utilization`); weights, workspace and
//! the largest step's activations come first and the rest is KV blocks. Static and pool
//! allocators report the whole share as used, the predictive planner only what it needs. Not
//! modelled: the dynamic pool's defragmentation pauses and graph capture time (one-offs).

mod capacity;
mod knobs;
mod metrics;
mod offline;
mod operators;
mod options;
mod pricers;
mod serve;
mod server;
pub use server::Server;

pub use metrics::metrics;
pub use operators::{step_operators, SpecStep, StepOperators};
pub use options::{allocated_ctx, moe_imbalance, step_graph_options};
use knobs::{knobs_named, memory_strategy, Knobs, ORDER};

use super::StageSetup;
use crate::stages::graphcost::TileMode;
use crate::spec::scenario::{clip, Scenario};
use crate::stages::scheduler::price::{HostCosts, StepPricer};
use crate::stages::scheduler::{requests, Request, ServingSpec, ServingStats, Slo};
use std::collections::HashMap;
use tunelab_search::{Config, Metric, Objective, Outcome, Param, Space, Value};
use tunelab_sim::device::Device;
use tunelab_sim::memory::{footprint, MemoryStrategy};
use tunelab_sim::model::ModelDesc;
use tunelab_sim::workload::{validate_plan, GraphOptions, ParallelPlan, Workload};
use tunelab_sim::Precision;

const GIB: f64 = (1u64 << 30) as f64;

struct DeploymentObjective {
    model: ModelDesc,
    device: Device,
    input: u64,
    output: u64,
    mode: TileMode,
    spec: ServingSpec,
    slo: Slo,
    reqs: Vec<Request>,
    /// The serving engine's host costs (`deployment.serving.engine`).
    host: HostCosts,
    /// The stage's parameter names in space order (`stage_names`).
    names: Vec<String>,
    /// One step pricer per (precision, tp, expert parallel, dp, redundant experts, prefill
    /// side, draft tokens): its memo serves both launch modes.
    pricers: HashMap<PricerKey, StepPricer>,
    /// The operator memo every pricer above (and its draft) shares: one chip, shapes recur
    /// (`graphcost::chip_memo`: the thread's memo of this chip profile, kept between objectives).
    memo: crate::stages::graphcost::SharedMemo,
    /// A deployment over several nodes (`deployment.cluster`, `super::scale`).
    cluster: Option<super::scale::Cluster>,
    /// Busiest expert's load over the mean (the cluster's setting; 1 without a cluster).
    moe_imbalance: f64,
    /// Capacity mode (`crate::stages::capacity`): the requests' arrivals at 1 req/s and the
    /// first rate probed; None prices at the scenario's own load.
    capacity: Option<(Vec<f64>, f64)>,
    /// The grid index of the last configuration's sustained rate: where the next rate search
    /// starts (`crate::stages::capacity::rate`).
    capacity_warm: Option<i32>,
}

/// (precision, tp, expert parallel, dp, redundant experts, prefill instance, speculative on,
/// pre-expanded collectives, decode context parallel).
type PricerKey = (Precision, u64, bool, u64, u64, bool, u64, bool, u64, u64, (u64, u64));

/// The deployment space's parameter names, in order: the scheduler's two only with the
/// scheduler, `expert_parallel` only for a mixture-of-experts model,
/// `num_speculative_tokens` only with speculative decoding, then the cluster's (`super::scale`).
fn stage_names(scheduler: bool, moe: bool, speculative: bool, cluster: &[String]) -> Vec<String> {
    let mut v: Vec<&str> = ORDER[..6].to_vec();
    if scheduler {
        v.extend(&ORDER[6..8]);
    }
    if moe {
        v.push(ORDER[8]);
    }
    if speculative {
        v.push(ORDER[9]);
    }
    v.into_iter().map(String::from).chain(cluster.iter().cloned()).collect()
}

fn is_moe(model: &ModelDesc) -> bool {
    model.llm.as_ref().is_some_and(|t| t.moe.is_some())
}

/// Builds the deployment stage for a scenario.
pub fn setup(s: &Scenario) -> Result<StageSetup, String> {
    let (mut model, device, mut notes) = crate::stages::context::resolve(s)?;
    let d = &s.deployment;
    let w = &s.workload;
    let spec = d.serving.clone();
    spec.validate()?;
    if spec.expert_precision.is_some() && !is_moe(&model) {
        return Err(format!("deployment.serving.expert_precision: '{}' has no routed experts; give one precision in deployment.precisions", model.name));
    }
    if let Some(m) = &spec.deepep_mode {
        if !is_moe(&model) {
            return Err(format!("deployment.serving.deepep_mode: '{}' has no routed experts for DeepEP to exchange; leave deepep_mode out", model.name));
        }
        notes.push(format!("deepep_mode {m} (SGLang --moe-a2a-backend deepep --deepep-mode {m}): with expert parallelism each MoE layer dispatches and combines its tokens with DeepEP-Ascend's kernels ({}), priced as the operator stage prices them on the link the EP group crosses; without expert parallelism there is nothing to exchange", match m.as_str() { "auto" => "low-latency for a step of at most max_num_seqs x (1 + draft tokens) tokens, taken for a decode batch; normal for a larger one, which prefills", "normal" => "normal mode for every step", _ => "low-latency mode for every step" }));
    }
    super::serving_features::stage::apply_image_size(&mut model, &spec)?;
    if let Some(v) = model.active_vision() {
        if v.images == 1 {
            notes.push(format!("vision: each request carries one {0} x {0} image: {1} patches through the {2}-layer encoder, {3} tokens added to its prompt", v.image_size, v.patches(), v.encoder.layers, v.image_tokens()));
        } else {
            notes.push(format!("vision: each request carries {4} images of {0} x {0}: {1} patches each through the {2}-layer encoder, {3} tokens added to its prompt", v.image_size, v.patches(), v.encoder.layers, v.image_tokens(), v.images));
        }
    }
    if let Some(a) = model.active_audio() {
        notes.push(format!("audio: each request carries {} s of audio: {} window(s) of 30 s ({} frames each) through the {}-layer encoder, {} tokens added to its prompt", spec.audio_seconds.unwrap_or(0.0), a.windows, a.frames, a.encoder.layers, a.tokens()));
    }
    if w.batch == -1 {
        return Err("workload.batch: the deployment stage tunes the batch itself; give a starting batch, not -1".into());
    }
    let base_precision = crate::stages::context::precision_name(crate::stages::context::native_precision(model.dtype, true));
    let ints = |v: &[i64], d: &[i64]| if v.is_empty() { d.to_vec() } else { v.to_vec() };
    let strs = |v: &[String], d: &[&str]| if v.is_empty() { d.iter().map(|x| x.to_string()).collect() } else { v.to_vec() };
    let mut batches = ints(&d.batches, &[1, 2, 4, 8, 16, 32, 64, 128, 256]);
    let mut precisions = strs(&d.precisions, &[base_precision, if base_precision == "fp16" { "bf16" } else { "fp16" }, "w8a16", "w8a8"]);
    let mut seen = Vec::new();
    precisions.retain(|p| if seen.contains(p) { false } else { seen.push(p.clone()); true });
    for p in &precisions {
        let ok = Precision::parse(p).map_err(|e| format!("deployment.precisions: {e}"))?;
        if ok == Precision::Fp32 {
            return Err("deployment.precisions: fp32 serving is not modelled; use fp16, bf16, w8a16 or w8a8".into());
        }
    }
    let default_tps: &[i64] = if d.cluster.is_some() { &[1, 2, 4, 8, 16] } else { &[1, 2, 4, 8] };
    let tps: Vec<i64> = ints(&d.tensor_parallel, default_tps)
        .into_iter()
        .filter(|&t| validate_plan(&model, &ParallelPlan { tp: t as u64, ..Default::default() }).is_ok())
        .collect();
    if tps.is_empty() {
        return Err(format!("deployment.tensor_parallel: no listed degree divides the heads of '{}'", model.name));
    }
    let kv: Vec<f64> = if d.kv_cache_fractions.is_empty() { vec![0.9, 0.5, 0.7, 0.8, 0.95] } else { d.kv_cache_fractions.clone() };
    let mems = strs(&d.memory_strategies, &["dynamic_pool", "static", "predictive"]);
    for m in &mems {
        memory_strategy(m)?;
    }
    let launches = strs(&d.launch_modes, &["eager", "graph"]);
    if let Some(bad) = launches.iter().find(|l| *l != "eager" && *l != "graph") {
        return Err(format!("deployment.launch_modes: expected eager or graph, got '{}'", clip(bad)));
    }
    // The scenario's batch is the baseline, so it goes first.
    batches.retain(|b| *b != w.batch);
    batches.insert(0, w.batch);
    let cat_i = |name: &str, v: &[i64]| Param::categorical(name, v.iter().map(|&x| Value::Int(x)).collect());
    let cat_s = |name: &str, v: &[String]| Param::categorical(name, v.iter().map(|x| Value::Str(x.clone())).collect());
    let mut params = vec![
        cat_i("batch", &batches),
        cat_s("precision", &precisions),
        cat_i("tp", &tps),
        Param::categorical("kv_cache_fraction", kv.iter().map(|&x| Value::Float(x)).collect()),
        cat_s("memory_strategy", &mems),
        cat_s("launch", &launches),
    ];
    if !spec.is_static() {
        // vLLM's defaults first: 8192 tokens per step (V1 with chunked prefill), chunking on.
        // A named release's defaults come first (its token budget on this device's memory, its
        // chunked-prefill setting); without one, the stage's own order as before.
        let (tokens, chunk) = release_defaults(&spec, &device);
        params.push(cat_i("max_num_batched_tokens", &ints(&spec.max_num_batched_tokens, &tokens)));
        params.push(cat_s("chunked_prefill", &strs(&spec.chunked_prefill, &chunk.iter().map(String::as_str).collect::<Vec<_>>())));
        let arrivals = match spec.arrival.as_str() {
            "poisson" => format!("Poisson arrivals at {} req/s", spec.request_rate.unwrap_or(0.0)),
            "trace" => format!("{} traced arrivals", spec.trace.len()),
            "burst" => "every request arriving at once".into(),
            _ => match spec.concurrency {
                Some(c) => format!("a closed loop of {c} clients"),
                None => "a closed loop with as many clients as the batch (max_num_seqs)".into(),
            },
        };
        notes.push(format!(
            "continuous-batching scheduler ({} engine): {} requests, {arrivals}, {}; ttft_ms and tpot_ms are p90s over the requests",
            spec.engine,
            // With traced arrivals every arrival is a request (`requests` is not read).
            if spec.arrival == "trace" { spec.trace.len() } else { spec.requests },
            if spec.dataset.is_empty() { format!("{} lengths around {} in / {} out", spec.length_distribution, w.input_len, w.output_len) } else { format!("lengths drawn from the {} dataset's published statistics by strata (each request's output and prompt from its own equal-probability slice of the length distribution, so a small burst holds the dataset's long requests in proportion)", spec.dataset) }
        ));
        // The front end is part of every TTFT the stage reports: say so, with its cost.
        let fe_ms = spec.host().map_or(0.0, |h| h.frontend_us_per_request * 1e-3);
        if fe_ms > 0.0 {
            notes.push(format!(
                "{} front end: each request costs the API-server process {fe_ms:.1} ms (tokenisation, input processing, hand-off to the engine core), and its event loop works on the requests that are waiting together in rounds, so a burst of N reaches the engine together after N x {fe_ms:.1} ms and a lone request after {fe_ms:.1} ms; counted in TTFT and queue_ms (assets/constants/serving-host.json, frontend_us_per_request)",
                spec.engine
            ));
        }
        if spec.host().is_ok_and(|h| h.schedule_ahead_steps > 0 && (spec.speculative.is_none() || h.schedule_ahead_with_speculative)) {
            notes.push(format!("{} schedules one step ahead (vLLM's async scheduling, SGLang's overlap loop): a request reaching a busy engine joins the step after the one already scheduled, about one step more in queue_ms and TTFT; a burst reaching an idle engine is scheduled at once (assets/constants/serving-host.json, schedule_ahead_steps)", spec.engine));
            if spec.host().is_ok_and(|h| h.results_after_next_launch) {
                notes.push(format!("{} hands a step's tokens to the client only after launching the next step (its overlap loop), so a prompt's first token arrives with the end of the step after its prefill: the hand-off line of the TTFT split (assets/constants/serving-host.json, results_after_next_launch)", spec.engine));
            }
        }
    } else {
        notes.push(format!("simple mode (static batch, {} engine): TTFT is one prefill of the whole batch and TPOT one decode step; no scheduler, no request stream", spec.engine));
        notes.extend(offline::note(&spec, &model));
    }
    notes.extend(offline::nz_note(&spec, &device));
    if let Some(n) = crate::spec::options::host_costs::note(&spec.engine, &spec.host_costs) {
        notes.push(n);
    }
    // How the tensor-parallel collectives get their task lists (the module notes of
    // tunelab_sim::cost::comm): say it where it departs from one task per peer at every call.
    if spec.hccl_expansion == "aiv" {
        notes.push("HCCL_OP_EXPANSION_MODE=AIV: the vector cores build and run each collective inside a node at once, so on the A2 full mesh an all-reduce pays HCCL's Mesh steps (two), not a task issued to each peer in turn; the host work of an eager collective is kept".into());
    } else if spec.host().is_ok_and(|h| h.collectives_pre_expanded) {
        notes.push(format!("{}: a graph-launched step is a static graph whose collectives HCCL built at compile time, so on the A2 full mesh an all-reduce pays the Mesh algorithm's two latency steps; an eager step builds them per call, one task to each peer (assets/constants/serving-host.json, collectives)", spec.engine));
    }
    if is_moe(&model) {
        // Off first: a scenario that fixes nothing keeps its plain-TP baseline. Over a cluster
        // on first: data-parallel attention needs it (wide EP is how such deployments run).
        let order = if d.cluster.is_some() { ["on", "off"] } else { ["off", "on"] };
        params.push(cat_s("expert_parallel", &order.map(String::from)));
        notes.push("expert_parallel (vLLM --enable-expert-parallel): with it on, the routed experts are spread whole over the tp ranks (ep = tp), tokens reach them by dispatch and combine as the engine picks per step (vLLM-Ascend, MindIE: MC2 for a step of at most the MC2 capacity per DP rank, which vLLM-Ascend ties to its largest captured graph, or max_num_seqs x (1 + draft tokens) when eager, at most 512 tokens per TP rank; else all-to-all on A3 or the all-gather path on A2, where MC2 also needs 16 EP ranks holding at most 24 experts each; other engines all-to-all), priced on the link the EP group crosses; attention stays tensor-parallel".into());
    }
    super::serving_features::stage::extend(&model, &spec, &mut params, &mut notes)?;
    let (cluster, moe_imbalance, constraints, cluster_names) = cluster_setup(s, &model, &device, &tps, &mut params, &mut notes)?;
    let names: Vec<String> = params.iter().map(|p| p.name.clone()).collect();
    debug_assert_eq!(names, stage_names(!spec.is_static(), is_moe(&model), spec.speculative.is_some(), &cluster_names));
    let space = Space::new(super::apply_overrides(s, params)?, &constraints)?;
    let baseline = Config(space.params().iter().map(|p| p.level_value(0)).collect());
    let mode = if d.tile_operators { TileMode::Best } else { TileMode::Default };
    let extra = model.media_tokens();
    let output = super::serving_features::stage::output_len(&model, w.output_len as u64);
    let reqs = requests(&spec, w.input_len as u64, output, extra, s.seed);
    let slo = Slo { ttft_ms: s.constraints.max_ttft_ms, tpot_ms: s.constraints.max_tpot_ms };
    let host = offline::host(&spec, &model, spec.host()?);
    let capacity = capacity_setup(s, &spec, &slo, &reqs, &mut notes)?;
    let memo = crate::stages::graphcost::chip_memo(&device);
    let obj = DeploymentObjective { model, device, input: w.input_len as u64, output, mode, spec, slo, reqs, host, names, pricers: HashMap::new(), memo, cluster, moe_imbalance, capacity, capacity_warm: None };
    obj.check_fits_somewhere(&tps, &precisions)?;
    Ok(StageSetup { space, metrics: obj.metrics(), objective: Box::new(obj), baseline, focus: Vec::new(), focus_budget: 0, notes })
}

/// The token budgets and chunked-prefill settings a stage offers by default: a named release's
/// first (`deployment.serving.engine_version`, assets/engines/releases.json: its budget on a
/// device under 70 GiB or of 70 GiB and more), else vLLM V1's 8192 tokens with chunking on.
fn release_defaults(spec: &crate::spec::options::serving::ServingSpec, device: &Device) -> (Vec<i64>, Vec<String>) {
    let mut tokens = vec![8192, 2048, 4096, 16384];
    let mut chunk = vec!["on".to_string(), "off".to_string()];
    if spec.engine_version.is_empty() {
        return (tokens, chunk);
    }
    if let Ok(Some((_, r))) = crate::spec::options::releases::release(&spec.engine, &spec.engine_version) {
        if let Some([small, big]) = r.defaults.max_num_batched_tokens {
            let first = if device.memory_bytes as f64 >= 70.0 * 1_073_741_824.0 { big } else { small };
            tokens.retain(|t| *t != first);
            tokens.insert(0, first);
        }
        if r.defaults.chunked_prefill.as_deref() == Some("off") {
            chunk.reverse();
        }
    }
    (tokens, chunk)
}

/// The cluster's parameters, constraints and notes (none without `deployment.cluster`).
#[allow(clippy::type_complexity)]
fn cluster_setup(s: &Scenario, model: &ModelDesc, device: &Device, tps: &[i64], params: &mut Vec<Param>, notes: &mut Vec<String>) -> Result<(Option<super::scale::Cluster>, f64, Vec<String>, Vec<String>), String> {
    let Some(opts) = &s.deployment.cluster else { return Ok((None, 1.0, Vec::new(), Vec::new())) };
    let c = super::scale::Cluster::new(opts, device)?;
    if opts.redundant_experts.iter().any(|r| *r > 0) && device.name.starts_with("910B") {
        return Err(format!("deployment.cluster.redundant_experts: vLLM-Ascend does not support redundant experts on A2 ({}); its EPLB guide lists them for A3 only", device.name));
    }
    let (extra, constraints, more) = c.params(model, tps)?;
    let names = extra.iter().map(|p| p.name.clone()).collect();
    params.extend(extra);
    notes.extend(more);
    Ok((Some(c), moe_imbalance(s), constraints, names))
}

/// Capacity mode's unit arrivals and first rate when the scenario names a capacity goal.
fn capacity_setup(s: &Scenario, spec: &ServingSpec, slo: &Slo, reqs: &[Request], notes: &mut Vec<String>) -> Result<Option<(Vec<f64>, f64)>, String> {
    if !crate::stages::capacity::wanted(s) {
        return Ok(None);
    }
    crate::stages::capacity::check(spec, slo)?;
    notes.push(crate::stages::capacity::note(spec, slo));
    Ok(Some(crate::stages::capacity::unit_arrivals(spec, reqs)))
}

/// The serving results of one configuration, before they become metrics.
struct Served {
    stats: ServingStats,
    reserved_bytes: f64,
    energy_j: f64,
    busy_s: f64,
}

impl DeploymentObjective {
    fn workloads(&self, batch: u64) -> (Workload, Workload) {
        (
            crate::stages::serving::workload(crate::stages::serving::Phase::Prefill, batch, self.input, self.output),
            crate::stages::serving::workload(crate::stages::serving::Phase::Decode, batch, self.input, self.output),
        )
    }

    /// A clear error when not even the smallest footprint on the widest split fits the chip.
    fn check_fits_somewhere(&self, tps: &[i64], precisions: &[String]) -> Result<(), String> {
        let tp = tps.iter().copied().max().unwrap_or(1) as u64;
        let smallest = precisions.iter().filter_map(|p| Precision::parse(p).ok()).min_by_key(|p| p.weight().bits()).unwrap_or(Precision::Fp16);
        // Over a cluster, a mixture-of-experts model may spread its experts over up to every
        // chip: the widest data-parallel group whose expert parallelism divides the experts (a
        // disaggregated layout's sides each take a share, so all the chips need not be one).
        let plan = match &self.cluster {
            Some(c) if is_moe(&self.model) && c.chips.is_multiple_of(tp) => {
                let fill = c.chips / tp;
                (1..=fill).rev().filter(|d| fill.is_multiple_of(*d)).map(|d| super::scale::plan(tp, d, true, 0, Some(c.placement))).find(|p| validate_plan(&self.model, p).is_ok()).unwrap_or(ParallelPlan { tp, ..Default::default() })
            }
            _ => ParallelPlan { tp, ..Default::default() },
        };
        let opts = GraphOptions { precision: smallest, ..GraphOptions::default() };
        let (_, dec) = self.workloads(1);
        let need = footprint(&self.model, &dec, &plan, &opts, None, MemoryStrategy::Predictive)?.memory.total as f64;
        let have = self.device.memory_bytes as f64;
        if need > have {
            return Err(format!(
                "'{}' cannot fit on {}: even at batch 1, with {} weights and tp = {tp}, it needs {:.2} GiB per chip, {:.2} GiB more than the chip's {:.0} GiB",
                self.model.name, self.device.name, format!("{smallest:?}").to_lowercase(), need / GIB, (need - have) / GIB, have / GIB
            ));
        }
        Ok(())
    }

    /// Serves one decoded configuration by the scenario's mode.
    fn serve_knobs(&mut self, k: &Knobs) -> Result<Result<Served, String>, String> {
        if let Some(c) = &self.cluster {
            if let Some(why) = super::scale::layout_error(c.chips, k.tp, &k.scale, c.prefill_chips()) {
                return Ok(Err(why));
            }
        }
        let plan = self.plan(k);
        let opts = self.opts(k);
        validate_plan(&self.model, &plan)?;
        if is_moe(&self.model) && !k.expert_parallel {
            // vLLM runs the experts tensor-parallel over all dp x tp ranks without
            // --enable-expert-parallel (data_parallel_deployment.md); that layout is not modelled.
            if k.scale.dp > 1 {
                return Ok(Err(format!("dp = {} without expert_parallel: vLLM would split every expert tensor-parallel over dp x tp = {} ranks, a layout Tunelab does not model; turn expert_parallel on", k.scale.dp, k.scale.dp * k.tp)));
            }
            if k.scale.redundant > 0 {
                return Ok(Err("redundant_experts (EPLB) need expert_parallel on".into()));
            }
        }
        if k.scale.decode_cp > 1 && k.scale.pd.is_none() && k.spec_k > 0 {
            // vLLM-Ascend's context parallel guide: speculative decoding with DCP on P/D disaggregation only.
            return Ok(Err("decode_cp with speculative decoding: vLLM-Ascend supports DCP with speculative decoding in P/D disaggregation only, not in a colocated (PD-mixed) deployment".into()));
        }
        if let Some(why) = crate::stages::scale::finegrained::refusal(&k.scale, k.tp, k.scale.dp) {
            return Ok(Err(why));
        }
        match k.scale.pd {
            Some(_) if self.spec.is_static() => Ok(Err("disaggregated serving needs the scheduler (deployment.serving.mode), not the static simple mode".into())),
            Some(xy) => self.serve_disagg(k, &opts, &plan, xy),
            None if self.spec.is_static() => self.serve_static(k, &opts, &plan),
            None => self.serve_sched(k, &opts, &plan),
        }
    }

    /// Chips the configuration occupies.
    fn chips(&self, k: &Knobs) -> u64 {
        match (&self.cluster, k.scale.pd) {
            (Some(c), Some(_)) => c.chips + c.prefill_chips(),
            _ => k.tp * k.scale.dp.max(1) * k.scale.pp.max(1),
        }
    }

    /// Pipeline stages of a co-located rank (1 on a disaggregated layout's decode side).
    fn colocated_pp(&self, k: &Knobs) -> u64 {
        if k.scale.pd.is_none() { k.scale.pp.max(1) } else { 1 }
    }

    fn eval(&mut self, c: &Config) -> Result<Result<Vec<f64>, String>, String> {
        let k = knobs_named(&self.names, c)?;
        let (served, rate) = match self.capacity.is_some() {
            true => match self.serve_capacity(&k)? {
                Ok((s, r)) => (Ok(s), Some(r)),
                Err(why) => (Err(why), None),
            },
            false => (self.serve_knobs(&k)?, None),
        };
        let Served { stats: st, reserved_bytes, energy_j, busy_s } = match served {
            Ok(s) => s,
            Err(why) => return Ok(Err(why)),
        };
        let tokens = (st.output_tokens_per_s * st.duration_s).max(1.0);
        let tps = st.output_tokens_per_s;
        let chips = self.chips(&k) as f64;
        // Busy energy from the device model, plus idle power over the idle share of the run.
        let idle_j = self.device.power_idle_w.max(0.0) * (st.duration_s - busy_s).max(0.0);
        let per_chip_j = energy_j + idle_j;
        let capacity = rate.map(|r| [r, crate::stages::capacity::tokens_per_s_at(r, &self.reqs) / chips]);
        Ok(Ok([
            tps,
            st.ttft_ms.p90,
            st.tpot_ms.p90,
            tps / chips,
            reserved_bytes / GIB,
            per_chip_j * chips / tokens,
            st.rel_error,
            per_chip_j / st.duration_s.max(1e-12),
            // Cube utilisation: useful FLOPs over the chip's FP16 peak for the whole run.
            st.flops / st.duration_s.max(1e-12) / (self.device.derived.peak_tflops_fp16 * 1e12).max(1.0),
            st.ttft_ms.p50,
            st.ttft_ms.p99,
            st.tpot_ms.p50,
            st.tpot_ms.p99,
            st.itl_ms.p50,
            st.itl_ms.p90,
            st.itl_ms.p99,
            st.queue_ms.mean,
            st.goodput_rps,
            st.requests_per_s,
            st.preemptions as f64,
            st.prefill_share,
            st.ttft_ms.mean,
            st.tpot_ms.mean,
            st.itl_ms.mean,
            st.e2e_ms.mean,
            st.e2e_ms.p50,
            st.e2e_ms.p99,
        ]
        .into_iter()
        .chain(capacity.into_iter().flatten())
        .collect()))
    }
}

/// Simulates one configuration of a deployment scenario and returns the full serving
/// statistics (what `tunelab eval` and the app's serving view show), through the same
/// objective the study uses.
pub fn serve(s: &Scenario, names: &[String], c: &Config) -> Result<ServingStats, String> {
    let setup = setup_raw(s)?;
    let mut obj = setup;
    let k = knobs_named(names, c)?;
    obj.serve_knobs(&k)?.map(|s| s.stats)
}

fn setup_raw(s: &Scenario) -> Result<DeploymentObjective, String> {
    let (mut model, device, _) = crate::stages::context::resolve(s)?;
    let spec = s.deployment.serving.clone();
    spec.validate()?;
    super::serving_features::stage::apply_image_size(&mut model, &spec)?;
    let extra = model.media_tokens();
    let output = super::serving_features::stage::output_len(&model, s.workload.output_len as u64);
    let reqs = requests(&spec, s.workload.input_len as u64, output, extra, s.seed);
    let slo = Slo { ttft_ms: s.constraints.max_ttft_ms, tpot_ms: s.constraints.max_tpot_ms };
    let mode = if s.deployment.tile_operators { TileMode::Best } else { TileMode::Default };
    let host = offline::host(&spec, &model, spec.host()?);
    let tps: Vec<i64> = if s.deployment.tensor_parallel.is_empty() { vec![1, 2, 4, 8, 16] } else { s.deployment.tensor_parallel.clone() };
    let (cluster, moe_imbalance, _, cluster_names) = cluster_setup(s, &model, &device, &tps, &mut Vec::new(), &mut Vec::new())?;
    let names = stage_names(!spec.is_static(), is_moe(&model), spec.speculative.is_some(), &cluster_names);
    let memo = crate::stages::graphcost::chip_memo(&device);
    Ok(DeploymentObjective { model, device, input: s.workload.input_len as u64, output, mode, spec, slo, reqs, host, names, pricers: HashMap::new(), memo, cluster, moe_imbalance, capacity: None, capacity_warm: None })
}

impl Objective for DeploymentObjective {
    fn metrics(&self) -> Vec<Metric> {
        let mut m = metrics();
        if self.capacity.is_some() {
            m.extend(crate::stages::capacity::metrics());
        }
        m
    }

    fn evaluate(&mut self, c: &Config) -> Outcome {
        match self.eval(c) {
            Ok(Ok(v)) => Outcome::Ok(v),
            Ok(Err(why)) => Outcome::Infeasible(why),
            // Plan or workload errors (tp not dividing heads, ...) are infeasible points too.
            Err(why) => Outcome::Infeasible(why),
        }
    }
}

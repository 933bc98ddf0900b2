//! The operator stage: tile every distinct operator of the model's graph, choose fusions (flash
//! attention, fused matmul epilogues), optionally run named operators in INT8, and refine named
//! bottlenecks with a focused local search.
//!
//! Objective: the time of the whole workload, sum over operators of repeat x estimate under each
//! operator's tiling: one prefill plus `output_len` decode steps (each at the midpoint context)
//! for a language model, or one forward pass for a model without a decoder (a diffusion UNet
//! step), averaged over the batches of a dynamic (-1) batch. The space has one block of parameters per
//! distinct tunable operator; `crate::blocks` searches them in sequence, bottlenecks first.
//!
//! Each operator's time is what `operator.timing` says a benchmark sees (sim
//! `cost::dispatch::Timing`, host costs from the chip profile): the kernel alone ("device", the
//! default), one eager framework call timed around it ("single_call": host dispatch, then the
//! kernel), or a timed loop of `operator.calls` calls ("back_to_back": per call the longer of host
//! dispatch and kernel, the first launch spread over the loop). A collective's algorithm (ring or
//! tree; an all-to-all's pairwise ring or all peers at once) is a parameter, so a graph of one
//! collective is a stage of its own; so is a MoE token exchange's kernel form (HCCL
//! all-to-all, DeepEP normal or low-latency, Ascend MC2: `tunelab_sim::cost::moe_comm`), and a
//! grouped matmul is tiled as the batched matmul it runs as.

use super::StageSetup;
use crate::stages::blocks::Block;
use crate::stages::graphcost::{op_bytes, GraphCost, Memo, TileMode};
use crate::stages::tileaxes::{search_axes, to_tiling, value_in};
use crate::spec::scenario::{clip, Scenario};
use std::collections::HashMap;
use tunelab_search::{Config, Metric, Objective, Outcome, Param, Space, Value};
use tunelab_sim::cost::dispatch::Timing;
use tunelab_sim::device::Device;
use tunelab_sim::estimate::Estimate;
use tunelab_sim::memory::memory_per_chip;
use tunelab_sim::tuning::default_tiling;
use tunelab_sim::workload::{build_graph, GraphOptions, ParallelPlan, Workload};
use tunelab_sim::{CommAlgorithm, CommKind, DType, Op};

/// Axes searched only when loop unrolling is on (K steps per L1 load, M/N steps).
const UNROLL_AXES: [&str; 4] = ["stepM", "stepN", "stepKa", "stepKb"];
/// Axes searched only when memory reuse is on (L1 depth, L0/UB double buffering).
const REUSE_AXES: [&str; 6] = ["l1DbA", "l1DbB", "dbL0A", "dbL0B", "dbL0C", "doubleBuffer"];

/// One distinct tunable operator and where its parameters sit in the space.
struct Group {
    label: String,
    op: Op,
    /// (axis name, parameter index) of the searched axes.
    axes: Vec<(String, usize)>,
    /// Axes held at the default tiling's value.
    fixed: Vec<(String, i64)>,
    /// Parameter index of the INT8 switch (mixed precision), if any.
    int8: Option<usize>,
    /// Parameter index of a collective's algorithm (ring or tree, HCCL_ALGO; an all-to-all's
    /// pairwise ring or all-peers mesh), if any.
    algo: Option<usize>,
    /// Parameter index of a MoE exchange's kernel form (`tunelab_sim::MoeCommForm`), if any.
    form: Option<usize>,
    /// A grouped matmul tuned as the batched matmul it runs as (`op` is its lowered form): priced
    /// at the grouped matmul's read-stream rate (`tunelab_sim::cost::moe_comm::estimate_grouped_lowered`).
    grouped: bool,
}

/// An operator slot in a graph: a constant cost, or a tunable group.
enum Slot {
    Fixed(Estimate, f64),
    Group(usize, f64),
}

/// One fusion variant: its graphs' slots (already weighted) and its memory need.
struct Variant {
    slots: Vec<Slot>,
    /// Per slot: the operator's name (phase-qualified), class and operator, for the
    /// per-operator breakdown (`priced_ops`).
    names: Vec<(String, tunelab_sim::model::OpClass, Op)>,
    memory_gib: f64,
    /// Why it cannot run (out of memory, a per-operator memory limit), if so.
    violation: Option<String>,
}

struct OperatorObjective {
    device: Device,
    groups: Vec<Group>,
    variants: Vec<Variant>,
    /// Parameter indices of the fusion switches (flash attention, fused epilogues).
    flash: Option<usize>,
    fuse: Option<usize>,
    tokens: f64,
    /// What the workload's time means (device time, or as a benchmark around the calls times it).
    timing: Timing,
    memo: HashMap<(usize, Vec<i64>), Result<Estimate, String>>,
}

pub fn metrics() -> Vec<Metric> {
    vec![
        Metric::minimize("model_time_ms", "ms"),
        Metric::maximize("tokens_per_s", "tokens/s"),
        Metric::minimize("memory_gib", "GiB"),
        Metric::minimize("energy_j", "J"),
        Metric::minimize("rel_error", ""),
        Metric::maximize("utilisation", ""),
    ]
}

/// Builds the operator stage for a scenario.
pub fn setup(s: &Scenario) -> Result<StageSetup, String> {
    setup_blocks(s).map(|(st, _)| st)
}

/// The stage and its parameter blocks (fusion first, then operators by baseline time share).
pub fn setup_blocks(s: &Scenario) -> Result<(StageSetup, Vec<Block>), String> {
    let (objective, space, baseline, blocks, focus, focus_budget, notes) = build(s)?;
    let setup = StageSetup { space, objective: Box::new(objective), metrics: metrics(), baseline, focus, focus_budget, notes };
    Ok((setup, blocks))
}

/// Every operator of the workload priced exactly as the stage objective prices `config` (its
/// tilings, fusions and INT8 switches), with the objective's metrics: the per-operator times
/// sum, in the same order, to the objective's `model_time_ms`.
pub fn priced_ops(s: &Scenario, config: &Config) -> Result<(Vec<crate::stages::serving::OpCost>, f64), String> {
    let (mut obj, space, ..) = build(s)?;
    space.check(config)?;
    let v = obj.variant_of(config);
    if let Some(why) = &obj.variants[v].violation {
        return Err(why.clone());
    }
    let mut out = Vec::with_capacity(obj.variants[v].slots.len());
    for k in 0..obj.variants[v].slots.len() {
        let (e, rep) = match obj.variants[v].slots[k] {
            Slot::Fixed(e, rep) => (e, rep),
            Slot::Group(g, rep) => (obj.group_estimate(g, config)?, rep),
        };
        let (name, class, op) = obj.variants[v].names[k].clone();
        let per_call = obj.timing.time_us(&obj.device, &op, e.time_us);
        // `repeat` here is the weighted count (decode steps x repeats), rounded for the engine view.
        out.push(crate::stages::serving::OpCost { name, class, repeat: libm::round(rep).max(1.0) as u64, op, time_us: per_call * rep, estimate: e });
    }
    Ok((out, obj.variants[v].memory_gib))
}

/// What a MoE exchange's kernel adds beyond the wire, as a line of the breakdown: a DeepEP
/// normal-mode exchange's waits for its latest peer (`tunelab_sim::cost::moe_comm::peer_wait_us`,
/// on its communication time) or a low-latency / MC2 dispatch's window copy (`recv_copy_us`).
fn peer_wait_note(name: &str, op: &Op, d: &tunelab_sim::Device) -> Option<String> {
    let wait = tunelab_sim::cost::moe_comm::peer_wait_us(op, d);
    let Op::MoeComm { phase, ranks, form, tokens, top_k, .. } = *op else { return None };
    let copy = tunelab_sim::cost::moe_comm::recv_copy_us(op, d);
    if copy > 0.0 {
        return Some(format!(
            "{name} ({}, EP{ranks}): copies the {} rows it received from its window to the output after the wire, {copy:.1} us per call (LocalWindowCopy, row after row on the vector cores), inside its vector and memory time",
            form.name(),
            tokens.saturating_mul(top_k)
        ));
    }
    if wait <= 0.0 {
        return None;
    }
    let waits = match phase {
        tunelab_sim::MoePhase::Dispatch => tunelab_sim::cost::moe_comm::NORMAL_DISPATCH_WAITS,
        tunelab_sim::MoePhase::Combine => tunelab_sim::cost::moe_comm::NORMAL_COMBINE_WAITS,
    };
    Some(format!(
        "{name} (DeepEP normal, EP{ranks}): waits for its latest peer {wait:.0} us per call ({waits:.0} cross-rank wait(s) after host work x {} peers x {:.1} us, kernel library's normal_peer_wait_us), inside its communication time",
        ranks - 1,
        d.normal_peer_wait_us
    ))
}

/// A grouped matmul's line of the breakdown: its weight stream and the rate it runs at
/// (`tunelab_sim::cost::moe_comm::grouped_hbm_gbs`, the kernel library's read-stream share of the
/// HBM peak, against the chip's copy rate).
fn grouped_note(name: &str, op: &Op, d: &tunelab_sim::Device) -> Option<String> {
    let Op::GroupedMatmul { groups, m, .. } = *op else { return None };
    let w = tunelab_sim::cost::moe_comm::grouped_weight_bytes(op);
    let gbs = tunelab_sim::cost::moe_comm::grouped_hbm_gbs(d);
    Some(format!(
        "{name} (grouped matmul, {groups} groups of {} rows): streams {:.1} MB of expert weights at {gbs:.0} GB/s, {:.0} us at least ({:.2} of the HBM peak, kernel library's grouped_matmul_hbm_efficiency: a read stream, no write turnarounds; the chip's copy rate is {:.0} GB/s)",
        m.div_ceil(groups.max(1)),
        w / 1.0e6,
        w / (gbs * 1.0e3),
        d.grouped_matmul_hbm_efficiency,
        d.derived.hbm_gbs
    ))
}

#[allow(clippy::type_complexity)]
fn build(s: &Scenario) -> Result<(OperatorObjective, Space, Config, Vec<Block>, Vec<usize>, usize, Vec<String>), String> {
    let (model, device, mut notes) = crate::stages::context::resolve(s)?;
    let o = &s.operator;
    let timing = o.timing()?;
    let w = &s.workload;
    let batches: Vec<u64> = if w.batch == -1 { w.dynamic_batches.iter().map(|&b| b as u64).collect() } else { vec![w.batch as u64] };
    let (input, output) = (w.input_len as u64, w.output_len as u64);
    let mut cases: Vec<(&str, u64, f64, Workload)> = Vec::new();
    // A model without a decoder (a diffusion UNet, an operator graph) has no prefill/decode:
    // its workload is one forward pass per batch (one denoising step for a UNet).
    let one_pass = model.llm.is_none();
    for &b in &batches {
        let share = 1.0 / batches.len() as f64;
        if one_pass {
            cases.push(("forward", b, share, Workload::Prefill { batch: b, input_len: input.max(1) }));
            continue;
        }
        if o.phase != "decode" {
            cases.push(("prefill", b, share, crate::stages::serving::workload(crate::stages::serving::Phase::Prefill, b, input, output)));
        }
        if o.phase != "prefill" {
            let w = crate::stages::serving::workload(crate::stages::serving::Phase::Decode, b, input, output);
            cases.push(("decode", b, share * output.max(1) as f64, w));
        }
    }
    // Work items per pass: tokens for a language model, samples for a one-pass model.
    let per_seq = |_: u64| if one_pass { 1 } else if o.phase == "prefill" { input } else { output.max(1) };
    let tokens: f64 = batches.iter().map(|&b| b as f64 * per_seq(b) as f64).sum::<f64>() / batches.len() as f64;
    let precision = crate::stages::context::native_precision(model.dtype, false);
    let flash_opts: &[bool] = if o.fusion { &[true, false] } else { &[true] };
    let fuse_opts: &[bool] = if o.epilogue_fusion { &[true, false] } else { &[true] };
    let mut params: Vec<Param> = Vec::new();
    let onoff = || vec![Value::from("on"), Value::from("off")];
    let flash = o.fusion.then(|| { params.push(Param::categorical("flash_attention", onoff())); params.len() - 1 });
    let fuse = o.epilogue_fusion.then(|| { params.push(Param::categorical("fuse_epilogues", onoff())); params.len() - 1 });
    let fusion_params: Vec<usize> = flash.iter().chain(fuse.iter()).copied().collect();
    let mut groups: Vec<Group> = Vec::new();
    let mut by_op: HashMap<String, usize> = HashMap::new();
    let mut labels: HashMap<String, usize> = HashMap::new();
    let mut variants = Vec::new();
    let mut memo = Memo::default();
    let dev_gib = device.memory_bytes as f64 / (1u64 << 30) as f64;
    let mut op_names: Vec<String> = Vec::new();
    for &fl in flash_opts {
        for &fu in fuse_opts {
            let g_opts = GraphOptions { precision, flash_attention: fl, fuse_epilogues: fu, ..GraphOptions::default() };
            let (mut slots, mut memory_gib, mut violation) = (Vec::new(), 0.0f64, None);
            let mut slot_names = Vec::new();
            for (phase, b, weight, wl) in &cases {
                let graph = build_graph(&model, wl, &ParallelPlan::default(), &g_opts).map_err(|e| format!("{} graph: {e}", phase))?;
                let mem = memory_per_chip(&model, wl, &ParallelPlan::default(), &g_opts, None)?;
                memory_gib = memory_gib.max(mem.total as f64 / (1u64 << 30) as f64);
                for gop in &graph.ops {
                    if !op_names.contains(&gop.name) {
                        op_names.push(gop.name.clone());
                        if let Some(n) = peer_wait_note(&gop.name, &gop.op, &device).or_else(|| grouped_note(&gop.name, &gop.op, &device)) {
                            notes.push(n);
                        }
                    }
                    if let Some(limit) = s.constraints.op_memory_mib.get(&gop.name) {
                        let need = op_bytes(&gop.op) / (1u64 << 20) as f64;
                        if need > *limit && violation.is_none() {
                            violation = Some(format!("operator {} needs {need:.1} MiB, over its limit of {limit} MiB", gop.name));
                        }
                    }
                    let repeat = gop.repeat as f64 * weight;
                    let qualified = if cases.len() > 1 { format!("{phase}:{}", gop.name) } else { gop.name.clone() };
                    slot_names.push((qualified, gop.class, gop.op.clone()));
                    // A grouped matmul is tiled and switched to INT8 as the batched matmul it runs as.
                    let op_t = gop.op.lowered().unwrap_or_else(|| gop.op.clone());
                    let axes = if o.tiling { search_axes(&op_t, &device) } else { Vec::new() };
                    let mixed = o.mixed_precision_ops.contains(&gop.name) && matches!(op_t, Op::Matmul { .. });
                    let collective = has_algorithm_choice(&op_t) || matches!(op_t, Op::MoeComm { .. });
                    if axes.is_empty() && !mixed && !collective {
                        let e = memo.op(&gop.op, &device, TileMode::Default).map_err(|r| format!("operator {} cannot run: {r}", gop.name))?;
                        slots.push(Slot::Fixed(e, repeat));
                        continue;
                    }
                    let grouped = matches!(gop.op, Op::GroupedMatmul { .. });
                    let key = format!("{:?}{}", op_t, if grouped { " grouped" } else { "" });
                    let gi = match by_op.get(&key) {
                        Some(&gi) => gi,
                        None => {
                            let mut label = if batches.len() > 1 { format!("{phase}:{}@b{b}", gop.name) } else { format!("{phase}:{}", gop.name) };
                            let n = labels.entry(label.clone()).or_insert(0);
                            *n += 1;
                            if *n > 1 {
                                label = format!("{label}#{n}");
                            }
                            let mut g = new_group(label, op_t.clone(), axes, mixed, o, &device, &mut params);
                            g.grouped = grouped;
                            groups.push(g);
                            by_op.insert(key, groups.len() - 1);
                            groups.len() - 1
                        }
                    };
                    slots.push(Slot::Group(gi, repeat));
                }
            }
            if memory_gib > dev_gib && violation.is_none() {
                violation = Some(format!("out of memory by {:.2} GiB ({memory_gib:.2} GiB needed, {dev_gib:.0} GiB per chip)", memory_gib - dev_gib));
            }
            variants.push(Variant { slots, names: slot_names, memory_gib, violation });
        }
    }
    if let Some(v) = variants.iter().map(|v| v.violation.clone()).collect::<Option<Vec<_>>>() {
        return Err(format!("no fusion choice of '{}' can run on {}: {}", model.name, device.name, v.join("; ")));
    }
    for name in o.mixed_precision_ops.iter().chain(&o.local_search_ops) {
        if !op_names.contains(name) {
            return Err(format!("operator '{}' is not in the graph of '{}' (operators: {})", clip(name), model.name, op_names.join(", ")));
        }
    }
    if params.is_empty() {
        let why = if o.tiling { "" } else { " (operator.tiling is off)" };
        return Err(format!("nothing to tune in '{}': the search space has no parameters (no operator has a tiling, fusion, precision or collective-algorithm choice{why})", model.name));
    }
    let space = Space::new(super::apply_overrides(s, params)?, &[])?;
    // Level 0 of every parameter is the framework default (fusions on, default tiling).
    let baseline = Config(space.params().iter().map(|p| p.level_value(0)).collect());
    let mut objective = OperatorObjective { device, groups, variants, flash, fuse, tokens, timing, memo: HashMap::new() };
    let blocks = make_blocks(&mut objective, &baseline, &fusion_params, s.budget.saturating_sub(1));
    let focus: Vec<usize> = objective
        .groups
        .iter()
        .filter(|g| o.local_search_ops.iter().any(|n| g.label.split(':').nth(1).is_some_and(|l| l.split(['@', '#']).next() == Some(n.as_str()))))
        .flat_map(|g| g.axes.iter().map(|a| a.1).chain(g.int8).chain(g.algo).chain(g.form))
        .collect();
    let focus_budget = libm::round(o.search_intensity * s.budget as f64) as usize;
    Ok((objective, space, baseline, blocks, focus, focus_budget, notes))
}

fn new_group(label: String, op: Op, axes: Vec<tunelab_sim::tiling::Axis>, mixed: bool, o: &crate::spec::scenario::OperatorOptions, device: &Device, params: &mut Vec<Param>) -> Group {
    let def = default_tiling(&op, device);
    let mut g = Group { label, op, axes: Vec::new(), fixed: Vec::new(), int8: None, algo: None, form: None, grouped: false };
    for a in axes {
        let dv = value_in(&def, &a.name).unwrap_or(a.values[a.values.len() / 2]);
        let searched = !(!o.loop_unroll && UNROLL_AXES.contains(&a.name.as_str())) && !(!o.memory_reuse && REUSE_AXES.contains(&a.name.as_str()));
        if !searched {
            g.fixed.push((a.name, dv));
            continue;
        }
        let mut vals = a.values.clone();
        if !vals.contains(&dv) {
            vals.push(dv);
            vals.sort_unstable();
        }
        // The default value goes first so that level 0 is the baseline.
        vals.retain(|v| *v != dv);
        vals.insert(0, dv);
        params.push(Param::categorical(&format!("{}.{}", g.label, a.name), vals.into_iter().map(Value::Int).collect()));
        g.axes.push((a.name, params.len() - 1));
    }
    if mixed {
        params.push(Param::categorical(&format!("{}.int8", g.label), vec![Value::Int(0), Value::Int(1)]));
        g.int8 = Some(params.len() - 1);
    }
    if let Op::Comm { algorithm, kind, .. } = &g.op {
        if has_algorithm_choice(&g.op) {
            // The operator's stated algorithm first: level 0 is the baseline. An all-to-all is
            // issued to each peer in turn (HCCL_ALGO pairwise, "ring") or to all at once
            // ("mesh", HCCL's fullmesh); the others run a ring or a tree.
            let names = match (kind, algorithm) {
                (CommKind::AllToAll, CommAlgorithm::Mesh) => ["mesh", "ring"],
                (CommKind::AllToAll, _) => ["ring", "mesh"],
                (_, CommAlgorithm::Tree) => ["tree", "ring"],
                _ => ["ring", "tree"],
            };
            params.push(Param::categorical(&format!("{}.algorithm", g.label), names.iter().map(|n| Value::from(*n)).collect()));
            g.algo = Some(params.len() - 1);
        }
    }
    if let Op::MoeComm { form, .. } = &g.op {
        // The operator's stated form first, then the others (`tunelab_sim::cost::moe_comm`).
        let mut names = vec![Value::from(form.name())];
        names.extend(tunelab_sim::MoeCommForm::ALL.iter().filter(|f| *f != form).map(|f| Value::from(f.name())));
        params.push(Param::categorical(&format!("{}.form", g.label), names));
        g.form = Some(params.len() - 1);
    }
    g
}

/// A collective whose algorithm is a choice (HCCL_ALGO: ring or tree; an all-to-all pairwise
/// or all peers at once).
fn has_algorithm_choice(op: &Op) -> bool {
    matches!(op, Op::Comm { ranks, .. } if *ranks >= 2)
}

/// Blocks: the fusion switches, then each operator group with a budget share proportional to
/// its part of the baseline time (at least 3 evaluations; the smallest get none if short).
fn make_blocks(obj: &mut OperatorObjective, baseline: &Config, fusion: &[usize], budget: usize) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut left = budget;
    if !fusion.is_empty() {
        let b = (1usize << fusion.len()).min(left);
        blocks.push(Block { label: "fusion".into(), params: fusion.to_vec(), budget: b });
        left -= b;
    }
    let v = obj.variant_of(baseline);
    let mut share = vec![0.0; obj.groups.len()];
    let used: Vec<(usize, f64)> = obj.variants[v].slots.iter().filter_map(|s| if let Slot::Group(g, rep) = s { Some((*g, *rep)) } else { None }).collect();
    for (g, rep) in used {
        let t = obj.group_estimate(g, baseline).map(|e| e.time_us).unwrap_or(0.0);
        share[g] += t * rep;
    }
    let total: f64 = share.iter().sum::<f64>().max(1e-12);
    let mut order: Vec<usize> = (0..obj.groups.len()).filter(|&g| share[g] > 0.0).collect();
    order.sort_by(|a, b| share[*b].total_cmp(&share[*a]).then(a.cmp(b)));
    let pool = left;
    for &g in &order {
        let want = ((share[g] / total) * pool as f64) as usize;
        let b = want.max(3).min(left);
        let params: Vec<usize> = obj.groups[g].axes.iter().map(|a| a.1).chain(obj.groups[g].int8).chain(obj.groups[g].algo).chain(obj.groups[g].form).collect();
        blocks.push(Block { label: obj.groups[g].label.clone(), params, budget: b });
        left -= b;
    }
    // Whatever rounding left over goes to the biggest operator.
    if let Some(b) = blocks.iter_mut().find(|b| b.label != "fusion") {
        b.budget += left;
    }
    blocks
}

impl OperatorObjective {
    fn variant_of(&self, c: &Config) -> usize {
        let off = |i: Option<usize>| i.is_some_and(|i| c.0.get(i).and_then(Value::as_str) == Some("off"));
        let fl = off(self.flash) as usize;
        let fu = off(self.fuse) as usize;
        let nfuse = if self.fuse.is_some() { 2 } else { 1 };
        fl * nfuse + fu
    }

    fn group_estimate(&mut self, g: usize, c: &Config) -> Result<Estimate, String> {
        let grp = &self.groups[g];
        let mut key: Vec<i64> = grp.axes.iter().map(|(_, i)| c.0.get(*i).and_then(Value::as_i64).unwrap_or(0)).collect();
        let int8 = grp.int8.is_some_and(|i| c.0.get(i).and_then(Value::as_i64) == Some(1));
        key.push(int8 as i64);
        let algo = grp.algo.and_then(|i| c.0.get(i)).and_then(Value::as_str).map(|a| match a {
            "tree" => CommAlgorithm::Tree,
            "mesh" => CommAlgorithm::Mesh,
            _ => CommAlgorithm::Ring,
        });
        key.push(algo.map_or(-1, |a| a as i64));
        let form = match grp.form.and_then(|i| c.0.get(i)).and_then(Value::as_str) {
            Some(f) => Some(tunelab_sim::MoeCommForm::parse(f).map_err(|e| format!("{}.form: {e}", grp.label))?),
            None => None,
        };
        key.push(form.map_or(-1, |f| f as i64));
        if let Some(r) = self.memo.get(&(g, key.clone())) {
            return r.clone();
        }
        let mut op = grp.op.clone();
        if let (true, Op::Matmul { dtype, weight_dtype, .. }) = (int8, &mut op) {
            *dtype = DType::Int8;
            *weight_dtype = None;
        }
        if let (Some(a), Op::Comm { algorithm, .. }) = (algo, &mut op) {
            *algorithm = a;
        }
        if let (Some(f), Op::MoeComm { form, .. }) = (form, &mut op) {
            *form = f;
        }
        let mut assign: Vec<(String, i64)> = grp.fixed.clone();
        assign.extend(grp.axes.iter().zip(&key).map(|((n, _), v)| (n.clone(), *v)));
        // A collective has no tiling axes: its estimate takes the default tiling.
        let grouped = grp.grouped && matches!(op, Op::Matmul { .. });
        let r = to_tiling(&op, &assign)
            .and_then(|t| {
                if grouped {
                    tunelab_sim::cost::moe_comm::estimate_grouped_lowered(&op, &t, &self.device)
                } else {
                    tunelab_sim::cost::estimate(&op, &t, &self.device)
                }
                .map_err(|e| e.reason)
            })
            .map_err(|e| format!("{}: {e}", grp.label));
        if self.memo.len() > 200_000 {
            self.memo.clear();
        }
        self.memo.insert((g, key), r.clone());
        r
    }
}

impl Objective for OperatorObjective {
    fn metrics(&self) -> Vec<Metric> {
        metrics()
    }

    fn evaluate(&mut self, c: &Config) -> Outcome {
        let v = self.variant_of(c);
        if let Some(why) = &self.variants[v].violation {
            return Outcome::Infeasible(why.clone());
        }
        let mut sum = GraphCost::default();
        for k in 0..self.variants[v].slots.len() {
            let (e, rep) = match self.variants[v].slots[k] {
                Slot::Fixed(e, rep) => (e, rep),
                Slot::Group(g, rep) => match self.group_estimate(g, c) {
                    Ok(e) => (e, rep),
                    Err(why) => return Outcome::Infeasible(why),
                },
            };
            sum.add(&e, rep);
            // Host dispatch the timing adds on top of the kernel (none for device timing).
            let per_call = self.timing.time_us(&self.device, &self.variants[v].names[k].2, e.time_us);
            sum.time_us += (per_call - e.time_us) * rep;
        }
        let secs = sum.time_us / 1e6;
        let peak = self.device.derived.peak_tflops_fp16 * 1e12;
        let util = if secs > 0.0 && peak > 0.0 { sum.flops / secs / peak } else { 0.0 };
        Outcome::Ok(vec![sum.time_us / 1e3, self.tokens / secs.max(1e-12), self.variants[v].memory_gib, sum.energy_uj / 1e6, sum.rel_error, util])
    }
}

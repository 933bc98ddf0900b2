//! The deployment objective's three serving modes for one decoded configuration: the static
//! batch (one prefill and the decode steps of a fixed batch), the continuous-batching scheduler
//! over the scenario's requests (data-parallel ranks serve every dp-th request), and
//! prefill-decode disaggregation (`super::crate::stages::scale::disagg`). `serve_knobs` picks one.

use super::{DeploymentObjective, Knobs, Served, GIB};
use crate::stages::scheduler::price::StepCost;
use crate::stages::scheduler::{simulate, EngineConfig, KvPolicy, Request, ServingStats};
use tunelab_sim::memory::{footprint, kv_cache_bytes, memory_per_chip, MemoryStrategy};
use tunelab_sim::workload::{validate_plan, GraphOptions, ParallelPlan, Workload};

impl DeploymentObjective {
    /// Simple mode: one prefill of the batch and one decode step at the midpoint context.
    pub(super) fn serve_static(&mut self, k: &Knobs, opts: &GraphOptions, plan: &ParallelPlan) -> Result<Result<Served, String>, String> {
        let (pre, dec) = self.workloads(k.batch);
        let fp = |w: &Workload| footprint(&self.model, w, plan, opts, None, k.memory).map(|f| f.memory.total as f64);
        let need = fp(&pre)?.max(fp(&dec)?);
        let chip = self.device.memory_bytes as f64;
        let budget = k.kv_fraction * chip;
        if need > budget {
            return Ok(Err(format!(
                "out of memory by {:.2} GiB: needs {:.2} GiB per chip, the engine may use {:.2} GiB ({} of {:.0} GiB)",
                (need - budget) / GIB, need / GIB, budget / GIB, k.kv_fraction, chip / GIB
            )));
        }
        let reserved_bytes = if k.memory == MemoryStrategy::Predictive { need } else { budget };
        let Workload::Decode { context_len, .. } = dec else { return Err("decode workload expected".into()) };
        let (input, out) = (self.input, self.output.max(1));
        let graph = k.graph_launch;
        let p: StepCost = self.pricer(k).prefill(k.batch, input, graph)?;
        let d: StepCost = self.pricer(k).decode(k.batch, context_len, graph)?;
        // An encoder's request is its one forward: no decode steps.
        let out = if crate::stages::serving_features::is_encoder(&self.model) { 0 } else { out };
        let total_s = (p.time_us + out as f64 * d.time_us) * 1e-6;
        let (ttft, tpot) = (p.time_us * 1e-3, d.time_us * 1e-3);
        let at = |x: f64| crate::stages::scheduler::Pcts { mean: x, p50: x, p90: x, p99: x };
        let within = self.slo.ttft_ms.is_none_or(|l| ttft <= l) && self.slo.tpot_ms.is_none_or(|l| tpot <= l);
        let n = k.batch as usize;
        let stats = ServingStats {
            requests: n,
            duration_s: total_s,
            output_tokens_per_s: (k.batch * out) as f64 / total_s.max(1e-12),
            total_tokens_per_s: (k.batch * (out + input)) as f64 / total_s.max(1e-12),
            requests_per_s: n as f64 / total_s.max(1e-12),
            ttft_ms: at(ttft),
            tpot_ms: at(tpot),
            itl_ms: at(tpot),
            // Every request of a static batch ends with the batch's last step.
            e2e_ms: at(total_s * 1e3),
            queue_ms: at(0.0),
            ttft_compute_ms: at(ttft),
            goodput_rps: if within { n as f64 / total_s.max(1e-12) } else { 0.0 },
            slo_attained: if within { 1.0 } else { 0.0 },
            steps: 1 + out,
            mean_batch: k.batch as f64,
            busy_fraction: 1.0,
            prefill_share: p.device_us / (p.device_us + out as f64 * d.device_us).max(1e-12),
            flops: p.flops + out as f64 * d.flops,
            rel_error: p.rel_error.max(d.rel_error),
            ..Default::default()
        };
        let energy_j = (p.energy_uj + out as f64 * d.energy_uj) * 1e-6;
        let busy_s = (p.device_us + out as f64 * d.device_us) * 1e-6;
        Ok(Ok(Served { stats, reserved_bytes, energy_j, busy_s }))
    }

    /// Scheduler mode: KV blocks from the memory left over, then the simulation.
    pub(super) fn serve_sched(&mut self, k: &Knobs, opts: &GraphOptions, plan: &ParallelPlan) -> Result<Result<Served, String>, String> {
        let spec = &self.spec;
        let bs = spec.block_size.max(1);
        // Weights, workspace and the activations of the largest step (max_num_batched_tokens rows).
        let step_rows = k.max_tokens.max(k.batch);
        let fixed = memory_per_chip(&self.model, &Workload::Decode { batch: step_rows, context_len: 1, output_len: 0 }, plan, opts, None)?;
        // Plus what stays per sequence whatever its length (linear-attention state) and the
        // draft's weights.
        let extra = crate::stages::serving_features::stage::fixed_bytes(&self.model, &self.spec, plan, opts, k.batch, k.spec_k);
        let base = (fixed.weights + fixed.workspace + fixed.activations) as f64 + extra;
        let chip = self.device.memory_bytes as f64;
        let budget = k.kv_fraction * chip;
        let per_token = kv_cache_bytes(&self.model, plan, opts, 1, 1).max(1) as f64;
        if base + per_token * bs as f64 > budget {
            return Ok(Err(format!(
                "out of memory: weights {:.2} GiB, workspace {:.2} GiB and activations {:.2} GiB per chip leave no KV cache in the {:.2} GiB the engine may use ({} of {:.0} GiB)",
                fixed.weights as f64 / GIB, fixed.workspace as f64 / GIB, fixed.activations as f64 / GIB, budget / GIB, k.kv_fraction, chip / GIB
            )));
        }
        let kv_blocks = ((budget - base) / (per_token * bs as f64)) as u64;
        let longest = self.model.llm.as_ref().map_or(0, |t| t.max_position);
        let kv_policy = match k.memory {
            MemoryStrategy::DynamicPool => KvPolicy::Paged,
            MemoryStrategy::Predictive => KvPolicy::Reserve,
            MemoryStrategy::Static => KvPolicy::ReserveFixed(longest),
        };
        let cfg = EngineConfig { max_num_seqs: k.batch, max_num_batched_tokens: k.max_tokens, chunked_prefill: k.chunked, block_size: bs, kv_blocks, kv_policy, graph_launch: k.graph_launch, prefix_cache_hit_rate: spec.prefix_cache_hit_rate };
        // Data-parallel ranks are symmetric: one rank serves every dp-th request (a closed loop's
        // clients and a benchmark's concurrency cap split likewise) and the deployment's rates
        // are dp times its own.
        let dp = k.scale.dp.max(1);
        let concurrency = clients_per_rank(spec, k.batch, dp);
        let (mut reqs, slo) = (std::mem::take(&mut self.reqs), self.slo);
        // Speculative decoding: requests of one length finish apart, as the accepted drafts of
        // each differ (`scheduler::with_acceptance_spread`).
        let kept = if k.spec_k > 0 {
            match crate::stages::serving_features::speculative::resolve(spec, k.spec_k)? {
                Some(sd) => {
                    let var = tunelab_sim::workload::speculative::tokens_variance(sd.num_speculative_tokens, sd.acceptance_rate);
                    let spread = crate::stages::scheduler::with_acceptance_spread(&reqs, sd.tokens_per_step(), var);
                    Some(std::mem::replace(&mut reqs, spread))
                }
                None => None,
            }
        } else {
            None
        };
        let r = if dp > 1 {
            let mine: Vec<Request> = reqs.iter().step_by(dp as usize).cloned().collect();
            simulate(&mine, &cfg, concurrency, slo, self.pricer(k))
        } else {
            simulate(&reqs, &cfg, concurrency, slo, self.pricer(k))
        };
        self.reqs = kept.unwrap_or(reqs);
        let stats = match r {
            Ok(mut s) => {
                let f = dp as f64;
                s.output_tokens_per_s *= f;
                s.total_tokens_per_s *= f;
                s.requests_per_s *= f;
                s.goodput_rps *= f;
                s.requests *= dp as usize;
                s
            }
            Err(e) if e.starts_with("KV cache too small") || e.starts_with("max_num_batched_tokens") => return Ok(Err(e)),
            Err(e) => return Err(e),
        };
        let reserved_bytes = if k.memory == MemoryStrategy::Predictive { base + stats.kv_peak_fraction * (kv_blocks * bs) as f64 * per_token } else { budget };
        let (energy_j, busy_s) = (stats.energy_j, stats.busy_fraction * stats.duration_s);
        Ok(Ok(Served { stats, reserved_bytes, energy_j, busy_s }))
    }

    /// Disaggregated serving (`crate::stages::scale::disagg`): KV memory per decode rank as in
    /// `serve_sched`, the prefill instances' ranks from the chips decode leaves.
    pub(super) fn serve_disagg(&mut self, k: &Knobs, opts: &GraphOptions, plan: &ParallelPlan, (x, y): (u64, u64)) -> Result<Result<Served, String>, String> {
        let chips = self.cluster.as_ref().map_or(k.tp * k.scale.dp, |c| c.chips);
        let (tp, dp, ptp) = (k.tp, k.scale.dp, k.scale.prefill_tp);
        // The prefill side: its own nodes (heterogeneous) or the chips decode leaves.
        let side = self.cluster.as_ref().and_then(|c| c.prefill.as_ref());
        let ppp = k.scale.prefill_pp.max(1);
        // A prefill rank of prefill_tp x prefill_pp x prefill_cp chips.
        let pcp = k.scale.prefill_cp.max(1);
        let prefill_dp = match side {
            Some(p) => p.chips / x / ptp / ppp / pcp,
            None => (chips - y * tp * dp) / x / ptp / ppp / pcp,
        };
        if pcp > 1 {
            if let Some(why) = crate::stages::scale::context::unsupported(&self.model) {
                return Ok(Err(why));
            }
        }
        let prefill_mem = side.map_or(self.device.memory_bytes, |p| p.device.memory_bytes) as f64;
        let fixed = memory_per_chip(&self.model, &Workload::Decode { batch: k.batch, context_len: 1, output_len: 0 }, plan, opts, None)?;
        let base = (fixed.weights + fixed.workspace + fixed.activations) as f64;
        let budget = k.kv_fraction * self.device.memory_bytes as f64;
        let per_token = kv_cache_bytes(&self.model, plan, opts, 1, 1).max(1) as f64;
        if base + per_token * 1024.0 > budget {
            return Ok(Err(format!("out of memory on a decode rank: weights {:.2} GiB and activations {:.2} GiB per chip leave no KV cache in {:.2} GiB", fixed.weights as f64 / GIB, fixed.activations as f64 / GIB, budget / GIB)));
        }
        let pplan = self.plan_side(k, ptp, prefill_dp, true);
        if let Err(e) = validate_plan(&self.model, &pplan) {
            return Ok(Err(format!("prefill side (tp {ptp} x dp {prefill_dp}): {e}")));
        }
        // A PCP rank holds its share of the step's tokens.
        let pfixed = memory_per_chip(&self.model, &Workload::Prefill { batch: 1, input_len: k.max_tokens.div_ceil(pcp) }, &pplan, opts, None)?;
        let pbudget = k.kv_fraction * prefill_mem;
        if pfixed.total as f64 > pbudget {
            return Ok(Err(format!("out of memory on a prefill rank: {:.2} GiB per chip for a {}-token prefill step, {:.2} GiB allowed", pfixed.total as f64 / GIB, k.max_tokens, pbudget / GIB)));
        }
        // With DCP on the prefill side (`deployment.cluster.prefill_dcp`) the longest prompt's
        // cache, sharded over the prefill TP group, must stay on its prefill rank beside a step
        // until it is pushed. (Without it only one step is checked, as before: the whole-prompt
        // check moves layouts that were accepted, e.g. a 128K prompt at PCP4 over TP4 ranks
        // within 1 GiB of their budget; it is left for its own change.)
        if k.scale.prefill_dcp > 1 {
            let longest = self.reqs.iter().map(|r| r.input).max().unwrap_or(0);
            let held = kv_cache_bytes(&self.model, &pplan, opts, 1, longest.div_ceil(pcp)) as f64;
            if pfixed.total as f64 + held > pbudget {
                return Ok(Err(format!("out of memory on a prefill rank: the longest prompt's cache ({longest} tokens, {:.2} GiB per chip with prefill_dcp {}) and a {}-token step ({:.2} GiB) exceed {:.2} GiB", held / GIB, k.scale.prefill_dcp, k.max_tokens, pfixed.total as f64 / GIB, pbudget / GIB)));
            }
        }
        // The KV push: every decode chip receives its share over its own link, in parallel.
        // Between two systems (heterogeneous) it crosses RoCE at the slower side's rate.
        let c = crate::stages::scale::constants();
        let link = self.cluster.as_ref().map_or(tunelab_sim::Link::Hccs, |cl| if cl.prefill.is_some() { tunelab_sim::Link::InterNode } else if chips <= cl.placement.node_chips as u64 { tunelab_sim::Link::Hccs } else { cl.placement.group_link(1, chips) });
        let (mut gbs, mut lat, _) = tunelab_sim::cost::comm::link(&self.device, link);
        if let Some(p) = side {
            let (g2, l2, _) = tunelab_sim::cost::comm::link(&p.device, link);
            (gbs, lat) = (gbs.min(g2), lat.max(l2));
        }
        if gbs <= 0.0 {
            return Ok(Err(format!("the KV transfer needs a {link:?} link, which {} has not in its profile", self.device.name)));
        }
        let rate = (gbs * 1e3 * c.kv_transfer_efficiency).max(1e-9);
        let transfer = move |input: u64| c.kv_transfer_setup_us + lat + per_token * input as f64 / rate;
        let cfg = crate::stages::scale::disagg::DisaggConfig {
            prefill_ranks: x * prefill_dp,
            decode_ranks: y * dp,
            max_num_seqs: k.batch,
            kv_tokens: ((budget - base) / per_token) as u64,
            max_num_batched_tokens: k.max_tokens,
            graph_launch: k.graph_launch,
            prefill_chips: ptp * ppp * pcp,
            decode_chips: tp,
            prefill_pp: ppp,
            dynamic_chunks: k.scale.dynamic_chunks,
            min_chunk: c.cpp_min_chunk,
            prefill_cp: pcp,
            // The whole deployment's cap: a benchmark's --max-concurrency, or a closed loop's
            // clients (max_num_seqs per decode rank when the count is not given).
            concurrency: clients_per_rank(&self.spec, k.batch * y * dp, 1),
        };
        let pkey = self.pricer_key(k, ptp, prefill_dp, true);
        let dkey = self.pricer_key(k, tp, dp, false);
        self.pricer_at(k, ptp, prefill_dp, true);
        self.pricer(k);
        let (Some(mut pp), Some(mut dd)) = (self.pricers.remove(&pkey), self.pricers.remove(&dkey)) else { return Err("step pricers missing".into()) };
        let r = crate::stages::scale::disagg::simulate(&self.reqs, &cfg, self.slo, &mut pp, &mut dd, &transfer);
        self.pricers.insert(pkey, pp);
        self.pricers.insert(dkey, dd);
        let stats = match r {
            Ok(s) => s,
            Err(e) if e.starts_with("KV cache too small") => return Ok(Err(e)),
            Err(e) => return Err(e),
        };
        // Per chip, as the colocated path reports one rank's chip.
        let mut stats = stats;
        let n = (chips + self.cluster.as_ref().map_or(0, |c| c.prefill_chips())) as f64;
        stats.flops /= n;
        let (energy_j, busy_s) = (stats.energy_j / n, stats.busy_fraction * stats.duration_s);
        Ok(Ok(Served { stats, reserved_bytes: budget, energy_j, busy_s }))
    }
}

/// Requests one data-parallel rank has in flight at most: a closed loop's clients (max_num_seqs
/// when the count is not given) or a benchmark's concurrency cap, split over the `dp` ranks as
/// the requests are; None when the arrivals are not capped.
pub(super) fn clients_per_rank(spec: &crate::stages::scheduler::ServingSpec, batch: u64, dp: u64) -> Option<u64> {
    let dp = dp.max(1);
    if spec.arrival == "closed" {
        Some(spec.concurrency.map_or(batch, |c| c.div_ceil(dp)))
    } else {
        spec.max_concurrency.map(|c| c.div_ceil(dp))
    }
}

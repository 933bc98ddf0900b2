//! Plan: the fewest chips (or the lowest cost per million tokens) that serve a load within its
//! SLOs, from the hardware on offer.
//!
//! A plan is `replicas` identical engine instances behind a load balancer, each over `nodes`
//! nodes of one chip and serving `rate / replicas` req/s: co-located (tp x dp, expert
//! parallelism for a mixture of experts) or prefill-decode disaggregated (xPyD inside the
//! instance), a precision, MTP speculative decoding when the checkpoint has MTP layers, graph or
//! eager launch. Candidate sizes (chips in all) are tried cheapest first; at each size a study
//! over the deployment stage's own space (the scenario `scenario_for` writes, the objective the
//! study always calls) looks for configurations within the limits at that instance's share of
//! the load. The first size with one is the plan; runner-ups are its other feasible layouts
//! and the best of the next size. Every candidate serves the same request sample (the seed's,
//! common random numbers), so the ranking is the configurations', not the samples'.

use crate::spec::scenario::Scenario;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tunelab_search::Value;

/// What to plan for. Unknown keys are an error (a misspelt SLO must not be dropped).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanRequest {
    /// A bundled model id ("deepseek-v3").
    pub model: String,
    /// The load: Poisson arrivals at this many requests per second.
    pub rate: f64,
    /// Mean prompt and output lengths (tokens), or a bundled dataset's (`dataset`).
    #[serde(default = "d_in")]
    pub input_len: u64,
    #[serde(default = "d_out")]
    pub output_len: u64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub dataset: String,
    /// "fixed" (the default: the load as stated), "uniform" or "lognormal" lengths around the
    /// means (spread `length_spread`).
    #[serde(default = "d_dist")]
    pub length_distribution: String,
    #[serde(default = "d_spread")]
    pub length_spread: f64,
    /// SLOs: p90 TTFT and p90 TPOT (ms).
    pub max_ttft_ms: f64,
    pub max_tpot_ms: f64,
    /// The hardware on offer.
    pub hardware: Vec<Offer>,
    /// "chips" (fewest chips) or "cost" (lowest cost per million generated tokens; needs every
    /// offer's price).
    #[serde(default = "d_goal")]
    pub goal: String,
    /// The serving engine ("vllm-ascend", "mindie", ...).
    #[serde(default = "d_engine")]
    pub engine: String,
    /// Requests simulated per candidate (the sample every candidate shares).
    #[serde(default = "d_requests")]
    pub requests: usize,
    /// Configurations tried per candidate size.
    #[serde(default = "d_budget")]
    pub budget: usize,
    #[serde(default)]
    pub seed: u64,
}

fn d_in() -> u64 { 2048 }
fn d_out() -> u64 { 512 }
fn d_dist() -> String { "fixed".into() }
fn d_spread() -> f64 { 0.5 }
fn d_goal() -> String { "chips".into() }
fn d_engine() -> String { "vllm-ascend".into() }
fn d_requests() -> usize { 200 }
fn d_budget() -> usize { 40 }

/// One kind of node on offer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Offer {
    /// A bundled chip ("910C" for an Atlas 800 A3 node, "910B2" / "910B3" / "910B4" for A2).
    pub device: String,
    /// Nodes available.
    pub nodes: u64,
    /// Price per chip-hour (any currency), for the cost goal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_per_chip_hour: Option<f64>,
}

/// One plan: a layout that serves the load within the SLOs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanOption {
    pub device: String,
    pub chips: u64,
    pub replicas: u64,
    pub nodes_per_replica: u64,
    /// The instance's configuration, by parameter name (the deployment stage's).
    pub config: BTreeMap<String, Value>,
    /// "co-located tp 4 x dp 8, EP 32" or "2P1D ...".
    pub layout: String,
    /// Metrics of one replica at its share of the load (p90 TTFT, p90 TPOT, ...).
    pub ttft_ms: f64,
    pub tpot_ms: f64,
    pub tokens_per_s_per_chip: f64,
    /// Cost per million generated tokens at the load (None without a price).
    pub cost_per_mtok: Option<f64>,
    /// How far predictions of this kind landed from measurements (`fidelity::bands`).
    pub prediction_band: String,
    /// The scenario of one replica (what `tunelab eval` and the app open). Read through the
    /// parsed tree (`scenario_via_tree`).
    #[serde(deserialize_with = "scenario_via_tree")]
    pub scenario: Scenario,
    /// For a near-miss runner-up: the limits it misses and by how much ("p90 TPOT 53.1 ms >
    /// 50 ms"); None for a plan within the limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub misses: Option<String>,
}

/// Reads a scenario field as a JSON tree, then through the strict reader, as links and files
/// are read: the page (which reads plans from its engine worker's text messages) then carries
/// one copy of the scenario's decoder instead of a second one for message text. Same result.
fn scenario_via_tree<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Scenario, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    crate::spec::strict::from_value::<Scenario>(&v, &[]).map(|(s, _)| s).map_err(serde::de::Error::custom)
}

/// The answer: the plan, its runner-ups, what was tried.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub best: Option<PlanOption>,
    pub runner_ups: Vec<PlanOption>,
    /// Candidate sizes tried, cheapest first: (device, chips, replicas x nodes, feasible
    /// configurations found, or why none).
    pub tried: Vec<String>,
    pub evaluations: usize,
    pub notes: Vec<String>,
}

impl PlanRequest {
    /// Parses and checks a request (JSON), naming the field at fault.
    pub fn from_json(text: &str) -> Result<PlanRequest, String> {
        if text.len() > 1 << 20 {
            return Err("plan request: over 1 MiB".into());
        }
        let r: PlanRequest = serde_json::from_str(text).map_err(|e| format!("plan request: {e}"))?;
        r.validate()?;
        Ok(r)
    }

    /// Checks every field.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.rate.is_finite() && self.rate > 0.0 && self.rate <= 1e5) {
            return Err(format!("plan.rate: {} must be a positive request rate (req/s, at most 1e5)", self.rate));
        }
        for (f, v) in [("max_ttft_ms", self.max_ttft_ms), ("max_tpot_ms", self.max_tpot_ms)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("plan.{f}: {v} must be a positive number of ms"));
            }
        }
        if self.input_len == 0 || self.output_len == 0 || self.input_len > 1 << 20 || self.output_len > 1 << 20 {
            return Err("plan.input_len / output_len: must be within 1..=1048576 tokens".into());
        }
        if self.hardware.is_empty() {
            return Err("plan.hardware: list at least one offer ({\"device\": \"910C\", \"nodes\": 4})".into());
        }
        for (i, o) in self.hardware.iter().enumerate() {
            if o.nodes == 0 || o.nodes > 64 {
                return Err(format!("plan.hardware[{i}].nodes: {} must be within 1..=64", o.nodes));
            }
            if let Some(p) = o.price_per_chip_hour {
                if !(p.is_finite() && p > 0.0) {
                    return Err(format!("plan.hardware[{i}].price_per_chip_hour: {p} must be positive"));
                }
            }
            if self.goal == "cost" && o.price_per_chip_hour.is_none() {
                return Err(format!("plan.hardware[{i}].price_per_chip_hour: the cost goal needs every offer's price"));
            }
        }
        if self.goal != "chips" && self.goal != "cost" {
            return Err(format!("plan.goal: expected chips or cost, got '{}'", crate::spec::scenario::clip(&self.goal)));
        }
        if !(20..=5000).contains(&self.requests) {
            return Err(format!("plan.requests: {} must be within 20..=5000", self.requests));
        }
        if !(1..=400).contains(&self.budget) {
            return Err(format!("plan.budget: {} must be within 1..=400", self.budget));
        }
        Ok(())
    }
}

/// The scenario of one replica: `nodes` nodes of the offer's chip serving `rate` req/s.
pub fn scenario_for(r: &PlanRequest, device: &str, nodes: u64, rate: f64) -> Result<Scenario, String> {
    let (model, _) = resolve(r, device)?;
    let moe = model.llm.as_ref().is_some_and(|t| t.moe.is_some());
    let mtp = model.llm.as_ref().is_some_and(|t| t.mtp_layers > 0);
    let mut serving = serde_json::json!({
        "mode": "scheduler", "engine": r.engine, "arrival": "poisson", "request_rate": rate, "requests": r.requests,
        "length_distribution": r.length_distribution, "length_spread": r.length_spread, "block_size": 128,
        "max_num_batched_tokens": [8192, 16384], "chunked_prefill": ["on"],
    });
    if !r.dataset.is_empty() {
        serving["dataset"] = r.dataset.clone().into();
    }
    if mtp {
        serving["speculative"] = serde_json::json!({ "method": "mtp", "num_speculative_tokens": [1, 2], "dataset": if r.dataset.is_empty() { "sharegpt" } else { r.dataset.as_str() } });
    }
    if moe && r.engine == "vllm-ascend" {
        // vLLM-Ascend's large-MoE tutorials capture whole decode steps (FULL_DECODE_ONLY).
        serving["graph_mode"] = "full_decode_only".into();
    }
    let mut cluster = serde_json::json!({ "nodes": nodes, "redundant_experts": [0] });
    if nodes >= 2 {
        cluster["disaggregation"] = serde_json::json!(["colocated", "1P1D", "1P2D", "2P1D"]);
    }
    let v = serde_json::json!({
        "version": crate::SCENARIO_VERSION,
        "name": format!("plan: {} on {nodes} x {device} node(s) at {rate:.4} req/s", r.model),
        "model": r.model, "device": device, "stage": "deployment",
        "workload": { "batch": 32, "input_len": r.input_len, "output_len": r.output_len },
        "deployment": {
            "batches": [32, 16, 64, 128, 8],
            "precisions": ["w8a8", "w8a16", "bf16"],
            "kv_cache_fractions": [0.9],
            "memory_strategies": ["dynamic_pool"],
            "launch_modes": ["graph", "eager"],
            "serving": serving,
            "cluster": cluster,
        },
        "space": if moe { serde_json::json!({ "expert_parallel": { "fixed": "on" } }) } else { serde_json::json!({}) },
        "objectives": [{ "metric": "tpot_ms", "priority": 1 }],
        "constraints": { "max_ttft_ms": r.max_ttft_ms, "max_tpot_ms": r.max_tpot_ms },
        "strategy": { "name": "auto" },
        "budget": r.budget,
        "seed": r.seed,
    });
    Scenario::from_json(&v.to_string())
}

/// The model and the chip a request names (through the scenario resolver, so the same bundled
/// files and errors as every stage).
fn resolve(r: &PlanRequest, device: &str) -> Result<(tunelab_sim::model::ModelDesc, tunelab_sim::device::Device), String> {
    let probe = serde_json::json!({ "version": crate::SCENARIO_VERSION, "model": r.model, "device": device, "stage": "deployment" });
    let s = Scenario::from_json(&probe.to_string())?;
    let (m, d, _) = crate::stages::context::resolve(&s)?;
    Ok((m, d))
}

/// One candidate size: `replicas` instances of `nodes` nodes of an offer.
#[derive(Clone, Debug)]
struct Size {
    offer: usize,
    nodes: u64,
    replicas: u64,
    chips: u64,
    /// Cost per hour of all the chips (0 without prices).
    per_hour: f64,
}

/// Plans the request: see the module notes.
pub fn plan(r: &PlanRequest) -> Result<Plan, String> {
    r.validate()?;
    let mut sizes = Vec::new();
    let mut notes = Vec::new();
    for (i, o) in r.hardware.iter().enumerate() {
        let (_, dev) = resolve(r, &o.device).map_err(|e| format!("plan.hardware[{i}]: {e}"))?;
        let node_chips = dev.node_chips.max(1) as u64;
        for nodes in 1..=o.nodes {
            for replicas in 1..=o.nodes / nodes {
                let chips = nodes * replicas * node_chips;
                sizes.push(Size { offer: i, nodes, replicas, chips, per_hour: chips as f64 * o.price_per_chip_hour.unwrap_or(0.0) });
            }
        }
    }
    // Cheapest first; at equal cost fewer, larger replicas first (fewer load balancers).
    let key = |s: &Size| if r.goal == "cost" { s.per_hour } else { s.chips as f64 };
    sizes.sort_by(|a, b| key(a).total_cmp(&key(b)).then(a.replicas.cmp(&b.replicas)).then(a.offer.cmp(&b.offer)));
    let mut tried = Vec::new();
    let mut found: Vec<PlanOption> = Vec::new();
    // The closest miss of each size tried: (how far over, max of p90 / limit; the option).
    let mut near: Vec<(f64, PlanOption)> = Vec::new();
    let mut evaluations = 0;
    // The plan's size, then one more feasible size for the runner-ups.
    let mut feasible_sizes = 0;
    for size in &sizes {
        if feasible_sizes >= 2 {
            break;
        }
        let o = &r.hardware[size.offer];
        let share = r.rate / size.replicas as f64;
        let label = format!("{} x {} node(s) of {} = {} chips at {:.3} req/s each", size.replicas, size.nodes, o.device, size.chips, share);
        let s = match scenario_for(r, &o.device, size.nodes, share) {
            Ok(s) => s,
            Err(e) => {
                tried.push(format!("{label}: {e}"));
                continue;
            }
        };
        let mut run = match crate::run::Run::new(&s) {
            Ok(run) => run,
            Err(e) => {
                tried.push(format!("{label}: {e}"));
                continue;
            }
        };
        run.run_to_end();
        evaluations += run.evaluations();
        let names = run.space().names().to_vec();
        let metrics: Vec<String> = run.metrics().iter().map(|m| m.name.clone()).collect();
        let at = |v: &[f64], n: &str| metrics.iter().position(|m| m == n).and_then(|i| v.get(i).copied()).unwrap_or(f64::NAN);
        let mut ok: Vec<&tunelab_search::Trial> = run.lanes().iter().enumerate().flat_map(|(i, _)| run.trials(i).iter()).filter(|t| t.state == tunelab_search::TrialState::Ok).collect();
        ok.sort_by(|a, b| at(&a.values, "tpot_ms").total_cmp(&at(&b.values, "tpot_ms")));
        ok.dedup_by(|a, b| a.config == b.config);
        let option = |config: BTreeMap<String, Value>, ttft_ms: f64, tpot_ms: f64, misses: Option<String>, c: &tunelab_search::Config| PlanOption {
            device: o.device.clone(),
            chips: size.chips,
            replicas: size.replicas,
            nodes_per_replica: size.nodes,
            layout: layout(&config, size.chips / size.replicas),
            ttft_ms,
            tpot_ms,
            tokens_per_s_per_chip: share * r.output_len as f64 / (size.chips / size.replicas) as f64,
            cost_per_mtok: o.price_per_chip_hour.map(|p| size.chips as f64 * p / (r.rate * r.output_len as f64 * 3600.0 / 1e6)),
            prediction_band: crate::fidelity::bands::line_for(&s, &names, c),
            config,
            scenario: s.clone(),
            misses,
        };
        match closest_miss(r, &s, &run) {
            Ok((miss, priced)) => {
                evaluations += priced;
                if let Some((score, c, ttft, tpot, why)) = miss {
                let config: BTreeMap<String, Value> = names.iter().cloned().zip(c.0.iter().cloned()).collect();
                    near.push((score, option(config, ttft, tpot, Some(why), &c)));
                }
            }
            Err(e) => notes.push(format!("{label}: the closest miss could not be priced: {e}")),
        }
        if ok.is_empty() {
            let why = run.report().notes.iter().find(|n| n.starts_with("No configuration")).cloned().unwrap_or_else(|| "no configuration within the limits".into());
            tried.push(format!("{label}: {why}"));
            continue;
        }
        tried.push(format!("{label}: {} configuration(s) within the limits", ok.len()));
        feasible_sizes += 1;
        for t in ok.iter().take(3) {
            let config: BTreeMap<String, Value> = names.iter().cloned().zip(t.config.0.iter().cloned()).collect();
            found.push(option(config, at(&t.values, "ttft_ms"), at(&t.values, "tpot_ms"), None, &t.config));
        }
    }
    if found.is_empty() {
        notes.push(format!("no plan within the hardware on offer meets p90 TTFT {} ms and p90 TPOT {} ms at {} req/s; see what each size missed", r.max_ttft_ms, r.max_tpot_ms, r.rate));
    }
    notes.push(format!(
        "each candidate size: a study of {} configurations of the deployment stage (the same objective `tunelab eval` prices) on the same {} requests (seed {}), Poisson arrivals at the replica's share of {} req/s, {} lengths around {} in / {} out{}; a plan is the cheapest size with a configuration within both limits",
        r.budget, r.requests, r.seed, r.rate, r.length_distribution, r.input_len, r.output_len,
        if r.dataset.is_empty() { String::new() } else { format!(" (dataset {})", r.dataset) }
    ));
    // Runner-ups: the plan's other layouts and the next size's best, then the closest misses
    // (the best configuration of each size that missed, with what it misses), fewest chips first.
    near.sort_by(|a, b| a.1.chips.cmp(&b.1.chips).then(a.0.total_cmp(&b.0)));
    let mut it = found.into_iter();
    let best = it.next();
    let mut runner_ups: Vec<PlanOption> = it.collect();
    let misses: Vec<PlanOption> = near.into_iter().map(|n| n.1).take(MAX_NEAR_MISSES).collect();
    if !misses.is_empty() {
        notes.push(format!("near-misses: for each size tried, the configuration closest to the limits (the largest p90 / limit smallest), priced again without the limits to say by how much it misses; at most {MAX_NEAR_MISSES}"));
    }
    runner_ups.extend(misses);
    Ok(Plan { best, runner_ups, tried, evaluations, notes })
}

/// Near-misses shown among the runner-ups.
const MAX_NEAR_MISSES: usize = 4;

/// The configuration of a size's study that came closest to the limits without meeting them:
/// every trial refused for a TTFT or TPOT limit is priced again by the stage without the limits
/// (the same objective, so the same numbers), and the one with the smallest largest p90 / limit
/// is kept: (that ratio, its configuration, p90 TTFT, p90 TPOT, what it misses).
type Miss = (f64, tunelab_search::Config, f64, f64, String);

/// Also returns how many configurations it priced.
fn closest_miss(r: &PlanRequest, s: &Scenario, run: &crate::run::Run) -> Result<(Option<Miss>, usize), String> {
    let over = |t: &&tunelab_search::Trial| t.state == tunelab_search::TrialState::Infeasible && t.reason.as_deref().is_some_and(|w| (w.starts_with("TTFT ") || w.starts_with("TPOT ")) && w.contains("over the limit"));
    let mut configs: Vec<tunelab_search::Config> = run.lanes().iter().enumerate().flat_map(|(i, _)| run.trials(i).iter()).filter(over).map(|t| t.config.clone()).collect();
    configs.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    configs.dedup();
    if configs.is_empty() {
        return Ok((None, 0));
    }
    let priced = configs.len();
    let mut free = s.clone();
    free.constraints.max_ttft_ms = None;
    free.constraints.max_tpot_ms = None;
    let mut st = crate::stages::setup(&free)?;
    let (ti, pi) = match (st.metrics.iter().position(|m| m.name == "ttft_ms"), st.metrics.iter().position(|m| m.name == "tpot_ms")) {
        (Some(a), Some(b)) => (a, b),
        _ => return Err("the deployment stage reports no ttft_ms / tpot_ms".into()),
    };
    let mut best: Option<(f64, tunelab_search::Config, f64, f64)> = None;
    for c in configs {
        if let tunelab_search::Outcome::Ok(v) = st.objective.evaluate(&c) {
            let (ttft, tpot) = (v[ti], v[pi]);
            let score = (ttft / r.max_ttft_ms).max(tpot / r.max_tpot_ms);
            if score.is_finite() && best.as_ref().is_none_or(|b| score < b.0) {
                best = Some((score, c, ttft, tpot));
            }
        }
    }
    Ok((best.map(|(score, c, ttft, tpot)| {
        let mut why = Vec::new();
        if ttft > r.max_ttft_ms {
            why.push(format!("p90 TTFT {ttft:.0} ms > {} ms (+{:.0}%)", r.max_ttft_ms, (ttft / r.max_ttft_ms - 1.0) * 100.0));
        }
        if tpot > r.max_tpot_ms {
            why.push(format!("p90 TPOT {tpot:.1} ms > {} ms (+{:.0}%)", r.max_tpot_ms, (tpot / r.max_tpot_ms - 1.0) * 100.0));
        }
        (score, c, ttft, tpot, if why.is_empty() { "within both limits when priced alone".into() } else { why.join(", ") })
    }), priced))
}

/// The layout of a configuration in words.
fn layout(c: &BTreeMap<String, Value>, chips: u64) -> String {
    let int = |k: &str, d: i64| c.get(k).and_then(Value::as_i64).unwrap_or(d);
    let text = |k: &str| c.get(k).and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
    let (tp, dp) = (int("tp", 1), int("dp", 1));
    let ep = if text("expert_parallel") == "on" { format!(", EP {}", tp * dp) } else { String::new() };
    let mtp = match int("num_speculative_tokens", 0) {
        0 => String::new(),
        k => format!(", MTP {k}"),
    };
    let pd = text("pd");
    // Context parallel (vLLM --decode-context-parallel-size / --prefill-context-parallel-size).
    let dcp = match int("decode_cp", 1) {
        1 => String::new(),
        n => format!(", DCP {n}"),
    };
    let pcp = match int("prefill_cp", 1) {
        1 => String::new(),
        n => format!(" x PCP {n}"),
    };
    let side = if pd.is_empty() || pd == "colocated" {
        format!("co-located over {chips} chips: tp {tp} x dp {dp}{ep}{dcp}")
    } else {
        format!("{pd} over {chips} chips: decode tp {tp} x dp {dp}{ep}{dcp}, prefill tp {}{pcp}", int("prefill_tp", tp))
    };
    format!("{side}, {}, {} launch, batch {} per rank{mtp}", text("precision"), text("launch"), int("batch", 0))
}

impl Plan {
    /// The plan as text (the CLI's output).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let one = |o: &PlanOption| {
            format!(
                "{}{} chips of {} ({} replica(s) x {} node(s)): {}; per replica p90 TTFT {:.0} ms, p90 TPOT {:.1} ms, {:.1} tokens/s/chip{}\n  {}\n",
                o.misses.as_ref().map(|m| format!("near-miss (misses {m}): ")).unwrap_or_default(),
                o.chips, o.device, o.replicas, o.nodes_per_replica, o.layout, o.ttft_ms, o.tpot_ms, o.tokens_per_s_per_chip,
                o.cost_per_mtok.map(|c| format!(", {c:.3} per million tokens")).unwrap_or_default(),
                if o.prediction_band.is_empty() { "no prediction band for this kind of row".to_string() } else { o.prediction_band.clone() }
            )
        };
        match &self.best {
            Some(b) => out.push_str(&format!("plan: {}", one(b))),
            None => out.push_str("plan: none\n"),
        }
        if !self.runner_ups.is_empty() {
            out.push_str("\nrunner-ups:\n");
            for r in &self.runner_ups {
                out.push_str(&format!("- {}", one(r)));
            }
        }
        out.push_str(&format!("\nsizes tried ({} evaluations):\n", self.evaluations));
        for t in &self.tried {
            out.push_str(&format!("  {t}\n"));
        }
        for n in &self.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        out
    }
}

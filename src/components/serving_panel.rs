//! The deployment stage's serving settings (`deployment.serving`): simple mode or the
//! continuous-batching scheduler, the request stream (arrivals, rate or clients, count, length
//! distribution), the engine's limits (max-num-seqs, max-num-batched-tokens, chunked prefill,
//! KV block size) and the serving engine whose host work surrounds each step. Every edit goes
//! through `Ctx::edit` (validated, then the link follows), so it travels in the URL.

use crate::state::Ctx;
use leptos::prelude::*;
use tunelab_scenario::{Scenario, Stage};

/// Parses a comma-separated list of whole numbers (empty: the stage's defaults).
fn int_list(text: &str) -> Result<Vec<i64>, String> {
    text.split(',').map(str::trim).filter(|t| !t.is_empty()).map(|t| t.parse::<i64>().map_err(|_| format!("'{t}' is not a whole number"))).collect()
}

fn list_text(v: &[i64]) -> String {
    v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")
}

/// Switches the arrival process, giving it what it needs to be valid: a rate of one request per
/// second for Poisson arrivals without one, one arrival per second for a trace without times.
fn set_arrival(s: &mut Scenario, v: String) {
    let sv = &mut s.deployment.serving;
    if v == "poisson" && sv.request_rate.is_none() {
        sv.request_rate = Some(1.0);
    }
    if v == "trace" && sv.trace.is_empty() {
        sv.trace = (0..sv.requests.min(1000)).map(|i| i as f64).collect();
    }
    sv.arrival = v;
}

/// The serving section of the scenario panel (deployment and runtime stages).
#[component]
pub fn ServingPanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let shown = move || ctx.scenario.with(|s| matches!(s.stage, Stage::Deployment | Stage::Runtime));
    let scheduler = move || ctx.scenario.with(|s| !s.deployment.serving.is_static());
    let arrival = move || ctx.scenario.with(|s| s.deployment.serving.arrival.clone());
    let select = move |label, id, title, options, get, set| super::fields::select(ctx, label, id, title, options, get, set);
    let number = move |label, id, title, placeholder, get, set| super::fields::number(ctx, label, id, title, placeholder, get, set);
    let pair = |v: &[&str]| v.iter().map(|x| (x.to_string(), x.to_string())).collect::<Vec<_>>();
    let engines = || tunelab_scenario::scheduler::price::engines().into_iter().map(|e| (e.clone(), e)).collect::<Vec<_>>();
    view! {
        <Show when=shown>
            <details class="serving" data-testid="serving-panel">
                <summary>"Serving"</summary>
                {select("Mode", "serving-mode", "scheduler: a continuous-batching simulation serves a request stream (TTFT, TPOT and ITL percentiles, queueing, goodput). static (simple mode): one prefill of the whole batch, then one decode step.",
                    vec![("scheduler".into(), "scheduler (continuous batching)".into()), ("static".into(), "static batch (simple mode)".into())],
                    |s| s.deployment.serving.mode.clone(), |s, v| s.deployment.serving.mode = v)}
                {select("Engine", "serving-engine", "Whose host work surrounds each step (scheduling, sampling, detokenisation, input preparation) and how it holds the KV cache: assets/constants/serving-host.json, every number with its source.",
                    engines(), |s| s.deployment.serving.engine.clone(), |s, v| s.deployment.serving.engine = v)}
                <Show when=scheduler>
                    {select("Arrivals", "serving-arrival", "closed: a fixed number of clients, each sending its next request when the last finishes; poisson: random arrivals at a rate; burst: every request at once; trace: given arrival times.",
                        pair(&["closed", "poisson", "burst", "trace"]), |s| s.deployment.serving.arrival.clone(), set_arrival)}
                    <Show when=move || arrival() == "poisson">
                        {number("Request rate (req/s)", "serving-rate", "Mean Poisson arrivals per second", "requests/s",
                            |s| s.deployment.serving.request_rate.map(|r| r.to_string()).unwrap_or_default(),
                            |s, t| { let r: f64 = t.parse().map_err(|_| "a rate in requests per second".to_string())?; s.deployment.serving.request_rate = Some(r); Ok(()) })}
                    </Show>
                    <Show when=move || arrival() == "closed">
                        {number("Clients", "serving-concurrency", "Clients of the closed loop (empty: as many as max-num-seqs, a full server)", "= max-num-seqs",
                            |s| s.deployment.serving.concurrency.map(|c| c.to_string()).unwrap_or_default(),
                            |s, t| { s.deployment.serving.concurrency = if t.is_empty() { None } else { Some(t.parse().map_err(|_| "a whole number of clients (or empty)".to_string())?) }; Ok(()) })}
                    </Show>
                    <Show when=move || arrival() == "trace">
                        {number("Arrival times (s)", "serving-trace", "Comma-separated arrival times in seconds", "0, 0.5, 1.2",
                            |s| s.deployment.serving.trace.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "),
                            |s, t| { s.deployment.serving.trace = t.split(',').map(str::trim).filter(|x| !x.is_empty()).map(|x| x.parse::<f64>().map_err(|_| format!("'{x}' is not a number of seconds"))).collect::<Result<_, _>>()?; Ok(()) })}
                    </Show>
                    <Show when=move || arrival() != "trace">
                        {number("Requests", "serving-requests", "Requests simulated", "200",
                            |s| s.deployment.serving.requests.to_string(),
                            |s, t| { s.deployment.serving.requests = t.parse().map_err(|_| "a whole number of requests".to_string())?; Ok(()) })}
                    </Show>
                    {select("Lengths", "serving-lengths", "Input and output lengths around the workload's means: fixed, uniform (mean x [1 - spread, 1 + spread]) or lognormal (coefficient of variation = spread).",
                        pair(&["fixed", "uniform", "lognormal"]), |s| s.deployment.serving.length_distribution.clone(), |s, v| s.deployment.serving.length_distribution = v)}
                    {number("Length spread", "serving-spread", "uniform: [0, 1); lognormal: coefficient of variation [0, 4]", "0.5",
                        |s| s.deployment.serving.length_spread.to_string(),
                        |s, t| { s.deployment.serving.length_spread = t.parse().map_err(|_| "a number".to_string())?; Ok(()) })}
                    {number("Max batched tokens", "serving-max-tokens", "max-num-batched-tokens values the tune considers, comma-separated (empty: 8192, 2048, 4096, 16384)", "8192, 2048, 4096, 16384",
                        |s| list_text(&s.deployment.serving.max_num_batched_tokens),
                        |s, t| { s.deployment.serving.max_num_batched_tokens = int_list(t)?; Ok(()) })}
                    {select("Chunked prefill", "serving-chunked", "Chunked-prefill settings the tune considers",
                        vec![(String::new(), "on and off (tuned)".into()), ("on".into(), "on".into()), ("off".into(), "off".into())],
                        |s| if s.deployment.serving.chunked_prefill.len() == 1 { s.deployment.serving.chunked_prefill[0].clone() } else { String::new() },
                        |s, v| s.deployment.serving.chunked_prefill = if v.is_empty() { Vec::new() } else { vec![v] })}
                    {number("KV block size", "serving-block", "KV-cache page size in tokens (vLLM-Ascend and MindIE use 128 on Ascend)", "128",
                        |s| s.deployment.serving.block_size.to_string(),
                        |s, t| { s.deployment.serving.block_size = t.parse().map_err(|_| "a whole number of tokens".to_string())?; Ok(()) })}
                </Show>
                <crate::components::serving_features_panel::ServingFeaturesPanel/>
                {number("Max num seqs", "serving-max-seqs", "max-num-seqs (the batch) values the tune considers, comma-separated (empty: 1 to 256 in powers of two); the workload's batch is always tried first", "1, 2, 4, ..., 256",
                    |s| list_text(&s.deployment.batches),
                    |s, t| { s.deployment.batches = int_list(t)?; Ok(()) })}
            </details>
        </Show>
    }
}

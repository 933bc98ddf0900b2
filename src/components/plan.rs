//! The Plan view: the fewest chips (or the lowest cost per million tokens) that serve a load
//! within its SLOs, from the hardware on offer (`analyses::plan`, answered by the engine
//! worker like the other engine questions), with the runner-ups, each plan's prediction band and
//! the launch of each node. "Open" makes the plan's replica the scenario, to tune or export it.

use crate::state::Ctx;
use crate::worker::ask::{ask, Answer, Question};
use leptos::prelude::*;
use tunelab_scenario::scenario::ModelRef;
use tunelab_scenario::analyses::plan::{Offer, Plan, PlanOption, PlanRequest};
use tunelab_scenario::stages::scale::launch::Launch;

/// The Plan panel.
#[component]
pub fn PlanPanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let model = move || ctx.scenario.with(|s| match &s.model {
        ModelRef::Id(id) if !id.trim_start().starts_with('{') => id.clone(),
        _ => String::new(),
    });
    let rate = RwSignal::new(20.0f64);
    let input = RwSignal::new(2048.0f64);
    let output = RwSignal::new(512.0f64);
    let ttft = RwSignal::new(2000.0f64);
    let tpot = RwSignal::new(50.0f64);
    let device = RwSignal::new("910C".to_string());
    let nodes = RwSignal::new(4.0f64);
    let price = RwSignal::new(0.0f64);
    let goal = RwSignal::new("chips".to_string());
    let busy = RwSignal::new(false);
    let answer = RwSignal::new(None::<(Plan, Option<Launch>)>);
    let run = move |_| {
        let m = model();
        if m.is_empty() {
            return ctx.fail("Plan: pick a bundled model in the scenario panel first.");
        }
        let p = price.get_untracked();
        let req = PlanRequest {
            model: m,
            rate: rate.get_untracked(),
            input_len: input.get_untracked() as u64,
            output_len: output.get_untracked() as u64,
            dataset: String::new(),
            length_distribution: "fixed".into(),
            length_spread: 0.5,
            max_ttft_ms: ttft.get_untracked(),
            max_tpot_ms: tpot.get_untracked(),
            hardware: vec![Offer { device: device.get_untracked(), nodes: nodes.get_untracked() as u64, price_per_chip_hour: (p > 0.0).then_some(p) }],
            goal: goal.get_untracked(),
            engine: "vllm-ascend".into(),
            requests: 200,
            budget: 40,
            seed: 0,
        };
        if let Err(e) = req.validate() {
            return ctx.fail(e);
        }
        busy.set(true);
        answer.set(None);
        ask(Question::Plan { request: Box::new(req) }, move |r| {
            busy.set(false);
            match r {
                Ok(Answer::Plan { plan, launch }) => answer.set(Some((*plan, launch))),
                Ok(_) => {}
                Err(e) => ctx.fail(format!("Plan: {e}")),
            }
        });
    };
    let option = move |o: PlanOption, testid: &'static str| {
        let s = o.scenario.clone();
        view! {
            <li data-testid=testid>
                {o.misses.clone().map(|m| view! { <span class="warn" data-testid="plan-near-miss">{format!("near-miss, misses {m}: ")}</span> })}
                <strong>{format!("{} chips of {}", o.chips, o.device)}</strong>
                {format!(" ({} replica(s) x {} node(s)): {}; p90 TTFT {:.0} ms, p90 TPOT {:.1} ms, {:.1} tokens/s/chip{}", o.replicas, o.nodes_per_replica, o.layout, o.ttft_ms, o.tpot_ms, o.tokens_per_s_per_chip, o.cost_per_mtok.map(|c| format!(", {c:.3} per million tokens")).unwrap_or_default())}
                <div class="muted small">{if o.prediction_band.is_empty() { "no measured band for this kind of row".to_string() } else { o.prediction_band.clone() }}</div>
                <button on:click=move |_| { let s = s.clone(); ctx.edit(move |x| *x = s); }>"Open"</button>
            </li>
        }
    };
    view! {
        <details class="panel plan" data-testid="plan-panel">
            <summary><h2>"Plan: the fewest chips for a load"</h2></summary>
            <p class="hint">"The scenario's model served under Poisson arrivals within p90 TTFT and TPOT limits: each candidate size is searched with the deployment stage (co-located or xPyD, TP / DP / EP, precision, MTP, graph or eager), cheapest first."</p>
            {num_input("Rate (req/s)", "plan-rate", rate)}
            {num_input("Input tokens", "plan-input", input)}
            {num_input("Output tokens", "plan-output", output)}
            {num_input("p90 TTFT (ms)", "plan-ttft", ttft)}
            {num_input("p90 TPOT (ms)", "plan-tpot", tpot)}
            <label class="field">"Nodes of "
                <select data-testid="plan-device" prop:value=move || device.get() on:change=move |ev| device.set(event_target_value(&ev))>
                    <option value="910C">"Atlas 800 A3 (910C)"</option>
                    <option value="910B3">"Atlas 800 A2 (910B3)"</option>
                    <option value="910B2">"Atlas 800 A2 (910B2)"</option>
                    <option value="910B4">"Atlas 800 A2 (910B4)"</option>
                </select>
            </label>
            {num_input("Nodes on offer", "plan-nodes", nodes)}
            {num_input("Price per chip-hour (0: none)", "plan-price", price)}
            <label class="field">"Goal "
                <select data-testid="plan-goal" prop:value=move || goal.get() on:change=move |ev| goal.set(event_target_value(&ev))>
                    <option value="chips">"fewest chips"</option>
                    <option value="cost">"lowest cost per million tokens"</option>
                </select>
            </label>
            <button data-testid="plan-run" disabled=move || busy.get() on:click=run>{move || if busy.get() { "Planning..." } else { "Plan" }}</button>
            {move || answer.get().map(|(p, launch)| view! {
                <div data-testid="plan-result">
                    {match p.best.clone() {
                        Some(b) => view! { <ul class="plan-best">{option(b, "plan-best")}</ul> }.into_any(),
                        None => view! { <p data-testid="plan-none">"No plan within the hardware on offer."</p> }.into_any(),
                    }}
                    <h3>"Runner-ups"</h3>
                    <ul>{p.runner_ups.clone().into_iter().map(|o| option(o, "plan-runner-up")).collect_view()}</ul>
                    {launch.map(|l| view! { <h3>"Launch, node by node (each replica)"</h3><pre data-testid="plan-launch">{l.to_text()}</pre> })}
                    <details><summary>{format!("Sizes tried ({} evaluations)", p.evaluations)}</summary>
                        <ul>{p.tried.iter().chain(p.notes.iter()).map(|t| view! { <li class="small">{t.clone()}</li> }).collect_view()}</ul>
                    </details>
                </div>
            })}
        </details>
    }
}

/// A labelled number input bound to a signal; a value that is not a number >= 0 is an error.
fn num_input(label: &'static str, id: &'static str, v: RwSignal<f64>) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    view! {
        <label class="field">{label}" "
            <input type="number" data-testid=id prop:value=move || v.get().to_string() on:change=move |ev| {
                match event_target_value(&ev).trim().parse::<f64>() {
                    Ok(x) if x.is_finite() && x >= 0.0 => v.set(x),
                    _ => ctx.fail(format!("Plan: {label} must be a number of at least 0")),
                }
            }/>
        </label>
    }
}

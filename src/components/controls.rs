//! Strategies (side by side, each with its options), budget, seed, the run buttons, the status,
//! progress and best value (the stable test hooks live here, always visible).

use crate::browser;
use crate::charts::numbers::readable;
use crate::charts::ProgressBar;
use crate::state::{Ctx, Status};
use leptos::prelude::*;
use serde_json::Value as Json;
use tunelab_scenario::scenario::StrategySpec;
use tunelab_search::strategies::STRATEGIES;

/// The tuning controls.
#[component]
pub fn Controls() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let running = move || ctx.status.get() == Status::Running;
    let chosen = move || ctx.scenario.with(|s| s.strategies().into_iter().map(|x| x.name.clone()).collect::<Vec<_>>());
    let boxes = STRATEGIES
        .iter()
        .map(|&(name, about)| {
            let toggle = move |_| {
                ctx.edit(|s| {
                    let mut all: Vec<StrategySpec> = s.strategies().into_iter().cloned().collect();
                    if let Some(i) = all.iter().position(|x| x.name == name) {
                        if all.len() > 1 {
                            all.remove(i);
                        }
                    } else {
                        all.push(StrategySpec { name: name.into(), options: Json::Object(Default::default()) });
                    }
                    s.strategy = all.remove(0);
                    s.compare = all;
                });
            };
            view! {
                <label class="strategy" title=about>
                    <input type="checkbox" prop:checked=move || chosen().iter().any(|n| n == name) on:change=toggle data-testid=format!("strategy-{name}")/>
                    {name}
                </label>
            }
        })
        .collect_view();
    let options_text = move || ctx.scenario.with(|s| serde_json::to_string(&s.strategy.options).unwrap_or_default());
    let set_options = move |ev| match serde_json::from_str::<Json>(&event_target_value(&ev)) {
        Ok(v) if v.is_object() => {
            ctx.edit(|s| s.strategy.options = v);
        }
        _ => ctx.fail("Strategy options must be a JSON object, e.g. {\"population\": 16}."),
    };
    let set_budget = move |ev| match event_target_value(&ev).trim().parse::<usize>() {
        Ok(b) => {
            ctx.edit(|s| s.budget = b);
        }
        _ => ctx.fail("The budget must be a whole number of evaluations."),
    };
    let set_seed = move |ev| match event_target_value(&ev).trim().parse::<u64>() {
        Ok(v) => {
            ctx.edit(|s| s.seed = v);
        }
        _ => ctx.fail("The seed must be a non-negative whole number."),
    };
    let copy = move |_| {
        ctx.write_url();
        if let Err(e) = browser::copy_text(&browser::href()) {
            ctx.fail(e);
        }
    };
    let evals = Signal::derive(move || ctx.view.with(|v| v.as_ref().map(|v| v.evaluations).unwrap_or(0)));
    let budget = Signal::derive(move || ctx.view.with(|v| v.as_ref().map(|v| v.budget).unwrap_or(0)));
    view! {
        <section class="panel controls">
            <h2>"Tune"</h2>
            <fieldset>
                <legend>"Strategies (several run side by side)"</legend>
                {boxes}
            </fieldset>
            <label class="field">{move || format!("Options of {} ", ctx.scenario.with(|s| s.strategy.name.clone()))}
                <input type="text" class="wide" data-testid="strategy-options" prop:value=options_text on:change=set_options/>
            </label>
            <div class="row">
                <label>"Budget "
                    <input type="number" min="1" data-testid="budget" prop:value=move || ctx.scenario.with(|s| s.budget.to_string()) on:change=set_budget/>
                </label>
                <label>"Seed "
                    <input type="number" min="0" data-testid="seed" prop:value=move || ctx.scenario.with(|s| s.seed.to_string()) on:change=set_seed/>
                </label>
            </div>
            <div class="row buttons">
                <button data-testid="run" class="primary" disabled=running on:click=move |_| ctx.run()>"Run"</button>
                <button data-testid="pause" disabled=move || !running() on:click=move |_| ctx.pause()>"Pause"</button>
                <button data-testid="step" disabled=running on:click=move |_| ctx.step()>"Step"</button>
                <button data-testid="reset" on:click=move |_| ctx.reset()>"Reset"</button>
                <button data-testid="copy-link" on:click=copy>"Copy link"</button>
            </div>
            <p class="muted small step-hint">"Step: one evaluation for every ticked strategy (population methods too: a generation is several Steps)."</p>
            <div class="row">
                <span>"Status: " <strong data-testid="status">{move || ctx.status.get().as_str()}</strong></span>
            </div>
            <ProgressBar done=evals budget=budget label="Tuning progress".to_string()/>
            <p class="best-line">
                {move || ctx.view.with(|v| v.as_ref().map(|v| format!("Best {} ({}): ", v.metric, v.unit)).unwrap_or_else(|| "Best: ".into()))}
                // Shown rounded; data-value keeps the exact number `tunelab run --json` prints.
                <strong data-testid="best" data-value=move || ctx.view.with(|v| v.as_ref().and_then(|v| v.best.clone()).unwrap_or_default())>
                    {move || ctx.view.with(|v| v.as_ref().and_then(|v| v.best.as_deref().map(readable)).unwrap_or_default())}
                </strong>
                <span class="muted">{move || ctx.view.with(|v| v.as_ref().and_then(|v| v.best_strategy.clone()).map(|s| format!(" by {s}")).unwrap_or_default())}</span>
            </p>
        </section>
    }
}

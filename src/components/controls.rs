//! Strategies (side by side, each with its options), budget and seed. The run buttons, status,
//! progress and best value are in the toolbar above the charts (`toolbar`).

use crate::state::Ctx;
use leptos::prelude::*;
use serde_json::Value as Json;
use tunelab_scenario::scenario::{StrategySpec, MAX_STRATEGIES};
use tunelab_search::strategies::STRATEGIES;

/// The tuning controls.
#[component]
pub fn Controls() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
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
            // A box that cannot change is disabled, with the reason on hover: the only strategy
            // left cannot be unticked, and no ninth can join eight (MAX_STRATEGIES).
            let ticked = move || chosen().iter().any(|n| n == name);
            let locked = move || {
                let n = chosen().len();
                if ticked() { n <= 1 } else { n >= MAX_STRATEGIES }
            };
            let why = move || {
                if !locked() {
                    about.to_string()
                } else if ticked() {
                    format!("{about}. The only strategy ticked: tick another before unticking it.")
                } else {
                    format!("{about}. At most {MAX_STRATEGIES} strategies run side by side: untick one first.")
                }
            };
            view! {
                <label class="strategy" title=why class:locked=locked>
                    <input type="checkbox" prop:checked=ticked disabled=locked on:change=toggle data-testid=format!("strategy-{name}")/>
                    {name}
                </label>
            }
        })
        .collect_view();
    // A value that cannot be taken is refused in place: the error under the field says why and
    // the field shows the value still in force again (never a number the run does not use).
    let restore = |ev: &leptos::ev::Event, v: String| {
        let i: web_sys::HtmlInputElement = event_target(ev);
        i.set_value(&v);
    };
    let set_budget = move |ev: leptos::ev::Event| {
        let text = event_target_value(&ev);
        match text.trim().parse::<usize>() {
            Ok(b) if b >= 1 && ctx.edit(|s| s.budget = b) => {}
            Ok(b) if b >= 1 => restore(&ev, ctx.scenario.with_untracked(|s| s.budget.to_string())),
            _ => {
                let kept = ctx.scenario.with_untracked(|s| s.budget);
                restore(&ev, kept.to_string());
                ctx.fail(format!("Budget: '{}' is not a budget; it must be a whole number of evaluations, at least 1. The budget stays {kept}.", text.trim()));
            }
        }
    };
    let set_seed = move |ev: leptos::ev::Event| {
        let text = event_target_value(&ev);
        match text.trim().parse::<u64>() {
            Ok(v) if ctx.edit(|s| s.seed = v) => {}
            Ok(_) => restore(&ev, ctx.scenario.with_untracked(|s| s.seed.to_string())),
            _ => {
                let kept = ctx.scenario.with_untracked(|s| s.seed);
                restore(&ev, kept.to_string());
                ctx.fail(format!("Seed: '{}' is not a seed; it must be a non-negative whole number. The seed stays {kept}.", text.trim()));
            }
        }
    };
    view! {
        <section class="panel controls">
            <h2>"Tune"</h2>
            <fieldset>
                <legend>{format!("Strategies (up to {MAX_STRATEGIES} run side by side)")}</legend>
                {boxes}
            </fieldset>
            <crate::components::strategy_options::StrategyOptions/>
            <div class="row">
                <label>"Budget "
                    <input type="number" min="1" data-testid="budget" prop:value=move || ctx.scenario.with(|s| s.budget.to_string()) on:change=set_budget/>
                </label>
                <label>"Seed "
                    <input type="number" min="0" data-testid="seed" prop:value=move || ctx.scenario.with(|s| s.seed.to_string()) on:change=set_seed/>
                </label>
            </div>
        </section>
    }
}

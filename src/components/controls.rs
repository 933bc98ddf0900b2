//! Strategy choice, budget, seed and the run buttons.

use crate::browser;
use crate::components::app::{Ctx, Status};
use leptos::prelude::*;
use tunelab_search::strategies::STRATEGIES;

/// The tuning controls.
#[component]
pub fn Controls() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let busy = move || matches!(ctx.status.get(), Status::Running | Status::Loading);
    let boxes = STRATEGIES
        .iter()
        .map(|&(name, about)| {
            let checked = move || ctx.settings.with(|s| s.strategies.iter().any(|n| n == name));
            let toggle = move |_| {
                ctx.update_settings(|s| {
                    if let Some(i) = s.strategies.iter().position(|n| n == name) {
                        if s.strategies.len() > 1 {
                            s.strategies.remove(i);
                        }
                    } else {
                        s.strategies.push(name.to_string());
                    }
                })
            };
            view! {
                <label class="strategy" title=about>
                    <input type="checkbox" prop:checked=checked on:change=toggle data-testid=format!("strategy-{name}")/>
                    {name}
                </label>
            }
        })
        .collect_view();
    let set_budget = move |ev| match event_target_value(&ev).trim().parse::<usize>() {
        Ok(b) if (1..=crate::url_state::MAX_BUDGET).contains(&b) => ctx.update_settings(|s| s.budget = b),
        _ => ctx.fail("The budget must be a whole number of evaluations, at least 1."),
    };
    let set_seed = move |ev| match event_target_value(&ev).trim().parse::<u64>() {
        Ok(v) => ctx.update_settings(|s| s.seed = v),
        _ => ctx.fail("The seed must be a non-negative whole number."),
    };
    let copy = move |_| {
        ctx.write_url();
        if let Err(e) = browser::copy_text(&browser::href()) {
            ctx.fail(e);
        }
    };
    view! {
        <section class="panel controls">
            <h2>"Tune"</h2>
            <p class="hint">
                "Replay real measurements: a convolution kernel brute-forced on an RTX 2080 Ti (Kernel Tuner cache). "
                "Each strategy searches the same space; the budget counts distinct configurations measured."
            </p>
            <fieldset>
                <legend>"Strategies (side by side)"</legend>
                {boxes}
            </fieldset>
            <div class="row">
                <label>"Budget "
                    <input type="number" min="1" data-testid="budget" prop:value=move || ctx.settings.with(|s| s.budget.to_string()) on:change=set_budget/>
                </label>
                <label>"Seed "
                    <input type="number" min="0" data-testid="seed" prop:value=move || ctx.settings.with(|s| s.seed.to_string()) on:change=set_seed/>
                </label>
            </div>
            <div class="row buttons">
                <button data-testid="run" class="primary" disabled=busy on:click=move |_| ctx.run()>"Run"</button>
                <button data-testid="pause" disabled=move || ctx.status.get() != Status::Running on:click=move |_| ctx.pause()>"Pause"</button>
                <button data-testid="step" disabled=busy on:click=move |_| ctx.step()>"Step"</button>
                <button data-testid="reset" on:click=move |_| ctx.reset()>"Reset"</button>
                <button data-testid="copy-link" on:click=copy>"Copy link"</button>
            </div>
        </section>
    }
}

//! Form fields bound to one value of the scenario, shared by the panels that edit it: a select
//! of fixed choices, and a text field whose setter parses the text or names what is wrong (the
//! error goes to the page's banner; the scenario keeps its last good value).

use crate::state::Ctx;
use leptos::prelude::*;
use tunelab_scenario::Scenario;

/// A select bound to one string field of the scenario.
pub fn select(ctx: Ctx, label: &'static str, id: &'static str, title: &'static str, options: Vec<(String, String)>, get: fn(&Scenario) -> String, set: fn(&mut Scenario, String)) -> impl IntoView {
    view! {
        <label class="field" title=title>{label}" "
            <select data-testid=id prop:value=move || ctx.scenario.with(get) on:change=move |ev| {
                let v = event_target_value(&ev);
                ctx.edit(|s| set(s, v));
            }>
                {options.into_iter().map(|(v, l)| view! { <option value=v>{l}</option> }).collect_view()}
            </select>
        </label>
    }
}

/// A number field; `set` turns the text into the edit or names what is wrong.
pub fn number(ctx: Ctx, label: &'static str, id: &'static str, title: &'static str, placeholder: &'static str, get: fn(&Scenario) -> String, set: fn(&mut Scenario, &str) -> Result<(), String>) -> impl IntoView {
    view! {
        <label class="field" title=title>{label}" "
            <input type="text" inputmode="decimal" data-testid=id placeholder=placeholder prop:value=move || ctx.scenario.with(get) on:change=move |ev| {
                let t = event_target_value(&ev);
                let mut s = ctx.scenario.get_untracked();
                match set(&mut s, t.trim()) {
                    Err(e) => ctx.fail(format!("{label}: {e}")),
                    Ok(()) => {
                        ctx.replace(s);
                    }
                }
            }/>
        </label>
    }
}

//! The banner of keys an opened scenario carries that Tunelab does not read (issue 44): a
//! misspelled `deployment.serving.graph_mod` changed a prediction without a word. The scenario
//! is opened with everything else it says (nothing the user had is lost); the banner lists each
//! key with its path and the nearest known key, until dismissed (`data-testid="input-warnings"`).

use crate::state::Ctx;
use leptos::prelude::*;

/// The lines the banner shows for a read's report (empty: no banner).
pub fn lines(report: &tunelab_scenario::spec::strict::Report) -> Vec<String> {
    report.lines()
}

/// The banner; its text is plain text, never markup.
#[component]
pub fn InputWarnings() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    view! {
        <Show when=move || ctx.input_warnings.with(|w| !w.is_empty())>
            <div class="error warning" role="status" data-testid="input-warnings">
                <span>"This scenario has keys Tunelab does not read; they were ignored (everything else is opened as given):"</span>
                <ul>
                    {move || ctx.input_warnings.get().into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}
                </ul>
                <button class="dismiss" on:click=move |_| ctx.input_warnings.set(Vec::new())>"Dismiss"</button>
            </div>
        </Show>
    }
}

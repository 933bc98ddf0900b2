//! The root component: header, error banner, the scenario panel and the tabbed views.

use crate::components::{controls::Controls, explore::ExplorePanel, knowledge::KnowledgePanel, report::ReportPanel, scenario_panel::ScenarioPanel, tune::TunePanel};
use crate::state::{Ctx, Tab};
use leptos::prelude::*;

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let ctx = Ctx::new();
    provide_context(ctx);
    crate::inline_error::install();
    crate::components::landscape::provide(ctx);
    if ctx.error.get_untracked().is_none() {
        // The address always carries the scenario shown, so it can be shared as it is.
        ctx.write_url();
    }
    // Workers load while the page settles, so the first Run or Step does not wait for them.
    set_timeout(move || crate::worker::driver::prepare(ctx), std::time::Duration::from_millis(50));
    let h1 = window_event_listener(leptos::ev::hashchange, move |_| ctx.apply_link());
    let h2 = window_event_listener(leptos::ev::popstate, move |_| ctx.apply_link());
    on_cleanup(move || {
        h1.remove();
        h2.remove();
    });
    let tab = move |t: Tab, label: &'static str, id: &'static str| {
        view! {
            <button role="tab" data-testid=id aria-selected=move || (ctx.tab.get() == t).to_string() on:click=move |_| ctx.show_tab(t)>{label}</button>
        }
    };
    view! {
        <header class="top">
            <h1>"Tunelab"</h1>
            <p class="scenario-title" data-testid="scenario-title">{move || ctx.scenario.with(tunelab_scenario::context::title)}</p>
            <p class="tagline" data-testid="tagline">{move || if ctx.scenario.with(|s| s.stage == tunelab_scenario::Stage::Landscape) {
                "Auto-tuning simulator for AI models on Ascend NPUs. Replay: the strategies race on a landscape known whole, a Kernel Tuner cache's recorded times or a 2-D function, so every value shown is the recorded one."
            } else {
                "Auto-tuning simulator for AI models on Ascend NPUs. Everything runs in this page (Rust compiled to WebAssembly); every number is a model estimate, not a measurement."
            }}</p>
        </header>
        <ErrorBanner/>
        <crate::components::input_warnings::InputWarnings/>
        <crate::components::toolbar::Toolbar/>
        <main class:teach=move || crate::components::tune::teach_layout(&ctx) && ctx.tab.get() == Tab::Tune>
            <div class="side">
                <ScenarioPanel/>
                <crate::components::landscape::LandscapePanel/>
                <Controls/>
                <crate::components::calibrate::CalibratePanel/>
                <crate::components::plan::PlanPanel/>
            </div>
            <div class="views">
                <nav class="tabs" role="tablist">
                    {tab(Tab::Tune, "Tune", "tab-tune")}
                    {tab(Tab::Explore, "Explore", "tab-explore")}
                    {tab(Tab::Report, "Diagnosis & report", "tab-report")}
                    {tab(Tab::Knowledge, "Knowledge base", "tab-knowledge")}
                </nav>
                <TunePanel/>
                <Show when=move || ctx.tab.get() == Tab::Explore><ExplorePanel/></Show>
                <Show when=move || ctx.tab.get() == Tab::Report><ReportPanel/></Show>
                <Show when=move || ctx.tab.get() == Tab::Knowledge><KnowledgePanel/></Show>
            </div>
        </main>
        <footer>
            "Tunelab simulates Ascend NPUs with an analytic device model built from published chip facts. "
            "Use it to compare choices and understand why; confirm on hardware before you rely on a number."
        </footer>
    }
}

/// The error banner (`data-testid="error"`); its text is plain text, never markup.
#[component]
fn ErrorBanner() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    view! {
        <Show when=move || ctx.error.with(|e| e.is_some())>
            <div class="error" role="alert" data-testid="error">
                <span>{move || ctx.error.get().unwrap_or_default()}</span>
                <button class="dismiss" on:click=move |_| ctx.error.set(None)>"Dismiss"</button>
            </div>
        </Show>
    }
}

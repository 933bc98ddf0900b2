//! The run's status, progress, best result and one card per strategy.

use crate::components::app::Ctx;
use leptos::prelude::*;

/// Status, progress bar, best value and per-strategy results.
#[component]
pub fn LanesView() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let evals = move || ctx.progress.with(|p| p.iter().map(|l| l.evaluations).sum::<usize>());
    let budget = move || ctx.progress.with(|p| p.iter().map(|l| l.budget).sum::<usize>()).max(1);
    let best = move || ctx.progress.with(|p| p.first().and_then(|l| l.best.clone())).unwrap_or_default();
    let metric = move || ctx.progress.with(|p| p.first().map(|l| l.metric.clone())).unwrap_or_default();
    view! {
        <section class="panel results">
            <h2>"Run"</h2>
            <div class="row status-row">
                <span>"Status: " <strong data-testid="status">{move || ctx.status.get().as_str()}</strong></span>
                <progress data-testid="progress" max=budget value=evals></progress>
                <span class="muted">{move || format!("{} / {} evaluations", evals(), budget())}</span>
            </div>
            <div class="row">
                <span>"Best " {metric} ": " <strong data-testid="best">{best}</strong></span>
            </div>
            <div class="lanes">
                {move || ctx.progress.get().into_iter().map(|p| view! { <LaneCard p/> }).collect_view()}
            </div>
        </section>
    }
}

#[component]
fn LaneCard(p: crate::tuning::Progress) -> impl IntoView {
    let snapshot = p
        .snapshot
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "best" | "budget" | "evaluations"))
        .map(|(k, v)| view! { <li><code>{k.clone()}</code>" = "{v.clone()}</li> })
        .collect_view();
    view! {
        <article class="lane" data-testid=format!("lane-{}", p.strategy)>
            <h3>{p.strategy.clone()}</h3>
            <p>{format!("{} / {} evaluations, {} failed", p.evaluations, p.budget, p.failed)}</p>
            <p>"Best: " <strong>{p.best.clone().unwrap_or_else(|| "none yet".into())}</strong></p>
            <p class="muted">{p.best_config.clone().unwrap_or_default()}</p>
            <p class="muted">{p.stop_reason.clone().map(|r| format!("stopped: {r}")).unwrap_or_default()}</p>
            <ul class="snapshot">{snapshot}</ul>
        </article>
    }
}

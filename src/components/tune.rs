//! The live tuning view: convergence per strategy, trials over the space, the Pareto front, one
//! card per strategy with its teaching view, and the generation log.

use crate::charts::{AnnealingView, ConvergenceChart, GaView, GpView, ParetoChart, RlView, ScatterChart};
use crate::components::explore::PointView;
use crate::session::LaneView;
use crate::state::{Ctx, Status, Tab};
use leptos::prelude::*;
use serde_json::Value as Json;

/// Live charts and per-strategy cards.
#[component]
pub fn TunePanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let has_view = move || ctx.view.with(|v| v.is_some());
    // Memos: a chart whose data did not change between redraws is not redrawn.
    let conv = Memo::new(move |_| ctx.view.with(|v| v.as_ref().map(|v| v.convergence.clone()).unwrap_or_default()));
    let scatter = Memo::new(move |_| ctx.view.with(|v| v.as_ref().map(|v| v.scatter.clone()).unwrap_or_default()));
    // The Pareto front over two objectives the user picks (primary and second by default).
    let axes = RwSignal::new((0usize, 1usize));
    let pareto = Memo::new(move |_| ctx.view.with(|v| v.as_ref().and_then(|v| v.pareto(axes.get().0, axes.get().1)).unwrap_or_default()));
    let objectives = move || ctx.view.with(|v| v.as_ref().map(|v| v.objectives.iter().map(|o| o.0.clone()).collect::<Vec<_>>()).unwrap_or_default());
    let has_pareto = move || objectives().len() >= 2;
    let pick = move |which: usize| {
        let current = move || if which == 0 { axes.get().0 } else { axes.get().1 };
        let choose = move |ev: leptos::ev::Event| {
            if let Ok(i) = event_target_value(&ev).parse::<usize>() {
                axes.update(|a| if which == 0 { a.0 = i } else { a.1 = i });
            }
        };
        view! {
            <select data-testid=format!("pareto-{which}") on:change=choose>
                {move || objectives().into_iter().enumerate().map(|(i, n)| view! { <option value=i.to_string() selected=move || current() == i>{n}</option> }).collect_view()}
            </select>
        }
    };
    let lane_count = move || ctx.view.with(|v| v.as_ref().map(|v| v.lanes.len()).unwrap_or(0));
    // The best configuration's breakdown and roofline place: computed when the run stops or
    // pauses (a full simulation of the step, too costly to redo on every live redraw).
    let best_detail = RwSignal::new(None);
    Effect::new(move |_| {
        let stopped = matches!(ctx.status.get(), Status::Done | Status::Paused);
        let best = ctx.view.with(|v| v.as_ref().and_then(|v| v.best_config.clone()));
        match (stopped, best) {
            // In a task of its own, after the run's last redraw.
            (true, Some(cfg)) => set_timeout(
                move || best_detail.set(ctx.scenario.with_untracked(|s| tunelab_scenario::explore::point_detail(s, &cfg)).ok()),
                std::time::Duration::from_millis(0),
            ),
            _ => best_detail.set(None),
        }
    });
    view! {
        <section class="panel tune" style:display=move || if ctx.tab.get() == Tab::Tune { "block" } else { "none" }>
            <Show when=has_view fallback=|| view! {
                <p class="hint">"Choose a scenario and strategies on the left, then press Run (or Step to go one evaluation at a time). "
                "The charts fill in live; several strategies run side by side on the same scenario."</p>
            }>
                <div class="charts">
                    <ConvergenceChart data=conv/>
                    <ScatterChart data=scatter/>
                    <Show when=has_pareto>
                        <div>
                            <ParetoChart data=pareto/>
                            <p class="row small">"Pareto front of " {pick(0)} " against " {pick(1)}</p>
                        </div>
                    </Show>
                </div>
                <Show when=move || best_detail.with(|d| d.is_some())>
                    <PointView detail=best_detail title="Best configuration: engine breakdown, per-operator time, roofline"/>
                </Show>
                <div class="lanes">
                    {move || (0..lane_count()).map(|i| view! { <LaneCard i/> }).collect_view()}
                </div>
                <details class="log">
                    <summary>"Generation log"</summary>
                    <pre data-testid="log">{move || ctx.view.with(|v| v.as_ref().map(|v| v.log.join("\n")).unwrap_or_default())}</pre>
                </details>
                <ul class="notes muted">
                    {move || ctx.view.with(|v| v.as_ref().map(|v| v.notes.clone()).unwrap_or_default()).into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}
                </ul>
            </Show>
        </section>
    }
}

/// One strategy: its numbers and, for strategies with one, a teaching view.
#[component]
fn LaneCard(i: usize) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let lane = Memo::new(move |_| ctx.view.with(|v| v.as_ref().and_then(|v| v.lanes.get(i).cloned()).unwrap_or_default()));
    let name = lane.get_untracked().strategy;
    let snaps = Signal::derive(move || lane.with(|l| l.snapshots.clone()));
    let snap = Signal::derive(move || lane.with(|l| l.snapshot.clone()));
    let teaching = match name.as_str() {
        "genetic" => view! { <GaView snapshots=snaps/> }.into_any(),
        "annealing" => view! { <AnnealingView snapshots=snaps/> }.into_any(),
        "bayes" => view! { <GpView snapshot=snap/> }.into_any(),
        "rl" => view! { <RlView snapshot=snap/> }.into_any(),
        _ => view! { <p class="muted">{explain(&name)}</p> }.into_any(),
    };
    let line = move |f: fn(&LaneView) -> String| move || lane.with(f);
    view! {
        <article class="lane" data-testid=format!("lane-{name}")>
            <h3>{name.clone()}</h3>
            <p>{line(|l| format!("{} / {} evaluations · {} infeasible · {} failed", l.evaluations, l.budget, l.infeasible, l.failed))}</p>
            <p>"Best: " <strong>{line(|l| l.best.clone().unwrap_or_else(|| "none yet".into()))}</strong></p>
            <p class="muted small">{line(|l| l.best_config.clone())}</p>
            <p class="muted small">{line(|l| l.stop_reason.clone().map(|r| format!("stopped: {r}")).unwrap_or_default())}</p>
            {teaching}
            <details><summary>"State"</summary><pre class="small">{line(|l| snapshot_text(&l.snapshot))}</pre></details>
        </article>
    }
}

fn snapshot_text(v: &Json) -> String {
    match v {
        Json::Object(m) => m.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>().join("\n"),
        other => other.to_string(),
    }
}

/// One-line explanations of the strategies without a dedicated teaching chart.
fn explain(name: &str) -> &'static str {
    match name {
        "random" => "Random search draws configurations uniformly, never repeating one: the baseline every other strategy must beat.",
        "grid" => "Grid search walks the space in order: exhaustive on small spaces, slow to reach good corners of large ones.",
        "tpe" => "TPE splits the trials into good and bad, models each group's density per parameter, and proposes where good is likely and bad is not.",
        "nsga2" => "NSGA-II keeps a population sorted into Pareto fronts and prefers spread-out points, to map the trade-off between objectives.",
        "local" => "Focused local search moves to the best neighbouring configuration of the incumbent, restarting when it is stuck.",
        "auto" => "Auto picks a strategy from the size and shape of the space and the budget.",
        _ => "",
    }
}

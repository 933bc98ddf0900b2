//! The live tuning view: the space and convergence charts, one card per strategy with its
//! teaching view and what to watch for, the Pareto front and the generation log.
//!
//! Two layouts: the full one (everything, stacked), and the teaching layout (`view.layout =
//! "teach"` in the scenario, so a link keeps it): space, every strategy's state and the controls
//! on one screen, with a speed control, as in TensorFlow Playground.

use crate::charts::{AnnealingView, ConvergenceChart, GaView, GpView, ParetoChart, RlView, ScatterChart};
use crate::charts::numbers::{fmt4, readable, readable_config};
use crate::components::explore::PointView;
use crate::session::LaneView;
use crate::state::{Ctx, Status, Tab};
use leptos::prelude::*;
use serde_json::Value as Json;

/// Speeds offered, in evaluations per second per strategy (0: as fast as the machine goes).
pub const SPEEDS: [u32; 7] = [1, 2, 5, 10, 25, 100, 0];

/// True when the scenario asks for the teaching layout.
pub fn teach_layout(ctx: &Ctx) -> bool {
    ctx.scenario.with(|s| s.view.get("layout").and_then(Json::as_str) == Some("teach"))
}

/// The run speed the scenario asks for (evaluations per second per strategy; 0: full speed).
pub fn speed_of(view: &Json) -> u32 {
    view.get("speed").and_then(Json::as_u64).map(|v| v.min(10_000) as u32).unwrap_or(0)
}

/// Sets a key of the scenario's view state (kept in the link; the run is kept).
fn set_view_key(ctx: &Ctx, key: &str, value: Json) {
    ctx.scenario.update(|s| {
        if !s.view.is_object() {
            s.view = Json::Object(Default::default());
        }
        if let Some(o) = s.view.as_object_mut() {
            if value.is_null() {
                o.remove(key);
            } else {
                o.insert(key.into(), value);
            }
        }
    });
    ctx.write_url();
}

/// Live charts and per-strategy cards.
#[component]
pub fn TunePanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let has_view = move || ctx.view.with(|v| v.is_some());
    let teach = move || teach_layout(&ctx);
    // Memos: a chart whose data did not change between redraws is not redrawn.
    let conv = Memo::new(move |_| ctx.view.with(|v| v.as_ref().map(|v| v.convergence.clone()).unwrap_or_default()));
    let scatter = Memo::new(move |_| ctx.view.with(|v| v.as_ref().map(|v| v.scatter.clone()).unwrap_or_default()));
    // The Pareto front over two objectives the user picks (primary and second by default).
    let axes = RwSignal::new((0usize, 1usize));
    // Read from the session's trials in place when the view changes (nothing copied per redraw).
    let pareto = Memo::new(move |_| {
        ctx.view.track();
        let (a, b) = axes.get();
        ctx.with_session(|s| s.pareto(a, b)).flatten().unwrap_or_default()
    });
    let objectives = move || ctx.view.with(|v| v.as_ref().map(|v| v.objectives.iter().map(|o| o.0.clone()).collect::<Vec<_>>()).unwrap_or_default());
    let has_pareto = move || objectives().len() >= 2 && !teach();
    let pick = move |which: usize| {
        let current = move || if which == 0 { axes.get().0 } else { axes.get().1 };
        let choose = move |ev: leptos::ev::Event| {
            if let Ok(i) = event_target_value(&ev).parse::<usize>() {
                axes.update(|a| if which == 0 { a.0 = i } else { a.1 = i });
            }
        };
        view! {
            <select data-testid=format!("pareto-{which}") on:change=choose>
                {move || objectives().into_iter().enumerate().map(|(i, n)| view! { <option value=i.to_string() selected=move || current() == i>{tunelab_scenario::metrics::label(&n)}</option> }).collect_view()}
            </select>
        }
    };
    let lane_count = Memo::new(move |_| ctx.view.with(|v| v.as_ref().map(|v| v.lanes.len()).unwrap_or(0)));
    // The best configuration's breakdown and roofline place: computed when the run stops or
    // pauses (a full simulation of the step, too costly to redo on every live redraw).
    let best_detail = RwSignal::new(None);
    Effect::new(move |_| {
        let stopped = matches!(ctx.status.get(), Status::Done | Status::Paused);
        let best = ctx.view.with(|v| v.as_ref().and_then(|v| v.best_config.clone()));
        match (stopped, best) {
            // In a task of its own, after the run's last redraw; from the session's own stage
            // and the best trial's recorded outcome (the step is not simulated again here).
            #[cfg(feature = "page-engine")]
            (true, Some(cfg)) => set_timeout(
                move || best_detail.set(ctx.with_session_mut(|s| s.detail(&cfg)).and_then(Result::ok)),
                std::time::Duration::from_millis(0),
            ),
            // The release page's mirror has no stage to break a step down with: the engine
            // worker answers (`explore::point_detail`, the same objective, so the same numbers).
            #[cfg(not(feature = "page-engine"))]
            (true, Some(cfg)) => {
                let want = cfg.clone();
                crate::worker::ask::detail(ctx.scenario.get_untracked(), cfg, move |d| {
                    // Only if the best is still the one asked about.
                    if ctx.view.with_untracked(|v| v.as_ref().and_then(|v| v.best_config.as_ref()) == Some(&want)) {
                        best_detail.set(d.ok());
                    }
                })
            }
            _ => best_detail.set(None),
        }
    });
    let summary = move || ctx.view.with(|v| v.as_ref().map(|v| v.space_summary.clone()).unwrap_or_default());
    view! {
        <section class="panel tune" class:teach=teach style:display=move || if ctx.tab.get() == Tab::Tune { "var(--tune-display, block)" } else { "none" }>
            <TeachBar/>
            <Show when=has_view fallback=|| view! {
                <p class="hint">"Choose a scenario and strategies on the left, then press Run (or Step: one evaluation for every ticked strategy). "
                "The charts fill in live; several strategies run side by side on the same scenario, each in a worker of its own."</p>
            }>
                <Show when=move || !summary().is_empty()>
                    <p class="space-summary" data-testid="space-summary">"Space: " {summary}</p>
                </Show>
                <p class="chart-hint" data-testid="chart-hint">"Every point is clickable: click one to pin it beside the charts with its whole configuration and every metric."</p>
                <div class="charts-with-pins">
                <div class="charts">
                    <crate::components::landscape::LandscapeView/>
                    <Show when=teach><crate::components::teach_canvas::SliceCanvas/></Show>
                    <div class="pin-target" on:click=move |ev| crate::components::trials::pin_from_click(ctx, &ev)><ScatterChart data=scatter/></div>
                    <div class="pin-target" on:click=move |ev| crate::components::trials::pin_from_click(ctx, &ev)><ConvergenceChart data=conv/></div>
                    <Show when=has_pareto>
                        <div>
                            <div class="pin-target" on:click=move |ev| crate::components::trials::pin_from_click(ctx, &ev)><ParetoChart data=pareto/></div>
                            <p class="row small">"Pareto front of " {pick(0)} " against " {pick(1)}</p>
                        </div>
                    </Show>
                </div>
                <Show when=move || !teach() && ctx.tab.get() == Tab::Tune><crate::components::trials::PinPanel/></Show>
                </div>
                <div class="lanes">
                    {move || (0..lane_count.get()).map(|i| view! { <LaneCard i/> }).collect_view()}
                </div>
                <crate::components::pipeline::PipelinePanel/>
                <Show when=move || !teach() && best_detail.with(|d| d.as_ref().is_some_and(tunelab_scenario::explore::PointDetail::worth_showing))>
                    <PointView detail=best_detail title="Best configuration: engine breakdown, per-operator time, roofline"/>
                </Show>
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

/// The teaching layout switch, the speed control and, on the teaching layout, the gallery: one
/// line, so the cards below still fit a 1440x900 screen (what Step does is said beside Step).
#[component]
fn TeachBar() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let teach = move || teach_layout(&ctx);
    let toggle = move |_| set_view_key(&ctx, "layout", if teach_layout(&ctx) { Json::Null } else { "teach".into() });
    let speed = move || ctx.scenario.with(|s| speed_of(&s.view));
    let set_speed = move |ev: leptos::ev::Event| {
        let v: u32 = event_target_value(&ev).parse().unwrap_or(0);
        set_view_key(&ctx, "speed", if v == 0 { Json::Null } else { v.into() });
        crate::worker::driver::speed_changed(&ctx);
    };
    let label = |v: u32| if v == 0 { "full speed".to_string() } else { format!("{v} evaluations/s") };
    view! {
        <div class="teach-bar row">
            <label class="strategy" title="The space, every strategy's card and the controls on one screen">
                <input type="checkbox" data-testid="teach-layout" prop:checked=teach on:change=toggle/>
                "Teaching layout"
            </label>
            <label>"Speed "
                <select data-testid="speed" on:change=set_speed>
                    {SPEEDS.iter().map(|&v| view! { <option value=v.to_string() selected=move || speed() == v>{label(v)}</option> }).collect_view()}
                </select>
            </label>
            <Show when=teach><crate::components::gallery::Gallery/></Show>
        </div>
    }
}

/// One strategy: its numbers, what to watch for and, for strategies with one, a teaching view.
#[component]
fn LaneCard(i: usize) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let lane = Memo::new(move |_| ctx.view.with(|v| v.as_ref().and_then(|v| v.lanes.get(i).cloned()).unwrap_or_default()));
    let name = lane.get_untracked().strategy;
    let snaps = Signal::derive(move || lane.with(|l| l.snapshots.clone()));
    let snap = Signal::derive(move || lane.with(|l| l.snapshot.clone()));
    let unit = ctx.view.with_untracked(|v| v.as_ref().map(|v| v.unit.clone()).unwrap_or_default());
    let teaching = match name.as_str() {
        "genetic" => view! { <GaView snapshots=snaps/> }.into_any(),
        "annealing" => view! { <AnnealingView snapshots=snaps/> }.into_any(),
        "bayes" => {
            let goal = ctx.view.with_untracked(|v| v.as_ref().map(|v| tunelab_scenario::metrics::label_unit(&v.metric, &v.unit)).unwrap_or_default());
            view! { <GpView snapshot=snap unit=unit.clone() goal/> }.into_any()
        }
        "rl" => view! { <RlView snapshot=snap/> }.into_any(),
        _ => view! { <p class="muted">{explain(&name)}</p> }.into_any(),
    };
    let line = move |f: fn(&LaneView) -> String| move || lane.with(f);
    let grouped = move || lane.with(|l| !l.best_groups.is_empty());
    let groups = move || {
        lane.with(|l| {
            l.best_groups
                .iter()
                .map(|(g, line)| view! { <details class="op-group"><summary>{g.clone()}</summary><p class="small">{line.clone()}</p></details> })
                .collect_view()
        })
    };
    let summary = move || ctx.view.with(|v| v.as_ref().map(|v| v.space_summary.clone()).unwrap_or_default());
    view! {
        <article class="lane" data-testid=format!("lane-{name}")>
            <h3>{name.clone()}</h3>
            <p class="watch" data-testid="watch">{watch_for(&name)}</p>
            <p data-testid="lane-evaluations">{line(|l| format!("{} / {} evaluations · {} infeasible · {} failed", l.evaluations, l.budget, l.infeasible, l.failed))}</p>
            <p>"Best: " <strong data-testid="lane-best" data-value=line(|l| l.best.clone().unwrap_or_default())>{line(|l| l.best.as_deref().map(readable).unwrap_or_else(|| "none yet".into()))}</strong> " " {unit}</p>
            <Show when=grouped fallback=move || view! { <p class="muted small" data-config=line(|l| l.best_config.clone())>{line(|l| readable_config(&l.best_config))}</p> }>
                <details class="best-groups" data-testid="best-groups">
                    <summary>{move || format!("Best configuration: {}", summary())}</summary>
                    {groups}
                </details>
            </Show>
            <p class="muted small">{line(|l| l.stop_reason.clone().map(|r| format!("stopped: {r}")).unwrap_or_default())}</p>
            {teaching}
            <details><summary>"State"</summary><pre class="small">{line(|l| snapshot_text(&l.snapshot))}</pre></details>
        </article>
    }
}

fn snapshot_text(v: &Json) -> String {
    match v {
        // The GP's own numbers are on its transformed scale: said so, and its candidate list
        // (drawn by the card in the goal's units) is left out.
        Json::Object(m) => m
            .iter()
            .filter(|(k, _)| k.as_str() != "candidates")
            .map(|(k, v)| {
                let v = readable_json(v);
                if matches!(k.as_str(), "gp_mean" | "gp_std") { format!("{k} = {v} (the model's transformed scale, see goal_scale)") } else { format!("{k} = {v}") }
            })
            .collect::<Vec<_>>()
            .join("\n"),
        other => readable_json(other),
    }
}

/// A snapshot value as people read it: JSON, with every number rounded by `fmt4`.
fn readable_json(v: &Json) -> String {
    match v {
        Json::Number(n) if n.is_f64() => n.as_f64().map(fmt4).unwrap_or_else(|| n.to_string()),
        Json::Array(a) => format!("[{}]", a.iter().map(readable_json).collect::<Vec<_>>().join(",")),
        Json::Object(m) => format!("{{{}}}", m.iter().map(|(k, v)| format!("{}:{}", Json::String(k.clone()), readable_json(v))).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

/// One sentence per strategy: what to watch for while it runs.
pub fn watch_for(name: &str) -> &'static str {
    match name {
        "genetic" => "Watch for: the population's mean closing in on its best; once they meet, only mutation brings new ideas.",
        "annealing" => "Watch for: the temperature falling; early on it accepts worse moves to escape a local optimum, late it only climbs.",
        "bayes" => "Watch for: the band narrowing where it has sampled; it goes next where the acquisition curve peaks.",
        "rl" => "Watch for: the bars sharpening as values that gave better results become more likely.",
        "random" => "Watch for: how rarely it improves after the first few dozen trials; every other strategy must beat it.",
        "grid" => "Watch for: the orderly sweep; it reaches a good corner only when the order happens to lead there.",
        "tpe" => "Watch for: the jump after its random start, when its good/bad densities begin to steer the proposals.",
        "nsga2" => "Watch for: the Pareto front spreading out, not only the best single value improving.",
        "local" => "Watch for: quick gains next to the incumbent, then restarts once no neighbour is better.",
        "auto" => "Watch for: which strategy its portfolio lends evaluations to as each shows progress.",
        _ => "",
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
        "auto" => "Auto shares the budget among strategies by the progress each shows on the shared history.",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_strategy_has_a_sentence_to_watch_for() {
        for (name, _) in tunelab_search::strategies::STRATEGIES {
            assert!(watch_for(name).starts_with("Watch for:"), "{name}");
        }
    }

    #[test]
    fn the_state_view_rounds_numbers_and_keeps_counts() {
        let s = snapshot_text(&serde_json::json!({"generation": 12, "best": 1063.7420810687952, "probs": {"a": [0.123456, 3]}}));
        assert_eq!(s, "best = 1064\ngeneration = 12\nprobs = {\"a\":[0.1235,3]}");
    }

    #[test]
    fn speed_reads_the_view_state() {
        assert_eq!(speed_of(&serde_json::json!({"speed": 5})), 5);
        assert_eq!(speed_of(&serde_json::json!({})), 0);
        assert_eq!(speed_of(&serde_json::json!({"speed": "fast"})), 0);
    }
}

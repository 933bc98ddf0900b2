//! The run toolbar: Run, Step, Pause, Reset and Copy link with the status, the progress and the
//! best value, in one bar that stays in view (sticky) above the charts at every width, so the
//! buttons are never a page away from the results they fill. The stable test hooks (run, step,
//! pause, reset, copy-link, status, best) live here.

use crate::browser;
use crate::charts::ProgressBar;
use crate::state::{Ctx, Status};
use leptos::prelude::*;
use tunelab_scenario::metrics;

/// What Copy link last did: nothing yet, copied, or refused (the link is then shown selected).
#[derive(Clone, Debug, PartialEq)]
enum Copied {
    No,
    Yes,
    Refused(String),
}

/// The toolbar.
#[component]
pub fn Toolbar() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let running = move || ctx.status.get() == Status::Running;
    let copied = RwSignal::new(Copied::No);
    let copy = move |_| {
        ctx.write_url();
        let href = browser::href();
        // A browser that neither grants nor refuses within 1.5 s (a permission prompt nobody
        // answers) gets the selectable field too.
        let pending = StoredValue::new(true);
        let shown = href.clone();
        set_timeout(
            move || {
                if pending.try_get_value() == Some(true) {
                    copied.set(Copied::Refused(shown));
                    set_timeout(|| browser::select_input("[data-testid=link-field]"), std::time::Duration::from_millis(0));
                }
            },
            std::time::Duration::from_millis(1500),
        );
        leptos::task::spawn_local(async move {
            let answer = browser::copy_text_async(&href).await;
            pending.set_value(false);
            match answer {
                Ok(()) => {
                    copied.set(Copied::Yes);
                    set_timeout(move || if copied.get_untracked() == Copied::Yes { copied.set(Copied::No) }, std::time::Duration::from_millis(2500));
                }
                Err(_) => {
                    copied.set(Copied::Refused(href));
                    set_timeout(|| browser::select_input("[data-testid=link-field]"), std::time::Duration::from_millis(0));
                }
            }
        });
    };
    // A new scenario makes a shown link stale.
    Effect::new(move |_| {
        ctx.scenario.track();
        copied.set(Copied::No);
    });
    let evals = Signal::derive(move || ctx.view.with(|v| v.as_ref().map(|v| v.evaluations).unwrap_or(0)));
    let budget = Signal::derive(move || ctx.view.with(|v| v.as_ref().map(|v| v.budget).unwrap_or(0)));
    let best_label = move || {
        ctx.view.with(|v| match v {
            Some(v) => format!("Best {}: ", metrics::label(&v.metric)),
            None => "Best: ".into(),
        })
    };
    let best_text = move || {
        ctx.view.with(|v| {
            let v = v.as_ref()?;
            let raw = v.best.as_deref()?;
            Some(match raw.parse::<f64>() {
                Ok(x) => metrics::value_unit(&v.metric, x, &v.unit),
                Err(_) => crate::charts::numbers::readable(raw),
            })
        })
    };
    view! {
        <div class="toolbar" data-testid="toolbar">
            <div class="toolbar-buttons">
                <button data-testid="run" class="primary" disabled=running on:click=move |_| ctx.run()>"Run"</button>
                <button data-testid="step" disabled=running on:click=move |_| ctx.step() title="One evaluation for every ticked strategy (population methods too: a generation is several Steps)">"Step"</button>
                <button data-testid="pause" disabled=move || !running() on:click=move |_| ctx.pause()>"Pause"</button>
                <button data-testid="reset" on:click=move |_| ctx.reset()>"Reset"</button>
                <button data-testid="copy-link" on:click=copy>
                    {move || if copied.get() == Copied::Yes { "Link copied ✓" } else { "Copy link" }}
                </button>
            </div>
            <span class="toolbar-status">"Status: " <strong data-testid="status">{move || ctx.status.get().as_str()}</strong></span>
            <ProgressBar done=evals budget=budget label="Tuning progress".to_string()/>
            <p class="best-line">
                {best_label}
                // Shown rounded with its unit; data-value keeps the exact number `tunelab run --json` prints.
                <strong data-testid="best" data-value=move || ctx.view.with(|v| v.as_ref().and_then(|v| v.best.clone()).unwrap_or_default())>
                    {move || best_text().unwrap_or_default()}
                </strong>
                <span class="muted">{move || ctx.view.with(|v| v.as_ref().and_then(|v| v.best_strategy.clone()).map(|s| format!(" by {s}")).unwrap_or_default())}</span>
            </p>
            {move || match copied.get() {
                Copied::Refused(href) => view! {
                    <div class="link-fallback" data-testid="link-fallback">
                        <span class="small">"The browser refused the clipboard: copy the link from here."</span>
                        <input type="text" readonly class="wide" data-testid="link-field" prop:value=href
                            on:focus=move |ev| { let i: web_sys::HtmlInputElement = event_target(&ev); i.select(); }/>
                        <button class="dismiss" on:click=move |_| copied.set(Copied::No)>"Close"</button>
                    </div>
                }.into_any(),
                _ => ().into_any(),
            }}
        </div>
    }
}

//! The banner beside the model: what Tunelab reads the scenario's model as — total and active
//! parameters, weight bytes per precision, its layer stack — and what it approximates (which
//! part, how), from `ModelDesc::identity`, the same figures `tunelab eval` and the report print, read by the
//! engine worker (`Question::Model`).

use crate::state::Ctx;
use leptos::prelude::*;
use crate::worker::ask::{ask, Answer, Question};
use tunelab_scenario::scenario::ModelRef;

/// The identity of the scenario's language model (nothing for a diffusion pipeline or an
/// operator graph without a language model, or a model that does not load: the panel's error
/// says why).
#[component]
pub fn ModelBanner() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    // Recomputed when the model changes, not on every edit of the scenario.
    let key = Memo::new(move |_| ctx.scenario.with(|s| (s.stage, serde_json::to_string(&s.model).unwrap_or_default())));
    // The engine worker reads the model (`Question::Model`: the page's module carries no model
    // reader); the banner shows the answer for the model it asked about.
    let identity = RwSignal::new(None::<(String, String, Vec<String>)>);
    Effect::new(move |_| {
        let k = key.get();
        let s = ctx.scenario.get_untracked();
        // The model text as the stages read it (a bundled id or the pasted config); pipelines
        // are left to the diffusion stage (and keep their builder out of the first-load module).
        let text = if tunelab_scenario::stages::context::names_a_pipeline(&s.model) {
            None
        } else {
            match &s.model {
                ModelRef::Id(id) if id.trim_start().starts_with('{') => Some(id.clone()),
                // A bundled id is sent as it is: the worker holds the bundled texts, so the page's
                // module links none of them (the first-load budget).
                ModelRef::Id(id) => Some(id.trim().to_string()),
                ModelRef::Inline(j) => serde_json::to_string(j).ok(),
            }
        };
        identity.set(None);
        let Some(text) = text else { return };
        ask(Question::Model { text }, move |r| {
            // An answer about a model the scenario no longer has is dropped, and so is one that
            // arrives after the banner was taken off the page (its signals are disposed then).
            if key.try_with_untracked(|now| *now == k) == Some(true) {
                identity.try_set(match r {
                    Ok(Answer::Model { facts }) => facts.identity,
                    _ => None,
                });
            }
        });
    });
    view! {
        {move || identity.get().map(|(line, stack, approx)| {
            let exact = approx.is_empty();
            view! {
                <div class="model-banner" data-testid="model-banner">
                    <div data-testid="model-identity">{line}</div>
                    <div class="muted" data-testid="model-stack">{stack}</div>
                    {if exact {
                        view! { <div class="muted" data-testid="model-exact">"Priced as its config describes it (no approximation)."</div> }.into_any()
                    } else {
                        view! {
                            <details data-testid="model-approximations">
                                <summary>{format!("{} approximation(s)", approx.len())}</summary>
                                <ul>{approx.into_iter().map(|a| view! { <li>{a}</li> }).collect_view()}</ul>
                            </details>
                        }.into_any()
                    }}
                </div>
            }
        })}
    }
}

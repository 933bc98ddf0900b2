//! The banner beside the model: what Tunelab reads the scenario's model as — total and active
//! parameters, weight bytes per precision, its layer stack — and what it approximates (which
//! part, how), from `ModelDesc::identity`, the same figures `tunelab eval` and the report print.

use crate::state::Ctx;
use leptos::prelude::*;

/// The identity of the scenario's language model (nothing for a diffusion pipeline or an
/// operator graph without a language model, or a model that does not load: the panel's error
/// says why).
#[component]
pub fn ModelBanner() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    // Recomputed when the model changes, not on every edit of the scenario.
    let key = Memo::new(move |_| ctx.scenario.with(|s| (s.stage, serde_json::to_string(&s.model).unwrap_or_default())));
    let identity = Memo::new(move |_| {
        key.track();
        let s = ctx.scenario.get_untracked();
        match tunelab_scenario::stages::context::resolve(&s) {
            Ok((m, _, _)) if m.llm.is_some() => Some((m.identity_line(), m.stack_summary(), m.approximations())),
            _ => None,
        }
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

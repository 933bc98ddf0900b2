//! The knowledge-base view: save the finished run as a case (titled with the scenario as it is:
//! model, chip, stage and goal), find similar cases, export and import self-contained packages.
//! Storage lives in `kb_store`.

use crate::browser;
use crate::kb_store::{load, save};
use crate::state::Ctx;
use leptos::prelude::*;
use crate::worker::ask::{ask, Answer, Question};
use tunelab_scenario::cases::case_from_run_with;
use tunelab_scenario::knowledge::Fingerprint;
use tunelab_scenario::knowledge::{export_package, import_package, KnowledgeBase};

/// The knowledge-base view.
#[component]
pub fn KnowledgePanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let kb = RwSignal::new(load(ctx));
    let import_text = RwSignal::new(String::new());
    let store = move |k: &KnowledgeBase| save(ctx, k);
    // A case's key (`cases::fingerprint_of`) reads the model: the engine worker answers it.
    let fingerprint = move |s: tunelab_scenario::Scenario, done: Box<dyn FnOnce(Result<Fingerprint, String>)>| {
        ask(Question::Fingerprint { scenario: Box::new(s) }, move |r| {
            done(r.and_then(|a| match a {
                Answer::Fingerprint { fingerprint } => Ok(fingerprint),
                other => Err(format!("unexpected answer {other:?}")),
            }))
        })
    };
    let save_run = move |_| {
        let Some(s) = ctx.with_session(|x| x.run().scenario().clone()) else {
            return ctx.fail("Run a tuning first; its trials become the case.");
        };
        fingerprint(
            s,
            Box::new(move |fp| {
                // The run as it is when the key is known (the same run unless a new one started).
                let case = ctx.with_session(|x| fp.and_then(|fp| case_from_run_with(x.run(), &tunelab_scenario::context::title(x.run().scenario()), fp)));
                match case {
                    None => ctx.fail("Run a tuning first; its trials become the case."),
                    Some(Err(e)) => ctx.fail(e),
                    Some(Ok(c)) => kb.update(|k| {
                        k.add(c);
                        store(k);
                    }),
                }
            }),
        );
    };
    // This scenario's key, asked again when the scenario changes.
    let this_fp = RwSignal::new(None::<Fingerprint>);
    // The key reads the stage, model and chip (a landscape's source): asked again when they
    // change, not on every edit.
    let key = Memo::new(move |_| ctx.scenario.with(|s| (s.stage, serde_json::to_string(&s.model).unwrap_or_default(), serde_json::to_string(&s.device).unwrap_or_default(), tunelab_scenario::stages::landscape::source_label(s))));
    Effect::new(move |_| {
        let k = key.get();
        this_fp.set(None);
        fingerprint(
            ctx.scenario.get_untracked(),
            Box::new(move |r| {
                if key.try_with_untracked(|now| *now == k) == Some(true) {
                    this_fp.set(r.ok());
                }
            }),
        );
    });
    let similar = move || {
        let fp = this_fp.get()?;
        Some(kb.with(|k| k.similar(&fp, 0.0).into_iter().map(|m| (m.score, m.case.title.clone(), m.case.best_value)).collect::<Vec<_>>()))
    };
    let export = move |i: usize| {
        if let Some(c) = kb.with_untracked(|k| k.cases.get(i).cloned()) {
            if let Err(e) = browser::download("tunelab-case.json", "application/json", &export_package(&c)) {
                ctx.fail(e);
            }
        }
    };
    let import = move |_| match import_package(&import_text.get_untracked()) {
        Ok(p) => kb.update(|k| {
            k.add(p.case);
            store(k);
            import_text.set(String::new());
        }),
        Err(e) => ctx.fail(format!("The package was not imported: {e}")),
    };
    view! {
        <section class="panel knowledge">
            <h2>"Knowledge base"</h2>
            <p class="hint">"Tuned cases stay in this browser (localStorage). Similar problems find them again; a package reproduces a case exactly."</p>
            <button data-testid="kb-save" on:click=save_run>"Save this run as a case"</button>
            <label class="check">
                <input type="checkbox" data-testid="kb-warm" prop:checked=move || ctx.warm.get() on:change=move |ev| ctx.warm.set(event_target_checked(&ev))/>
                "Warm-start the next runs from similar cases (transfer; such runs depend on this browser's cases, so a link alone does not reproduce them)"
            </label>
            <p class="muted small" data-testid="kb-warm-note">{move || ctx.warm_note.get()}</p>
            <h3>"Cases similar to this scenario"</h3>
            <ul data-testid="kb-similar">
                {move || similar().unwrap_or_default().into_iter().map(|(score, title, best)| view! {
                    <li>{format!("{title}: similarity {score:.2}, best {}", best.map(crate::charts::numbers::fmt4).unwrap_or_else(|| "—".into()))}</li>
                }).collect_view()}
            </ul>
            <h3>"All cases"</h3>
            <ul data-testid="kb-cases">
                {move || kb.with(|k| k.cases.iter().map(|c| c.title.clone()).collect::<Vec<_>>()).into_iter().enumerate().map(|(i, t)| view! {
                    <li>{t}" " <button on:click=move |_| export(i)>"Export package"</button></li>
                }).collect_view()}
            </ul>
            <h3>"Import a package"</h3>
            <textarea data-testid="kb-import-text" prop:value=move || import_text.get() on:input=move |ev| import_text.set(event_target_value(&ev))></textarea>
            <button data-testid="kb-import" on:click=import>"Import"</button>
        </section>
    }
}

//! The what-if panel: pick one change (precision, tensor parallelism, batch, flash attention,
//! recomputation, optimizer sharding) and see its simulated effect on every stage, with the
//! composite score and its weights (editable). `tunelab impact` prints the same analysis.

use crate::state::Ctx;
use leptos::prelude::*;
use crate::worker::ask::{ask, Answer, Question};
use tunelab_scenario::impact::{Change, ImpactReport, ImpactWeights};
use crate::charts::numbers::fmt4;

/// The what-if panel.
#[component]
pub fn WhatIfPanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let precision = RwSignal::new(String::new());
    let tp = RwSignal::new(String::new());
    let batch = RwSignal::new(String::new());
    let recompute = RwSignal::new(String::new());
    let sharding = RwSignal::new(String::new());
    let weights = RwSignal::new(ImpactWeights::default());
    let result = RwSignal::new(None::<ImpactReport>);
    let analyse_now = move |_| {
        let num = |s: RwSignal<String>| -> Result<Option<u64>, String> {
            let t = s.get_untracked();
            if t.trim().is_empty() { Ok(None) } else { t.trim().parse::<u64>().map(Some).map_err(|_| format!("'{t}' is not a whole number")) }
        };
        let opt = |s: RwSignal<String>| Some(s.get_untracked()).filter(|x| !x.is_empty());
        let change = match (num(tp), num(batch)) {
            (Ok(tp), Ok(batch)) => Change { precision: opt(precision), flash_attention: None, tp, batch, recompute: opt(recompute), optimizer_sharding: opt(sharding) },
            (Err(e), _) | (_, Err(e)) => return ctx.fail(format!("What if: {e}")),
        };
        if change == Change::default() {
            return ctx.fail("What if: pick at least one change.");
        }
        // Every stage simulated before and after: the engine worker answers.
        let question = Question::Impact { scenario: Box::new(ctx.scenario.get_untracked()), change, weights: weights.get_untracked() };
        ask(question, move |r| match r {
            Ok(Answer::Impact { report }) => result.set(Some(report)),
            Ok(_) => {}
            Err(e) => ctx.fail(format!("What if: {e}")),
        });
    };
    let select = move |sig: RwSignal<String>, id: &'static str, choices: &'static [&'static str]| {
        view! {
            <select data-testid=id prop:value=move || sig.get() on:change=move |ev| sig.set(event_target_value(&ev))>
                <option value="">"(unchanged)"</option>
                {choices.iter().map(|c| view! { <option value=*c>{*c}</option> }).collect_view()}
            </select>
        }
    };
    let weight = move |label: &'static str, get: fn(&ImpactWeights) -> f64, set: fn(&mut ImpactWeights, f64)| {
        view! {
            <label>{label}" "
                <input type="number" min="0" step="0.1" class="short" prop:value=move || weights.with(|w| get(w).to_string()) on:change=move |ev| {
                    match event_target_value(&ev).trim().parse::<f64>() {
                        Ok(x) if x.is_finite() && x >= 0.0 => weights.update(|w| set(w, x)),
                        _ => ctx.fail("A weight is a non-negative number."),
                    }
                }/>
            </label>
        }
    };
    view! {
        <h2>"What if"</h2>
        <p class="hint">"One change, simulated at every stage: inference latency, model size, training memory and step time. The composite weighs the relative improvements (positive is better)."</p>
        <div class="row wrap">
            <label>"Precision " {select(precision, "whatif-precision", &["fp16", "bf16", "w8a16", "w8a8", "w4a16", "w4a8", "w4a4"])}</label>
            <label>"TP " <input type="number" min="1" class="short" data-testid="whatif-tp" prop:value=move || tp.get() on:change=move |ev| tp.set(event_target_value(&ev))/></label>
            <label>"Batch " <input type="number" min="1" class="short" data-testid="whatif-batch" prop:value=move || batch.get() on:change=move |ev| batch.set(event_target_value(&ev))/></label>
            <label>"Recompute " {select(recompute, "whatif-recompute", &["none", "selective", "full"])}</label>
            <label>"ZeRO " {select(sharding, "whatif-zero", &["zero0", "zero1", "zero2", "zero3", "distributed_optimizer"])}</label>
        </div>
        <div class="row wrap">
            "Weights: "
            {weight("latency", |w| w.latency, |w, x| w.latency = x)}
            {weight("training memory", |w| w.training_memory, |w, x| w.training_memory = x)}
            {weight("model size", |w| w.model_size, |w, x| w.model_size = x)}
            <button data-testid="whatif-run" on:click=analyse_now>"Analyse"</button>
        </div>
        {move || result.get().map(|r| view! {
            <div class="table-wrap" data-testid="whatif">
                <table><thead><tr><th>"stage"</th><th>"measure"</th><th>"before"</th><th>"after"</th><th>"better by"</th></tr></thead><tbody>
                    {r.rows.iter().map(|x| {
                        let class = match x.improvement { Some(i) if i > 0.0 => "num good", Some(i) if i < 0.0 => "num bad", _ => "num" };
                        view! { <tr>
                            <td>{x.stage.clone()}</td><td>{format!("{} ({})", x.measure, x.unit)}</td>
                            <td class="num">{x.before.map(fmt4).unwrap_or_else(|| "—".into())}</td><td class="num">{x.after.map(fmt4).unwrap_or_else(|| "—".into())}</td>
                            <td class=class>{x.improvement.map(|i| format!("{}{}%", if i > 0.0 { "+" } else { "" }, fmt4(i * 100.0))).unwrap_or_else(|| x.note.clone().unwrap_or_default())}</td>
                        </tr> }
                    }).collect_view()}
                </tbody></table>
                <p data-testid="whatif-composite">{format!("Composite {}{} = {} × TPOT + {} × training memory + {} × model size", if r.composite > 0.0 { "+" } else { "" }, fmt4(r.composite), r.weights.latency, r.weights.training_memory, r.weights.model_size)}</p>
            </div>
        })}
    }
}

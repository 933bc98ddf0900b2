//! The diffusion stage's pipeline view: the timeline of one call (text encoders, denoising
//! steps, VAE) for the baseline and for each strategy's best configuration, so strategies race
//! on the pipeline, beside the engine breakdown of one denoiser step (the best configuration's
//! point detail, `explore::PointView`). Every number comes from the stage's pricer, the
//! function the study calls.

use crate::charts::BreakdownChart;
use crate::state::Ctx;
use leptos::prelude::*;
use crate::worker::ask::{ask, Answer, Question};
use tunelab_scenario::stages::diffusion::timeline::describe;
use tunelab_scenario::Stage;

/// Shown for a diffusion scenario: the timeline chart and the best call's segments as text.
#[component]
pub fn PipelinePanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let shown = move || ctx.scenario.with(|s| s.stage == Stage::Diffusion);
    // (label, timeline) per row: the baseline, then each lane's best.
    // Priced by the engine worker (`Question::Timeline`), asked again when a best changes.
    let rows = RwSignal::new(Vec::new());
    let asked = Memo::new(move |_| {
        let s = ctx.scenario.get();
        let bests: Vec<(String, Option<tunelab_search::Config>)> = ctx.view.with(|v| v.iter().flat_map(|v| v.lanes.iter()).filter_map(|l| l.best_cfg.clone().map(|c| (format!("{} best", l.strategy), Some(c)))).collect());
        (s.stage == Stage::Diffusion).then_some((s, bests))
    });
    Effect::new(move |_| {
        let Some((s, bests)) = asked.get() else { return rows.set(Vec::new()) };
        let labels: Vec<String> = std::iter::once("baseline".to_string()).chain(bests.iter().map(|b| b.0.clone())).collect();
        let configs = std::iter::once(None).chain(bests.into_iter().map(|b| b.1)).collect();
        ask(Question::Timeline { scenario: Box::new(s), configs }, move |r| {
            if let Ok(Answer::Timeline { timelines }) = r {
                rows.set(labels.into_iter().zip(timelines).filter_map(|(l, t)| t.ok().map(|t| (l, t))).collect());
            }
        });
    });
    let data = Signal::derive(move || crate::charts::pipeline::timeline_data(&rows.get()));
    // The baseline's call and the fastest lane's best, as text (the founding story reads here:
    // the text encoders' share before and after).
    let base_text = move || rows.with(|r| r.first().map(|(_, t)| describe(t)).unwrap_or_default());
    let best_text = move || rows.with(|r| r.iter().skip(1).min_by(|a, b| a.1.total_ms.total_cmp(&b.1.total_ms)).map(|(l, t)| std::iter::once(format!("{l}:")).chain(describe(t)).collect::<Vec<_>>()).unwrap_or_default());
    view! {
        <Show when=shown>
            <section class="pipeline" data-testid="pipeline-panel">
                <DiffusionRequest/>
                <h3>"Pipeline timeline"</h3>
                <BreakdownChart data=data/>
                <pre class="small" data-testid="pipeline-baseline">{move || base_text().join("\n")}</pre>
                <pre class="small" data-testid="pipeline-text">{move || best_text().join("\n")}</pre>
                // What the pipeline's parts approximate (the same lines `tunelab eval` prints).
                <ul class="small muted" data-testid="pipeline-approximations">{move || rows.with(|r| r.first().map(|(_, t)| t.approximations.clone()).unwrap_or_default()).into_iter().map(|a| view! { <li>{format!("approximates {a}")}</li> }).collect_view()}</ul>
            </section>
        </Show>
    }
}

/// The request a diffusion scenario prices (`scenario.diffusion`): size, frames, reference
/// images (an edit: FLUX.1-Kontext, Qwen-Image-Edit), steps and chips. An empty field is the
/// pipeline's own default; a value the stage refuses (out of range, reference images on a
/// pipeline without reference conditioning) is refused beside the field, never clamped.
#[component]
fn DiffusionRequest() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    type Get = fn(&tunelab_scenario::spec::diffusion::DiffusionOptions) -> Option<u64>;
    type Set = fn(&mut tunelab_scenario::spec::diffusion::DiffusionOptions, Option<u64>);
    let fields: [(&str, &str, Get, Set); 7] = [
        ("height", "Height (px)", |o| o.height, |o, v| o.height = v),
        ("width", "Width (px)", |o| o.width, |o, v| o.width = v),
        ("frames", "Frames", |o| o.frames, |o, v| o.frames = v),
        ("reference_images", "Reference images", |o| o.reference_images, |o, v| o.reference_images = v),
        ("steps", "Steps", |o| o.steps, |o, v| o.steps = v),
        ("chips", "Chips", |o| Some(o.chips), |o, v| o.chips = v.unwrap_or(1)),
        // An unmerged LoRA adapter on the denoiser (diffusion.lora_rank; empty: none).
        ("lora_rank", "LoRA rank (unmerged)", |o| o.lora_rank, |o, v| o.lora_rank = v),
    ];
    view! {
        <fieldset class="row small" data-testid="diffusion-request">
            <legend>"Request (empty: the pipeline's default)"</legend>
            {fields.into_iter().map(|(key, label, get, set)| {
                let value = move || ctx.scenario.with(|s| s.diffusion.as_ref().and_then(get).map(|v| v.to_string()).unwrap_or_default());
                view! {
                    <label class="field">{label}" "
                        <input type="number" min="0" data-testid=format!("diffusion-{key}") prop:value=value on:change=move |ev| {
                            let t = event_target_value(&ev);
                            let v = if t.trim().is_empty() { Ok(None) } else { t.trim().parse::<u64>().map(Some).map_err(|_| format!("diffusion.{key}: '{t}' is not a whole number")) };
                            match v {
                                Ok(v) => { ctx.edit(|s| set(s.diffusion.get_or_insert_with(Default::default), v)); }
                                Err(e) => ctx.fail(e),
                            }
                        }/>
                    </label>
                }
            }).collect_view()}
            <label class="field" title="diffusion.fsdp: weights fully sharded over the chips (PyTorch FSDP), all-gathered every call">
                <input type="checkbox" data-testid="diffusion-fsdp" prop:checked=move || ctx.scenario.with(|s| s.diffusion.as_ref().is_some_and(|o| o.fsdp)) on:change=move |ev| {
                    let on = event_target_checked(&ev);
                    ctx.edit(|s| s.diffusion.get_or_insert_with(Default::default).fsdp = on);
                }/>
                " FSDP (shard weights over the chips)"
            </label>
        </fieldset>
    }
}

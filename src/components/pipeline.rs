//! The diffusion stage's pipeline view: the timeline of one call (text encoders, denoising
//! steps, VAE) for the baseline and for each strategy's best configuration, so strategies race
//! on the pipeline, beside the engine breakdown of one denoiser step (the best configuration's
//! point detail, `explore::PointView`). Every number comes from the stage's pricer, the
//! function the study calls.

use crate::charts::BreakdownChart;
use crate::state::Ctx;
use leptos::prelude::*;
use tunelab_scenario::stages::diffusion::timeline::{describe, timeline};
use tunelab_scenario::Stage;

/// Shown for a diffusion scenario: the timeline chart and the best call's segments as text.
#[component]
pub fn PipelinePanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let shown = move || ctx.scenario.with(|s| s.stage == Stage::Diffusion);
    // (label, timeline) per row: the baseline, then each lane's best.
    let rows = Memo::new(move |_| {
        let s = ctx.scenario.get();
        if s.stage != Stage::Diffusion {
            return Vec::new();
        }
        let mut out = Vec::new();
        if let Ok(t) = timeline(&s, None) {
            out.push(("baseline".to_string(), t));
        }
        ctx.view.with(|v| {
            for l in v.iter().flat_map(|v| v.lanes.iter()) {
                if let Some(t) = l.best_cfg.as_ref().and_then(|c| timeline(&s, Some(c)).ok()) {
                    out.push((format!("{} best", l.strategy), t));
                }
            }
        });
        out
    });
    let data = Signal::derive(move || crate::charts::pipeline::timeline_data(&rows.get()));
    // The baseline's call and the fastest lane's best, as text (the founding story reads here:
    // the text encoders' share before and after).
    let base_text = move || rows.with(|r| r.first().map(|(_, t)| describe(t)).unwrap_or_default());
    let best_text = move || rows.with(|r| r.iter().skip(1).min_by(|a, b| a.1.total_ms.total_cmp(&b.1.total_ms)).map(|(l, t)| std::iter::once(format!("{l}:")).chain(describe(t)).collect::<Vec<_>>()).unwrap_or_default());
    view! {
        <Show when=shown>
            <section class="pipeline" data-testid="pipeline-panel">
                <h3>"Pipeline timeline"</h3>
                <BreakdownChart data=data/>
                <pre class="small" data-testid="pipeline-baseline">{move || base_text().join("\n")}</pre>
                <pre class="small" data-testid="pipeline-text">{move || best_text().join("\n")}</pre>
            </section>
        </Show>
    }
}

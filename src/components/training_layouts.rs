//! Training layouts inside the training fields (`training.pipeline_schedule`, `document_len`,
//! `recompute_layers`; issue 42): the pipeline schedule (1F1B or DualPipe-V), packed documents
//! with reset attention masks, and per-stage partial recomputation. Every edit goes through the
//! scenario's validation, so a bad value is refused with the field's name and a good one travels
//! in the link; the defaults are the layout every older link priced.

use crate::state::Ctx;
use leptos::prelude::*;
use tunelab_scenario::Scenario;

fn set_document_len(s: &mut Scenario, t: &str) -> Result<(), String> {
    s.training.document_len = if t.is_empty() { None } else { Some(t.parse::<u64>().map_err(|_| "a whole number of tokens (or empty: one document per sequence)".to_string())?) };
    Ok(())
}

fn set_recompute_layers(s: &mut Scenario, t: &str) -> Result<(), String> {
    s.training.recompute_layers = t
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|x| !x.is_empty())
        .map(|x| x.parse::<u64>().map_err(|_| format!("'{x}' is not a count of layers (write e.g. 8,4,2,0, or leave it empty)")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(())
}

/// The layout fields of the training panel.
#[component]
pub fn TrainingLayouts() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let pair = |v: &[(&str, &str)]| v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>();
    view! {
        {super::fields::select(ctx, "Pipeline schedule", "training-pipeline-schedule",
            "How pipeline stages run their micro-batches: Megatron's 1F1B (interleaved with virtual stages), or DeepSeek's DualPipe-V (MindSpeed --schedules-method dualpipev): two model chunks per device in a V, a smaller bubble, (2 pp + 1) / (2 pp) of 1F1B's activations; needs pp >= 2, no virtual stages and at least 2 pp micro-batches",
            pair(&[("1f1b", "1F1B"), ("dualpipev", "DualPipe-V")]),
            |s| s.training.pipeline_schedule.clone(), |s, v| s.training.pipeline_schedule = v)}
        {super::fields::number(ctx, "Packed document length", "training-document-len",
            "Packed documents with reset attention masks (--reset-attention-mask): the mean length of the documents packed into each sequence; attention runs within each document, so it costs that of the documents; memory is unchanged. Empty: one document per sequence.",
            "one per sequence",
            |s| s.training.document_len.map(|d| d.to_string()).unwrap_or_default(), set_document_len)}
        {super::fields::number(ctx, "Recomputed layers per stage", "training-recompute-layers",
            "Per-stage partial recomputation (Megatron --recompute-method block --recompute-num-layers, one count per pipeline stage, first to last): the first stage holds the most micro-batches in flight, so it recomputes the most. Points need recompute = full and pp = the number of counts. Empty: recompute decides for every layer.",
            "all or none",
            |s| s.training.recompute_layers.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(","), set_recompute_layers)}
    }
}

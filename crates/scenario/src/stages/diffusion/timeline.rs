//! The pipeline timeline of one configuration: host work, each text encoder, the denoising
//! steps (full and cached) with their per-step overheads, and the VAE, laid end to end, plus the
//! engine breakdown of one denoiser step. The app draws it; the report and `tunelab eval` print
//! it. Everything comes from the stage's pricer, so it adds up to the latency the study saw.

use super::price::Priced;
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};
use tunelab_search::Config;

/// One bar of the timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// "host", "text_encoder", "denoise", "denoise_cached", "step_overhead", "vae".
    pub kind: String,
    pub label: String,
    pub start_ms: f64,
    pub ms: f64,
    /// Share of the whole call.
    pub share: f64,
}

/// The timeline of one pipeline call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    pub pipeline: String,
    pub segments: Vec<Segment>,
    pub total_ms: f64,
    pub images_per_s: f64,
    pub steps: u64,
    /// Denoiser time of one full step (CFG included), ms.
    pub step_ms: f64,
    /// Chips per pipeline instance and instances.
    pub chips_per_instance: u64,
    pub replicas: u64,
    /// Output-changing knobs this configuration sets (quality not simulated).
    pub output_changes: Vec<String>,
    /// Each component's share, largest first: (component, share).
    pub shares: Vec<(String, f64)>,
    /// One denoising step by component, ms: the denoiser (full step, CFG included), the
    /// denoiser on a cached step (when step caching is on), the scheduler, CFG combine and loop.
    #[serde(default)]
    pub per_step: Vec<(String, f64)>,
    /// What the call holds or runs beyond one denoiser (two experts in memory and the steps
    /// each runs; reference images encoded); empty for a plain pipeline.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// What Tunelab approximates in the pipeline ("part: how", `pipelines.json`'s
    /// `approximations`), shown beside the timeline in the app (`tunelab eval` prints them with
    /// the model); empty for a pipeline priced as its configs describe it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approximations: Vec<String>,
}

/// Lays a priced pipeline out as segments.
pub fn layout(pipeline: &str, p: &Priced, steps: u64, changes: Vec<String>) -> Timeline {
    let mut segs = Vec::new();
    let mut t = 0.0;
    let total = p.total_ms.max(1e-12);
    let mut push = |kind: &str, label: String, ms: f64| {
        if ms > 0.0 {
            segs.push(Segment { kind: kind.into(), label, start_ms: t, ms, share: ms / total });
            t += ms;
        }
    };
    push("host", "host (latents, post-process)".into(), p.host_ms);
    for (n, ms) in &p.text_encoders {
        push("text_encoder", n.clone(), *ms);
    }
    push("reference_encode", "VAE encoder (reference images)".into(), p.reference_encode_ms);
    push("denoise", format!("{} full steps x {}", p.full_steps, fmt_duration_ms(p.step_full_ms)), p.full_steps * p.step_full_ms);
    push("denoise_cached", format!("{} cached steps x {}", p.cached_steps, fmt_duration_ms(p.step_cached_ms)), p.cached_steps * p.step_cached_ms);
    push("step_overhead", format!("scheduler and loop, {} steps x {}", steps, fmt_duration_ms(p.step_overhead_ms)), (p.full_steps + p.cached_steps) * p.step_overhead_ms);
    push("vae", "VAE decoder".into(), p.vae_ms);
    let mut shares: Vec<(String, f64)> = vec![
        ("text encoders".into(), p.text_encoder_ms() / total),
        ("denoiser".into(), (p.denoise_ms()) / total),
        ("VAE".into(), p.vae_ms / total),
        ("host".into(), p.host_ms / total),
    ];
    shares.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut per_step = vec![("denoiser".to_string(), p.step_full_ms)];
    if p.cached_steps > 0.0 {
        per_step.push(("denoiser, cached step".into(), p.step_cached_ms));
    }
    per_step.push(("scheduler, CFG combine and loop".into(), p.step_overhead_ms));
    let mut notes = Vec::new();
    if p.experts > 1 {
        notes.push(format!("{} experts held in memory; the high-noise expert runs {} of {steps} steps, the low-noise expert {}", p.experts, p.high_noise_steps, steps as f64 - p.high_noise_steps));
    }
    if p.weight_gather_ms > 0.0 {
        let bound = if p.weight_gather_ms >= p.step_compute_ms { "the gather sets the step" } else { "the compute sets the step" };
        notes.push(format!(
            "weights sharded over {} chips (FSDP FULL_SHARD): each step all-gathers the denoiser's {:.1} GB of {} weights block by block over {} ({}), beside its compute ({}): {bound}",
            p.chips_per_instance * p.replicas,
            p.weight_gather_bytes / 1e9,
            p.weight_gather_dtype,
            p.weight_gather_link,
            fmt_duration_ms(p.weight_gather_ms),
            fmt_duration_ms(p.step_compute_ms)
        ));
    }
    if p.lora_rank > 0 {
        notes.push(format!("LoRA rank {} unmerged on {} linear layers per denoiser call (x A, (x A) B, scaling, addition beside each): {} of a full step", p.lora_rank, p.lora_adapters, fmt_duration_ms(p.lora_step_ms)));
    }
    if p.reference_encode_ms > 0.0 {
        notes.push(format!("reference images VAE-encoded once ({}); their tokens join every step's sequence", fmt_duration_ms(p.reference_encode_ms)));
    }
    Timeline {
        notes,
        approximations: Vec::new(),
        per_step, pipeline: pipeline.into(), segments: segs, total_ms: p.total_ms, images_per_s: p.images_per_s, steps, step_ms: p.step_full_ms, chips_per_instance: p.chips_per_instance, replicas: p.replicas, output_changes: changes, shares }
}

/// The timeline of `config` (None: the stage's baseline), priced by the stage's objective.
pub fn timeline(s: &Scenario, config: Option<&Config>) -> Result<Timeline, String> {
    let st = super::setup(s)?;
    let names = st.space.names().to_vec();
    let c = config.cloned().unwrap_or(st.baseline.clone());
    st.space.check(&c)?;
    let mut obj = super::DiffusionObjective { pricer: super::pricer(s)?, names: names.clone(), baseline_steps: super::options(s).steps.unwrap_or(0) };
    obj.baseline_steps = super::options(s).steps.unwrap_or(obj.pricer.pipe.defaults.steps);
    let (k, p) = obj.priced(&c)?;
    let mut t = layout(&obj.pricer.pipe.name, &p, k.steps, super::output_changes(&k, obj.baseline_steps));
    t.approximations = tunelab_sim::workload::diffusers::pipeline_approximations(&obj.pricer.pipe.name);
    Ok(t)
}

/// A duration as people read it, the one formatter of the timeline's times (text, chart, CLI):
/// under 10 s in milliseconds ("512.3 ms", "0.4172 ms"), from 10 s in seconds ("21.67 s",
/// "169.7 s"), four significant digits either way (`metrics::fmt_sig`).
pub fn fmt_duration_ms(ms: f64) -> String {
    use crate::spec::metrics::fmt_sig;
    if ms.is_finite() && ms.abs() >= 10_000.0 { format!("{} s", fmt_sig(ms / 1000.0, 4)) } else { format!("{} ms", fmt_sig(ms, 4)) }
}

/// The unit a chart of these durations reads in, and the divisor from ms: seconds once the
/// longest is 10 s or more (the same threshold as [`fmt_duration_ms`]).
pub fn duration_unit(max_ms: f64) -> (&'static str, f64) {
    if max_ms.is_finite() && max_ms >= 10_000.0 { ("s", 1000.0) } else { ("ms", 1.0) }
}

/// Text for the CLI and the report: one line per segment, then the shares.
pub fn describe(t: &Timeline) -> Vec<String> {
    let mut out = vec![format!("{}: {} per call, {} images/s ({} chip(s) per instance x {} instance(s))", t.pipeline, fmt_duration_ms(t.total_ms), crate::spec::metrics::fmt4(t.images_per_s), t.chips_per_instance, t.replicas)];
    for s in &t.segments {
        out.push(format!("  {:>10}  {:>5.1}%  {}", fmt_duration_ms(s.ms), s.share * 100.0, s.label));
    }
    for n in &t.notes {
        out.push(format!("  {n}"));
    }
    if !t.output_changes.is_empty() {
        out.push(format!("  changes the output (not simulated): {}", t.output_changes.join("; ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::fmt_duration_ms;

    #[test]
    fn durations_read_in_ms_below_ten_seconds_and_in_seconds_from_there() {
        assert_eq!(fmt_duration_ms(21668.7), "21.67 s");
        assert_eq!(fmt_duration_ms(169_712.0), "169.7 s");
        assert_eq!(fmt_duration_ms(9999.4), "9999 ms");
        assert_eq!(fmt_duration_ms(512.345), "512.3 ms");
        assert_eq!(fmt_duration_ms(0.41723), "0.4172 ms");
    }
}

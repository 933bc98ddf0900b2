//! The diffusion pipeline timeline: one bar per configuration (baseline, each strategy's best)
//! laid end to end as the call runs — host work, text encoders, full and cached denoising
//! steps, the per-step scheduler and loop, the VAE — so the share each component takes, and how
//! an optimisation moves it, is read at a glance. A stacked bar chart (`breakdown`) with the
//! pipeline's components as its segments.

use super::breakdown::{BreakdownData, BreakdownRow};
use tunelab_scenario::stages::diffusion::timeline::{duration_unit, fmt_duration_ms, Timeline};

/// The segment kinds in the order a call runs them, with their legend labels.
pub const KINDS: [(&str, &str); 6] = [
    ("host", "host"),
    ("text_encoder", "text encoders"),
    ("denoise", "denoising steps"),
    ("denoise_cached", "cached steps"),
    ("step_overhead", "scheduler + loop"),
    ("vae", "VAE"),
];

/// Chart data for `(label, timeline)` rows: time per component kind, in ms, or in seconds once
/// the longest call takes 10 s or more (`duration_unit`, the timeline's one formatter).
pub fn timeline_data(rows: &[(String, Timeline)]) -> BreakdownData {
    let (unit, div) = duration_unit(rows.iter().map(|r| r.1.total_ms).fold(0.0, f64::max));
    BreakdownData {
        title: format!("Pipeline timeline (one call, {unit})"),
        engines: KINDS.iter().map(|k| k.1.to_string()).collect(),
        rows: rows
            .iter()
            .map(|(label, t)| BreakdownRow {
                label: format!("{label}: {}", fmt_duration_ms(t.total_ms)),
                times: KINDS.iter().map(|(k, _)| t.segments.iter().filter(|s| s.kind == *k).map(|s| s.ms).sum::<f64>() / div).collect(),
            })
            .collect(),
        unit: unit.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_land_in_their_columns_and_sum_to_the_call() {
        let s = tunelab_scenario::bundled_scenario("sd2.1-910B2-diffusion").unwrap();
        let t = tunelab_scenario::stages::diffusion::timeline::timeline(&s, None).unwrap();
        let d = timeline_data(&[("baseline".into(), t.clone())]);
        let sum: f64 = d.rows[0].times.iter().sum();
        assert!((sum - t.total_ms).abs() < 1e-6 * t.total_ms);
        assert!(d.rows[0].times[1] > 0.0, "text encoders drawn");
        let svg = super::super::breakdown::to_svg_string(&d);
        assert!(svg.contains("text encoders") && svg.contains("VAE"));
    }
}

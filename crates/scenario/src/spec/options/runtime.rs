//! `scenario.runtime`: the load curve (a named trace or relative loads), the SLOs and the
//! re-tuning policy of the runtime stage, and their validation. The named traces are closed-form
//! curves, part of the specification so that a scenario is checked without the stage.

use serde::{Deserialize, Serialize};

/// The bundled trace names with a one-line description.
pub const TRACES: &[(&str, &str)] = &[
    ("diurnal_spike", "a day in 48 half-hour steps: night trough, daytime peak, and a 2-hour spike to 1.0 at 19:00"),
    ("diurnal", "the same day without the spike"),
    ("ramp", "load rising linearly from 20% to 100% of the peak over 24 steps"),
    ("steady", "constant load at 60% of the peak over 24 steps"),
];

/// A load curve relative to its peak (values in (0, 1]); multiply by a peak rate in requests/s.
pub fn bundled_trace(name: &str) -> Result<Vec<f64>, String> {
    match name {
        "diurnal_spike" | "diurnal" => {
            let spike = name == "diurnal_spike";
            Ok((0..48)
                .map(|i| {
                    let hour = i as f64 * 0.5;
                    // Cosine day: trough at 04:00, crest at 16:00, between 0.2 and 0.7 of peak.
                    let day = 0.45 - 0.25 * libm::cos((hour - 4.0) / 24.0 * 2.0 * core::f64::consts::PI);
                    if spike && (19.0..21.0).contains(&hour) {
                        1.0
                    } else {
                        day
                    }
                })
                .collect())
        }
        "ramp" => Ok((0..24).map(|i| 0.2 + 0.8 * i as f64 / 23.0).collect()),
        "steady" => Ok(vec![0.6; 24]),
        other => Err(format!(
            "runtime.trace: unknown trace '{}' (known: {})",
            crate::spec::scenario::clip(other),
            TRACES.iter().map(|t| t.0).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// The load curve: a bundled trace name, or relative loads in (0, 1].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TraceSpec {
    Name(String),
    Loads(Vec<f64>),
}

/// `scenario.runtime` options (all optional).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RuntimeOptions {
    /// A bundled trace name, or a list of relative loads in (0, 1].
    pub trace: TraceSpec,
    /// Requests per second at relative load 1.0 (None: see `spike_factor`).
    pub peak_rps: Option<f64>,
    /// Without `peak_rps`, the peak is this multiple of the first chosen configuration's capacity.
    pub spike_factor: f64,
    pub step_minutes: f64,
    /// SLOs (default: the scenario's max_ttft_ms / max_tpot_ms, else 2000 ms and 100 ms).
    pub slo_ttft_ms: Option<f64>,
    pub slo_tpot_ms: Option<f64>,
    /// The latency percentile the SLO is about (0.9: p90).
    pub percentile: f64,
    /// Utilisation a tuned configuration may reach at the load it is tuned for.
    pub headroom: f64,
    /// Evaluations per re-tune (default: a quarter of the budget, at least 8).
    pub retune_budget: Option<usize>,
    /// Re-tune for energy when utilisation falls under this (0: never scale down).
    pub scale_down_below: f64,
}

impl RuntimeOptions {
    /// The trace's name and relative loads; every option checked, naming the field.
    pub fn validate(&self) -> Result<(String, Vec<f64>), String> {
        let (trace_name, rel) = match &self.trace {
            TraceSpec::Name(n) => (n.clone(), bundled_trace(n)?),
            TraceSpec::Loads(v) => {
                if v.is_empty() || v.len() > 1_000 || v.iter().any(|x| !(x.is_finite() && *x > 0.0 && *x <= 1.0)) {
                    return Err("runtime.trace: a custom trace is 1..1000 relative loads in (0, 1]".into());
                }
                ("custom".into(), v.clone())
            }
        };
        if !(self.percentile > 0.0 && self.percentile < 1.0) || !(self.headroom > 0.0 && self.headroom <= 1.0) {
            return Err("runtime: percentile must be in (0, 1) and headroom in (0, 1]".into());
        }
        if self.peak_rps.is_some_and(|p| !(p.is_finite() && p > 0.0)) || !(self.spike_factor.is_finite() && self.spike_factor > 0.0) {
            return Err("runtime: peak_rps and spike_factor must be positive".into());
        }
        if !(self.step_minutes.is_finite() && self.step_minutes > 0.0) || !(0.0..=1.0).contains(&self.scale_down_below) {
            return Err("runtime: step_minutes must be positive and scale_down_below in [0, 1]".into());
        }
        Ok((trace_name, rel))
    }
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            trace: TraceSpec::Name("diurnal_spike".into()),
            peak_rps: None,
            spike_factor: 1.25,
            step_minutes: 30.0,
            slo_ttft_ms: None,
            slo_tpot_ms: None,
            percentile: 0.9,
            headroom: 0.85,
            retune_budget: None,
            scale_down_below: 0.3,
        }
    }
}


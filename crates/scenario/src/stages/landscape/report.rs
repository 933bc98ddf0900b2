//! What a landscape run reports (the true optimum and how close each strategy came) and the
//! one-line label of a scenario's landscape source.

use super::{capitalise, KernelTunerSource, Landscape, LandscapeSource};
use crate::spec::scenario::{clip, Scenario};
use serde::Serialize;
use tunelab_search::Value;

/// The landscape part of a run's report: the true optimum and how close each strategy came.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LandscapeReport {
    pub title: String,
    /// The source as the scenario records it (a dropped file by name and digest).
    pub source: LandscapeSource,
    /// The true optimum (cache best / grid minimum) and where it is.
    pub optimum: Option<f64>,
    pub optimum_config: std::collections::BTreeMap<String, Value>,
    /// What `ratio` means: "best / optimum" (1 is the optimum) or "best - optimum" (0 is).
    pub ratio_label: String,
    /// (strategy, its best, ratio of its best) in lane order.
    pub strategies: Vec<(String, Option<f64>, Option<f64>)>,
}

impl LandscapeReport {
    /// Model and device labels for the report's header: the source's name and where the data
    /// comes from (the cache's device, or "analytic").
    pub fn labels(&self, land: &Landscape) -> (String, String) {
        let name = match &self.source {
            LandscapeSource::Toy(t) => t.function.clone(),
            LandscapeSource::KernelTuner(KernelTunerSource::Bundled(n)) => n.clone(),
            LandscapeSource::KernelTuner(KernelTunerSource::Dropped(d)) => clip(&d.name),
        };
        let device = match land.cache() {
            Some(c) if !c.device_name.is_empty() => clip(&c.device_name),
            Some(_) => "an unnamed device".into(),
            None => format!("a {} x {} grid", land.grid().map_or(0, |g| g.0.len()), land.grid().map_or(0, |g| g.1.len())),
        };
        (name, device)
    }

    /// Plain-text lines for the terminal report.
    pub fn to_text(&self) -> String {
        let f = |x: Option<f64>| x.map(crate::spec::metrics::format_best).unwrap_or_else(|| "-".into());
        let at: Vec<String> = self.optimum_config.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut out = format!("\nlandscape: {}\ntrue optimum {} at {}\n", self.title, f(self.optimum), at.join(", "));
        for (s, b, r) in &self.strategies {
            out.push_str(&format!("  {:<10} best {}, {} {}\n", s, f(*b), self.ratio_label, r.map(|x| format!("{x:.4}")).unwrap_or_else(|| "-".into())));
        }
        out
    }
}

/// A short label of a scenario's landscape source without loading it: "Kernel Tuner cache
/// convolution_MI250X", "Kernel Tuner cache my.json (dropped)", "Branin function, 64 x 64 grid".
pub fn source_label(s: &Scenario) -> String {
    match &s.landscape {
        None => "no landscape".into(),
        Some(LandscapeSource::Toy(t)) => format!("{} function, {} x {} grid", capitalise(&clip(&t.function)), t.resolution, t.resolution),
        Some(LandscapeSource::KernelTuner(KernelTunerSource::Bundled(n))) => format!("Kernel Tuner cache {}", clip(n)),
        Some(LandscapeSource::KernelTuner(KernelTunerSource::Dropped(d))) => format!("Kernel Tuner cache {} (dropped)", clip(&d.name)),
    }
}

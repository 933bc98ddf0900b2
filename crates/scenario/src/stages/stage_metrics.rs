//! The metrics a stage reports, known from the stage alone (before it is built or run), so the
//! page's Goal list offers a stage's own metrics at once: an operator stage never offers TTFT,
//! a diffusion stage never offers tokens/s. The lists are the stages' own `metrics()` (one fact,
//! one place); the built stage's shape may add to them (a deployment's capacity goals, a
//! landscape's own metric).

use crate::Stage;

/// The ids of the metrics `stage` reports, in its objective order (the first is its default
/// goal). A landscape's metric is the landscape's own: empty here.
pub fn metric_ids(stage: Stage) -> Vec<String> {
    let m = match stage {
        Stage::Operator => super::operator::metrics(),
        Stage::Deployment => super::deployment::metrics(),
        Stage::Training => super::training::metrics(),
        Stage::Runtime => super::runtime::runtime_metrics(),
        Stage::Diffusion => return super::diffusion::METRICS.iter().map(|m| m.0.to_string()).collect(),
        Stage::Landscape => Vec::new(),
    };
    m.into_iter().map(|m| m.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_stage_offers_only_its_own_metrics() {
        let op = metric_ids(Stage::Operator);
        assert!(op.iter().any(|m| m == "energy_j") && !op.iter().any(|m| m.starts_with("ttft")), "{op:?}");
        let dep = metric_ids(Stage::Deployment);
        assert!(dep.iter().any(|m| m == "ttft_ms"), "{dep:?}");
        let dif = metric_ids(Stage::Diffusion);
        assert!(dif.iter().any(|m| m == "latency_ms") && !dif.iter().any(|m| m == "tokens_per_s"), "{dif:?}");
        assert!(!metric_ids(Stage::Training).is_empty() && !metric_ids(Stage::Runtime).is_empty());
    }
}

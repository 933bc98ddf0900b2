//! What a view shows of an answer, as the sentences and numbers it shows, built by the engine
//! worker from the analysis the CLI prints (`diagnosis_text`, the same functions `tunelab
//! diagnose` calls), so the page's module links neither the analysis's reader nor its wording
//! (the first load, issue 46's 1 MiB).

use serde::{Deserialize, Serialize};
use tunelab_scenario::diagnosis::Diagnosis;
use tunelab_scenario::diagnosis_text::train_suggestion_line;

/// How many configuration entries and hot spots the panel lists.
pub const CONFIG_SHOWN: usize = 24;
pub const HOT_SPOTS_SHOWN: usize = 8;

/// The diagnosis panel's content (`Diagnosis` read by `diagnosis_text`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiagnosisView {
    /// "Goal: Throughput (maximise) of deployment".
    pub goal_line: String,
    /// The goal's exact value (the page rounds it for reading and keeps it exact in data-value).
    pub goal_value: Option<f64>,
    pub goal_unit: String,
    pub infeasible: Option<String>,
    /// "name=value, ..." of the first `CONFIG_SHOWN` parameters.
    pub config: String,
    /// (metric id, unit, value) in the registry's order; the page labels them from the registry.
    pub metrics: Vec<(String, String, f64)>,
    pub simulated_line: String,
    pub bottleneck_line: String,
    pub cause_chain: Vec<String>,
    /// (operator, share of the step, bound, ms) of the first `HOT_SPOTS_SHOWN` hot spots.
    pub hot_spots: Vec<(String, f64, String, f64)>,
    pub score_rule: String,
    pub suggestions: Vec<SuggestionView>,
    pub trade_offs: Vec<String>,
    pub blocked: Vec<String>,
    pub training: Option<TrainingView>,
    pub note: String,
}

/// One suggestion: its sentence, its effect on the goal, the configuration it proposes
/// ("name=value, ...") and the goal after it (exact).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuggestionView {
    pub line: String,
    pub effect: f64,
    pub config: String,
    pub goal_after: Option<f64>,
}

/// A training step's own diagnosis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainingView {
    pub step_time_ms: f64,
    pub mfu: f64,
    pub memory_gib: f64,
    pub cause_chain: Vec<String>,
    pub suggestions: Vec<String>,
}

impl DiagnosisView {
    pub fn of(d: &Diagnosis) -> DiagnosisView {
        DiagnosisView {
            goal_line: d.goal_line(),
            goal_value: d.goal_value,
            goal_unit: d.goal_unit.clone(),
            infeasible: d.infeasible.clone(),
            config: d.config.iter().map(|(k, v)| format!("{k}={v}")).take(CONFIG_SHOWN).collect::<Vec<_>>().join(", "),
            metrics: d.metrics.iter().map(|m| (m.name.clone(), m.unit.clone(), m.value)).collect(),
            simulated_line: d.simulated_line(),
            bottleneck_line: d.bottleneck_line(),
            cause_chain: d.cause_chain.clone(),
            hot_spots: d.hot_spots.iter().take(HOT_SPOTS_SHOWN).map(|h| (h.name.clone(), h.share, h.bound.clone(), h.time_ms)).collect(),
            score_rule: d.score_rule.clone(),
            suggestions: d.suggestions.iter().map(|s| SuggestionView { line: d.suggestion_line(s), effect: s.effect, config: s.config.describe(&d.names), goal_after: s.goal_after }).collect(),
            trade_offs: d.trade_offs.iter().map(|s| d.suggestion_line(s)).collect(),
            blocked: d.blocked.iter().map(|s| d.suggestion_line(s)).collect(),
            training: d.training.as_ref().map(|t| TrainingView {
                step_time_ms: t.step_time_ms,
                mfu: t.mfu,
                memory_gib: t.memory_gib,
                cause_chain: t.cause_chain.clone(),
                suggestions: t.suggestions.iter().map(train_suggestion_line).collect(),
            }),
            note: d.note.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The view says what `tunelab diagnose` prints: every line of the view is a line (or part
    /// of one) of the CLI's text for the same diagnosis.
    #[test]
    fn the_view_is_the_cli_text() {
        for id in ["llama2-7b-910B2-deployment", "llama2-7b-8x910B2-training"] {
            let s = tunelab_scenario::bundled_scenario(id).unwrap();
            let d = tunelab_scenario::diagnosis::diagnose(&s, None, Default::default()).unwrap();
            let text = d.to_text();
            let v = DiagnosisView::of(&d);
            assert!(text.contains(&v.goal_line) && text.contains(&v.simulated_line), "{id}");
            for l in v.suggestions.iter().map(|s| &s.line).chain(&v.trade_offs).chain(&v.blocked).chain(&v.cause_chain) {
                assert!(text.contains(l.as_str()), "{id}: {l}");
            }
            assert_eq!(v.metrics.len(), d.metrics.len());
            let back: DiagnosisView = serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
            assert_eq!(back, v);
        }
    }
}

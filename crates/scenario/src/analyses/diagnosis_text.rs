//! The diagnosis as people read it: the sentences the app's diagnosis panel shows and the plain
//! text `tunelab diagnose` prints, from one place, so both say the same thing with the same
//! digits (`crate::spec::metrics`' rounding, labels and units).

use super::diagnosis::{Diagnosis, Suggestion};
use super::train_diagnosis::TrainSuggestion;
use crate::spec::metrics::{fmt4, fmt_metric, label, label_unit};

/// One change of the training step's own diagnosis: the step time and memory after it, or why
/// it is not possible.
pub fn train_suggestion_line(s: &TrainSuggestion) -> String {
    match &s.infeasible {
        Some(r) => format!("{}: not possible: {r}", s.title),
        None => format!("{}: step {} ms, {} GiB (score {:.2})", s.title, s.step_time_ms.map(fmt4).unwrap_or_default(), s.memory_gib.map(fmt4).unwrap_or_default(), s.score),
    }
}

/// A relative change as a signed percentage ("+12.5%").
fn pct(x: f64) -> String {
    format!("{}{}%", if x > 0.0 { "+" } else { "" }, fmt4(x * 100.0))
}

impl Diagnosis {
    /// "Goal: tokens/s (maximise) of deployment".
    pub fn goal_line(&self) -> String {
        format!("Goal: {} ({}) of {}", label(&self.goal), if self.goal_higher_is_better { "maximise" } else { "minimise" }, self.stage)
    }

    /// One suggestion, trade-off or blocked change: what changes, the goal before and after,
    /// the effect and the score (or why it is not possible).
    pub fn suggestion_line(&self, s: &Suggestion) -> String {
        let g = &self.goal;
        match (&s.infeasible, s.goal_after, self.goal_value) {
            (Some(r), _, _) => format!("{}: not possible: {r}", s.title),
            (None, Some(a), Some(b)) => {
                let base = format!("{}: {} {} → {} {} ({} for the goal; score {:.2})", s.title, label(g), fmt_metric(g, b), fmt_metric(g, a), self.goal_unit, pct(s.effect), s.score);
                match &s.buys {
                    Some(buys) => format!("{base}; buys {buys}"),
                    None => base,
                }
            }
            _ => s.title.clone(),
        }
    }

    /// "Simulated: one decode step ..., because ...; 12.3 ms".
    pub fn simulated_line(&self) -> String {
        let why = if self.phase_why.is_empty() { String::new() } else { format!(", because {}", self.phase_why) };
        format!("Simulated: {}{why}; {} ms", self.simulated, fmt4(self.step_ms))
    }

    /// "memory 61.2%, compute 30.1%, ...".
    pub fn bottleneck_line(&self) -> String {
        self.bottlenecks.iter().map(|(k, v)| format!("{k} {}%", fmt4(v * 100.0))).collect::<Vec<_>>().join(", ")
    }

    /// The whole diagnosis as plain text, in the panel's order: the goal and every metric,
    /// where the time goes, the root cause, the hot spots, the suggestions, the trade-offs, the
    /// changes that are not possible, the training step's own diagnosis, and the note.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let mut line = |s: String| {
            out.push_str(&s);
            out.push('\n');
        };
        let goal = self.goal_value.map(|v| format!("{} {}", fmt_metric(&self.goal, v), self.goal_unit)).unwrap_or_else(|| "—".into());
        line(format!("{}: {goal}", self.goal_line()));
        if let Some(r) = &self.infeasible {
            line(format!("Infeasible: {r}"));
        }
        line(format!("configuration: {}", self.config.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")));
        for m in &self.metrics {
            line(format!("  {:<40} {:>14}", label_unit(&m.name, &m.unit), fmt_metric(&m.name, m.value)));
        }
        line(String::new());
        if self.simulated.is_empty() && self.hot_spots.is_empty() {
            // A landscape: its values are measurements or a function, with no step to break down.
            line(format!("Where the time goes: {}", super::explore::LANDSCAPE_HAS_NO_OPS));
        } else {
            line("Where the time goes".into());
            line(format!("  {}", self.simulated_line()));
            line(format!("  Time by bottleneck: {}", self.bottleneck_line()));
            line("Root cause".into());
            for (i, c) in self.cause_chain.iter().enumerate() {
                line(format!("  {}. {c}", i + 1));
            }
            line("Hot spots".into());
            for h in self.hot_spots.iter().take(8) {
                line(format!("  {:<44} {:>7}%  {:<10} {:>10} ms", h.name, fmt4(h.share * 100.0), h.bound, fmt4(h.time_ms)));
            }
        }
        line("Suggestions (improve the goal)".into());
        line(format!("  {}", self.score_rule));
        if self.suggestions.is_empty() {
            line("  No single change of one parameter improves the goal: this configuration is a local optimum of the space.".into());
        }
        for (i, s) in self.suggestions.iter().enumerate() {
            line(format!("  {}. {}", i + 1, self.suggestion_line(s)));
        }
        if !self.trade_offs.is_empty() {
            line("Trade-offs (no gain for the goal, or a loss, but they buy something else)".into());
            for (i, s) in self.trade_offs.iter().enumerate() {
                line(format!("  {}. {}", i + 1, self.suggestion_line(s)));
            }
        }
        if !self.blocked.is_empty() {
            line(format!("Changes that are not possible here ({})", self.blocked.len()));
            for s in &self.blocked {
                line(format!("  - {}", self.suggestion_line(s)));
            }
        }
        if let Some(t) = &self.training {
            line("Training step".into());
            line(format!("  step {} ms, MFU {}%, {} GiB per chip", fmt4(t.step_time_ms), fmt4(t.mfu * 100.0), fmt4(t.memory_gib)));
            for (i, c) in t.cause_chain.iter().enumerate() {
                line(format!("  {}. {c}", i + 1));
            }
            for s in &t.suggestions {
                line(format!("  - {}", train_suggestion_line(s)));
            }
        }
        if !self.note.is_empty() {
            line(format!("note: {}", self.note));
        }
        out
    }
}

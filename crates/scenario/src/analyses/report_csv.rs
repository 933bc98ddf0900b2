//! The trials of a run as CSV (the page's download and `tunelab run --csv`): one row per
//! trial, the registry's metric headings, hostile cells neutralised.

use crate::run::Run;
use tunelab_search::{Trial, TrialState};

/// CSV of every trial of every strategy: strategy, id, evaluation, state, every parameter,
/// every metric (full precision, as `format_best`), reason.
pub fn trials_csv(run: &Run) -> String {
    let mut out = String::new();
    let mut head: Vec<String> = vec!["strategy".into(), "id".into(), "evaluation".into(), "state".into()];
    head.extend(run.space().names().iter().cloned());
    head.extend(run.metrics().iter().map(|m| crate::spec::metrics::csv_head(&m.name, &m.unit)));
    head.push("reason".into());
    out.push_str(&head.iter().map(|h| csv_field(h)).collect::<Vec<_>>().join(","));
    out.push('\n');
    for (i, lane) in run.lanes().iter().enumerate() {
        for t in run.trials(i) {
            out.push_str(&csv_field(&lane.spec.name));
            out.push(',');
            out.push_str(&csv_row(t, run.metrics().len()));
        }
    }
    out
}

fn csv_row(t: &Trial, metrics: usize) -> String {
    let state = match t.state {
        TrialState::Ok => "ok",
        TrialState::Infeasible => "infeasible",
        TrialState::Failed => "failed",
    };
    let mut row: Vec<String> = vec![t.id.to_string(), t.evaluation.to_string(), state.into()];
    row.extend(t.config.0.iter().map(|v| csv_field(&v.to_string())));
    row.extend((0..metrics).map(|i| t.values.get(i).map(|v| crate::run::format_best(*v)).unwrap_or_default()));
    row.push(csv_field(t.reason.as_deref().unwrap_or("")));
    row.join(",") + "\n"
}

/// Quotes a CSV field when needed; a leading formula character is neutralised so a spreadsheet
/// never runs a cell from a hostile model name.
fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@']) && s.parse::<f64>().is_err() { format!("'{s}") } else { s.to_string() };
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s }
}

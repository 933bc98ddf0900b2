//! The report as Markdown (`tunelab run --markdown`): the same fields as the JSON and the text,
//! as tables a reviewer can paste into an issue or a design note; a diffusion run ends with its
//! pipeline, per call (each component's time and share) and per denoising step.

use super::report::Report;
use crate::stages::diffusion::timeline::Timeline;

fn num(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into())
}

/// Markdown cells keep a '|' from a name out of the table's structure.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn pipeline_table(out: &mut String, label: &str, t: &Timeline) {
    use crate::stages::diffusion::timeline::fmt_duration_ms as dur;
    out.push_str(&format!("\n### Pipeline, {label}: {} per call, {} images/s\n\n", dur(t.total_ms), crate::spec::metrics::fmt4(t.images_per_s)));
    out.push_str("| component | time | share |\n|---|---|---|\n");
    for s in &t.segments {
        out.push_str(&format!("| {} | {} | {:.1}% |\n", cell(&s.label), dur(s.ms), s.share * 100.0));
    }
    out.push_str("\n| one denoising step | time |\n|---|---|\n");
    for (n, ms) in &t.per_step {
        out.push_str(&format!("| {} | {} |\n", cell(n), dur(*ms)));
    }
    if !t.output_changes.is_empty() {
        out.push_str(&format!("\nChanges the output (quality not simulated): {}.\n", cell(&t.output_changes.join("; "))));
    }
    // What the pipeline approximates (the timeline's lines; `tunelab eval` prints the same).
    if !t.approximations.is_empty() {
        out.push('\n');
        for a in &t.approximations {
            out.push_str(&format!("- approximates {}\n", cell(a)));
        }
    }
}

impl Report {
    /// The report as Markdown.
    pub fn to_markdown(&self) -> String {
        let mut out = format!("# {}\n\n{} stage, {} on {}, seed {}\n\n", cell(if self.name.is_empty() { "Tunelab report" } else { &self.name }), self.stage, cell(&self.model), cell(&self.device), self.seed);
        match self.best {
            Some(b) => out.push_str(&format!("Best {}: **{}** {} ({})\n", self.metric, crate::run::format_best(b), self.unit, cell(self.best_strategy.as_deref().unwrap_or("-")))),
            None => out.push_str(&format!("Best {}: none (no feasible configuration)\n", self.metric)),
        }
        if !self.prediction_band.is_empty() {
            out.push_str(&format!("\n{}\n", cell(&self.prediction_band)));
        }
        // The headline's workload spread, and a change within it not called a gain (issue 45).
        if let Some(sp) = &self.spread {
            out.push_str(&format!("\n{}\n", cell(&sp.describe())));
        }
        if let Some(l) = &self.load_bound {
            out.push_str(&format!("\n{}\n", cell(l)));
        }
        out.push_str("\n| metric | before | after | change |\n|---|---|---|---|\n");
        for c in &self.comparison {
            let pct = c.change_pct.map(|p| format!("{p:+.1}%")).unwrap_or_default() + if c.within_spread { " (within the workload spread: not a gain)" } else { "" };
            out.push_str(&format!("| {} ({}) | {} | {} | {pct} |\n", c.metric, c.unit, num(c.before), num(c.after)));
        }
        if !self.measures.is_empty() {
            out.push_str("\n## Measures taken\n\n");
            for m in &self.measures {
                out.push_str(&format!("- {}: {} -> {}\n", m.param, cell(&m.before.to_string()), cell(&m.after.to_string())));
            }
        }
        out.push_str("\n## Strategies\n\n| strategy | best | evaluations | infeasible |\n|---|---|---|---|\n");
        for s in &self.strategies {
            out.push_str(&format!("| {} | {} | {} | {} |\n", cell(&s.strategy), s.best.map(crate::run::format_best).unwrap_or_else(|| "-".into()), s.evaluations, s.infeasible));
        }
        if let Some(p) = &self.pipeline {
            out.push_str("\n## Pipeline timeline\n");
            pipeline_table(&mut out, "baseline", &p.baseline);
            if let Some(b) = &p.best {
                pipeline_table(&mut out, "best", b);
            }
        }
        if !self.model_identity.is_empty() {
            out.push_str("\n## Model\n\n");
            for l in &self.model_identity {
                out.push_str(&format!("- {}\n", cell(l)));
            }
        }
        if !self.notes.is_empty() {
            out.push_str("\n## Notes\n\n");
            for n in &self.notes {
                out.push_str(&format!("- {}\n", cell(n)));
            }
        }
        out
    }
}

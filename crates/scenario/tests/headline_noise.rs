//! Headline noise (issue 45 item 2), over every bundled serving scenario: the headline's spread
//! over workload samples is under 1% or shown (report text, Markdown), and a change of the
//! headline within that spread is not called a gain anywhere the report says it.

use tunelab_scenario::stages::capacity::spread::{self, Spread};
use tunelab_scenario::{bundled_scenarios, Run};

/// The goal's row of a rendered comparison table (the row starts with `start`).
fn goal_line<'a>(text: &'a str, start: &str) -> Option<&'a str> {
    text.lines().find(|l| l.starts_with(start) && l.contains('%'))
}

#[test]
fn every_bundled_serving_headline_states_its_spread_and_calls_no_change_within_it_a_gain() {
    let mut checked = Vec::new();
    for (id, s) in bundled_scenarios() {
        let mut s = s.unwrap_or_else(|e| panic!("{id}: {e}"));
        if !spread::applies(&s) {
            continue;
        }
        // A short study: the property is about how its headline is reported, not its optimum.
        s.budget = 4;
        let mut run = Run::new(&s).unwrap_or_else(|e| panic!("{id}: {e}"));
        run.run_to_end();
        let Some((_, best)) = run.overall_best() else {
            checked.push(format!("{id}: no feasible configuration in 4 trials"));
            continue;
        };
        let sp: Spread = spread::headline(&s, run.space().names(), &best.config).unwrap_or_else(|e| panic!("{id}: {e}")).expect("a serving scenario has a spread");
        assert_eq!(sp.samples.len() as u64, spread::SAMPLES, "{id}");
        let report = run.report().with_spread(Some(sp.clone()));
        let text = report.to_text();
        let md = report.to_markdown();
        // Under 1%, or shown wherever the headline is.
        if !(sp.half_range_pct < 1.0) {
            assert!(text.contains(&sp.describe()), "{id}: the spread {:.2}% is not shown in the report text", sp.half_range_pct);
            assert!(md.contains("workload spread"), "{id}: the spread {:.2}% is not shown in the Markdown report", sp.half_range_pct);
            assert!(sp.describe().contains("not a gain"), "{id}");
        }
        // The headline's change: within the spread it is marked, and the mark is in both renderings.
        let goal = report.comparison.iter().find(|c| c.metric == report.metric).unwrap_or_else(|| panic!("{id}: the goal has a comparison row"));
        let label = tunelab_scenario::spec::metrics::label_unit(&goal.metric, &goal.unit);
        if let Some(p) = goal.change_pct {
            let inside = p.abs() <= sp.half_range_pct;
            assert_eq!(goal.within_spread, inside, "{id}: change {p:+.2}% vs spread {:.2}%", sp.half_range_pct);
            for (kind, rendered) in [("text", &text), ("markdown", &md)] {
                let start = if kind == "text" { label.clone() } else { format!("| {} (", goal.metric) };
                let line = goal_line(rendered, &start).unwrap_or_else(|| panic!("{id}: no {kind} row for {label}"));
                assert_eq!(line.contains("not a gain"), inside, "{id} ({kind}): {line}");
            }
        }
        checked.push(format!("{id}: {} +-{:.2}% over {} samples of {} requests, change {:?}", sp.metric, sp.half_range_pct, sp.samples.len(), sp.requests, goal.change_pct.map(|p| format!("{p:+.2}%"))));
    }
    eprintln!("{}", checked.join("\n"));
    assert!(checked.len() >= 8, "{checked:?}");
}

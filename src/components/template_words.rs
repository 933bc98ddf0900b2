//! A template's preview in human terms: each changed field by the name the page gives it
//! ("Max TTFT (ms)", "Goal") instead of its JSON path, numbers rounded for reading (about four
//! significant digits: "19", not "18.99898052215576"), the goal by its metric's label.
//!
//! `templates::preview` lists the changes as "path: before → after"; this only rewords them,
//! so nothing it lists is dropped (an unknown path is still shown, with its dots as " › ").

use tunelab_scenario::metrics::{fmt4, label};
use tunelab_scenario::Scenario;

/// Names of the fields a template changes, as the scenario panel labels them.
const NAMES: &[(&str, &str)] = &[
    ("device", "Chip"),
    ("stage", "Stage"),
    ("budget", "Budget (evaluations)"),
    ("seed", "Seed"),
    ("name", "Scenario name"),
    ("description", "Description"),
    ("strategy.name", "Strategy"),
    ("strategy.options", "Strategy options"),
    ("compare", "Strategies run beside it"),
    ("constraints.max_ttft_ms", "Max TTFT (ms)"),
    ("constraints.max_tpot_ms", "Max TPOT (ms)"),
    ("constraints.max_memory_gib", "Max memory per chip (GiB)"),
    ("constraints.max_power_w", "Max power (W)"),
    ("workload.batch", "Batch"),
    ("workload.input_len", "Input tokens"),
    ("workload.output_len", "Output tokens"),
    ("workload.dynamic_batches", "Batches of a dynamic-batch tuning"),
    ("workload.micro_batch", "Micro-batch"),
    ("workload.seq_len", "Sequence length"),
    ("workload.global_batch", "Global batch"),
    ("training.chips", "Chips"),
    ("training.framework", "Framework"),
];

/// The label of a JSON path: a known field's, else the path made readable
/// ("deployment.serving.max_num_seqs" -> "deployment › serving › max num seqs").
pub fn path_label(path: &str) -> String {
    if let Some((_, n)) = NAMES.iter().find(|(p, _)| *p == path) {
        return n.to_string();
    }
    if let Some(p) = path.strip_prefix("space.") {
        return format!("Search space: {}", p.replace('_', " "));
    }
    path.split('.').map(|p| p.replace('_', " ")).collect::<Vec<_>>().join(" › ")
}

/// A value as shown: numbers (alone or inside a list) rounded, "none" kept.
pub fn value_words(v: &str) -> String {
    let t = v.trim();
    if let Ok(x) = t.parse::<f64>() {
        return fmt4(x);
    }
    if let Ok(serde_json::Value::Array(a)) = serde_json::from_str::<serde_json::Value>(t) {
        if a.iter().all(|x| x.is_number()) {
            return a.iter().filter_map(|x| x.as_f64()).map(fmt4).collect::<Vec<_>>().join(", ");
        }
    }
    t.to_string()
}

/// The preview's lines in human terms; the goal's lines become one "Goal: A → B" line.
pub fn human_lines(before: &Scenario, after: &Scenario, lines: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut goal_done = false;
    for l in lines {
        let Some((path, change)) = l.split_once(": ") else {
            out.push(l.clone());
            continue;
        };
        if path.starts_with("objectives") {
            if !goal_done {
                goal_done = true;
                let (a, amax) = tunelab_scenario::context::goal(before);
                let (b, bmax) = tunelab_scenario::context::goal(after);
                let dir = |m: bool| if m { "maximise" } else { "minimise" };
                let others: Vec<String> = after.objectives.iter().map(|o| label(&o.metric)).filter(|x| *x != label(&b)).collect();
                let then = if others.is_empty() { String::new() } else { format!(" (then {})", others.join(", ")) };
                out.push(format!("Goal: {} {} → {} {}{then}", dir(amax), label(&a), dir(bmax), label(&b)));
            }
            continue;
        }
        let (a, b) = change.split_once(" → ").unwrap_or((change, ""));
        out.push(format!("{}: {} → {}", path_label(path), value_words(a), value_words(b)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_numbers_read_as_people_say_them() {
        assert_eq!(path_label("constraints.max_ttft_ms"), "Max TTFT (ms)");
        assert_eq!(path_label("deployment.serving.max_num_seqs"), "deployment › serving › max num seqs");
        assert_eq!(value_words("18.99898052215576"), "19");
        assert_eq!(value_words("[1, 8, 32]"), "1, 8, 32");
        assert_eq!(value_words("none"), "none");
    }

    #[test]
    fn every_bundled_template_previews_without_raw_paths_or_long_numbers() {
        let s = Scenario::default();
        for t in tunelab_scenario::templates::bundled_templates() {
            let Ok((next, lines)) = tunelab_scenario::templates::preview(&t, &s) else { continue };
            for l in human_lines(&s, &next, &lines) {
                assert!(!l.contains("constraints.") && !l.contains("workload.") && !l.contains("objectives"), "{}: {l}", t.name);
                // No number with more than 6 digits after a decimal point.
                assert!(!l.split(|c: char| !(c.is_ascii_digit() || c == '.')).any(|w| w.split_once('.').is_some_and(|(_, f)| f.len() > 4)), "{}: {l}", t.name);
            }
        }
    }
}

//! Every bundled scenario's diagnosis agrees with itself and with the configuration it prices
//! (issue 46): the roofline sentence is said from the operator's own side of the ridge; the
//! step's parallel layout names ep, dp and tp as the plan has them (ep = tp, or tp x dp with
//! data-parallel attention); a speculative step names the priced configuration's draft tokens;
//! throughput per chip is the throughput over every chip the configuration uses; every metric
//! has a registry label and the registry's unit; the goal is the first metric.
//!
//! Each scenario is diagnosed at its baseline and at its best suggested neighbour (a second,
//! different configuration), both priced by the study's own objective.

use tunelab_scenario::diagnosis::{diagnose, Diagnosis, Weights};
use tunelab_scenario::{bundled_scenarios, metrics, Scenario, Stage};
use tunelab_search::Config;

/// The number right after `key` in `text` ("ep = tp = 4" with key "ep = tp = " -> 4).
fn number_after(text: &str, key: &str) -> Option<f64> {
    let at = text.find(key)? + key.len();
    let digits: String = text[at..].chars().take_while(|c| c.is_ascii_digit() || *c == '.' || *c == 'e' || *c == '-').collect();
    digits.trim_end_matches('.').parse().ok()
}

fn int(d: &Diagnosis, name: &str) -> Option<i64> {
    d.config.get(name).and_then(|v| v.as_i64().or_else(|| v.as_str().and_then(|s| s.parse().ok())))
}

fn on(d: &Diagnosis, name: &str) -> bool {
    d.config.get(name).is_some_and(|v| v.as_str() == Some("on") || v.as_i64() == Some(1))
}

/// The checks, each failure naming the scenario and what disagreed.
fn check(id: &str, s: &Scenario, d: &Diagnosis) -> Vec<String> {
    let mut bad = Vec::new();
    // Roofline wording from the point's side of the ridge.
    for line in &d.cause_chain {
        if let (Some(x), Some(r)) = (line.find("FLOP/byte").and_then(|i| line[..i].trim_end().rsplit(' ').next()?.parse::<f64>().ok()), number_after(line, "ridge point of ")) {
            let says_below = line.contains("below the chip's ridge");
            let says_above = line.contains("above the chip's ridge");
            if !(says_below || says_above) {
                bad.push(format!("{id}: a roofline sentence without its side of the ridge: {line}"));
            }
            if says_below && x >= r * 1.001 || says_above && x < r * 0.999 {
                bad.push(format!("{id}: {x} FLOP/byte against ridge {r} is said on the wrong side: {line}"));
            }
            if line.contains("HBM-bound") && says_above && !line.contains("its tiles move more bytes") && !line.contains("MTE2") {
                bad.push(format!("{id}: memory-bound above the ridge without the reason: {line}"));
            }
        }
    }
    // One definition of ep, dp and tp.
    let text = &d.simulated;
    let tp = int(d, "tp").unwrap_or(1);
    let dp = int(d, "dp").unwrap_or(1);
    if text.contains("expert parallel") {
        if let Some(ep) = number_after(text, "ep = tp x dp = ") {
            if ep as i64 != tp * dp || dp <= 1 {
                bad.push(format!("{id}: ep {ep} with tp {tp} and dp {dp}: {text}"));
            }
        } else if let Some(ep) = number_after(text, "ep = tp = ") {
            if ep as i64 != tp || dp > 1 {
                bad.push(format!("{id}: ep {ep} with tp {tp} and dp {dp}: {text}"));
            }
        } else {
            bad.push(format!("{id}: expert parallel without its degree: {text}"));
        }
        if !on(d, "expert_parallel") && d.config.contains_key("expert_parallel") {
            bad.push(format!("{id}: the step says expert parallel but the configuration has it off"));
        }
    }
    if dp > 1 && s.stage == Stage::Deployment && !text.contains(&format!("dp {dp}")) && !text.contains("prefill") {
        bad.push(format!("{id}: dp {dp} in the configuration, not in the step: {text}"));
    }
    // Draft tokens from the priced configuration.
    if let Some(k) = int(d, "num_speculative_tokens") {
        if let Some(said) = number_after(text, "draft's ") {
            if said as i64 != k {
                bad.push(format!("{id}: the configuration has {k} draft tokens, the step says {said}: {text}"));
            }
        }
    }
    // Every metric named by the registry, in the registry's unit; the goal is the first metric.
    for m in &d.metrics {
        let info = metrics::info(&m.name);
        if info.id.is_empty() {
            bad.push(format!("{id}: metric {} is not in the registry", m.name));
        } else if !info.percent && info.unit != m.unit {
            bad.push(format!("{id}: metric {} reported in '{}', the registry says '{}'", m.name, m.unit, info.unit));
        }
    }
    if d.metrics.first().map(|m| m.value) != d.goal_value {
        bad.push(format!("{id}: the goal {:?} is not the first metric", d.goal_value));
    }
    // Throughput per chip is the throughput over every chip the configuration uses.
    let value = |n: &str| d.metrics.iter().find(|m| m.name == n).map(|m| m.value);
    if let (Some(total), Some(per_chip)) = (value("tokens_per_s"), value("tokens_per_s_per_chip")) {
        let chips = match s.stage {
            Stage::Training => Some(s.training.chips as f64),
            Stage::Deployment if !d.config.contains_key("pd") || d.config.get("pd").and_then(|v| v.as_str()) == Some("colocated") => Some((tp * dp) as f64),
            _ => None,
        };
        if let Some(chips) = chips {
            if (per_chip * chips - total).abs() > 1e-6 * total.abs().max(1.0) {
                bad.push(format!("{id}: throughput per chip {per_chip} x {chips} chips != throughput {total}"));
            }
        }
    }
    bad
}

#[test]
fn every_bundled_diagnosis_agrees_with_itself() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for (id, s) in bundled_scenarios() {
        let s = s.unwrap_or_else(|e| panic!("{id}: {e}"));
        let d = match diagnose(&s, None, Weights::default()) {
            Ok(d) => d,
            Err(e) => panic!("{id}: the baseline's diagnosis failed: {e}"),
        };
        bad.extend(check(id, &s, &d));
        checked += 1;
        // A second configuration: the best suggested change.
        if let Some(sg) = d.suggestions.first() {
            let c: Config = sg.config.clone();
            match diagnose(&s, Some(&c), Weights::default()) {
                Ok(d2) => {
                    bad.extend(check(id, &s, &d2));
                    checked += 1;
                }
                Err(e) => bad.push(format!("{id}: the suggestion {} cannot be diagnosed: {e}", sg.title)),
            }
        }
    }
    println!("{checked} diagnoses checked");
    assert!(checked >= 20, "only {checked} diagnoses");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_roofline_sentence_takes_the_point_side_of_the_ridge() {
    let d = tunelab_sim::bundled_device("910B2").unwrap();
    let ridge = tunelab_scenario::diagnosis::ridge_point(&d);
    let above = tunelab_scenario::diagnosis::roofline_words(ridge * 1.4, 100.0, tunelab_sim::estimate::Bound::Hbm, &d);
    assert!(above.contains("above the chip's ridge point") && above.contains("its tiles move more bytes"), "{above}");
    let below = tunelab_scenario::diagnosis::roofline_words(ridge * 0.5, 100.0, tunelab_sim::estimate::Bound::Hbm, &d);
    assert!(below.contains("below the chip's ridge point") && !below.contains("tiles"), "{below}");
    let compute_below = tunelab_scenario::diagnosis::roofline_words(ridge * 0.5, 100.0, tunelab_sim::estimate::Bound::Cube, &d);
    assert!(compute_below.contains("keep the data on chip"), "{compute_below}");
}

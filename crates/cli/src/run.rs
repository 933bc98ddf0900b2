//! `tunelab run SCENARIO.json [--progress] [--json] [--out report.json]`: tunes a scenario with
//! the same engine as the browser app and prints its report.
//!
//! Progress lines go to stderr so that `--json` output on stdout stays one parseable document.

use crate::args::Args;
use tunelab_scenario::{Run, Scenario};

const USAGE: &str = "usage: tunelab run SCENARIO.json [--progress] [--json] [--out report.json] [--csv trials.csv]";

/// Largest scenario file read (a scenario is a few KB; an inline model a few hundred).
const MAX_FILE: u64 = 8 * 1024 * 1024;

/// Entry point of the subcommand.
pub fn main(args: &[String]) -> Result<(), String> {
    let a = Args::parse(args, &["progress", "json"], &["out", "csv"]).map_err(|e| format!("{e}\n{USAGE}"))?;
    let path = match a.positional.as_slice() {
        [p] => p,
        [] => return Err(format!("missing the scenario file\n{USAGE}")),
        [_, extra, ..] => return Err(format!("unexpected argument '{extra}'\n{USAGE}")),
    };
    let scenario = load(path)?;
    let mut run = Run::new(&scenario).map_err(|e| format!("scenario '{path}': {e}"))?;
    for n in run.notes() {
        eprintln!("note: {n}");
    }
    let primary = run.metrics().first().cloned().ok_or("the stage reports no metrics")?;
    let several = run.lanes().len() > 1;
    while !run.is_done() {
        let p = run.step(256);
        if a.flag("progress") {
            for g in &p.generations {
                let line = g.describe(&primary);
                if several {
                    eprintln!("[{}] {line}", g.strategy);
                } else {
                    eprintln!("{line}");
                }
            }
        }
    }
    let report = run.report();
    let json = report.to_json();
    if let Some(out) = a.get("out") {
        std::fs::write(out, &json).map_err(|e| format!("cannot write '{out}': {e}"))?;
    }
    if let Some(csv) = a.get("csv") {
        std::fs::write(csv, tunelab_scenario::report::trials_csv(&run, 0)).map_err(|e| format!("cannot write '{csv}': {e}"))?;
    }
    if a.flag("json") {
        println!("{}", serde_json::to_string(&report).map_err(|e| format!("cannot encode the report: {e}"))?);
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}

/// Reads and validates a scenario file (size-bounded).
pub fn load(path: &str) -> Result<Scenario, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read scenario '{path}': {e}"))?;
    if meta.len() > MAX_FILE {
        return Err(format!("scenario '{path}' is {} bytes; at most {MAX_FILE}", meta.len()));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read scenario '{path}': {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| format!("scenario '{path}' is not UTF-8 text"))?;
    Scenario::from_json(&text).map_err(|e| format!("scenario '{path}': {e}"))
}

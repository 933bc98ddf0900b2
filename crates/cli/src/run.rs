//! `tunelab run SCENARIO.json [--progress] [--json] [--out report.json]`: tunes a scenario with
//! the same engine as the browser app and prints its report.
//!
//! Progress lines go to stderr so that `--json` output on stdout stays one parseable document.

use crate::args::Args;
use tunelab_scenario::{Run, Scenario};

const USAGE: &str = "usage: tunelab run SCENARIO.json [--progress] [--json] [--out report.json] [--csv trials.csv]\n                   [--warm-from KB.json] [--save-case KB.json]";

/// Largest scenario file read (a scenario is a few KB; an inline model a few hundred).
const MAX_FILE: u64 = 8 * 1024 * 1024;

/// Entry point of the subcommand.
pub fn main(args: &[String]) -> Result<(), String> {
    let a = Args::parse(args, &["progress", "json"], &["out", "csv", "warm-from", "save-case"]).map_err(|e| format!("{e}\n{USAGE}"))?;
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
    if let Some(kb_path) = a.get("warm-from") {
        let kb = read_kb(kb_path, true)?;
        let fp = tunelab_scenario::cases::fingerprint_of(&scenario)?;
        let earlier = kb.warm_trials(&fp, run.space(), run.metrics(), WARM_LIMIT);
        let kept = run.warm_start(&earlier)?;
        eprintln!("note: warm start from '{kb_path}': {kept} earlier trials of similar cases");
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
    if let Some(kb_path) = a.get("save-case") {
        let mut kb = read_kb(kb_path, false)?;
        let title = if scenario.name.is_empty() { path.clone() } else { scenario.name.clone() };
        kb.add(tunelab_scenario::cases::case_from_run(&run, &title)?);
        std::fs::write(kb_path, kb.to_json()).map_err(|e| format!("cannot write '{kb_path}': {e}"))?;
        eprintln!("note: saved this run as a case in '{kb_path}' ({} cases)", kb.cases.len());
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

/// Most earlier trials handed to a warm start (the best cases' trials first).
const WARM_LIMIT: usize = 200;

/// Reads a knowledge-base file; a missing file is an empty base unless `must_exist`. A corrupt
/// file is an error here (the CLI never overwrites what it could not read).
fn read_kb(path: &str, must_exist: bool) -> Result<tunelab_scenario::knowledge::KnowledgeBase, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if !must_exist && e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read knowledge base '{path}': {e}")),
    };
    let loaded = tunelab_scenario::knowledge::KnowledgeBase::load(&text);
    match loaded.set_aside {
        Some((why, _)) => Err(format!("knowledge base '{path}': {why}")),
        None => Ok(loaded.kb),
    }
}

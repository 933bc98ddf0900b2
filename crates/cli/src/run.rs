//! `tunelab run SCENARIO.json [--progress] [--json | --markdown] [--out report.json]`: tunes a scenario with
//! the same engine as the browser app and prints its report.
//!
//! Progress lines go to stderr so that `--json` output on stdout stays one parseable document.

use tunelab_scenario::{Run, Scenario};

/// Arguments of `tunelab run`.
#[derive(clap::Args)]
pub struct Args {
    /// The scenario file (as saved by the app or written by hand).
    #[arg(value_name = "SCENARIO.json")]
    scenario: String,
    /// Print each generation's progress on stderr.
    #[arg(long)]
    progress: bool,
    /// Print the report as one JSON document on stdout.
    #[arg(long)]
    json: bool,
    /// Print the report as Markdown on stdout (tables; a diffusion run's pipeline per call and per step).
    #[arg(long, conflicts_with = "json")]
    markdown: bool,
    /// Skip pricing the best configuration on other request samples (the headline's workload
    /// spread a serving report carries).
    #[arg(long)]
    no_spread: bool,
    /// Also write the JSON report to this file.
    #[arg(long, value_name = "report.json")]
    out: Option<String>,
    /// Also write every trial as CSV to this file.
    #[arg(long, value_name = "trials.csv")]
    csv: Option<String>,
    /// Warm-start from the similar cases in this knowledge base.
    #[arg(long, value_name = "KB.json")]
    warm_from: Option<String>,
    /// Save this run as a case in this knowledge base (created if missing).
    #[arg(long, value_name = "KB.json")]
    save_case: Option<String>,
    /// Landscape stage: the Kernel Tuner cache file (.json or .json.gz) the scenario names, a
    /// dropped one or a bundled one kept elsewhere (its SHA-256 is checked either way).
    #[arg(long, value_name = "CACHE.json[.gz]")]
    cache: Option<String>,
}

/// Largest scenario file read (a scenario is a few KB; an inline model a few hundred).
const MAX_FILE: u64 = 8 * 1024 * 1024;

/// Entry point of the subcommand.
pub fn main(a: Args) -> Result<(), String> {
    let path = &a.scenario;
    let scenario = load(path)?;
    let mut run = open(path, &scenario, a.cache.as_deref())?;
    for n in run.notes() {
        eprintln!("note: {n}");
    }
    if let Some(kb_path) = a.warm_from.as_deref() {
        let kb = read_kb(kb_path, true)?;
        let fp = tunelab_scenario::cases::fingerprint_of(&scenario)?;
        let earlier = kb.warm_trials(&fp, run.space(), run.metrics(), tunelab_scenario::knowledge::WARM_LIMIT);
        let kept = run.warm_start(&earlier)?;
        eprintln!("note: warm start from '{kb_path}': {kept} configurations of similar cases, re-priced on this scenario (listed in the report)");
    }
    let primary = run.metrics().first().cloned().ok_or("the stage reports no metrics")?;
    let several = run.lanes().len() > 1;
    while !run.is_done() {
        let p = run.step(256);
        if a.progress {
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
    // The headline's spread over request samples (a serving scenario): the best configuration
    // priced on other samples by the same objective (`stages::capacity::spread`).
    let spread = match run.overall_best() {
        Some((_, t)) if !a.no_spread => tunelab_scenario::stages::capacity::spread::headline(run.scenario(), run.space().names(), &t.config)?,
        _ => None,
    };
    let report = run.report().with_spread(spread);
    let json = report.to_json();
    if let Some(out) = a.out.as_deref() {
        std::fs::write(out, &json).map_err(|e| format!("cannot write '{out}': {e}"))?;
    }
    if let Some(csv) = a.csv.as_deref() {
        std::fs::write(csv, tunelab_scenario::report::trials_csv(&run)).map_err(|e| format!("cannot write '{csv}': {e}"))?;
    }
    if let Some(kb_path) = a.save_case.as_deref() {
        let mut kb = read_kb(kb_path, false)?;
        let title = if scenario.name.is_empty() { path.clone() } else { scenario.name.clone() };
        kb.add(tunelab_scenario::cases::case_from_run(&run, &title)?);
        std::fs::write(kb_path, kb.to_json()).map_err(|e| format!("cannot write '{kb_path}': {e}"))?;
        eprintln!("note: saved this run as a case in '{kb_path}' ({} cases)", kb.cases.len());
    }
    if a.json {
        println!("{}", serde_json::to_string(&report).map_err(|e| format!("cannot encode the report: {e}"))?);
    } else if a.markdown {
        print!("{}", report.to_markdown());
    } else {
        // A diffusion report ends with its pipeline timeline (baseline and best).
        print!("{}", report.to_text());
    }
    Ok(())
}

/// The bytes of the cache a landscape scenario needs: `--cache FILE` when given, else a bundled
/// cache from assets/kernel-tuner/ (looked for beside the current directory, beside the scenario
/// file's folder, and in the source tree this binary was built from).
fn landscape_bytes(path: &str, need: &tunelab_scenario::stages::landscape::Needed, cache: Option<&str>) -> Result<Vec<u8>, String> {
    use tunelab_scenario::stages::landscape::Needed;
    if let Some(f) = cache {
        return read_cache(f);
    }
    match need {
        Needed::Dropped { message, .. } => Err(format!("scenario '{path}' replays a dropped cache: give the file with --cache FILE ({message})")),
        Needed::Bundled { file, .. } => {
            let scenario_dir = std::path::Path::new(path).parent().map(|p| p.join("..").join("kernel-tuner"));
            let candidates: Vec<std::path::PathBuf> = [
                Some(std::path::PathBuf::from("assets/kernel-tuner")),
                scenario_dir,
                Some(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/kernel-tuner")),
            ]
            .into_iter()
            .flatten()
            .map(|d| d.join(file))
            .collect();
            match candidates.iter().find(|p| p.is_file()) {
                Some(p) => read_cache(&p.to_string_lossy()),
                None => Err(format!(
                    "scenario '{path}': the bundled cache {file} is not in {}; give it with --cache FILE",
                    candidates.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
                )),
            }
        }
    }
}

/// Reads a cache file, refusing one larger than a cache may be (before reading it).
fn read_cache(f: &str) -> Result<Vec<u8>, String> {
    let max = tunelab_search::kernel_tuner::MAX_CACHE_BYTES as u64;
    let meta = std::fs::metadata(f).map_err(|e| format!("cannot read cache '{f}': {e}"))?;
    if meta.len() > max {
        return Err(format!("cache '{f}' is {} bytes; at most {max}", meta.len()));
    }
    std::fs::read(f).map_err(|e| format!("cannot read cache '{f}': {e}"))
}

/// The run of a scenario read from `path`: a landscape of a Kernel Tuner cache gets its cache
/// (`--cache FILE`, or the bundled one the scenario names), every other stage builds itself.
/// `tunelab run`, `eval`, `guards` and `diagnose` open their scenario here.
pub fn open(path: &str, scenario: &Scenario, cache: Option<&str>) -> Result<Run, String> {
    match tunelab_scenario::stages::landscape::needs_bytes(scenario) {
        Some(need) => {
            let bytes = landscape_bytes(path, &need, cache)?;
            let land = tunelab_scenario::stages::landscape::Landscape::build(scenario, Some(&bytes)).map_err(|e| format!("scenario '{path}': {e}"))?;
            Run::with_landscape(scenario, land)
        }
        None if cache.is_some() => return Err(format!("--cache: scenario '{path}' is not a landscape of a Kernel Tuner cache, so it reads no cache file")),
        None => Run::new(scenario),
    }
    .map_err(|e| format!("scenario '{path}': {e}"))
}

/// Reads and validates a scenario file (size-bounded).
pub fn load(path: &str) -> Result<Scenario, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read scenario '{path}': {e}"))?;
    if meta.len() > MAX_FILE {
        return Err(format!("scenario '{path}' is {} bytes; at most {MAX_FILE}", meta.len()));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read scenario '{path}': {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| format!("scenario '{path}' is not UTF-8 text"))?;
    let (s, unknown) = Scenario::from_json_reporting(&text).map_err(|e| format!("scenario '{path}': {e}"))?;
    crate::args::unknown_keys(&format!("scenario '{path}'"), &unknown)?;
    Ok(s)
}

/// Reads a knowledge-base file; a missing file is an empty base unless `must_exist`. A corrupt
/// file is an error here (the CLI never overwrites what it could not read).
fn read_kb(path: &str, must_exist: bool) -> Result<tunelab_scenario::knowledge::KnowledgeBase, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if !must_exist && e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read knowledge base '{path}': {e}")),
    };
    let (loaded, unknown) = tunelab_scenario::knowledge::KnowledgeBase::load_reporting(&text);
    crate::args::unknown_keys(&format!("knowledge base '{path}'"), &unknown)?;
    match loaded.set_aside {
        Some((why, _)) => Err(format!("knowledge base '{path}': {why}")),
        None => Ok(loaded.kb),
    }
}

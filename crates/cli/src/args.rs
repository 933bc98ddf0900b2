//! Helpers shared by the commands' argument structs (clap does the parsing itself).

/// Parses a command's arguments from one whitespace-separated line, as the command line would
/// (for unit tests of a module's `Args` without the whole binary).
#[cfg(test)]
pub fn parse<A: clap::Args + clap::FromArgMatches>(line: &str) -> Result<A, String> {
    let cmd = A::augment_args(clap::Command::new("tunelab-test"));
    let m = cmd.try_get_matches_from(std::iter::once("tunelab-test").chain(line.split_whitespace())).map_err(|e| e.to_string())?;
    A::from_arg_matches(&m).map_err(|e| e.to_string())
}

/// The configuration an analysis of one point looks at: the scenario, and either `--set` values
/// over the baseline or, with `--best`, the best configuration a tuning run finds (`tunelab
/// guards`, `tunelab diagnose`).
#[derive(clap::Args)]
pub struct Point {
    /// The scenario file.
    #[arg(value_name = "SCENARIO.json")]
    pub scenario: String,
    /// Parameter values, name=value,... (the rest keep the baseline).
    #[arg(long, value_name = "name=value,...")]
    pub set: Vec<String>,
    /// Tune first and look at the best configuration found.
    #[arg(long, conflicts_with = "set")]
    pub best: bool,
}

impl Point {
    /// The scenario, its run (tuned to the end with `--best`) and the configuration.
    pub fn resolve(&self) -> Result<(tunelab_scenario::Scenario, tunelab_scenario::Run, tunelab_search::Config), String> {
        let s = crate::run::load(&self.scenario)?;
        let mut run = crate::run::open(&self.scenario, &s, None)?;
        let config = if self.best {
            run.run_to_end();
            run.overall_best().map(|(_, t)| t.config.clone()).ok_or("no feasible configuration was found")?
        } else {
            crate::eval::configure(run.space(), run.baseline_config(), &self.set)?
        };
        Ok((s, run, config))
    }
}

/// `--strict` (a global flag): unknown keys in any JSON input are an error instead of a warning.
static STRICT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets `--strict` for the whole run (main, once).
pub fn set_strict(on: bool) {
    STRICT.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Tells the user about the keys `what` carries that no field reads: one warning line each on
/// stderr, or with `--strict` an error listing them (the command stops before any work).
pub fn unknown_keys(what: &str, report: &tunelab_scenario::spec::strict::Report) -> Result<(), String> {
    if report.is_empty() {
        return Ok(());
    }
    if STRICT.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(report.strict_error(what));
    }
    for line in report.lines() {
        eprintln!("warning: {what}: {line} (--strict makes this an error)");
    }
    Ok(())
}

/// Reads a measurement file or a profiler CSV: its size checked before reading (the larger of
/// the two readers' byte limits), its encoding detected (UTF-8 with or without a byte-order
/// mark, UTF-16; GBK is named with the command that converts it).
pub fn read_measurement_text(flag: &str, path: &str) -> Result<String, String> {
    use tunelab_scenario::calibrate::msprof::MAX_BYTES;
    use tunelab_scenario::fidelity::rows::MAX_MEASUREMENT_BYTES;
    let max = MAX_BYTES.max(MAX_MEASUREMENT_BYTES) as u64;
    let meta = std::fs::metadata(path).map_err(|e| format!("{flag} {path}: {e}"))?;
    if meta.len() > max {
        return Err(format!("{flag} {path}: {} bytes; at most {max} are read (docs/measurements.md, limits)", meta.len()));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{flag} {path}: {e}"))?;
    tunelab_scenario::calibrate::encoding::decode(&bytes, &format!("{flag} {path}"))
}

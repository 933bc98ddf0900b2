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

//! Helpers shared by the commands' argument structs (clap does the parsing itself).

/// Parses a command's arguments from one whitespace-separated line, as the command line would
/// (for unit tests of a module's `Args` without the whole binary).
#[cfg(test)]
pub fn parse<A: clap::Args + clap::FromArgMatches>(line: &str) -> Result<A, String> {
    let cmd = A::augment_args(clap::Command::new("tunelab-test"));
    let m = cmd.try_get_matches_from(std::iter::once("tunelab-test").chain(line.split_whitespace())).map_err(|e| e.to_string())?;
    A::from_arg_matches(&m).map_err(|e| e.to_string())
}

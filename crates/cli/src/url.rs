//! `tunelab url SCENARIO.json` prints the app's URL fragment for a scenario;
//! `tunelab url --decode FRAGMENT` prints the scenario JSON a fragment carries.

use crate::args::Args;

const USAGE: &str = "usage: tunelab url SCENARIO.json | tunelab url --decode FRAGMENT";

/// Entry point of the subcommand.
pub fn main(args: &[String]) -> Result<(), String> {
    let a = Args::parse(args, &[], &["decode"]).map_err(|e| format!("{e}\n{USAGE}"))?;
    match (a.get("decode"), a.positional.as_slice()) {
        (Some(f), []) => {
            // Accept a whole link too: the fragment is what follows '#'.
            let f = f.rsplit_once('#').map(|(_, x)| x).unwrap_or(f);
            let s = tunelab_scenario::url::decode(f)?;
            println!("{}", s.to_json());
            Ok(())
        }
        (None, [path]) => {
            let s = crate::run::load(path)?;
            println!("{}", tunelab_scenario::url::encode(&s));
            Ok(())
        }
        (None, []) => Err(format!("missing the scenario file\n{USAGE}")),
        _ => Err(format!("give either a scenario file or --decode FRAGMENT\n{USAGE}")),
    }
}

//! `tunelab url SCENARIO.json` prints the app's URL fragment for a scenario;
//! `tunelab url --decode FRAGMENT` prints the scenario JSON a fragment carries.

const USAGE: &str = "usage: tunelab url SCENARIO.json | tunelab url --decode FRAGMENT";

/// Arguments of `tunelab url`: a scenario file to encode, or --decode FRAGMENT.
#[derive(clap::Args)]
pub struct Args {
    /// The scenario file to encode as the app's URL fragment.
    #[arg(value_name = "SCENARIO.json", conflicts_with = "decode")]
    scenario: Option<String>,
    /// A fragment (or a whole link) to decode into scenario JSON.
    #[arg(long, value_name = "FRAGMENT")]
    decode: Option<String>,
}

/// Entry point of the subcommand.
pub fn main(a: Args) -> Result<(), String> {
    match (a.decode.as_deref(), a.scenario.as_deref()) {
        (Some(f), None) => {
            // Accept a whole link too: the fragment is what follows '#'.
            let f = f.rsplit_once('#').map(|(_, x)| x).unwrap_or(f);
            let (s, unknown) = tunelab_scenario::url::decode_reporting(f)?;
            crate::args::unknown_keys("the link's scenario", &unknown)?;
            println!("{}", s.to_json());
            Ok(())
        }
        (None, Some(path)) => {
            let s = crate::run::load(path)?;
            println!("{}", tunelab_scenario::url::encode(&s));
            Ok(())
        }
        (None, None) => Err(format!("missing the scenario file\n{USAGE}")),
        _ => Err(format!("give either a scenario file or --decode FRAGMENT\n{USAGE}")),
    }
}

//! `tunelab diagnose SCENARIO.json [--set name=value,...] [--best] [--json]`: the diagnosis of
//! one configuration (the baseline, the values given with `--set`, or with `--best` the tuned
//! best), as the app's diagnosis panel shows it: the goal and every metric as the study priced
//! them, where the time goes in the phase that dominates the goal, the root cause, the hot
//! spots, and the one-parameter changes that improve the goal, each re-simulated.

use tunelab_scenario::diagnosis::Weights;

/// Arguments of `tunelab diagnose`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    point: crate::args::Point,
    /// Suggestion score weights: effectiveness,cost,risk (default 0.5,0.3,0.2).
    #[arg(long, value_name = "E,C,R")]
    weights: Option<String>,
    /// Print the diagnosis as JSON.
    #[arg(long)]
    json: bool,
}

fn weights(text: &str) -> Result<Weights, String> {
    let v: Vec<f64> = text.split(',').map(|x| x.trim().parse::<f64>().map_err(|_| format!("--weights: '{x}' is not a number (expected effectiveness,cost,risk, e.g. 0.5,0.3,0.2)"))).collect::<Result<_, _>>()?;
    match v[..] {
        [e, c, r] if [e, c, r].iter().all(|w| w.is_finite() && *w >= 0.0) => Ok(Weights { effectiveness: e, cost: c, risk: r }),
        _ => Err(format!("--weights: expected three non-negative numbers effectiveness,cost,risk, got '{text}'")),
    }
}

/// Entry point of the subcommand.
pub fn main(a: Args) -> Result<(), String> {
    let w = a.weights.as_deref().map(weights).transpose()?.unwrap_or_default();
    let (_, mut run, config) = a.point.resolve()?;
    let d = run.diagnose(Some(&config), w)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&d).map_err(|e| e.to_string())?);
    } else {
        print!("{}", d.to_text());
    }
    Ok(())
}

//! `tunelab chips SCENARIO.json [--budget N] [--json]`: the scenario tuned on every bundled chip
//! (same strategies, seed, goal and limits; `--budget` evaluations per strategy, default
//! `COMPARE_BUDGET`, at most the scenario's own; each study starts from the current best), each
//! chip's own best beside the current best (the scenario tuned as `tunelab run` tunes it)
//! priced there. The app's "Compare chips" runs the same `chips::chip_row`, porting its run's best.

use tunelab_scenario::chips::{budget_for, compare, current_best, home_chip, COMPARE_BUDGET};
use tunelab_scenario::metrics::{fmt_metric, label};

/// Arguments of `tunelab chips`.
#[derive(clap::Args)]
pub struct Args {
    /// The scenario file.
    #[arg(value_name = "SCENARIO.json")]
    scenario: String,
    /// Evaluations per strategy on each chip (at most the scenario's budget).
    #[arg(long, default_value_t = COMPARE_BUDGET)]
    budget: usize,
    /// Print the rows as JSON.
    #[arg(long)]
    json: bool,
}

/// Entry point of the subcommand.
pub fn main(a: Args) -> Result<(), String> {
    let s = crate::run::load(&a.scenario)?;
    tunelab_scenario::chips::comparable(&s).map_err(|e| format!("scenario '{}': {e}", a.scenario))?;
    // The current best: the scenario tuned as it stands (as `tunelab run` does).
    let port = current_best(&s)?;
    let rows = compare(&s, a.budget, port.as_ref());
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?);
        return Ok(());
    }
    let home = home_chip(&s);
    let goal = rows.iter().find_map(|r| r.metrics.first().map(|m| m.0.clone())).unwrap_or_default();
    println!("{} tuned on each chip: {} evaluations per strategy, seed {}", tunelab_scenario::context::title(&s), budget_for(&s, a.budget), s.seed);
    let unit = rows.iter().find_map(|r| r.metrics.first().map(|m| m.2.clone())).unwrap_or_default();
    println!("goal: {} ({unit})", label(&goal));
    println!("{:<8} {:>12} {:>22}  best configuration on the chip (strategy)", "chip", "own best", "current best there");
    for r in &rows {
        let own = r.goal().map(|v| fmt_metric(&goal, v)).unwrap_or_else(|| "—".into());
        let ported = match &r.ported {
            Some(Ok(m)) => m.first().map(|m| fmt_metric(&goal, m.1)).unwrap_or_default(),
            Some(Err(_)) => "does not run".into(),
            None => "—".into(),
        };
        let cfg = match (&r.best_config, &r.error) {
            (_, Some(e)) => e.clone(),
            (Some(c), None) => format!("{} ({})", c.chars().take(100).collect::<String>(), r.best_strategy.clone().unwrap_or_else(|| "the current best; the study found nothing better".into())),
            (None, None) => String::new(),
        };
        let mark = if r.chip.eq_ignore_ascii_case(&home) { "*" } else { " " };
        println!("{:<8} {:>12} {:>22}  {cfg}", format!("{}{mark}", r.chip), own, ported);
    }
    println!("(* the scenario's own chip, {home}. A chip's own best comes from its own study, started from the current best (the scenario tuned on {home}) re-priced there; the right column prices the current best on the chip)");
    Ok(())
}

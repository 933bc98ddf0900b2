//! `tunelab calibrate --measurements FILE --device CHIP [--out PROFILE.json]`: fits the chip
//! profile's declared efficiency and overhead parameters (fields with `min`/`max` bounds) to
//! measurements with the search engine, prints each value's error before and after the fit and
//! its leave-one-source-out error, and writes the calibrated profile (fitted values carry
//! `source: "fit"`, the measurement file's digest and the residual).

use tunelab_scenario::calibrate::{Calibrator, Options, DEFAULT_LOO_BUDGET, MAX_LOO_FOLDS};
use tunelab_scenario::fidelity::{load_any_reporting, MeasurementSet};

/// Arguments of `tunelab calibrate`.
#[derive(clap::Args)]
pub struct Args {
    /// Measurement file (tunelab-measurements/1 JSON) or msprof op_summary CSV.
    #[arg(long, value_name = "FILE")]
    measurements: String,
    /// The chip profile to fit: a bundled name (910B2) or a profile JSON file.
    #[arg(long, value_name = "CHIP")]
    device: String,
    /// Write the calibrated profile here.
    #[arg(long, value_name = "PROFILE.json")]
    out: Option<String>,
    /// Search strategy of the fit.
    #[arg(long, default_value = "auto")]
    strategy: String,
    /// Evaluations of the fit.
    #[arg(long, default_value_t = 200)]
    budget: usize,
    /// Evaluations of each leave-one-source-out refit (0: skip them). At most 10 refits are run:
    /// more sources (or, in a single-source file, more rows) are dealt into 10 folds.
    #[arg(long, default_value_t = DEFAULT_LOO_BUDGET)]
    loo_budget: usize,
    /// No progress lines on stderr.
    #[arg(long)]
    quiet: bool,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Fit on every row of the set, each on its own chip's profile with the fitted values
    /// substituted (for a chip with no rows of its own; the values are microarchitectural).
    #[arg(long)]
    family: bool,
    /// Weight of the prior toward the profile's own values (0: a pure least-error fit).
    #[arg(long, default_value_t = 0.2)]
    prior: f64,
    /// Only rows of these categories (comma-separated: op, serving, training).
    #[arg(long, value_delimiter = ',')]
    categories: Vec<String>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn main(a: Args) -> Result<(), String> {
    let text = crate::args::read_measurement_text("--measurements", &a.measurements)?;
    let (profile_text, chip) = match tunelab_sim::device::bundled_profile_text(&a.device) {
        Some(t) => (t.to_string(), a.device.clone()),
        None if std::path::Path::new(&a.device).is_file() => {
            let t = std::fs::read_to_string(&a.device).map_err(|e| format!("--device {}: {e}", a.device))?;
            let name = serde_json::from_str::<serde_json::Value>(&t).ok().and_then(|v| v.get("name").and_then(|n| n.as_str()).map(str::to_string)).unwrap_or_default();
            (t, name)
        }
        None => return Err(format!("--device: '{}' is neither a bundled chip ({}) nor a profile file", a.device, tunelab_sim::device::bundled_names().join(", "))),
    };
    let profile: serde_json::Value = serde_json::from_str(tunelab_scenario::spec::strict::strip_bom(&profile_text)).map_err(|e| format!("--device {}: {e}", a.device))?;
    crate::args::unknown_keys(&format!("--device {}", a.device), &tunelab_scenario::spec::strict_inputs::profile_keys(&profile))?;
    let (set, skipped, unknown) = load_any_reporting(&text, &a.measurements, &chip).map_err(|e| format!("--measurements {}: {e}", a.measurements))?;
    crate::args::unknown_keys(&format!("--measurements {}", a.measurements), &unknown)?;
    for (op, why) in &skipped {
        eprintln!("note: not used: {op}: {why}");
    }
    let opts = Options { strategy: a.strategy.clone(), budget: a.budget, loo_budget: a.loo_budget, seed: a.seed, family: a.family, prior: a.prior, categories: a.categories.clone() };
    let digest = MeasurementSet::digest_of(&text);
    let cal = fit_with_progress(&set, &digest, &chip, &profile, &opts, !a.quiet)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&cal).map_err(|e| e.to_string())?);
    } else {
        print!("{}", cal.to_text());
    }
    if let Some(out) = &a.out {
        let text = serde_json::to_string_pretty(&cal.profile).map_err(|e| e.to_string())? + "\n";
        std::fs::write(out, text).map_err(|e| format!("--out {out}: {e}"))?;
        eprintln!("wrote the calibrated {chip} profile to {out}");
    }
    Ok(())
}

/// The fit, stepped with a progress line on stderr after each step: evaluations of the fit done
/// of planned, then leave-out refits done of planned, each with an estimate of the time left
/// from the pace so far (`--quiet` leaves them out).
fn fit_with_progress(set: &MeasurementSet, digest: &str, chip: &str, profile: &serde_json::Value, opts: &Options, show: bool) -> Result<tunelab_scenario::calibrate::Calibration, String> {
    let t0 = std::time::Instant::now();
    let mut c = Calibrator::new(set, digest, chip, profile, opts)?;
    let folds = c.loo_folds().len();
    // Plan in fit evaluations: the main fit, then each refit's evaluations (a refit prices nearly
    // every row, as an evaluation of the main fit does).
    let planned = opts.budget + folds * opts.loo_budget;
    let say = |done: usize, what: String| {
        if show {
            let secs = t0.elapsed().as_secs_f64();
            let left = if done > 0 { format!(", about {:.0} s left", secs / done as f64 * (planned.saturating_sub(done)) as f64) } else { String::new() };
            eprintln!("calibrate: {what} ({:.0} s{left})", secs);
        }
    };
    if show {
        eprintln!("calibrate: {} rows; planned: 1 fit of {} evaluations + {folds} leave-out refits of {} evaluations (at most {MAX_LOO_FOLDS}; --loo-budget 0 skips them)", set.rows.len(), opts.budget, opts.loo_budget);
    }
    loop {
        let done = c.step(16);
        let (n, b) = c.progress();
        say(n.min(b), format!("fit: {} of {b} evaluations", n.min(b)));
        if done {
            break;
        }
    }
    let budget = opts.budget;
    c.finish_with(&mut |k, n| {
        if n > 0 {
            say(budget + k * opts.loo_budget, format!("leave-out refits: {k} of {n} done"));
        }
    })
}

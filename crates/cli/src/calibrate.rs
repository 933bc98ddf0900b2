//! `tunelab calibrate --measurements FILE --device CHIP [--out PROFILE.json]`: fits the chip
//! profile's declared efficiency and overhead parameters (fields with `min`/`max` bounds) to
//! measurements with the search engine, prints each value's error before and after the fit and
//! its leave-one-source-out error, and writes the calibrated profile (fitted values carry
//! `source: "fit"`, the measurement file's digest and the residual).

use tunelab_scenario::calibrate::{calibrate, Options};
use tunelab_scenario::fidelity::{load_any, MeasurementSet};

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
    /// Evaluations of each leave-one-source-out fit (0: skip leave-one-source-out).
    #[arg(long, default_value_t = 60)]
    loo_budget: usize,
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
    let text = std::fs::read_to_string(&a.measurements).map_err(|e| format!("--measurements {}: {e}", a.measurements))?;
    let (profile_text, chip) = match tunelab_sim::device::bundled_profile_text(&a.device) {
        Some(t) => (t.to_string(), a.device.clone()),
        None if std::path::Path::new(&a.device).is_file() => {
            let t = std::fs::read_to_string(&a.device).map_err(|e| format!("--device {}: {e}", a.device))?;
            let name = serde_json::from_str::<serde_json::Value>(&t).ok().and_then(|v| v.get("name").and_then(|n| n.as_str()).map(str::to_string)).unwrap_or_default();
            (t, name)
        }
        None => return Err(format!("--device: '{}' is neither a bundled chip ({}) nor a profile file", a.device, tunelab_sim::device::bundled_names().join(", "))),
    };
    let profile: serde_json::Value = serde_json::from_str(&profile_text).map_err(|e| format!("--device {}: {e}", a.device))?;
    let (set, skipped) = load_any(&text, &a.measurements, &chip).map_err(|e| format!("--measurements {}: {e}", a.measurements))?;
    for (op, why) in &skipped {
        eprintln!("note: not used: {op}: {why}");
    }
    let opts = Options { strategy: a.strategy.clone(), budget: a.budget, loo_budget: a.loo_budget, seed: a.seed, family: a.family, prior: a.prior, categories: a.categories.clone() };
    let digest = MeasurementSet::digest_of(&text);
    let cal = calibrate(&set, &digest, &chip, &profile, &opts)?;
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

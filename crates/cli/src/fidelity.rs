//! `tunelab fidelity --measurements FILE [--json] [--markdown [--svg FILE]]`: Tunelab's
//! predictions next to measured values. Every row of the file is turned into a scenario and
//! priced through its stage's own objective (crates/scenario/src/evidence/fidelity); rows the stages
//! cannot express are listed with the reason. FILE is a `tunelab-measurements/1` JSON file
//! (docs/measurements.md) or an msprof `op_summary_*.csv` (its rows go on `--device`).

use tunelab_scenario::fidelity::{evaluate, load_any_reporting, plot, MeasurementSet};

/// Arguments of `tunelab fidelity`.
#[derive(clap::Args)]
pub struct Args {
    /// Measurement files (tunelab-measurements/1 JSON) or an msprof op_summary CSV; several
    /// files (repeat the flag) are predicted, validated and left out source by source together.
    #[arg(long, value_name = "FILE", required = true)]
    measurements: Vec<String>,
    /// Print `{"rows": [...], "unexpressed": [...], "summary": {...}}`.
    #[arg(long)]
    json: bool,
    /// Print the generated page (docs/fidelity.md).
    #[arg(long, conflicts_with = "json")]
    markdown: bool,
    /// Also write the predicted-vs-measured plot (SVG) here; the page links it by file name.
    #[arg(long, value_name = "FILE")]
    svg: Option<String>,
    /// Chip of an op-summary CSV's rows.
    #[arg(long, value_name = "CHIP", default_value = "910B2")]
    device: String,
    /// Only rows on these chips (comma-separated).
    #[arg(long, value_name = "CHIPS", value_delimiter = ',')]
    chips: Vec<String>,
    /// Skip the leave-one-source-out validation (it refits the fitted parameters once per
    /// source: 1 + parameters evaluations of the whole file, then one per source).
    #[arg(long)]
    no_loso: bool,
    /// Also write the prediction bands (leave-one-source-out residuals by category, framework
    /// and launch mode) that `tunelab eval`, the report and the app print beside headline numbers.
    #[arg(long, value_name = "FILE")]
    bands_out: Option<String>,
}

pub fn main(a: Args) -> Result<(), String> {
    let mut text = String::new();
    let mut set: Option<MeasurementSet> = None;
    let mut skipped = Vec::new();
    for path in &a.measurements {
        let t = crate::args::read_measurement_text("--measurements", path)?;
        let (s, sk, unknown) = load_any_reporting(&t, path, &a.device).map_err(|e| format!("--measurements {path}: {e}"))?;
        crate::args::unknown_keys(&format!("--measurements {path}"), &unknown)?;
        skipped.extend(sk);
        set = Some(match set {
            None => s,
            Some(mut all) => {
                all.name = format!("{} + {}", all.name, s.name);
                all.rows.extend(s.rows);
                all
            }
        });
        text += &t;
    }
    let set = set.ok_or("--measurements: give at least one file")?;
    let only = if a.chips.is_empty() { None } else { Some(a.chips.as_slice()) };
    let mut rep = evaluate(&set, &Default::default(), only);
    for (op, why) in skipped {
        rep.unexpressed.push(tunelab_scenario::fidelity::Unexpressed { id: op, metric: "task_duration".into(), reason: why });
    }
    rep.summary.values_unexpressed = rep.unexpressed.len();
    if let Some(path) = &a.svg {
        let pts = rep.rows.iter().map(|c| (c.measured, c.predicted, c.category.clone())).collect();
        let svg = plot::scatter_svg(&[plot::Series { label: "Tunelab", points: pts, hollow: false }], "Predicted vs measured (log-log; each value in its own unit)");
        std::fs::write(path, svg).map_err(|e| format!("--svg {path}: {e}"))?;
    }
    let loso = if a.no_loso || only.is_some() { None } else { Some(tunelab_scenario::fidelity::loso::leave_one_source_out(&set)) };
    if let (Some(path), Some(l)) = (&a.bands_out, &loso) {
        let b = tunelab_scenario::fidelity::bands::Bands::from_loso(l, &MeasurementSet::digest_of(&text));
        std::fs::write(path, b.to_file_text()).map_err(|e| format!("--bands-out {path}: {e}"))?;
        eprintln!("wrote {} prediction bands to {path}", b.bands.len());
    }
    if a.json {
        let mut j = rep.to_json();
        if let Some(l) = &loso {
            j["loso"] = serde_json::to_value(l).map_err(|e| e.to_string())?;
            // Per category: the worst of the three leave-outs, its bias and the band coverage.
            j["headline"] = serde_json::to_value(tunelab_scenario::fidelity::headlines(l)).map_err(|e| e.to_string())?;
            j["band_coverage"] = serde_json::to_value(tunelab_scenario::fidelity::bands::coverage(l)).map_err(|e| e.to_string())?;
        }
        println!("{}", serde_json::to_string_pretty(&j).map_err(|e| e.to_string())?);
    } else if a.markdown {
        let name = a.svg.as_deref().map(|p| std::path::Path::new(p).file_name().and_then(|f| f.to_str()).unwrap_or(p).to_string());
        print!("{}", rep.to_markdown(name.as_deref(), loso.as_ref()));
    } else {
        print!("{}", rep.to_text());
        if let Some(l) = &loso {
            print!("{}", l.to_text());
        }
        if !rep.unexpressed.is_empty() {
            println!("\nNot compared ({}):", rep.unexpressed.len());
            for u in &rep.unexpressed {
                println!("  {} {}: {}", u.id, u.metric, u.reason);
            }
        }
    }
    Ok(())
}

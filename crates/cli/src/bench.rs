//! `tunelab bench [--json]`: the engine's speed figures (search overhead, device-model
//! throughput, the serving simulation and a deployment tune with it). Figures are printed, never asserted: they depend on the machine.

/// Arguments of `tunelab bench`.
#[derive(clap::Args)]
pub struct Args {
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
    /// Only the diffusion figures (the SDXL 1024 pipeline tune).
    #[arg(long)]
    diffusion: bool,
    /// Only the input readers' figures: time and peak memory of the largest msprof CSV and
    /// measurement file they accept (issue 44).
    #[arg(long, conflicts_with = "diffusion")]
    inputs: bool,
    /// Only the tunes of the bundled scenarios: each as `tunelab run` does it (the study to its
    /// budget and the best configuration's spread), wall and CPU seconds, slowest first.
    #[arg(long, conflicts_with_all = ["diffusion", "inputs"])]
    tunes: bool,
    /// With --tunes: only this bundled scenario (its id, the file name without .json).
    #[arg(long, requires = "tunes", value_name = "ID")]
    only: Option<String>,
}

pub fn main(a: Args) -> Result<(), String> {
    let mut figures = Vec::new();
    if a.tunes {
        figures.extend(crate::bench_tunes::figures(a.only.as_deref())?);
    } else if a.inputs {
        figures.extend(crate::bench_inputs::figures());
    } else if !a.diffusion {
        figures.extend(crate::bench_sim::figures());
        figures.extend(crate::bench_search::figures());
        figures.extend(crate::bench_serving::figures());
    }
    if !a.inputs && !a.tunes {
        figures.extend(crate::bench_diffusion::figures());
    }
    if !a.diffusion && !a.inputs && !a.tunes {
        figures.extend(crate::bench_scale::figures());
    }
    if a.json {
        let obj: serde_json::Map<String, serde_json::Value> = figures.into_iter().collect();
        println!("{}", serde_json::Value::Object(obj));
    } else {
        for (k, v) in figures {
            println!("{k:<40} {v}");
        }
    }
    Ok(())
}

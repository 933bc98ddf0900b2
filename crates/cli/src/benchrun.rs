//! `tunelab benchrun FILE... --scenario LAUNCH.json`: benchmark tools' result files (vLLM's
//! `vllm bench serve --save-result` JSON, SGLang's bench_serving JSONL, AISBench's performance
//! JSON/CSV and per-request `_details.jsonl`, MindIE Benchmark's result CSVs) replayed on a Tunelab scenario that gives the
//! launch: the workload read from each run (requests, rate, concurrency cap, lengths), the
//! measured values beside the prediction (the fidelity path, `evidence::benchruns`). `--out`
//! writes the measurement rows for `tunelab fidelity --measurements` and `tunelab calibrate`.

use tunelab_scenario::evidence::benchruns::{self, Format, MAX_BYTES};

/// Arguments of `tunelab benchrun`.
#[derive(clap::Args)]
pub struct Args {
    /// The benchmark tools' result files (the files of one AISBench or MindIE run are merged).
    #[arg(value_name = "RESULT", required = true)]
    files: Vec<String>,
    /// The files' format: auto (by content), vllm, sglang, aisbench or mindie.
    #[arg(long, default_value = "auto")]
    format: String,
    /// The Tunelab deployment scenario of the launch (model, chip, configuration pins); with
    /// --serve, the base the command's flags pin (its chip; its model when the command's is
    /// not a bundled one).
    #[arg(long, value_name = "LAUNCH.json")]
    scenario: String,
    /// The serving command the runs were measured on (`vllm serve MODEL --flag ...` or
    /// `python -m sglang.launch_server ...`), read into the deployment; flags the release does
    /// not have are refused by name (assets/engines/flags/).
    #[arg(long, value_name = "COMMAND")]
    serve: Option<String>,
    /// The request rate of runs whose files do not record it (AISBench, MindIE): req/s, or
    /// "inf" for all at once (the tool's closed loop at its concurrency).
    #[arg(long, value_name = "R|inf")]
    rate: Option<String>,
    /// Write the measurement rows (tunelab-measurements/1) here.
    #[arg(long, value_name = "rows.json")]
    out: Option<String>,
    /// Calibrate the framework layer (the launch engine's host costs in
    /// assets/constants/serving-host.json) from the rows, with leave-one-source-out errors.
    #[arg(long)]
    calibrate: bool,
    /// Evaluations of the calibration's fit.
    #[arg(long, default_value_t = 200)]
    budget: usize,
    /// Evaluations of each leave-one-source-out refit (0: none).
    #[arg(long, default_value_t = tunelab_scenario::calibrate::DEFAULT_LOO_BUDGET)]
    loo_budget: usize,
    /// Seed of the calibration's search.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the fitted engine fields (serving-host.json shape, each with its fit) here.
    #[arg(long, value_name = "engine.json", requires = "calibrate")]
    engine_out: Option<String>,
    /// Write the launch scenario with the fit adopted (the fitted host costs that moved as its
    /// deployment.serving.host_costs) here; `tunelab run` / `eval` / `url` price it with them.
    #[arg(long, value_name = "SCENARIO.json", requires = "calibrate")]
    adopt: Option<String>,
}

/// "inf" or a positive number of requests per second.
pub fn parse_rate(s: &str) -> Result<Option<f64>, String> {
    if s == "inf" {
        return Ok(None);
    }
    s.parse::<f64>().ok().filter(|r| r.is_finite() && *r > 0.0).map(Some).ok_or_else(|| format!("--rate '{s}': a positive number of requests per second, or inf"))
}

/// Reads the files (size checked before reading) into runs, the rate applied where missing.
pub fn read_runs(paths: &[String], format: &str, rate: Option<&str>) -> Result<Vec<benchruns::BenchRun>, String> {
    let format = Format::parse(format).map_err(|e| format!("--{e}"))?;
    let mut files = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| format!("cannot read '{p}': {e}"))?;
        if meta.len() as usize > MAX_BYTES {
            return Err(format!("'{p}': over the {} MiB a benchmark file may have", MAX_BYTES >> 20));
        }
        files.push((p.clone(), std::fs::read_to_string(p).map_err(|e| format!("cannot read '{p}': {e}"))?));
    }
    let runs = benchruns::read_files(&files, format)?;
    let rate = rate.map(parse_rate).transpose()?;
    runs.into_iter().map(|r| match rate { Some(x) => r.with_rate(x, false), None => Ok(r) }).collect()
}

/// One line per run: its workload as read.
pub fn describe(run: &benchruns::BenchRun) -> String {
    format!(
        "{}: {} with {} requests at {}{}, {:.0} in / {:.0} out on average{}",
        run.label,
        run.tool,
        run.completed,
        if !run.rate_stated { "an unstated rate".into() } else { run.request_rate.map(|r| format!("{r} req/s (Poisson)")).unwrap_or_else(|| "once (a burst)".into()) },
        run.max_concurrency.map(|c| format!(", at most {c} in flight")).unwrap_or_default(),
        run.mean_input,
        run.mean_output,
        if run.input_lens.is_empty() { String::new() } else { format!(", prompt lengths' CV {:.2} (per-request data)", run.input_cv()) }
    )
}

/// Entry point of the subcommand.
pub fn main(a: Args) -> Result<(), String> {
    let runs = read_runs(&a.files, &a.format, a.rate.as_deref())?;
    for r in &runs {
        eprintln!("note: {}", describe(r));
        for w in &r.warnings {
            eprintln!("warning: {}: {w}", r.label);
        }
    }
    let mut launch = crate::run::load(&a.scenario)?;
    if let Some(cmd) = &a.serve {
        let l = benchruns::serve::launch(cmd, &launch).map_err(|e| format!("--serve: {e}"))?;
        eprintln!("note: the launch, read from --serve against {}:", l.release);
        for r in &l.read {
            eprintln!("  {r}");
        }
        if !l.not_priced.is_empty() {
            eprintln!("  not priced (they do not change the prediction): {}", l.not_priced.join(", "));
        }
        launch = l.scenario;
    }
    let name = a.files.join(", ");
    let set = benchruns::measurement_set(&runs, &launch, &name)?;
    if let Some(out) = &a.out {
        std::fs::write(out, serde_json::to_string_pretty(&set).map_err(|e| e.to_string())?).map_err(|e| format!("cannot write '{out}': {e}"))?;
    }
    let rep = tunelab_scenario::fidelity::evaluate(&set, &Default::default(), None);
    print!("{}", rep.to_text());
    for u in &rep.unexpressed {
        println!("  not compared: {} {}: {}", u.id, u.metric, u.reason);
    }
    if a.calibrate {
        let opts = tunelab_scenario::calibrate::Options { budget: a.budget, loo_budget: a.loo_budget, seed: a.seed, ..Default::default() };
        let digest = tunelab_scenario::fidelity::MeasurementSet::digest_of(&serde_json::to_string(&set).map_err(|e| e.to_string())?);
        let fit = benchruns::calibrate::calibrate_framework(&set, &digest, &opts)?;
        println!();
        print!("{}", fit.to_text());
        if let Some(out) = &a.engine_out {
            std::fs::write(out, serde_json::to_string_pretty(&fit.engine_fields).map_err(|e| e.to_string())? + "\n").map_err(|e| format!("--engine-out {out}: {e}"))?;
            eprintln!("wrote the fitted {} fields to {out}", fit.engine);
        }
        if let Some(out) = &a.adopt {
            let mut adopted = launch.clone();
            let set = fit.adopt(&mut adopted).map_err(|e| format!("--adopt: {e}"))?;
            std::fs::write(out, serde_json::to_string_pretty(&adopted).map_err(|e| e.to_string())? + "\n").map_err(|e| format!("--adopt {out}: {e}"))?;
            for l in &set {
                eprintln!("  {l}");
            }
            eprintln!("wrote the launch scenario with the fit adopted to {out}");
        }
    }
    Ok(())
}

//! `tunelab benchrun RESULT.json --scenario LAUNCH.json`: a benchmark tool's result file (vLLM's
//! `vllm bench serve --save-result`) replayed on a Tunelab scenario that gives the launch: the
//! workload read from the file (requests, rate, concurrency cap, lengths), the measured values
//! beside the prediction (the fidelity path, `evidence::benchruns`). `--out` writes the
//! measurement rows for `tunelab fidelity --measurements` and `tunelab calibrate`.

/// Arguments of `tunelab benchrun`.
#[derive(clap::Args)]
pub struct Args {
    /// The benchmark tool's result file.
    #[arg(value_name = "RESULT.json")]
    file: String,
    /// The Tunelab deployment scenario of the launch (model, chip, configuration pins).
    #[arg(long, value_name = "LAUNCH.json")]
    scenario: String,
    /// Write the measurement rows (tunelab-measurements/1) here.
    #[arg(long, value_name = "rows.json")]
    out: Option<String>,
}

/// Entry point of the subcommand.
pub fn main(a: Args) -> Result<(), String> {
    let meta = std::fs::metadata(&a.file).map_err(|e| format!("cannot read '{}': {e}", a.file))?;
    if meta.len() as usize > tunelab_scenario::evidence::benchruns::MAX_BYTES {
        return Err(format!("'{}': over the 8 MiB a benchmark file may have", a.file));
    }
    let text = std::fs::read_to_string(&a.file).map_err(|e| format!("cannot read '{}': {e}", a.file))?;
    let run = tunelab_scenario::evidence::benchruns::read(&text, &a.file)?;
    let launch = crate::run::load(&a.scenario)?;
    let set = run.rows(&launch, &a.file)?;
    eprintln!(
        "note: {} with {} requests at {}{}, {:.0} in / {:.0} out on average{}",
        run.tool,
        run.completed,
        run.request_rate.map(|r| format!("{r} req/s (Poisson)")).unwrap_or_else(|| "once (a burst)".into()),
        run.max_concurrency.map(|c| format!(", at most {c} in flight")).unwrap_or_default(),
        run.mean_input,
        run.mean_output,
        if run.input_lens.is_empty() { String::new() } else { format!(", prompt lengths' CV {:.2} (per-request data)", run.input_cv()) }
    );
    if let Some(out) = &a.out {
        std::fs::write(out, serde_json::to_string_pretty(&set).map_err(|e| e.to_string())?).map_err(|e| format!("cannot write '{out}': {e}"))?;
    }
    let rep = tunelab_scenario::fidelity::evaluate(&set, &Default::default(), None);
    print!("{}", rep.to_text());
    for u in &rep.unexpressed {
        println!("  not compared: {} {}: {}", u.id, u.metric, u.reason);
    }
    Ok(())
}

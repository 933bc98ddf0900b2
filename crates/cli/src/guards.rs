//! `tunelab guards SCENARIO.json [--set name=value,...] [--chip 310P3] [--protect lm_head,embed]`:
//! the over-optimisation guards on one configuration (the baseline, the values given with
//! `--set`, or with `--best` the tuned best): does it run on another chip (the stage's own
//! objective, so every device limit is checked), what keeping sensitive layers in 16-bit costs,
//! and the expected-output-error delta against the scenario's defaults.

use tunelab_scenario::guards::{check_all, DEFAULT_PROTECTED};

/// Arguments of `tunelab guards`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    point: crate::args::Point,
    /// Check the configuration on this bundled chip too.
    #[arg(long, value_name = "CHIP")]
    chip: Option<String>,
    /// Name patterns of layers kept in 16-bit (default: lm_head,embed,router; on the diffusion
    /// stage its own list, workload.protected_layers of assets/constants/diffusion.json).
    #[arg(long, value_name = "pattern,...")]
    protect: Option<String>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// Entry point of the subcommand.
pub fn main(a: Args) -> Result<(), String> {
    let (s, run, config) = a.point.resolve()?;
    let patterns: Vec<String> = match &a.protect {
        Some(p) => p.split(',').map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect(),
        None => DEFAULT_PROTECTED.iter().map(|x| x.to_string()).collect(),
    };
    let r = check_all(&s, run.space().names(), &config, a.chip.as_deref(), &patterns)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?);
        return Ok(());
    }
    println!("configuration: {}", r.config);
    if let Some(c) = &r.compatibility {
        if c.compatible {
            println!("on {}: runs", c.target);
            for (n, v, u) in &c.metrics {
                println!("  {:<34} {:>12} {u}", tunelab_scenario::metrics::label(n), tunelab_scenario::metrics::fmt_metric(n, *v));
            }
        } else {
            println!("on {}: does NOT run: {}", c.target, c.problems.join("; "));
        }
    }
    if let Some(p) = &r.protected {
        println!("protected layers ({}): {} operators kept in 16-bit", p.patterns.join(", "), p.protected_ops.len());
        println!("  {} {} ms all quantised, {} ms protected; expected error {:.2e} vs {:.2e} ({})", p.step, tunelab_scenario::metrics::fmt4(p.step_ms_all_quantised), tunelab_scenario::metrics::fmt4(p.step_ms_protected), p.rel_error_all_quantised, p.rel_error_protected, p.note);
        if let (Some(a), Some(b)) = (p.latency_ms_all_quantised, p.latency_ms_protected) {
            println!("  whole call {} ms all quantised, {} ms protected", tunelab_scenario::metrics::fmt4(a), tunelab_scenario::metrics::fmt4(b));
        }
    }
    for o in &r.output_knobs {
        println!("changes the output: {} ({}) -> guard: {}", o.setting, o.knob, o.guard);
    }
    if let Some(d) = &r.delta {
        println!("delta check: {} ({})", if d.pass { "pass" } else { "FAIL" }, d.note);
    }
    for n in &r.notes {
        println!("note: {n}");
    }
    Ok(())
}

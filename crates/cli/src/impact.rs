//! `tunelab impact SCENARIO.json --precision w8a16 --tp 2 ...`: what one change does at every
//! stage (inference TPOT and TTFT, model size, training memory and step time), each simulated
//! before and after, with the composite score and its weights (editable with `--weights`).

use tunelab_scenario::impact::{analyse, Change, ImpactWeights};

/// Arguments of `tunelab impact`.
#[derive(clap::Args)]
#[command(after_help = "Unset changes keep the scenario's defaults. Composite = sum of weight x relative improvement over inference latency (TPOT), training memory and model size.")]
pub struct Args {
    /// The scenario file.
    #[arg(value_name = "SCENARIO.json")]
    scenario: String,
    /// Inference precision: fp16, bf16, w8a16 or w8a8.
    #[arg(long)]
    precision: Option<String>,
    /// Tensor-parallel degree.
    #[arg(long)]
    tp: Option<u64>,
    /// Batch size.
    #[arg(long)]
    batch: Option<u64>,
    /// Flash attention on or off.
    #[arg(long, value_name = "on|off")]
    flash_attention: Option<String>,
    /// Training recomputation: none, selective or full.
    #[arg(long)]
    recompute: Option<String>,
    /// Training optimizer sharding: zero0..zero3 or distributed_optimizer.
    #[arg(long)]
    optimizer_sharding: Option<String>,
    /// Composite weights, latency=0.4,training_memory=0.3,model_size=0.3.
    #[arg(long, value_name = "name=w,...")]
    weights: Option<String>,
    /// Print the analysis as JSON.
    #[arg(long)]
    json: bool,
}

/// Parses "latency=0.5,model_size=0.5" onto the default weights; unknown names are errors.
pub fn parse_weights(text: &str) -> Result<ImpactWeights, String> {
    let mut w = ImpactWeights::default();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').ok_or_else(|| format!("--weights: expected name=value, got '{part}'"))?;
        let x: f64 = v.trim().parse().map_err(|_| format!("--weights: '{v}' is not a number"))?;
        if !x.is_finite() || x < 0.0 {
            return Err(format!("--weights: {k} must be a non-negative number"));
        }
        match k.trim() {
            "latency" => w.latency = x,
            "training_memory" => w.training_memory = x,
            "model_size" => w.model_size = x,
            other => return Err(format!("--weights: unknown weight '{other}' (latency, training_memory, model_size)")),
        }
    }
    Ok(w)
}

/// Entry point of the subcommand.
pub fn main(a: Args) -> Result<(), String> {
    let s = crate::run::load(&a.scenario)?;
    let flash_attention = match a.flash_attention.as_deref() {
        None => None,
        Some("on" | "true") => Some(true),
        Some("off" | "false") => Some(false),
        Some(x) => return Err(format!("--flash-attention: expected on or off, got '{x}'")),
    };
    let change = Change { precision: a.precision, flash_attention, tp: a.tp, batch: a.batch, recompute: a.recompute, optimizer_sharding: a.optimizer_sharding };
    if change == Change::default() {
        return Err("give at least one change: --precision, --tp, --batch, --flash-attention, --recompute or --optimizer-sharding".into());
    }
    let weights = a.weights.as_deref().map(parse_weights).transpose()?.unwrap_or_default();
    let r = analyse(&s, &change, weights)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?);
        return Ok(());
    }
    let f = |x: Option<f64>| x.map(tunelab_scenario::metrics::fmt4).unwrap_or_else(|| "-".into());
    println!("{:<11} {:<22} {:>12} {:>12} {:>10}", "stage", "measure", "before", "after", "better by");
    for row in &r.rows {
        let imp = row.improvement.map(|x| format!("{:+.1}%", x * 100.0)).unwrap_or_default();
        println!("{:<11} {:<22} {:>12} {:>12} {:>10}  {}", row.stage, format!("{} ({})", row.measure, row.unit), f(row.before), f(row.after), imp, row.note.as_deref().unwrap_or(""));
    }
    println!("composite {:+.4} = {} x TPOT + {} x training memory + {} x model size (relative improvements; positive is better)", r.composite, r.weights.latency, r.weights.training_memory, r.weights.model_size);
    Ok(())
}

//! `tunelab plan`: the fewest chips (or the lowest cost per million tokens) that serve a load
//! within its SLOs, from the hardware on offer (`analyses::plan`), with the runner-ups,
//! each plan's prediction band and the launch of each replica.
//!
//! `tunelab plan --model deepseek-v3 --rate 20 --input 2048 --output 512 --ttft 2000 --tpot 50
//! --hardware 910C:4` or `tunelab plan REQUEST.json` (the same fields as JSON).

use tunelab_scenario::analyses::plan::{plan, Offer, PlanRequest};

/// Arguments of `tunelab plan`.
#[derive(clap::Args)]
pub struct Args {
    /// A plan request as JSON (the flags below build one when it is absent).
    #[arg(value_name = "REQUEST.json")]
    request: Option<String>,
    /// A bundled model id.
    #[arg(long)]
    model: Option<String>,
    /// Requests per second (Poisson).
    #[arg(long)]
    rate: Option<f64>,
    /// Mean prompt tokens.
    #[arg(long, default_value_t = 2048)]
    input: u64,
    /// Mean output tokens.
    #[arg(long, default_value_t = 512)]
    output: u64,
    /// Draw lengths from a bundled dataset's statistics (sharegpt, alpaca) instead.
    #[arg(long, default_value = "")]
    dataset: String,
    /// Lengths around the means: fixed (the load as stated), uniform or lognormal (spread 0.5).
    #[arg(long, default_value = "fixed")]
    lengths: String,
    /// p90 TTFT limit (ms).
    #[arg(long)]
    ttft: Option<f64>,
    /// p90 TPOT limit (ms).
    #[arg(long)]
    tpot: Option<f64>,
    /// Hardware on offer, DEVICE:NODES[:PRICE_PER_CHIP_HOUR] (repeatable), e.g. 910C:4 or 910B3:8:1.2.
    #[arg(long, value_name = "DEVICE:NODES[:PRICE]")]
    hardware: Vec<String>,
    /// chips (fewest chips) or cost (lowest cost per million tokens).
    #[arg(long, default_value = "chips")]
    goal: String,
    /// Configurations tried per candidate size.
    #[arg(long, default_value_t = 40)]
    budget: usize,
    /// Requests simulated per candidate.
    #[arg(long, default_value_t = 200)]
    requests: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print the plan as JSON.
    #[arg(long)]
    json: bool,
}

fn offer(s: &str) -> Result<Offer, String> {
    let parts: Vec<&str> = s.split(':').collect();
    let bad = || format!("--hardware '{s}': expected DEVICE:NODES[:PRICE_PER_CHIP_HOUR], e.g. 910C:4");
    if parts.len() < 2 || parts.len() > 3 {
        return Err(bad());
    }
    let nodes = parts[1].parse().map_err(|_| bad())?;
    let price = match parts.get(2) {
        Some(p) => Some(p.parse::<f64>().map_err(|_| bad())?),
        None => None,
    };
    Ok(Offer { device: parts[0].to_string(), nodes, price_per_chip_hour: price })
}

/// Entry point of the subcommand.
pub fn main(a: Args) -> Result<(), String> {
    let req = match &a.request {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read '{path}': {e}"))?;
            PlanRequest::from_json(&text).map_err(|e| format!("{path}: {e}"))?
        }
        None => PlanRequest {
            model: a.model.clone().ok_or("give --model (or a REQUEST.json)")?,
            rate: a.rate.ok_or("give --rate (requests per second)")?,
            input_len: a.input,
            output_len: a.output,
            dataset: a.dataset.clone(),
            length_distribution: a.lengths.clone(),
            length_spread: 0.5,
            max_ttft_ms: a.ttft.ok_or("give --ttft (p90 TTFT limit, ms)")?,
            max_tpot_ms: a.tpot.ok_or("give --tpot (p90 TPOT limit, ms)")?,
            hardware: if a.hardware.is_empty() { return Err("give --hardware DEVICE:NODES (e.g. 910C:4)".into()) } else { a.hardware.iter().map(|h| offer(h)).collect::<Result<_, _>>()? },
            goal: a.goal.clone(),
            engine: "vllm-ascend".into(),
            requests: a.requests,
            budget: a.budget,
            seed: a.seed,
        },
    };
    let t0 = std::time::Instant::now();
    let p = plan(&req)?;
    let secs = t0.elapsed().as_secs_f64();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&p).map_err(|e| format!("cannot encode the plan: {e}"))?);
    } else {
        print!("{}", p.to_text());
        if let Some(b) = &p.best {
            let launch = tunelab_scenario::report::export_for(&b.scenario, &b.config).launch;
            println!("\nlaunch of each replica ({} in all):\n{}", b.replicas, launch.to_text());
        }
    }
    eprintln!("planned in {secs:.2} s ({} evaluations)", p.evaluations);
    Ok(())
}

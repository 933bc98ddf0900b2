//! `tunelab`: the same engine as the browser app, natively.
//!
//! Arguments are parsed by clap (derive). Each command lives in its own module with
//! `#[derive(clap::Args)] pub struct Args` and `pub fn main(args: Args) -> Result<(), String>`;
//! this file holds the `Command` enum, one variant per module. An Err is printed as
//! "error: ..." and exits with status 2 (as clap does for bad arguments), so bad input never
//! panics. `--help` works on every command.

mod args;
mod bench;
mod benchrun;
mod bench_search;
mod bench_scale;
mod bench_serving;
mod bench_diffusion;
mod bench_inputs;
mod bench_sim;
mod bench_tunes;
mod completions;
mod calibrate;
mod devices;
mod diagnose;
mod eval;
mod fidelity;
mod chips;
mod guards;
mod impact;
mod op;
mod plan;
mod replay;
mod run;
mod strategies;
mod url;

use clap::{Parser, Subcommand};

/// Auto-tuning simulator for AI models on Ascend NPUs: the same engine as the browser app.
#[derive(Parser)]
#[command(name = "tunelab", version, arg_required_else_help = true, subcommand_required = true)]
struct Cli {
    /// Refuse any JSON input (scenario, link, measurement file, chip profile, model, knowledge
    /// base) that carries a key Tunelab does not read, instead of warning on stderr.
    #[arg(long, global = true)]
    strict: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the search strategies.
    Strategies(strategies::Args),
    /// Replay a Kernel Tuner cache with search strategies.
    Replay(replay::Args),
    /// List the device profiles (or print one with its sources).
    Devices(devices::Args),
    /// Estimate (and optionally tune) one operator on one device.
    Op(op::Args),
    /// Engine benchmarks (figures are printed, never asserted).
    Bench(bench::Args),
    /// Tune a scenario and print its report.
    Run(run::Args),
    /// Scenario <-> app URL fragment.
    Url(url::Args),
    /// Price one configuration of a scenario (no tuning) and print every metric.
    Eval(eval::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions::Args),
    /// Predicted vs measured for every row of a measurement file (or msprof op summary).
    Fidelity(fidelity::Args),
    /// What one change (precision, TP, batch, recompute, ZeRO) does at every stage.
    Impact(impact::Args),
    /// The scenario tuned on every bundled chip, each chip's own best beside the scenario chip's best.
    Chips(chips::Args),
    /// Over-optimisation guards on a configuration: another chip, protected layers, delta check.
    Guards(guards::Args),
    /// Diagnose one configuration: where the time goes, why, and what to change (each re-simulated).
    Diagnose(diagnose::Args),
    /// Fit a chip profile's declared parameters to measurements with the search engine.
    Calibrate(calibrate::Args),
    /// The fewest chips (or lowest cost) that serve a load within its SLOs, and how to launch them.
    Plan(plan::Args),
    /// A benchmark tool's result file (vllm bench serve --save-result) replayed on a launch scenario: predicted vs measured.
    Benchrun(benchrun::Args),
}

fn main() {
    let cli = Cli::try_parse().unwrap_or_else(|e| e.exit());
    args::set_strict(cli.strict);
    let result = match cli.command {
        Command::Strategies(a) => strategies::main(a),
        Command::Replay(a) => replay::main(a),
        Command::Plan(a) => plan::main(a),
        Command::Benchrun(a) => benchrun::main(a),
        Command::Devices(a) => devices::main(a),
        Command::Op(a) => op::main(a),
        Command::Bench(a) => bench::main(a),
        Command::Run(a) => run::main(a),
        Command::Url(a) => url::main(a),
        Command::Eval(a) => eval::main(a),
        Command::Completions(a) => completions::main(a),
        Command::Fidelity(a) => fidelity::main(a),
        Command::Calibrate(a) => calibrate::main(a),
        Command::Impact(a) => impact::main(a),
        Command::Chips(a) => chips::main(a),
        Command::Guards(a) => guards::main(a),
        Command::Diagnose(a) => diagnose::main(a),
    };
    if let Err(e) = result {
        eprintln!("error: {}", tunelab_scenario::spec::messages::shorten_numbers(&e));
        std::process::exit(2);
    }
}

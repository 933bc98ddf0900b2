//! `tunelab`: the same engine as the browser app, natively.
//!
//! Each command lives in its own module with `pub fn main(args: &[String]) -> Result<(), String>`;
//! an Err is printed as "error: ..." and exits with status 2, so bad input never panics.

mod args;
mod bench;
mod bench_search;
mod bench_sim;
mod devices;
mod op;
mod replay;
mod run;
mod strategies;
mod url;

const USAGE: &str = "tunelab: auto-tuning simulator for AI models on Ascend NPUs

usage:
  tunelab strategies                      list the search strategies
  tunelab replay --cache FILE --strategy NAME --budget N --seeds A-B [--json]
                                          replay a Kernel Tuner cache
  tunelab devices                         list the device profiles
  tunelab op --device CHIP --op KIND --shape S --dtype T [--tiling k=v,...] [--tune S] [--json]
                                          estimate (and tune) one operator
  tunelab bench [--json]                  engine benchmarks
  tunelab run SCENARIO.json [--progress] [--json] [--out report.json]
                                          tune a scenario and print its report
  tunelab url SCENARIO.json | tunelab url --decode FRAGMENT
                                          scenario <-> app URL fragment
";

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = argv.first() else {
        eprint!("{USAGE}");
        std::process::exit(2);
    };
    let rest = &argv[1..];
    let result = match cmd.as_str() {
        "strategies" => strategies::main(rest),
        "replay" => replay::main(rest),
        "devices" => devices::main(rest),
        "op" => op::main(rest),
        "bench" => bench::main(rest),
        "run" => run::main(rest),
        "url" => url::main(rest),
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command '{other}'\n\n{USAGE}")),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

//! `tunelab bench [--json]`: the engine's speed figures (search overhead, device-model
//! throughput). Figures are printed, never asserted: they depend on the machine.

use crate::args::Args;

pub fn main(args: &[String]) -> Result<(), String> {
    let a = Args::parse(args, &["json"], &[])?;
    if let Some(p) = a.positional.first() {
        return Err(format!("unexpected argument '{p}'"));
    }
    let mut figures = crate::bench_sim::figures();
    figures.extend(crate::bench_search::figures());
    if a.flag("json") {
        let obj: serde_json::Map<String, serde_json::Value> = figures.into_iter().collect();
        println!("{}", serde_json::Value::Object(obj));
    } else {
        for (k, v) in figures {
            println!("{k:<40} {v}");
        }
    }
    Ok(())
}

//! `tunelab eval SCENARIO.json --set batch=8,precision=bf16,tp=2`: prices one configuration of
//! the scenario's space without tuning and prints every metric; `--ops` adds the operator
//! breakdown of the phase that dominates the goal (the app's Explore detail).
//!
//! It prices through `Run::evaluate`, the stage objective the study itself calls, so the numbers
//! are exactly those a tuning run would report for the same configuration. Parameters not set
//! keep the baseline (the stage's default configuration).

use tunelab_search::{Config, Domain, Outcome, Param, Space, Value};

/// Arguments of `tunelab eval`.
#[derive(clap::Args)]
#[command(after_help = "Parameters not given keep the baseline (the stage's default configuration); `--list` shows the space.")]
pub struct Args {
    /// The scenario file.
    #[arg(value_name = "SCENARIO.json")]
    scenario: String,
    /// Parameter values, name=value,... (repeatable), e.g. batch=8,precision=bf16,tp=2.
    #[arg(long, value_name = "name=value,...")]
    set: Vec<String>,
    /// List the space's parameters and their values, then stop.
    #[arg(long)]
    list: bool,
    /// Also print the operator breakdown of the phase that dominates the goal (the app's
    /// Explore detail): each operator's time, share, bound, FLOP per byte and attained TFLOP/s.
    #[arg(long)]
    ops: bool,
    /// Print the result as one JSON document.
    #[arg(long)]
    json: bool,
    /// Also price the point on other request samples (seeds) and print the goal's spread over
    /// them (serving scenarios).
    #[arg(long)]
    spread: bool,
}

/// Entry point of the subcommand.
pub fn main(a: Args) -> Result<(), String> {
    let scenario = crate::run::load(&a.scenario)?;
    let mut run = crate::run::open(&a.scenario, &scenario, None)?;
    for n in run.notes() {
        eprintln!("note: {n}");
    }
    if a.list {
        for p in run.space().params() {
            println!("{:<24} {}", p.name, describe_domain(p));
        }
        return Ok(());
    }
    let config = configure(run.space(), run.baseline_config(), &a.set)?;
    let outcome = run.evaluate(&config);
    // The Explore detail of the point, from the run's own stage (the same objective).
    let detail = if a.ops { Some(run.detail(&config)?) } else { None };
    let baseline = run.baseline().clone();
    let names = run.space().names().to_vec();
    // The model's identity: parameters, weight bytes per precision and what is approximated
    // (the same figures as the report and the app's banner).
    let model = tunelab_scenario::context::resolve(&scenario).ok().map(|(m, _, _)| m);
    let metrics = run.metrics().to_vec();
    if a.json {
        let cfg: serde_json::Map<String, serde_json::Value> =
            names.iter().zip(&config.0).map(|(n, v)| (n.clone(), serde_json::to_value(v).unwrap_or_default())).collect();
        let values = |o: &Outcome| -> serde_json::Value {
            match o {
                Outcome::Ok(v) => metrics.iter().zip(v).map(|(m, x)| (m.name.clone(), serde_json::json!(x))).collect::<serde_json::Map<_, _>>().into(),
                _ => serde_json::Value::Null,
            }
        };
        let state = |o: &Outcome| match o {
            Outcome::Ok(_) => ("ok", None),
            Outcome::Infeasible(r) => ("infeasible", Some(r.clone())),
            Outcome::Failed(r) => ("failed", Some(r.clone())),
        };
        let (st, why) = state(&outcome);
        let (bst, bwhy) = state(&baseline);
        let out = serde_json::json!({
            "stage": scenario.stage.name(),
            "config": cfg,
            "state": st,
            "reason": why,
            "metrics": values(&outcome),
            "units": metrics.iter().map(|m| (m.name.clone(), serde_json::json!(m.unit))).collect::<serde_json::Map<_, _>>(),
            "baseline": { "state": bst, "reason": bwhy, "metrics": values(&baseline) },
            "prediction_band": tunelab_scenario::fidelity::bands::line_for(&scenario, &names, &config),
            // Where the mean TTFT goes (front end, queueing, prefill and its host share, hand-off).
            "ttft_split": tunelab_scenario::scheduler::ttft::of_point(&scenario, &names, &config),
            "operators": detail,
            "model": model.as_ref().map(|m| {
                let id = m.identity();
                serde_json::json!({
                    "name": m.name,
                    "params_total": id.params.total,
                    "params_active": id.params.active,
                    "weight_bytes": id.weights.iter().map(|w| (w.precision.to_string(), serde_json::json!(w.bytes))).collect::<serde_json::Map<_, _>>(),
                    "stack": id.stack,
                    "approximations": id.approximations,
                })
            }),
        });
        println!("{}", serde_json::to_string_pretty(&out).map_err(|e| format!("cannot encode the result: {e}"))?);
        return Ok(());
    }
    if let Some(m) = &model {
        println!("model          {}", m.identity_line());
        println!("               {}", m.stack_summary());
        for a in m.approximations() {
            println!("  approximates {a}");
        }
    }
    if names.len() <= 24 {
        println!("configuration  {}", config.describe(&names));
    } else {
        // Operator stages have hundreds of tiling parameters: show what differs from the baseline.
        let changed: Vec<String> = names
            .iter()
            .zip(config.0.iter().zip(&run.baseline_config().0))
            .filter(|(_, (v, b))| v != b)
            .map(|(n, (v, _))| format!("{n}={v}"))
            .collect();
        let shown = if changed.is_empty() { "the baseline".to_string() } else { changed.join(", ") };
        println!("configuration  {shown} (every other parameter at the baseline; {} in all, --json lists them)", names.len());
    }
    match &outcome {
        Outcome::Ok(v) => {
            let base = match &baseline {
                Outcome::Ok(b) => Some(b),
                _ => None,
            };
            // People read the registry's label and unit (a percentage as one); the id closes
            // the line for scripts and `--set`/`--json` users.
            let show = |id: &str, x: f64| if tunelab_scenario::metrics::info(id).percent { tunelab_scenario::metrics::fmt_metric(id, x) } else { fmt(x) };
            println!("{:<40} {:>14} {:>14}  id", "metric", "value", "baseline");
            for (i, (m, x)) in metrics.iter().zip(v).enumerate() {
                let b = base.and_then(|b| b.get(i)).map(|b| show(&m.name, *b)).unwrap_or_else(|| "-".into());
                println!("{:<40} {:>14} {:>14}  {}", tunelab_scenario::metrics::label_unit(&m.name, &m.unit), show(&m.name, *x), b, m.name);
            }
            // Where the time to first token goes (the simulation's own timestamps).
            if let Some(t) = tunelab_scenario::scheduler::ttft::of_point(&scenario, &names, &config) {
                println!();
                for l in t.lines() {
                    println!("{l}");
                }
            }
            // How far predictions of this kind landed from measurements the model had not
            // seen (leave-one-source-out residuals, docs/fidelity.md); rel_error above is only
            // the data types' numerical error.
            let band = tunelab_scenario::fidelity::bands::line_for(&scenario, &names, &config);
            if !band.is_empty() {
                println!("\n{band}");
            }
            // A throughput under an open load that the engine keeps up with is the load's.
            let named: Vec<(String, f64)> = metrics.iter().map(|m| m.name.clone()).zip(v.iter().copied()).collect();
            if let Some(l) = tunelab_scenario::stages::capacity::load_bound(&scenario, &named) {
                println!("\n{l}");
            }
            // A capacity answer bound by the search's ceiling or by the sample.
            if let Some(l) = tunelab_scenario::stages::capacity::bound_note(&scenario, &named) {
                println!("\n{l}");
            }
            if a.spread {
                if let Some(sp) = tunelab_scenario::stages::capacity::spread::headline(&scenario, &names, &config)? {
                    println!("\n{}", sp.describe());
                }
            }
        }
        Outcome::Infeasible(r) => println!("infeasible: {r}"),
        Outcome::Failed(r) => println!("failed: {r}"),
    }
    match detail {
        Some(d) if !d.ops.is_empty() => print_ops(&d),
        Some(_) if scenario.stage == tunelab_scenario::Stage::Landscape => println!("\n{}", tunelab_scenario::explore::LANDSCAPE_HAS_NO_OPS),
        _ => {}
    }
    if scenario.stage == tunelab_scenario::Stage::Diffusion && matches!(outcome, Outcome::Ok(_)) {
        // The pipeline's timeline, from the same pricer.
        let t = tunelab_scenario::stages::diffusion::timeline::timeline(&scenario, Some(&config))?;
        println!();
        for line in tunelab_scenario::stages::diffusion::timeline::describe(&t) {
            println!("{line}");
        }
    }
    Ok(())
}

/// The operator table of a point's detail, largest first, as the app's Explore shows it.
fn print_ops(d: &tunelab_scenario::explore::PointDetail) {
    use tunelab_scenario::metrics::fmt4;
    let engines: Vec<String> = d.exposed_ms.iter().filter(|(_, ms)| **ms > 0.0).map(|(k, ms)| format!("{k} {}", fmt4(*ms))).collect();
    println!("\noperators of {}: {} ms (exposed ms by engine: {})", d.simulated, fmt4(d.total_ms), engines.join(", "));
    println!("{:<44} {:>10} {:>8}  {:<13} {:>10} {:>9}", "operator", "ms", "share", "bound", "FLOP/byte", "TFLOP/s");
    let mut ops = d.ops.clone();
    ops.sort_by(|a, b| b.time_ms.total_cmp(&a.time_ms));
    let total: f64 = ops.iter().map(|o| o.time_ms).sum::<f64>().max(1e-12);
    for o in &ops {
        println!("{:<44} {:>10} {:>7}%  {:<13} {:>10} {:>9}", o.name, fmt4(o.time_ms), fmt4(100.0 * o.time_ms / total), o.bound, fmt4(o.intensity), fmt4(o.attained_tflops));
    }
}

fn fmt(x: f64) -> String {
    if x != 0.0 && (x.abs() >= 1e7 || x.abs() < 1e-3) { format!("{x:.4e}") } else { format!("{x:.4}") }
}

/// The baseline with the `--set` assignments applied; each name and value is checked against the
/// space, and an error names the one at fault with what is allowed.
pub fn configure(space: &Space, baseline: &Config, sets: &[String]) -> Result<Config, String> {
    let mut config = baseline.clone();
    if config.len() != space.params().len() {
        config = Config(space.params().iter().map(|p| p.level_value(0)).collect());
    }
    for kv in sets.iter().flat_map(|s| s.split(',')).map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = kv.split_once('=').ok_or_else(|| format!("--set entry '{kv}' is not name=value"))?;
        let (k, v) = (k.trim(), v.trim());
        let i = space.index_of(k).ok_or_else(|| {
            format!("--set: the space has no parameter '{k}'; it has: {}", space.names().join(", "))
        })?;
        let p = &space.params()[i];
        config.0[i] = parse_value(p, v)?;
    }
    space.check(&config).map_err(|e| format!("--set: this configuration is outside the scenario's space: {e}"))?;
    Ok(config)
}

/// Reads `text` as a value of `p`, or says what `p` allows.
fn parse_value(p: &Param, text: &str) -> Result<Value, String> {
    let bad = || format!("--set {}={text}: not a value of '{}' ({})", p.name, p.name, describe_domain(p));
    let v = match &p.domain {
        Domain::Int { .. } | Domain::Pow2 { .. } => Value::Int(text.parse::<i64>().map_err(|_| bad())?),
        Domain::Float { .. } => {
            let x = text.parse::<f64>().map_err(|_| bad())?;
            if !x.is_finite() {
                return Err(bad());
            }
            Value::Float(x)
        }
        Domain::Categorical { choices } => {
            let hit = choices.iter().find(|c| match c {
                Value::Str(s) => s.eq_ignore_ascii_case(text),
                n => text.parse::<f64>().ok().is_some_and(|x| n.as_f64() == Some(x)),
            });
            hit.cloned().ok_or_else(bad)?
        }
    };
    if !p.contains(&v) {
        return Err(bad());
    }
    Ok(v)
}

/// What a parameter allows, in a line ("1..64 step 1", "one of fp16, bf16", ...), the list cut
/// at 20 choices.
fn describe_domain(p: &Param) -> String {
    match &p.domain {
        Domain::Int { low, high, step } if *step == 1 => format!("integers {low}..={high}"),
        Domain::Int { low, high, step } => format!("integers {low}..={high} step {step}"),
        Domain::Pow2 { low, high } => format!("powers of two {low}..={high}"),
        Domain::Float { low, high, step: Some(s), .. } => format!("numbers {low}..={high} step {s}"),
        Domain::Float { low, high, .. } => format!("numbers {low}..={high}"),
        Domain::Categorical { choices } => {
            let shown: Vec<String> = choices.iter().take(20).map(|c| c.to_string()).collect();
            let more = if choices.len() > 20 { format!(", ... ({} in all)", choices.len()) } else { String::new() };
            format!("one of {}{more}", shown.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space() -> Space {
        Space::new(
            vec![
                Param::int("batch", 1, 64, 1),
                Param::categorical("precision", vec!["fp16".into(), "bf16".into()]),
                Param::categorical("tp", vec![Value::Int(1), Value::Int(2), Value::Int(4)]),
            ],
            &[],
        )
        .unwrap()
    }

    #[test]
    fn set_overrides_the_baseline_and_names_bad_names_and_values() {
        let s = space();
        let base = Config(vec![Value::Int(8), "fp16".into(), Value::Int(1)]);
        let c = configure(&s, &base, &["batch=16,precision=BF16".into(), "tp=2".into()]).unwrap();
        assert_eq!(c, Config(vec![Value::Int(16), "bf16".into(), Value::Int(2)]));
        // Unset parameters keep the baseline.
        assert_eq!(configure(&s, &base, &[]).unwrap(), base);
        let e = configure(&s, &base, &["batchsize=4".into()]).unwrap_err();
        assert!(e.contains("no parameter 'batchsize'") && e.contains("batch, precision, tp"), "{e}");
        let e = configure(&s, &base, &["precision=int4".into()]).unwrap_err();
        assert!(e.contains("'precision'") && e.contains("fp16, bf16"), "{e}");
        let e = configure(&s, &base, &["batch=65".into()]).unwrap_err();
        assert!(e.contains("'batch'") && e.contains("1..=64"), "{e}");
        let e = configure(&s, &base, &["tp=3".into()]).unwrap_err();
        assert!(e.contains("'tp'"), "{e}");
        assert!(configure(&s, &base, &["batch".into()]).unwrap_err().contains("name=value"));
    }
}

//! `tunelab bench --tunes [--only ID]`: the time of every bundled scenario's tune (assets/scenarios/*.json) as `tunelab
//! run` does it (open the scenario, run the study to its budget, price the best configuration's
//! spread over request samples), one line per scenario, slowest first. The target is a
//! tune under 3 s natively; the figures are printed, never asserted (they depend on the machine
//! and its load, so the 1-minute load average is printed beside each).

use std::time::Instant;

/// (name, value) pairs: per scenario its wall seconds, the CPU seconds of this thread (the
/// tunes run on it; what the machine's other work does not move much) and its evaluations.
pub fn figures(only: Option<&str>) -> Result<Vec<(String, serde_json::Value)>, String> {
    let mut rows: Vec<(String, f64, Option<f64>, usize, Option<f64>)> = Vec::new();
    let mut found = false;
    for (id, path) in scenario_files()? {
        if only.is_some_and(|o| o != id) {
            continue;
        }
        found = true;
        let s = crate::run::load(&path)?;
        let load = crate::bench_sim::load_average();
        let (t0, c0) = (Instant::now(), crate::bench_sim::thread_cpu_s());
        let evaluations = tune(&path, &s)?;
        let wall = t0.elapsed().as_secs_f64();
        let cpu = match (c0, crate::bench_sim::thread_cpu_s()) {
            (Some(a), Some(b)) => Some(b - a),
            _ => None,
        };
        rows.push((id.to_string(), wall, cpu, evaluations, load));
    }
    if !found {
        return Err(format!("--only: no bundled scenario '{}'", only.unwrap_or_default()));
    }
    rows.sort_by(|a, b| b.2.unwrap_or(b.1).total_cmp(&a.2.unwrap_or(a.1)));
    let mut out = Vec::new();
    for (id, wall, cpu, evals, load) in rows {
        out.push((
            format!("tune {id}"),
            serde_json::json!({ "wall_s": round3(wall), "cpu_s": cpu.map(round3), "evaluations": evals, "load_average_1min": load }),
        ));
    }
    Ok(out)
}

/// The bundled scenario files (assets/scenarios/*.json, landscapes included), by id, in name
/// order: from the current directory or the source tree this binary was built from.
fn scenario_files() -> Result<Vec<(String, String)>, String> {
    let dirs = [std::path::PathBuf::from("assets/scenarios"), std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/scenarios")];
    let dir = dirs.iter().find(|d| d.is_dir()).ok_or_else(|| format!("--tunes: no scenario folder at {}", dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(" or ")))?;
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read '{}': {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|p| Some((p.file_stem()?.to_string_lossy().into_owned(), p.to_string_lossy().into_owned())))
        .collect();
    files.sort();
    Ok(files)
}

/// Tunes one scenario file as `tunelab run` does; returns the evaluations made.
fn tune(path: &str, s: &tunelab_scenario::Scenario) -> Result<usize, String> {
    let mut run = crate::run::open(path, s, None)?;
    while !run.is_done() {
        run.step(256);
    }
    if let Some((_, t)) = run.overall_best() {
        tunelab_scenario::stages::capacity::spread::headline(run.scenario(), run.space().names(), &t.config)?;
    }
    Ok(run.evaluations())
}

fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

//! The Calibrate panel: drop a measurement file (tunelab-measurements/1 JSON) or an msprof
//! `op_summary_*.csv`, see Tunelab's predictions against the measured values (log-log scatter),
//! fit the chip profile's declared parameters with the search engine (before/after), and adopt
//! the calibrated profile for the scenario, so it travels in the link.
//!
//! Why in the engine worker: reading an op summary, pricing every row and a fit (a study of a
//! few hundred evaluations, each pricing every row) are the engine's work; the page asks
//! (`tunelab_engine::questions`: `Measurements`, `Fidelity`, `Fit`) and never freezes. The
//! answers are the library's (`tunelab_scenario::calibrate`, `fidelity`), the same code
//! `tunelab calibrate` runs.

use crate::browser;
use crate::state::Ctx;
use leptos::prelude::*;
use crate::worker::ask::{ask, Answer, Question};
use tunelab_scenario::calibrate::{compact_profile, Calibration, Options};
use tunelab_scenario::fidelity::{num, plot, FidelityReport, MeasurementSet};
use tunelab_scenario::scenario::DeviceRef;

/// Largest file read.
const MAX_FILE: usize = 16 * 1024 * 1024;

/// A loaded file.
#[derive(Clone)]
struct Loaded {
    name: String,
    set: MeasurementSet,
    digest: String,
    skipped: usize,
}

/// The scenario's chip: its name and its profile file (JSON, with declared bounds).
fn chip_profile(ctx: Ctx) -> Result<(String, serde_json::Value), String> {
    ctx.scenario.with_untracked(|s| match &s.device {
        DeviceRef::Name(n) => {
            let t = tunelab_sim::device::bundled_profile_text(n).ok_or_else(|| format!("unknown chip '{n}'"))?;
            let v: serde_json::Value = serde_json::from_str(t).map_err(|e| e.to_string())?;
            Ok((v.get("name").and_then(|x| x.as_str()).unwrap_or(n).to_string(), v))
        }
        DeviceRef::Inline(v) => Ok((v.get("name").and_then(|x| x.as_str()).unwrap_or("custom").to_string(), v.clone())),
    })
}

fn scatter(before: &FidelityReport, after: Option<&Calibration>) -> String {
    let mut series = vec![plot::Series { label: "current profile", points: before.rows.iter().map(|c| (c.measured, c.predicted, c.category.clone())).collect(), hollow: after.is_some() }];
    if let Some(cal) = after {
        let cat = |id: &str| before.rows.iter().find(|c| c.id == id).map(|c| c.category.clone()).unwrap_or_default();
        series.push(plot::Series { label: "calibrated", points: cal.rows.iter().filter_map(|r| r.after.map(|a| (r.measured, a, cat(&r.id)))).collect(), hollow: false });
    }
    plot::scatter_svg(&series, "Predicted vs measured (log-log)")
}

fn pct(x: Option<f64>) -> String {
    x.map(|e| format!("{:+.1}%", e * 100.0)).unwrap_or_else(|| "—".into())
}

/// The Calibrate panel.
#[component]
pub fn CalibratePanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let loaded: RwSignal<Option<Loaded>> = RwSignal::new(None);
    let before: RwSignal<Option<FidelityReport>> = RwSignal::new(None);
    let result: RwSignal<Option<Calibration>> = RwSignal::new(None);
    // The fit asked of the worker (its evaluations), until it answers.
    let fitting = RwSignal::new(None::<usize>);
    let budget = RwSignal::new(60usize);
    let loo = RwSignal::new(false);
    let family = RwSignal::new(false);
    let token = RwSignal::new(0u64);

    // Prices the loaded rows on the scenario's chip with the current profile.
    let compare = move || {
        let Some(l) = loaded.get_untracked() else { return };
        let (chip, profile) = match chip_profile(ctx) {
            Ok(x) => x,
            Err(e) => return ctx.fail(e),
        };
        result.set(None);
        ask(Question::Fidelity { set: Box::new(l.set), chip, profile, family: family.get_untracked() }, move |r| match r {
            Ok(Answer::Fidelity { report }) => before.set(Some(report)),
            Ok(_) => {}
            Err(e) => ctx.fail(format!("Calibrate: {e}")),
        });
    };
    let use_text = move |name: String, text: String| {
        let chip = chip_profile(ctx).map(|c| c.0).unwrap_or_else(|_| "910B2".into());
        ask(Question::Measurements { text, name: name.clone(), chip }, move |r| match r {
            Ok(Answer::Measurements { set, skipped, digest }) => {
                loaded.set(Some(Loaded { name, set, digest, skipped }));
                compare();
            }
            Ok(_) => {}
            Err(e) => ctx.fail(format!("'{name}' was not read: {e}")),
        });
    };
    let read = move |f: web_sys::File| {
        if f.size() > MAX_FILE as f64 {
            ctx.fail(format!("'{}' is {} bytes; at most {MAX_FILE} are read.", f.name(), f.size()));
            return;
        }
        let name = f.name();
        leptos::task::spawn_local(async move {
            match wasm_bindgen_futures::JsFuture::from(f.text()).await.ok().and_then(|v| v.as_string()) {
                Some(t) => use_text(name, t),
                None => ctx.fail(format!("'{name}' could not be read as text.")),
            }
        });
    };
    let on_file = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(f) = input.files().and_then(|l| l.get(0)) {
            read(f);
        }
    };
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        if let Some(f) = ev.data_transfer().and_then(|d| d.files()).and_then(|l| l.get(0)) {
            read(f);
        }
    };
    let fit = move |_| {
        let Some(l) = loaded.get_untracked() else { return ctx.fail("Drop a measurement file or an op summary first.") };
        let (chip, profile) = match chip_profile(ctx) {
            Ok(x) => x,
            Err(e) => return ctx.fail(e),
        };
        let opts = Options { budget: budget.get_untracked().clamp(1, 2000), loo_budget: if loo.get_untracked() { 15 } else { 0 }, family: family.get_untracked(), ..Options::default() };
        result.set(None);
        let mine = token.get_untracked() + 1;
        token.set(mine);
        fitting.set(Some(opts.budget));
        let question = Question::Fit { set: Box::new(l.set), digest: l.digest, chip, profile, options: opts };
        ask(question, move |r| {
            // Stopped (or another fit started) meanwhile: this answer is dropped.
            if token.try_get_untracked() != Some(mine) {
                return;
            }
            fitting.set(None);
            match r {
                Ok(Answer::Fit { calibration }) => result.set(Some(calibration)),
                Ok(_) => {}
                Err(e) => ctx.fail(format!("The fit stopped: {e}")),
            }
        });
    };
    let stop = move |_| {
        token.update(|t| *t += 1);
        fitting.set(None);
    };
    let adopt = move |_| {
        if let Some(r) = result.get_untracked() {
            if ctx.edit(|s| s.device = DeviceRef::Inline(compact_profile(&r.profile))) {
                compare();
            }
        }
    };
    let download = move |_| {
        if let Some(r) = result.get_untracked() {
            let text = serde_json::to_string_pretty(&r.profile).unwrap_or_default();
            if let Err(e) = browser::download(&format!("{}-calibrated.json", r.device), "application/json", &text) {
                ctx.fail(e);
            }
        }
    };
    let running = move || fitting.with(|f| f.is_some());
    view! {
        <details class="panel calibrate" data-testid="calibrate-panel">
            <summary><h2>"Calibrate the chip to measurements"</h2></summary>
            <p class="hint">"Drop a measurement file (docs/measurements.md) or an Ascend profiler op_summary_*.csv. Rows on the scenario's chip are predicted with its profile; a fit adjusts the profile's declared parameters within their bounds, using the search engine."</p>
            <div class="drop" on:dragover=move |ev: leptos::ev::DragEvent| ev.prevent_default() on:drop=on_drop>
                <input type="file" accept=".json,.csv,application/json,text/csv" data-testid="calibrate-file" on:change=on_file/>
                " or drop a file here"
            </div>
            <p class="muted small" data-testid="calibrate-loaded">{move || loaded.with(|l| l.as_ref().map(|l| format!("{}: {} rows ({} operators of an op summary not modelled)", l.name, l.set.rows.len(), l.skipped)).unwrap_or_default())}</p>
            <label class="check">
                <input type="checkbox" prop:checked=move || family.get() on:change=move |ev| { family.set(event_target_checked(&ev)); compare(); }/>
                "Use every row of the file (each on its own chip, the fitted values shared), not only this chip's"
            </label>
            <label>"Evaluations "
                <input type="number" min="1" max="2000" data-testid="calibrate-budget" prop:value=move || budget.get().to_string() on:change=move |ev| budget.set(event_target_value(&ev).parse().unwrap_or(60))/>
            </label>
            <label class="check">
                <input type="checkbox" prop:checked=move || loo.get() on:change=move |ev| loo.set(event_target_checked(&ev))/>
                "Leave-one-source-out error (refits once per source; slower)"
            </label>
            <button data-testid="calibrate-fit" on:click=fit disabled=move || loaded.with(|l| l.is_none())>"Fit the profile"</button>
            <Show when=running><button on:click=stop>"Stop"</button>{move || format!(" fitting: {} evaluations in the engine worker", fitting.get().unwrap_or(0))}</Show>
            <p data-testid="calibrate-summary">{move || {
                let b = before.get();
                match (b, result.get()) {
                    (Some(_), Some(r)) => format!(
                        "{} rows, {} values: median |error| {} before, {} after{}; residual {:.3} → {:.3}",
                        r.rows_used, r.rows.len(), pct(r.median_abs_error_before).trim_start_matches('+'), pct(r.median_abs_error_after).trim_start_matches('+'),
                        r.median_abs_error_loo.map(|l| format!(", {:.1}% leaving each source out", l * 100.0)).unwrap_or_default(), r.loss_before, r.loss_after
                    ),
                    (Some(b), None) => format!("{} of {} rows predicted ({} values); median |error| {}", b.summary.rows_covered, b.summary.rows_total, b.summary.values_compared, pct(b.summary.overall.median_abs_error).trim_start_matches('+')),
                    _ => String::new(),
                }
            }}</p>
            <div class="plot" data-testid="calibrate-plot" inner_html=move || before.with(|b| b.as_ref().map(|b| result.with(|r| scatter(b, r.as_ref()))).unwrap_or_default())></div>
            <Show when=move || result.with(|r| r.is_some())>
                <h3>"Fitted parameters"</h3>
                <table class="small" data-testid="calibrate-params">
                    <tr><th>"parameter"</th><th>"before"</th><th>"after"</th><th>"bounds"</th></tr>
                    {move || result.get().map(|r| r.params.into_iter().map(|p| view! {
                        <tr><td>{p.name}</td><td>{num(p.before)}</td><td>{num(p.after)}</td><td>{format!("[{}, {}]", num(p.min), num(p.max))}</td></tr>
                    }).collect_view())}
                </table>
                // A fit that moved no parameter (or did not lower the error) has nothing to adopt:
                // adopting it would only turn the chip into an edited copy of itself.
                <Show when=move || result.with(|r| r.as_ref().is_some_and(fit_changes_something)) fallback=move || view! {
                    <p class="warning" data-testid="calibrate-nothing">{move || result.with(|r| r.as_ref().map(nothing_changed).unwrap_or_default())}</p>
                }>
                    <button data-testid="calibrate-adopt" on:click=adopt>"Adopt the calibrated profile for this scenario"</button>
                    " "
                    <button on:click=download>"Download the profile"</button>
                </Show>
            </Show>
            <details>
                <summary>"Every value"</summary>
                <table class="small" data-testid="calibrate-rows">
                    <tr><th>"case"</th><th>"metric"</th><th>"measured"</th><th>"predicted"</th><th>"error"</th><th>"after fit"</th><th>"source left out"</th></tr>
                    {move || {
                        let r = result.get();
                        before.get().map(|b| b.rows.into_iter().map(|c| {
                            let fit = r.as_ref().and_then(|r| r.rows.iter().find(|x| x.case == c.case && x.metric == c.metric).cloned());
                            view! {
                                <tr><td>{c.case.clone()}</td><td>{c.metric.clone()}</td><td>{format!("{} {}", num(c.measured), c.unit)}</td><td>{num(c.predicted)}</td><td>{pct(Some(c.error))}</td>
                                <td>{pct(fit.as_ref().and_then(|f| f.error_after))}</td><td>{pct(fit.as_ref().and_then(|f| f.error_loo))}</td></tr>
                            }
                        }).collect_view())
                    }}
                </table>
            </details>
            <crate::components::benchrun_panel::BenchrunPanel/>
        </details>
    }
}

/// True when the fit moved a parameter and lowered the median error: only then is there a
/// profile worth adopting.
pub fn fit_changes_something(r: &tunelab_scenario::calibrate::Calibration) -> bool {
    let moved = r.params.iter().any(|p| (p.after - p.before).abs() > 1e-9 * p.before.abs().max(1e-12));
    let better = match (r.median_abs_error_before, r.median_abs_error_after) {
        // Half a tenth of a percentage point of median error, or 1% of the fit's loss.
        (Some(b), Some(a)) => b - a >= 5e-4 || r.loss_after < 0.99 * r.loss_before,
        _ => r.loss_after < 0.99 * r.loss_before,
    };
    moved && better
}

/// Why there is nothing to adopt, in words.
pub fn nothing_changed(r: &tunelab_scenario::calibrate::Calibration) -> String {
    let err = r.median_abs_error_before.map(|e| format!(" (median |error| stays {}%)", crate::charts::numbers::fmt4(e * 100.0))).unwrap_or_default();
    format!("The fit changed nothing{err}: no parameter moved enough to lower the error, so there is nothing to adopt. The profile as it is already fits these rows as well as its bounds allow.")
}

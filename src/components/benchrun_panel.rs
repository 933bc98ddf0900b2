//! The benchmark-file panel: drop the files a serving benchmark tool wrote (vLLM's
//! `vllm bench serve --save-result` JSON, SGLang's bench_serving JSONL, AISBench's performance
//! JSON/CSV, MindIE Benchmark's result CSVs), see each run's workload as read and Tunelab's
//! prediction of it on the scenario's launch against what it measured, and calibrate the
//! framework layer (the launch engine's host costs) with the leave-one-source-out error beside
//! the fit. Errors show next to the drop zone.
//!
//! Why in the engine worker: the readers, the pricing of every run and the fit are the engine's
//! (`tunelab_engine::questions`: `BenchRuns`, `BenchFit`, the functions `tunelab benchrun`
//! calls); the page's module links no reader and keeps its first-load budget.

use crate::state::Ctx;
use crate::worker::ask::{ask, Answer, Question};
use leptos::prelude::*;
use tunelab_scenario::calibrate::Options;
use tunelab_scenario::evidence::benchruns::{calibrate::FrameworkFit, BenchRun};
use tunelab_scenario::fidelity::{num, FidelityReport, MeasurementSet};

/// Largest file read (the engine checks its own bound again).
const MAX_FILE: f64 = 8.0 * 1024.0 * 1024.0;

fn pct(x: Option<f64>) -> String {
    x.map(|e| format!("{:+.1}%", e * 100.0)).unwrap_or_else(|| "—".into())
}

/// One run's workload as read, in words.
fn describe(r: &BenchRun) -> String {
    let rate = if !r.rate_stated { "rate not in the file".to_string() } else { r.request_rate.map(|x| format!("{x} req/s")).unwrap_or_else(|| "all at once".into()) };
    let cap = r.max_concurrency.map(|c| format!(", at most {c} in flight")).unwrap_or_default();
    let per = if r.input_lens.is_empty() { String::new() } else { ", per-request lengths".into() };
    format!("{}: {}, {} requests, {rate}{cap}, {:.0} in / {:.0} out{per}", r.label, r.tool, r.completed, r.mean_input, r.mean_output)
}

/// The panel (mounted in the Calibrate view).
#[component]
pub fn BenchrunPanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let files: RwSignal<Vec<(String, String)>> = RwSignal::new(Vec::new());
    let format = RwSignal::new("auto".to_string());
    let rate = RwSignal::new(String::new());
    let serve = RwSignal::new(String::new());
    let launch: RwSignal<Vec<String>> = RwSignal::new(Vec::new());
    let error = RwSignal::new(String::new());
    let runs: RwSignal<Vec<BenchRun>> = RwSignal::new(Vec::new());
    let report: RwSignal<Option<FidelityReport>> = RwSignal::new(None);
    let set: RwSignal<Option<(MeasurementSet, String)>> = RwSignal::new(None);
    let fit: RwSignal<Option<FrameworkFit>> = RwSignal::new(None);
    let busy = RwSignal::new(String::new());
    let token = RwSignal::new(0u64);
    // What the last "Adopt" put into the scenario (cleared when other files are dropped).
    let adopted = RwSignal::new(String::new());

    // Reads the held files on the scenario's launch (again after a format, rate or scenario change).
    let price = move || {
        let held = files.get_untracked();
        if held.is_empty() {
            return;
        }
        let mine = token.get_untracked() + 1;
        token.set(mine);
        fit.set(None);
        busy.set("reading and pricing the runs in the engine worker…".into());
        let r = rate.get_untracked();
        let q = Question::BenchRuns { files: held, format: format.get_untracked(), rate: (!r.trim().is_empty()).then_some(r), scenario: Box::new(ctx.scenario.get_untracked()), serve: Some(serve.get_untracked()).filter(|c| !c.trim().is_empty()) };
        ask(q, move |a| {
            if token.try_get_untracked() != Some(mine) {
                return;
            }
            busy.set(String::new());
            match a {
                Ok(Answer::BenchRuns { runs: got, set: s, digest, report: rep, launch: notes }) => {
                    error.set(String::new());
                    launch.set(notes);
                    runs.set(got);
                    report.set(Some(rep));
                    set.set(Some((s, digest)));
                }
                Ok(_) => {}
                Err(e) => {
                    error.set(e);
                    runs.set(Vec::new());
                    report.set(None);
                    set.set(None);
                }
            }
        });
    };
    let take = move |list: web_sys::FileList| {
        let n = list.length();
        let mut picked = Vec::new();
        for i in 0..n {
            if let Some(f) = list.get(i) {
                if f.size() > MAX_FILE {
                    error.set(format!("'{}' is {} bytes; a benchmark file may have at most 8 MiB.", f.name(), f.size()));
                    return;
                }
                picked.push(f);
            }
        }
        leptos::task::spawn_local(async move {
            let mut read = Vec::new();
            for f in picked {
                let name = f.name();
                match wasm_bindgen_futures::JsFuture::from(f.text()).await.ok().and_then(|v| v.as_string()) {
                    Some(t) => read.push((name, t)),
                    None => {
                        error.set(format!("'{name}' could not be read as text."));
                        return;
                    }
                }
            }
            files.set(read);
            adopted.set(String::new());
            price();
        });
    };
    let on_file = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(l) = input.files() {
            take(l);
        }
    };
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        if let Some(l) = ev.data_transfer().and_then(|d| d.files()) {
            take(l);
        }
    };
    let calibrate = move |_| {
        let Some((s, digest)) = set.get_untracked() else { return error.set("Drop benchmark files first.".into()) };
        let mine = token.get_untracked() + 1;
        token.set(mine);
        busy.set("fitting the framework layer in the engine worker (with leave-one-source-out refits)…".into());
        let opts = Options { budget: 120, loo_budget: 20, ..Options::default() };
        ask(Question::BenchFit { set: Box::new(s), digest, options: opts }, move |a| {
            if token.try_get_untracked() != Some(mine) {
                return;
            }
            busy.set(String::new());
            match a {
                Ok(Answer::BenchFit { fit: f }) => fit.set(Some(f)),
                Ok(_) => {}
                Err(e) => error.set(format!("The fit stopped: {e}")),
            }
        });
    };
    // Adopts the fit into this scenario (its deployment.serving.host_costs; the link follows).
    let adopt = move |_| {
        let Some(f) = fit.get_untracked() else { return };
        let mut s = ctx.scenario.get_untracked();
        match f.adopt(&mut s) {
            Ok(lines) => {
                if ctx.replace(s) {
                    adopted.set(format!("Adopted into this scenario: {}. Its predictions and its link now carry these host costs.", lines.join("; ")));
                    price();
                }
            }
            Err(e) => adopted.set(format!("Not adopted: {e}.")),
        }
    };
    view! {
        <div class="benchrun" data-testid="benchrun-panel">
            <h3>"Your own benchmark runs"</h3>
            <p class="hint">"Drop the files a benchmark tool wrote: vllm bench serve --save-result JSON, SGLang bench_serving JSONL, AISBench's <dataset>.json / .csv / _details.jsonl, MindIE Benchmark's result_common / result_perf CSV (several files of one run together). Each run is replayed on this scenario's model, chip and configuration with the workload the file gives, and predicted against what it measured."</p>
            <div class="drop" on:dragover=move |ev: leptos::ev::DragEvent| ev.prevent_default() on:drop=on_drop data-testid="benchrun-drop">
                <input type="file" multiple accept=".json,.jsonl,.csv,application/json,text/csv" data-testid="benchrun-file" on:change=on_file/>
                " or drop files here"
                <p class="error" data-testid="benchrun-error">{move || error.get()}</p>
            </div>
            <label>"Format "
                <select data-testid="benchrun-format" on:change=move |ev| { format.set(event_target_value(&ev)); price(); }>
                    {["auto", "vllm", "sglang", "aisbench", "mindie"].into_iter().map(|f| view! { <option value=f selected=move || format.get() == f>{f}</option> }).collect_view()}
                </select>
            </label>
            " "
            <label>"Request rate (files without one: AISBench, MindIE) "
                <input type="text" size="8" placeholder="req/s or inf" data-testid="benchrun-rate" prop:value=move || rate.get() on:change=move |ev| { rate.set(event_target_value(&ev)); price(); }/>
            </label>
            <label class="block">"Serving command the runs were measured on (optional; else this scenario's configuration) "
                <textarea rows="2" cols="70" placeholder="vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2 --max-num-seqs 64" data-testid="benchrun-serve" prop:value=move || serve.get() on:change=move |ev| { serve.set(event_target_value(&ev)); price(); }></textarea>
            </label>
            <ul class="small muted" data-testid="benchrun-launch">{move || launch.get().into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul>
            <p class="muted small">{move || busy.get()}</p>
            <ul class="small" data-testid="benchrun-runs">
                {move || runs.get().into_iter().map(|r| {
                    let warn = r.warnings.join("; ");
                    view! { <li>{describe(&r)}<Show when={let w = warn.clone(); move || !w.is_empty()}><br/><span class="warning">{warn.clone()}</span></Show></li> }
                }).collect_view()}
            </ul>
            <p data-testid="benchrun-summary">{move || report.with(|r| r.as_ref().map(|b| format!(
                "{} of {} runs predicted ({} values); median |error| {}",
                b.summary.rows_covered, b.summary.rows_total, b.summary.values_compared, pct(b.summary.overall.median_abs_error).trim_start_matches('+')
            )).unwrap_or_default())}</p>
            <Show when=move || report.with(|r| r.is_some())>
                <table class="small" data-testid="benchrun-table">
                    <tr><th>"run"</th><th>"measured as"</th><th>"measured"</th><th>"predicted"</th><th>"error"</th></tr>
                    {move || report.get().map(|b| b.rows.into_iter().map(|c| view! {
                        <tr><td>{c.id.clone()}</td><td>{c.metric.clone()}</td><td>{format!("{} {}", num(c.measured), c.unit)}</td><td>{num(c.predicted)}</td><td>{pct(Some(c.error))}</td></tr>
                    }).collect_view())}
                </table>
                {move || report.with(|r| r.as_ref().map(|b| b.unexpressed.iter().map(|u| format!("not compared: {} {}: {}", u.id, u.metric, u.reason)).collect::<Vec<_>>().join("\n"))).map(|t| view! { <pre class="small muted" data-testid="benchrun-unexpressed">{t}</pre> })}
                <button data-testid="benchrun-calibrate" on:click=calibrate>"Calibrate the framework layer"</button>
            </Show>
            <Show when=move || fit.with(|f| f.is_some())>
                <p data-testid="benchrun-fit-summary">{move || fit.with(|f| f.as_ref().map(|f| {
                    let c = &f.calibration;
                    format!(
                        "Framework layer {}: median |error| {} before, {} after, {} leaving each source out ({} values)",
                        f.engine, pct(c.median_abs_error_before).trim_start_matches('+'), pct(c.median_abs_error_after).trim_start_matches('+'), pct(c.median_abs_error_loo).trim_start_matches('+'), c.rows.len()
                    )
                }).unwrap_or_default())}</p>
                <table class="small" data-testid="benchrun-fit-params">
                    <tr><th>"parameter (layer)"</th><th>"before"</th><th>"after"</th><th>"bounds"</th></tr>
                    {move || fit.get().map(|f| f.calibration.params.into_iter().map(|p| view! {
                        <tr><td>{p.name}</td><td>{num(p.before)}</td><td>{num(p.after)}</td><td>{format!("[{}, {}]", num(p.min), num(p.max))}</td></tr>
                    }).collect_view())}
                </table>
                {move || fit.with(|f| f.as_ref().map(|f| if crate::components::calibrate::fit_changes_something(&f.calibration) {
                    view! { <button data-testid="benchrun-adopt" on:click=adopt>"Adopt the fitted host costs into this scenario"</button> }.into_any()
                } else {
                    view! { <p class="muted small" data-testid="benchrun-nothing-to-adopt">{"The fit changed nothing that lowers the error: no host cost to adopt. The engine's host costs as they are fit these runs as well as their bounds allow."}</p> }.into_any()
                }))}
            </Show>
            // Outside the fit's block: adopting re-prices the runs on the changed scenario, which
            // clears the fit, and the user must still see what was adopted.
            <p class="small" data-testid="benchrun-adopted">{move || adopted.get()}</p>
        </div>
    }
}

//! Diagnosis and the report, with exports as downloads: report JSON, trials CSV, deployment
//! configs, and the charts as SVG.

use crate::browser;
use crate::charts::{convergence, scatter};
use crate::state::Ctx;
use leptos::prelude::*;
use tunelab_scenario::diagnosis::{diagnose, Diagnosis, Weights};
use tunelab_scenario::report::{trials_csv, Report};
use tunelab_scenario::serving::Phase;

/// The diagnosis and report view.
#[component]
pub fn ReportPanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let report = Memo::new(move |_| {
        ctx.view.track();
        ctx.with_session(|s| s.run().report())
    });
    let diagnosis = RwSignal::new(None::<Diagnosis>);
    let diagnose_now = move |_| {
        let s = ctx.scenario.get_untracked();
        let best = ctx.with_session(|x| x.run().overall_best().map(|(_, t)| (x.run().space().names().to_vec(), t.config.clone()))).flatten();
        let r = match &best {
            Some((names, cfg)) => diagnose(&s, names, Some(cfg), Phase::Decode, Weights::default()),
            None => diagnose(&s, &[], None, Phase::Decode, Weights::default()),
        };
        match r {
            Ok(d) => diagnosis.set(Some(d)),
            Err(e) => ctx.fail(format!("Diagnosis: {e}")),
        }
    };
    let save = move |name: &str, mime: &str, text: String| {
        if let Err(e) = browser::download(name, mime, &text) {
            ctx.fail(e);
        }
    };
    let export_json = move |_| {
        if let Some(r) = report.get_untracked() {
            save("tunelab-report.json", "application/json", r.to_json());
        }
    };
    let export_csv = move |_| {
        if let Some(csv) = ctx.with_session(|s| trials_csv(s.run(), 0)) {
            save("tunelab-trials.csv", "text/csv", csv);
        }
    };
    let export_deploy = move |_| {
        if let Some(d) = report.get_untracked().and_then(|r| r.deployment) {
            let text = format!("# vLLM-Ascend\nvllm serve {}\n\n# MindIE-style service configuration\n{}\n", d.vllm_args.join(" "), serde_json::to_string_pretty(&d.mindie_config).unwrap_or_default());
            save("tunelab-deployment.txt", "text/plain", text);
        }
    };
    let export_svg = move |_| {
        if let Some(v) = ctx.view.get_untracked() {
            save("tunelab-convergence.svg", "image/svg+xml", convergence::to_svg_string(&v.convergence));
            save("tunelab-trials.svg", "image/svg+xml", scatter::to_svg_string(&v.scatter));
        }
    };
    view! {
        <section class="panel report">
            <h2>"Diagnosis"</h2>
            <p class="hint">"Bottlenecks of the best configuration found (or the baseline before a run), the cause chain, and suggestions ranked by effectiveness, cost and risk, each re-simulated."</p>
            <button data-testid="diagnose" on:click=diagnose_now>"Diagnose"</button>
            {move || diagnosis.get().map(diagnosis_view)}
            <h2>"Report"</h2>
            <Show when=move || report.with(|r| r.is_some()) fallback=|| view! { <p class="hint">"Run a tuning to get its report."</p> }>
                {move || report.get().map(report_view)}
                <div class="row">
                    <button data-testid="export-json" on:click=export_json>"Report JSON"</button>
                    <button data-testid="export-csv" on:click=export_csv>"Trials CSV"</button>
                    <Show when=move || report.with(|r| r.as_ref().is_some_and(|r| r.deployment.is_some()))>
                        <button data-testid="export-deploy" on:click=export_deploy>"Deployment configs"</button>
                    </Show>
                    <button data-testid="export-svg" on:click=export_svg>"Charts as SVG"</button>
                </div>
            </Show>
        </section>
    }
}

fn diagnosis_view(d: Diagnosis) -> impl IntoView {
    view! {
        <div class="diagnosis" data-testid="diagnosis">
            <p>{format!("{} phase: step {:.3} ms, {:.1} tokens/s, {:.2} GiB per chip", d.phase.name(), d.step_ms, d.tokens_per_s, d.memory_gib)}</p>
            <p>"Time by bottleneck: " {d.bottlenecks.iter().map(|(k, v)| format!("{k} {:.0}%", v * 100.0)).collect::<Vec<_>>().join(", ")}</p>
            <h3>"Root cause"</h3>
            <ol>{d.cause_chain.into_iter().map(|c| view! { <li>{c}</li> }).collect_view()}</ol>
            <h3>"Hot spots"</h3>
            <table><thead><tr><th>"operator"</th><th>"share"</th><th>"bound"</th><th>"ms"</th></tr></thead><tbody>
                {d.hot_spots.into_iter().take(8).map(|h| view! { <tr><td>{h.name}</td><td>{format!("{:.1}%", h.share * 100.0)}</td><td>{h.bound}</td><td>{format!("{:.4}", h.time_ms)}</td></tr> }).collect_view()}
            </tbody></table>
            <h3>"Suggestions"</h3>
            <ol>{d.suggestions.into_iter().map(|s| {
                let effect = match (s.predicted_step_ms, &s.infeasible) {
                    (_, Some(r)) => format!("infeasible: {r}"),
                    (Some(ms), None) => format!("predicted step {ms:.3} ms"),
                    _ => String::new(),
                };
                view! { <li>{format!("{} (score {:.2}; {effect})", s.title, s.score)}</li> }
            }).collect_view()}</ol>
            <p class="muted small">{d.note}</p>
        </div>
    }
}

fn report_view(r: Report) -> impl IntoView {
    let show = |v: Option<f64>| v.map(tunelab_scenario::format_best).unwrap_or_else(|| "—".into());
    view! {
        <div data-testid="report">
            <p>{format!("{} · {} stage · {} on {} · seed {} · {} evaluations", r.name, r.stage, r.model, r.device, r.seed, r.evaluations)}</p>
            <p>"Best " {r.metric.clone()} ": " <strong>{show(r.best)}</strong> " " {r.unit.clone()} {r.best_strategy.clone().map(|s| format!(" (found by {s})")).unwrap_or_default()}</p>
            <p class="bad">{r.baseline_infeasible.clone().map(|e| format!("The baseline is infeasible: {e}")).unwrap_or_default()}</p>
            <table><thead><tr><th>"metric"</th><th>"before"</th><th>"after"</th><th>"change"</th></tr></thead><tbody>
                {r.comparison.iter().map(|c| view! {
                    <tr><td>{format!("{} ({})", c.metric, c.unit)}</td><td>{show(c.before)}</td><td>{show(c.after)}</td>
                    <td class=if c.improved == Some(true) { "good" } else { "" }>{c.change_pct.map(|p| format!("{p:+.1}%")).unwrap_or_default()}</td></tr>
                }).collect_view()}
            </tbody></table>
            <h3>"Measures taken"</h3>
            <ul>{r.measures.iter().map(|m| view! { <li>{format!("{}: {} → {}", m.param, m.before, m.after)}</li> }).collect_view()}</ul>
            <ul class="muted small">{r.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}</ul>
        </div>
    }
}

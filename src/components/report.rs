//! Diagnosis and the report, with exports as downloads: report JSON, every trial as CSV,
//! deployment configs (MindIE config.json with its documented fields, a comment file, vLLM
//! arguments), and the charts as SVG. Also the guards and the what-if panel, so every analysis
//! reaches the user.
//!
//! Numbers show about four significant digits with labels, units and meanings from the metric
//! registry (`tunelab_scenario::metrics`); `diag-metrics` keeps the goal exactly as `best` shows
//! it (the same function priced both, so they agree to the last digit).

use crate::browser;
use crate::charts::{convergence, scatter};
use crate::components::trials::TrialsPanel;
use crate::components::whatif::WhatIfPanel;
use crate::state::Ctx;
use leptos::prelude::*;
use crate::worker::ask::{ask, Answer, Question};
use tunelab_engine::views::DiagnosisView;
use crate::charts::numbers::{exact, fmt4, fmt_metric};
use tunelab_scenario::metrics::{label, label_unit, meaning};
use tunelab_scenario::report::{trials_csv, ModelParts, Report};

/// The diagnosis and report view.
#[component]
pub fn ReportPanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    // The report of the run, built on the page without what it reads from the model (the
    // page's module carries no model reader); the engine worker answers those parts
    // (`report::model_parts`, `Question::ReportModel`) and they are set in for the scenario and
    // best configuration they were asked for (`Report::from_run` is the two together).
    let base = Memo::new(move |_| {
        ctx.view.track();
        let t0 = crate::browser::now_ms();
        let r = ctx.with_session(|s| Report::from_run_without_model(s.run()));
        crate::browser::record_timing("report", crate::browser::now_ms() - t0);
        r
    });
    // What the parts depend on: the scenario, and for a deployment its best configuration.
    let parts_key = Memo::new(move |_| {
        let r = base.get()?;
        let s = ctx.with_session(|x| x.run().scenario().clone())?;
        let best = (s.stage == tunelab_scenario::Stage::Deployment).then(|| (r.best_config.clone(), r.best_strategy.is_some()));
        Some((serde_json::to_string(&s).unwrap_or_default(), serde_json::to_string(&best).unwrap_or_default()))
    });
    let parts = RwSignal::new(None::<((String, String), ModelParts)>);
    Effect::new(move |_| {
        let Some(k) = parts_key.get() else { return };
        let Some((s, best, has_best)) = ctx.with_session(|x| x.run().scenario().clone()).zip(base.get_untracked()).map(|(s, r)| (s, r.best_config, r.best_strategy.is_some())) else { return };
        ask(Question::ReportModel { scenario: Box::new(s), best, has_best }, move |r| match r {
            Ok(Answer::ReportModel { parts: p }) => {
                // Dropped when the scenario moved on or the report left the page meanwhile.
                if parts_key.try_with_untracked(|now| now.as_ref() == Some(&k)) == Some(true) {
                    parts.try_set(Some((k, p)));
                }
            }
            Ok(_) => {}
            Err(e) => ctx.fail(format!("Report: {e}")),
        });
    });
    let report = Memo::new(move |_| {
        let r = base.get()?;
        let k = parts_key.get();
        Some(match parts.get() {
            Some((pk, p)) if Some(&pk) == k.as_ref() => r.with_model_parts(p),
            _ => r,
        })
    });
    let diagnosis = RwSignal::new(None::<DiagnosisView>);
    // The headline's spread over request samples (a serving scenario), priced by the engine
    // worker when the user diagnoses (`stages::capacity::spread`).
    let spread = RwSignal::new(None::<tunelab_scenario::stages::capacity::spread::Spread>);
    let signals = RwSignal::new(Vec::<(String, String)>::new());
    let diagnose_now = move |_| {
        let s = ctx.scenario.get_untracked();
        let best = ctx.with_session(|x| x.run().overall_best().map(|(_, t)| t.config.clone())).flatten();
        // A landscape's values are measurements or a function: there is no model of operators
        // to break down or re-simulate, so its diagnosis is the search summary below.
        if s.stage == tunelab_scenario::Stage::Landscape {
            diagnosis.set(None);
        } else {
            spread.set(None);
            if let (true, Some(c)) = (tunelab_scenario::stages::capacity::spread::applies(&s), best.clone()) {
                ask(Question::Spread { scenario: Box::new(s.clone()), config: c }, move |r| {
                    if let Ok(Answer::Spread { spread: sp }) = r {
                        spread.set(sp);
                    }
                });
            }
            // Re-simulates the step and each suggestion: the engine worker answers.
            ask(Question::Diagnose { scenario: Box::new(s), config: best }, move |r| match r {
                Ok(Answer::Diagnose { view }) => diagnosis.set(Some(*view)),
                Ok(_) => {}
                Err(e) => ctx.fail(format!("Diagnosis: {e}")),
            });
        }
        // The search itself: infeasible share and reasons, stalls (per strategy).
        let sig = ctx
            .with_session(|x| {
                let run = x.run();
                run.lanes().iter().enumerate().map(|(i, l)| (l.spec.name.clone(), tunelab_scenario::train_diagnosis::search_signals(run.trials(i), run.metrics()).summary)).collect::<Vec<_>>()
            })
            .unwrap_or_default();
        signals.set(sig);
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
        if let Some(csv) = ctx.with_session(|s| trials_csv(s.run())) {
            save("tunelab-trials.csv", "text/csv", csv);
        }
    };
    let export_deploy = move |_| {
        if let Some(d) = report.get_untracked().and_then(|r| r.deployment) {
            save("config.json", "application/json", serde_json::to_string_pretty(&d.mindie_config).unwrap_or_default());
            save("config.json.notes.txt", "text/plain", d.mindie_notes.iter().map(|n| format!("# {n}\n")).collect::<String>());
            save("vllm-serve.sh", "text/plain", format!("#!/bin/sh\n# vLLM-Ascend launch generated by Tunelab from a simulated tuning: one block per node, run each on its node\n{}", d.launch.to_text()));
            if let Some(t) = &d.launch.mindie_rank_table {
                save("ranktable.json", "application/json", serde_json::to_string_pretty(t).unwrap_or_default());
            }
            if !d.sglang.nodes.is_empty() {
                save("sglang-serve.sh", "text/plain", format!("#!/bin/sh\n# SGLang {} launch generated by Tunelab from a simulated tuning: one block per node, run each on its node\n{}", d.releases.sglang, d.sglang.to_text()));
            }
        }
    };
    // The run's charts (each chart also has its own "SVG" button; both use `svg::download`).
    let export_svg = move |_| {
        if let Some(v) = ctx.view.get_untracked() {
            let mut files = vec![("convergence", convergence::to_svg_string(&v.convergence)), ("scatter", scatter::to_svg_string(&v.scatter))];
            if let Some(p) = ctx.with_session(|s| s.pareto(0, 1)).flatten() {
                files.push(("pareto", crate::charts::pareto::to_svg_string(&p)));
            }
            for (kind, text) in files {
                if let Err(e) = crate::charts::svg::download(kind, &text) {
                    ctx.fail(e);
                }
            }
        }
    };
    view! {
        <section class="panel report">
            <h2>"Diagnosis"</h2>
            <p class="hint">"The best configuration found (or the baseline before a run), priced by the same function the study used: its metrics, where the time goes in the phase that dominates the goal, why, and changes that improve the goal, each re-simulated. On a landscape it summarises the search."</p>
            <button data-testid="diagnose" on:click=diagnose_now>"Diagnose"</button>
            {move || diagnosis.get().map(diagnosis_view)}
            <Show when=move || signals.with(|s| !s.is_empty())>
                <h3>"The search"</h3>
                <ul class="small" data-testid="search-signals">{move || signals.get().into_iter().map(|(n, s)| view! { <li><strong>{n}</strong>": "{s}</li> }).collect_view()}</ul>
            </Show>
            <h2>"Report"</h2>
            <Show when=move || report.with(|r| r.is_some()) fallback=|| view! { <p class="hint">"Run a tuning to get its report."</p> }>
                {move || report.get().map(|r| report_view(r.with_spread(spread.get())))}
                <div class="row">
                    <button data-testid="export-json" on:click=export_json>"Report JSON"</button>
                    <button data-testid="export-csv" on:click=export_csv>"Trials CSV (all strategies)"</button>
                    <Show when=move || report.with(|r| r.as_ref().is_some_and(|r| r.deployment.is_some()))>
                        <button data-testid="export-deploy" on:click=export_deploy>"MindIE config.json + vLLM args"</button>
                    </Show>
                    <button data-testid="export-svg" on:click=export_svg>"Charts as SVG"</button>
                </div>
                {move || report.get().and_then(|r| r.deployment).map(|d| view! {
                    <details class="deploy">
                        <summary>"Deployment configs"</summary>
                        <p class="small">{format!("vLLM-Ascend {} (deployment.serving.engine_version):", d.releases.vllm_ascend)}</p>
                        <pre data-testid="vllm-args">{format!("vllm serve {}", d.vllm_args.join(" "))}</pre>
                        <p class="small">"MindIE Service config.json (documented fields only):"</p>
                        <pre data-testid="mindie-config">{serde_json::to_string_pretty(&d.mindie_config).unwrap_or_default()}</pre>
                        <ul class="muted small">{d.mindie_notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
                        <p class="small">{format!("The whole layout, node by node (--max-model-len {} covers the longest request):", d.launch.max_model_len)}</p>
                        <pre data-testid="launch">{d.launch.to_text()}</pre>
                        {d.launch.mindie_rank_table.as_ref().map(|t| view! { <p class="small">"MindIE rank table (RANKTABLEFILE):"</p><pre data-testid="rank-table">{serde_json::to_string_pretty(t).unwrap_or_default()}</pre> })}
                        {(!d.sglang.nodes.is_empty()).then(|| view! { <p class="small">{format!("SGLang {} (python -m sglang.launch_server), node by node:", d.releases.sglang)}</p><pre data-testid="sglang-launch">{d.sglang.to_text()}</pre> })}
                    </details>
                })}
            </Show>
            <TrialsPanel/>
            <GuardsPanel/>
            <WhatIfPanel/>
        </section>
    }
}

/// A table that scrolls inside itself on a narrow screen (the page never does).
fn wrap<V: IntoView>(v: V) -> impl IntoView {
    view! { <div class="table-wrap">{v}</div> }
}

fn diagnosis_view(d: DiagnosisView) -> impl IntoView {
    // Shown rounded; data-value keeps the exact number (tests compare it with the run's best).
    let goal_exact = d.goal_value.map(exact).unwrap_or_default();
    let goal_value = d.goal_value.map(fmt4).unwrap_or_else(|| "—".into());
    let no_suggestion = d.suggestions.is_empty();
    let has_trade = !d.trade_offs.is_empty();
    let blocked = d.blocked;
    view! {
        <div class="diagnosis" data-testid="diagnosis">
            <p>{d.goal_line}": " <strong data-testid="diag-metrics" data-value=goal_exact>{goal_value}</strong> " " {d.goal_unit}</p>
            <p class="bad">{d.infeasible.map(|r| format!("Infeasible: {r}")).unwrap_or_default()}</p>
            <p class="muted small">{d.config}</p>
            {wrap(view! {
                <table class="metrics" data-testid="diag-table"><thead><tr><th>"metric"</th><th>"value"</th></tr></thead><tbody>
                    {d.metrics.into_iter().map(|(name, unit, value)| view! {
                        <tr><td title=meaning(&name)>{label_unit(&name, &unit)}<br/><span class="muted small">{meaning(&name)}</span></td><td class="num">{fmt_metric(&name, value)}</td></tr>
                    }).collect_view()}
                </tbody></table>
            })}
            <h3>"Where the time goes"</h3>
            <p class="small">{d.simulated_line}</p>
            <p>"Time by bottleneck: " {d.bottleneck_line}</p>
            <h3>"Root cause"</h3>
            <ol>{d.cause_chain.into_iter().map(|c| view! { <li>{c}</li> }).collect_view()}</ol>
            <h3>"Hot spots"</h3>
            {wrap(view! {
                <table><thead><tr><th>"operator"</th><th>"share"</th><th>"bound"</th><th>"ms"</th></tr></thead><tbody>
                    {d.hot_spots.into_iter().map(|(name, share, bound, ms)| view! { <tr><td>{name}</td><td class="num">{format!("{}%", fmt4(share * 100.0))}</td><td>{bound}</td><td class="num">{fmt4(ms)}</td></tr> }).collect_view()}
                </tbody></table>
            })}
            <h3>"Suggestions (improve the goal)"</h3>
            <p class="muted small">{d.score_rule}</p>
            <Show when=move || no_suggestion>
                <p class="small">"No single change of one parameter improves the goal: this configuration is a local optimum of the space."</p>
            </Show>
            <ol data-testid="suggestions">{d.suggestions.into_iter().map(|s| view! { <li class="good" data-effect=s.effect.to_string() data-config=s.config data-goal=s.goal_after.map(exact).unwrap_or_default()>{s.line}</li> }).collect_view()}</ol>
            <Show when=move || has_trade>
                <h3>"Trade-offs (no gain for the goal, or a loss, but they buy something else)"</h3>
            </Show>
            <ol data-testid="trade-offs">{d.trade_offs.into_iter().map(|l| view! { <li class="tradeoff">{l}</li> }).collect_view()}</ol>
            <details>
                <summary>{format!("Changes that are not possible here ({})", blocked.len())}</summary>
                <ul class="small">{blocked.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul>
            </details>
            {d.training.map(|t| view! {
                <h3>"Training step"</h3>
                <p data-testid="train-diagnosis">{format!("step {} ms, MFU {}%, {} GiB per chip", fmt4(t.step_time_ms), fmt4(t.mfu * 100.0), fmt4(t.memory_gib))}</p>
                <ol>{t.cause_chain.into_iter().map(|c| view! { <li>{c}</li> }).collect_view()}</ol>
                <ul>{t.suggestions.into_iter().map(|s| view! { <li>{s}</li> }).collect_view()}</ul>
            })}
            <p class="muted small">{d.note}</p>
        </div>
    }
}

fn report_view(r: Report) -> impl IntoView {
    let show = |m: &str, v: Option<f64>| v.map(|x| fmt_metric(m, x)).unwrap_or_else(|| "—".into());
    view! {
        <div data-testid="report">
            <p>{format!("{} · {} stage · {} on {} · seed {} · {} evaluations", r.name, r.stage, r.model, r.device, r.seed, r.evaluations)}</p>
            <p>"Best " {label(&r.metric)} ": " <strong data-testid="report-best" data-value=r.best.map(exact).unwrap_or_default()>{r.best.map(fmt4).unwrap_or_else(|| "—".into())}</strong> " " {r.unit.clone()} {r.best_strategy.clone().map(|s| format!(" (found by {s})")).unwrap_or_default()}</p>
            <p class="muted" data-testid="report-band">{r.prediction_band.clone()}</p>
            <p class="bad" data-testid="report-load-bound">{r.load_bound.clone().unwrap_or_default()}</p>
            <p class="muted" data-testid="report-spread">{r.spread.as_ref().map(|sp| sp.describe()).unwrap_or_default()}</p>
            <p class="bad">{r.baseline_infeasible.clone().map(|e| format!("The baseline is infeasible: {e}")).unwrap_or_default()}</p>
            {wrap(view! {
                <table class="metrics" data-testid="report-table"><thead><tr><th>"metric"</th><th>"before"</th><th>"after"</th><th>"change"</th></tr></thead><tbody>
                    {r.comparison.iter().map(|c| {
                        // A change within the headline's workload spread is neither better nor
                        // worse: it is not called a gain (issue 45).
                        let class = match (c.within_spread, c.improved) { (true, _) => "num", (_, Some(true)) => "num good", (_, Some(false)) => "num bad", _ => "num" };
                        let word = match (c.within_spread, c.improved) { (true, _) => "", (_, Some(true)) => " better", (_, Some(false)) => " worse", _ => "" };
                        view! {
                            <tr><td title=meaning(&c.metric)>{label_unit(&c.metric, &c.unit)}<br/><span class="muted small">{meaning(&c.metric)}</span></td>
                            <td class="num">{show(&c.metric, c.before)}</td><td class="num">{show(&c.metric, c.after)}</td>
                            <td class=class>{c.change_pct.map(|p| format!("{}{}%{word}", if p > 0.0 { "+" } else { "" }, fmt4(p))).unwrap_or_default()}{if c.within_spread { " (within the workload spread: not a gain)" } else { "" }}</td></tr>
                        }
                    }).collect_view()}
                </tbody></table>
            })}
            <h3>"Measures taken"</h3>
            <ul>{r.measures.iter().map(|m| view! { <li>{format!("{}: {} → {}", m.param, m.before, m.after)}</li> }).collect_view()}</ul>
            <ul class="muted small">{r.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}</ul>
        </div>
    }
}

/// The guards on the best configuration (or the baseline): another chip, protected layers, and
/// the delta check.
#[component]
fn GuardsPanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let chip = RwSignal::new(String::new());
    let protect = RwSignal::new(tunelab_scenario::guards::DEFAULT_PROTECTED.join(","));
    let result = RwSignal::new(None::<tunelab_scenario::guards::GuardsReport>);
    let check = move |_| {
        let s = ctx.scenario.get_untracked();
        let cfg = ctx.with_session(|x| x.run().overall_best().map(|(_, t)| t.config.clone())).flatten();
        let pats: Vec<String> = protect.get_untracked().split(',').map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect();
        let c = chip.get_untracked();
        // Prices the configuration on another chip and with protected layers: the engine worker.
        let names = ctx.with_session(|x| x.run().space().names().to_vec()).unwrap_or_default();
        ask(Question::Guards { scenario: Box::new(s), config: cfg, names, chip: (!c.is_empty()).then_some(c), protect: pats }, move |r| match r {
            Ok(Answer::Guards { report }) => result.set(Some(report)),
            Ok(_) => {}
            Err(e) => ctx.fail(format!("Guards: {e}")),
        });
    };
    view! {
        <h2>"Guards"</h2>
        <p class="hint">"Before trusting the best configuration: does it run on another chip, what do protected layers cost, and how much output error does it add (a data-type estimate)."</p>
        <div class="row">
            <label>"Check against chip "
                <select data-testid="guard-chip" prop:value=move || chip.get() on:change=move |ev| chip.set(event_target_value(&ev))>
                    <option value="">"(none)"</option>
                    {tunelab_sim::device::bundled_names().into_iter().map(|n| view! { <option value=n>{n}</option> }).collect_view()}
                </select>
            </label>
            <label>"Protected layers " <input type="text" data-testid="guard-protect" prop:value=move || protect.get() on:change=move |ev| protect.set(event_target_value(&ev))/></label>
            <button data-testid="guards-run" on:click=check>"Check"</button>
        </div>
        {move || result.get().map(|r| view! {
            <div data-testid="guards" class="small">
                <p>{format!("Configuration: {}", r.config)}</p>
                {r.compatibility.map(|c| if c.compatible {
                    view! { <p class="good">{format!("Runs on {}: {}", c.target, c.metrics.iter().take(4).map(|(n, v, _)| format!("{} {}", label(n), fmt_metric(n, *v))).collect::<Vec<_>>().join(", "))}</p> }.into_any()
                } else {
                    view! { <p class="bad">{format!("Does not run on {}: {}", c.target, c.problems.join("; "))}</p> }.into_any()
                })}
                <ul data-testid="guard-output-knobs">{r.output_knobs.into_iter().map(|o| view! { <li>{format!("Changes the output: {} — guard: {}", o.setting, o.guard)}</li> }).collect_view()}</ul>
                {r.protected.map(|p| view! { <p data-testid="guard-protected">{format!("Protected layers ({}): {} operators kept in 16-bit; {} {} ms all quantised vs {} ms protected{}; expected error {:.2e} vs {:.2e}", p.patterns.join(", "), p.protected_ops.len(), p.step, fmt4(p.step_ms_all_quantised), fmt4(p.step_ms_protected), p.latency_ms_all_quantised.zip(p.latency_ms_protected).map(|(a, b)| format!(" (whole call {} vs {} ms)", fmt4(a), fmt4(b))).unwrap_or_default(), p.rel_error_all_quantised, p.rel_error_protected)}</p> })}
                {r.delta.map(|d| view! { <p data-testid="guard-delta" class=if d.pass { "good" } else { "bad" }>{format!("Delta check: {}; {}", if d.pass { "pass" } else { "fail" }, d.note)}</p> })}
                <ul class="muted">{r.notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
            </div>
        })}
    }
}

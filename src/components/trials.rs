//! Inspect trials: a sortable table of every trial of every strategy (like optuna-dashboard's),
//! pinning (a row, a typed configuration, or a point clicked in a chart) and the pinned
//! configurations side by side with every metric and their engine breakdown, and "Compare
//! chips": the best configuration priced on every bundled chip.
//!
//! Every number comes from `explore::point_detail` / `guards::check_compatibility`, which price
//! through the stage objective the study used, so a pinned trial shows what `tunelab eval`
//! prints for the same configuration.

use crate::state::Ctx;
use leptos::prelude::*;
use tunelab_scenario::explore::{parse_config, point_detail, PointDetail};
use tunelab_scenario::metrics::{fmt_metric, label, label_unit, meaning};
use tunelab_search::{Config, TrialState};

/// Most rows the table shows (sorted first, so the best are always there).
pub const MAX_ROWS: usize = 100;
/// Most configurations pinned at once.
pub const MAX_PINS: usize = 4;

#[derive(Clone, Debug, PartialEq)]
struct Row {
    strategy: String,
    id: usize,
    state: &'static str,
    values: Vec<f64>,
    config: Config,
    described: String,
}

/// Pins a configuration (the oldest pin goes when there are too many; a repeat is ignored).
pub fn pin(ctx: Ctx, c: Config) {
    ctx.pins.update(|p| {
        if !p.contains(&c) {
            p.push(c);
            if p.len() > MAX_PINS {
                p.remove(0);
            }
        }
    });
}

/// The trial table, the pins and the chip comparison.
#[component]
pub fn TrialsPanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let sort = RwSignal::new((0usize, true)); // (metric column, best first)
    let rows = Memo::new(move |_| {
        ctx.view.track();
        ctx.with_session(|s| {
            let run = s.run();
            let names = run.space().names().to_vec();
            let mut out = Vec::new();
            for (i, lane) in run.lanes().iter().enumerate() {
                for t in run.trials(i) {
                    out.push(Row {
                        strategy: lane.spec.name.clone(),
                        id: t.id,
                        state: match t.state { TrialState::Ok => "ok", TrialState::Infeasible => "infeasible", TrialState::Failed => "failed" },
                        values: t.values.clone(),
                        config: t.config.clone(),
                        described: t.config.describe(&names).chars().take(160).collect(),
                    });
                }
            }
            (out, run.metrics().iter().map(|m| (m.name.clone(), m.unit.clone(), m.direction == tunelab_search::Direction::Maximize)).collect::<Vec<_>>())
        })
        .unwrap_or_default()
    });
    let sorted = move || {
        let (mut r, metrics) = rows.get();
        let (col, best_first) = sort.get();
        let max = metrics.get(col).map(|m| m.2).unwrap_or(false);
        r.sort_by(|a, b| {
            let (x, y) = (a.values.get(col).copied().unwrap_or(f64::NAN), b.values.get(col).copied().unwrap_or(f64::NAN));
            // Feasible rows first, then by value in the chosen order.
            (x.is_nan()).cmp(&y.is_nan()).then_with(|| {
                let o = x.total_cmp(&y);
                if max == best_first { o.reverse() } else { o }
            }).then(a.id.cmp(&b.id))
        });
        let total = r.len();
        r.truncate(MAX_ROWS);
        (r, metrics, total)
    };
    let typed = RwSignal::new(String::new());
    let pin_typed = move |_| {
        let r = ctx.scenario.with_untracked(|s| tunelab_scenario::stages::setup(s).and_then(|st| parse_config(&st.space, &st.baseline, &typed.get_untracked())));
        match r {
            Ok(c) => pin(ctx, c),
            Err(e) => ctx.fail(format!("Pin: {e}")),
        }
    };
    let pinned = Memo::new(move |_| {
        let pins = ctx.pins.get();
        ctx.scenario.with_untracked(|s| {
            let names = tunelab_scenario::stages::setup(s).map(|st| st.space.names().to_vec()).unwrap_or_default();
            pins.iter().map(|c| (c.describe(&names), point_detail(s, c))).collect::<Vec<_>>()
        })
    });
    let chips = RwSignal::new(None::<Vec<(String, Result<Vec<(String, f64, String)>, String>)>>);
    let compare_chips = move |_| {
        let s = ctx.scenario.get_untracked();
        let cfg = ctx.with_session(|x| x.run().overall_best().map(|(_, t)| t.config.clone())).flatten();
        let cfg = match cfg {
            Some(c) => c,
            None => match tunelab_scenario::stages::setup(&s) {
                Ok(st) => st.baseline,
                Err(e) => return ctx.fail(format!("Compare chips: {e}")),
            },
        };
        let out = tunelab_sim::device::bundled_names()
            .into_iter()
            .map(|chip| {
                let r = tunelab_scenario::guards::check_compatibility(&s, &cfg, chip).and_then(|c| if c.compatible { Ok(c.metrics) } else { Err(c.problems.join("; ")) });
                (chip.to_string(), r)
            })
            .collect();
        chips.set(Some(out));
    };
    view! {
        <h2>"Trials"</h2>
        <p class="hint">"Every trial of every strategy. Click a column head to sort, a row to pin it; or type a configuration (name=value, ...) to pin it. Points clicked in the convergence chart, the trial scatter, the Pareto front or the heat map are pinned too."</p>
        <div class="row">
            <input type="text" class="wide" data-testid="pin-text" placeholder="batch=64, tp=2" prop:value=move || typed.get() on:input=move |ev| typed.set(event_target_value(&ev))/>
            <button data-testid="pin-typed" on:click=pin_typed>"Pin"</button>
            <button data-testid="compare-chips" on:click=compare_chips>"Compare chips"</button>
        </div>
        <Show when=move || rows.with(|r| !r.0.is_empty())>
            {move || {
                let (r, metrics, total) = sorted();
                let shown = metrics.iter().take(4).cloned().enumerate().collect::<Vec<_>>();
                view! {
                    <p class="muted small">{if total > r.len() { format!("{} of {total} trials shown (sorted)", r.len()) } else { format!("{total} trials") }}</p>
                    <div class="table-wrap trials">
                        <table data-testid="trial-table"><thead><tr>
                            <th>"strategy"</th><th>"#"</th><th>"state"</th>
                            {shown.iter().map(|(i, (n, u, _))| {
                                let i = *i;
                                view! { <th class="sortable" title=meaning(n) on:click=move |_| sort.update(|s| if s.0 == i { s.1 = !s.1 } else { *s = (i, true) })>{label_unit(n, u)}{move || if sort.get().0 == i { if sort.get().1 { " ▼" } else { " ▲" } } else { "" }}</th> }
                            }).collect_view()}
                            <th>"configuration"</th>
                        </tr></thead><tbody>
                            {r.into_iter().map(|row| {
                                let c = row.config.clone();
                                view! { <tr class="clickable" on:click=move |_| pin(ctx, c.clone())>
                                    <td>{row.strategy}</td><td class="num">{row.id}</td><td>{row.state}</td>
                                    {shown.iter().map(|(i, (n, _, _))| view! { <td class="num">{row.values.get(*i).map(|v| fmt_metric(n, *v)).unwrap_or_else(|| "—".into())}</td> }).collect_view()}
                                    <td class="small config" title=row.described.clone()>{row.described.clone()}</td>
                                </tr> }
                            }).collect_view()}
                        </tbody></table>
                    </div>
                }
            }}
        </Show>
        <Show when=move || ctx.pins.with(|p| !p.is_empty())>
            <h3>"Pinned side by side"</h3>
            <button on:click=move |_| ctx.pins.set(Vec::new())>"Clear pins"</button>
            {move || pins_view(pinned.get())}
        </Show>
        {move || chips.get().map(|list| {
            let metric_names: Vec<(String, String)> = list.iter().find_map(|(_, r)| r.as_ref().ok()).map(|m| m.iter().take(5).map(|(n, _, u)| (n.clone(), u.clone())).collect()).unwrap_or_default();
            view! {
                <h3>"Compare chips"</h3>
                <p class="muted small">"The best configuration found (or the baseline), priced on every bundled chip by the same stage objective."</p>
                <div class="table-wrap">
                    <table data-testid="chip-table"><thead><tr><th>"chip"</th>
                        {metric_names.iter().map(|(n, u)| view! { <th title=meaning(n)>{label_unit(n, u)}</th> }).collect_view()}
                    </tr></thead><tbody>
                        {list.into_iter().map(|(chip, r)| match r {
                            Ok(m) => view! { <tr><td>{chip}</td>{m.iter().take(5).map(|(n, v, _)| view! { <td class="num">{fmt_metric(n, *v)}</td> }).collect_view()}</tr> }.into_any(),
                            Err(e) => view! { <tr><td>{chip}</td><td class="bad small" colspan="5">{e}</td></tr> }.into_any(),
                        }).collect_view()}
                    </tbody></table>
                </div>
            }
        })}
    }
}

fn pins_view(pinned: Vec<(String, Result<PointDetail, String>)>) -> impl IntoView {
    let details: Vec<Option<PointDetail>> = pinned.iter().map(|(_, d)| d.as_ref().ok().cloned()).collect();
    let metric_rows: Vec<(String, String)> = details.iter().flatten().find(|d| !d.metrics.is_empty()).map(|d| d.metrics.iter().map(|(n, _, u)| (n.clone(), u.clone())).collect()).unwrap_or_default();
    let engines: Vec<String> = details.iter().flatten().flat_map(|d| d.exposed_ms.iter().filter(|(_, v)| **v > 0.0).map(|(k, _)| k.clone())).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    view! {
        <div class="table-wrap">
            <table data-testid="pins"><thead><tr><th>"metric"</th>
                {pinned.iter().enumerate().map(|(i, (desc, _))| view! { <th title=desc.clone()>{format!("pin {}", i + 1)}</th> }).collect_view()}
            </tr></thead><tbody>
                <tr><td>"configuration"</td>{pinned.iter().map(|(desc, d)| view! { <td class="small" data-config=desc.clone()>{desc.clone()}{d.as_ref().err().map(|e| format!(" — {e}"))}{d.as_ref().ok().and_then(|d| d.infeasible.clone()).map(|e| format!(" — infeasible: {e}"))}</td> }).collect_view()}</tr>
                {metric_rows.iter().map(|(n, u)| view! {
                    <tr><td title=meaning(n)>{label_unit(n, u)}</td>
                    {details.iter().map(|d| {
                        let v = d.as_ref().and_then(|d| d.metrics.iter().find(|m| &m.0 == n).map(|m| m.1));
                        view! { <td class="num" data-metric=n.clone() data-value=v.map(tunelab_scenario::format_best).unwrap_or_default()>{v.map(|x| fmt_metric(n, x)).unwrap_or_else(|| "—".into())}</td> }
                    }).collect_view()}</tr>
                }).collect_view()}
                <tr><td colspan="99" class="muted small">{details.iter().flatten().next().map(|d| format!("Engine time (exposed, ms): {}", d.simulated)).unwrap_or_default()}</td></tr>
                {engines.iter().map(|e| view! {
                    <tr><td>{format!("{e} (ms)")}</td>
                    {details.iter().map(|d| view! { <td class="num">{d.as_ref().and_then(|d| d.exposed_ms.get(e).copied()).map(tunelab_scenario::metrics::fmt4).unwrap_or_else(|| "—".into())}</td> }).collect_view()}</tr>
                }).collect_view()}
            </tbody></table>
        </div>
        <p class="muted small">{format!("Goal: {}", metric_rows.first().map(|m| label(&m.0)).unwrap_or_default())}</p>
    }
}

/// Pins the trial behind a clicked chart mark: the mark's tooltip (`<title>`) starts with the
/// configuration as `Config::describe` writes it ("best — " first for the best), then " — "
/// and the values. A click outside a mark does nothing; a tooltip cut short (very large spaces)
/// says to pin from the trial table instead.
pub fn pin_from_click(ctx: Ctx, ev: &leptos::ev::MouseEvent) {
    use wasm_bindgen::JsCast;
    let Some(el) = ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else { return };
    let title = el.query_selector(":scope > title").ok().flatten().and_then(|t| t.text_content());
    let Some(tip) = title.filter(|t| t.contains('=')) else { return };
    let tip = tip.strip_prefix("best — ").unwrap_or(&tip);
    let config = tip.split(" — ").next().unwrap_or("").trim();
    if config.ends_with('…') {
        return ctx.fail("This point's configuration is too long for its tooltip; pin it from the trial table (Diagnosis & report).");
    }
    let r = ctx.scenario.with_untracked(|s| tunelab_scenario::stages::setup(s).and_then(|st| parse_config(&st.space, &st.baseline, config)));
    match r {
        Ok(c) => pin(ctx, c),
        Err(e) => ctx.fail(format!("Pin: {e}")),
    }
}

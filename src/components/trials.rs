//! Inspect trials: a sortable table of every trial of every strategy (like optuna-dashboard's),
//! pinning (a row, a typed configuration, or a point clicked in a chart) and the pinned
//! configurations side by side with every metric and their engine breakdown, and "Compare
//! chips": the scenario tuned on every bundled chip (in workers, `worker::compare`), each chip's
//! own best beside the current best priced there.
//!
//! Every number comes from `explore::point_detail` / `guards::check_compatibility`, which price
//! through the stage objective the study used, so a pinned trial shows what `tunelab eval`
//! prints for the same configuration.

use crate::state::Ctx;
use leptos::prelude::*;
use tunelab_scenario::explore::{parse_config, PointDetail};
use crate::worker::compare::Comparison;
use crate::charts::numbers::{exact, fmt4, fmt_metric};
use tunelab_scenario::metrics::{label, label_unit, meaning};
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
                        described: crate::charts::numbers::describe(&t.config, &names).chars().take(160).collect(),
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
        pin_text(ctx, typed.get_untracked());
    };
    let pinned = pinned_details(ctx);
    // Compare chips: every bundled chip tuned on its own (in workers), beside the current best.
    let chips = RwSignal::new(None::<Comparison>);
    let chip_budget = RwSignal::new(tunelab_scenario::chips::COMPARE_BUDGET);
    let compare_chips = move |_| {
        let s = ctx.scenario.get_untracked();
        // Comparable when its stage builds (`chips::comparable`): the engine worker says.
        if s.stage == tunelab_scenario::Stage::Landscape {
            return ctx.fail("Compare chips: a landscape's values do not depend on the chip: nothing to compare");
        }
        crate::worker::ask::shape(s.clone(), move |r| {
            if let Err(e) = r {
                return ctx.fail(format!("Compare chips: {e}"));
            }
            let port = ctx.with_session(|x| x.run().overall_best().map(|(_, t)| t.config.clone())).flatten();
            let text = ctx.with_session(|x| port.as_ref().map(|c| c.describe(x.run().space().names()))).flatten();
            // (The trials view closed meanwhile: nothing to show the comparison in.)
            let Some(budget) = chip_budget.try_get_untracked() else { return };
            crate::worker::compare::start(s, budget, port, text, chips);
        });
    };
    view! {
        <h2>"Trials"</h2>
        <p class="hint">"Every trial of every strategy. Click a column head to sort, a row to pin it; or type a configuration (name=value, ...) to pin it. Points clicked in the convergence chart, the trial scatter, the Pareto front or the heat map are pinned too."</p>
        <div class="row">
            <input type="text" class="wide" data-testid="pin-text" placeholder="batch=64, tp=2" prop:value=move || typed.get() on:input=move |ev| typed.set(event_target_value(&ev))/>
            <button data-testid="pin-typed" on:click=pin_typed>"Pin"</button>
            <button data-testid="compare-chips" on:click=compare_chips>"Compare chips"</button>
            <label class="small">"tuning each chip with "
                <input type="number" class="short" min="1" data-testid="chip-budget" prop:value=move || chip_budget.get().to_string()
                    on:change=move |ev| chip_budget.set(event_target_value(&ev).trim().parse::<usize>().unwrap_or(tunelab_scenario::chips::COMPARE_BUDGET).max(1))/>
                " evaluations per strategy"</label>
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
        {move || chips.get().map(chips_view)}
    }
}

/// The pins priced, for the pin views: each by the engine worker (`explore::point_detail`),
/// shown once every pin's answer is in (a later change of pins drops the answers still coming).
fn pinned_details(ctx: Ctx) -> RwSignal<Vec<(String, Result<PointDetail, String>)>> {
    let pinned = RwSignal::new(Vec::<(String, Result<PointDetail, String>)>::new());
    let asked = StoredValue::new(0u64);
    Effect::new(move |_| {
        let pins = ctx.pins.get();
        asked.update_value(|a| *a += 1);
        let mine = asked.get_value();
        if pins.is_empty() {
            return pinned.set(Vec::new());
        }
        let s = ctx.scenario.get_untracked();
        crate::worker::ask::shape(s.clone(), move |shape| {
            let names: Vec<String> = shape.map(|sh| sh.params.into_iter().map(|p| p.name).collect()).unwrap_or_default();
            let n = pins.len();
            let got = std::rc::Rc::new(std::cell::RefCell::new(vec![None; n]));
            // A landscape the page loaded (a cache's bytes are on the page) is read here.
            let land = crate::components::landscape::loaded_for(&s);
            for (k, c) in pins.into_iter().enumerate() {
                let (got, desc) = (got.clone(), c.describe(&names));
                let done = move |d| {
                    got.borrow_mut()[k] = Some((desc, d));
                    let all = got.borrow().iter().all(Option::is_some);
                    // (The pin view closed meanwhile has disposed `asked`: dropped.)
                    if all && asked.try_get_value() == Some(mine) {
                        pinned.set(got.borrow_mut().iter_mut().filter_map(Option::take).collect());
                    }
                };
                match &land {
                    Some(l) => done(tunelab_scenario::stages::setup_with_landscape(&s, l.clone()).and_then(|mut st| tunelab_scenario::explore::landscape_detail_of(&s, &mut st, &c, None))),
                    None => crate::worker::ask::detail(s.clone(), c, done),
                }
            }
        });
    });
    pinned
}

/// The pins beside the charts (the Tune view): what a click on a chart's point pins, with every
/// metric, the whole configuration and the engine times, as in the report's pin table.
#[component]
pub fn PinPanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let pinned = pinned_details(ctx);
    view! {
        <aside class="pin-panel" data-testid="pin-panel">
            <h3>"Pinned points"</h3>
            <Show when=move || ctx.pins.with(|p| !p.is_empty()) fallback=|| view! {
                <p class="muted small">"Click any point of a chart to pin it here: its whole configuration and every metric, priced by the same function as the run. Pin several to compare them side by side."</p>
            }>
                <button class="small" on:click=move |_| ctx.pins.set(Vec::new())>"Clear pins"</button>
                {move || pins_view(pinned.get())}
            </Show>
        </aside>
    }
}

/// The chip comparison: per chip, its own tuned best beside the current best priced there.
fn chips_view(c: Comparison) -> impl IntoView {
    let goal: Option<(String, String)> = c.rows.iter().filter_map(|r| r.1.as_ref()).find_map(|r| r.metrics.first().or(r.ported.as_ref().and_then(|p| p.as_ref().ok()).and_then(|m| m.first())).map(|m| (m.0.clone(), m.2.clone())));
    let (g, unit) = goal.unwrap_or_default();
    let max = c.maximise;
    let done = c.rows.iter().filter(|r| r.1.is_some()).count();
    let status = match c.wall_ms {
        Some(ms) => format!("{} chips tuned in {} s ({}).", c.rows.len(), fmt4(ms / 1000.0), c.engine),
        None => format!("Tuning {done} of {} chips done ({})…", c.rows.len(), c.engine),
    };
    let home = c.home.clone();
    let port_head = format!("current best (tuned on {home}) on the chip");
    let own_head = format!("own best, tuned on the chip ({} evaluations per strategy)", c.budget);
    let g2 = g.clone();
    view! {
        <h3 data-testid="chips-title">{format!("Compare chips: {}, tuned on each chip", c.title)}</h3>
        <p class="muted small">{format!(
            "Each chip is tuned on its own: the same strategies, seed, goal and limits, {} evaluations per strategy (a short study; the scenario's budget is {}), starting from the current best re-priced on that chip. ",
            c.budget, c.scenario_budget)}
            {match &c.port { Some(p) => format!("Current best (this run on {home}): {p}."), None => "No run yet: there is no current best, so each chip starts from its baseline.".to_string() }}</p>
        <p class="small" data-testid="chips-status">{status}</p>
        <div class="table-wrap">
            <table data-testid="chip-table"><thead><tr>
                <th>"chip"</th>
                <th title=meaning(&g)>{format!("{} — {own_head}", label_unit(&g, &unit))}</th>
                <th>{port_head}</th>
                <th>"re-tuning buys"</th>
                <th>"its best configuration (found by)"</th>
            </tr></thead><tbody>
                {c.rows.into_iter().map(|(chip, r)| {
                    let mark = if chip.eq_ignore_ascii_case(&home) { format!("{chip} (this scenario's chip)") } else { chip.clone() };
                    match r {
                        None => view! { <tr data-chip=chip.clone() data-state="tuning"><td>{mark}</td><td colspan="4" class="muted">"tuning…"</td></tr> }.into_any(),
                        Some(r) => {
                            let own = r.goal().map(exact).unwrap_or_default();
                            let ported = r.ported_goal().map(exact).unwrap_or_default();
                            let gain = match (r.goal(), r.ported_goal()) {
                                (Some(a), Some(b)) if b != 0.0 => {
                                    let pct = (a - b) / b.abs() * 100.0 * if max { 1.0 } else { -1.0 };
                                    if pct.abs() < 0.05 { "nothing".to_string() } else { format!("{}{}% for the goal", if pct > 0.0 { "+" } else { "" }, fmt4(pct)) }
                                }
                                (Some(_), None) if r.ported.is_some() => "the current best does not run here".into(),
                                _ => "—".into(),
                            };
                            let ported_cell = match &r.ported {
                                Some(Ok(_)) => r.ported_goal().map(|v| fmt_metric(&g2, v)).unwrap_or_default(),
                                Some(Err(e)) => format!("does not run: {e}"),
                                None => "—".into(),
                            };
                            let found = match (&r.error, &r.best_strategy, r.best_is_ported) {
                                (Some(e), _, _) => e.clone(),
                                (None, _, true) => format!("{} (the current best: nothing better found)", r.best_config.clone().unwrap_or_default()),
                                (None, Some(st), _) => format!("{} ({st})", r.best_config.clone().unwrap_or_default()),
                                (None, None, _) => r.best_config.clone().unwrap_or_default(),
                            };
                            let own_cell = r.goal().map(|v| fmt_metric(&g2, v)).unwrap_or_else(|| "—".into());
                            view! {
                                <tr data-chip=chip.clone() data-state="done" data-own=own data-ported=ported title=r.title.clone()>
                                    <td>{mark}</td>
                                    <td class="num">{own_cell}</td>
                                    <td class=if r.ported.as_ref().is_some_and(|p| p.is_err()) { "small bad" } else { "num" }>{ported_cell}</td>
                                    <td class="num">{gain}</td>
                                    <td class="small config" title=found.clone()>{found.clone()}</td>
                                </tr>
                            }.into_any()
                        }
                    }
                }).collect_view()}
            </tbody></table>
        </div>
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
                <tr><td>"configuration"</td>{pinned.iter().map(|(desc, d)| view! { <td class="small" data-config=desc.clone()>{crate::charts::numbers::readable_config(desc)}{d.as_ref().err().map(|e| format!(" — {e}"))}{d.as_ref().ok().and_then(|d| d.infeasible.clone()).map(|e| format!(" — infeasible: {e}"))}</td> }).collect_view()}</tr>
                {metric_rows.iter().map(|(n, u)| view! {
                    <tr><td title=meaning(n)>{label_unit(n, u)}</td>
                    {details.iter().map(|d| {
                        let v = d.as_ref().and_then(|d| d.metrics.iter().find(|m| &m.0 == n).map(|m| m.1));
                        view! { <td class="num" data-metric=n.clone() data-value=v.map(exact).unwrap_or_default()>{v.map(|x| fmt_metric(n, x)).unwrap_or_else(|| "—".into())}</td> }
                    }).collect_view()}</tr>
                }).collect_view()}
                <tr><td colspan="99" class="muted small">{details.iter().flatten().next().map(|d| format!("Engine time (exposed, ms): {}", d.simulated)).unwrap_or_default()}</td></tr>
                {engines.iter().map(|e| view! {
                    <tr><td>{format!("{e} (ms)")}</td>
                    {details.iter().map(|d| view! { <td class="num">{d.as_ref().and_then(|d| d.exposed_ms.get(e).copied()).map(fmt4).unwrap_or_else(|| "—".into())}</td> }).collect_view()}</tr>
                }).collect_view()}
            </tbody></table>
        </div>
        <p class="muted small">{format!("Goal: {}", metric_rows.first().map(|m| label(&m.0)).unwrap_or_default())}</p>
    }
}

/// Pins the trial behind a clicked chart mark: the mark's tooltip (`<title>`) opens with the
/// trial it draws ("genetic #12: ..."), whose whole configuration the session holds, so a
/// configuration of any length is pinned (an older tooltip, the configuration alone, is parsed).
/// A click outside a mark does nothing.
pub fn pin_from_click(ctx: Ctx, ev: &leptos::ev::MouseEvent) {
    use wasm_bindgen::JsCast;
    let Some(el) = ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else { return };
    let title = el.query_selector(":scope > title").ok().flatten().and_then(|t| t.text_content());
    let Some(tip) = title.filter(|t| t.contains('=')) else { return };
    if let Some((strategy, id)) = crate::session::parse_trial_label(&tip) {
        match ctx.with_session(|s| s.trial_config(&strategy, id)).flatten() {
            Some(c) => return pin(ctx, c),
            None => return ctx.fail(format!("Pin: trial {strategy} #{id} is no longer in this run (it was reset)")),
        }
    }
    let tip = tip.strip_prefix("best — ").unwrap_or(&tip);
    let config = tip.split(" — ").next().unwrap_or("").trim();
    pin_text(ctx, config.to_string());
}

/// Pins a configuration typed or read as text ("name=value, ..."): parsed against the stage's
/// parameters and baseline, which the engine worker reports (`Question::Shape`).
fn pin_text(ctx: Ctx, text: String) {
    crate::worker::ask::shape(ctx.scenario.get_untracked(), move |r| {
        let parsed = r.and_then(|sh| {
            let space = tunelab_search::Space::new(sh.params, &[])?;
            parse_config(&space, &sh.baseline, &text)
        });
        match parsed {
            Ok(c) => pin(ctx, c),
            Err(e) => ctx.fail(format!("Pin: {e}")),
        }
    });
}

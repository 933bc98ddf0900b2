//! Explore the space: a heat map of the primary metric over two parameters (infeasible cells
//! marked, the reason on hover), and for a clicked cell its engine breakdown and roofline place.

use crate::charts::{BreakdownChart, BreakdownData, BreakdownRow, Ceiling, HeatCell, HeatmapChart, HeatmapData, HotspotChart, HotspotData, RooflineChart, RooflineData, RooflinePoint};
use crate::state::Ctx;
use crate::charts::numbers::{exact, fmt_metric};
use leptos::prelude::*;
use tunelab_scenario::explore::{heatmap_in, landscape_detail_of, HeatMap, PointDetail};
use tunelab_search::Config;

/// The landscape stage of a Kernel Tuner cache the page loaded (its bytes are on the page): its
/// cells are lookups, answered here with the landscape stage alone.
fn landscape_stage(s: &tunelab_scenario::Scenario) -> Result<tunelab_scenario::StageSetup, String> {
    let land = crate::components::landscape::loaded_for(s).ok_or("load the cache first (Landscape panel)")?;
    tunelab_scenario::stages::setup_with_landscape(s, land)
}

/// The explore view.
#[component]
pub fn ExplorePanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let land = expect_context::<crate::components::landscape::LandState>();
    // The stage's parameters and baseline: the engine worker builds the stage (a deployment
    // stage costs the page's thread 80+ ms); a landscape the page loaded is read here.
    let setup = RwSignal::new(Err::<(Vec<String>, Config), String>("the stage is being built".into()));
    let asked = StoredValue::new(0u64);
    Effect::new(move |_| {
        // A cache landscape builds once the page has loaded it (it is remembered then).
        land.rev.track();
        let s = ctx.scenario.get();
        asked.update_value(|a| *a += 1);
        let mine = asked.get_value();
        crate::worker::ask::shape(s, move |r| {
            // (A view closed meanwhile has disposed `asked`: the answer is dropped.)
            if asked.try_get_value() == Some(mine) {
                setup.set(r.map(|sh| (sh.params.into_iter().map(|p| p.name).collect(), sh.baseline)));
            }
        });
    });
    let names = move || setup.with(|r| r.as_ref().map(|(n, _)| n.clone()).unwrap_or_default());
    let x = RwSignal::new(String::new());
    let y = RwSignal::new(String::new());
    Effect::new(move |_| {
        let n = names();
        if !n.contains(&x.get_untracked()) {
            x.set(n.first().cloned().unwrap_or_default());
        }
        if !n.contains(&y.get_untracked()) {
            y.set(n.get(1).cloned().unwrap_or_default());
        }
    });
    let map = RwSignal::new(None::<HeatMap>);
    let selected = RwSignal::new(None::<(usize, usize)>);
    let detail = RwSignal::new(None::<PointDetail>);
    // The grid and a cell's detail are priced by an engine worker (`worker::ask`); a Kernel
    // Tuner landscape's cells are lookups in the cache the page holds, answered here.
    let on_page = move || ctx.scenario.with_untracked(|s| tunelab_scenario::stages::landscape::needs_bytes(s).is_some());
    let draw = move |_| {
        selected.set(None);
        detail.set(None);
        let got = move |r: Result<HeatMap, String>| match r {
            Ok(m) => map.set(Some(m)),
            Err(e) => ctx.fail(e),
        };
        let (s, xs, ys) = (ctx.scenario.get_untracked(), x.get_untracked(), y.get_untracked());
        if on_page() {
            got(landscape_stage(&s).and_then(|mut st| heatmap_in(&s, &mut st, &xs, &ys, None)));
        } else {
            crate::worker::ask::heatmap(s, xs, ys, got);
        }
    };
    let on_select = Callback::new(move |(i, j): (usize, usize)| {
        selected.set(Some((i, j)));
        let Some(cfg) = map.with_untracked(|m| m.as_ref().and_then(|m| cell_config(m, &setup.get_untracked().ok()?, i, j))) else { return };
        // A clicked cell is pinned too, to compare it side by side in the report view.
        crate::components::trials::pin(ctx, cfg.clone());
        let got = move |r: Result<PointDetail, String>| match r {
            // Still the selected cell (another click may have come first).
            Ok(d) if selected.try_get_untracked() == Some(Some((i, j))) => detail.set(Some(d)),
            Ok(_) => {}
            Err(e) => ctx.fail(e),
        };
        if on_page() {
            got(ctx.scenario.with_untracked(|s| landscape_stage(s).and_then(|mut st| landscape_detail_of(s, &mut st, &cfg, None))));
        } else {
            crate::worker::ask::detail(ctx.scenario.get_untracked(), cfg, got);
        }
    });
    let data = Signal::derive(move || map.with(|m| m.as_ref().map(|m| heat_data(m, selected.get())).unwrap_or_default()));
    let select = move |sig: RwSignal<String>, id: &'static str| {
        view! {
            <select data-testid=id prop:value=move || sig.get() on:change=move |ev| sig.set(event_target_value(&ev))>
                // Grouped per operator (an operator stage has hundreds of parameters).
                {move || crate::groups::option_groups(&names()).into_iter().map(|(label, items)| {
                    let short = label.is_some();
                    let opts = items.into_iter().map(|n| {
                        let text = if short { crate::groups::short_name(&n).to_string() } else { n.clone() };
                        view! { <option value=n>{text}</option> }
                    }).collect_view();
                    match label {
                        Some(l) => view! { <optgroup label=l>{opts}</optgroup> }.into_any(),
                        None => opts.into_any(),
                    }
                }).collect_view()}
            </select>
        }
    };
    view! {
        <section class="panel explore">
            <h2>"Explore the space"</h2>
            <p class="hint">"The stage's primary metric over two parameters, the others at the baseline. Grey hatched cells are infeasible: hover for the reason. Click a cell for its breakdown by engine and its place on the roofline (a Kernel Tuner landscape's cells are measured values: no breakdown); it is pinned for side-by-side comparison in the report view."</p>
            <div class="row">
                <label>"x " {select(x, "explore-x")}</label>
                <label>"y " {select(y, "explore-y")}</label>
                <button data-testid="explore-draw" class="primary" on:click=draw>"Draw heat map"</button>
            </div>
            <Show when=move || map.with(|m| m.is_some())>
                <HeatmapChart data=data on_select=on_select/>
                <button data-testid="explore-svg" on:click=move |_| {
                    if let Err(e) = crate::charts::svg::download("heatmap", &crate::charts::heatmap::to_svg_string(&data.get_untracked())) { ctx.fail(e); }
                }>"Heat map as SVG"</button>
            </Show>
            // A point with nothing to break down and nothing wrong (a landscape point: its value
            // is in the surface already) gets no empty charts.
            <Show when=move || detail.with(|d| d.as_ref().is_some_and(PointDetail::worth_showing))>
                <PointView detail=detail/>
            </Show>
        </section>
    }
}

/// One configuration's metrics, engine breakdown, per-operator hot spots and roofline place.
#[component]
pub fn PointView(detail: RwSignal<Option<PointDetail>>, #[prop(optional, into)] title: String) -> impl IntoView {
    let title = if title.is_empty() { "This configuration".to_string() } else { title };
    let d = move || detail.get().unwrap_or_else(|| unreachable_detail());
    let breakdown = Signal::derive(move || {
        let d = d();
        BreakdownData {
            // What was simulated is said in a line above the charts: as a chart title it ran
            // into the next chart.
            title: "Engine time".into(),
            engines: d.exposed_ms.keys().cloned().collect(),
            rows: vec![BreakdownRow { label: "exposed".into(), times: d.exposed_ms.values().copied().collect() }, BreakdownRow { label: "busy".into(), times: d.busy_ms.values().copied().collect() }],
            unit: "ms".into(),
        }
    });
    let roofline = Signal::derive(move || {
        let d = d();
        let mut points: Vec<RooflinePoint> = d.ops.iter().map(|o| RooflinePoint { label: format!("{} ({})", o.name, o.bound), intensity: o.intensity, tflops: o.attained_tflops, highlight: false }).collect();
        points.push(RooflinePoint { label: "whole step".into(), intensity: d.intensity, tflops: d.attained_tflops, highlight: true });
        RooflineData { title: "Roofline".into(), peaks: vec![Ceiling { label: "cube peak".into(), value: d.peak_tflops }], bandwidths: vec![Ceiling { label: "HBM".into(), value: d.hbm_gbs }], points }
    });
    let hotspots = Signal::derive(move || HotspotData {
        title: "Per-operator time".into(),
        unit: "ms".into(),
        items: d().ops.iter().map(|o| (o.name.clone(), o.time_ms)).collect(),
        top: 10,
    });
    let ctx = expect_context::<Ctx>();
    let export = move |_| {
        let files = [
            ("breakdown", crate::charts::breakdown::to_svg_string(&breakdown.get_untracked())),
            ("hotspots", crate::charts::breakdown::hotspot_svg_string(&hotspots.get_untracked())),
            ("roofline", crate::charts::roofline::to_svg_string(&roofline.get_untracked())),
        ];
        for (kind, svg) in files {
            if let Err(e) = crate::charts::svg::download(kind, &svg) {
                ctx.fail(e);
            }
        }
    };
    view! {
        <div class="point" data-testid="point-detail">
            <h3>{title}</h3>
            <button class="small" data-testid="point-svg" on:click=export>"Charts as SVG"</button>
            <p class="bad">{move || d().infeasible.map(|r| format!("Infeasible: {r}")).unwrap_or_default()}</p>
            <p class="muted small" data-testid="point-simulated">{move || { let s = d().simulated; if s.is_empty() { s } else { format!("Simulated: {s}") } }}</p>
            // Where the time to first token goes (front end, queueing, prefill, host, hand-off).
            <Show when=move || detail.with(|x| x.as_ref().is_some_and(|x| !x.ttft.is_empty()))>
                <pre class="small" data-testid="point-ttft">{move || d().ttft.join("\n")}</pre>
            </Show>
            <table><tbody>
                {move || d().metrics.into_iter().map(|(n, v, u)| view! { <tr><td title=tunelab_scenario::metrics::meaning(&n)>{tunelab_scenario::metrics::label_unit(&n, &u)}</td><td class="num" data-value=exact(v)>{fmt_metric(&n, v)}</td></tr> }).collect_view()}
            </tbody></table>
            <div class="charts">
                <BreakdownChart data=breakdown/>
                <HotspotChart data=hotspots/>
                <RooflineChart data=roofline/>
            </div>
        </div>
    }
}

fn unreachable_detail() -> PointDetail {
    PointDetail {
        metrics: Vec::new(), infeasible: None, simulated: String::new(), total_ms: 0.0, exposed_ms: Default::default(), busy_ms: Default::default(),
        memory: None, intensity: 0.0, attained_tflops: 0.0, peak_tflops: 0.0, hbm_gbs: 0.0, ridge_intensity: 0.0, ops: Vec::new(), ttft: Vec::new(),
    }
}

fn cell_config(m: &HeatMap, setup: &(Vec<String>, Config), i: usize, j: usize) -> Option<Config> {
    let (names, base) = setup;
    let xi = names.iter().position(|n| *n == m.x_param)?;
    let yi = names.iter().position(|n| *n == m.y_param)?;
    let mut c = base.clone();
    c.0[xi] = m.x_values.get(i)?.clone();
    c.0[yi] = m.y_values.get(j)?.clone();
    Some(c)
}

fn heat_data(m: &HeatMap, selected: Option<(usize, usize)>) -> HeatmapData {
    HeatmapData {
        title: format!("{} over {} × {}", tunelab_scenario::metrics::label(&m.metric), m.x_param, m.y_param),
        x_label: m.x_param.clone(),
        y_label: m.y_param.clone(),
        value_label: tunelab_scenario::metrics::label_unit(&m.metric, &m.unit),
        x_values: m.x_values.iter().map(|v| v.to_string()).collect(),
        y_values: m.y_values.iter().map(|v| v.to_string()).collect(),
        cells: m.cells.iter().map(|row| row.iter().map(|c| HeatCell { value: c.value.unwrap_or(f64::NAN), infeasible: c.reason.clone() }).collect()).collect(),
        minimize: m.minimize,
        selected,
    }
}

//! The teaching canvas for a slice of a model-priced space: when every parameter but two is
//! fixed (`scenario.space`, e.g. the gallery's matmul tiling slice), the whole 2-D surface is
//! priced once by the study's own objective (`explore::heatmap`, in the engine worker, the same
//! function the strategies are scored by) and drawn as a heat map, with every strategy's
//! proposals moving on it step by step. A landscape scenario draws its own surface
//! (`landscape::LandscapeView`); this is the same chart for the other stages.

use crate::charts::surface::{SurfaceChart, SurfaceData, SurfaceSeries};
use crate::state::{Ctx, Status};
use leptos::prelude::*;
use tunelab_scenario::explore::HeatMap;
use tunelab_scenario::{Scenario, Stage};
use tunelab_search::{Config, Space};

/// The two free parameters of a space whose other parameters each have a single value (a
/// slice), in space order; None for any other space.
pub fn free_pair(space: &Space) -> Option<(usize, usize)> {
    let free: Vec<usize> = (0..space.params().len()).filter(|&i| space.params()[i].levels().is_none_or(|n| n > 1)).collect();
    (free.len() == 2).then(|| (free[0], free[1]))
}

/// The heat map as a surface (row 0 at the bottom), with each lane's proposals placed on the
/// cells they priced and the best cell starred once the race is `done`.
pub fn slice_surface(m: &HeatMap, space: &Space, (ax, ay): (usize, usize), lanes: &[(String, Vec<Config>)], done: bool) -> SurfaceData {
    let cells: Vec<f64> = m.cells.iter().flat_map(|row| row.iter().map(|c| c.value.unwrap_or(f64::NAN))).collect();
    let at = |values: &[tunelab_search::Value], c: &Config, i: usize| c.0.get(i).and_then(|v| values.iter().position(|x| x == v)).map(|p| p as f64);
    let series = lanes
        .iter()
        .map(|(name, configs)| SurfaceSeries { name: name.clone(), points: configs.iter().filter_map(|c| Some((at(&m.x_values, c, ax)?, at(&m.y_values, c, ay)?))).collect() })
        .collect();
    let optimum = if done {
        m.best.map(|(i, j)| {
            let v = m.cells[j][i].value.unwrap_or(f64::NAN);
            (i as f64, j as f64, format!("{} at {}={}, {}={}", crate::charts::numbers::fmt_unit(v, &m.unit), m.x_param, m.x_values[i], m.y_param, m.y_values[j]))
        })
    } else {
        None
    };
    let fixed: Vec<String> = space
        .params()
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != ax && *i != ay)
        .map(|(_, p)| format!("{}={}", p.name, if p.levels() == Some(1) { p.level_value(0).to_string() } else { "?".into() }))
        .collect();
    // Axes by the parameter's name without its phase ("flash_attention.blockQ", not
    // "forward:flash_attention.blockQ"); the title by the tiling field alone ("blockQ").
    let axis = |p: &str| p.rsplit(':').next().unwrap_or(p).to_string();
    let field = |p: &str| p.rsplit(['.', ':']).next().unwrap_or(p).to_string();
    SurfaceData {
        title: format!("{} over {} and {}", tunelab_scenario::metrics::label(&m.metric), field(&m.x_param), field(&m.y_param)),
        x_label: axis(&m.x_param),
        y_label: axis(&m.y_param),
        value_label: tunelab_scenario::metrics::label_unit(&m.metric, &m.unit),
        x_values: m.x_values.iter().map(|v| v.to_string()).collect(),
        y_values: m.y_values.iter().map(|v| v.to_string()).collect(),
        cells,
        minimize: m.minimize,
        series,
        optimum,
        note: if fixed.is_empty() { String::new() } else { format!("A slice, priced by the device model; fixed: {}", fixed.join(", ")) },
    }
}

/// The scenario as it prices (its view state, which changes with the layout and the pace,
/// left out): the heat map is asked again only when this changes.
fn pricing_key(s: &Scenario) -> String {
    let mut s = s.clone();
    s.view = serde_json::Value::Null;
    serde_json::to_string(&s).unwrap_or_default()
}

/// The canvas: shown for a non-landscape scenario whose space is a 2-D slice, once a run exists.
#[component]
pub fn SliceCanvas() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let pair = Memo::new(move |_| {
        ctx.view.track();
        if ctx.scenario.with(|s| s.stage == Stage::Landscape) {
            return None;
        }
        ctx.with_session(|s| free_pair(s.run().space()).map(|p| (p, s.run().space().clone()))).flatten().map(|(p, sp)| (p, SpaceRef(sp)))
    });
    let key = Memo::new(move |_| ctx.scenario.with(pricing_key));
    let map = RwSignal::new(None::<(String, HeatMap)>);
    Effect::new(move |_| {
        let k = key.get();
        let Some(((ax, ay), sp)) = pair.get() else { return };
        if map.with_untracked(|m| m.as_ref().is_some_and(|m| m.0 == k)) {
            return;
        }
        let (x, y) = (sp.0.names()[ax].clone(), sp.0.names()[ay].clone());
        let want = k.clone();
        crate::worker::ask::heatmap(ctx.scenario.get_untracked(), x, y, move |r| match r {
            Ok(m) if key.try_get_untracked().as_ref() == Some(&want) => map.set(Some((want, m))),
            Ok(_) => {}
            Err(e) => ctx.fail(format!("The slice's surface could not be priced: {e}")),
        });
    });
    let data = Memo::new(move |_| {
        let Some((axes, sp)) = pair.get() else { return SurfaceData::default() };
        let done = ctx.status.get() == Status::Done;
        ctx.view.track();
        let lanes: Vec<(String, Vec<Config>)> = ctx
            .with_session(|s| (0..s.run().lanes().len()).map(|i| (s.run().lanes()[i].spec.name.clone(), s.run().trials(i).iter().filter(|t| !t.warm).map(|t| t.config.clone()).collect())).collect())
            .unwrap_or_default();
        map.with(|m| m.as_ref().filter(|m| m.0 == key.get()).map(|m| slice_surface(&m.1, &sp.0, axes, &lanes, done))).unwrap_or_default()
    });
    view! {
        <Show when=move || pair.with(|p| p.is_some()) && data.with(|d| !d.cells.is_empty())>
            <div class="surface" data-testid="slice-surface">
                <SurfaceChart data=data/>
            </div>
        </Show>
    }
}

/// A space compared by its parameters (a memo's value must be comparable).
#[derive(Clone)]
struct SpaceRef(Space);

impl PartialEq for SpaceRef {
    fn eq(&self, other: &Self) -> bool {
        self.0.names() == other.0.names() && self.0.params().iter().zip(other.0.params()).all(|(a, b)| a.domain == b.domain)
    }
}

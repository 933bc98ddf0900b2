//! Replay on known landscapes in the browser: pick a bundled Kernel Tuner cache or a toy 2-D
//! function, or drop your own cache or T4 results file (.json or .json.gz); race strategies on it with the live
//! charts and teaching cards; see where each strategy sampled on the whole surface, and the true
//! optimum once the race has ended.
//!
//! Where the bytes live: a cache is never compiled into the page nor put in the link. A bundled
//! one is fetched as a static file (`kernel-tuner/<file>`, copied by Trunk, cached offline by the
//! service worker); a dropped one stays in this tab. The link names a bundled cache, or records
//! a dropped file's name and SHA-256, so opening it asks for the file again and checks it is the
//! same one (`landscape::Landscape::build`). The page parses a cache once (`Loaded`); workers get
//! its bytes in a binary message and parse their own copy.

use crate::charts::numbers::{describe, fmt4, fmt_unit};
use crate::charts::surface::{SurfaceChart, SurfaceData};
pub use crate::components::landscape_surface::{default_axes, surface_data};
use crate::state::{Ctx, Status};
use leptos::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use tunelab_scenario::stages::landscape::{self, KernelTunerSource, Landscape, LandscapeSource, Needed, ToySpec};
use tunelab_scenario::{Scenario, Stage};

/// Where static Kernel Tuner caches are served, beside the page (index.html copies
/// assets/kernel-tuner there).
pub const CACHE_DIR: &str = "kernel-tuner/";

/// The landscape the page has loaded: its source, the file's bytes (for workers; empty for a
/// toy) and the parsed landscape.
struct Loaded {
    source: LandscapeSource,
    bytes: Rc<Vec<u8>>,
    land: Arc<Landscape>,
}

thread_local! {
    static LOADED: RefCell<Option<Loaded>> = const { RefCell::new(None) };
}

/// The loaded landscape, when it is the one the scenario names (None otherwise, or for another
/// stage). A toy landscape is built here on first use (it needs no file).
pub fn loaded_for(s: &Scenario) -> Option<Arc<Landscape>> {
    if s.stage != Stage::Landscape {
        return None;
    }
    let src = s.landscape.as_ref()?;
    if let Some(l) = LOADED.with(|l| l.borrow().as_ref().filter(|l| &l.source == src).map(|l| l.land.clone())) {
        return Some(l);
    }
    if matches!(src, LandscapeSource::Toy(_)) {
        let land = Landscape::build(s, None).ok()?;
        keep(src.clone(), Vec::new(), land.clone());
        return Some(land);
    }
    None
}

/// The cache file's bytes for the scenario's landscape with a key naming them (None for a toy
/// or when not loaded): what the worker driver posts to each worker once.
pub fn bytes_for(s: &Scenario) -> Option<(String, Rc<Vec<u8>>)> {
    let src = s.landscape.as_ref().filter(|_| s.stage == Stage::Landscape)?;
    LOADED.with(|l| {
        l.borrow().as_ref().filter(|l| &l.source == src && !l.bytes.is_empty()).map(|l| (l.land.digest().unwrap_or_default().to_string(), l.bytes.clone()))
    })
}

fn keep(source: LandscapeSource, bytes: Vec<u8>, land: Arc<Landscape>) {
    // The engine's views that build the stage from the scenario (pins, heat map, guards) find it.
    landscape::remember(land.clone());
    LOADED.with(|l| *l.borrow_mut() = Some(Loaded { source, bytes: Rc::new(bytes), land }));
}

/// The landscape panel's own state, provided at the root.
#[derive(Clone, Copy)]
pub struct LandState {
    /// Bumped when a landscape is loaded, so views that draw it redraw.
    pub rev: RwSignal<u64>,
    /// What the panel says about the landscape (loading, loaded, drop it again).
    pub status: RwSignal<String>,
    /// The parameters the surface is projected on (indices into the space).
    pub axes: RwSignal<Option<(usize, usize)>>,
}

/// Provides the landscape state and loads what a scenario needs whenever it changes: a bundled
/// cache is fetched, a dropped one is asked for again, a toy is built.
pub fn provide(ctx: Ctx) {
    let st = LandState { rev: RwSignal::new(0), status: RwSignal::new(String::new()), axes: RwSignal::new(None) };
    provide_context(st);
    Effect::new(move |prev: Option<Option<LandscapeSource>>| {
        let src = ctx.scenario.with(|s| if s.stage == Stage::Landscape { s.landscape.clone() } else { None });
        if prev.as_ref() != Some(&src) {
            st.axes.set(None);
            ctx.scenario.with_untracked(|s| ensure_loaded(ctx, st, s));
        }
        src
    });
}

/// Starts loading the scenario's landscape if it is not loaded yet; sets the status line.
fn ensure_loaded(ctx: Ctx, st: LandState, s: &Scenario) {
    if s.stage != Stage::Landscape {
        st.status.set(String::new());
        return;
    }
    if let Some(l) = loaded_for(s) {
        st.status.set(loaded_text(&l));
        st.rev.update(|r| *r += 1);
        return;
    }
    match landscape::needs_bytes(s) {
        Some(Needed::Bundled { name, file }) => {
            st.status.set(format!("Fetching the bundled cache {name} ({file})…"));
            let want = s.landscape.clone();
            leptos::task::spawn_local(async move {
                let url = format!("{CACHE_DIR}{file}");
                let got = fetch_bytes(&url).await;
                // The scenario may have changed while the file came.
                let current = ctx.scenario.with_untracked(|s| s.landscape.clone());
                if current != want {
                    return;
                }
                let built = got.and_then(|b| ctx.scenario.with_untracked(|s| Landscape::build(s, Some(&b))).map(|l| (b, l)));
                match built {
                    Ok((bytes, land)) => {
                        if let Some(src) = want {
                            keep(src, bytes, land.clone());
                        }
                        st.status.set(loaded_text(&land));
                        st.rev.update(|r| *r += 1);
                    }
                    Err(e) => {
                        st.status.set(format!("Could not load the bundled cache {name}: {e}"));
                        ctx.fail(format!("The bundled cache {name} could not be loaded: {e}"));
                    }
                }
            });
        }
        Some(Needed::Dropped { message, .. }) => {
            let mut m = message;
            if let Some(c) = m.get_mut(..1) {
                c.make_ascii_uppercase();
            }
            st.status.set(format!("{m}."));
        }
        None => st.status.set("This landscape could not be built; see the message above.".into()),
    }
}

fn loaded_text(l: &Landscape) -> String {
    let n = l.cache().map(|c| c.len()).or_else(|| l.grid().map(|g| g.0.len() * g.1.len())).unwrap_or(0);
    format!("Loaded: {} ({} configurations).", l.title(), n)
}

/// Fetches a file served beside the page as bytes.
async fn fetch_bytes(url: &str) -> Result<Vec<u8>, String> {
    use wasm_bindgen::JsCast;
    let w = web_sys::window().ok_or("no window")?;
    let err = |e: wasm_bindgen::JsValue| format!("{url}: {}", e.as_string().unwrap_or_else(|| format!("{e:?}")));
    let resp = wasm_bindgen_futures::JsFuture::from(w.fetch_with_str(url)).await.map_err(err)?;
    let resp: web_sys::Response = resp.dyn_into().map_err(|_| format!("{url}: not a response"))?;
    if !resp.ok() {
        return Err(format!("{url}: HTTP {}", resp.status()));
    }
    let buf = wasm_bindgen_futures::JsFuture::from(resp.array_buffer().map_err(err)?).await.map_err(err)?;
    Ok(js_sys::Uint8Array::new(&buf).to_vec())
}

/// A landscape scenario for `source`, keeping the current scenario's strategies, budget, seed
/// and view when it is already a landscape (otherwise a four-strategy race of 100 evaluations).
pub fn landscape_scenario(current: &Scenario, source: LandscapeSource) -> Scenario {
    let mut s = Scenario { stage: Stage::Landscape, landscape: Some(source.clone()), ..Scenario::default() };
    if current.stage == Stage::Landscape {
        s.strategy = current.strategy.clone();
        s.compare = current.compare.clone();
        s.budget = current.budget;
        s.seed = current.seed;
        s.view = current.view.clone();
    } else {
        s.strategy = tunelab_scenario::scenario::StrategySpec { name: "bayes".into(), ..Default::default() };
        s.compare = ["genetic", "annealing", "random"].iter().map(|n| tunelab_scenario::scenario::StrategySpec { name: (*n).into(), ..Default::default() }).collect();
        s.budget = 100;
        s.seed = 0;
        s.view = current.view.clone();
    }
    s.name = match &source {
        LandscapeSource::Toy(t) => format!("Toy landscape: {}", t.function),
        LandscapeSource::KernelTuner(KernelTunerSource::Bundled(n)) => format!("Replay of the Kernel Tuner cache {n}"),
        LandscapeSource::KernelTuner(KernelTunerSource::Dropped(d)) => format!("Replay of the Kernel Tuner cache {}", d.name),
    };
    s
}

/// What a dropped file does: a cache the scenario waits for (same digest) is loaded; any other
/// file becomes a new landscape scenario, unless the scenario waits for a different file (then
/// it is refused, naming both digests, and the current work is kept).
pub fn drop_bytes(ctx: Ctx, st: LandState, name: &str, bytes: Vec<u8>) {
    let t0 = crate::browser::now_ms();
    let parsed = landscape::dropped(name, &bytes);
    crate::browser::record_timing("cache-parse", crate::browser::now_ms() - t0);
    let (source, land) = match parsed {
        Ok(x) => x,
        Err(e) => return ctx.fail(format!("That file was not loaded: {e}. Your current scenario is kept.")),
    };
    let waiting = ctx.scenario.with_untracked(|s| match (&s.stage, &s.landscape) {
        (Stage::Landscape, Some(LandscapeSource::KernelTuner(KernelTunerSource::Dropped(d)))) if loaded_for(s).is_none() => Some(d.clone()),
        _ => None,
    });
    if let Some(d) = waiting {
        if Some(d.digest.as_str()) != land.digest() {
            return ctx.fail(format!(
                "'{}' is not the file this link was made with: its SHA-256 is {}, the link records {} for '{}'. Your current scenario is kept; pick another landscape first to race this file instead.",
                name,
                land.digest().unwrap_or("?"),
                d.digest,
                d.name
            ));
        }
        // The same cache: keep the link's source (its name as the link wrote it).
        let src = ctx.scenario.with_untracked(|s| s.landscape.clone()).unwrap_or(source);
        let text = loaded_text(&land);
        keep(src, bytes, land);
        st.status.set(text);
        st.rev.update(|r| *r += 1);
        return;
    }
    keep(source.clone(), bytes, land.clone());
    let s = ctx.scenario.with_untracked(|c| landscape_scenario(c, source));
    if ctx.replace(s) {
        st.status.set(loaded_text(&land));
        st.rev.update(|r| *r += 1);
    }
}

fn read_and_drop(ctx: Ctx, st: LandState, f: web_sys::File) {
    let name = f.name();
    let size = f.size();
    if size > tunelab_search::kernel_tuner::MAX_CACHE_BYTES as f64 {
        return ctx.fail(format!("'{name}' has {:.0} MiB; a cache may have at most {} MiB. Your current scenario is kept.", size / 1048576.0, tunelab_search::kernel_tuner::MAX_CACHE_BYTES >> 20));
    }
    st.status.set(format!("Reading {name}…"));
    leptos::task::spawn_local(async move {
        match wasm_bindgen_futures::JsFuture::from(f.array_buffer()).await {
            Ok(buf) => drop_bytes(ctx, st, &name, js_sys::Uint8Array::new(&buf).to_vec()),
            Err(_) => ctx.fail(format!("'{name}' could not be read. Your current scenario is kept.")),
        }
        ctx.scenario.with_untracked(|s| {
            if loaded_for(s).is_none() {
                ensure_loaded(ctx, st, s)
            }
        });
    });
}

/// The picker's value for a source ("kt:NAME", "toy:NAME", "dropped").
fn pick_value(s: &Scenario) -> String {
    match (&s.stage, &s.landscape) {
        (Stage::Landscape, Some(LandscapeSource::KernelTuner(KernelTunerSource::Bundled(n)))) => format!("kt:{n}"),
        (Stage::Landscape, Some(LandscapeSource::Toy(t))) => format!("toy:{}", t.function),
        (Stage::Landscape, Some(LandscapeSource::KernelTuner(KernelTunerSource::Dropped(_)))) => "dropped".into(),
        _ => String::new(),
    }
}

/// The source a picker value names.
pub fn source_of_pick(v: &str) -> Option<LandscapeSource> {
    if let Some(n) = v.strip_prefix("kt:") {
        return landscape::bundled_file(n).map(|_| LandscapeSource::KernelTuner(KernelTunerSource::Bundled(n.to_string())));
    }
    let f = v.strip_prefix("toy:")?;
    landscape::toy_function(f).map(|_| LandscapeSource::Toy(ToySpec { function: f.to_string(), resolution: 64 }))
}

/// The panel: pick a landscape or drop a cache; what is loaded; the optimum after the race.
#[component]
pub fn LandscapePanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let st = expect_context::<LandState>();
    let is_land = move || ctx.scenario.with(|s| s.stage == Stage::Landscape);
    let pick = move |ev: leptos::ev::Event| {
        let v = event_target_value(&ev);
        if let Some(src) = source_of_pick(&v) {
            let s = ctx.scenario.with_untracked(|c| landscape_scenario(c, src));
            ctx.replace(s);
        }
    };
    let on_file = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(f) = input.files().and_then(|l| l.get(0)) {
            read_and_drop(ctx, st, f);
        }
        input.set_value("");
    };
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        if let Some(f) = ev.data_transfer().and_then(|d| d.files()).and_then(|l| l.get(0)) {
            read_and_drop(ctx, st, f);
        }
    };
    let current = move || ctx.scenario.with(pick_value);
    let dropped_name = move || {
        ctx.scenario.with(|s| match &s.landscape {
            Some(LandscapeSource::KernelTuner(KernelTunerSource::Dropped(d))) => d.name.clone(),
            _ => String::new(),
        })
    };
    view! {
        <details class="panel landscape" data-testid="landscape-panel" prop:open=move || is_land()>
            <summary>"Replay real data: Kernel Tuner caches and toy landscapes"</summary>
            <p class="small muted">"Race strategies on a landscape whose every value is known: real GPU measurements from a Kernel Tuner cache, or a 2-D function drawn whole. The values are the file's, not Tunelab's model."</p>
            <label>"Landscape "
                <select data-testid="landscape-pick" on:change=pick>
                    <option value="" selected=move || current().is_empty()>"(choose)"</option>
                    <optgroup label="Kernel Tuner caches (real measurements)">
                        {landscape::BUNDLED_CACHES.iter().map(|b| {
                            let n = b.0;
                            let v = format!("kt:{n}");
                            let v2 = v.clone();
                            view! { <option value=v selected=move || current() == v2>{n.replace('_', " ")}</option> }
                        }).collect_view()}
                    </optgroup>
                    <optgroup label="Toy 2-D functions (whole surface drawn)">
                        {landscape::TOY_FUNCTIONS.iter().map(|t| {
                            let v = format!("toy:{}", t.name);
                            let v2 = v.clone();
                            view! { <option value=v selected=move || current() == v2 title=t.description>{t.name}</option> }
                        }).collect_view()}
                    </optgroup>
                    <Show when=move || !dropped_name().is_empty()>
                        <option value="dropped" selected=move || current() == "dropped">{move || format!("your file: {}", dropped_name())}</option>
                    </Show>
                </select>
            </label>
            <div class="drop cache-drop" data-testid="cache-drop" on:dragover=|ev: leptos::ev::DragEvent| ev.prevent_default() on:drop=on_drop>
                <p class="small">"Drop a Kernel Tuner cache or T4 results file here (.json or .json.gz), or "
                    <input type="file" accept=".json,.gz,application/json,application/gzip" data-testid="cache-file" on:change=on_file/>
                </p>
                <p class="small muted">"Your file stays in this tab: the link records only its name and SHA-256."</p>
            </div>
            <p class="small" data-testid="landscape-status">{move || st.status.get()}</p>
            <Show when=move || ctx.status.get() == Status::Done && is_land()>
                <OptimumLine/>
            </Show>
        </details>
    }
}

/// After the race: the true optimum and how close each strategy came.
#[component]
fn OptimumLine() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let st = expect_context::<LandState>();
    let text = move || {
        st.rev.track();
        let land = ctx.scenario.with(loaded_for)?;
        let (cfg, v) = land.optimum()?;
        let unit = land.metric().unit;
        let names = land.space().names();
        let mut out = format!("True optimum: {} at {}.", fmt_unit(v, &unit), describe(&cfg, names));
        ctx.view.with(|rv| {
            if let Some(rv) = rv {
                let parts: Vec<String> = rv
                    .lanes
                    .iter()
                    .filter_map(|l| {
                        let b: f64 = l.best.as_ref()?.parse().ok()?;
                        Some(format!("{} {}", l.strategy, land.ratio(b).map(fmt4).unwrap_or_else(|| "n/a".into())))
                    })
                    .collect();
                if !parts.is_empty() {
                    out.push_str(&format!(" Best found, as {}: {}.", land.ratio_label(), parts.join(", ")));
                }
            }
        });
        Some(out)
    };
    view! { <p class="small optimum" data-testid="landscape-optimum">{move || text().unwrap_or_default()}</p> }
}

/// The whole landscape with every strategy's samples, beside the live charts (landscape
/// scenarios only), and the choice of the two parameters it is projected on.
#[component]
pub fn LandscapeView() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let st = expect_context::<LandState>();
    let land = Memo::new(move |_| {
        st.rev.track();
        ctx.scenario.with(loaded_for).map(LandRef)
    });
    // The space the scenario races on: the scenario's slice of a cache, or the whole landscape.
    let slice = move |l: &Landscape| ctx.scenario.with(|s| landscape::slice_space(s, l).unwrap_or_else(|_| l.space().clone()));
    let axes = move || st.axes.get().or_else(|| land.with(|l| l.as_ref().map(|l| default_axes(&slice(&l.0)))));
    let data = Memo::new(move |_| {
        let Some(l) = land.get() else { return SurfaceData::default() };
        let sp = slice(&l.0);
        let ax = axes().unwrap_or((0, 1));
        let done = ctx.status.get() == Status::Done;
        // Redraw with the run's views (the trials themselves live in the session).
        ctx.view.track();
        let lanes: Vec<(String, Vec<tunelab_search::Config>)> = ctx
            .with_session(|s| (0..s.run().lanes().len()).map(|i| (s.run().lanes()[i].spec.name.clone(), s.run().trials(i).iter().filter(|t| !t.warm).map(|t| t.config.clone()).collect())).collect())
            .unwrap_or_default();
        surface_data(&l.0, &sp, ax, &lanes, done)
    });
    // The parameters a projection may use: the free ones of the race's space (a slice's fixed
    // parameters have one value, so there is nothing to project them on), with their index.
    let names = move || {
        land.with(|l| {
            l.as_ref()
                .map(|l| slice(&l.0).params().iter().enumerate().filter(|(_, p)| p.levels() != Some(1)).map(|(i, p)| (i, p.name.clone())).collect::<Vec<_>>())
                .unwrap_or_default()
        })
    };
    let choose = move |which: usize| {
        move |ev: leptos::ev::Event| {
            if let Ok(i) = event_target_value(&ev).parse::<usize>() {
                let (a, b) = axes().unwrap_or((0, 1));
                st.axes.set(Some(if which == 0 { (i, b) } else { (a, i) }));
            }
        }
    };
    let select = move |which: usize| {
        view! {
            <select data-testid=format!("surface-{}", if which == 0 { "x" } else { "y" }) on:change=choose(which)>
                {move || names().into_iter().map(|(i, n)| {
                    let sel = move || axes().map(|a| if which == 0 { a.0 } else { a.1 }) == Some(i);
                    view! { <option value=i.to_string() selected=sel>{n}</option> }
                }).collect_view()}
            </select>
        }
    };
    view! {
        <Show when=move || land.with(|l| l.is_some())>
            <div class="surface" data-testid="surface">
                <SurfaceChart data=data/>
                // Only where there is a choice: more than two free parameters (a 2-D slice or a
                // 2-D toy is drawn whole, with nothing projected).
                <Show when=move || 2 < names().len()>
                    <p class="row small">"Projected on " {select(0)} " and " {select(1)}</p>
                </Show>
            </div>
        </Show>
    }
}

/// An `Arc<Landscape>` compared by identity (a memo's value must be comparable).
#[derive(Clone)]
struct LandRef(Arc<Landscape>);

impl PartialEq for LandRef {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

#[cfg(all(test, feature = "page-engine"))] // they step runs on the page
mod tests {
    use super::*;

    fn toy() -> Scenario {
        let s = landscape_scenario(&Scenario::default(), source_of_pick("toy:branin").unwrap());
        s.validate().unwrap();
        s
    }

    #[test]
    fn a_toy_surface_is_drawn_whole_with_samples_and_optimum_after_the_race() {
        let s = toy();
        let land = loaded_for(&s).expect("a toy landscape builds without a file");
        let mut sess = crate::session::Session::new(&s).unwrap();
        while !sess.step(500) {}
        let lanes: Vec<(String, Vec<tunelab_search::Config>)> =
            (0..sess.run().lanes().len()).map(|i| (sess.run().lanes()[i].spec.name.clone(), sess.run().trials(i).iter().map(|t| t.config.clone()).collect())).collect();
        let d = surface_data(&land, land.space(), default_axes(land.space()), &lanes, false);
        assert_eq!((d.columns(), d.rows()), (64, 64));
        assert!(d.cells.iter().all(|v| v.is_finite()), "every grid point has its value");
        assert_eq!(d.series.len(), 4);
        assert_eq!(d.series[0].points.len(), sess.run().trials(0).len());
        assert!(d.optimum.is_none());
        let done = surface_data(&land, land.space(), (0, 1), &lanes, true);
        let (c, r, what) = done.optimum.clone().unwrap();
        let best = done.cells.iter().cloned().fold(f64::INFINITY, f64::min);
        assert_eq!(done.cells[r as usize * 64 + c as usize], best, "the star marks the grid's minimum");
        assert!(what.contains("x="), "{what}");
        assert!(crate::charts::surface::to_svg_string(&done).contains("true optimum"));
    }

    #[test]
    fn a_bundled_cache_replays_in_a_session_and_projects_on_two_parameters() {
        let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/kernel-tuner/pnpoly_RTX_2080_Ti.json.gz")).unwrap();
        let mut s = landscape_scenario(&Scenario::default(), source_of_pick("kt:pnpoly_RTX_2080_Ti").unwrap());
        s.budget = 30;
        assert!(crate::session::Session::new(&s).is_err(), "without the file the run says it needs it");
        let land = Landscape::build(&s, Some(&bytes)).unwrap();
        keep(s.landscape.clone().unwrap(), bytes, land.clone());
        assert!(bytes_for(&s).is_some());
        let mut sess = crate::session::Session::new(&s).unwrap();
        while !sess.step(500) {}
        assert_eq!(sess.run().trials(0).len(), 30);
        let (ax, ay) = default_axes(land.space());
        assert!(ax < ay);
        let d = surface_data(&land, land.space(), (ax, ay), &[("bayes".into(), sess.run().trials(0).iter().map(|t| t.config.clone()).collect())], true);
        assert!(d.note.contains("projected on two"));
        let best_cell = d.cells.iter().cloned().filter(|v| v.is_finite()).fold(f64::INFINITY, f64::min);
        assert_eq!(Some(best_cell), land.optimum().map(|o| o.1), "the best cell holds the true optimum");
        assert!(d.series[0].points.iter().all(|&(c, r)| c > -0.5 && c < d.columns() as f64 - 0.5 && r > -0.5 && r < d.rows() as f64 - 0.5));
    }

    #[test]
    fn picker_values_name_sources() {
        assert!(source_of_pick("kt:nope").is_none());
        assert!(source_of_pick("toy:nope").is_none());
        assert!(source_of_pick("").is_none());
        let s = toy();
        assert_eq!(pick_value(&s), "toy:branin");
        assert_eq!(s.strategies().len(), 4);
    }
}

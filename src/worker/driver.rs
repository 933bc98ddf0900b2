//! The page's side of the engine: runs, pauses and steps a race of strategies in Web Workers
//! (one per strategy by default), mirrors their trials into the page's `Session`, and redraws
//! at most every `REDRAW_MS`. Where workers are unavailable (or `localStorage["tunelab.workers"]`
//! is "0") the run steps on the page in time slices, as before.
//!
//! Determinism: a worker steps its lanes with `Run::step_lane`, which gives the same trials as
//! the CLI's round-robin `Run::step` (lanes share nothing that changes their trials); the page's
//! mirror holds those trials bit for bit, so `best` and the trace digest match the CLI's.

use super::protocol::{FromWorker, ToWorker};
use crate::browser;
use crate::state::{Ctx, Status, REDRAW_MS};
use leptos::prelude::*;
use std::cell::RefCell;
use std::time::Duration;

/// Most workers a race starts (one per strategy up to this).
pub const MAX_WORKERS: usize = 8;
/// The engine module's files, beside the page (Trunk names a worker's files after its binary,
/// without a content hash).
const ENGINE_JS: &str = "tunelab-engine.js";
const ENGINE_WASM: &str = "tunelab-engine_bg.wasm";

/// A worker runs the engine module (crates/engine): this script (a module worker made from a
/// Blob) loads its .js and .wasm, whose `main` starts the worker loop. The addresses carry this
/// build's hash (the page's own hashed .js name), so a browser never pairs a new page with an
/// engine from its HTTP cache; the service worker matches them without the query.
pub(crate) fn worker_script() -> Result<String, String> {
    let doc = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
    let base = browser::href();
    let build = doc
        .query_selector("link[rel=modulepreload][href$='.js']")
        .ok()
        .flatten()
        .and_then(|el| el.get_attribute("href"))
        .unwrap_or_default();
    let build: String = build.rsplit('/').next().unwrap_or_default().chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    let url = |file: &str| -> Result<String, String> {
        web_sys::Url::new_with_base(&format!("{file}?v={build}"), &base).map(|u| u.href()).map_err(|_| format!("bad address {file}"))
    };
    let (js, wasm) = (url(ENGINE_JS)?, url(ENGINE_WASM)?);
    Ok(format!("import init from {js:?};\ninit({{ module_or_path: {wasm:?} }});\n"))
}

/// A new Web Worker running the engine module (`worker_script`); every worker the page starts
/// (race lanes, Explore's questions, chip comparison) is made here.
pub(crate) fn engine_worker() -> Result<web_sys::Worker, String> {
    if js_sys::Reflect::get(&js_sys::global(), &"Worker".into()).map(|w| w.is_undefined()).unwrap_or(true) {
        return Err("this browser has no Web Workers".into());
    }
    let script = worker_script()?;
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(&script));
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type("text/javascript");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &bag).map_err(|e| format!("worker script: {e:?}"))?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|e| format!("worker script: {e:?}"))?;
    let opts = web_sys::WorkerOptions::new();
    opts.set_type(web_sys::WorkerType::Module);
    web_sys::Worker::new_with_options(&url, &opts).map_err(|e| format!("could not start a worker: {e:?}"))
}

struct Slot {
    worker: web_sys::Worker,
    ready: bool,
    /// Messages held until the worker's module has loaded (text, or a cache file's bytes).
    queue: Vec<wasm_bindgen::JsValue>,
    /// Which cache file's bytes this worker holds (so they are sent once).
    cache_key: Option<String>,
    /// Waiting for an idle update (after Go, Step or Pause).
    busy: bool,
    _closures: Vec<wasm_bindgen::closure::Closure<dyn FnMut(web_sys::MessageEvent)>>,
}

/// What a race does once its workers have built the run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Then {
    Go,
    Step,
}

/// The race in progress in workers.
struct Race {
    id: u64,
    then: Then,
    /// The page's mirror is built (it waits for a worker's priced baseline).
    mirrored: bool,
    /// Workers used, in the pool's order.
    workers: Vec<usize>,
    started: f64,
    busy_ms: f64,
}

#[derive(Default)]
struct Driver {
    ctx: Option<Ctx>,
    slots: Vec<Slot>,
    /// Why workers cannot be used (then runs step on the page).
    unavailable: Option<String>,
    race: Option<Race>,
    next_id: u64,
    redraw_queued: bool,
}

thread_local! {
    static D: RefCell<Driver> = RefCell::new(Driver::default());
}

/// Workers a race of `lanes` strategies uses: one per strategy, as many as the machine has cores
/// beside the page's own (`navigator.hardwareConcurrency - 1`, at least 1, at most
/// `MAX_WORKERS`); or the number in `localStorage["tunelab.workers"]` (0: step on the page).
/// Leaving the page a core keeps its redraws short on a small machine.
pub fn workers_for(lanes: usize) -> usize {
    let wanted = browser::storage_get("tunelab.workers").ok().flatten().and_then(|v| v.trim().parse::<usize>().ok());
    let cores = web_sys::window().map(|w| w.navigator().hardware_concurrency() as usize).unwrap_or(2);
    match wanted {
        Some(n) => n.min(lanes).min(MAX_WORKERS),
        None => lanes.min(cores.saturating_sub(1).max(1)).clamp(1, MAX_WORKERS),
    }
}

/// Starts workers ahead of the first run, so Run and Step do not wait for them to load.
pub fn prepare(ctx: Ctx) {
    D.with(|d| d.borrow_mut().ctx = Some(ctx));
    let lanes = ctx.scenario.with_untracked(|s| s.strategies().len());
    let _ = ensure(workers_for(lanes));
}

/// Makes sure `n` workers exist; false when workers are unavailable.
fn ensure(n: usize) -> bool {
    if n == 0 || D.with(|d| d.borrow().unavailable.is_some()) {
        return false;
    }
    while D.with(|d| d.borrow().slots.len()) < n {
        let k = D.with(|d| d.borrow().slots.len());
        match spawn(k) {
            Ok(slot) => D.with(|d| d.borrow_mut().slots.push(slot)),
            Err(e) => {
                D.with(|d| d.borrow_mut().unavailable = Some(e));
                return false;
            }
        }
    }
    true
}

fn spawn(k: usize) -> Result<Slot, String> {
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    let worker = engine_worker()?;
    let on_msg = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
        if let Some(t) = e.data().as_string() {
            on_message(k, &t);
        }
    });
    worker.set_onmessage(Some(on_msg.as_ref().unchecked_ref()));
    let on_err = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
        let msg = js_sys::Reflect::get(&e, &"message".into()).ok().and_then(|m| m.as_string()).unwrap_or_else(|| "it could not load".into());
        on_worker_error(k, msg);
    });
    worker.set_onerror(Some(on_err.as_ref().unchecked_ref()));
    Ok(Slot { worker, ready: false, queue: Vec::new(), cache_key: None, busy: false, _closures: vec![on_msg, on_err] })
}

fn post(k: usize, m: &ToWorker) {
    let text = m.to_text();
    D.with(|d| {
        let mut d = d.borrow_mut();
        if let Some(s) = d.slots.get_mut(k) {
            if !matches!(m, ToWorker::Drop) {
                s.busy = !matches!(m, ToWorker::Start { .. }) || s.busy;
            }
            if s.ready {
                let _ = s.worker.post_message(&wasm_bindgen::JsValue::from_str(&text));
            } else {
                s.queue.push(wasm_bindgen::JsValue::from_str(&text));
            }
        }
    });
}

/// Sends a cache file's bytes to worker `k` unless it already holds them (`key`).
fn post_bytes(k: usize, key: &str, bytes: &[u8]) {
    D.with(|d| {
        let mut d = d.borrow_mut();
        if let Some(s) = d.slots.get_mut(k) {
            if s.cache_key.as_deref() == Some(key) {
                return;
            }
            s.cache_key = Some(key.to_string());
            let data: wasm_bindgen::JsValue = js_sys::Uint8Array::from(bytes).into();
            if s.ready {
                let _ = s.worker.post_message(&data);
            } else {
                s.queue.push(data);
            }
        }
    });
}

fn race_workers() -> Vec<usize> {
    D.with(|d| d.borrow().race.as_ref().map(|r| r.workers.clone()).unwrap_or_default())
}

fn race_id() -> Option<u64> {
    D.with(|d| d.borrow().race.as_ref().map(|r| r.id))
}

/// Why workers cannot be used (None: they can, or none was tried yet).
#[cfg(not(feature = "page-engine"))]
pub(crate) fn why_no_workers() -> Option<String> {
    D.with(|d| d.borrow().unavailable.clone())
}

fn in_workers(ctx: &Ctx) -> bool {
    race_id().is_some() && ctx.has_session()
}

/// Run (or resume).
pub fn run(ctx: &Ctx) {
    D.with(|d| d.borrow_mut().ctx = Some(*ctx));
    match ctx.status.get_untracked() {
        Status::Running => {}
        Status::Paused if in_workers(ctx) => {
            ctx.status.set(Status::Running);
            if let Some(id) = race_id() {
                go(ctx, id);
            }
        }
        Status::Paused if ctx.has_session() => ctx.run_local(),
        _ => {
            let lanes = ctx.scenario.with_untracked(|s| s.strategies().len());
            if !ensure(workers_for(lanes)) {
                return ctx.run_local();
            }
            // Building the page's mirror is a task of its own, apart from the click.
            ctx.status.set(Status::Running);
            let ctx = *ctx;
            set_timeout(
                move || {
                    if ctx.status.get_untracked() == Status::Running {
                        let t0 = browser::now_ms();
                        begin(&ctx, Then::Go);
                        browser::record_timing("begin", browser::now_ms() - t0);
                    }
                },
                Duration::from_millis(0),
            );
        }
    }
}

/// Lets the race's workers run: at full speed on their own, or paced by the page at the
/// scenario's `view.speed` (evaluations per second per strategy, one Step at a time).
fn go(ctx: &Ctx, id: u64) {
    if ctx.scenario.with_untracked(|s| crate::components::tune::speed_of(&s.view)) == 0 {
        for k in race_workers() {
            post(k, &ToWorker::Go { run: id });
        }
    } else {
        pace(*ctx, id);
    }
}

fn pace(ctx: Ctx, id: u64) {
    if race_id() != Some(id) || ctx.status.get_untracked() != Status::Running {
        return;
    }
    let speed = ctx.scenario.with_untracked(|s| crate::components::tune::speed_of(&s.view));
    if speed == 0 {
        return go(&ctx, id);
    }
    let idle = D.with(|d| {
        let d = d.borrow();
        d.race.as_ref().is_some_and(|r| r.workers.iter().all(|&w| d.slots.get(w).is_some_and(|s| !s.busy)))
    });
    if idle {
        for k in race_workers() {
            post(k, &ToWorker::Step { run: id });
        }
    }
    set_timeout(move || pace(ctx, id), Duration::from_millis((1000 / speed.max(1)) as u64));
}

/// The speed changed: a running race carries on at the new speed.
pub fn speed_changed(ctx: &Ctx) {
    if ctx.status.get_untracked() == Status::Running && in_workers(ctx) {
        pause(ctx);
        run(ctx);
    }
}

/// Pause: the page shows "paused" at once; each worker stops after its current slice and sends
/// its last trials, which are drawn when all have answered.
pub fn pause(ctx: &Ctx) {
    if ctx.status.get_untracked() != Status::Running {
        return;
    }
    if !in_workers(ctx) {
        return ctx.pause_local();
    }
    ctx.status.set(Status::Paused);
    if let Some(id) = race_id() {
        for k in race_workers() {
            post(k, &ToWorker::Pause { run: id });
        }
    }
}

/// Step: one evaluation for every strategy still going; the cards update together once every
/// worker has answered.
pub fn step(ctx: &Ctx) {
    D.with(|d| d.borrow_mut().ctx = Some(*ctx));
    match ctx.status.get_untracked() {
        Status::Running => {}
        Status::Paused if in_workers(ctx) => {
            if let Some(id) = race_id() {
                for k in race_workers() {
                    post(k, &ToWorker::Step { run: id });
                }
            }
        }
        Status::Paused if ctx.has_session() => ctx.step_local(),
        _ => {
            let lanes = ctx.scenario.with_untracked(|s| s.strategies().len());
            if !ensure(workers_for(lanes)) {
                return ctx.step_local();
            }
            begin(ctx, Then::Step);
        }
    }
}

/// Forgets the race (workers drop their runs; late updates are ignored).
pub fn reset() {
    let workers = race_workers();
    D.with(|d| d.borrow_mut().race = None);
    for k in workers {
        post(k, &ToWorker::Drop);
    }
}

/// Starts the lanes in workers. The page's mirror is built when the first worker reports the
/// baseline it priced (so the page never prices it), then `then` runs. With a warm start the
/// mirror is built first (the transfer trials come from it). False when it cannot start.
#[cfg(feature = "page-engine")]
fn begin(ctx: &Ctx, then: Then) -> bool {
    reset();
    let mut warm = Vec::new();
    let mirrored = ctx.warm.get_untracked();
    if mirrored {
        if !ctx.start() {
            return false;
        }
        // Transfer trials the page gave its mirror (the baseline every lane starts from is
        // among them; a worker's run already holds it and skips it).
        warm = ctx.with_session(|s| s.run().lanes().first().map(|l| l.study.trials().iter().take_while(|t| t.warm).cloned().collect()).unwrap_or_default()).unwrap_or_default();
    }
    start_race(ctx, then, warm, mirrored)
}

/// The release page prices nothing: with a warm start, the earlier trials of similar cases
/// (the knowledge base, kept on the page) are chosen for the stage's parameters and metrics
/// (`Question::Shape`), and the workers re-price them (`Run::warm_start`); the mirror adopts
/// the trials the first worker reports.
#[cfg(not(feature = "page-engine"))]
fn begin(ctx: &Ctx, then: Then) -> bool {
    reset();
    if !ctx.warm.get_untracked() {
        return start_race(ctx, then, Vec::new(), false);
    }
    let (ctx, s) = (*ctx, ctx.scenario.get_untracked());
    // The case key reads the model: the engine worker answers it, then the stage's shape.
    super::ask::ask(super::ask::Question::Fingerprint { scenario: Box::new(s.clone()) }, move |fp| {
        let fp = fp.and_then(|a| match a {
            super::ask::Answer::Fingerprint { fingerprint } => Ok(fingerprint),
            other => Err(format!("unexpected answer {other:?}")),
        });
        warm_from_cases(ctx, then, s, fp);
    });
    true
}

/// The warm start's second half (`begin`): the stage's shape, then the earlier trials.
#[cfg(not(feature = "page-engine"))]
fn warm_from_cases(ctx: Ctx, then: Then, s: tunelab_scenario::Scenario, fp: Result<tunelab_scenario::knowledge::Fingerprint, String>) {
    super::ask::shape(s, move |shape| {
        let earlier = match (shape, fp) {
            (Ok(sh), Ok(fp)) => match tunelab_search::Space::new(sh.params, &[]) {
                Ok(space) => crate::kb_store::load(ctx).warm_trials(&fp, &space, &sh.metrics, crate::state::WARM_LIMIT),
                Err(e) => return ctx.warm_note.set(format!("Warm start skipped: {e}")),
            },
            (Err(e), _) | (_, Err(e)) => {
                ctx.warm_note.set(format!("Warm start skipped: {e}"));
                Vec::new()
            }
        };
        if ctx.status.get_untracked() == Status::Running || matches!(then, Then::Step) {
            start_race(&ctx, then, earlier, false);
        }
    });
}

/// Starts the workers of a race; `warm`: transfer trials every lane starts from; `mirrored`:
/// the page's mirror is already built.
fn start_race(ctx: &Ctx, then: Then, warm: Vec<tunelab_search::Trial>, mirrored: bool) -> bool {
    let scenario = ctx.scenario.get_untracked();
    let lanes = scenario.strategies().len();
    let n = workers_for(lanes).max(1);
    if !ensure(n) {
        return false;
    }
    let id = D.with(|d| {
        let mut d = d.borrow_mut();
        d.next_id += 1;
        let id = d.next_id;
        d.race = Some(Race { id, then, mirrored, workers: (0..n).collect(), started: browser::now_ms(), busy_ms: 0.0 });
        id
    });
    let cache = crate::components::landscape::bytes_for(&scenario);
    for k in 0..n {
        let owned: Vec<usize> = (0..lanes).filter(|l| l % n == k).collect();
        if let Some((key, bytes)) = &cache {
            post_bytes(k, key, bytes);
        }
        post(k, &ToWorker::Start { run: id, lanes: owned, scenario: Box::new(scenario.clone()), warm: warm.clone() });
    }
    browser::set_global("__tunelabEngine", &format!("workers:{n}"));
    if mirrored {
        act(ctx, id, then);
    }
    true
}

/// Runs or steps a race whose mirror is ready.
fn act(ctx: &Ctx, id: u64, then: Then) {
    match then {
        Then::Go if ctx.status.get_untracked() == Status::Running => go(ctx, id),
        Then::Go => {}
        Then::Step => {
            for k in race_workers() {
                post(k, &ToWorker::Step { run: id });
            }
        }
    }
}

fn on_worker_error(k: usize, msg: String) {
    let ctx = D.with(|d| {
        let mut d = d.borrow_mut();
        let in_race = d.race.as_ref().is_some_and(|r| r.workers.contains(&k));
        if !d.slots.get(k).is_some_and(|s| s.ready) {
            // It never loaded: use the page from now on.
            d.unavailable = Some(format!("the engine worker could not load ({msg})"));
        }
        if in_race {
            d.race = None;
            d.ctx
        } else {
            None
        }
    });
    if let Some(ctx) = ctx {
        ctx.fail(format!("The engine worker stopped: {msg}. Press Run to try again (on this page)."));
        ctx.reset_local();
    }
}

fn on_message(k: usize, text: &str) {
    let msg = match FromWorker::from_text(text) {
        Ok(m) => m,
        Err(e) => return on_worker_error(k, e),
    };
    let Some(ctx) = D.with(|d| d.borrow().ctx) else { return };
    match msg {
        FromWorker::Ready => {
            let queued = D.with(|d| {
                let mut d = d.borrow_mut();
                d.slots.get_mut(k).map(|s| {
                    s.ready = true;
                    std::mem::take(&mut s.queue).into_iter().map(|t| (s.worker.clone(), t)).collect::<Vec<_>>()
                })
            });
            for (w, t) in queued.unwrap_or_default() {
                let _ = w.post_message(&t);
            }
        }
        FromWorker::Started { run, baseline, shape, transferred } => {
            let pending = D.with(|d| {
                let mut d = d.borrow_mut();
                match d.race.as_mut() {
                    Some(r) if r.id == run && !r.mirrored => {
                        r.mirrored = true;
                        Some(r.then)
                    }
                    _ => None,
                }
            });
            if let Some(then) = pending {
                let baseline: tunelab_search::Outcome = baseline.into();
                if ctx.start_with(move |s| crate::session::Session::mirror(s, baseline, shape.map(|b| *b))) {
                    // A warm start in the workers: the mirror's lanes start as theirs did.
                    if ctx.warm.get_untracked() {
                        let kept = ctx.with_session_mut(|s| s.adopt_transferred(transferred));
                        match kept {
                            Some(Ok(kept)) => ctx.warm_note.set(format!("Warm start: {kept} earlier trials from similar cases given to each strategy.")),
                            Some(Err(e)) => ctx.warm_note.set(format!("Warm start skipped: {e}")),
                            None => {}
                        }
                    }
                    act(&ctx, run, then);
                } else {
                    reset();
                }
            }
        }
        // Compare chips and the views' questions have workers of their own (`compare`, `ask`).
        FromWorker::Tuned { .. } | FromWorker::Heatmap { .. } | FromWorker::Detail { .. } | FromWorker::Answer { .. } => {}
        FromWorker::Error { run, message } => {
            if race_id() == Some(run) {
                D.with(|d| d.borrow_mut().race = None);
                ctx.fail(format!("This scenario cannot run: {message}"));
                ctx.reset_local();
            }
        }
        FromWorker::Update { lanes } => {
            let Some(id) = race_id() else { return };
            if lanes.first().is_none_or(|u| u.run != id) {
                return;
            }
            let idle = lanes.iter().all(|u| u.idle);
            let busy = lanes.first().map(|u| u.busy_ms).unwrap_or(0.0);
            let t0 = browser::now_ms();
            let absorbed = ctx.with_session_mut(|s| lanes.iter().try_for_each(|u| s.absorb(u)));
            browser::record_timing("absorb", browser::now_ms() - t0);
            if let Some(Err(e)) = absorbed {
                D.with(|d| d.borrow_mut().race = None);
                ctx.fail(format!("The engine worker sent trials the page could not follow: {e}"));
                return ctx.reset_local();
            }
            let all_idle = D.with(|d| {
                let mut d = d.borrow_mut();
                if let Some(r) = d.race.as_mut() {
                    r.busy_ms += busy;
                }
                if idle {
                    if let Some(s) = d.slots.get_mut(k) {
                        s.busy = false;
                    }
                }
                let workers = d.race.as_ref().map(|r| r.workers.clone()).unwrap_or_default();
                workers.iter().all(|&w| d.slots.get(w).is_some_and(|s| !s.busy))
            });
            let done = ctx.with_session(|s| s.done()).unwrap_or(false);
            match ctx.status.get_untracked() {
                Status::Running if done && all_idle => finish(&ctx),
                Status::Running => redraw_soon(&ctx),
                _ if all_idle => {
                    ctx.publish();
                    ctx.status.set(if done { Status::Done } else { Status::Paused });
                }
                _ => {}
            }
        }
    }
}

fn finish(ctx: &Ctx) {
    ctx.publish();
    let t0 = browser::now_ms();
    ctx.status.set(Status::Done);
    browser::record_timing("done", browser::now_ms() - t0);
    D.with(|d| {
        if let Some(r) = d.borrow().race.as_ref() {
            let wall = browser::now_ms() - r.started;
            browser::set_global("__tunelabLastRace", &format!("{{\"wall_ms\":{wall:.1},\"workers\":{},\"busy_ms\":{:.1}}}", r.workers.len(), r.busy_ms));
        }
    });
}

/// Redraws in a task of its own, at most every `REDRAW_MS`.
fn redraw_soon(ctx: &Ctx) {
    if D.with(|d| std::mem::replace(&mut d.borrow_mut().redraw_queued, true)) {
        return;
    }
    let wait = (REDRAW_MS - (browser::now_ms() - ctx.last_redraw())).max(0.0);
    let ctx = *ctx;
    set_timeout(
        move || {
            D.with(|d| d.borrow_mut().redraw_queued = false);
            if ctx.status.get_untracked() == Status::Running && race_id().is_some() {
                ctx.publish();
                ctx.set_last_redraw(browser::now_ms());
            }
        },
        Duration::from_millis(wait as u64),
    );
}



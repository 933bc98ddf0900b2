//! "Compare chips" off the page's thread: every bundled chip is tuned in a Web Worker (a small
//! pool of its own, one worker per spare core, apart from the race's workers), each answering
//! `Tuned` with its row (`tunelab_scenario::chips::chip_row`, what `tunelab chips` runs); rows
//! appear as they come. Without workers the rows are computed on the page, one chip per task.

use super::protocol::{FromWorker, ToWorker};
use crate::browser;
use leptos::prelude::*;
use std::cell::RefCell;
#[cfg(feature = "page-engine")]
use std::time::Duration;
use tunelab_scenario::chips::ChipRow;
use tunelab_scenario::Scenario;
use tunelab_search::Config;

/// A comparison as the page shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub id: u64,
    /// The scenario's own chip.
    pub home: String,
    /// The scenario's title when the comparison started (model, chip, stage, goal).
    pub title: String,
    /// Evaluations per strategy on each chip, and the scenario's own budget.
    pub budget: usize,
    pub scenario_budget: usize,
    /// The goal is maximised.
    pub maximise: bool,
    /// The current best every study starts from and every row prices (None before a run).
    pub port: Option<String>,
    /// One row per bundled chip, in order; None while that chip is being tuned.
    pub rows: Vec<(String, Option<ChipRow>)>,
    pub started: f64,
    /// Wall time until the last row came in.
    pub wall_ms: Option<f64>,
    /// "workers:N" or "page".
    pub engine: String,
}

type OnMsg = wasm_bindgen::closure::Closure<dyn FnMut(web_sys::MessageEvent)>;

struct PoolWorker {
    worker: web_sys::Worker,
    ready: bool,
    queue: Vec<String>,
    _closures: Vec<OnMsg>,
}

#[derive(Default)]
struct Pool {
    id: u64,
    workers: Vec<PoolWorker>,
    out: Option<RwSignal<Option<Comparison>>>,
}

thread_local! {
    static POOL: RefCell<Pool> = RefCell::new(Pool::default());
}

/// Stops a comparison in progress (its workers are terminated; late rows are ignored).
pub fn cancel() {
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        for w in p.workers.drain(..) {
            w.worker.terminate();
        }
        p.id += 1;
    });
}

/// Starts comparing: every bundled chip tuned with `budget` evaluations per strategy, each study
/// starting from `port`; `out` fills in as rows arrive.
pub fn start(scenario: Scenario, budget: usize, port: Option<Config>, port_text: Option<String>, out: RwSignal<Option<Comparison>>) {
    cancel();
    let chips: Vec<String> = tunelab_sim::device::bundled_names().into_iter().map(String::from).collect();
    let id = POOL.with(|p| {
        let mut p = p.borrow_mut();
        p.out = Some(out);
        p.id
    });
    let budget = tunelab_scenario::chips::budget_for(&scenario, budget);
    let cores = web_sys::window().map(|w| w.navigator().hardware_concurrency() as usize).unwrap_or(2);
    let n = chips.len().min(cores.saturating_sub(1).max(1)).min(super::driver::MAX_WORKERS);
    let mut cmp = Comparison {
        id,
        home: tunelab_scenario::chips::home_chip(&scenario),
        title: tunelab_scenario::context::title(&scenario),
        budget,
        scenario_budget: scenario.budget,
        maximise: tunelab_scenario::context::goal(&scenario).1,
        port: port_text,
        rows: chips.iter().map(|c| (c.clone(), None)).collect(),
        started: browser::now_ms(),
        wall_ms: None,
        engine: format!("workers:{n}"),
    };
    let mut spawned = Vec::new();
    for _ in 0..n {
        match spawn(id) {
            Ok(w) => spawned.push(w),
            Err(_) => break,
        }
    }
    // The release page prices nothing itself (no feature `page-engine`): it says why instead.
    #[cfg(not(feature = "page-engine"))]
    if spawned.is_empty() {
        cmp.engine = "none: no engine worker could be started, and this page compares chips only in workers".into();
        out.set(Some(cmp));
        return;
    }
    #[cfg(feature = "page-engine")]
    if spawned.is_empty() {
        cmp.engine = "page".into();
        out.set(Some(cmp));
        return on_page(id, scenario, budget, port, chips, 0, out);
    }
    let n = spawned.len();
    for (j, chip) in chips.iter().enumerate() {
        let m = ToWorker::Tune { run: id, scenario: Box::new(scenario.clone()), chip: chip.clone(), budget, port: port.clone() };
        spawned[j % n].queue.push(m.to_text());
    }
    POOL.with(|p| p.borrow_mut().workers = spawned);
    out.set(Some(cmp));
}

fn spawn(id: u64) -> Result<PoolWorker, String> {
    use wasm_bindgen::JsCast;
    let worker = super::driver::engine_worker()?;
    let w2 = worker.clone();
    let on_msg = OnMsg::new(move |e: web_sys::MessageEvent| {
        if let Some(t) = e.data().as_string() {
            on_message(id, &w2, &t);
        }
    });
    worker.set_onmessage(Some(on_msg.as_ref().unchecked_ref()));
    let w3 = worker.clone();
    let on_err = OnMsg::new(move |e: web_sys::MessageEvent| {
        let msg = js_sys::Reflect::get(&e, &"message".into()).ok().and_then(|m| m.as_string()).unwrap_or_else(|| "it stopped".into());
        failed(id, &w3, msg);
    });
    worker.set_onerror(Some(on_err.as_ref().unchecked_ref()));
    Ok(PoolWorker { worker, ready: false, queue: Vec::new(), _closures: vec![on_msg, on_err] })
}

fn out_of(id: u64) -> Option<RwSignal<Option<Comparison>>> {
    POOL.with(|p| {
        let p = p.borrow();
        (p.id == id).then_some(p.out).flatten()
    })
}

fn on_message(id: u64, worker: &web_sys::Worker, text: &str) {
    let Some(out) = out_of(id) else { return };
    match FromWorker::from_text(text) {
        Ok(FromWorker::Ready) => {
            let queued = POOL.with(|p| {
                let mut p = p.borrow_mut();
                p.workers.iter_mut().find(|w| &w.worker == worker).map(|w| {
                    w.ready = true;
                    std::mem::take(&mut w.queue)
                })
            });
            for t in queued.unwrap_or_default() {
                let _ = worker.post_message(&wasm_bindgen::JsValue::from_str(&t));
            }
        }
        Ok(FromWorker::Tuned { run, row }) if run == id => fill(out, *row),
        Ok(FromWorker::Error { message, .. }) => failed(id, worker, message),
        Ok(_) => {}
        Err(e) => failed(id, worker, e),
    }
}

/// A worker stopped: its chips still waiting are marked with the reason.
fn failed(id: u64, _worker: &web_sys::Worker, msg: String) {
    let Some(out) = out_of(id) else { return };
    out.update(|c| {
        if let Some(c) = c {
            for (chip, r) in c.rows.iter_mut().filter(|(_, r)| r.is_none()) {
                *r = Some(error_row(chip, c.budget, format!("the worker stopped: {msg}")));
            }
        }
    });
    finish_if_complete(out);
}

fn error_row(chip: &str, budget: usize, e: String) -> ChipRow {
    ChipRow { chip: chip.into(), title: String::new(), budget, evaluations: 0, best_strategy: None, best_is_ported: false, best_config: None, best: None, metrics: Vec::new(), ported: None, error: Some(e) }
}

fn fill(out: RwSignal<Option<Comparison>>, row: ChipRow) {
    out.update(|c| {
        if let Some(c) = c {
            if let Some(slot) = c.rows.iter_mut().find(|(chip, _)| *chip == row.chip) {
                slot.1 = Some(row);
            }
        }
    });
    finish_if_complete(out);
}

fn finish_if_complete(out: RwSignal<Option<Comparison>>) {
    let done = out.with_untracked(|c| c.as_ref().is_some_and(|c| c.wall_ms.is_none() && c.rows.iter().all(|r| r.1.is_some())));
    if done {
        out.update(|c| {
            if let Some(c) = c {
                c.wall_ms = Some(browser::now_ms() - c.started);
            }
        });
        // The pool's work is done: free its workers (a new comparison starts fresh ones).
        POOL.with(|p| {
            for w in p.borrow_mut().workers.drain(..) {
                w.worker.terminate();
            }
        });
    }
}

/// Without workers: one chip per task on the page.
#[cfg(feature = "page-engine")]
fn on_page(id: u64, scenario: Scenario, budget: usize, port: Option<Config>, chips: Vec<String>, next: usize, out: RwSignal<Option<Comparison>>) {
    if next >= chips.len() || out_of(id).is_none() {
        return;
    }
    set_timeout(
        move || {
            if out_of(id).is_none() {
                return;
            }
            fill(out, tunelab_scenario::chips::chip_row(&scenario, &chips[next], budget, port.as_ref()));
            on_page(id, scenario, budget, port, chips, next + 1, out);
        },
        Duration::from_millis(0),
    );
}

#[cfg(test)]
mod tests {
    use super::super::lane::WorkerState;
    use super::*;

    /// A worker answers `Tune` with the row `tunelab chips` computes (through the JSON protocol).
    #[test]
    fn a_worker_answers_tune_with_the_cli_row() {
        let mut s = tunelab_scenario::bundled_scenario("llama2-7b-910B2-deployment").unwrap();
        s.budget = 10;
        let port = tunelab_scenario::chips::current_best(&s).unwrap();
        let m = ToWorker::Tune { run: 3, scenario: Box::new(s.clone()), chip: "910B4".into(), budget: 5, port: port.clone() };
        let mut w = WorkerState::default();
        let replies = w.handle(ToWorker::from_text(&m.to_text()).unwrap(), 0.0);
        assert_eq!(replies.len(), 1);
        let Ok(FromWorker::Tuned { run: 3, row }) = FromWorker::from_text(&replies[0].to_text()) else { panic!("{:?}", replies[0]) };
        let mut want = tunelab_scenario::chips::chip_row(&s, "910B4", 5, port.as_ref());
        want.best = None; // not sent: the page shows the described configuration
        assert_eq!(*row, want);
        assert!(row.title.contains("910B4") && row.budget == 5);
    }
}

//! The views' heavy questions, answered off the page's thread: Explore's heat map prices a grid
//! of configurations (hundreds of evaluations; a deployment stage's baseline alone costs 100+ ms),
//! and a point's detail prices one. One engine worker of its own answers them in order, with the
//! same functions the page called before (`tunelab_scenario::explore::{heatmap, point_detail}`),
//! so the numbers are the same; where workers are unavailable the page computes them itself.

use super::protocol::{FromWorker, ToWorker};
pub use tunelab_engine::questions::{Answer, Question};
use std::cell::RefCell;
use std::collections::BTreeMap;
use tunelab_scenario::explore::{HeatMap, PointDetail};
use tunelab_scenario::Scenario;
use tunelab_search::Config;

type OnMsg = wasm_bindgen::closure::Closure<dyn FnMut(web_sys::MessageEvent)>;
type Reply = Box<dyn FnOnce(FromWorker)>;

#[derive(Default)]
struct Asker {
    worker: Option<web_sys::Worker>,
    ready: bool,
    /// Messages held until the worker's module has loaded.
    queue: Vec<String>,
    next: u64,
    waiting: BTreeMap<u64, Reply>,
    /// Why no worker can be used (then the page answers).
    unavailable: Option<String>,
    _closures: Vec<OnMsg>,
}

thread_local! {
    static A: RefCell<Asker> = RefCell::new(Asker::default());
}

/// The heat map of `s`'s primary metric over `x` and `y`; `done` gets it when it is ready.
pub fn heatmap(s: Scenario, x: String, y: String, done: impl FnOnce(Result<HeatMap, String>) + 'static) {
    #[cfg(feature = "page-engine")]
    let page = {
        let (s2, x2, y2) = (s.clone(), x.clone(), y.clone());
        move || tunelab_scenario::explore::heatmap(&s2, &x2, &y2, None)
    };
    #[cfg(not(feature = "page-engine"))]
    let page = no_page_engine;
    let sent = send(
        |run| ToWorker::Heatmap { run, scenario: Box::new(s), x, y },
        Box::new(move |m| match m {
            FromWorker::Heatmap { map, .. } => done(map.map(|m| *m)),
            FromWorker::Error { message, .. } => done(Err(message)),
            _ => {}
        }),
    );
    if let Err(done) = sent {
        done(FromWorker::Heatmap { run: 0, map: page().map(Box::new) });
    }
}

/// A configuration's detail (breakdown by engine, roofline place) in `s`'s stage.
pub fn detail(s: Scenario, config: Config, done: impl FnOnce(Result<PointDetail, String>) + 'static) {
    #[cfg(feature = "page-engine")]
    let page = {
        let (s2, c2) = (s.clone(), config.clone());
        move || tunelab_scenario::explore::point_detail(&s2, &c2)
    };
    #[cfg(not(feature = "page-engine"))]
    let page = no_page_engine;
    let sent = send(
        |run| ToWorker::Detail { run, scenario: Box::new(s), config },
        Box::new(move |m| match m {
            FromWorker::Detail { detail, .. } => done(detail.map(|d| *d)),
            FromWorker::Error { message, .. } => done(Err(message)),
            _ => {}
        }),
    );
    if let Err(done) = sent {
        done(FromWorker::Detail { run: 0, detail: page().map(Box::new) });
    }
}

/// Without the page engine (the release page) the page answers nothing itself: says why.
#[cfg(not(feature = "page-engine"))]
fn no_page_engine<T>() -> Result<T, String> {
    let why = A.with(|a| a.borrow().unavailable.clone()).unwrap_or_default();
    Err(format!("this page computes in an engine worker and none could be used ({why})"))
}

/// A view's question (`tunelab_engine::questions`); `done` gets the answer when it is ready.
/// The engine worker answers; where the page may compute (feature `page-engine`) and no
/// worker can be used, the page answers with the very same function.
pub fn ask(question: Question, done: impl FnOnce(Result<Answer, String>) + 'static) {
    #[cfg(feature = "page-engine")]
    let page = {
        let q = question.clone();
        move || tunelab_engine::questions::answer(q)
    };
    #[cfg(not(feature = "page-engine"))]
    let page = no_page_engine;
    let sent = send(
        |run| ToWorker::Ask { run, question: Box::new(question) },
        Box::new(move |m| match m {
            FromWorker::Answer { answer, .. } => done(answer.map(|a| *a)),
            FromWorker::Error { message, .. } => done(Err(message)),
            _ => {}
        }),
    );
    if let Err(done) = sent {
        done(FromWorker::Answer { run: 0, answer: page().map(Box::new) });
    }
}

/// The stage's shape (`Question::Shape`): its parameters, metrics and baseline. A landscape the
/// page loaded (a Kernel Tuner cache's bytes are on the page) is read here, a lookup.
pub fn shape(s: Scenario, done: impl FnOnce(Result<tunelab_scenario::run::RunShape, String>) + 'static) {
    if let Some(l) = crate::components::landscape::loaded_for(&s) {
        return done(tunelab_scenario::stages::setup_with_landscape(&s, l).map(|st| tunelab_scenario::run::RunShape {
            params: st.space.params().to_vec(),
            metrics: st.metrics,
            baseline: st.baseline,
            notes: st.notes,
            focus: st.focus,
            focus_budget: st.focus_budget,
        }));
    }
    ask(Question::Shape { scenario: Box::new(s) }, move |r| {
        done(r.and_then(|a| match a {
            Answer::Shape { shape } => Ok(shape),
            other => Err(format!("unexpected answer {other:?}")),
        }))
    });
}

/// Sends a question to the worker (started on first use); gives `reply` back when no worker can
/// be used, so the caller answers on the page.
fn send(make: impl FnOnce(u64) -> ToWorker, reply: Reply) -> Result<(), Reply> {
    // Workers turned off (`localStorage["tunelab.workers"] = 0`, the component tests): the page
    // answers, where it may.
    #[cfg(feature = "page-engine")]
    if super::driver::workers_for(1) == 0 {
        return Err(reply);
    }
    if A.with(|a| a.borrow().worker.is_none() && a.borrow().unavailable.is_none()) {
        if let Err(e) = spawn() {
            A.with(|a| a.borrow_mut().unavailable = Some(e));
        }
    }
    A.with(|a| {
        let mut a = a.borrow_mut();
        let Some(w) = a.worker.clone() else { return Err(reply) };
        a.next += 1;
        let run = a.next;
        a.waiting.insert(run, reply);
        let text = make(run).to_text();
        if a.ready {
            let _ = w.post_message(&wasm_bindgen::JsValue::from_str(&text));
        } else {
            a.queue.push(text);
        }
        Ok(())
    })
}

fn spawn() -> Result<(), String> {
    use wasm_bindgen::JsCast;
    let worker = super::driver::engine_worker()?;
    let on_msg = OnMsg::new(move |e: web_sys::MessageEvent| {
        if let Some(t) = e.data().as_string() {
            on_message(&t);
        }
    });
    worker.set_onmessage(Some(on_msg.as_ref().unchecked_ref()));
    let on_err = OnMsg::new(move |e: web_sys::MessageEvent| {
        let msg = js_sys::Reflect::get(&e, &"message".into()).ok().and_then(|m| m.as_string()).unwrap_or_else(|| "it stopped".into());
        failed(msg);
    });
    worker.set_onerror(Some(on_err.as_ref().unchecked_ref()));
    A.with(|a| {
        let mut a = a.borrow_mut();
        a.worker = Some(worker);
        a._closures = vec![on_msg, on_err];
    });
    Ok(())
}

fn on_message(text: &str) {
    let msg = match FromWorker::from_text(text) {
        Ok(m) => m,
        Err(e) => return failed(e),
    };
    let run = match &msg {
        FromWorker::Ready => {
            let (w, queued) = A.with(|a| {
                let mut a = a.borrow_mut();
                a.ready = true;
                (a.worker.clone(), std::mem::take(&mut a.queue))
            });
            for t in queued {
                if let Some(w) = &w {
                    let _ = w.post_message(&wasm_bindgen::JsValue::from_str(&t));
                }
            }
            return;
        }
        FromWorker::Heatmap { run, .. } | FromWorker::Detail { run, .. } | FromWorker::Answer { run, .. } | FromWorker::Error { run, .. } => *run,
        _ => return,
    };
    // Taken out before it runs: a reply may ask again.
    if let Some(reply) = A.with(|a| a.borrow_mut().waiting.remove(&run)) {
        let t0 = crate::browser::now_ms();
        reply(msg);
        crate::browser::record_timing("answer", crate::browser::now_ms() - t0);
    }
}

/// The worker stopped: every question still waiting is answered with the reason, and the next
/// one starts a fresh worker.
fn failed(msg: String) {
    let waiting = A.with(|a| {
        let mut a = a.borrow_mut();
        if let Some(w) = a.worker.take() {
            w.terminate();
        }
        a.ready = false;
        a.queue.clear();
        std::mem::take(&mut a.waiting)
    });
    for (run, reply) in waiting {
        reply(FromWorker::Error { run, message: format!("the engine worker stopped: {msg}") });
    }
}

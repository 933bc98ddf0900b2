//! The engine worker's loop (WebAssembly only): messages from the page are handled at once;
//! while running, the lane steps in slices of `lane::SLICE_MS`, and between slices the worker
//! yields through a MessageChannel (a zero-delay task, unlike a clamped `setTimeout`), so a
//! Pause or Step from the page is read within one slice.

use super::lane::WorkerState;
use super::protocol::{FromWorker, ToWorker};
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageChannel, MessageEvent};

thread_local! {
    static STATE: RefCell<WorkerState> = RefCell::new(WorkerState::default());
    static SCOPE: RefCell<Option<DedicatedWorkerGlobalScope>> = const { RefCell::new(None) };
    static CHANNEL: RefCell<Option<MessageChannel>> = const { RefCell::new(None) };
    /// A tick is already queued on the channel.
    static QUEUED: RefCell<bool> = const { RefCell::new(false) };
}

fn now() -> f64 {
    SCOPE.with(|s| s.borrow().as_ref().and_then(|s| s.performance()).map(|p| p.now()).unwrap_or(0.0))
}

fn send(m: &FromWorker) {
    SCOPE.with(|s| {
        if let Some(s) = s.borrow().as_ref() {
            let _ = s.post_message(&JsValue::from_str(&m.to_text()));
        }
    });
}

fn queue_tick() {
    let already = QUEUED.with(|q| std::mem::replace(&mut *q.borrow_mut(), true));
    if !already {
        CHANNEL.with(|c| {
            if let Some(c) = c.borrow().as_ref() {
                let _ = c.port2().post_message(&JsValue::NULL);
            }
        });
    }
}

fn tick() {
    QUEUED.with(|q| *q.borrow_mut() = false);
    let (reply, running) = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let r = s.tick(&now);
        (r, s.running)
    });
    if let Some(r) = reply {
        send(&r);
    }
    if running {
        queue_tick();
    }
}

fn on_message(text: String) {
    let replies = match ToWorker::from_text(&text) {
        Ok(m) => STATE.with(|s| s.borrow_mut().handle(m, now())),
        Err(message) => vec![FromWorker::Error { run: 0, message }],
    };
    for r in &replies {
        send(r);
    }
    if STATE.with(|s| s.borrow().running) {
        queue_tick();
    }
}

/// Starts the worker's loop; called by the worker binary's `main`.
pub fn start() {
    console_error_panic_hook::set_once();
    let Ok(scope) = js_sys::global().dyn_into::<DedicatedWorkerGlobalScope>() else { return };
    let Ok(channel) = MessageChannel::new() else { return };
    let on_tick = Closure::<dyn FnMut(MessageEvent)>::new(move |_| tick());
    channel.port1().set_onmessage(Some(on_tick.as_ref().unchecked_ref()));
    on_tick.forget();
    let on_msg = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        if let Some(t) = e.data().as_string() {
            on_message(t);
        } else if let Some(a) = e.data().dyn_ref::<js_sys::Uint8Array>() {
            // A Kernel Tuner cache's bytes, sent before the Start that needs them.
            let bytes = a.to_vec();
            STATE.with(|s| s.borrow_mut().set_cache_bytes(bytes));
        }
    });
    scope.set_onmessage(Some(on_msg.as_ref().unchecked_ref()));
    on_msg.forget();
    SCOPE.with(|s| *s.borrow_mut() = Some(scope.clone()));
    CHANNEL.with(|c| *c.borrow_mut() = Some(channel));
    // Tell the page this worker is ready to take messages.
    send(&FromWorker::Ready);
}

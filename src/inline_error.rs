//! Errors next to what caused them. The page remembers the control a person last changed,
//! clicked or dropped a file on; an error reported soon after that action is shown right below
//! that control (its label or row), scrolled into view, instead of in the banner at the top. An
//! error no action caused (a link read at load, a worker that stopped on its own) stays in the
//! banner: that is what the banner is for, page-wide problems.
//!
//! The message is plain DOM the app owns (never markup from the message: it is set as text), with
//! the same test hook as the banner (`data-testid="error"`), so at most one error shows at a time.
//! A new action clears it: a stale error never sits beside a control that is fine now.

use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// How long after an action an error is still taken to be its consequence (a worker's answer
/// to Run arrives later than the click).
const ACTION_MS: f64 = 20_000.0;

/// What holds the control an error goes under (the first match from the control outwards).
const HOLDER: &str = "label, .row, .drop, .toolbar-buttons, .tl-chart-box, .pin-target, .pin-panel, fieldset";

thread_local! {
    static LAST: RefCell<Option<(web_sys::Element, f64)>> = const { RefCell::new(None) };
}

fn document() -> Option<web_sys::Document> {
    web_sys::window().and_then(|w| w.document())
}

/// Removes the error shown beside a control, if any.
pub fn clear() {
    if !cfg!(target_arch = "wasm32") {
        return;
    }
    if let Some(doc) = document() {
        if let Ok(list) = doc.query_selector_all(".inline-error") {
            for i in 0..list.length() {
                if let Some(n) = list.item(i).and_then(|n| n.dyn_into::<web_sys::Element>().ok()) {
                    n.remove();
                }
            }
        }
    }
}

/// Listens (capture phase, before the app's own handlers) for the actions an error can follow.
pub fn install() {
    let Some(doc) = document() else { return };
    let f = Closure::<dyn Fn(web_sys::Event)>::new(move |ev: web_sys::Event| {
        let Some(el) = ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else { return };
        // A click inside the error itself (its Dismiss) is not a new action.
        if el.closest(".inline-error").ok().flatten().is_some() {
            return;
        }
        clear();
        LAST.with(|l| *l.borrow_mut() = Some((el, crate::browser::now_ms())));
    });
    for kind in ["change", "click", "drop"] {
        let _ = doc.add_event_listener_with_callback_and_bool(kind, f.as_ref().unchecked_ref(), true);
    }
    f.forget();
}

/// Shows `msg` under the control of the last action when there was one recently and it is
/// still on the page; false when the banner should show it instead.
pub fn show_near_last_action(msg: &str) -> bool {
    if !cfg!(target_arch = "wasm32") {
        return false;
    }
    let Some((el, at)) = LAST.with(|l| l.borrow().clone()) else { return false };
    if crate::browser::now_ms() - at > ACTION_MS || !el.is_connected() {
        return false;
    }
    let Some(doc) = document() else { return false };
    let holder = el.closest(HOLDER).ok().flatten().unwrap_or(el);
    let Ok(div) = doc.create_element("div") else { return false };
    clear();
    div.set_class_name("error inline-error");
    let _ = div.set_attribute("role", "alert");
    let _ = div.set_attribute("data-testid", "error");
    let Ok(span) = doc.create_element("span") else { return false };
    span.set_text_content(Some(msg));
    let Ok(button) = doc.create_element("button") else { return false };
    button.set_class_name("dismiss");
    button.set_text_content(Some("Dismiss"));
    let gone = div.clone();
    let dismiss = Closure::<dyn Fn()>::new(move || gone.remove());
    let _ = button.add_event_listener_with_callback("click", dismiss.as_ref().unchecked_ref());
    dismiss.forget();
    let _ = div.append_child(&span);
    let _ = div.append_child(&button);
    if holder.insert_adjacent_element("afterend", &div).is_err() {
        return false;
    }
    // Into view without jumping the page when it already is.
    let r = div.get_bounding_client_rect();
    let h = web_sys::window().and_then(|w| w.inner_height().ok()).and_then(|v| v.as_f64()).unwrap_or(0.0);
    if r.top() < 0.0 || r.bottom() > h {
        div.scroll_into_view_with_bool(false);
    }
    true
}

//! Component tests in headless Chromium: mount the real app, click, and read the DOM.
//! Run with `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
//! CHROMEDRIVER=/usr/bin/chromedriver cargo test --target wasm32-unknown-unknown --test components`.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn document() -> web_sys::Document {
    web_sys::window().unwrap().document().unwrap()
}

fn by_testid(root: &web_sys::Element, id: &str) -> Option<web_sys::Element> {
    root.query_selector(&format!("[data-testid='{id}']")).unwrap()
}

async fn sleep(ms: i32) {
    let p = js_sys::Promise::new(&mut |resolve, _| {
        web_sys::window().unwrap().set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms).unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(p).await.unwrap();
}

fn mount_fresh(hash: &str) -> web_sys::HtmlElement {
    let w = web_sys::window().unwrap();
    // The test runner serves this test's module only, not the engine module the Web Workers
    // load (crates/engine, built by Trunk): runs step on the page, as the app does wherever
    // workers are unavailable. The worker path is covered end to end on the built page.
    w.local_storage().unwrap().unwrap().set_item("tunelab.workers", "0").unwrap();
    w.history().unwrap().replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&format!("#{hash}"))).unwrap();
    let root: web_sys::HtmlElement = document().create_element("div").unwrap().unchecked_into();
    document().body().unwrap().append_child(&root).unwrap();
    let handle = leptos::mount::mount_to(root.clone(), tunelab::components::App);
    handle.forget();
    root
}

#[wasm_bindgen_test]
async fn run_button_tunes_to_done_and_shows_best() {
    let mut s = tunelab::url_state::default_scenario();
    s.budget = 10;
    let root = mount_fresh(&tunelab::url_state::write(&s));
    leptos::task::tick().await;
    let status = by_testid(&root, "status").expect("status hook");
    assert_eq!(status.text_content().unwrap(), "idle");
    assert!(by_testid(&root, "error").is_none(), "no error banner on a good link");
    let run: web_sys::HtmlElement = by_testid(&root, "run").expect("run hook").unchecked_into();
    run.click();
    for _ in 0..600 {
        if status.text_content().unwrap() == "done" {
            break;
        }
        sleep(20).await;
    }
    assert_eq!(status.text_content().unwrap(), "done");
    // The text is rounded for reading; `data-value` holds the exact number.
    let best = by_testid(&root, "best").unwrap().get_attribute("data-value").unwrap_or_default();
    // The DOM shows exactly what the engine computes for the same scenario.
    let mut run = tunelab_scenario::Run::new(&s).unwrap();
    run.run_to_end();
    let want = run.overall_best().and_then(|(_, t)| t.value()).map(tunelab_scenario::format_best).unwrap();
    assert_eq!(best, want);
    root.remove();
}

#[wasm_bindgen_test]
async fn hostile_fragment_shows_the_error_banner_and_the_page_still_works() {
    let root = mount_fresh("<img src=x onerror=alert(1)>");
    leptos::task::tick().await;
    let banner = by_testid(&root, "error").expect("error banner");
    assert!(banner.text_content().unwrap().contains("could not be read"));
    assert!(root.query_selector("img").unwrap().is_none(), "no markup from the link");
    let step: web_sys::HtmlElement = by_testid(&root, "step").unwrap().unchecked_into();
    step.click();
    leptos::task::tick().await;
    assert_eq!(by_testid(&root, "status").unwrap().text_content().unwrap(), "paused");
    root.remove();
}

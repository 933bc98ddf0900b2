//! Chart components in headless Chromium: heat-map clicks and keys reach `on_select`, the
//! chosen cell keeps focus across the redraw, and the progress bar's ARIA values follow.
//! Run: `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
//! CHROMEDRIVER=/usr/bin/chromedriver cargo test --target wasm32-unknown-unknown --lib charts`.

use leptos::prelude::*;
use leptos::wasm_bindgen::{JsCast, JsValue};
use leptos::web_sys;
use wasm_bindgen_test::*;

use super::{HeatCell, HeatmapChart, HeatmapData, ProgressBar};

wasm_bindgen_test_configure!(run_in_browser);

fn mount(f: impl FnOnce() -> AnyView + 'static) -> web_sys::HtmlElement {
    let doc = document();
    let root: web_sys::HtmlElement = doc.create_element("div").unwrap().unchecked_into();
    doc.body().unwrap().append_child(&root).unwrap();
    leptos::mount::mount_to(root.clone(), f).forget();
    root
}

/// Dispatches a bubbling DOM event built by JavaScript (`kind` is e.g. "MouseEvent").
fn fire(el: &web_sys::Element, kind: &str, name: &str) {
    let f = js_sys::Function::new_with_args("el, k, n", "el.dispatchEvent(new globalThis[k](n, {bubbles: true}))");
    f.call3(&JsValue::NULL, el, &kind.into(), &name.into()).unwrap();
}

fn fire_key(el: &web_sys::Element, key: &str) {
    let f = js_sys::Function::new_with_args("el, key", "el.dispatchEvent(new KeyboardEvent('keydown', {bubbles: true, key: key}))");
    f.call2(&JsValue::NULL, el, &key.into()).unwrap();
}

async fn sleep(ms: i32) {
    let p = js_sys::Promise::new(&mut |resolve, _| {
        window().set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms).unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(p).await.unwrap();
}

fn grid() -> HeatmapData {
    let c = |v: f64| HeatCell { value: v, infeasible: None };
    HeatmapData {
        x_label: "baseM".into(),
        y_label: "baseN".into(),
        value_label: "latency (µs)".into(),
        x_values: vec!["16".into(), "32".into()],
        y_values: vec!["16".into(), "32".into()],
        cells: vec![vec![c(1.0), c(2.0)], vec![c(3.0), HeatCell { value: f64::NAN, infeasible: Some("<b>too big</b>".into()) }]],
        minimize: true,
        selected: None,
        ..Default::default()
    }
}

#[wasm_bindgen_test]
async fn heatmap_click_and_enter_select_cells_and_keep_focus() {
    let data = RwSignal::new(grid());
    let chosen = RwSignal::new(None::<(usize, usize)>);
    let root = mount(move || {
        let on_select = Callback::new(move |cell: (usize, usize)| {
            chosen.set(Some(cell));
            data.update(|d| d.selected = Some(cell));
        });
        view! { <HeatmapChart data=data on_select=on_select/> }.into_any()
    });
    leptos::task::tick().await;
    let cell = |id: &str| root.query_selector(&format!("[data-cell=\"{id}\"]")).unwrap().expect("cell drawn");
    assert!(root.inner_html().contains("&lt;b&gt;too big&lt;/b&gt;"), "reason escaped");
    assert!(root.query_selector("b").unwrap().is_none(), "no markup injected");

    fire(&cell("1,0"), "MouseEvent", "click");
    leptos::task::tick().await;
    assert_eq!(chosen.get_untracked(), Some((1, 0)));
    assert!(cell("1,0").get_attribute("class").unwrap().contains("tl-cell-selected"));

    let target = cell("0,1");
    target.unchecked_ref::<web_sys::HtmlElement>().focus().unwrap();
    fire_key(&target, "Enter");
    leptos::task::tick().await;
    sleep(80).await;
    assert_eq!(chosen.get_untracked(), Some((0, 1)));
    let active = document().active_element().expect("something focused");
    assert_eq!(active.get_attribute("data-cell").as_deref(), Some("0,1"), "focus returns to the chosen cell");
}

#[wasm_bindgen_test]
async fn progress_bar_reports_aria_values() {
    let done = RwSignal::new(3usize);
    let root = mount(move || view! { <ProgressBar done=done budget=10usize label="Run".to_string()/> }.into_any());
    leptos::task::tick().await;
    let bar = root.query_selector("[role=progressbar]").unwrap().expect("progressbar role");
    assert_eq!(bar.get_attribute("aria-valuenow").as_deref(), Some("3"));
    assert_eq!(bar.get_attribute("aria-valuemax").as_deref(), Some("10"));
    done.set(12);
    leptos::task::tick().await;
    assert_eq!(bar.get_attribute("aria-valuenow").as_deref(), Some("10"), "clamped to the budget");
    assert!(root.text_content().unwrap().contains("12 of 10 evaluations (100%)"));
}

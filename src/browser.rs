//! Thin wrappers over the browser APIs the app uses, each returning a Result with a readable
//! message instead of panicking, so a missing API becomes an error banner, not a dead page.

use wasm_bindgen::{JsCast, JsValue};

fn window() -> Result<web_sys::Window, String> {
    web_sys::window().ok_or_else(|| "no browser window".to_string())
}

fn js_err(what: &str, e: JsValue) -> String {
    format!("{what}: {}", e.as_string().or_else(|| js_sys::JSON::stringify(&e).ok().and_then(|s| s.as_string())).unwrap_or_default())
}

/// Milliseconds from `performance.now()` (0 where unavailable).
pub fn now_ms() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map(|p| p.now()).unwrap_or(0.0)
}

/// The current URL fragment, '#' included (empty when none).
pub fn hash() -> String {
    window().ok().and_then(|w| w.location().hash().ok()).unwrap_or_default()
}

/// Replaces the fragment without adding a history entry or firing `hashchange`.
pub fn replace_hash(fragment: &str) -> Result<(), String> {
    let w = window()?;
    let history = w.history().map_err(|e| js_err("history", e))?;
    let url = format!("#{fragment}");
    history.replace_state_with_url(&JsValue::NULL, "", Some(&url)).map_err(|e| js_err("replaceState", e))
}

/// The page's full address.
pub fn href() -> String {
    window().ok().and_then(|w| w.location().href().ok()).unwrap_or_default()
}

/// Fetches a file served beside the page as text.
pub async fn fetch_text(url: &str) -> Result<String, String> {
    let w = window()?;
    let resp = wasm_bindgen_futures::JsFuture::from(w.fetch_with_str(url)).await.map_err(|e| js_err(url, e))?;
    let resp: web_sys::Response = resp.dyn_into().map_err(|_| format!("{url}: not a response"))?;
    if !resp.ok() {
        return Err(format!("{url}: HTTP {}", resp.status()));
    }
    let text = wasm_bindgen_futures::JsFuture::from(resp.text().map_err(|e| js_err(url, e))?).await.map_err(|e| js_err(url, e))?;
    text.as_string().ok_or_else(|| format!("{url}: not text"))
}

/// Offers `text` as a file download named `name`.
pub fn download(name: &str, mime: &str, text: &str) -> Result<(), String> {
    let doc = window()?.document().ok_or("no document")?;
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts).map_err(|e| js_err("Blob", e))?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|e| js_err("object URL", e))?;
    let a: web_sys::HtmlAnchorElement = doc.create_element("a").map_err(|e| js_err("a", e))?.unchecked_into();
    a.set_href(&url);
    a.set_download(name);
    a.click();
    web_sys::Url::revoke_object_url(&url).map_err(|e| js_err("revoke", e))
}

/// Copies text to the clipboard (best effort: the promise is not awaited).
pub fn copy_text(text: &str) -> Result<(), String> {
    let clip = window()?.navigator().clipboard();
    let _ = clip.write_text(text);
    Ok(())
}

/// Copies text to the clipboard and waits for the browser's answer: Err when there is no
/// clipboard or the browser refuses it (no permission, not a secure context).
pub async fn copy_text_async(text: &str) -> Result<(), String> {
    let nav = window()?.navigator();
    // `navigator.clipboard` is undefined outside secure contexts: checked before it is used.
    let has = js_sys::Reflect::get(&nav, &JsValue::from_str("clipboard")).map(|v| !v.is_undefined() && !v.is_null()).unwrap_or(false);
    if !has {
        return Err("no clipboard in this browser context".into());
    }
    wasm_bindgen_futures::JsFuture::from(nav.clipboard().write_text(text)).await.map(|_| ()).map_err(|e| js_err("clipboard", e))
}

/// Focuses and selects the text of the input matching `selector` (when there is one).
pub fn select_input(selector: &str) {
    if let Some(i) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.query_selector(selector).ok().flatten()).and_then(|e| e.dyn_into::<web_sys::HtmlInputElement>().ok()) {
        let _ = i.focus();
        i.select();
    }
}

/// Reads a key from localStorage.
pub fn storage_get(key: &str) -> Result<Option<String>, String> {
    let s = window()?.local_storage().map_err(|e| js_err("localStorage", e))?.ok_or("no localStorage")?;
    s.get_item(key).map_err(|e| js_err("localStorage", e))
}

/// Writes a key to localStorage.
pub fn storage_set(key: &str, value: &str) -> Result<(), String> {
    let s = window()?.local_storage().map_err(|e| js_err("localStorage", e))?.ok_or("no localStorage")?;
    s.set_item(key, value).map_err(|e| js_err("localStorage", e))
}

/// Records the longest time (ms) seen for `key` in `window.__tunelabTimings`, so tests and the
/// curious can see what a run costs on the main thread (start, redraw, engine slice).
pub fn record_timing(key: &str, ms: f64) {
    let Some(w) = web_sys::window() else { return };
    let obj = match js_sys::Reflect::get(&w, &JsValue::from_str("__tunelabTimings")) {
        Ok(v) if v.is_object() => v,
        _ => {
            let o: JsValue = js_sys::Object::new().into();
            let _ = js_sys::Reflect::set(&w, &JsValue::from_str("__tunelabTimings"), &o);
            o
        }
    };
    let old = js_sys::Reflect::get(&obj, &JsValue::from_str(key)).ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    if ms > old {
        let _ = js_sys::Reflect::set(&obj, &JsValue::from_str(key), &JsValue::from_f64(ms));
    }
}

/// Sets `window[key]` to a JSON value (or the plain string when it is not JSON), for tests and
/// benchmarks to read (`__tunelabEngine`, `__tunelabLastRace`).
pub fn set_global(key: &str, value: &str) {
    let Some(w) = web_sys::window() else { return };
    let v = js_sys::JSON::parse(value).unwrap_or_else(|_| JsValue::from_str(value));
    let _ = js_sys::Reflect::set(&w, &JsValue::from_str(key), &v);
}

//! Loading a scenario: a bundled one, a model (bundled, pasted, uploaded or dropped Hugging Face
//! config.json or operator graph), a chip (pick, view and edit its profile), a stage, a template.

use crate::state::Ctx;
use leptos::prelude::*;
use serde_json::Value as Json;
use tunelab_scenario::scenario::{DeviceRef, ModelRef};
use tunelab_scenario::{bundled_scenarios, templates, Scenario, Stage};

/// Largest pasted or uploaded file read.
pub const MAX_UPLOAD: usize = 4 * 1024 * 1024;

/// The scenario editor.
#[component]
pub fn ScenarioPanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let pasted = RwSignal::new(String::new());
    let device_text = RwSignal::new(String::new());
    let bundled = bundled_scenarios();
    let pick_bundled = move |ev| {
        let id = event_target_value(&ev);
        match tunelab_scenario::bundled_scenario(&id) {
            Ok(s) => {
                ctx.replace(s);
            }
            Err(e) => ctx.fail(e),
        }
    };
    let model_id = move || ctx.scenario.with(|s| match &s.model {
        ModelRef::Id(id) if !id.trim_start().starts_with('{') => id.clone(),
        _ => "custom".into(),
    });
    let device_name = move || ctx.scenario.with(|s| match &s.device {
        DeviceRef::Name(n) => n.clone(),
        DeviceRef::Inline(_) => "custom".into(),
    });
    let use_model = move |text: String| {
        if let Err(e) = load_model_text(ctx, &text) {
            ctx.fail(e);
        }
    };
    // A stage has its own metrics and parameters: changing it resets the goals, limits and space
    // overrides to the new stage's defaults.
    let on_file = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(f) = input.files().and_then(|l| l.get(0)) {
            read_file(ctx, f, move |t| {
                pasted.set(t.clone());
                use_model(t)
            });
        }
    };
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        if let Some(f) = ev.data_transfer().and_then(|d| d.files()).and_then(|l| l.get(0)) {
            read_file(ctx, f, move |t| {
                pasted.set(t.clone());
                use_model(t)
            });
        }
    };
    let show_device = move |_| {
        let text = ctx.scenario.with_untracked(|s| match &s.device {
            DeviceRef::Name(n) => tunelab_sim::bundled_device(n).map(|d| d.to_json()),
            DeviceRef::Inline(v) => serde_json::to_string_pretty(v).map_err(|e| e.to_string()),
        });
        match text {
            Ok(t) => device_text.set(t),
            Err(e) => ctx.fail(e),
        }
    };
    let apply_device = move |_| {
        let text = device_text.get_untracked();
        let parsed = tunelab_sim::Device::from_json(&text).and_then(|_| serde_json::from_str::<Json>(&text).map_err(|e| e.to_string()));
        match parsed {
            Ok(v) => {
                ctx.edit(|s| s.device = DeviceRef::Inline(v));
            }
            Err(e) => ctx.fail(format!("The chip profile was not applied: {e}")),
        }
    };
    let apply_template = move |ev| {
        let name = event_target_value(&ev);
        let Some(t) = templates::bundled_templates().into_iter().find(|t| t.name == name) else { return };
        let mut s = ctx.scenario.get_untracked();
        let mem = match &s.device {
            DeviceRef::Name(n) => tunelab_sim::bundled_device(n).ok().map(|d| tunelab_scenario::context::memory_gib(&d)),
            DeviceRef::Inline(_) => None,
        };
        match templates::apply_template(&t, &mut s, mem) {
            Ok(()) => {
                ctx.replace(s);
            }
            Err(e) => ctx.fail(format!("Template '{}': {e}", t.title)),
        }
    };
    view! {
        <section class="panel scenario">
            <h2>"Scenario"</h2>
            <p class="scenario-name" data-testid="scenario-name">{move || ctx.scenario.with(|s| if s.name.is_empty() { "(unnamed scenario)".to_string() } else { s.name.clone() })}</p>
            <label class="field">"Bundled scenario "
                <select data-testid="bundled" on:change=pick_bundled>
                    <option value="" selected>"choose…"</option>
                    {bundled.iter().map(|(id, s)| {
                        let title = s.as_ref().map(|s| s.name.clone()).unwrap_or_else(|e| format!("{id} (broken: {e})"));
                        view! { <option value=*id>{title}</option> }
                    }).collect_view()}
                </select>
            </label>
            <label class="field">"Model "
                <select data-testid="model" prop:value=model_id on:change=move |ev| {
                    let id = event_target_value(&ev);
                    if id != "custom" { ctx.edit(|s| s.model = ModelRef::Id(id)); }
                }>
                    {tunelab_sim::bundled_models().into_iter().map(|(id, _)| view! { <option value=id>{id}</option> }).collect_view()}
                    <option value="custom">"custom (pasted or uploaded)"</option>
                </select>
            </label>
            <details>
                <summary>"Paste, upload or drop a model"</summary>
                <div class="drop" on:dragover=|ev: leptos::ev::DragEvent| ev.prevent_default() on:drop=on_drop>
                    <textarea data-testid="model-text" placeholder="A Hugging Face config.json or an operator-graph JSON; or drop a file here" prop:value=move || pasted.get() on:input=move |ev| pasted.set(event_target_value(&ev))></textarea>
                    <div class="row">
                        <button data-testid="use-model" on:click=move |_| use_model(pasted.get_untracked())>"Use this model"</button>
                        <button data-testid="open-scenario" on:click=move |_| {
                            match Scenario::from_json(&pasted.get_untracked()) { Ok(s) => { ctx.replace(s); } Err(e) => ctx.fail(format!("Not a scenario: {e}")) }
                        }>"Open as scenario"</button>
                        <input type="file" accept=".json,application/json" data-testid="model-file" on:change=on_file/>
                    </div>
                </div>
            </details>
            <label class="field">"Chip "
                <select data-testid="device" prop:value=device_name on:change=move |ev| {
                    let n = event_target_value(&ev);
                    if n != "custom" { ctx.edit(|s| s.device = DeviceRef::Name(n)); device_text.set(String::new()); }
                }>
                    {tunelab_sim::device::bundled_names().into_iter().map(|n| view! { <option value=n>{n}</option> }).collect_view()}
                    <option value="custom">"custom (edited profile)"</option>
                </select>
            </label>
            <details>
                <summary on:click=show_device>"View or edit the chip profile"</summary>
                <textarea class="tall" data-testid="device-text" prop:value=move || device_text.get() on:input=move |ev| device_text.set(event_target_value(&ev))></textarea>
                <button data-testid="apply-device" on:click=apply_device>"Apply edited profile"</button>
            </details>
            <label class="field">"Stage "
                <select data-testid="stage" prop:value=move || ctx.scenario.with(|s| s.stage.name().to_string()) on:change=move |ev| {
                    let st = match event_target_value(&ev).as_str() { "operator" => Stage::Operator, "training" => Stage::Training, "runtime" => Stage::Runtime, _ => Stage::Deployment };
                    ctx.edit(|s| { s.stage = st; s.space.clear(); s.objectives.clear(); s.constraints = Default::default(); });
                }>
                    {["operator", "deployment", "training", "runtime"].map(|n| view! { <option value=n>{n}</option> })}
                </select>
            </label>
            <label class="field">"Template "
                <select data-testid="template" on:change=apply_template>
                    <option value="" selected>"apply a template…"</option>
                    {templates::bundled_templates().into_iter().map(|t| view! { <option value=t.name.clone() title=t.description.clone()>{t.title.clone()}</option> }).collect_view()}
                </select>
            </label>
        </section>
    }
}

/// Loads model text (HF config.json or operator graph) into the scenario, checked first.
pub fn load_model_text(ctx: Ctx, text: &str) -> Result<(), String> {
    if text.len() > MAX_UPLOAD {
        return Err(format!("The model file is {} bytes; at most {MAX_UPLOAD} are read.", text.len()));
    }
    let loaded = tunelab_sim::load_model(text).map_err(|e| format!("The model was not loaded: {e}"))?;
    let v: Json = serde_json::from_str(text).map_err(|e| format!("The model was not loaded: {e}"))?;
    if ctx.edit(|s| s.model = ModelRef::Inline(v)) && !loaded.warnings.is_empty() {
        ctx.fail(format!("Model loaded with warnings: {}", loaded.warnings.join("; ")));
    }
    Ok(())
}

fn read_file(ctx: Ctx, f: web_sys::File, then: impl FnOnce(String) + 'static) {
    if f.size() > MAX_UPLOAD as f64 {
        ctx.fail(format!("'{}' is {} bytes; at most {MAX_UPLOAD} are read.", f.name(), f.size()));
        return;
    }
    leptos::task::spawn_local(async move {
        match wasm_bindgen_futures::JsFuture::from(f.text()).await.ok().and_then(|v| v.as_string()) {
            Some(t) => then(t),
            None => ctx.fail(format!("'{}' could not be read as text.", f.name())),
        }
    });
}

//! Loading a scenario: a bundled one, a model (bundled, pasted, uploaded or dropped Hugging Face
//! config.json or operator graph), a chip (pick, view and edit its profile), a stage, a template.

use crate::components::model_banner::ModelBanner;
use crate::state::Ctx;
use leptos::prelude::*;
use serde_json::Value as Json;
use tunelab_scenario::scenario::{DeviceRef, ModelRef};
use crate::worker::ask::{ask, Answer, Question};
use tunelab_engine::questions::TemplateInfo;
use tunelab_scenario::{bundled_scenarios, Scenario, Stage};

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
    // Loader warnings: shown as warnings under the model, not as errors.
    let warning = RwSignal::new(None::<String>);
    let use_model = move |text: String, file: Option<String>| {
        warning.set(None);
        load_model_text(ctx, text, file, move |r| match r {
            Ok(w) if !w.is_empty() => warning.set(Some(format!("Model loaded with warnings: {}", w.join("; ")))),
            Ok(_) => {}
            Err(e) => ctx.fail(e),
        });
    };
    // Fields that apply to this stage only (a landscape has no model or chip; the token
    // workload is for the LLM stages).
    let stage = move || ctx.scenario.with(|s| s.stage);
    let not_landscape = move || stage() != Stage::Landscape;
    // A stage has its own metrics and parameters: changing it resets the goals, limits and space
    // overrides to the new stage's defaults.
    let on_file = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(f) = input.files().and_then(|l| l.get(0)) {
            let name = f.name();
            read_file(ctx, f, move |t| {
                pasted.set(t.clone());
                use_model(t, Some(name))
            });
        }
    };
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        if let Some(f) = ev.data_transfer().and_then(|d| d.files()).and_then(|l| l.get(0)) {
            let name = f.name();
            read_file(ctx, f, move |t| {
                pasted.set(t.clone());
                use_model(t, Some(name))
            });
        }
    };
    // The chip profile's text and its check come from the engine worker (`Question::DeviceProfile`,
    // `DeviceCheck`: the readers `tunelab run` uses); the page's module links no device reader.
    let show_device = move |_| {
        match ctx.scenario.with_untracked(|s| s.device.clone()) {
            DeviceRef::Name(name) => ask(Question::DeviceProfile { name }, move |r| match r {
                Ok(Answer::DeviceProfile { text }) => device_text.set(text),
                Ok(_) => {}
                Err(e) => ctx.fail(e),
            }),
            DeviceRef::Inline(v) => match serde_json::to_string_pretty(&v) {
                Ok(t) => device_text.set(t),
                Err(e) => ctx.fail(e.to_string()),
            },
        }
    };
    let apply_device = move |_| {
        let text = device_text.get_untracked();
        let parsed = serde_json::from_str::<Json>(&text).map_err(|e| e.to_string());
        match parsed {
            Ok(v) => ask(Question::DeviceCheck { text }, move |r| match r {
                Ok(_) => {
                    ctx.edit(|s| s.device = DeviceRef::Inline(v));
                }
                Err(e) => ctx.fail(format!("The chip profile was not applied: {e}")),
            }),
            Err(e) => ctx.fail(format!("The chip profile was not applied: {e}")),
        }
    };
    // A template is previewed first (every field it changes), then applied; the scenario before
    // it is kept so the template can be undone.
    let pending = RwSignal::new(None::<(String, Scenario, Vec<String>)>);
    let undo = RwSignal::new(None::<Scenario>);
    let template_pick = RwSignal::new(String::new());
    // The menu and the preview come from the engine worker (`Question::Templates`,
    // `Question::TemplatePreview`: `templates::preview`, the function `tunelab` uses); the
    // page's module links no template. The menu fills once the worker has answered.
    let menu = RwSignal::new(Vec::<TemplateInfo>::new());
    ask(Question::Templates, move |r| {
        if let Ok(Answer::Templates { templates }) = r {
            menu.set(templates);
        }
    });
    let preview_template = move |ev| {
        let name = event_target_value(&ev);
        template_pick.set(name.clone());
        if name.is_empty() {
            pending.set(None);
            return;
        }
        let s = ctx.scenario.get_untracked();
        ask(Question::TemplatePreview { scenario: Box::new(s), name: name.clone() }, move |r| match r {
            // An answer for a pick the user has since changed is dropped.
            _ if template_pick.try_get_untracked().as_ref() != Some(&name) => {}
            Ok(Answer::TemplatePreview { title, next, lines }) => {
                let lines = ctx.scenario.with_untracked(|s| crate::components::template_words::human_lines(s, &next, &lines));
                pending.set(Some((title, *next, lines)))
            }
            Ok(other) => ctx.fail(format!("Template '{name}': unexpected answer {other:?}")),
            Err(e) => ctx.fail(e),
        });
    };
    let apply_template = move |_| {
        if let Some((_, next, _)) = pending.get_untracked() {
            let before = ctx.scenario.get_untracked();
            if ctx.replace(next) {
                undo.set(Some(before));
            }
        }
        pending.set(None);
        template_pick.set(String::new());
    };
    let undo_template = move |_| {
        if let Some(before) = undo.get_untracked() {
            if ctx.replace(before) {
                undo.set(None);
            }
        }
    };
    view! {
        <section class="panel scenario">
            <h2>"Scenario"</h2>
            <p class="muted small">"Name: " <span class="scenario-name" data-testid="scenario-name">{move || ctx.scenario.with(|s| if s.name.is_empty() { "(unnamed scenario)".to_string() } else { s.name.clone() })}</span></p>
            <label class="field">"Bundled scenario "
                <select data-testid="bundled" on:change=pick_bundled>
                    <option value="" selected>"choose…"</option>
                    {bundled.iter().map(|(id, s)| {
                        let title = s.as_ref().map(|s| s.name.clone()).unwrap_or_else(|e| format!("{id} (broken: {e})"));
                        view! { <option value=*id>{title}</option> }
                    }).collect_view()}
                </select>
            </label>
            <Show when=not_landscape fallback=|| view! {
                <p class="muted small" data-testid="landscape-note">"A landscape is known whole (a Kernel Tuner cache of measured kernel times, or a 2-D function): no model, chip or workload applies. Pick one in the Replay panel."</p>
            }>
            <label class="field">"Model "
                <select data-testid="model" prop:value=model_id on:change=move |ev| {
                    let id = event_target_value(&ev);
                    if id != "custom" { ctx.edit(|s| s.model = ModelRef::Id(id)); }
                }>
                    {tunelab_sim::bundled_model_ids().into_iter().map(|id| view! { <option value=id>{id}</option> }).collect_view()}
                    // Diffusion pipelines (the diffusion stage, or diffusion training).
                    <optgroup label="diffusion pipelines">
                        {tunelab_sim::workload::diffusers::bundled_pipeline_ids().into_iter().map(|id| { let label = id.clone(); view! { <option value=id>{label}</option> } }).collect_view()}
                    </optgroup>
                    <option value="custom">"custom (pasted or uploaded)"</option>
                </select>
            </label>
            <ModelBanner/>
            <Show when=move || warning.with(|w| w.is_some())>
                <div class="warning" role="status" data-testid="model-warning">
                    <span>{move || warning.get().unwrap_or_default()}</span>
                    <button class="dismiss" on:click=move |_| warning.set(None)>"Dismiss"</button>
                </div>
            </Show>
            <details>
                <summary>"Paste, upload or drop a model"</summary>
                <div class="drop" on:dragover=|ev: leptos::ev::DragEvent| ev.prevent_default() on:drop=on_drop>
                    <textarea data-testid="model-text" placeholder="A Hugging Face config.json or an operator-graph JSON; or drop a file here" prop:value=move || pasted.get() on:input=move |ev| pasted.set(event_target_value(&ev))></textarea>
                    <div class="row">
                        <button data-testid="use-model" on:click=move |_| use_model(pasted.get_untracked(), None)>"Use this model"</button>
                        <button data-testid="open-scenario" on:click=move |_| {
                            match Scenario::from_json_reporting(&pasted.get_untracked()) { Ok((s, unknown)) => { if ctx.replace(s) { ctx.input_warnings.set(unknown.lines()); } } Err(e) => ctx.fail(format!("Not a scenario: {e}")) }
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
            </Show>
            <label class="field">"Stage "
                <select data-testid="stage" prop:value=move || ctx.scenario.with(|s| s.stage.name().to_string()) on:change=move |ev| {
                    let st = match event_target_value(&ev).as_str() { "operator" => Stage::Operator, "training" => Stage::Training, "runtime" => Stage::Runtime, "diffusion" => Stage::Diffusion, _ => Stage::Deployment };
                    ctx.edit(|s| {
                        // A diffusion stage needs a pipeline: keep the model if it is one, else SD 2.1-base.
                        if st == Stage::Diffusion && !tunelab_scenario::stages::context::names_a_pipeline(&s.model) {
                            s.model = tunelab_scenario::scenario::ModelRef::Id("sd2.1-base".into());
                        }
                        s.stage = st; s.space.clear(); s.objectives.clear(); s.constraints = Default::default();
                    });
                }>
                    {["operator", "deployment", "training", "runtime", "diffusion"].map(|n| view! { <option value=n>{n}</option> })}
                    // Shown while a landscape is loaded (the select would read blank otherwise);
                    // one is chosen in the Replay panel, which knows its source.
                    <option value="landscape" disabled>"landscape (Replay real data)"</option>
                </select>
            </label>
            <Show when=not_landscape>
            <label class="field">"Template "
                <select data-testid="template" prop:value=move || template_pick.get() on:change=preview_template>
                    <option value="">"apply a template…"</option>
                    {move || menu.get().into_iter().map(|t| view! { <option value=t.name.clone() title=t.description.clone()>{t.title.clone()}</option> }).collect_view()}
                </select>
            </label>
            </Show>
            <Show when=move || pending.with(|p| p.is_some())>
                <div class="template-preview" data-testid="template-preview">
                    <p>{move || pending.with(|p| p.as_ref().map(|(t, _, l)| if l.is_empty() { format!("'{t}' changes nothing in this scenario.") } else { format!("'{t}' will change:") }).unwrap_or_default())}</p>
                    <ul class="small">{move || pending.with(|p| p.as_ref().map(|x| x.2.clone()).unwrap_or_default()).into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul>
                    <div class="row">
                        <button class="primary" data-testid="template-apply" on:click=apply_template>"Apply"</button>
                        <button data-testid="template-cancel" on:click=move |_| { pending.set(None); template_pick.set(String::new()); }>"Cancel"</button>
                    </div>
                </div>
            </Show>
            <Show when=move || undo.with(|u| u.is_some())>
                <button data-testid="template-undo" on:click=undo_template>"Undo template"</button>
            </Show>
            <GoalPanel/>
            <crate::components::serving_panel::ServingPanel/>
            <crate::components::cluster_panel::ClusterPanel/>
        </section>
    }
}

/// Loads model text (HF config.json or operator graph) into the scenario, checked first by the
/// engine worker's model reader (`Question::Model`); `done` gets the loader's warnings. The
/// scenario's name follows the model (named by `file` for an upload) unless the user named the
/// scenario (`view.named`, set by the Name field).
pub fn load_model_text(ctx: Ctx, text: String, file: Option<String>, done: impl FnOnce(Result<Vec<String>, String>) + 'static) {
    if text.len() > MAX_UPLOAD {
        return done(Err(format!("The model file is {} bytes; at most {MAX_UPLOAD} are read.", text.len())));
    }
    // Parsed here (the scenario keeps the JSON); refused after the reader's own message, as
    // before (the reader also reads Python's Infinity / NaN, which JSON does not).
    let v: Result<Json, String> = serde_json::from_str(&text).map_err(|e| format!("The model was not loaded: {e}"));
    crate::worker::ask::ask(crate::worker::ask::Question::Model { text }, move |r| {
        let facts = match r {
            Ok(crate::worker::ask::Answer::Model { facts }) => facts,
            Ok(other) => return done(Err(format!("The model was not loaded: unexpected answer {other:?}"))),
            Err(e) => return done(Err(format!("The model was not loaded: {e}"))),
        };
        let v = match v {
            Ok(v) => v,
            Err(e) => return done(Err(e)),
        };
        let applied = ctx.edit(|s| {
            s.model = ModelRef::Inline(v);
            if !user_named(s) {
                s.name = model_scenario_name(s, file.as_deref());
            }
        });
        done(Ok(if applied { facts.warnings } else { Vec::new() }))
    });
}

/// True when the user gave the scenario its name (the Name field sets `view.named`).
pub fn user_named(s: &Scenario) -> bool {
    s.view.get("named").and_then(Json::as_bool) == Some(true)
}

/// The name a scenario takes from its model: "Mixtral-8x7B-v0.1 (mixtral.json) on 910B2,
/// deployment" (the file for an upload, the config's own name for a paste).
pub fn model_scenario_name(s: &Scenario, file: Option<&str>) -> String {
    let label = tunelab_scenario::context::model_label(s);
    let model = label.strip_suffix(" (pasted)").or_else(|| label.strip_suffix(" (own config)")).unwrap_or(&label).to_string();
    let model = match file {
        Some(f) if !f.trim().is_empty() => format!("{model} ({})", f.trim()),
        _ => model,
    };
    format!("{model} on {}, {}", tunelab_scenario::context::chip_label(s), s.stage.name())
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

/// Limits the panel edits: (constraint, metric it bounds, label, test id).
const LIMITS: &[(&str, &str, &str, &str)] = &[
    ("max_ttft_ms", "ttft_ms", "Max TTFT (ms)", "limit-ttft"),
    ("max_tpot_ms", "tpot_ms", "Max TPOT (ms)", "limit-tpot"),
    ("max_memory_gib", "memory_gib", "Max memory per chip (GiB)", "limit-memory"),
];

/// The goal, the limits, the workload and the description, shown and editable.
#[component]
fn GoalPanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    // The stage's metrics (recomputed when the stage, model or chip changes, not on every edit).
    let key = Memo::new(move |_| ctx.scenario.with(|s| (s.stage, serde_json::to_string(&s.model).unwrap_or_default(), serde_json::to_string(&s.device).unwrap_or_default())));
    // The engine worker builds the stage (`Question::Shape`; 80+ ms for a deployment stage).
    // (the key it was asked for, the built stage's metric names): the shape's list counts only
    // while it is the current stage's (a deployment's TTFT is never offered to an operator).
    let shaped = RwSignal::new((None, Vec::<String>::new()));
    let asked = StoredValue::new(0u64);
    Effect::new(move |_| {
        let k = key.get();
        asked.update_value(|a| *a += 1);
        let mine = asked.get_value();
        crate::worker::ask::shape(ctx.scenario.get_untracked(), move |r| {
            if asked.get_value() == mine {
                shaped.set((Some(k), r.map(|sh| sh.metrics.into_iter().map(|m| m.name).collect()).unwrap_or_default()));
            }
        });
    });
    // The stage's own list (from the stage's metric registry, `stage_metrics`) is offered at once,
    // before anything runs; the built stage's shape may add to it (a deployment's capacity
    // goals, a landscape's own metric). A stage that cannot be built keeps its own list.
    let metrics = Memo::new(move |_| {
        let mut names = tunelab_scenario::stages::stage_metrics::metric_ids(ctx.scenario.with(|s| s.stage));
        let k = key.get();
        shaped.with(|(at, list)| {
            if at.as_ref() == Some(&k) {
                for m in list {
                    if !names.contains(m) {
                        names.push(m.clone());
                    }
                }
            }
        });
        names
    });
    let goal = move || ctx.scenario.with(|s| tunelab_scenario::context::goal(s));
    let set_goal = move |ev| {
        let m = event_target_value(&ev);
        ctx.edit(|s| {
            let top = s.objectives.iter().map(|o| o.priority).fold(0.0f64, f64::max);
            s.objectives.retain(|o| o.metric != m);
            s.objectives.insert(0, tunelab_scenario::scenario::ObjectiveSpec { metric: m.clone(), priority: top + 1.0, direction: None });
        });
    };
    let limit_value = move |field: &'static str| {
        ctx.scenario.with(|s| {
            let c = &s.constraints;
            match field {
                "max_ttft_ms" => c.max_ttft_ms,
                "max_tpot_ms" => c.max_tpot_ms,
                _ => c.max_memory_gib,
            }
        })
    };
    let set_limit = move |field: &'static str, text: String| {
        let v = if text.trim().is_empty() {
            None
        } else {
            match text.trim().parse::<f64>() {
                Ok(x) if x.is_finite() && x > 0.0 => Some(x),
                _ => {
                    ctx.fail(format!("{field}: a limit must be a positive number (or empty for none)"));
                    return;
                }
            }
        };
        ctx.edit(|s| match field {
            "max_ttft_ms" => s.constraints.max_ttft_ms = v,
            "max_tpot_ms" => s.constraints.max_tpot_ms = v,
            _ => s.constraints.max_memory_gib = v,
        });
    };
    let int_field = move |label: &'static str, id: &'static str, get: fn(&Scenario) -> i64, set: fn(&mut Scenario, i64)| {
        view! {
            <label class="field">{label}" "
                <input type="number" min="1" data-testid=id prop:value=move || ctx.scenario.with(|s| get(s).to_string()) on:change=move |ev| {
                    match event_target_value(&ev).trim().parse::<i64>() {
                        Ok(v) if v >= 1 => { ctx.edit(|s| set(s, v)); }
                        _ => ctx.fail(format!("{label}: a whole number of at least 1")),
                    }
                }/>
            </label>
        }
    };
    // A training option as a checkbox, or as a select over (value, label) choices.
    let check_field = move |label: &'static str, id: &'static str, title: &'static str, get: fn(&Scenario) -> bool, set: fn(&mut Scenario, bool)| {
        view! {
            <label class="field check" title=title>
                <input type="checkbox" data-testid=id prop:checked=move || ctx.scenario.with(get) on:change=move |ev| {
                    let v = event_target_checked(&ev);
                    ctx.edit(|s| set(s, v));
                }/>{label}
            </label>
        }
    };
    let select_field = move |label: &'static str, id: &'static str, title: &'static str, choices: &'static [(&'static str, &'static str)], get: fn(&Scenario) -> String, set: fn(&mut Scenario, String)| {
        view! {
            <label class="field" title=title>{label}" "
                <select data-testid=id prop:value=move || ctx.scenario.with(get) on:change=move |ev| {
                    let v = event_target_value(&ev);
                    ctx.edit(|s| set(s, v));
                }>
                    {choices.iter().map(|&(v, l)| view! { <option value=v>{l}</option> }).collect_view()}
                </select>
            </label>
        }
    };
    let training = move || ctx.scenario.with(|s| s.stage == Stage::Training);
    // The fused kernels a MindSpeed run can turn off (training.unfused_kernels).
    const FUSIONS: [(&str, &str, &str, &str); 3] = [
        ("rms_norm", "fused RMSNorm", "training-fused-rms-norm", "MindSpeed --use-fused-rmsnorm: one npu_rms_norm kernel; off, the model code's own 8 kernels (assets/constants/training.json unfused_rms_norm_kernels)"),
        ("rotary", "fused rotary", "training-fused-rotary", "MindSpeed --use-fused-rotary-pos-emb: one npu_rotary_mul kernel; off, Megatron's apply_rotary_pos_emb as 6 kernels per tensor"),
        ("swiglu", "fused SwiGLU", "training-fused-swiglu", "MindSpeed --use-fused-swiglu: one npu_swiglu kernel; off, silu and mul"),
    ];
    view! {
        <details class="goal">
            <summary>"Goal, limits and workload"</summary>
            <label class="field" title=move || tunelab_scenario::metrics::meaning(&goal().0)>"Goal "
                <select data-testid="goal" prop:value=move || goal().0 on:change=set_goal>
                    {move || {
                        let mut names = metrics.get();
                        let g = goal().0;
                        if !names.contains(&g) { names.insert(0, g); }
                        // The capacity goals (a search over the rate) exist once a deployment names one.
                        if ctx.scenario.with(|s| s.stage == Stage::Deployment) {
                            for c in tunelab_scenario::stages::capacity::CAPACITY_METRICS { if !names.iter().any(|n| n == c) { names.push(c.to_string()); } }
                        }
                        names.into_iter().map(|n| view! { <option value=n.clone()>{tunelab_scenario::metrics::label(&n)}</option> }).collect_view()
                    }}
                </select>
                <span class="muted small">{move || if goal().1 { " maximise" } else { " minimise" }}</span>
            </label>
            <p class="muted small">{move || tunelab_scenario::metrics::meaning(&goal().0)}</p>
            {LIMITS.iter().map(|&(field, metric, label, id)| view! {
                <Show when=move || metrics.with(|m| m.iter().any(|x| x == metric))>
                    <label class="field">{label}" "
                        <input type="number" min="0" step="any" placeholder="none" data-testid=id
                            prop:value=move || limit_value(field).map(|v| v.to_string()).unwrap_or_default()
                            on:change=move |ev| set_limit(field, event_target_value(&ev))/>
                    </label>
                </Show>
            }).collect_view()}
            <Show when=move || !training() fallback=move || view! {
                {int_field("Sequence length", "workload-seq", |s| s.workload.seq_len, |s, v| s.workload.seq_len = v)}
                {int_field("Global batch", "workload-global-batch", |s| s.workload.global_batch, |s, v| s.workload.global_batch = v)}
                {int_field("Chips", "training-chips", |s| s.training.chips as i64, |s, v| s.training.chips = v.clamp(1, 4096) as u64)}
                {select_field("Framework", "training-framework",
                    "The framework that runs the step: its host costs per step and micro-batch, how it launches operators, and the kernels its model code runs for a norm, rotary embedding or gated activation (assets/constants/training.json)",
                    &[("megatron", "Megatron / MindSpeed"), ("mindformers", "MindFormers (MindSpore, graph)"), ("deepspeed", "DeepSpeed (HF model code)")],
                    |s| s.training.framework.clone(), |s, v| s.training.framework = v)}
                {select_field("MoE dispatcher", "training-moe-dispatcher",
                    "Megatron --moe-token-dispatcher-type (MoE models): all-to-all sends each routed copy to its expert's rank; all-gather gathers the whole expert-parallel group's tokens and reduce-scatters the combined output",
                    &[("alltoall", "all-to-all"), ("allgather", "all-gather")],
                    |s| s.training.moe_token_dispatcher.clone(), |s, v| s.training.moe_token_dispatcher = v)}
                {check_field("grouped expert matmul", "training-moe-grouped-gemm",
                    "Megatron --moe-grouped-gemm: a rank's experts run as one grouped matmul; off, one matmul per expert",
                    |s| s.training.moe_grouped_gemm, |s, v| s.training.moe_grouped_gemm = v)}
                {check_field("fp32 all-gather combine", "training-moe-permutation-async-comm",
                    "MindSpeed --moe-permutation-async-comm (all-gather dispatcher): the combine adds the local token copies into an fp32 buffer of the group's tokens before the reduce-scatter",
                    |s| s.training.moe_permutation_async_comm, |s, v| s.training.moe_permutation_async_comm = v)}
                {check_field("gradient-accumulation fusion", "training-grad-accum-fusion",
                    "Megatron --gradient-accumulation-fusion: weight gradients accumulate straight into the main gradients; off, a separate pass adds them every micro-batch",
                    |s| s.training.gradient_accumulation_fusion, |s, v| s.training.gradient_accumulation_fusion = v)}
                {select_field("CP attention", "training-cp-algo",
                    "MindSpeed --context-parallel-algo (with context parallelism): ring attention passes keys and values round the ring; Ulysses trades sequence for heads with two all-to-alls and needs the heads to split evenly",
                    &[("ring", "ring"), ("ulysses", "Ulysses")],
                    |s| s.training.context_parallel_algo.clone(), |s, v| s.training.context_parallel_algo = v)}
                {select_field("Attention mask", "training-attention-mask",
                    "MindSpeed --attention-mask-type: causal (compressed mask, masked blocks skipped) or general (the mask built from the data: ring context parallelism then computes every block in full)",
                    &[("causal", "causal"), ("general", "general")],
                    |s| s.training.attention_mask_type.clone(), |s, v| s.training.attention_mask_type = v)}
                // DeepSpeed runs Hugging Face model code, which fuses none of them.
                {FUSIONS.iter().map(|&(kernel, label, id, title)| view! {
                    <Show when=move || ctx.scenario.with(|s| s.training.framework != "deepspeed")>
                    <label class="field check" title=title>
                        <input type="checkbox" data-testid=id prop:checked=move || ctx.scenario.with(|s| !s.training.unfused_kernels.iter().any(|k| k == kernel)) on:change=move |ev| {
                            let fused = event_target_checked(&ev);
                            ctx.edit(|s| {
                                s.training.unfused_kernels.retain(|k| k != kernel);
                                if !fused { s.training.unfused_kernels.push(kernel.to_string()); }
                            });
                        }/>{label}
                    </label>
                    </Show>
                }).collect_view()}
                <crate::components::training_layouts::TrainingLayouts/>
                <label class="field" title="MindSpeed --num-layer-list: the layers of each pipeline stage, first to last (e.g. 17,20,22,21 for 80 layers over pp 4). The first stage keeps a micro-batch in flight per stage, the last holds the LM head; each stage is priced on its own and the slowest sets the pace. Points then need pp = the number of stages. Empty: an even split.">"Layers per stage "
                    <input type="text" placeholder="even" data-testid="training-pipeline-layers"
                        prop:value=move || ctx.scenario.with(|s| s.training.pipeline_layers.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(","))
                        on:change=move |ev| match tunelab_scenario::training::TrainingOptions::parse_pipeline_layers(&event_target_value(&ev)) {
                            Ok(v) => { ctx.edit(|s| s.training.pipeline_layers = v); }
                            Err(e) => ctx.fail(e),
                        }/>
                </label>
            }>
                // Tokens and batch are the LLM stages' workload (operator, deployment, runtime);
                // a diffusion pipeline has its own batch and steps, a landscape no workload.
                <Show when=move || ctx.scenario.with(|s| matches!(s.stage, Stage::Operator | Stage::Deployment | Stage::Runtime))>
                    {int_field("Input tokens", "workload-input", |s| s.workload.input_len, |s, v| s.workload.input_len = v)}
                    {int_field("Output tokens", "workload-output", |s| s.workload.output_len, |s, v| s.workload.output_len = v)}
                    {int_field("Batch", "workload-batch", |s| s.workload.batch, |s, v| s.workload.batch = v)}
                </Show>
            </Show>
            <Show when=move || ctx.scenario.with(|s| s.stage == Stage::Operator)>
                <label class="field" title="What the workload's time means: the kernels on the device (a profiler's task time), one eager framework call timed around each operator (host dispatch, then the kernel), or a timed loop of calls (per call the longer of host dispatch and kernel). Host costs come from the chip profile.">"Timing "
                    <select data-testid="operator-timing" prop:value=move || ctx.scenario.with(|s| s.operator.timing.clone()) on:change=move |ev| {
                        let t = event_target_value(&ev);
                        ctx.edit(|s| s.operator.timing = t);
                    }>
                        <option value="device">"device (kernels only)"</option>
                        <option value="single_call">"one eager call each"</option>
                        <option value="back_to_back">"a loop of calls"</option>
                    </select>
                </label>
                <Show when=move || ctx.scenario.with(|s| s.operator.timing == "back_to_back")>
                    {int_field("Calls per loop", "operator-calls", |s| s.operator.calls as i64, |s, v| s.operator.calls = v.clamp(1, 1_000_000) as u64)}
                </Show>
            </Show>
            <label class="field">"Name "
                <input type="text" class="wide" data-testid="scenario-name-edit" prop:value=move || ctx.scenario.with(|s| s.name.clone()) on:change=move |ev| {
                    let n = event_target_value(&ev);
                    ctx.edit(|s| {
                        s.name = n;
                        if !s.view.is_object() { s.view = Json::Object(Default::default()); }
                        if let Some(o) = s.view.as_object_mut() { o.insert("named".into(), true.into()); }
                    });
                }/>
            </label>
            <label class="field">"Description "
                <textarea data-testid="description" rows="2" prop:value=move || ctx.scenario.with(|s| s.description.clone()) on:change=move |ev| {
                    let d = event_target_value(&ev);
                    ctx.edit(|s| s.description = d);
                }></textarea>
            </label>
        </details>
    }
}

//! The root component and the app's state (`Ctx`) with its actions: run, pause, step, reset.

use crate::browser;
use crate::components::{controls::Controls, lanes::LanesView};
use crate::replay::{Replay, BUNDLED_CACHE_URL};
use crate::tuning::{Lanes, Progress, Tuning};
use crate::url_state::ReplaySettings;
use leptos::prelude::*;
use std::rc::Rc;
use std::time::Duration;
use tunelab_search::kernel_tuner::KernelTunerCache;

/// Milliseconds of engine work per slice before the page gets the thread back.
pub const SLICE_MS: f64 = 8.0;

/// Where a run stands; `as_str` is what the `status` test hook reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Idle,
    Loading,
    Running,
    Paused,
    Done,
}

impl Status {
    /// The word shown (and read by tests).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Idle => "idle",
            Status::Loading => "loading",
            Status::Running => "running",
            Status::Paused => "paused",
            Status::Done => "done",
        }
    }
}

/// The app's state: arena handles, so it is `Copy` and every component can hold it.
#[derive(Clone, Copy)]
pub struct Ctx {
    pub settings: RwSignal<ReplaySettings>,
    pub status: RwSignal<Status>,
    pub error: RwSignal<Option<String>>,
    pub progress: RwSignal<Vec<Progress>>,
    lanes: StoredValue<Option<Lanes>, LocalStorage>,
    cache: StoredValue<Option<Rc<KernelTunerCache>>, LocalStorage>,
}

impl Ctx {
    fn new() -> Ctx {
        let (settings, error) = match ReplaySettings::decode(&browser::hash()) {
            Ok(s) => (s, None),
            Err(e) => (ReplaySettings::default(), Some(format!("This link could not be read: {e}. The default scenario is shown instead."))),
        };
        Ctx {
            settings: RwSignal::new(settings),
            status: RwSignal::new(Status::Idle),
            error: RwSignal::new(error),
            progress: RwSignal::new(Vec::new()),
            lanes: StoredValue::new_local(None),
            cache: StoredValue::new_local(None),
        }
    }

    /// Shows an error in the banner.
    pub fn fail(&self, msg: impl Into<String>) {
        self.error.set(Some(msg.into()));
    }

    /// Changes the settings: the link follows, and a run in progress is discarded.
    pub fn update_settings(&self, f: impl FnOnce(&mut ReplaySettings)) {
        self.settings.update(f);
        self.write_url();
        self.reset();
    }

    /// Writes the settings into the fragment (no history entry).
    pub fn write_url(&self) {
        if let Err(e) = browser::replace_hash(&self.settings.get_untracked().encode()) {
            self.fail(e);
        }
    }

    /// Applies a link the user navigated to (hashchange, back/forward).
    pub fn apply_link(&self) {
        match ReplaySettings::decode(&browser::hash()) {
            Ok(s) => {
                if s != self.settings.get_untracked() {
                    self.settings.set(s);
                    self.reset();
                }
            }
            Err(e) => self.fail(format!("This link could not be read: {e}. Your current settings are kept.")),
        }
    }

    /// Starts (or resumes) the run.
    pub fn run(&self) {
        match self.status.get_untracked() {
            Status::Running | Status::Loading => {}
            Status::Paused if self.lanes.with_value(|l| l.is_some()) => {
                self.status.set(Status::Running);
                self.schedule();
            }
            _ => self.start(true),
        }
    }

    /// Pauses a running run.
    pub fn pause(&self) {
        if self.status.get_untracked() == Status::Running {
            self.status.set(Status::Paused);
        }
    }

    /// One evaluation per strategy.
    pub fn step(&self) {
        match self.status.get_untracked() {
            Status::Running | Status::Loading => {}
            Status::Paused => self.step_now(),
            _ => self.start(false),
        }
    }

    /// Discards the run.
    pub fn reset(&self) {
        self.lanes.set_value(None);
        self.progress.set(Vec::new());
        self.status.set(Status::Idle);
    }

    fn start(&self, run: bool) {
        let ctx = *self;
        self.status.set(Status::Loading);
        self.write_url();
        leptos::task::spawn_local(async move {
            if let Err(e) = ctx.ensure_cache().await.and_then(|_| ctx.build_lanes()) {
                ctx.fail(e);
                ctx.status.set(Status::Idle);
                return;
            }
            if run {
                ctx.status.set(Status::Running);
                ctx.schedule();
            } else {
                ctx.status.set(Status::Paused);
                ctx.step_now();
            }
        });
    }

    async fn ensure_cache(&self) -> Result<(), String> {
        if self.cache.with_value(|c| c.is_some()) {
            return Ok(());
        }
        let text = browser::fetch_text(BUNDLED_CACHE_URL).await?;
        let cache = KernelTunerCache::parse(&text).map_err(|e| format!("the bundled cache: {e}"))?;
        self.cache.set_value(Some(Rc::new(cache)));
        Ok(())
    }

    fn build_lanes(&self) -> Result<(), String> {
        let cache = self.cache.with_value(|c| c.clone()).ok_or("the cache is not loaded")?;
        let s = self.settings.get_untracked();
        let mut lanes: Vec<Box<dyn Tuning>> = Vec::new();
        for name in &s.strategies {
            lanes.push(Box::new(Replay::new(cache.clone(), name, s.budget, s.seed)?));
        }
        let lanes = Lanes::new(lanes)?;
        self.progress.set(lanes.progress());
        self.lanes.set_value(Some(lanes));
        Ok(())
    }

    fn step_now(&self) {
        let done = self.lanes.try_update_value(|l| l.as_mut().map(|l| l.step_once())).flatten();
        self.publish(done.unwrap_or(false));
    }

    fn publish(&self, done: bool) {
        if let Some(p) = self.lanes.with_value(|l| l.as_ref().map(|l| l.progress())) {
            self.progress.set(p);
        }
        if done {
            self.status.set(Status::Done);
        }
    }

    fn schedule(&self) {
        let ctx = *self;
        set_timeout(move || ctx.slice(), Duration::from_millis(0));
    }

    fn slice(&self) {
        if self.status.get_untracked() != Status::Running {
            return;
        }
        let done = self
            .lanes
            .try_update_value(|l| l.as_mut().map(|l| l.run_slice(SLICE_MS, &browser::now_ms)))
            .flatten();
        match done {
            None => self.status.set(Status::Idle),
            Some(done) => {
                self.publish(done);
                if !done {
                    self.schedule();
                }
            }
        }
    }
}

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let ctx = Ctx::new();
    provide_context(ctx);
    let on_link = move || ctx.apply_link();
    let h1 = window_event_listener(leptos::ev::hashchange, move |_| on_link());
    let h2 = window_event_listener(leptos::ev::popstate, move |_| on_link());
    on_cleanup(move || {
        h1.remove();
        h2.remove();
    });
    view! {
        <header class="top">
            <h1>"Tunelab"</h1>
            <p class="tagline">"Auto-tuning simulator for AI models on Ascend NPUs, running entirely in your browser."</p>
        </header>
        <ErrorBanner/>
        <main>
            <Controls/>
            <LanesView/>
        </main>
        <footer>
            "Everything here is computed in this page by the Tunelab engine compiled to WebAssembly. "
            "The replay below uses real measurements (a Kernel Tuner cache); device estimates elsewhere are a model, not measurements."
        </footer>
    }
}

/// The error banner (`data-testid="error"`); its text is plain text, never markup.
#[component]
fn ErrorBanner() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    view! {
        <Show when=move || ctx.error.with(|e| e.is_some())>
            <div class="error" role="alert" data-testid="error">
                <span>{move || ctx.error.get().unwrap_or_default()}</span>
                <button class="dismiss" on:click=move |_| ctx.error.set(None)>"Dismiss"</button>
            </div>
        </Show>
    }
}

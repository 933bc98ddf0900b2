//! The app's state (`Ctx`) and its actions: edit the scenario, run, pause, step, reset, follow
//! links. Everything the components change goes through here, so state flows from one place.

use crate::browser;
use crate::session::{RunView, Session};
use crate::url_state;
use leptos::prelude::*;
#[cfg(feature = "page-engine")]
use std::time::Duration;
use tunelab_scenario::Scenario;

/// Milliseconds of engine work per slice before the page gets the thread back.
pub const SLICE_MS: f64 = 8.0;
/// Least time between two redraws of the live views during a run. Redrawing is a task of its
/// own (never in the same task as engine work), so neither grows past a frame or two.
pub const REDRAW_MS: f64 = 150.0;
/// Most earlier trials a warm start hands to each strategy: the one constant the CLI uses too.
pub use tunelab_scenario::knowledge::WARM_LIMIT;

/// Where a run stands; `as_str` is what the `status` test hook reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Idle,
    Running,
    Paused,
    Done,
}

impl Status {
    /// The word shown (and read by tests).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Idle => "idle",
            Status::Running => "running",
            Status::Paused => "paused",
            Status::Done => "done",
        }
    }
}

/// The panels of the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    Tune,
    Explore,
    Report,
    Knowledge,
}

impl Tab {
    /// The name kept in the scenario's `view` object (and so in the link).
    pub fn name(self) -> &'static str {
        match self {
            Tab::Tune => "tune",
            Tab::Explore => "explore",
            Tab::Report => "report",
            Tab::Knowledge => "knowledge",
        }
    }

    /// The tab a scenario's `view` asks for (Tune when absent or unknown).
    pub fn from_view(view: &serde_json::Value) -> Tab {
        match view.get("tab").and_then(|t| t.as_str()) {
            Some("explore") => Tab::Explore,
            Some("report") => Tab::Report,
            Some("knowledge") => Tab::Knowledge,
            _ => Tab::Tune,
        }
    }
}

/// The app's state: arena handles, so it is `Copy` and every component can hold it.
#[derive(Clone, Copy)]
pub struct Ctx {
    pub scenario: RwSignal<Scenario>,
    pub status: RwSignal<Status>,
    pub error: RwSignal<Option<String>>,
    /// Keys the opened scenario carries that Tunelab does not read (the input-warnings banner).
    pub input_warnings: RwSignal<Vec<String>>,
    pub view: RwSignal<Option<RunView>>,
    pub tab: RwSignal<Tab>,
    /// Start runs from similar cases of this browser's knowledge base (transfer). Off by
    /// default: a link then reproduces its trials anywhere, which a local warm start cannot.
    pub warm: RwSignal<bool>,
    /// What the last warm start did, for the knowledge-base view.
    pub warm_note: RwSignal<String>,
    /// Configurations pinned for side-by-side comparison (from the trial table, a typed
    /// configuration, or a click on a chart's point). Cleared when the scenario changes.
    pub pins: RwSignal<Vec<tunelab_search::Config>>,
    session: StoredValue<Option<Session>, LocalStorage>,
    last_redraw: StoredValue<f64>,
    /// Bumped whenever a run starts or is discarded, so a slice scheduled for an older run
    /// stops instead of driving the new one twice.
    generation: StoredValue<u64>,
}

impl Ctx {
    /// State from the page's link (or the default scenario, with a banner if the link is bad).
    pub fn new() -> Ctx {
        let (scenario, error, unknown) = match url_state::read_reporting(&browser::hash()) {
            Ok(Some((s, unknown))) => (s, None, unknown),
            Ok(None) => (url_state::default_scenario(), None, Vec::new()),
            Err(e) => (url_state::default_scenario(), Some(format!("This link could not be read: {e}. The default scenario is shown instead.")), Vec::new()),
        };
        let tab = Tab::from_view(&scenario.view);
        Ctx {
            scenario: RwSignal::new(scenario),
            status: RwSignal::new(Status::Idle),
            error: RwSignal::new(error),
            input_warnings: RwSignal::new(unknown),
            view: RwSignal::new(None),
            tab: RwSignal::new(tab),
            warm: RwSignal::new(false),
            warm_note: RwSignal::new(String::new()),
            pins: RwSignal::new(Vec::new()),
            session: StoredValue::new_local(None),
            last_redraw: StoredValue::new(0.0),
            generation: StoredValue::new(0),
        }
    }

    /// Shows an error (plain text) next to the control whose action caused it, or in the
    /// banner when no recent action did (`crate::inline_error`).
    pub fn fail(&self, msg: impl Into<String>) {
        // No wall of digits in a message (issue 44).
        let msg = tunelab_scenario::spec::messages::shorten_numbers(&msg.into());
        if crate::inline_error::show_near_last_action(&msg) {
            self.error.set(None);
        } else {
            self.error.set(Some(msg));
        }
    }

    /// Always the banner: a problem of the whole page, whatever was clicked last.
    pub fn fail_page(&self, msg: impl Into<String>) {
        crate::inline_error::clear();
        self.error.set(Some(tunelab_scenario::spec::messages::shorten_numbers(&msg.into())));
    }

    /// Edits the scenario: it is validated first (a bad edit is refused with a banner and the
    /// scenario stays as it was), then the link follows and any run is discarded.
    pub fn edit(&self, f: impl FnOnce(&mut Scenario)) -> bool {
        let mut s = self.scenario.get_untracked();
        f(&mut s);
        self.replace(s)
    }

    /// Replaces the whole scenario (bundled pick, upload, template), validated.
    pub fn replace(&self, s: Scenario) -> bool {
        if let Err(e) = s.validate() {
            self.fail(format!("That change was not applied: {e}"));
            return false;
        }
        self.scenario.set(s);
        self.pins.set(Vec::new());
        self.write_url();
        self.reset();
        true
    }

    /// Shows a tab and keeps the choice in the link's UI state (the run is kept: the engine
    /// never reads `view`).
    pub fn show_tab(&self, t: Tab) {
        self.tab.set(t);
        self.scenario.update(|s| {
            if !s.view.is_object() {
                s.view = serde_json::Value::Object(Default::default());
            }
            if let Some(o) = s.view.as_object_mut() {
                o.insert("tab".into(), t.name().into());
            }
        });
        self.write_url();
    }

    /// Writes the scenario into the fragment (no history entry).
    pub fn write_url(&self) {
        let frag = self.scenario.with_untracked(url_state::write);
        if let Err(e) = browser::replace_hash(&frag) {
            self.fail(e);
        }
    }

    /// Applies a link the user navigated to (hashchange, back/forward); a bad one keeps the
    /// current scenario and says why.
    pub fn apply_link(&self) {
        match url_state::read_reporting(&browser::hash()) {
            Ok(Some((s, unknown))) => {
                self.input_warnings.set(unknown);
                let mut current = self.scenario.get_untracked();
                self.tab.set(Tab::from_view(&s.view));
                current.view = s.view.clone();
                if s != current {
                    self.scenario.set(s);
                    self.reset();
                } else {
                    self.scenario.update(|c| c.view = s.view);
                }
            }
            Ok(None) => {}
            Err(e) => self.fail(format!("This link could not be read: {e}. Your current scenario is kept.")),
        }
    }

    /// Starts or resumes the run (in Web Workers where the browser has them).
    pub fn run(&self) {
        crate::worker::driver::run(self)
    }

    /// Pauses a running run.
    pub fn pause(&self) {
        crate::worker::driver::pause(self)
    }

    /// One evaluation for every strategy still going.
    pub fn step(&self) {
        crate::worker::driver::step(self)
    }

    /// Discards the run.
    pub fn reset(&self) {
        crate::worker::driver::reset();
        self.reset_local();
    }

    /// Without the page engine (the release page) there is no stepping on the page: says why.
    #[cfg(not(feature = "page-engine"))]
    pub(crate) fn run_local(&self) {
        self.no_page_engine();
    }

    #[cfg(not(feature = "page-engine"))]
    pub(crate) fn step_local(&self) {
        self.no_page_engine();
    }

    #[cfg(not(feature = "page-engine"))]
    fn no_page_engine(&self) {
        let why = crate::worker::driver::why_no_workers().unwrap_or_else(|| "workers are turned off (localStorage tunelab.workers = 0)".into());
        self.fail(format!("This page runs its engine in Web Workers and none could be used: {why}."));
        self.status.set(Status::Idle);
    }

    /// Starts or resumes the run in slices on the page (no workers).
    #[cfg(feature = "page-engine")]
    pub(crate) fn run_local(&self) {
        match self.status.get_untracked() {
            Status::Running => {}
            Status::Paused if self.has_session() => {
                self.status.set(Status::Running);
                self.schedule();
            }
            _ => {
                // Building the run is a task of its own, apart from the click and from redraws.
                self.status.set(Status::Running);
                let ctx = *self;
                set_timeout(
                    move || {
                        if ctx.status.get_untracked() == Status::Running && ctx.start() {
                            ctx.schedule();
                        }
                    },
                    Duration::from_millis(0),
                );
            }
        }
    }

    pub(crate) fn pause_local(&self) {
        if self.status.get_untracked() == Status::Running {
            self.generation.update_value(|g| *g += 1);
            self.status.set(Status::Paused);
            self.publish();
        }
    }

    /// One evaluation for every lane, on the page.
    #[cfg(feature = "page-engine")]
    pub(crate) fn step_local(&self) {
        match self.status.get_untracked() {
            Status::Running => return,
            Status::Paused if self.has_session() => {}
            _ => {
                if !self.start() {
                    return;
                }
            }
        }
        let done = self.session.try_update_value(|s| s.as_mut().map(|s| s.step_each())).flatten().unwrap_or(false);
        self.publish();
        self.status.set(if done { Status::Done } else { Status::Paused });
    }

    pub(crate) fn reset_local(&self) {
        self.generation.update_value(|g| *g += 1);
        self.session.set_value(None);
        self.view.set(None);
        self.status.set(Status::Idle);
    }

    /// Reads the session (reports, exports); None before a run.
    pub fn with_session<R>(&self, f: impl FnOnce(&Session) -> R) -> Option<R> {
        self.session.with_value(|s| s.as_ref().map(f))
    }

    /// Changes the session (the worker driver mirrors trials into it).
    pub(crate) fn with_session_mut<R>(&self, f: impl FnOnce(&mut Session) -> R) -> Option<R> {
        self.session.try_update_value(|s| s.as_mut().map(f)).flatten()
    }

    pub(crate) fn last_redraw(&self) -> f64 {
        self.last_redraw.get_value()
    }

    pub(crate) fn set_last_redraw(&self, t: f64) {
        self.last_redraw.set_value(t);
    }

    pub(crate) fn has_session(&self) -> bool {
        self.session.with_value(|s| s.is_some())
    }

    #[cfg(feature = "page-engine")]
    pub(crate) fn start(&self) -> bool {
        self.start_with(Session::new)
    }



    /// Starts with a session `make` builds (the worker driver's mirror takes a priced baseline).
    pub(crate) fn start_with(&self, make: impl FnOnce(&Scenario) -> Result<Session, String>) -> bool {
        self.write_url();
        let t0 = browser::now_ms();
        let made = make(&self.scenario.get_untracked());
        browser::record_timing("start", browser::now_ms() - t0);
        match made {
            Ok(s) => {
                // The release page's warm start happens in the workers (`worker::driver`).
                #[cfg(feature = "page-engine")]
                let s = {
                    let mut s = s;
                    if self.warm.get_untracked() {
                        self.warm_start(&mut s);
                    }
                    s
                };
                self.generation.update_value(|g| *g += 1);
                self.session.set_value(Some(s));
                self.last_redraw.set_value(0.0);
                true
            }
            Err(e) => {
                self.fail(format!("This scenario cannot run: {e}"));
                self.status.set(Status::Idle);
                false
            }
        }
    }

    #[cfg(feature = "page-engine")]
    fn warm_start(&self, s: &mut Session) {
        let kb = crate::kb_store::load(*self);
        let note = match self.scenario.with_untracked(tunelab_scenario::cases::fingerprint_of) {
            Ok(fp) => {
                let earlier = kb.warm_trials(&fp, s.run().space(), s.run().metrics(), WARM_LIMIT);
                match s.warm_start(&earlier) {
                    Ok(kept) => format!("Warm start: {kept} earlier trials from similar cases given to each strategy."),
                    Err(e) => format!("Warm start skipped: {e}"),
                }
            }
            Err(e) => format!("Warm start skipped: {e}"),
        };
        self.warm_note.set(note);
    }

    pub(crate) fn publish(&self) {
        let t0 = browser::now_ms();
        let v = self.with_session(|s| s.view());
        let t1 = browser::now_ms();
        self.view.set(v);
        let t2 = browser::now_ms();
        browser::record_timing("view", t1 - t0);
        browser::record_timing("redraw", t2 - t1);
    }

    #[cfg(feature = "page-engine")]
    fn schedule(&self) {
        let ctx = *self;
        let generation = self.generation.get_value();
        set_timeout(move || ctx.slice(generation), Duration::from_millis(0));
    }

    #[cfg(feature = "page-engine")]
    fn slice(&self, generation: u64) {
        if self.status.get_untracked() != Status::Running || self.generation.get_value() != generation {
            return;
        }
        let t0 = browser::now_ms();
        let done = self.session.try_update_value(|s| s.as_mut().map(|s| s.run_slice(SLICE_MS, &browser::now_ms))).flatten();
        browser::record_timing("slice", browser::now_ms() - t0);
        match done {
            None => self.status.set(Status::Idle),
            Some(true) => {
                self.publish();
                self.status.set(Status::Done);
            }
            Some(false) if browser::now_ms() - self.last_redraw.get_value() >= REDRAW_MS => {
                // Redraw in a task of its own, then carry on.
                let ctx = *self;
                set_timeout(
                    move || {
                        if ctx.generation.get_value() != generation {
                            return;
                        }
                        ctx.publish();
                        ctx.last_redraw.set_value(browser::now_ms());
                        ctx.schedule();
                    },
                    Duration::from_millis(0),
                );
            }
            Some(false) => self.schedule(),
        }
    }
}

impl Default for Ctx {
    fn default() -> Self {
        Ctx::new()
    }
}

//! A worker's job: one lane of a run, stepped on its own (see `Run::step_lane`).

use super::protocol::{FromWorker, LaneUpdate, ToWorker};
use serde_json::Value as Json;
use tunelab_scenario::Run;

/// Milliseconds of stepping per slice before the worker reads its messages again (Pause and
/// Step wait at most this long).
pub const SLICE_MS: f64 = 20.0;
/// Least time between two updates while running.
pub const UPDATE_MS: f64 = 100.0;

/// The lanes of a run one worker steps (round-robin among them, like `Run::step`).
pub struct LaneJob {
    pub(crate) run: Run,
    id: u64,
    lanes: Vec<Own>,
    busy_ms: f64,
}

/// What the job tracks per owned lane.
struct Own {
    lane: usize,
    sent: usize,
    seen_batches: usize,
    snapshots: Vec<Json>,
    log: Vec<String>,
}

impl LaneJob {
    pub fn new(id: u64, lanes: &[usize], scenario: &tunelab_scenario::Scenario, warm: &[tunelab_search::Trial]) -> Result<LaneJob, String> {
        LaneJob::with_landscape(id, lanes, scenario, warm, None)
    }

    /// A job on a landscape built from a cache file's bytes (`WorkerState::landscape_for`).
    pub fn with_landscape(
        id: u64,
        lanes: &[usize],
        scenario: &tunelab_scenario::Scenario,
        warm: &[tunelab_search::Trial],
        land: Option<std::sync::Arc<tunelab_scenario::stages::landscape::Landscape>>,
    ) -> Result<LaneJob, String> {
        let mut run = match land {
            Some(l) => Run::with_landscape(scenario, l)?,
            None => Run::new(scenario)?,
        };
        let n = run.lanes().len();
        if let Some(bad) = lanes.iter().find(|&&l| l >= n) {
            return Err(format!("the scenario has {n} strategies, no lane {bad}"));
        }
        if lanes.is_empty() {
            return Err("a worker was given no lane to run".into());
        }
        if !warm.is_empty() {
            run.warm_start(warm)?;
        }
        // The page builds the same run, so it already holds each lane's starting (warm) trials.
        let lanes = lanes
            .iter()
            .map(|&lane| Own { lane, sent: run.lanes()[lane].study.trials().len(), seen_batches: 0, snapshots: Vec::new(), log: Vec::new() })
            .collect();
        Ok(LaneJob { run, id, lanes, busy_ms: 0.0 })
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// True once every owned lane stopped.
    pub fn done(&self) -> bool {
        self.lanes.iter().all(|o| self.run.lanes()[o.lane].study.is_done())
    }

    /// One study step for each owned lane still going; returns true once all are done.
    pub fn step_each(&mut self) -> bool {
        let metric = self.run.metrics()[0].clone();
        for o in &mut self.lanes {
            let p = self.run.step_lane(o.lane, 1);
            for g in &p.generations {
                o.log.push(format!("{}: {}", g.strategy, g.describe(&metric)));
            }
            let batches = self.run.lanes()[o.lane].study.batches();
            if batches != o.seen_batches {
                o.seen_batches = batches;
                o.snapshots.push(crate::history_entry(serde_json::to_value(self.run.snapshot(o.lane)).unwrap_or(Json::Null)));
            }
        }
        self.done()
    }

    /// Steps until done or `ms` passed on `now`'s clock; returns true once done.
    pub fn slice(&mut self, ms: f64, now: &dyn Fn() -> f64) -> bool {
        let t0 = now();
        let done = loop {
            if self.step_each() {
                break true;
            }
            if now() - t0 >= ms {
                break false;
            }
        };
        self.busy_ms += now() - t0;
        done
    }

    /// Everything new since the last update, one entry per owned lane.
    pub fn update(&mut self, idle: bool) -> FromWorker {
        let idle = idle || self.done();
        let busy_ms = std::mem::take(&mut self.busy_ms);
        let lanes = self
            .lanes
            .iter_mut()
            .map(|o| {
                let study = &self.run.lanes()[o.lane].study;
                let trials = study.trials()[o.sent..].to_vec();
                o.sent = study.trials().len();
                LaneUpdate {
                    run: self.id,
                    lane: o.lane,
                    trials,
                    batches: study.batches(),
                    stop: study.stop_reason().cloned(),
                    snapshot: serde_json::to_value(self.run.snapshot(o.lane)).unwrap_or(Json::Null),
                    snapshots: std::mem::take(&mut o.snapshots),
                    log: std::mem::take(&mut o.log),
                    idle,
                    busy_ms,
                }
            })
            .collect();
        FromWorker::Update { lanes }
    }
}

/// A worker's whole state: its job and whether it is stepping on its own.
#[derive(Default)]
pub struct WorkerState {
    pub job: Option<LaneJob>,
    pub running: bool,
    pub last_update: f64,
    /// The last cache file the page sent (a binary message before Start), and the landscape
    /// built from it (kept across runs on the same cache; parsed once).
    pub cache_bytes: Option<Vec<u8>>,
    land: Option<std::sync::Arc<tunelab_scenario::stages::landscape::Landscape>>,
}

impl WorkerState {
    /// A cache file's bytes from the page (the next Start's landscape is built from them).
    pub fn set_cache_bytes(&mut self, bytes: Vec<u8>) {
        self.cache_bytes = Some(bytes);
        self.land = None;
    }

    /// The landscape a cache-landscape scenario runs on, from the bytes the page sent (None for
    /// other scenarios and toy landscapes, which build themselves).
    fn landscape_for(&mut self, s: &tunelab_scenario::Scenario) -> Result<Option<std::sync::Arc<tunelab_scenario::stages::landscape::Landscape>>, String> {
        use tunelab_scenario::stages::landscape::{needs_bytes, Landscape};
        if needs_bytes(s).is_none() {
            return Ok(None);
        }
        if let Some(l) = self.land.as_ref().filter(|l| s.landscape.as_ref() == Some(l.source())) {
            return Ok(Some(l.clone()));
        }
        let l = Landscape::build(s, self.cache_bytes.as_deref())?;
        self.land = Some(l.clone());
        Ok(Some(l))
    }

    /// Handles one message; returns the replies to send now.
    pub fn handle(&mut self, msg: ToWorker, now: f64) -> Vec<FromWorker> {
        match msg {
            ToWorker::Start { run, lanes, scenario, warm } => {
                self.running = false;
                match self.landscape_for(&scenario).and_then(|land| LaneJob::with_landscape(run, &lanes, &scenario, &warm, land)) {
                    Ok(j) => {
                        let baseline = super::protocol::Baseline::from(j.run.baseline());
                        let shape = j.run.landscape().is_none().then(|| Box::new(j.run.shape()));
                        let transferred = j.run.transferred().to_vec();
                        self.job = Some(j);
                        vec![FromWorker::Started { run, baseline, shape, transferred }]
                    }
                    Err(message) => {
                        self.job = None;
                        vec![FromWorker::Error { run, message }]
                    }
                }
            }
            ToWorker::Go { run } => {
                if self.job.as_ref().is_some_and(|j| j.id() == run) {
                    self.running = true;
                    self.last_update = now;
                }
                Vec::new()
            }
            ToWorker::Pause { run } => match self.job.as_mut() {
                Some(j) if j.id() == run => {
                    self.running = false;
                    vec![j.update(true)]
                }
                _ => Vec::new(),
            },
            ToWorker::Step { run } => match self.job.as_mut() {
                Some(j) if j.id() == run => {
                    self.running = false;
                    j.step_each();
                    vec![j.update(true)]
                }
                _ => Vec::new(),
            },
            ToWorker::Tune { run, scenario, chip, budget, port } => {
                vec![FromWorker::Tuned { run, row: Box::new(tunelab_scenario::chips::chip_row(&scenario, &chip, budget, port.as_ref())) }]
            }
            ToWorker::Heatmap { run, scenario, x, y } => {
                vec![FromWorker::Heatmap { run, map: tunelab_scenario::explore::heatmap(&scenario, &x, &y, None).map(Box::new) }]
            }
            ToWorker::Detail { run, scenario, config } => {
                vec![FromWorker::Detail { run, detail: tunelab_scenario::explore::point_detail(&scenario, &config).map(Box::new) }]
            }
            ToWorker::Ask { run, question } => vec![FromWorker::Answer { run, answer: crate::questions::answer(*question).map(Box::new) }],
            ToWorker::Drop => {
                self.job = None;
                self.running = false;
                Vec::new()
            }
        }
    }

    /// One slice of stepping while running; returns an update when one is due (done, or
    /// `UPDATE_MS` since the last).
    pub fn tick(&mut self, now: &dyn Fn() -> f64) -> Option<FromWorker> {
        if !self.running {
            return None;
        }
        let j = self.job.as_mut()?;
        if j.slice(SLICE_MS, now) {
            self.running = false;
            return Some(j.update(true));
        }
        let t = now();
        if t - self.last_update >= UPDATE_MS {
            self.last_update = t;
            return Some(j.update(false));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tunelab_scenario::{bundled_scenario, Scenario};

    fn compare() -> Scenario {
        let mut s = bundled_scenario("llama2-7b-910B2-compare").unwrap();
        s.budget = 40;
        s
    }

    /// Explore in a worker: the heat map and a point's detail that come back through the JSON
    /// protocol are the very ones the page would have computed (same function, same bits).
    #[test]
    fn explore_answers_equal_the_direct_call() {
        let s = bundled_scenario("llama2-7b-910B2-deployment").unwrap();
        let st = tunelab_scenario::setup(&s).unwrap();
        let (x, y) = (st.space.names()[0].clone(), st.space.names()[1].clone());
        let mut w = WorkerState::default();
        let ask = ToWorker::Heatmap { run: 3, scenario: Box::new(s.clone()), x: x.clone(), y: y.clone() };
        let r = w.handle(ToWorker::from_text(&ask.to_text()).unwrap(), 0.0);
        let [FromWorker::Heatmap { run: 3, map: Ok(map) }] = &FromWorker::from_text(&r[0].to_text()).map(|m| [m]).unwrap() else { panic!("{r:?}") };
        assert_eq!(**map, tunelab_scenario::explore::heatmap(&s, &x, &y, None).unwrap());
        let ask = ToWorker::Detail { run: 4, scenario: Box::new(s.clone()), config: st.baseline.clone() };
        let r = w.handle(ToWorker::from_text(&ask.to_text()).unwrap(), 0.0);
        let [FromWorker::Detail { run: 4, detail: Ok(d) }] = &FromWorker::from_text(&r[0].to_text()).map(|m| [m]).unwrap() else { panic!("{r:?}") };
        assert_eq!(**d, tunelab_scenario::explore::point_detail(&s, &st.baseline).unwrap());
        let bad = ToWorker::Heatmap { run: 5, scenario: Box::new(s), x: x.clone(), y: x };
        assert!(matches!(&w.handle(bad, 0.0)[..], [FromWorker::Heatmap { run: 5, map: Err(_) }]));
    }

    #[test]
    fn stale_and_bad_messages_are_refused() {
        let mut w = WorkerState::default();
        assert!(ToWorker::from_text("{\"kind\":\"nonsense\"}").is_err());
        let r = w.handle(ToWorker::Start { run: 1, lanes: vec![9], scenario: Box::new(compare()), warm: Vec::new() }, 0.0);
        assert!(matches!(&r[..], [FromWorker::Error { message, .. }] if message.contains("no lane 9")));
        assert_eq!(w.handle(ToWorker::Start { run: 2, lanes: vec![0], scenario: Box::new(compare()), warm: Vec::new() }, 0.0).len(), 1);
        assert!(w.handle(ToWorker::Step { run: 1 }, 0.0).is_empty(), "a step for an older run is ignored");
        assert_eq!(w.handle(ToWorker::Step { run: 2 }, 0.0).len(), 1);
    }
}

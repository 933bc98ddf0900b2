//! The page's mirror of runs its engine workers step: a lane stepped alone in a worker
//! (`tunelab_engine::lane`), mirrored into the page's `Session` through the JSON protocol, gives
//! the CLI's trials bit for bit.

#[cfg(all(test, feature = "page-engine"))] // they step runs on the page
mod tests {
    use tunelab_engine::lane::WorkerState;
    use tunelab_engine::protocol::{FromWorker, ToWorker};
    use crate::session::Session;
    use std::cell::Cell;
    use tunelab_scenario::{bundled_scenario, Scenario};

    fn compare() -> Scenario {
        let mut s = bundled_scenario("llama2-7b-910B2-compare").unwrap();
        s.budget = 40;
        s
    }

    fn absorb(page: &mut Session, r: FromWorker) {
        let FromWorker::Update { lanes } = FromWorker::from_text(&r.to_text()).unwrap() else { panic!("error reply") };
        for u in &lanes {
            page.absorb(u).unwrap();
        }
    }

    /// Lanes stepped alone in "workers", their updates mirrored into a page session through the
    /// JSON protocol, give the very trials (digest) of the CLI's round-robin run.
    #[test]
    fn workers_mirrored_on_the_page_match_a_straight_run() {
        let s = compare();
        let lanes = Session::new(&s).unwrap().run().lanes().len();
        assert!(lanes >= 3);
        let t = Cell::new(0.0);
        let now = || {
            t.set(t.get() + 0.5);
            t.get()
        };
        // Lane 0 alone in one worker, the others together in a second one.
        let mut workers: Vec<WorkerState> = (0..2).map(|_| WorkerState::default()).collect();
        let owned = [vec![0], (1..lanes).collect::<Vec<_>>()];
        let mut started = None;
        for (i, w) in workers.iter_mut().enumerate() {
            let start = ToWorker::Start { run: 7, lanes: owned[i].clone(), scenario: Box::new(s.clone()), warm: Vec::new() };
            let r = w.handle(ToWorker::from_text(&start.to_text()).unwrap(), 0.0);
            assert!(matches!(&r[..], [FromWorker::Started { run: 7, .. }]));
            started.get_or_insert(r[0].clone());
        }
        // The page's mirror takes the baseline a worker priced and the run's shape (after a JSON
        // round trip): it builds no stage of its own (`Run::from_shape`).
        let FromWorker::Started { baseline, shape, .. } = FromWorker::from_text(&started.unwrap().to_text()).unwrap() else { panic!() };
        assert!(shape.is_some(), "a worker sends the run's shape");
        let mut page = Session::mirror(&s, baseline.into(), shape.map(|b| *b)).unwrap();
        // A Step to every lane advances each by one evaluation.
        for w in workers.iter_mut() {
            for r in w.handle(ToWorker::Step { run: 7 }, 0.0) {
                absorb(&mut page, r);
            }
        }
        assert!(page.view().lanes.iter().all(|l| l.evaluations == 1), "{:?}", page.view().lanes.iter().map(|l| l.evaluations).collect::<Vec<_>>());
        for w in workers.iter_mut() {
            w.handle(ToWorker::Go { run: 7 }, 0.0);
        }
        let mut guard = 0;
        while !page.done() {
            guard += 1;
            assert!(guard < 100_000);
            for w in workers.iter_mut() {
                if let Some(r) = w.tick(&now) {
                    absorb(&mut page, r);
                }
            }
        }
        let mut straight = Session::new(&s).unwrap();
        while !straight.step(1000) {}
        assert_eq!(page.run().digest(), straight.run().digest());
        assert_eq!(page.view().best, straight.view().best);
        assert_eq!(page.run().report(), straight.run().report());
        // Teaching snapshots came across too.
        assert!(page.view().lanes.iter().any(|l| !l.snapshots.is_empty()));
    }
}

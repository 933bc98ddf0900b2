//! The landscape stage: Kernel Tuner caches (bundled or dropped) and toy functions raced through
//! the same Run/Study path as every stage, checked against `kernel_tuner::replay` (what
//! `tunelab replay` runs), with the errors a user meets when a file is missing or different.

use std::sync::Arc;
use tunelab_scenario::stages::landscape::{self, DroppedCache, KernelTunerSource, Landscape, LandscapeSource, Needed, ToySpec};
use tunelab_scenario::{url, Run, Scenario, Stage};
use tunelab_search::kernel_tuner;
use tunelab_search::{Outcome, TrialState, Value};

fn cache_bytes(file: &str) -> Vec<u8> {
    std::fs::read(format!("{}/../../assets/kernel-tuner/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn scenario(source: LandscapeSource, strategy: &str, budget: usize, seed: u64) -> Scenario {
    let mut s = Scenario { stage: Stage::Landscape, landscape: Some(source), budget, seed, ..Scenario::default() };
    s.strategy.name = strategy.into();
    s
}

fn bundled(name: &str) -> LandscapeSource {
    LandscapeSource::KernelTuner(KernelTunerSource::Bundled(name.into()))
}

fn toy(function: &str, resolution: usize) -> LandscapeSource {
    LandscapeSource::Toy(ToySpec { function: function.into(), resolution })
}

#[test]
fn sha256_matches_the_standard_vectors() {
    for (msg, hex) in [
        (&b""[..], "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        (&b"abc"[..], "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (&b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"[..], "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ] {
        assert_eq!(landscape::sha256_hex(msg), hex);
    }
    // Padding boundaries: 55, 56 and 64 bytes, and several blocks.
    for (n, hex) in [
        (55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
        (56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
        (64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
        (1000, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"),
    ] {
        assert_eq!(landscape::sha256_hex(&vec![b'a'; n]), hex, "{n} bytes");
    }
}

#[test]
fn lane_zero_replays_exactly_what_tunelab_replay_finds() {
    // pnpoly has failed configurations: they must fail and cost budget in both paths.
    for (name, file) in [("pnpoly_RTX_2080_Ti", "pnpoly_RTX_2080_Ti.json.gz"), ("convolution_MI250X", "convolution_MI250X.json.gz")] {
        let bytes = cache_bytes(file);
        let cache = kernel_tuner::load_bytes(&bytes).unwrap();
        for strategy in ["random", "annealing", "genetic", "auto"] {
            for seed in [0, 3] {
                let s = scenario(bundled(name), strategy, 60, seed);
                let land = Landscape::build(&s, Some(&bytes)).unwrap();
                let mut run = Run::with_landscape(&s, land.clone()).unwrap();
                run.run_to_end();
                let want = kernel_tuner::replay(&cache, strategy, &serde_json::json!({}), 60, seed, false).unwrap();
                let lane = &run.lanes()[0].study;
                assert_eq!(run.best_value(0), want.best, "{name} {strategy} seed {seed}");
                assert_eq!(lane.evaluations(), want.evaluations, "{name} {strategy} seed {seed}");
                assert_eq!(lane.failed(), want.failed, "{name} {strategy} seed {seed}");
                assert_eq!(run.best_value(0).and_then(|b| land.ratio(b)), want.ratio);
                // No free "before" trial: every trial is one the strategy asked for.
                assert!(run.lanes()[0].study.trials().iter().all(|t| !t.warm));
            }
        }
        if name.starts_with("pnpoly") {
            let s = scenario(bundled(name), "random", 200, 1);
            let mut run = Run::with_landscape(&s, Landscape::build(&s, Some(&bytes)).unwrap()).unwrap();
            run.run_to_end();
            assert!(run.trials(0).iter().any(|t| t.state == TrialState::Failed), "failed configurations fail");
        }
    }
}

#[test]
fn same_seed_same_trials_and_different_seed_different_trials() {
    let bytes = cache_bytes("convolution_MI250X.json.gz");
    let mut digests = Vec::new();
    for seed in [7, 7, 8] {
        let mut s = scenario(bundled("convolution_MI250X"), "auto", 40, seed);
        s.compare = vec![tunelab_scenario::scenario::StrategySpec { name: "bayes".into(), options: serde_json::json!({}) }];
        let mut run = Run::with_landscape(&s, Landscape::build(&s, Some(&bytes)).unwrap()).unwrap();
        run.run_to_end();
        digests.push(run.digest());
    }
    assert_eq!(digests[0], digests[1]);
    assert_ne!(digests[0], digests[2]);
    // A toy landscape needs no bytes: Run::new builds it.
    let toy_digest = |seed| {
        let mut r = Run::new(&scenario(toy("rastrigin", 41), "genetic", 80, seed)).unwrap();
        r.run_to_end();
        r.digest()
    };
    assert_eq!(toy_digest(2), toy_digest(2));
    assert_ne!(toy_digest(2), toy_digest(5));
}

#[test]
fn a_dropped_cache_is_recorded_by_digest_and_checked_when_given_again() {
    let gz = cache_bytes("pnpoly_RTX_2080_Ti.json.gz");
    let (source, land) = landscape::dropped("my pnpoly.json.gz", &gz).unwrap();
    let LandscapeSource::KernelTuner(KernelTunerSource::Dropped(d)) = &source else { panic!("{source:?}") };
    assert_eq!(d.configs, land.cache().unwrap().len());
    assert_eq!(d.digest.len(), 64);
    // The same cache uncompressed has the same digest (the JSON text is hashed).
    let text = kernel_tuner::text_of(&gz).unwrap();
    assert_eq!(landscape::cache_digest(text.as_bytes()).unwrap(), d.digest);
    let s = scenario(source.clone(), "random", 30, 0);
    assert!(Landscape::build(&s, Some(text.as_bytes())).is_ok());
    // The link carries the name and digest only, and opening it says what to drop.
    let back = url::decode(&url::encode(&s)).unwrap();
    match landscape::needs_bytes(&back) {
        Some(Needed::Dropped { name, digest, message, .. }) => {
            assert_eq!(name, "my pnpoly.json.gz");
            assert_eq!(digest, d.digest);
            assert!(message.contains("drop 'my pnpoly.json.gz' again") && message.contains(&d.digest[..12]), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // No bytes: the error says which file to drop again.
    let e = Run::new(&back).err().unwrap();
    assert!(e.contains("drop 'my pnpoly.json.gz' again"), "{e}");
    // Another file: refused, naming both digests.
    let other = cache_bytes("convolution_MI250X.json.gz");
    let e = Landscape::build(&back, Some(&other)).err().unwrap();
    assert!(e.contains("not the 'my pnpoly.json.gz'") && e.contains(&d.digest), "{e}");
    assert!(e.contains(&landscape::cache_digest(&other).unwrap()), "{e}");
    // A landscape built from one source cannot run another scenario's.
    let toy_land = Landscape::build(&scenario(toy("branin", 8), "random", 5, 0), None).unwrap();
    assert!(Run::with_landscape(&s, toy_land).err().unwrap().contains("another source"));
    // Garbage bytes: a clear error, no panic.
    let e = landscape::dropped("notes.txt", b"hello").err().unwrap();
    assert!(e.contains("notes.txt") && e.contains("not a Kernel Tuner cache"), "{e}");
    let e = landscape::dropped("bin.gz", &[0x1f, 0x8b, 0x08, 0, 0, 0]).err().unwrap();
    assert!(e.contains("bin.gz"), "{e}");
}

#[test]
fn bad_sources_are_refused_naming_the_field() {
    let parse = |j: &str| Scenario::from_json(j).err().unwrap_or_default();
    let e = parse(r#"{"stage":"landscape","landscape":{"kernel_tuner":{"bundled":"conv_H100"}}}"#);
    assert!(e.contains("landscape.kernel_tuner.bundled") && e.contains("conv_H100") && e.contains("convolution_MI250X"), "{e}");
    let e = parse(r#"{"stage":"landscape"}"#);
    assert!(e.contains("landscape") && e.contains("needs a source"), "{e}");
    let e = parse(r#"{"stage":"landscape","landscape":{"toy":{"function":"sphere"}}}"#);
    assert!(e.contains("landscape.toy.function") && e.contains("branin"), "{e}");
    let e = parse(r#"{"stage":"landscape","landscape":{"toy":{"function":"branin","resolution":5000}}}"#);
    assert!(e.contains("landscape.toy.resolution"), "{e}");
    let e = parse(r#"{"stage":"landscape","landscape":{"kernel_tuner":{"dropped":{"name":"a.json","digest":"xyz","configs":3}}}}"#);
    assert!(e.contains("landscape.kernel_tuner.dropped.digest"), "{e}");
    let e = parse(r#"{"stage":"landscape","landscape":{"toy":{"function":"branin"}},"space":{"x":{"fixed":1}}}"#);
    assert!(e.contains("space"), "{e}");
    let e = parse(r#"{"stage":"landscape","landscape":{"fractal":{}}}"#);
    assert!(e.contains("landscape"), "{e}");
    // A bundled name given another file's bytes: refused (a link must race the data it names).
    let s = scenario(bundled("gemm_RTX_3060_laptop"), "random", 5, 0);
    let e = Landscape::build(&s, Some(&cache_bytes("pnpoly_RTX_2080_Ti.json.gz"))).err().unwrap();
    assert!(e.contains("not the one this build ships"), "{e}");
    // Bundled but not loaded: says which file and how to give it.
    let e = Run::new(&scenario(bundled("gemm_RTX_3060_laptop"), "random", 5, 0)).err().unwrap();
    assert!(e.contains("gemm_RTX_3060_laptop.json.gz") && e.contains("--cache"), "{e}");
}

#[test]
fn toy_optimum_is_the_grid_minimum_and_evaluates_as_the_study_sees_it() {
    // Odd resolutions put the origin on the grid: Rastrigin's and Ackley's minimum is exactly 0.
    for f in ["rastrigin", "ackley"] {
        let land = Landscape::build(&scenario(toy(f, 101), "random", 5, 0), None).unwrap();
        let (c, v) = land.optimum().unwrap();
        assert!(v.abs() < 1e-12, "{f}: {v}");
        assert_eq!(c.0, vec![Value::Float(0.0), Value::Float(0.0)], "{f}");
    }
    // Rosenbrock: (1, 1) is on a 41-point grid over [-2, 2] x [-1, 3].
    let land = Landscape::build(&scenario(toy("rosenbrock", 41), "random", 5, 0), None).unwrap();
    assert_eq!(land.optimum().unwrap().1, 0.0);
    // Branin: the grid minimum is close to the analytic 0.397887 and is the brute-force minimum.
    for res in [64, 200] {
        let land = Landscape::build(&scenario(toy("branin", res), "random", 5, 0), None).unwrap();
        let (c, v) = land.optimum().unwrap();
        let all = land.all_points();
        assert_eq!(all.len(), res * res);
        let brute = all.iter().filter_map(|p| p.1).fold(f64::INFINITY, f64::min);
        assert_eq!(v, brute);
        assert!(v >= 0.397887 - 1e-6 && v < 0.397887 + 0.05, "{v}");
        assert_eq!(land.evaluate(&c), Outcome::Ok(vec![v]));
        let (xs, ys, values) = land.grid().unwrap();
        assert_eq!((xs.len(), ys.len(), values.len()), (res, res, res * res));
        assert_eq!((xs[0], xs[res - 1], ys[0], ys[res - 1]), (-5.0, 10.0, 0.0, 15.0));
    }
    // A run's best is a grid value and never beats the optimum; the report says how far it is.
    let s = scenario(toy("himmelblau", 51), "annealing", 100, 4);
    let mut run = Run::new(&s).unwrap();
    run.run_to_end();
    let land = run.landscape().unwrap().clone();
    let opt = land.optimum().unwrap().1;
    let best = run.best_value(0).unwrap();
    assert!(best >= opt);
    let r = run.report();
    let l = r.landscape.as_ref().unwrap();
    assert_eq!(l.optimum, Some(opt));
    assert_eq!(l.strategies[0].2, Some(best - opt));
    assert!(r.to_text().contains("true optimum"), "{}", r.to_text());
    assert!(!r.notes.iter().any(|n| n.contains("analytic device model")));
}

#[test]
fn every_bundled_cache_is_shipped_with_the_digest_recorded_for_it() {
    for (name, file, digest) in landscape::BUNDLED_CACHES {
        let bytes = cache_bytes(file);
        assert_eq!(landscape::cache_digest(&bytes).unwrap(), *digest, "{name}: assets/kernel-tuner/{file} changed; update BUNDLED_CACHES");
        assert!(Landscape::build(&scenario(bundled(name), "random", 5, 0), Some(&bytes)).is_ok(), "{name}");
    }
}

#[test]
fn cache_optimum_and_all_points_cover_the_cache() {
    let bytes = cache_bytes("pnpoly_RTX_2080_Ti.json.gz");
    let land = Landscape::build(&scenario(bundled("pnpoly_RTX_2080_Ti"), "random", 5, 0), Some(&bytes)).unwrap();
    let cache = land.cache().unwrap();
    let all = land.all_points();
    assert_eq!(all.len(), cache.len());
    assert_eq!(all.iter().filter(|p| p.1.is_none()).count(), cache.failed());
    let (c, v) = land.optimum().unwrap();
    assert_eq!(Some(v), cache.optimum());
    assert_eq!(land.evaluate(&c), Outcome::Ok(vec![v]));
    assert_eq!(land.ratio(v), Some(1.0));
    assert!(land.title().contains("pnpoly_RTX_2080_Ti"), "{}", land.title());
}

#[test]
fn links_round_trip_all_three_sources_and_other_stages_are_unchanged() {
    let dropped = LandscapeSource::KernelTuner(KernelTunerSource::Dropped(DroppedCache { name: "gemm A100.json".into(), digest: "ab".repeat(32), configs: 17956 }));
    for src in [bundled("convolution_RTX_2080_Ti"), dropped, toy("ackley", 33)] {
        let s = scenario(src, "auto", 100, 9);
        let back = url::decode(&url::encode(&s)).unwrap();
        assert_eq!(back, s);
        assert_eq!(Scenario::from_json(&s.to_json()).unwrap(), s);
    }
    // A scenario of another stage writes no 'landscape' key, so its links are as before.
    let d = Scenario::default();
    assert!(!d.to_json().contains("landscape"));
    // The bundled scenario files parse, and the toy one runs without any file.
    for f in ["landscape-branin.json", "landscape-convolution-mi250x.json"] {
        let text = std::fs::read_to_string(format!("{}/../../assets/scenarios/{f}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let s = Scenario::from_json(&text).unwrap();
        assert_eq!(s.stage, Stage::Landscape);
    }
    let _: Arc<Landscape> = Landscape::build(&scenario(toy("branin", 64), "random", 5, 0), None).unwrap();
}

#[test]
fn every_strategy_races_on_every_toy_function_and_on_a_cache_with_failures() {
    let bytes = cache_bytes("pnpoly_RTX_2080_Ti.json.gz");
    for (name, _) in tunelab_search::strategies::STRATEGIES {
        let mut sources: Vec<LandscapeSource> = landscape::TOY_FUNCTIONS.iter().map(|f| toy(f.name, 17)).collect();
        sources.push(bundled("pnpoly_RTX_2080_Ti"));
        for src in sources {
            let s = scenario(src.clone(), name, 25, 3);
            let land = Landscape::build(&s, Some(&bytes)).unwrap();
            let mut run = Run::with_landscape(&s, land.clone()).unwrap();
            run.run_to_end();
            let lane = &run.lanes()[0].study;
            assert!(lane.evaluations() <= 25 && lane.evaluations() > 0, "{name} on {src:?}: {}", lane.evaluations());
            let opt = land.optimum().unwrap().1;
            let best = run.best_value(0).unwrap_or_else(|| panic!("{name} on {src:?} found nothing"));
            assert!(best >= opt, "{name}: best {best} beats the optimum {opt}");
            // Every trial the strategy made is a point of the landscape, priced by its function.
            for t in run.trials(0) {
                match land.evaluate(&t.config) {
                    Outcome::Ok(v) => assert_eq!(t.values, v, "{name}"),
                    Outcome::Failed(_) => assert_eq!(t.state, TrialState::Failed),
                    Outcome::Infeasible(r) => panic!("{name} proposed a point off the landscape: {r}"),
                }
            }
        }
    }
}

#[test]
fn a_surface_shows_any_two_parameters_at_their_best_over_the_rest() {
    // A toy's x-y surface is its grid.
    let land = Landscape::build(&scenario(toy("himmelblau", 21), "random", 5, 0), None).unwrap();
    assert_eq!(land.default_axes(), Some(("x".into(), "y".into())));
    let s = land.surface("x", "y").unwrap();
    let (_, _, grid) = land.grid().unwrap();
    assert_eq!(s.values, grid.iter().map(|v| Some(*v)).collect::<Vec<_>>());
    assert!(!s.best_over_rest);
    let (c, _) = land.optimum().unwrap();
    let (ix, iy) = s.cell_of(land.space(), &c).unwrap();
    assert_eq!(s.values[iy * 21 + ix], Some(land.optimum().unwrap().1));
    // A cache: every cell is the best of its points, and the optimum's cell holds the optimum.
    let bytes = cache_bytes("pnpoly_RTX_2080_Ti.json.gz");
    let land = Landscape::build(&scenario(bundled("pnpoly_RTX_2080_Ti"), "random", 5, 0), Some(&bytes)).unwrap();
    let (x, y) = land.default_axes().unwrap();
    let s = land.surface(&x, &y).unwrap();
    assert!(s.best_over_rest);
    let (c, opt) = land.optimum().unwrap();
    let (ix, iy) = s.cell_of(land.space(), &c).unwrap();
    assert_eq!(s.values[iy * s.x_values.len() + ix], Some(opt));
    for (c, v) in land.all_points() {
        let (ix, iy) = s.cell_of(land.space(), &c).unwrap();
        let cell = s.values[iy * s.x_values.len() + ix];
        if let Some(v) = v {
            assert!(cell.unwrap() <= v);
        }
    }
    // Axes are in value order.
    let nums: Vec<f64> = s.x_values.iter().filter_map(|v| v.as_f64()).collect();
    assert!(nums.windows(2).all(|w| w[0] < w[1]), "{nums:?}");
    assert!(land.surface(&x, &x).is_err());
    assert!(land.surface("nope", &y).err().unwrap().contains("nope"));
}

#[test]
fn a_landscape_run_saves_as_a_case_known_by_its_source() {
    let mut run = Run::new(&scenario(toy("ackley", 15), "random", 10, 0)).unwrap();
    run.run_to_end();
    let case = tunelab_scenario::cases::case_from_run(&run, "toy").unwrap();
    assert_eq!(case.fingerprint.stage, "landscape");
    assert!(case.fingerprint.model.contains("Ackley"), "{:?}", case.fingerprint);
    assert_eq!(case.trials.len(), 10);
}

#[test]
fn a_landscape_points_detail_has_its_value_and_no_infeasibility() {
    // The Tune panel's "best configuration" detail: a landscape point has no operators to
    // break down, which is not a reason to call a priced point infeasible.
    let s = scenario(toy("branin", 33), "random", 12, 1);
    let land = Landscape::build(&s, None).unwrap();
    let mut run = Run::with_landscape(&s, land).unwrap();
    run.run_to_end();
    let best = run.trials(0).iter().filter(|t| t.state == TrialState::Ok).min_by(|a, b| a.values[0].total_cmp(&b.values[0])).unwrap().clone();
    let d = run.detail(&best.config).unwrap();
    assert_eq!(d.infeasible, None, "a priced landscape point is not infeasible");
    assert_eq!(d.metrics.len(), 1);
    assert_eq!(d.metrics[0].1, best.values[0], "the detail shows the value the study recorded");
    assert!(d.simulated.contains("no operator breakdown"), "{}", d.simulated);
    assert!(!d.worth_showing(), "the page draws no empty engine charts for it");
    // The guards (another chip, protected layers, delta check) price a model on a chip: on a
    // landscape they say so instead of pricing the scenario's unrelated default model.
    let g = tunelab_scenario::guards::check_all(&s, run.space().names(), &best.config, Some("910B4"), &["lm_head".into()]).unwrap();
    assert!(g.compatibility.is_none() && g.protected.is_none() && g.delta.is_none(), "{g:?}");
    assert!(g.notes.iter().any(|n| n.contains("need a model on a chip")), "{:?}", g.notes);
    // A point off the landscape still says why.
    let off = run.detail(&tunelab_search::Config(vec![Value::Float(1e9), Value::Float(1e9)])).unwrap();
    assert!(off.infeasible.is_some() && off.worth_showing(), "the reason is shown");
}

#[test]
fn a_remembered_cache_is_what_the_views_built_from_the_scenario_price() {
    // The page's pins, heat map, point detail and guards build the stage from the scenario
    // alone; once the page has loaded a cache (and remembered it) they price those values,
    // instead of asking for the file again. Runs in a thread of its own: `remember` is per thread.
    std::thread::spawn(|| {
        let s = scenario(bundled("pnpoly_RTX_2080_Ti"), "random", 10, 0);
        let e = tunelab_scenario::explore::heatmap(&s, "block_size_x", "tile_size", None).unwrap_err();
        assert!(e.contains("must be loaded first"), "{e}");
        let land = Landscape::build(&s, Some(&cache_bytes("pnpoly_RTX_2080_Ti.json.gz"))).unwrap();
        landscape::remember(land.clone());
        let m = tunelab_scenario::explore::heatmap(&s, "block_size_x", "tile_size", None).unwrap();
        assert!(m.cells.iter().flatten().any(|c| c.value.is_some()), "the slice has measured cells");
        let (best, opt) = land.optimum().unwrap();
        let d = tunelab_scenario::explore::point_detail(&s, &best).unwrap();
        assert_eq!(d.metrics[0].1, opt, "a pinned point shows the cache's own value");
        // Another source (a dropped file with another digest) is not given this cache's values.
        let other = LandscapeSource::KernelTuner(KernelTunerSource::Dropped(DroppedCache { name: "pnpoly.json".into(), digest: "cd".repeat(32), configs: 4092 }));
        assert!(tunelab_scenario::stages::setup(&scenario(other, "random", 10, 0)).is_err());
    })
    .join()
    .unwrap();
}

#[test]
fn the_pages_landscape_detail_is_the_engines() {
    // The page details a landscape it loaded with `landscape_detail_of` (no stage breakdown
    // linked in its first load); the worker and the CLI use `detail_of`. Same answer, point for
    // point: a measured one, a failed one, one of the wrong length.
    let bytes = cache_bytes("pnpoly_RTX_2080_Ti.json.gz");
    let s = scenario(bundled("pnpoly_RTX_2080_Ti"), "random", 10, 0);
    let land = Landscape::build(&s, Some(&bytes)).unwrap();
    let (best, _) = land.optimum().unwrap();
    let mut run = Run::with_landscape(&s, land.clone()).unwrap();
    run.run_to_end();
    let failed = run.trials(0).iter().find(|t| t.state != TrialState::Ok).map(|t| t.config.clone());
    let short = tunelab_search::Config(best.0[..1].to_vec());
    for c in [Some(best), failed, Some(short)].into_iter().flatten() {
        let mut st = tunelab_scenario::stages::setup_with_landscape(&s, land.clone()).unwrap();
        let page = tunelab_scenario::explore::landscape_detail_of(&s, &mut st, &c, None);
        let mut st = tunelab_scenario::stages::setup_with_landscape(&s, land.clone()).unwrap();
        assert_eq!(page, tunelab_scenario::explore::detail_of(&s, &mut st, &c, None), "{c:?}");
    }
    // Any other stage's point is the engine's to detail (it has operators), said so.
    let llm = tunelab_scenario::bundled_scenario("qwen2.5-7b-910B2-operator").unwrap();
    let mut st = tunelab_scenario::stages::setup(&llm).unwrap();
    let c = st.baseline.clone();
    let e = tunelab_scenario::explore::landscape_detail_of(&llm, &mut st, &c, None).unwrap_err();
    assert!(e.contains("operator stage") && e.contains("detail_of"), "{e}");
}

#![no_main]
// The model reader: any input either loads or is refused with a message (never a panic, never
// a hang); Python's Infinity / NaN go through the pre-pass; a loaded model's layer stack covers
// its layers exactly, and its identity (parameters, weight bytes per precision, stack,
// approximations) is computed without overflow, from the same walk memory uses.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    tunelab_fuzz::model(data);
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(loaded) = tunelab_sim::load_model(text) else { return };
    let m = &loaded.model;
    if let Some(t) = &m.llm {
        let covered: u64 = t.runs().iter().map(|r| r.count).sum();
        assert_eq!(covered, t.layers, "the stack's runs must cover every layer");
        for here in [1, t.layers / 2, t.layers] {
            let n: u64 = t.runs_here(here.max(1)).iter().map(|r| r.count).sum();
            assert_eq!(n, here.max(1).min(t.layers), "a stage's runs must cover its layers");
        }
    }
    // One formula: on one chip, a model without a vision tower holds exactly its counted
    // parameters (audio towers, per-layer blocks and hybrid patterns included).
    if m.llm.is_some() && m.vision.is_none() {
        let held = tunelab_sim::memory::chip_params(m, &tunelab_sim::workload::ParallelPlan::default()).total();
        assert_eq!(held, m.params().total, "memory and the parameter count disagree");
    }
    let id = m.identity();
    assert!(id.params.active <= id.params.total);
    assert!(id.weights.windows(2).all(|w| w[0].bytes >= w[1].bytes), "fewer bits never weigh more");
    let _ = m.identity_line();
});

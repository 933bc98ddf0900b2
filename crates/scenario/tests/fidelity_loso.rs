//! Leave-one-source-out validation and the prediction bands it ships (issue 21).

use tunelab_scenario::fidelity::bands::{inputs_digest, Bands};
use tunelab_scenario::fidelity::loso::{fitted_params, leave_one_source_out};
use tunelab_scenario::fidelity::MeasurementSet;

const SET: &str = include_str!("../../../assets/measurements/ascend-910b.json");
const SET2: &str = include_str!("../../../assets/measurements/ascend-set2.json");
const SET3: &str = include_str!("../../../assets/measurements/ascend-set3.json");

#[test]
fn the_shipped_bands_match_the_current_inputs() {
    // The bands are the leave-one-source-out residuals of the bundled measurements priced with
    // the bundled chip profiles and kernel libraries; when any of those change the asset must be
    // regenerated (`tunelab fidelity ... --bands-out assets/measurements/bands.json`).
    let b = Bands::bundled();
    assert_eq!(b.schema, "tunelab-bands/1");
    assert_eq!(
        b.inputs,
        inputs_digest(&MeasurementSet::digest_of(&format!("{SET}{SET2}{SET3}"))),
        "assets/measurements/bands.json is stale: regenerate it with `tunelab fidelity --measurements assets/measurements/ascend-910b.json --measurements assets/measurements/ascend-set2.json --measurements assets/measurements/ascend-set3.json --markdown --svg docs/fidelity.svg --bands-out assets/measurements/bands.json > docs/fidelity.md`"
    );
    assert!(!b.bands.is_empty());
    for x in &b.bands {
        assert!(x.lo <= x.median && x.median <= x.hi && x.values > 0, "{x:?}");
    }
    // A kind with measurements gets a band; one without says so instead of inventing one.
    assert!(b.lookup("training", "mindspeed", "").is_some());
    // A framework without rows of its own gets the band of every framework's rows of the
    // category, and says so; a category without measured rows gets none.
    let any = b.lookup("serving", "no-such-engine", "graph").expect("the category-wide band");
    assert_eq!(any.framework, tunelab_scenario::fidelity::bands::EVERY_FRAMEWORK);
    assert!(any.describe().contains("every framework"), "{}", any.describe());
    assert!(b.lookup("no-such-category", "vllm-ascend", "graph").is_none());
}

#[test]
fn fitted_parameters_are_named_by_layer_and_stay_in_bounds() {
    let set = MeasurementSet::from_json(SET).unwrap();
    let ps = fitted_params(&set);
    // The hand-written GEMM's pipeline hand-off is a kernel-library parameter, not a chip fact.
    assert!(ps.iter().any(|p| p.layer == "kernel:hand-written" && p.name == "cube_kstep_sync_cycles"), "{ps:?}");
    assert!(!ps.iter().any(|p| p.layer == "chip" && p.name == "cube_kstep_sync_cycles"));
    for p in &ps {
        assert!(p.min <= p.value && p.value <= p.max, "{p:?}");
    }
}

#[test]
fn framework_parameters_are_refitted_on_framework_rows_only() {
    // A training framework's fitted constant is a framework-layer parameter; the refit goes layer
    // by layer, so the kernel library's matmul hand-off is refitted on the operator rows alone
    // and the DeepSpeed rows' error moves DeepSpeed's own step cost, not every framework's GEMM.
    let mut set = MeasurementSet::from_json(SET).unwrap();
    set.rows.extend(MeasurementSet::from_json(SET2).unwrap().rows);
    let ps = fitted_params(&set);
    assert!(ps.iter().any(|p| p.layer == "framework:deepspeed" && p.name == "step_ms"), "{ps:?}");
    let l = leave_one_source_out(&set);
    let kstep = l.params.iter().find(|p| p.layer == "kernel:aclnn" && p.name == "cube_kstep_sync_cycles").unwrap();
    assert!((kstep.refit / kstep.value - 1.0).abs() < 0.5, "aclnn K-step refit {} vs shipped {}", kstep.refit, kstep.value);
    let ds = l.params.iter().find(|p| p.layer == "framework:deepspeed").unwrap();
    assert!(ds.min <= ds.refit && ds.refit <= ds.max);
    // A serving engine's fitted host cost is a framework parameter too (serving-host.json,
    // source "fit"), refitted on the serving rows: MindIE's per-step Python pass.
    let mindie = l.params.iter().find(|p| p.layer == "framework:mindie" && p.name == "step_host_us").expect("MindIE's step_host_us is refitted");
    assert!(mindie.min <= mindie.refit && mindie.refit <= mindie.max, "{mindie:?}");
}

/// The refit moves a serving engine's fitted constant through the same pricing every row takes:
/// MindIE's Qwen1.5-7B closed loop of 8 clients serves fewer tokens a second when its per-step
/// host pass is longer, and the bundled value comes back afterwards.
#[test]
fn a_serving_engines_fitted_constant_moves_its_rows() {
    use tunelab_scenario::fidelity::evaluate;
    let set = MeasurementSet::from_json(SET).unwrap();
    let rows: Vec<_> = set.rows.iter().filter(|r| r.id.starts_with("srv-qwen1.5-7b-mindie")).cloned().collect();
    assert!(!rows.is_empty(), "the MindIE rows are in the shared set");
    let one = MeasurementSet { rows, ..set };
    let throughput = |fields: &[(String, String, f64)]| {
        let r = tunelab_scenario::stages::scheduler::with_fitted_fields(fields, || evaluate(&one, &Default::default(), None));
        r.rows.iter().find(|c| c.case.ends_with("c8") && c.metric == "output_throughput").map(|c| c.predicted).expect("c8 throughput compared")
    };
    let shipped = throughput(&[]);
    let slow = throughput(&[("mindie".into(), "step_host_us".into(), 10000.0)]);
    let fast = throughput(&[("mindie".into(), "step_host_us".into(), 200.0)]);
    println!("MindIE c8 output throughput: {fast:.1} tokens/s at 0.2 ms, {shipped:.1} shipped, {slow:.1} at 10 ms per step");
    assert!(slow < shipped && shipped < fast, "{fast} > {shipped} > {slow}");
    assert_eq!(throughput(&[]), shipped, "the bundled constants come back");
}

#[test]
fn a_held_out_source_is_predicted_by_a_refit_without_it() {
    // The operator rows only (fast): every compared value comes back held out, refits stay in
    // bounds, and a source whose rows alone pin a parameter is predicted differently when held out.
    let mut set = MeasurementSet::from_json(SET).unwrap();
    set.rows.retain(|r| r.category == "op" && r.predict_with != "tuned");
    let l = leave_one_source_out(&set);
    assert_eq!(l.held_out.len(), l.shipped.len());
    assert!(l.sources >= 2);
    for p in &l.params {
        assert!(p.min <= p.refit && p.refit <= p.max, "{p:?}");
    }
    for c in &l.held_out {
        assert!(c.predicted.is_finite() && c.predicted > 0.0, "{c:?}");
    }
}

#[test]
fn the_second_set_converts_and_its_tool_rows_are_predicted_as_sweeps() {
    // Set 2's operator rows are microbenchmark searches (ascend-dmi's peak matmul, bandwidth
    // sweeps): each is predicted as the best rate over its sweep; the rest of the set says why
    // it cannot be expressed yet. A source row measured on two chips becomes one row per chip.
    let set = MeasurementSet::from_json(SET2).unwrap();
    assert!(set.rows.len() >= 31, "the second set has 31 source rows: {} rows", set.rows.len());
    let rep = tunelab_scenario::fidelity::evaluate(&set, &Default::default(), None);
    let ops: Vec<_> = rep.rows.iter().filter(|c| c.category == "op").collect();
    assert_eq!(ops.len(), 7, "{:?}", rep.unexpressed);
    for c in &ops {
        assert_eq!(c.layer, "chip", "{}: a tool's search is chip evidence", c.id);
        assert!(c.predicted_by.contains("sweep"), "{}", c.predicted_by);
    }
    let dmi = ops.iter().find(|c| c.id == "op-flagperf-matmul-fp16-800TA2").unwrap();
    assert!(dmi.error.abs() < 0.15, "the vendor peak matmul is within 15%: {:+.1}%", dmi.error * 100.0);
    // Every other row is expressed by the stages or says why not (GLM-5.2: no public config).
    let expressed = set.rows.iter().filter(|r| r.category != "op" && r.cannot_express.is_none()).count();
    assert!(expressed >= 24, "{expressed} serving, diffusion and training rows expressed");
    for r in set.rows.iter().filter(|r| r.cannot_express.is_some()) {
        assert!(r.cannot_express.as_deref().is_some_and(|w| !w.trim().is_empty()), "{} has a reason", r.id);
    }
}

#[test]
fn rows_name_their_release_and_family_and_the_three_leave_outs_cover_every_value() {
    // Every row of the bundled sets names its engine release and model family (the converter's
    // `release` and `family`), so leave-one-engine-release-out and leave-one-model-family-out
    // group them; the operator rows alone keep the check fast.
    for text in [SET, SET2, SET3] {
        let set = MeasurementSet::from_json(text).unwrap();
        for r in &set.rows {
            assert!(r.release.as_deref().is_some_and(|x| !x.is_empty()), "{}: no release", r.id);
            assert!(r.family.as_deref().is_some_and(|x| !x.is_empty()), "{}: no family", r.id);
        }
    }
    let mut set = MeasurementSet::from_json(SET).unwrap();
    set.rows.retain(|r| r.category == "op" && r.predict_with != "tuned");
    let l = leave_one_source_out(&set);
    assert_eq!(l.held_out_family.len(), l.shipped.len());
    assert_eq!(l.held_out_release.len(), l.shipped.len());
    assert!(l.families >= 2 && l.releases >= 2, "{} families, {} releases", l.families, l.releases);
    let h = tunelab_scenario::fidelity::headlines(&l);
    let op = h.get("op").expect("an op headline");
    let worst = [op.leave_source_out, op.leave_family_out, op.leave_release_out].into_iter().flatten().fold(0.0, f64::max);
    assert_eq!(op.worst, Some(worst), "the headline is the worst of the three");
    let cov = tunelab_scenario::fidelity::bands::coverage(&l);
    let all = cov.get("all").unwrap();
    assert_eq!(all.values, 3 * l.shipped.len(), "each value once per leave-out");
    assert!(all.inside >= all.inside_before_widening, "widening never loses a value");
    // Widening reaches the promise: every kind's band is widened until it holds 80% of the
    // held-out values that have a band, so each category holds at least that share of them.
    for (cat, c) in &cov {
        let with_band = c.values - c.no_band;
        assert!(c.inside as f64 >= 0.8 * with_band as f64 - 1e-9, "{cat}: {} of {with_band} inside", c.inside);
    }
    // Rows that state no release are not pooled into one release: each source's are its own.
    let unstated: std::collections::BTreeSet<String> = l.shipped.iter().filter(|c| c.release.is_empty() || c.release == "unstated").map(tunelab_scenario::fidelity::loso::release_key).collect();
    let sources: std::collections::BTreeSet<&str> = l.shipped.iter().filter(|c| c.release.is_empty() || c.release == "unstated").map(|c| c.source.as_str()).collect();
    assert_eq!(unstated.len(), sources.len(), "{unstated:?}");
}

#[test]
fn a_band_that_held_under_80_percent_says_so_and_is_wider() {
    // The shipped bands carry the share of held-out values they held before widening; a band
    // under the promise is widened and its line in the product says so.
    let b = Bands::bundled();
    let widened: Vec<_> = b.bands.iter().filter(|x| x.widened > 1.0).collect();
    for x in &widened {
        assert!(x.coverage.is_some_and(|c| c < 0.8), "{x:?}");
        assert!(x.describe().contains("widened"), "{}", x.describe());
    }
    for x in b.bands.iter().filter(|x| x.widened == 1.0) {
        assert!(!x.describe().contains("widened"));
    }
}

#[test]
fn a_release_pair_of_one_launch_is_two_rows_naming_their_releases() {
    // Set 3's QwQ-32B TP4 batch-1 graph launch, measured under vLLM-Ascend 0.9.1 and 0.11.0rc1:
    // one row per release, each priced under its release (deployment.serving.engine_version).
    let set = MeasurementSet::from_json(SET3).unwrap();
    let pair: Vec<_> = set.rows.iter().filter(|r| r.id.starts_with("srv-vllm-qwq32b-tp4-bs1-graph")).collect();
    assert_eq!(pair.len(), 2);
    let rel: Vec<&str> = pair.iter().map(|r| r.release.as_deref().unwrap()).collect();
    assert_eq!(rel, ["0.9", "0.11"]);
    for r in &pair {
        // The exact release the source ran (0.11.0rc1) within the line the leave-out groups by.
        let ev = r.scenario["deployment"]["serving"]["engine_version"].as_str().unwrap();
        assert!(ev.starts_with(r.release.as_deref().unwrap()), "{ev} vs {:?}", r.release);
    }
}

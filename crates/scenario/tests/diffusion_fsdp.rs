//! FSDP inference of FLUX.2-dev as MindSpeed-MM runs it (infer_flux2_text2img.py @57069cd5):
//! FULL_SHARD per block, no MixedPrecision, so each step all-gathers the transformer's bf16
//! weights once (no backward), beside the compute; the step is the longer of the two. The
//! timeline (the app's pipeline panel and `tunelab eval`) says how many bytes, in which data type,
//! and which of the two sets the step.

use tunelab_scenario::stages::diffusion::timeline::timeline;
use tunelab_scenario::{Run, Scenario};
use tunelab_search::{Config, Value};

fn flux2(model: &str, chips: u64) -> Scenario {
    Scenario::from_json(&format!(r#"{{"version": 1, "stage": "diffusion", "model": "{model}", "device": "910B2", "diffusion": {{"chips": {chips}, "steps": 20, "cfg": false, "fsdp": true}}, "budget": 10, "seed": 1}}"#)).unwrap()
}

fn point(s: &Scenario, sets: &[(&str, Value)]) -> Config {
    let run = Run::new(s).unwrap();
    let mut c = run.baseline_config().clone();
    for (n, v) in sets {
        let i = run.space().index_of(n).unwrap_or_else(|| panic!("no parameter {n}"));
        c.0[i] = v.clone();
    }
    c
}

fn fsdp_note(notes: &[String]) -> String {
    notes.iter().find(|n| n.contains("FSDP")).cloned().unwrap_or_else(|| panic!("no FSDP line in {notes:?}"))
}

#[test]
fn the_timeline_names_the_gathered_bytes_their_dtype_and_what_sets_the_step() {
    let s = flux2("flux.2-dev", 4);
    let bf16 = point(&s, &[("sp", Value::Int(4)), ("precision", Value::Str("bf16".into())), ("attention", Value::Str("flash".into())), ("launch", Value::Str("eager".into()))]);
    let t = timeline(&s, Some(&bf16)).unwrap();
    let n = fsdp_note(&t.notes);
    // FLUX.2-dev's transformer holds 32.2 B parameters: 64.4 GB in bf16, gathered every step.
    assert!(n.contains("64.4 GB of bf16"), "{n}");
    assert!(n.contains("HCCS"), "{n}");
    assert!(n.contains("the gather sets the step"), "{n}");
    // The README's 4-process run measures 1.14 it/s (877 ms a step); priced within 15%.
    assert!((t.step_ms / 877.0 - 1.0).abs() < 0.15, "step {:.0} ms against 877 ms measured", t.step_ms);
    // W8A8 gathers int8 weights: half the bytes, about half the step while the gather binds.
    let w8 = point(&s, &[("sp", Value::Int(4)), ("precision", Value::Str("w8a8".into())), ("attention", Value::Str("flash".into())), ("launch", Value::Str("eager".into()))]);
    let t8 = timeline(&s, Some(&w8)).unwrap();
    let n8 = fsdp_note(&t8.notes);
    assert!(n8.contains("32.2 GB of int8"), "{n8}");
    assert!(t8.step_ms < 0.6 * t.step_ms, "w8a8 {:.0} ms vs bf16 {:.0} ms", t8.step_ms, t.step_ms);
}

#[test]
fn eight_chips_gather_over_seven_links_and_halve_the_step() {
    // A 4-rank all-gather uses 3 of a 910B's 7 HCCS links, an 8-rank one all 7 (set 2 measures
    // 64 and 149 GB/s): the gather-bound step at 8 chips is about half the 4-chip one.
    let set = |sp: i64| vec![("sp", Value::Int(sp)), ("precision", Value::Str("bf16".into())), ("attention", Value::Str("flash".into())), ("launch", Value::Str("eager".into()))];
    let (s4, s8) = (flux2("flux.2-dev", 4), flux2("flux.2-dev", 8));
    let t4 = timeline(&s4, Some(&point(&s4, &set(4)))).unwrap();
    let t8 = timeline(&s8, Some(&point(&s8, &set(8)))).unwrap();
    let r = t4.step_ms / t8.step_ms;
    assert!((1.7..2.3).contains(&r), "4 chips {:.0} ms, 8 chips {:.0} ms", t4.step_ms, t8.step_ms);
    // Image-to-image (twice the tokens) costs the same per step while the gather binds.
    let i2i = flux2("flux.2-dev-i2i", 4);
    let ti = timeline(&i2i, Some(&point(&i2i, &set(4)))).unwrap();
    assert!((ti.step_ms / t4.step_ms - 1.0).abs() < 0.05, "i2i {:.0} ms, t2i {:.0} ms", ti.step_ms, t4.step_ms);
}

#[test]
fn on_one_chip_per_rank_compute_the_compute_sets_the_step() {
    // Sequence parallelism 1 on 4 sharded chips: every rank runs the whole 4608-token image,
    // so the compute, not the gather, is the longer.
    let s = flux2("flux.2-dev-i2i", 4);
    let c = point(&s, &[("sp", Value::Int(1)), ("precision", Value::Str("bf16".into())), ("attention", Value::Str("flash".into())), ("launch", Value::Str("eager".into()))]);
    let t = timeline(&s, Some(&c)).unwrap();
    let n = fsdp_note(&t.notes);
    assert!(n.contains("the compute sets the step"), "{n}");
}

/// An unmerged LoRA adapter (`diffusion.lora_rank`): PEFT's x A, (x A) B, scaling and addition
/// beside each adapted projection, every step; the timeline names it.
fn kontext_json(lora: Option<u64>) -> String {
    let l = lora.map(|r| format!(r#", "lora_rank": {r}"#)).unwrap_or_default();
    format!(r#"{{"version": 1, "stage": "diffusion", "model": "flux.1-kontext-dev", "device": "910B2", "diffusion": {{"reference_images": 1, "steps": 50, "cfg": false{l}}}, "budget": 4, "seed": 1}}"#)
}

fn kontext(lora: Option<u64>) -> Scenario {
    Scenario::from_json(&kontext_json(lora)).unwrap()
}

#[test]
fn an_unmerged_lora_adds_its_kernels_to_every_step_and_says_so() {
    let set = [("precision", Value::Str("bf16".into())), ("attention", Value::Str("flash".into())), ("launch", Value::Str("eager".into()))];
    let (plain, lora) = (kontext(None), kontext(Some(16)));
    let t0 = timeline(&plain, Some(&point(&plain, &set))).unwrap();
    let t1 = timeline(&lora, Some(&point(&lora, &set))).unwrap();
    let extra = t1.step_ms - t0.step_ms;
    // FLUX.1: 19 double blocks (q, k, v, out, the feed-forward's two) and 38 single blocks (q, k,
    // v, proj_mlp) over 8704 tokens: the adapters' passes over the outputs are a few percent of
    // a step, more than nothing and far less than the step.
    assert!(extra > 0.02 * t0.step_ms && extra < 0.3 * t0.step_ms, "LoRA adds {extra:.1} ms to {:.1} ms", t0.step_ms);
    let n = t1.notes.iter().find(|n| n.contains("LoRA rank 16")).unwrap_or_else(|| panic!("{:?}", t1.notes));
    assert!(n.contains("unmerged"), "{n}");
    assert!(!t0.notes.iter().any(|n| n.contains("LoRA")), "{:?}", t0.notes);
    // Rank 0 is no adapter; a rank beyond the bound is refused naming the field.
    let r0 = kontext(Some(0));
    let t2 = timeline(&r0, Some(&point(&r0, &set))).unwrap();
    assert_eq!(t2.step_ms, t0.step_ms);
    let e = match Scenario::from_json(&kontext_json(Some(100_000))) {
        Ok(s) => Run::new(&s).err().expect("rank 100000 must be refused"),
        Err(e) => e,
    };
    assert!(e.contains("diffusion.lora_rank"), "{e}");
}

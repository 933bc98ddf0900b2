//! Models without a decoder (a diffusion UNet) are costed as one forward pass, not as a prompt
//! plus generated tokens.

use tunelab_scenario::{bundled_scenario, Run};
use tunelab_search::Outcome;

fn baseline_ms(output_len: i64) -> f64 {
    let mut s = bundled_scenario("sd15-unet-310P3-operator").unwrap();
    s.workload.output_len = output_len;
    s.budget = 1;
    let r = Run::new(&s).unwrap();
    match r.baseline() {
        Outcome::Ok(v) => v[0],
        other => panic!("baseline not ok: {other:?}"),
    }
}

#[test]
fn a_unet_step_is_one_forward_whatever_the_token_settings() {
    let a = baseline_ms(256);
    let b = baseline_ms(1);
    assert_eq!(a, b, "output_len must not change a one-pass model's time");
    // One SD1.5 step at batch 2 is about 1.6 TFLOP; on a 69.5 TFLOPS chip that is tens of ms,
    // not seconds.
    assert!(a > 23.0 && a < 1000.0, "UNet step {a} ms");
}

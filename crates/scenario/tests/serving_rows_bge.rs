//! MindIE's BGE embedding rows (set 2, issue 43's fifth pass): every shape the source publishes
//! is compared, each under its own runtime and length, through the fidelity path.

use tunelab_scenario::fidelity::{cases, predict_case, MeasurementSet};

/// MindIE's BGE rows compare their seq-100 shapes too: the variant carries the workload's
/// length, so a batch of 8 x 100 tokens is priced as 800 tokens, not 8 x 512.
#[test]
fn the_bge_seq100_shapes_are_priced_at_their_own_length() {
    let text = include_str!("../../../assets/measurements/ascend-set2.json");
    let set = MeasurementSet::from_json(text).unwrap();
    let all = cases(&set);
    let rate = |suffix: &str| {
        let c = all
            .iter()
            .find(|c| c.row.id == "inf-mindie-bge-large-zh-800ia2" && c.variant.map(|v| v.suffix.as_str()) == Some(suffix))
            .unwrap_or_else(|| panic!("no case {suffix}"));
        assert_eq!(c.variant.unwrap().values.len(), 1, "{suffix}: one compared value");
        let s = tunelab_scenario::fidelity::case_scenario(c, None).unwrap();
        let (m, _) = predict_case(c, None).unwrap();
        (s.workload.input_len, m["requests_per_s"].0)
    };
    let (len100, short) = rate("bs8-seq100");
    let (len512, long) = rate("bs20-seq512");
    assert_eq!((len100, len512), (100, 512));
    assert!(short > long, "a 100-token sequence ({short}/s) is cheaper than a 512-token one ({long}/s)");
}

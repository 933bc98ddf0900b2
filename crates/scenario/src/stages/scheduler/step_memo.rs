//! The step pricer's memo of recent steps: a capacity search serves the same requests at many
//! rates and meets the same step shapes again (DeepSeek-V3's tune: 65% of 6.3 M step prices
//! were repeats). A hit needs every input equal, so results are unchanged.

use super::price::{StepCost, StepShape};

/// Everything a step's price depends on besides the pricer's fixed model, chip, plan, options
/// and host costs: the shape, the launch, the pricer settings a caller may change between steps
/// (graph capture limit, allocated context, pipeline depth, the speculative setting).
pub(super) type StepKey = (StepShape, bool, Option<u64>, u64, u64, Option<(u64, u64, u64)>);

/// Slots of the memo (direct-mapped: a step's slot is a hash of its shape, and a slot keeps the
/// last step priced there). Recent steps repeat (a search's probes serve the same requests at
/// nearby rates): 1,024 slots cut a DeepSeek-V3 capacity tune by about a tenth, where a map of
/// every step priced (millions, cache-cold) made it slower.
const SLOTS: usize = 1 << 10;

/// Recent step prices by their exact inputs (empty until the first step is priced).
#[derive(Clone, Default)]
pub(super) struct StepMemo(Vec<Option<(StepKey, StepCost)>>);

impl StepMemo {
    /// The price of a step with exactly these inputs, if it is still held.
    pub(super) fn get(&self, key: &StepKey) -> Option<StepCost> {
        match self.0.get(slot(key)) {
            Some(Some((k, c))) if k == key => Some(*c),
            _ => None,
        }
    }

    pub(super) fn put(&mut self, key: StepKey, cost: StepCost) {
        if self.0.is_empty() {
            self.0 = vec![None; SLOTS];
        }
        let i = slot(&key);
        self.0[i] = Some((key, cost));
    }
}

fn slot(key: &StepKey) -> usize {
    let s = &key.0;
    let mut h = key.1 as u64;
    for x in [s.prefill_seqs, s.prefill_tokens, s.prefill_kv, s.new_requests, s.decode_seqs, s.decode_ctx, s.emitting] {
        h = (h.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    (h >> 32) as usize & (SLOTS - 1)
}

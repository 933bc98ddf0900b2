//! The step pricer's memo of recent steps: a capacity search serves the same requests at many
//! rates and meets the same step shapes again (DeepSeek-V3's tune: 65% of 6.3 M step prices
//! were repeats). A hit needs every input equal, so results are unchanged.
//!
//! One memo per thread, shared by every pricer, not one per pricer: a study keeps a pricer per
//! layout (139 in the bundled DeepSeek-V3 2xA3 tune), and 1,024 slots each held 27 MB of that
//! tune's 47 MB peak. A tune serves one configuration at a time, so one table gives the pricer
//! in use every slot. Each pricer takes an id no other pricer ever had (process-wide), and the
//! id is part of the key: an entry answers only the pricer that wrote it (and a dropped
//! pricer's entries are only overwritten, never read). Still a cache of a pure function: the
//! sharing changes which repeats hit, never a price.

use super::price::{StepCost, StepShape};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Everything a step's price depends on besides the pricer's fixed model, chip, plan, options
/// and host costs: the shape, the launch, the pricer settings a caller may change between steps
/// (graph capture limit, allocated context, pipeline depth, the speculative setting).
pub(super) type StepKey = (StepShape, bool, Option<u64>, u64, u64, Option<(u64, u64, u64)>);

/// Slots of the thread's memo (direct-mapped: a step's slot is a hash of its pricer and shape,
/// and a slot keeps the last step priced there). Recent steps repeat (a search's probes serve
/// the same requests at nearby rates); a map of every step priced (millions, cache-cold) made
/// a tune slower, and 8,192 slots with their hashes kept apart (a miss told without reading
/// its entry) were no faster than this (3.08-3.21 s against 2.99-3.11 s user for that tune).
const SLOTS: usize = 1 << 12;

type Slot = Option<(u64, StepKey, StepCost)>;

thread_local! {
    /// The thread's slots (allocated at the first step priced).
    static SLOTS_OF_THREAD: RefCell<Vec<Slot>> = const { RefCell::new(Vec::new()) };
}

/// The next pricer id, process-wide: ids are never reused, whichever thread a pricer lives on.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// One pricer's handle on the thread's memo: its id. Not `Clone`: a copy would share the id,
/// and a copy whose fixed inputs were then changed would read the original's prices.
pub(super) struct StepMemo(u64);

impl Default for StepMemo {
    fn default() -> Self {
        StepMemo(NEXT_ID.fetch_add(1, Ordering::Relaxed))
    }
}

impl StepMemo {
    /// The price of a step with exactly these inputs, if it is still held.
    pub(super) fn get(&self, key: &StepKey) -> Option<StepCost> {
        let i = slot(self.0, key);
        SLOTS_OF_THREAD.with(|s| match s.borrow().get(i) {
            Some(Some((id, k, c))) if *id == self.0 && k == key => Some(*c),
            _ => None,
        })
    }

    pub(super) fn put(&self, key: StepKey, cost: StepCost) {
        let i = slot(self.0, &key);
        SLOTS_OF_THREAD.with(|s| {
            let mut s = s.borrow_mut();
            if s.is_empty() {
                *s = vec![None; SLOTS];
            }
            s[i] = Some((self.0, key, cost));
        })
    }
}

fn slot(id: u64, key: &StepKey) -> usize {
    let s = &key.0;
    let mut h = id.wrapping_mul(0x9e_37_79_b9_7f_4a_7c_15) ^ key.1 as u64;
    for x in [s.prefill_seqs, s.prefill_tokens, s.prefill_kv, s.new_requests, s.decode_seqs, s.decode_ctx, s.emitting] {
        h = (h.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    (h >> 32) as usize & (SLOTS - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(decode_seqs: u64) -> StepKey {
        (StepShape { decode_seqs, decode_ctx: 100, emitting: decode_seqs, ..Default::default() }, true, None, 0, 1, None)
    }

    #[test]
    fn an_entry_answers_only_the_pricer_that_wrote_it_and_only_its_exact_key() {
        let (a, b) = (StepMemo::default(), StepMemo::default());
        let c = StepCost { time_us: 42.0, ..Default::default() };
        a.put(key(8), c);
        assert_eq!(a.get(&key(8)), Some(c));
        assert_eq!(b.get(&key(8)), None, "another pricer's entry must not answer");
        assert_eq!(a.get(&key(9)), None);
        let mut k = key(8);
        k.2 = Some(64);
        assert_eq!(a.get(&k), None, "a changed capture limit is another key");
    }
}

//! The step pricer's memo of recent steps: a capacity search serves the same requests at many
//! rates and meets the same step shapes again (DeepSeek-V3's tune: 65% of 6.3 M step prices
//! were repeats). A hit needs every input equal, so results are unchanged.
//!
//! One memo per thread, shared by every pricer, not one per pricer: a study keeps a pricer per
//! layout (139 in the bundled DeepSeek-V3 2xA3 tune), and 1,024 slots each held 27 MB of that
//! tune's 47 MB peak. A tune serves one configuration at a time, so one table gives the pricer
//! in use every slot. Each pricer's settings take an id no other pricer or settings ever had
//! (process-wide), and the id is part of the key: an entry answers only the pricer and settings
//! that wrote it (and a dropped pricer's entries are only overwritten, never read). Still a cache of a pure function: the
//! sharing changes which repeats hit, never a price.

use super::price::{Part, StepCost, StepShape};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Everything a step's price depends on besides the pricer's fixed model, chip, plan, options
/// and host costs: the shape, the launch, the pricer settings a caller may change between steps
/// (graph capture limit, allocated context, pipeline depth, the speculative setting).
pub(super) type StepKey = (StepShape, bool, Option<u64>, u64, u64, Option<(u64, u64, u64)>);

/// The pricer settings part of a `StepKey` (capture limit, allocated context, pipeline depth,
/// speculative setting).
type Settings = (Option<u64>, u64, u64, Option<(u64, u64, u64)>);

/// Slots of the thread's memo (direct-mapped: a step's slot is a hash of its pricer and shape,
/// and a slot keeps the last step priced there). Recent steps repeat (a search's probes serve
/// the same requests at nearby rates); a map of every step priced (millions, cache-cold) made
/// a tune slower, and 8,192 slots with their hashes kept apart (a miss told without reading
/// its entry) were no faster than this (3.08-3.21 s against 2.99-3.11 s user for that tune).
const SLOTS: usize = 1 << 12;

/// (id of the pricer and its settings, the shape's fields, graph launch, the price). 104 bytes,
/// not the 200 a whole `StepKey` took: a lookup that misses the core's caches was a third of
/// the pricer's own time, so the table is kept small.
type Slot = Option<(u64, [u32; 7], bool, StepCost)>;

thread_local! {
    /// The thread's slots (allocated at the first step priced).
    static SLOTS_OF_THREAD: RefCell<Vec<Slot>> = const { RefCell::new(Vec::new()) };
}

/// The next id, process-wide: ids are never reused, whichever thread a pricer lives on.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// Settings of one pricer kept with their ids (most recent first): a pricer serves several
/// configurations (batch, draft tokens) whose settings alternate.
const SETTINGS_KEPT: usize = 8;

/// One pricer's handle on the thread's memo: an id for each of its recent settings, so an entry
/// answers only the pricer and settings that wrote it. Not `Clone`: a copy would share the
/// ids, and a copy whose fixed inputs were then changed would read the original's prices.
#[derive(Default)]
pub(super) struct StepMemo {
    ids: Vec<(Settings, u64)>,
}

impl StepMemo {
    /// The price of a step with exactly these inputs, if it is still held.
    pub(super) fn get(&mut self, key: &StepKey) -> Option<StepCost> {
        let shape = compact(&key.0)?;
        let id = self.id(key);
        let i = slot(id, &shape, key.1);
        SLOTS_OF_THREAD.with(|s| match s.borrow().get(i) {
            Some(Some((sid, sh, g, c))) if *sid == id && *sh == shape && *g == key.1 => Some(*c),
            _ => None,
        })
    }

    pub(super) fn put(&mut self, key: StepKey, cost: StepCost) {
        let Some(shape) = compact(&key.0) else { return };
        let id = self.id(&key);
        let i = slot(id, &shape, key.1);
        SLOTS_OF_THREAD.with(|s| {
            let mut s = s.borrow_mut();
            if s.is_empty() {
                *s = vec![None; SLOTS];
            }
            s[i] = Some((id, shape, key.1, cost));
        })
    }

    /// The id of the key's settings for this pricer (a new one for settings not kept).
    fn id(&mut self, key: &StepKey) -> u64 {
        let st: Settings = (key.2, key.3, key.4, key.5);
        if let Some(&(s, id)) = self.ids.first() {
            if s == st {
                return id;
            }
        }
        let e = match self.ids.iter().position(|(s, _)| *s == st) {
            Some(p) => self.ids.remove(p),
            None => {
                self.ids.truncate(SETTINGS_KEPT - 1);
                (st, NEXT_ID.fetch_add(1, Ordering::Relaxed))
            }
        };
        self.ids.insert(0, e);
        e.1
    }
}

/// The shape's fields as 32-bit numbers (None when one does not fit: that step is not kept).
fn compact(s: &StepShape) -> Option<[u32; 7]> {
    let f = [s.prefill_seqs, s.prefill_tokens, s.prefill_kv, s.new_requests, s.decode_seqs, s.decode_ctx, s.emitting];
    let mut out = [0u32; 7];
    for (o, x) in out.iter_mut().zip(f) {
        *o = u32::try_from(x).ok()?;
    }
    Some(out)
}

fn slot(id: u64, shape: &[u32; 7], graph: bool) -> usize {
    let mut h = id.wrapping_mul(0x9e_37_79_b9_7f_4a_7c_15) ^ graph as u64;
    for &x in shape {
        h = (h.rotate_left(5) ^ x as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    (h >> 32) as usize & (SLOTS - 1)
}

/// One axis of a grid cell: `price::grid(x)`, the grid points around x and the position between.
pub(super) type Axis = (u64, u64, f64);

/// The corners of the grid cell a pricer table was last read in (`D` axes, `N` = 2^D corners),
/// so a step in the same cell as the one before interpolates without looking its corners up
/// again. Why: most steps of a simulation fall in the cell of the step before (the same decode
/// batch, a context one token longer), and the lookups cost more than the interpolation (a
/// third of the DeepSeek-V3 2xA3 tune's instructions were the grid tables' hashing and the
/// nested interpolation closures). Corners are read from the pricer's tables, which never
/// change an entry, and interpolated in the order the nested one-axis interpolation of each
/// table did it (`interpolate`): same values, bit for bit.
pub(super) struct LastCell<const D: usize, const N: usize> {
    /// The cell's (lo, hi) per axis and an exact extra key (the verify positions), if any.
    key: Option<([(u64, u64); D], u64)>,
    corners: [Part; N],
}

impl<const D: usize, const N: usize> Default for LastCell<D, N> {
    fn default() -> Self {
        LastCell { key: None, corners: [Part::default(); N] }
    }
}

impl<const D: usize, const N: usize> LastCell<D, N> {
    /// The value at `cell` if its corners are the ones held.
    pub(super) fn get(&self, cell: &[Axis; D], extra: u64) -> Option<Part> {
        match &self.key {
            Some((k, e)) if *e == extra && k.iter().zip(cell).all(|(a, b)| a.0 == b.0 && a.1 == b.1) => Some(interpolate(&self.corners, cell)),
            _ => None,
        }
    }

    /// Holds `corners` as the cell's and returns the value at `cell`.
    pub(super) fn keep(&mut self, cell: &[Axis; D], extra: u64, corners: [Part; N]) -> Part {
        self.key = Some((cell.map(|a| (a.0, a.1)), extra));
        self.corners = corners;
        interpolate(&self.corners, cell)
    }
}

/// The corners of `cell`, read by `at` in the order a nested one-axis interpolation reads them
/// (the first axis outermost, low end first); an axis whose ends coincide is read at its low end only.
/// Corner i has axis d at its high end when bit D-1-d of i is set.
pub(super) fn corners<const D: usize, const N: usize>(cell: &[Axis; D], mut at: impl FnMut([u64; D]) -> Result<Part, String>) -> Result<[Part; N], String> {
    debug_assert_eq!(N, 1 << D);
    let mut out = [Part::default(); N];
    for i in 0..N {
        let mut c = [0u64; D];
        let mut same = None;
        for (d, &(lo, hi, _)) in cell.iter().enumerate() {
            let bit = 1 << (D - 1 - d);
            c[d] = if i & bit == 0 { lo } else { hi };
            if i & bit != 0 && hi == lo {
                same = Some(i & !bit);
                break;
            }
        }
        out[i] = match same {
            Some(j) => out[j],
            None => at(c)?,
        };
    }
    Ok(out)
}

/// The nested one-axis interpolation over corners already read: along the first axis, the
/// value at its low end (the rest of the axes interpolated over the first half of the corners)
/// and, unless the axis's ends coincide, at its high end, then `Part::lerp(low, high, f)`.
/// Written out per number of axes (a recursion over slices took a tenth of a tune's time).
fn interpolate<const D: usize, const N: usize>(c: &[Part; N], cell: &[Axis; D]) -> Part {
    let c: &[Part] = c;
    // One axis over the pair (a, b).
    let one = |a: &Part, b: &Part, (lo, hi, f): Axis| if hi == lo { *a } else { Part::lerp(a, b, f) };
    match D {
        1 => one(&c[0], &c[1], cell[0]),
        2 => {
            let a = one(&c[0], &c[1], cell[1]);
            if cell[0].1 == cell[0].0 {
                return a;
            }
            Part::lerp(&a, &one(&c[2], &c[3], cell[1]), cell[0].2)
        }
        3 => {
            let two = |k: usize| {
                let a = one(&c[k], &c[k + 1], cell[2]);
                if cell[1].1 == cell[1].0 {
                    return a;
                }
                Part::lerp(&a, &one(&c[k + 2], &c[k + 3], cell[2]), cell[1].2)
            };
            let a = two(0);
            if cell[0].1 == cell[0].0 {
                return a;
            }
            Part::lerp(&a, &two(4), cell[0].2)
        }
        _ => unreachable!("grid cells have one to three axes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(decode_seqs: u64) -> StepKey {
        (StepShape { decode_seqs, decode_ctx: 100, emitting: decode_seqs, ..Default::default() }, true, None, 0, 1, None)
    }

    #[test]
    fn an_entry_answers_only_the_pricer_that_wrote_it_and_only_its_exact_key() {
        let (mut a, mut b) = (StepMemo::default(), StepMemo::default());
        let c = StepCost { time_us: 42.0, ..Default::default() };
        a.put(key(8), c);
        assert_eq!(a.get(&key(8)), Some(c));
        assert_eq!(b.get(&key(8)), None, "another pricer's entry must not answer");
        assert_eq!(a.get(&key(9)), None);
        let mut k = key(8);
        k.2 = Some(64);
        assert_eq!(a.get(&k), None, "a changed capture limit is another key");
        assert_eq!(a.get(&key(8)), Some(c), "settings that come back keep their id");
        let mut big = key(8);
        big.0.decode_ctx = 1 << 40;
        a.put(big, c);
        assert_eq!(a.get(&big), None, "a shape over 32 bits is not kept");
    }

    /// A part whose every field is `x` (the error bound too).
    fn part(x: f64) -> Part {
        Part { device_us: x, launch_us: x, ops: x, host_us: x, collectives: x, energy_uj: x, flops: x, rel_error: x }
    }

    #[test]
    fn a_held_cell_interpolates_as_the_nested_axes_and_reads_each_corner_once() {
        // A table that is not affine, so any other order of the lerps gives other bits.
        let f = |c: [u64; 3]| part(1.0 / (c[0] as f64 + 0.3) + (c[1] as f64).sqrt() * 1.7 + (c[2] as f64).ln() / 3.0);
        let cell = [super::super::price::grid(13), super::super::price::grid(5), super::super::price::grid(1000)];
        let mut reads = Vec::new();
        let c: [Part; 8] = corners(&cell, |x| {
            reads.push(x);
            Ok(f(x))
        })
        .unwrap();
        // q = 5 is on the grid: its axis is read at its low end only.
        assert_eq!(reads, vec![[12, 5, 768], [12, 5, 1024], [16, 5, 768], [16, 5, 1024]]);
        let mut last = LastCell::<3, 8>::default();
        let v = last.keep(&cell, 0, c);
        // Nested one axis at a time, the innermost first.
        let lerp1 = |a: u64, b: u64| {
            let (lo, hi, t) = cell[2];
            Part::lerp(&f([a, b, lo]), &f([a, b, hi]), t)
        };
        let want = Part::lerp(&lerp1(12, 5), &lerp1(16, 5), cell[0].2);
        assert_eq!(v, want);
        assert_eq!(last.get(&cell, 0), Some(want));
        assert_eq!(last.get(&cell, 1), None, "another extra key is another cell");
        let other = [cell[0], cell[1], super::super::price::grid(1100)];
        assert_eq!(last.get(&other, 0), None);
        let e = corners::<1, 2>(&[super::super::price::grid(20)], |_| Err("operator x cannot run".to_string())).unwrap_err();
        assert_eq!(e, "operator x cannot run");
    }
}

//! Costing operator graphs with the device model, shared by the operator and deployment stages:
//! per-op figures summed with repeats, memoised so a tuner never costs the same operator twice.
//!
//! Why memoise by operator: a deployment search revisits the same shapes under many knob
//! settings (batch and TP change some operators, not all), and the exhaustive best tiling of a
//! matmul is the expensive part.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use tunelab_sim::cost::estimate;
use tunelab_sim::device::Device;
use tunelab_sim::estimate::Estimate;
use tunelab_sim::tiling::Tiling;
use tunelab_sim::tuning::default_tiling;
use tunelab_sim::workload::Graph;
use tunelab_sim::Op;

/// Largest number of memoised operators before the memo is cleared (bounds memory in the tab).
const MEMO_LIMIT: usize = 50_000;

/// Sums over a graph (per one run of the graph).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GraphCost {
    pub time_us: f64,
    pub energy_uj: f64,
    pub flops: f64,
    pub hbm_bytes: f64,
    /// Largest expected relative error of any operator.
    pub rel_error: f64,
}

impl GraphCost {
    /// Adds `repeat` runs of one operator.
    pub fn add(&mut self, e: &Estimate, repeat: f64) {
        self.time_us += e.time_us * repeat;
        self.energy_uj += e.energy_uj * repeat;
        self.flops += e.flops * repeat;
        self.hbm_bytes += e.hbm_bytes * repeat;
        self.rel_error = self.rel_error.max(e.relative_error);
    }

    /// Adds another sum scaled by `w`.
    pub fn add_scaled(&mut self, o: &GraphCost, w: f64) {
        self.time_us += o.time_us * w;
        self.energy_uj += o.energy_uj * w;
        self.flops += o.flops * w;
        self.hbm_bytes += o.hbm_bytes * w;
        self.rel_error = self.rel_error.max(o.rel_error);
    }
}

/// How each operator is tiled when a graph is costed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileMode {
    /// The device model's heuristic tiling (what a framework does by default).
    Default,
    /// A tuned tiling: coordinate descent over the operator's tiling axes from the default
    /// tiling (the exhaustive search takes ~0.3 s per large matmul, too slow inside a deployment
    /// search; descent reaches the same neighbourhood in a few hundred estimates).
    Best,
}

/// FxHash (the rustc hasher): the step pricer's tables and the operator memo are hit once per
/// step or operator, and SipHash's DoS resistance buys nothing for keys the simulation makes
/// itself. Deterministic on every target.
#[derive(Default, Clone, Copy)]
pub struct Fx(u64);

impl std::hash::Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(*b as u64);
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
}

/// A hash map with `Fx` (lookups only: nothing iterates one, so no result depends on its order).
pub type FxMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<Fx>>;

/// A memo of operator estimates keyed by the operator and the tile mode.
#[derive(Default)]
pub struct Memo {
    map: FxMap<(Op, bool), Result<Estimate, String>>,
}

/// A memo several pricers share. Why: a deployment tune builds one step pricer per layout
/// (precision, tp, dp, EP, ...) and its draft's, and most operator shapes recur across them
/// (the DeepSeek-V3 tune descends about 4,000 distinct operators, 22,000 times with a memo per
/// pricer). Valid only among pricers on the same chip: the key is the operator and the tile
/// mode, not the device. Results are those of an unshared memo (each entry is a pure function
/// of its key and the chip).
pub type SharedMemo = Rc<RefCell<Memo>>;

/// Chip profiles whose operator memo a thread keeps between objectives (`chip_memo`).
const CHIP_MEMOS_KEPT: usize = 2;

thread_local! {
    /// The operator memos of the chip profiles used last on this thread, most recent last.
    static CHIP_MEMOS: RefCell<Vec<(Device, SharedMemo)>> = const { RefCell::new(Vec::new()) };
}

/// The operator memo of one chip profile, shared by every objective built on this thread for an
/// equal profile (`Device` compared whole: an edited or refitted profile is another chip).
/// Why: `tunelab run` prices the best configuration on four more request samples after the
/// study (`capacity::spread`), each through a new objective, and without this each one
/// descended again the thousands of operators the study had already tiled (a tenth of the
/// DeepSeek-V3 2xA3 tune's time). An entry is a pure function of the operator, the tile mode
/// and the chip, so sharing changes no result. The last `CHIP_MEMOS_KEPT` profiles are kept
/// (each memo is bounded by `MEMO_LIMIT`).
pub fn chip_memo(device: &Device) -> SharedMemo {
    CHIP_MEMOS.with(|m| {
        let mut m = m.borrow_mut();
        if let Some(i) = m.iter().position(|(d, _)| d == device) {
            let e = m.remove(i);
            let memo = e.1.clone();
            m.push(e);
            return memo;
        }
        if m.len() >= CHIP_MEMOS_KEPT {
            m.remove(0);
        }
        let memo = SharedMemo::default();
        m.push((device.clone(), memo.clone()));
        memo
    })
}

impl Memo {
    /// The estimate of `op` under `mode`, memoised.
    pub fn op(&mut self, op: &Op, device: &Device, mode: TileMode) -> Result<Estimate, String> {
        // The operator itself is the key (plain integer data, derived Eq and Hash).
        let key = (op.clone(), mode == TileMode::Best);
        if let Some(r) = self.map.get(&key) {
            return r.clone();
        }
        let r = match mode {
            TileMode::Best => crate::stages::tileaxes::descend(op, device),
            TileMode::Default => estimate(op, &default_tiling(op, device), device)
                .or_else(|_| estimate(op, &Tiling::Default, device))
                .map_err(|e| e.reason),
        };
        if self.map.len() >= MEMO_LIMIT {
            self.map.clear();
        }
        self.map.insert(key, r.clone());
        r
    }

    /// Costs a whole graph; an operator that cannot run names itself in the error.
    pub fn graph(&mut self, g: &Graph, device: &Device, mode: TileMode) -> Result<GraphCost, String> {
        let mut c = GraphCost::default();
        for op in &g.ops {
            let e = self.op(&op.op, device, mode).map_err(|r| format!("operator {} cannot run: {r}", op.name))?;
            c.add(&e, op.repeat as f64);
        }
        Ok(c)
    }
}

/// Bytes of the tensors an operator reads and writes (its working set in device memory).
pub fn op_bytes(op: &Op) -> f64 {
    let f = |x: u64| x as f64;
    match op {
        Op::Matmul { batch, m, n, k, dtype, weight_dtype, .. } => {
            let a = dtype.size();
            let w = weight_dtype.unwrap_or(*dtype).size();
            let out = if dtype.is_int() { 2.0 } else { a };
            f(*batch) * (f(*m) * f(*k) * a + f(*m) * f(*n) * out) + f(*k) * f(*n) * w
        }
        Op::Vector { rows, row_len, dtype, .. } => 3.0 * f(*rows) * f(*row_len) * f(dtype.bytes()),
        Op::Attention { kind, batch, heads, kv_heads, q_len, kv_len, head_dim, dtype, .. } => {
            let e = f(dtype.bytes());
            let qo = 2.0 * f(*batch) * f(*heads) * f(*q_len) * f(*head_dim) * e;
            let kv = 2.0 * f(*batch) * f(*kv_heads) * f(*kv_len) * f(*head_dim) * e;
            let scores = match kind {
                tunelab_sim::AttentionKind::Unfused | tunelab_sim::AttentionKind::Exported => f(*batch) * f(*heads) * f(*q_len) * f(*kv_len) * e,
                _ => 0.0,
            };
            qo + kv + scores
        }
        Op::Conv2d { batch, in_ch, out_ch, h, w, kh, kw, dtype, .. } => {
            let e = f(dtype.bytes());
            f(*batch) * f(*h) * f(*w) * (f(*in_ch) + f(*out_ch)) * e + f(*in_ch) * f(*out_ch) * f(*kh) * f(*kw) * e
        }
        Op::Comm { bytes, .. } => f(*bytes),
        Op::GroupedMatmul { groups, m, n, k, dtype, .. } => {
            let e = f(dtype.bytes());
            (f(*m) * (f(*k) + f(*n)) + f(*groups) * f(*k) * f(*n)) * e
        }
        Op::MoeComm { .. } => tunelab_sim::cost::moe_comm::wire_bytes(op),
    }
}

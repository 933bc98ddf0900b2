//! Pricing one engine step (a prefill chunk plus a decode batch) with the device model, and the
//! host work around it. This is the one function every serving number goes through: the static
//! "simple mode" (one prefill of the batch, one decode step) and the scheduler simulation price
//! their steps here.
//!
//! Why a decomposition: a continuous-batching step runs one forward over every scheduled token.
//! The linear layers, norms and TP collectives see `T` token rows in one matmul (prefill chunk
//! tokens plus one per decoding sequence); the attention core is per sequence (decode attention
//! over each cache, flash attention of each prompt chunk over its prefix); the LM head runs for
//! the sequences that emit a token. Each part is costed through the device model from the same
//! operator graphs the other stages use (`workload::build_graph`), priced at grid sizes (exact up
//! to 8, then points half an octave apart) and interpolated linearly between them, and
//! memoised, so a 1,000-request simulation prices a few hundred operator shapes, not thousands of
//! steps.
//!
//! Host costs: dispatch comes from the kernel library's launch costs through `tunelab_sim::cost::dispatch` (eager:
//! every framework launch costs host time and the host runs ahead of the device, so a step takes
//! the longer of the two; graph: one captured-graph launch per step), with graphs used for
//! decode-only steps up to the capture size, as vLLM does (steps carrying prefill tokens run
//! eagerly). Every step also waits for the scheduler, sampling and detokenisation
//! (assets/constants/serving-host.json): a fixed part plus a part per running sequence, both
//! from the serving engine the scenario names (`deployment.serving.engine`: vLLM-Ascend's Python
//! engine, MindIE's C++ one, HF generate under torchair, or the generic default). An engine that
//! allocates each sequence's KV cache at its longest length and reads all of it (torchair's fixed
//! KV cache) prices decode attention at that length (`allocated_ctx`); one that keeps Hugging
//! Face's own cache handling also pays, every decode step, the copy of the cache by `torch.cat`
//! and the expansion of grouped K/V heads to every query head.

use crate::stages::graphcost::{FxMap, SharedMemo, TileMode};
use super::step_memo::{corners, LastCell, StepKey, StepMemo};
use tunelab_sim::device::Device;
use tunelab_sim::model::ModelDesc;
use tunelab_sim::cost::dispatch::{self, LaunchMode};
use tunelab_sim::op::VectorKind;
use tunelab_sim::workload::{build_graph, GraphOp, GraphOptions, ParallelPlan, Workload};
use tunelab_sim::workload::linear_attention::{self, LINEAR_CORE};
use tunelab_sim::Op;

pub use super::host::{engine_names, engines, HostCosts, DEFAULT_ENGINE};
use super::step_ops::{draft_decode_shape, draft_prefill_shape, verify_positions, Piece};
pub use super::part::{grid, Part};


/// What one engine step does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StepShape {
    /// Sequences with prompt tokens in this step, their tokens in all, and the mean prefix end
    /// (keys attended by the last token of a chunk).
    pub prefill_seqs: u64,
    pub prefill_tokens: u64,
    pub prefill_kv: u64,
    /// Requests starting their prompt in this step (a multimodal model encodes their images).
    pub new_requests: u64,
    /// Decoding sequences (one token each) and their mean cache length.
    pub decode_seqs: u64,
    pub decode_ctx: u64,
    /// Sequences that emit a token this step (LM head rows).
    pub emitting: u64,
}

/// The price of one step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepCost {
    /// Wall time of the step (device or dispatch, whichever is longer, plus host work), us.
    pub time_us: f64,
    /// Device busy time, us.
    pub device_us: f64,
    /// Host time the device waited for (per-step work plus dispatch beyond the device time), us.
    pub host_us: f64,
    /// Share of the device time spent on prompt tokens (their linear rows and attention).
    pub prefill_us: f64,
    pub energy_uj: f64,
    pub flops: f64,
    pub rel_error: f64,
    /// Whether the step ran as a captured graph.
    pub graph: bool,
    /// Host time of a hybrid model's mixer kernels launched from Python (Triton launches, the
    /// torch-native Mamba-2 convolution; `hybrid`), us: the share racing the device, and the
    /// share after their host syncs, serial with it. Part of `host_us`/`time_us`, named apart.
    pub mixer_kernels_host_us: f64,
    pub mixer_kernels_serial_us: f64,
}

/// Whether an operator is a per-sequence core (priced with the sequences, not the token rows):
/// attention, or a linear-attention layer's recurrence.
pub(super) fn is_core(o: &GraphOp) -> bool {
    matches!(o.op, Op::Attention { .. }) || o.name.contains(LINEAR_CORE)
}

/// The operators a decode step runs for graph operator `o` under the engine's cache handling:
/// `o` itself, or, for an attention when the engine keeps Hugging Face's own cache
/// (`HostCosts::decode_copies_cache`), per layer and step: `torch.cat` copies the grouped cache
/// (K and V: read and written once), the grouped heads are expanded to every query head and
/// made contiguous (grouped read, expanded written: priced as a copy of the same bytes), and
/// the attention reads the expanded K/V. The step pricer and the operator breakdown (explore)
/// both take a decode step's attention from here.
pub fn decode_attention_ops(host: &HostCosts, o: &GraphOp) -> Vec<(Op, u64, String)> {
    match o.op {
        Op::Attention { kind, batch, heads, kv_heads, q_len, kv_len, head_dim, causal, dtype } if host.decode_copies_cache => {
            let rows = batch * kv_len;
            let mut ops = vec![(Op::Vector { kind: VectorKind::Gather, rows, row_len: 2 * kv_heads * head_dim, dtype }, o.repeat, format!("{}.kv_cat", o.name))];
            if kv_heads < heads {
                ops.push((Op::Vector { kind: VectorKind::Gather, rows, row_len: kv_heads * head_dim + heads * head_dim, dtype }, o.repeat, format!("{}.kv_expand", o.name)));
            }
            ops.push((Op::Attention { kind, batch, heads, kv_heads: heads, q_len, kv_len, head_dim, causal, dtype }, o.repeat, o.name.clone()));
            ops
        }
        _ => vec![(o.op.clone(), o.repeat, o.name.clone())],
    }
}

/// Device time of a step's chunked delta rule (`tokens` prompt tokens of a hybrid model's
/// linear-attention layers) when the engine launches it as Triton kernels: their measured speed
/// (`linear_attention::triton_chunk_us`), which the cube model's price of the same matmuls does
/// not reach. None when the engine runs no Triton mixer. The step pricer and the explain
/// breakdown both take the larger of this and the cube model's price.
pub fn triton_chunk_device_us(host: &HostCosts, la: &tunelab_sim::model::LinearAttention, tp: u64, tokens: u64, device: &Device) -> Option<f64> {
    if host.triton_launch_host_us <= 0.0 {
        return None;
    }
    linear_attention::triton_chunk_us(la, tp, tokens, device)
}

/// Whether the chip's kernel library runs W4A16 / W8A16 grouped matmuls through a dequantised
/// workspace (`tunelab_sim::kernels::grouped_antiquant_workspace`; a chip without a named
/// library uses the default one).
pub fn antiquant_workspace(device: &Device) -> bool {
    let lib = if device.kernel_library.is_empty() { tunelab_sim::kernels::names().1 } else { device.kernel_library.clone() };
    tunelab_sim::kernels::grouped_antiquant_workspace(&lib)
}

/// Prices steps for one model, chip, parallel plan and graph options, memoising by shape.
pub struct StepPricer {
    pub model: ModelDesc,
    pub device: Device,
    pub plan: ParallelPlan,
    pub opts: GraphOptions,
    pub host: HostCosts,
    /// Cache length decode attention reads when the engine reads its whole allocation
    /// (`HostCosts::decode_reads_allocated`); 0: the tokens cached so far.
    pub allocated_ctx: u64,
    mode: TileMode,
    /// Operator estimates; its own unless `share_memo` gave it one shared with other pricers.
    memo: SharedMemo,
    body: FxMap<u64, Part>,
    head: FxMap<u64, Part>,
    dec_attn: FxMap<(u64, u64), Part>,
    pre_attn: FxMap<(u64, u64, u64), Part>,
    vision: FxMap<u64, Part>,
    verify_attn: FxMap<(u64, u64, u64), Part>,
    /// The draft's input projection by (rows, fc_in) (`step_with`).
    fc_parts: FxMap<(u64, u64), Part>,
    /// Speculative decoding: the draft's own pricer and the setting (None: off).
    pub spec: Option<SpecPricing>,
    /// The most decode tokens a captured graph holds under the engine limits last set by
    /// `engine_limits` (None: the engine's fixed `graph_capture_max_batch` sequences).
    pub capture_tokens: Option<u64>,
    /// Co-located pipeline parallelism: the plan holds one of `pipeline` stages and a step runs
    /// as micro-batches through them (`stages::scale::pp_serve`); 1: none.
    pub pipeline: u64,
    /// Steps priced lately, by their exact inputs (`step_memo`).
    step_memo: StepMemo,
    /// The grid cell each table was last read in (`step_memo::LastCell`).
    cells: Cells,
}

/// The last grid cell of each table: body, head, decode and verify attention, prefill attention.
#[derive(Default)]
struct Cells {
    body: LastCell<1, 2>,
    head: LastCell<1, 2>,
    dec: LastCell<2, 4>,
    verify: LastCell<2, 4>,
    pre: LastCell<3, 8>,
}

/// Speculative decoding as the step pricer applies it (`stages::serving_features::speculative`).
pub struct SpecPricing {
    /// Draft tokens per verify step.
    pub k: u64,
    /// Mean tokens a verify step yields (the accept length).
    pub tokens_per_step: f64,
    /// Hidden states the draft's input projection concatenates (fc: fc_in x h -> h).
    pub fc_in: u64,
    /// The draft model's pricer (same chip, plan and options as the target's).
    pub draft: Box<StepPricer>,
}

// Fine-grained TP's LM head (`ftp.lmhead.*`, `stages::scale::finegrained`) runs over the
// emitting rows too.
pub(super) const HEAD_OPS: [&str; 5] = ["final_norm", "lm_head", "tp.logits_allgather", "ftp.lmhead.hidden_allgather", "ftp.lmhead.logits_alltoall"];

impl StepPricer {
    pub fn new(model: ModelDesc, device: Device, plan: ParallelPlan, mut opts: GraphOptions, mode: TileMode, host: HostCosts) -> StepPricer {
        // The chip's kernel library decides how packed expert weights are dequantised
        // (assets/kernels/libraries.json `grouped_matmul_antiquant`).
        opts.expert_dequant_workspace = antiquant_workspace(&device);
        StepPricer {
            model,
            device,
            plan,
            opts,
            host,
            allocated_ctx: 0,
            mode,
            memo: SharedMemo::default(),
            body: FxMap::default(),
            head: FxMap::default(),
            dec_attn: FxMap::default(),
            pre_attn: FxMap::default(),
            vision: FxMap::default(),
            verify_attn: FxMap::default(),
            fc_parts: FxMap::default(),
            spec: None,
            capture_tokens: None,
            pipeline: 1,
            step_memo: StepMemo::default(),
            cells: Cells::default(),
        }
    }

    /// Sets the engine limits the graph capture follows (`HostCosts::capture_tokens`): the
    /// scheduler's max_num_seqs and token budget. The scheduler simulation and the operator
    /// breakdown of its steps call it before pricing steps.
    pub fn engine_limits(&mut self, max_num_seqs: u64, budget: u64) {
        let query = 1 + self.spec.as_ref().map_or(0, |s| s.k);
        self.capture_tokens = self.host.capture_tokens(max_num_seqs, query, budget);
    }

    /// Prices operators through `memo` (and the draft's, if any), shared with other pricers on
    /// the same chip (`graphcost::SharedMemo`); the prices are the same, found once.
    pub fn share_memo(&mut self, memo: &SharedMemo) {
        self.memo = memo.clone();
        if let Some(sp) = self.spec.as_mut() {
            sp.draft.share_memo(memo);
        }
    }

    pub(super) fn graph(&self, w: Workload) -> Result<Vec<GraphOp>, String> {
        Ok(build_graph(&self.model, &w, &self.plan, &self.opts)?.ops)
    }

    /// One operator's estimate through the shared memo; an operator that cannot run names itself.
    pub(super) fn estimate(&self, op: &Op, name: &str) -> Result<tunelab_sim::estimate::Estimate, String> {
        let e = self.memo.borrow_mut().op(op, &self.device, self.mode).map_err(|r| format!("operator {name} cannot run: {r}"))?;
        // The release's weight format (`weight_format`): every priced and listed operator.
        Ok(super::weight_format::scaled(&self.host, op, name, e))
    }

    pub(super) fn cost_ops<'a>(&mut self, ops: impl Iterator<Item = (&'a Op, u64, &'a str)>) -> Result<Part, String> {
        let mut p = Part::default();
        for (op, repeat, name) in ops {
            let e = self.estimate(op, name)?;
            let r = repeat as f64;
            p.device_us += e.time_us * r;
            p.launch_us += e.breakdown.exposed.launch * r;
            p.ops += r;
            // A mixer kernel the engine launches through Triton is priced per step (`hybrid`).
            if !super::hybrid::in_mixer_kernels(&self.host, name) {
                p.host_us += dispatch::host_us(&self.device, op, LaunchMode::Eager) * r;
            }
            if matches!(op, Op::Comm { .. } | Op::MoeComm { .. }) {
                p.collectives += r;
            }
            p.energy_uj += e.energy_uj * r;
            p.flops += e.flops * r;
            p.rel_error = p.rel_error.max(e.relative_error);
        }
        Ok(p)
    }

    /// Linear layers, norms, embeddings and collectives over `tokens` rows (no attention core,
    /// no LM head).
    fn body(&mut self, tokens: u64) -> Result<Part, String> {
        let cell = [grid(tokens)];
        if let Some(p) = self.cells.body.get(&cell, 0) {
            return Ok(p);
        }
        let c = corners(&cell, |[t]| self.body_at(t))?;
        Ok(self.cells.body.keep(&cell, 0, c))
    }

    /// The operators of `piece` at exactly its sizes, priced (what the grid tables hold).
    fn price(&mut self, piece: Piece) -> Result<Part, String> {
        let po = self.piece_ops(piece)?;
        let mut p = self.cost_ops(po.ops.iter().map(|o| (&o.op, o.repeat, o.name.as_str())))?;
        if !po.core.is_empty() || po.core_floor_us.is_some() {
            let mut core = self.cost_ops(po.core.iter().map(|o| (&o.op, o.repeat, o.name.as_str())))?;
            if let Some(us) = po.core_floor_us {
                core.device_us = core.device_us.max(us);
            }
            p.add(&core);
        }
        Ok(p)
    }

    fn body_at(&mut self, t: u64) -> Result<Part, String> {
        if let Some(p) = self.body.get(&t) {
            return Ok(*p);
        }
        let p = self.price(Piece::Body { tokens: t })?;
        self.body.insert(t, p);
        Ok(p)
    }

    /// The final norm, LM head and logits gather for `rows` emitting sequences.
    fn head(&mut self, rows: u64) -> Result<Part, String> {
        if rows == 0 {
            return Ok(Part::default());
        }
        let cell = [grid(rows)];
        if let Some(p) = self.cells.head.get(&cell, 0) {
            return Ok(p);
        }
        let c = corners(&cell, |[r]| self.head_at(r))?;
        Ok(self.cells.head.keep(&cell, 0, c))
    }

    fn head_at(&mut self, r: u64) -> Result<Part, String> {
        if let Some(p) = self.head.get(&r) {
            return Ok(*p);
        }
        let p = self.price(Piece::Head { rows: r })?;
        self.head.insert(r, p);
        Ok(p)
    }

    /// Decode attention of `seqs` sequences over caches of `ctx` tokens.
    fn decode_attention(&mut self, seqs: u64, ctx: u64) -> Result<Part, String> {
        if seqs == 0 {
            return Ok(Part::default());
        }
        // Bilinear over (sequences, context) grid points.
        let cell = [grid(seqs), grid(ctx)];
        if let Some(p) = self.cells.dec.get(&cell, 0) {
            return Ok(p);
        }
        let c = corners(&cell, |[d, c]| self.decode_attention_at(d, c))?;
        Ok(self.cells.dec.keep(&cell, 0, c))
    }

    fn decode_attention_at(&mut self, seqs: u64, ctx: u64) -> Result<Part, String> {
        let key = (seqs, ctx);
        if let Some(p) = self.dec_attn.get(&key) {
            return Ok(*p);
        }
        let p = self.price(Piece::Decode { seqs, ctx })?;
        self.dec_attn.insert(key, p);
        Ok(p)
    }

    /// Verification of `q` positions per sequence over caches of `ctx` tokens (`Piece::Verify`).
    fn verify_attention(&mut self, seqs: u64, q: u64, ctx: u64) -> Result<Part, String> {
        if seqs == 0 {
            return Ok(Part::default());
        }
        let cell = [grid(seqs), grid(ctx)];
        if let Some(p) = self.cells.verify.get(&cell, q) {
            return Ok(p);
        }
        let c = corners(&cell, |[d, c]| self.verify_attention_at(d, q, c))?;
        Ok(self.cells.verify.keep(&cell, q, c))
    }

    fn verify_attention_at(&mut self, seqs: u64, q: u64, ctx: u64) -> Result<Part, String> {
        let key = (seqs, q, ctx);
        if let Some(p) = self.verify_attn.get(&key) {
            return Ok(*p);
        }
        let p = self.price(Piece::Verify { seqs, q, ctx })?;
        self.verify_attn.insert(key, p);
        Ok(p)
    }

    /// Flash (or unfused) attention of `seqs` prompt chunks of `q` tokens each over `kv` keys
    /// (trilinear over the grid).
    fn prefill_attention(&mut self, seqs: u64, q: u64, kv: u64) -> Result<Part, String> {
        if seqs == 0 {
            return Ok(Part::default());
        }
        let kv = kv.max(q);
        // A key grid point below the query grid point is read as that point (kv >= q).
        let cell = [grid(seqs), grid(q), grid(kv)];
        if let Some(p) = self.cells.pre.get(&cell, 0) {
            return Ok(p);
        }
        let c = corners(&cell, |[n, q, k]| self.prefill_attention_at(n, q, k.max(q)))?;
        Ok(self.cells.pre.keep(&cell, 0, c))
    }

    fn prefill_attention_at(&mut self, seqs: u64, q: u64, kv: u64) -> Result<Part, String> {
        let key = (seqs, q, kv);
        if let Some(p) = self.pre_attn.get(&key) {
            return Ok(*p);
        }
        let p = self.price(Piece::Prefill { seqs, q, kv })?;
        self.pre_attn.insert(key, p);
        Ok(p)
    }

    /// The image encoder of a multimodal model for `requests` new requests (0 for text models).
    fn vision(&mut self, requests: u64) -> Result<Part, String> {
        if requests == 0 || (self.model.active_vision().is_none() && self.model.active_audio().is_none()) {
            return Ok(Part::default());
        }
        if let Some(p) = self.vision.get(&requests) {
            return Ok(*p);
        }
        let p = self.price(Piece::Vision { requests })?;
        self.vision.insert(requests, p);
        Ok(p)
    }

    /// `piece` through the grid tables (what a step sums).
    fn part(&mut self, piece: Piece) -> Result<Part, String> {
        match piece {
            Piece::Body { tokens } => self.body(tokens),
            Piece::Head { rows } => self.head(rows),
            Piece::Decode { seqs, ctx } => self.decode_attention(seqs, ctx),
            Piece::Verify { seqs, q, ctx } => self.verify_attention(seqs, q, ctx),
            Piece::Prefill { seqs, q, kv } => self.prefill_attention(seqs, q, kv),
            Piece::Vision { requests } => self.vision(requests),
        }
    }

    /// Prices one step under eager or graph launch: the device model for every part, then the
    /// host work (see the module notes). An operator that cannot run names itself.
    pub fn step(&mut self, s: &StepShape, graph_launch: bool) -> Result<StepCost, String> {
        if s.prefill_tokens + s.decode_seqs == 0 {
            return Ok(StepCost::default());
        }
        let key: StepKey = (*s, graph_launch, self.capture_tokens, self.allocated_ctx, self.pipeline, self.spec.as_ref().map(|sp| (sp.k, sp.tokens_per_step.to_bits(), sp.fc_in)));
        if let Some(c) = self.step_memo.get(&key) {
            return Ok(c);
        }
        let r = if self.pipeline > 1 {
            crate::stages::scale::pp_serve::step(self, s, graph_launch)
        } else {
            let mut spec = self.spec.take();
            let r = self.step_with(s, graph_launch, spec.as_mut());
            self.spec = spec;
            r
        };
        if let Ok(c) = &r {
            self.step_memo.put(key, *c);
        }
        r
    }

    /// The parts of a step whose decoding sequences each run `verify` positions (1; k + 1 when
    /// verifying draft tokens), in the order they are summed. The step pricer sums them through
    /// the grid tables (`device_parts`); the operator breakdown lists their operators at exactly
    /// these sizes (`step_ops`).
    pub(super) fn pieces(&self, s: &StepShape, verify: u64) -> [Piece; 5] {
        let tokens = s.prefill_tokens + s.decode_seqs * verify;
        let ctx = s.decode_ctx.max(self.allocated_ctx);
        let dec = if verify <= 1 { Piece::Decode { seqs: s.decode_seqs, ctx } } else { Piece::Verify { seqs: s.decode_seqs, q: verify, ctx: ctx + verify - 1 } };
        let q = s.prefill_tokens.div_ceil(s.prefill_seqs.max(1));
        // An array, not a Vec: priced for every step not in the step memo (9 M allocations in
        // the DeepSeek-V3 2xA3 tune).
        [
            Piece::Body { tokens },
            Piece::Head { rows: (s.emitting + s.decode_seqs * (verify - 1)).max(1) },
            dec,
            Piece::Prefill { seqs: s.prefill_seqs, q, kv: s.prefill_kv },
            Piece::Vision { requests: s.new_requests },
        ]
    }

    /// The device work of a step whose decoding sequences each run `verify` positions, and the
    /// prompt's share of it: its rows of the linear layers, its attention and image encoding.
    fn device_parts(&mut self, s: &StepShape, verify: u64) -> Result<(Part, f64), String> {
        let tokens = s.prefill_tokens + s.decode_seqs * verify;
        if tokens == 0 {
            return Ok((Part::default(), 0.0));
        }
        let mut all = Part::default();
        let mut prefill_us = 0.0;
        for piece in self.pieces(s, verify) {
            let p = self.part(piece)?;
            prefill_us += match piece {
                Piece::Body { .. } => p.device_us * s.prefill_tokens as f64 / tokens as f64,
                Piece::Prefill { .. } | Piece::Vision { .. } => p.device_us,
                _ => 0.0,
            };
            all.add(&p);
        }
        Ok((all, prefill_us))
    }

    fn step_with(&mut self, s: &StepShape, graph_launch: bool, spec: Option<&mut SpecPricing>) -> Result<StepCost, String> {
        let verify = verify_positions(spec.as_deref(), s);
        let (mut all, prefill_us) = self.device_parts(s, verify)?;
        // The share of the step that produces the decoding sequences' tokens: with speculative
        // decoding one priced verify step yields `tokens_per_step` tokens per sequence, and
        // the scheduler advances one, so that share is divided by it (module notes of
        // `stages::serving_features::speculative`).
        let mut share = 1.0;
        if let Some(sp) = spec {
            if let Some(ds) = draft_decode_shape(s) {
                // k draft forwards of one row per sequence, then the draft's fc over the
                // target's hidden states of the verified positions.
                let (d, _) = sp.draft.device_parts(&ds, 1)?;
                all.add(&d.scaled(sp.k as f64));
                // Kept by its rows: the same operator priced the same way, without hashing
                // the operator once per step.
                let key = (s.decode_seqs * verify, sp.fc_in);
                let fc = match self.fc_parts.get(&key) {
                    Some(p) => *p,
                    None => {
                        let op = self.draft_fc(sp, s, verify);
                        let p = sp.draft.cost_ops(std::iter::once((&op, 1, "draft.fc")))?;
                        self.fc_parts.insert(key, p);
                        p
                    }
                };
                all.add(&fc);
                let (p, dv) = (s.prefill_tokens as f64, (s.decode_seqs * verify) as f64);
                share = (p + dv / sp.tokens_per_step.max(1.0)) / (p + dv);
            }
            if let Some(ps) = draft_prefill_shape(s) {
                all.add(&sp.draft.device_parts(&ps, 1)?.0);
            }
        }
        let h = &self.host;
        let seqs = s.decode_seqs + s.prefill_seqs;
        let step_host = h.step_host_us + h.step_host_us_per_seq * seqs as f64;
        let captured = match self.capture_tokens {
            Some(c) => s.decode_seqs * verify <= c,
            None => s.decode_seqs <= h.graph_capture_max_batch,
        };
        let graph = graph_launch && s.prefill_tokens == 0 && captured;
        // The chip profile's dispatch model (`cost::dispatch`): graph = one graph launch plus
        // the device time; eager = the longer of host and device totals plus the first launch.
        // Piecewise capture: the pieces are graph launches, but every layer's attention and the
        // Python around it run eagerly on the host, which races the device as in eager mode.
        let layers = self.model.llm.as_ref().map_or(0, |t| t.layers) as f64;
        // Hybrid mixers (Gated DeltaNet, Mamba-2) launched as Triton kernels (`hybrid`).
        let (triton, serial) = self.mixer_host_us(s, graph);
        let (mode, host) = if graph && h.piecewise {
            // The attention custom op's Triton launches are part of the Python path between
            // the captured pieces, which the per-layer cost already floors.
            let python = h.piecewise_host_us_per_layer * layers;
            (LaunchMode::Eager, if python > triton { python } else { triton })
        } else if graph {
            (LaunchMode::Graph, 0.0)
        } else {
            // Eager: every launch's dispatch; an engine whose layers run in Python (vLLM's) also
            // cannot issue a layer faster than the Python path a piecewise step leaves uncaptured.
            let dispatch = all.host_us + h.eager_host_us_per_collective * all.collectives + triton;
            let python = h.piecewise_host_us_per_layer * layers;
            (LaunchMode::Eager, if python > dispatch { python } else { dispatch })
        };
        // The all-to-all MoE dispatcher's host syncs leave the device idle until the host's next
        // launch (`a2a_sync`): they lengthen the device's side of the race.
        let a2a = self.a2a_sync(s, verify).us();
        // An eager step with an MC2 / all-to-all exchange runs part of the shorter side in
        // series (`a2a_sync::ep_serial_share`).
        let ep_serial = self.ep_serial_share(s, verify, graph) * (all.device_us + a2a).min(host);
        let time_us = (dispatch::step_us(&self.device, mode, all.device_us + a2a, host) + ep_serial + serial + step_host) * share;
        let device_us = all.device_us * share;
        Ok(StepCost {
            time_us,
            device_us,
            host_us: time_us - device_us,
            prefill_us: prefill_us.min(device_us),
            energy_uj: all.energy_uj * share,
            flops: all.flops * share,
            rel_error: all.rel_error,
            graph,
            mixer_kernels_host_us: triton * share,
            mixer_kernels_serial_us: serial * share,
        })
    }

    /// A static prefill of `batch` prompts of `input_len` tokens (the simple mode's TTFT).
    pub fn prefill(&mut self, batch: u64, input_len: u64, graph_launch: bool) -> Result<StepCost, String> {
        self.step(&self.prefill_shape(batch, input_len), graph_launch)
    }

    /// The step `prefill` prices: every prompt whole, images included.
    pub fn prefill_shape(&self, batch: u64, input_len: u64) -> StepShape {
        let image = self.model.media_tokens();
        let len = input_len.max(1) + image;
        StepShape { prefill_seqs: batch, prefill_tokens: batch * len, prefill_kv: len, new_requests: batch, emitting: batch, ..Default::default() }
    }

    /// A static decode step of `batch` sequences over caches of `ctx` tokens (the simple mode's
    /// TPOT).
    pub fn decode(&mut self, batch: u64, ctx: u64, graph_launch: bool) -> Result<StepCost, String> {
        self.step(&self.decode_shape(batch, ctx), graph_launch)
    }

    /// The step `decode` prices: one token per sequence, the images in the cache.
    pub fn decode_shape(&self, batch: u64, ctx: u64) -> StepShape {
        let image = self.model.media_tokens();
        StepShape { decode_seqs: batch, decode_ctx: ctx + image, emitting: batch, ..Default::default() }
    }
}

//! The parts of one engine step and their operators (`Piece`, `piece_ops`), shared by the step
//! pricer's sums (`price::StepPricer::step`) and the operator breakdown (`step_operators`).
//!
//! Why one place: the step pricer sums a step from its parts (the linear layers over the token
//! rows, the LM head, the decode or verify attention, the prompt chunks' attention, the image
//! encoder) and, with speculative decoding, the draft's steps. The operator breakdown that
//! Explore's detail, the diagnosis and `tunelab eval --ops` show must be the same operators, or
//! it shows a different step from the one the headline numbers come from (as it did before:
//! without the engine's cache copies, without the draft and the verify step). So both take a
//! part's operators from `piece_ops`; the pricer sums them through its grid tables, and
//! `step_operators` lists them at the step's exact sizes.

use super::price::{is_core, SpecPricing, StepPricer, StepShape, HEAD_OPS};
use crate::stages::serving::OpCost;
use tunelab_sim::op::Epilogue;
use tunelab_sim::workload::linear_attention::LINEAR_CORE;
use tunelab_sim::workload::local_attention;
use tunelab_sim::workload::{GraphOp, Workload};
use tunelab_sim::Op;

/// Decode context parallel's collectives (`tunelab_sim::workload::llm::attention`).
fn is_dcp(o: &GraphOp) -> bool {
    o.name.contains(".tp.dcp_")
}

/// One part of a step's device work, by the sizes it is priced at (`StepPricer::pieces`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Piece {
    /// Linear layers, norms, embeddings and collectives over `tokens` rows (no attention core,
    /// no LM head).
    Body { tokens: u64 },
    /// The final norm, LM head and logits gather for `rows` emitting rows.
    Head { rows: u64 },
    /// Decode attention of `seqs` sequences over caches of `ctx` tokens, as the engine's cache
    /// handling runs it (`decode_attention_ops`).
    Decode { seqs: u64, ctx: u64 },
    /// Verification of `q` positions per sequence over caches of `ctx` tokens: the decode
    /// attention kernel with `q` query rows per sequence (the q heads sharing a KV head packed
    /// together, the cache streamed once, as the incremental flash attention runs a
    /// speculative verify), and a linear-attention layer's recurrence over the q tokens.
    Verify { seqs: u64, q: u64, ctx: u64 },
    /// Flash (or unfused) attention of `seqs` prompt chunks of `q` tokens each over `kv` keys.
    Prefill { seqs: u64, q: u64, kv: u64 },
    /// The image encoder of a multimodal model for `requests` new requests.
    Vision { requests: u64 },
}

/// The operators of a `Piece`: `core` are a hybrid model's linear-attention recurrence
/// operators, priced together and floored at `core_floor_us` (the engine's Triton speed,
/// `hybrid::triton_chunk_seqs_us`) when set.
#[derive(Default)]
pub(super) struct PieceOps {
    pub ops: Vec<GraphOp>,
    pub core: Vec<GraphOp>,
    pub core_floor_us: Option<f64>,
}

/// Positions each decoding sequence runs through the target model in a step of shape `s`:
/// k + 1 when verifying a draft's k tokens, else 1.
pub(super) fn verify_positions(spec: Option<&SpecPricing>, s: &StepShape) -> u64 {
    match spec {
        Some(sp) if s.decode_seqs > 0 => sp.k + 1,
        _ => 1,
    }
}

/// The draft's own decode step (one row per decoding sequence; run k times), if any sequence
/// decodes.
pub(super) fn draft_decode_shape(s: &StepShape) -> Option<StepShape> {
    (s.decode_seqs > 0).then(|| StepShape { decode_seqs: s.decode_seqs, decode_ctx: s.decode_ctx, emitting: s.decode_seqs, ..Default::default() })
}

/// The draft also reads each prompt once (its own KV cache), if the step carries prompt tokens.
pub(super) fn draft_prefill_shape(s: &StepShape) -> Option<StepShape> {
    (s.prefill_tokens > 0).then(|| StepShape { decode_seqs: 0, decode_ctx: 0, emitting: s.prefill_seqs, ..*s })
}

impl StepPricer {
    /// The operators of `piece` at exactly its sizes.
    pub(super) fn piece_ops(&self, piece: Piece) -> Result<PieceOps, String> {
        let only = |ops: Vec<GraphOp>| PieceOps { ops, ..Default::default() };
        Ok(match piece {
            // Decode context parallel's gathers and merges belong to the decode attention (the
            // decode rows only), not to every token row of the step.
            Piece::Body { tokens } => only(self.graph(Workload::Decode { batch: tokens, context_len: 1, output_len: 0 })?.into_iter().filter(|o| !is_core(o) && !is_dcp(o) && !HEAD_OPS.contains(&o.name.as_str())).collect()),
            Piece::Head { rows } => only(self.graph(Workload::Decode { batch: rows, context_len: 1, output_len: 0 })?.into_iter().filter(|o| HEAD_OPS.contains(&o.name.as_str())).collect()),
            Piece::Decode { seqs: 0, .. } | Piece::Verify { seqs: 0, .. } | Piece::Prefill { seqs: 0, .. } | Piece::Vision { requests: 0 } => PieceOps::default(),
            Piece::Decode { seqs, ctx } => {
                let g = self.graph(Workload::Decode { batch: seqs, context_len: ctx, output_len: 0 })?;
                let mut ops: Vec<GraphOp> = g.iter().filter(|o| is_core(o)).flat_map(|o| super::price::decode_attention_ops(&self.host, o).into_iter().map(|(op, repeat, name)| GraphOp { name, op, repeat, class: o.class })).collect();
                ops.extend(g.iter().filter(|o| is_dcp(o)).cloned());
                only(ops)
            }
            Piece::Verify { seqs, q, ctx } => self.attention_ops(Workload::Decode { batch: seqs, context_len: ctx, output_len: 0 }, seqs, q, |o| match o.op {
                Op::Attention { kind, batch, heads, kv_heads, kv_len, head_dim, causal, dtype, .. } => Some(Op::Attention { kind, batch, heads, kv_heads, q_len: q, kv_len, head_dim, causal, dtype }),
                _ => None,
            })?,
            Piece::Prefill { seqs, q, kv } => {
                let kv = kv.max(q);
                if let Some(ops) = tunelab_sim::workload::sparse_attention::chunk_cores(&self.model, &self.plan, &self.opts, seqs, q, kv) {
                    // DeepSeek sparse attention: the indexer over every key, the attention over the top-k.
                    return Ok(only(ops));
                }
                if let Some(ops) = tunelab_sim::workload::compressed_attention::chunk_cores(&self.model, &self.plan, &self.opts, seqs, q, kv) {
                    // DeepSeek-V4 / MiniMax-M3: each layer's window, compressed or selected rows and index scores.
                    return Ok(only(ops));
                }
                // The prefill graph's attention shape: for MLA that is the dense form (per-head
                // 192-wide keys, 128-wide values after the latent's up-projection), as
                // vLLM-Ascend and MindIE run a prompt; the decode graph's absorbed form (every
                // head over the 576-wide latent) costs about 3.4 times the FLOPs and is only worth
                // it for one query row per sequence. The chunk's new keys and values are in the
                // compute type, not the cache's (C8 is INT8).
                // Sliding-window and chunked-local cores see only their own keys
                // (`local_attention::chunk_keys`), not the whole context. The cores are taken
                // from the graph of the whole context, where every local layer whose keys the
                // window or chunk limit is split off (`_window`, `_chunk`); the chunk's `q`
                // queries are set below.
                let kind = self.opts.prefill_attention();
                let (window, chunk) = self.model.llm.as_ref().map_or((0, 0), local_attention::local_geometry);
                let mut p = self.attention_ops(Workload::Prefill { batch: seqs, input_len: kv }, seqs, q, |o| match o.op {
                    Op::Attention { batch, heads, kv_heads, head_dim, dtype, .. } => {
                        let local = if o.name.ends_with("_window") {
                            local_attention::chunk_keys(window, 0, q, kv)
                        } else if o.name.ends_with("_chunk") {
                            local_attention::chunk_keys(0, chunk, q, kv)
                        } else {
                            None
                        };
                        let (kv_len, causal) = local.unwrap_or((kv, true));
                        Some(Op::Attention { kind, batch, heads, kv_heads, q_len: q, kv_len, head_dim, causal, dtype })
                    }
                    _ => None,
                })?;
                // DCP on a prefill instance: the earlier context's shards gathered (`prefill_dcp`).
                if let Some(mut g) = tunelab_sim::workload::dcp_context_gather(&self.model, &self.plan, &self.opts, seqs, q, kv, kind, false) {
                    tunelab_sim::topology::assign_links(std::slice::from_mut(&mut g), &self.plan);
                    p.ops.push(g);
                }
                p
            }
            Piece::Vision { requests } => {
                if self.model.active_vision().is_none() && self.model.active_audio().is_none() {
                    return Ok(PieceOps::default());
                }
                // The image and audio encoders a request's media run through.
                only(self.graph(Workload::Prefill { batch: requests, input_len: 1 })?.into_iter().filter(|o| o.name.starts_with("vision.") || o.name.starts_with("audio.")).collect())
            }
        })
    }

    /// The attention operators of `graph`, re-shaped by `reshape` (None drops an operator); plus,
    /// for a hybrid model, its linear-attention layers' chunked recurrence over the `q` new
    /// tokens of each of `seqs` sequences (the state carries the prefix, so the keys do not
    /// enter), at no less than the engine's Triton speed. Shared by the verify step's and the
    /// prefill chunk's attention.
    fn attention_ops(&self, graph: Workload, seqs: u64, q: u64, reshape: impl Fn(&GraphOp) -> Option<Op>) -> Result<PieceOps, String> {
        // The image encoder's own attention is priced once per request (`Piece::Vision`), not here.
        let ops = self.graph(graph)?.into_iter().filter(|o| !o.name.starts_with("vision.")).filter_map(|o| reshape(&o).map(|op| GraphOp { op, ..o })).collect();
        let mut po = PieceOps { ops, ..Default::default() };
        if let Some(la) = self.model.llm.as_ref().and_then(|t| t.linear_attention.as_ref()) {
            po.core = self.graph(Workload::Prefill { batch: seqs, input_len: q })?.into_iter().filter(|o| o.name.contains(LINEAR_CORE)).collect();
            po.core_floor_us = if q > 1 { super::hybrid::triton_chunk_seqs_us(&self.host, la, self.plan.tp, seqs, q, &self.device) } else { None };
        } else if self.model.llm.as_ref().is_some_and(|t| t.mamba.is_some()) {
            // A Mamba-2 hybrid's SSD scan over the chunk (its operators carry LINEAR_CORE too;
            // the body leaves cores out, so without this a Nemotron-H prompt ran no scan).
            po.core = self.graph(Workload::Prefill { batch: seqs, input_len: q })?.into_iter().filter(|o| o.name.contains(LINEAR_CORE)).collect();
        }
        Ok(po)
    }

    /// The draft's input projection over the target's hidden states of the verified positions
    /// (fc: fc_in x h -> h), for a step of shape `s` whose sequences verify `verify` positions.
    pub(super) fn draft_fc(&self, sp: &SpecPricing, s: &StepShape, verify: u64) -> Op {
        let h = self.model.llm.as_ref().map_or(0, |t| t.hidden);
        Op::Matmul { batch: 1, m: s.decode_seqs * verify, n: h, k: sp.fc_in * h, dtype: self.opts.vector_dtype(), weight_dtype: None, epilogue: Epilogue::None }
    }

    /// Every operator of one step of shape `s`, priced one by one at the step's exact sizes
    /// (device time, each operator's own launch included), in the order the pricer sums them.
    /// With speculative decoding the target's operators verify k + 1 positions per decoding
    /// sequence and the draft's are named `draft.*`: its k decode steps (repeats times k), its
    /// input projection and its read of the prompts. The second value: whether a hybrid
    /// model's chunked recurrence was raised to the engine's Triton speed.
    pub fn step_operators(&mut self, s: &StepShape) -> Result<(Vec<OpCost>, bool), String> {
        let spec = self.spec.take();
        let r = self.step_operators_with(s, spec.as_ref());
        self.spec = spec;
        r
    }

    fn step_operators_with(&mut self, s: &StepShape, spec: Option<&SpecPricing>) -> Result<(Vec<OpCost>, bool), String> {
        let mut out = Vec::new();
        let verify = verify_positions(spec, s);
        let mut triton = self.list(s, verify, "", 1, &mut out)?;
        if let Some(sp) = spec {
            if let Some(ds) = draft_decode_shape(s) {
                triton |= sp.draft.list(&ds, 1, "draft.", sp.k, &mut out)?;
                let fc = GraphOp { name: "fc".into(), op: self.draft_fc(sp, s, verify), repeat: 1, class: tunelab_sim::OpClass::Other };
                sp.draft.push_priced(&fc, "draft.", 1, &mut out)?;
            }
            if let Some(ps) = draft_prefill_shape(s) {
                triton |= sp.draft.list(&ps, 1, "draft.", 1, &mut out)?;
            }
        }
        Ok((out, triton))
    }

    /// Appends the operators of a step of shape `s` (`pieces`), each repeated `times` more and
    /// named with `prefix`; true when a floor raised the linear-attention core.
    fn list(&self, s: &StepShape, verify: u64, prefix: &str, times: u64, out: &mut Vec<OpCost>) -> Result<bool, String> {
        let mut raised = false;
        if s.prefill_tokens + s.decode_seqs * verify == 0 {
            return Ok(false);
        }
        for piece in self.pieces(s, verify) {
            let po = self.piece_ops(piece)?;
            for o in &po.ops {
                self.push_priced(o, prefix, times, out)?;
            }
            let start = out.len();
            for o in &po.core {
                self.push_priced(o, prefix, times, out)?;
            }
            if let Some(floor) = po.core_floor_us {
                let floor = floor * times as f64;
                let core: f64 = out[start..].iter().map(|o| o.time_us).sum();
                if core > 0.0 && floor > core {
                    for o in &mut out[start..] {
                        o.time_us *= floor / core;
                    }
                    raised = true;
                }
            }
        }
        Ok(raised)
    }

    /// Prices `o` through the pricer's memo and appends it, `times` more repeats, as `prefix`
    /// + its name.
    fn push_priced(&self, o: &GraphOp, prefix: &str, times: u64, out: &mut Vec<OpCost>) -> Result<(), String> {
        let name = format!("{prefix}{}", o.name);
        let e = self.estimate(&o.op, &name)?;
        let repeat = o.repeat.saturating_mul(times);
        out.push(OpCost { time_us: e.time_us * repeat as f64, name, class: o.class, repeat, op: o.op.clone(), estimate: e });
        Ok(())
    }
}

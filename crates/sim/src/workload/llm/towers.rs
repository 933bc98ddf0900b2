//! The encoders in front of the language model: the audio encoder over 30 s windows and the
//! ViT image encoder, each with its projector into the LLM (split from `llm.rs`, no change).

use super::{stack, Ctx, Geom};
use crate::model::OpClass;
use crate::op::{Epilogue, Op, VectorKind};
use crate::workload::{GraphOp, GraphOptions};

/// The audio encoder (`model::audio`) over each request's 30 s windows, each encoded on its own:
/// the two-convolution stem (3 taps over the log-mel channels at twice the frame rate, then 3
/// taps of stride 2), the bidirectional blocks over the window's frames, and the projector
/// into the LLM (one row per audio token).
pub(super) fn audio(outer: &Ctx, ops: &mut Vec<GraphOp>, a: &crate::model::audio::AudioDesc, batch: u64, opts: &GraphOptions) {
    let e = &a.encoder;
    let ctx = Ctx { t: e, ..*outer };
    let n = batch.saturating_mul(a.windows);
    let frames = a.frames;
    ops.push(outer.mm("audio.conv1".into(), OpClass::Embedding, n.saturating_mul(2 * frames), e.hidden, a.mel_bins * 3, Epilogue::BiasGelu));
    ops.push(outer.mm("audio.conv2".into(), OpClass::Embedding, n.saturating_mul(frames), e.hidden, e.hidden * 3, Epilogue::BiasGelu));
    let g = Geom { batch: n, q_len: frames, kv_len: frames, kind: opts.prefill_attention(), causal: false, rotary: false, cp_split: false, train: false };
    stack(&ctx, ops, "audio.layer", &g, e.layers, opts);
    let rows = n.saturating_mul(a.tokens_each());
    if a.pool > 1 {
        // Qwen2.5-Omni / Qwen2-Audio: `pool` frames averaged into each projector row.
        ops.push(outer.vector("audio.pool".into(), OpClass::Mlp, VectorKind::Reduce, rows, e.hidden.saturating_mul(a.pool)));
    }
    let epi = |last: bool| match (a.projector_bias, last) {
        (true, true) => Epilogue::Bias,
        (true, false) => Epilogue::BiasGelu,
        _ => Epilogue::None,
    };
    if a.projector_hidden > 0 {
        ops.push(outer.mm("audio.projector.fc1".into(), OpClass::Mlp, rows, a.projector_hidden, a.projector_in, epi(false)));
        ops.push(outer.mm("audio.projector.fc2".into(), OpClass::Mlp, rows, a.projector_out, a.projector_hidden, epi(true)));
    } else {
        ops.push(outer.mm("audio.projector".into(), OpClass::Mlp, rows, a.projector_out, a.projector_in, epi(true)));
    }
}

/// The ViT image encoder (`images` per sequence, each encoded on its own) and the projector
/// into the LLM.
pub(super) fn vision(outer: &Ctx, ops: &mut Vec<GraphOp>, v: &crate::model::VisionDesc, batch: u64, opts: &GraphOptions) -> Result<(), String> {
    let batch = batch.saturating_mul(v.images.max(1));
    let e = &v.encoder;
    let ctx = Ctx { t: e, ..*outer };
    let conv = Op::Conv2d {
        batch,
        in_ch: v.channels,
        out_ch: e.hidden,
        h: v.image_size,
        w: v.image_size,
        kh: v.patch_size,
        kw: v.patch_size,
        stride: v.patch_size,
        pad: 0,
        dtype: ctx.vec,
    };
    ops.push(GraphOp { name: "vision.patch_embed".into(), op: conv, repeat: 1, class: OpClass::Embedding });
    let seq = v.encoder_seq(); // patches (+ CLIP's class token)
    let tokens = batch.saturating_mul(seq);
    ops.push(ctx.vector("vision.pre_norm".into(), OpClass::Norm, VectorKind::LayerNorm, tokens, e.hidden));
    let kind = opts.prefill_attention();
    let g = Geom { batch, q_len: seq, kv_len: seq, kind, causal: false, rotary: false, cp_split: false, train: false };
    stack(&ctx, ops, "vision.layer", &g, e.layers, opts);
    let llm_hidden = outer.t.hidden;
    // The projector sees one row per LLM image token: merge x merge patches concatenated
    // (Qwen2.5-VL's PatchMerger: Linear(4h, 4h), GELU, Linear(4h, text hidden)).
    let rows = batch.saturating_mul(v.image_tokens_each());
    let merged = e.hidden.saturating_mul(v.merge.max(1) * v.merge.max(1));
    if v.projector_hidden > 0 {
        ops.push(outer.mm("vision.projector.fc1".into(), OpClass::Mlp, rows, v.projector_hidden, merged, Epilogue::BiasGelu));
        ops.push(outer.mm("vision.projector.fc2".into(), OpClass::Mlp, rows, llm_hidden, v.projector_hidden, Epilogue::Bias));
    } else {
        ops.push(outer.mm("vision.projector".into(), OpClass::Mlp, rows, llm_hidden, merged, Epilogue::Bias));
    }
    // Qwen3-VL's DeepStack mergers: the projector's shape again, once each.
    ops.iter_mut().filter(|o| o.name.starts_with("vision.projector")).for_each(|o| o.repeat = v.mergers());
    Ok(())
}

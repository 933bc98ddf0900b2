//! Multi-token-prediction (MTP) heads as a speculative-decoding draft model (issue 22, section
//! 4): DeepSeek-V3's `num_nextn_predict_layers` and Qwen3-Next's `mtp_num_hidden_layers`.
//!
//! The MTP module (DeepSeek-V3 technical report, section 2.2; vLLM's DeepSeekMTP and
//! Qwen3NextMTP) predicts the token after next from the target's last hidden state h and the
//! embedding e of the token just produced:
//!   RMSNorm(h), RMSNorm(e) -> concat [2 x hidden] -> eh_proj (2 hidden -> hidden)
//!   -> one decoder layer of the target's own shape (MLA + MoE for DeepSeek-V3)
//!   -> the target's final norm and LM head (shared weights).
//! Each draft step is therefore one such layer over the draft tokens, plus the shared LM head;
//! `k` speculative tokens from a single MTP layer run it k times (vLLM reuses the layer), and the
//! verify step is the target over k + 1 tokens per sequence.
//!
//! This module only describes the draft's cost (graph, weights); the speculative mechanism
//! (acceptance, verify step, TPOT per accepted token) lives with the serving scheduler and
//! takes a draft as `(draft_graph, extra_weight_bytes)`.

use super::{forward_graph, Graph, GraphOp, GraphOptions, ParallelPlan, Workload};
use crate::model::{ModelDesc, OpClass};
use crate::op::{Epilogue, Op, VectorKind};
use serde_json::Value;

/// An MTP head read from a model's config.json.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MtpDesc {
    /// MTP decoder layers (1 in DeepSeek-V3 and Qwen3-Next).
    pub layers: u64,
}

/// The config keys that give the MTP depth, in the order they are tried (also under
/// `text_config`).
const KEYS: [&str; 2] = ["num_nextn_predict_layers", "mtp_num_hidden_layers"];

impl MtpDesc {
    /// The MTP head of a Hugging Face config.json (None: the model has none). A malformed
    /// count is an error naming the key.
    pub fn from_hf_config(text: &str) -> Result<Option<MtpDesc>, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("config.json is not valid JSON: {e}"))?;
        Self::from_hf_value(&v)
    }

    /// The same from a parsed config (its `text_config` too).
    pub fn from_hf_value(v: &Value) -> Result<Option<MtpDesc>, String> {
        for obj in [Some(v), v.get("text_config")].into_iter().flatten().filter_map(Value::as_object) {
            if let Some(m) = Self::from_hf_object(obj)? {
                return Ok(Some(m));
            }
            if KEYS.iter().any(|k| obj.contains_key(*k)) {
                return Ok(None);
            }
        }
        Ok(None)
    }

    /// The MTP head of one config object (the model loader's path, `crate::model::hf`, which
    /// has already picked the text model's object).
    pub fn from_hf_object(obj: &serde_json::Map<String, Value>) -> Result<Option<MtpDesc>, String> {
        {
            for k in KEYS {
                if let Some(x) = obj.get(k) {
                    let n = x.as_u64().filter(|n| *n <= 16).ok_or_else(|| format!("config field '{k}' must be a whole number 0..=16, got {x}"))?;
                    return Ok((n > 0).then_some(MtpDesc { layers: n }));
                }
            }
        }
        Ok(None)
    }

    /// The draft as a model: the target's decoder layer `layers` deep, every layer of the kind
    /// of the target's last layer (MoE for DeepSeek-V3 and Qwen3-Next), with the target's
    /// vocabulary (the shared embedding and LM head).
    pub fn draft_model(&self, target: &ModelDesc) -> Result<ModelDesc, String> {
        target.llm.as_ref().ok_or("an MTP head needs a transformer model")?;
        let mut d = target.clone();
        d.name = format!("{} MTP", target.name);
        d.vision = None;
        let dt = d.llm.as_mut().ok_or("an MTP head needs a transformer model")?;
        dt.layers = self.layers;
        if let Some(m) = dt.moe.as_mut() {
            // The MTP layer comes after the dense-first layers: a MoE layer.
            m.dense_layers = 0;
        }
        dt.sliding_window = None;
        // The draft's layers are the target's last layer kind: the target's per-layer stack
        // (its hybrid mixers and MLP pattern) does not carry over.
        dt.stack.clear();
        dt.mamba = None;
        Ok(d)
    }

    /// One draft step's per-chip graph over workload `w` (the draft tokens): the MTP input
    /// projection (two RMSNorms and eh_proj) and the draft model's forward, its ops named
    /// `mtp.*`.
    pub fn draft_graph(&self, target: &ModelDesc, w: &Workload, plan: &ParallelPlan, opts: &GraphOptions) -> Result<Graph, String> {
        let draft = self.draft_model(target)?;
        let t = draft.llm.as_ref().ok_or("an MTP head needs a transformer model")?;
        let tokens = match *w {
            Workload::Decode { batch, .. } => batch,
            Workload::Prefill { batch, input_len } => batch.saturating_mul(input_len),
            Workload::TrainStep { .. } => return Err("an MTP draft runs at inference".into()),
        };
        let vec = opts.vector_dtype();
        let (mm, weight) = (opts.precision.activation(), opts.precision.weight());
        let h = t.hidden;
        let mut ops = vec![
            GraphOp { name: "mtp.enorm".into(), op: Op::Vector { kind: VectorKind::RmsNorm, rows: tokens, row_len: h, dtype: vec }, repeat: self.layers, class: OpClass::Norm },
            GraphOp { name: "mtp.hnorm".into(), op: Op::Vector { kind: VectorKind::RmsNorm, rows: tokens, row_len: h, dtype: vec }, repeat: self.layers, class: OpClass::Norm },
            GraphOp {
                name: "mtp.eh_proj".into(),
                op: Op::Matmul { batch: 1, m: tokens, n: h, k: 2 * h, dtype: mm, weight_dtype: (weight != mm).then_some(weight), epilogue: Epilogue::None },
                repeat: self.layers,
                class: OpClass::Mlp,
            },
        ];
        for mut o in forward_graph(&draft, w, plan, opts)?.ops {
            o.name = format!("mtp.{}", o.name);
            ops.push(o);
        }
        Ok(Graph { ops })
    }

    /// Parameters the MTP head adds to the target: its decoder layers, eh_proj and the two
    /// norms (the embedding and LM head are the target's).
    pub fn extra_params(&self, target: &ModelDesc) -> Result<u64, String> {
        let draft = self.draft_model(target)?;
        let t = draft.llm.as_ref().ok_or("an MTP head needs a transformer model")?;
        let embed_and_head = t.vocab.saturating_mul(t.hidden).saturating_mul(if t.tied_embeddings { 1 } else { 2 });
        let layers = draft.params().total.saturating_sub(embed_and_head).saturating_sub(t.hidden);
        Ok(layers.saturating_add(2 * t.hidden * t.hidden).saturating_add(2 * t.hidden))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deepseek_v3_mtp_is_one_moe_layer_of_about_twelve_billion_parameters() {
        let text = crate::model::bundled_models().into_iter().find(|(i, _)| *i == "deepseek-v3").unwrap().1;
        let mtp = MtpDesc::from_hf_config(text).unwrap().expect("DeepSeek-V3 has an MTP layer");
        assert_eq!(mtp.layers, 1);
        let target = crate::model::load_model(text).unwrap().model;
        // DeepSeek-V3's README: 671B main model + 14B MTP module, the latter with its own copy
        // of the 129280 x 7168 embedding and head (1.85B): about 12B of layer and projection.
        let extra = mtp.extra_params(&target).unwrap() as f64 / 1e9;
        assert!((extra + 1.853 - 14.0).abs() < 0.7, "MTP layer {extra:.2}B");
        let w = Workload::Decode { batch: 8, context_len: 1024, output_len: 1 };
        let g = mtp.draft_graph(&target, &w, &ParallelPlan::default(), &GraphOptions::default()).unwrap();
        assert!(g.ops.iter().any(|o| o.name == "mtp.eh_proj"));
        assert!(g.ops.iter().any(|o| o.name.starts_with("mtp.layer") && o.name.contains(".moe.experts")), "the MTP layer is a MoE layer");
        assert!(g.ops.iter().any(|o| o.name == "mtp.lm_head"));
        assert!(MtpDesc::from_hf_config(r#"{"num_nextn_predict_layers": -1}"#).unwrap_err().contains("num_nextn_predict_layers"));
        assert_eq!(MtpDesc::from_hf_config(r#"{"text_config": {"mtp_num_hidden_layers": 1}}"#).unwrap(), Some(MtpDesc { layers: 1 }));
        assert_eq!(MtpDesc::from_hf_config(r#"{"hidden_size": 8}"#).unwrap(), None);
    }
}

//! A loaded model's identity, checked: total and active parameters and the weight bytes per
//! precision, from the one formula memory uses (`memory::chip_params` on one chip, which walks
//! the same layer stack as `TransformerDesc::params`), its layer stack in words, and what
//! Tunelab approximates (which part, how). Shown by `tunelab eval`, the report and the app's
//! model banner; `ModelDesc::approximations` is what fidelity rows cite.

use super::{Ffn, Mixer, ModelDesc, ParamCount};
use crate::workload::ParallelPlan;
use std::collections::BTreeMap;

/// Weight bytes of the whole model at one deployment precision.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightBytes {
    /// "bf16", "int8 (W8A8 / W8A16)", "int4 (W4A16)".
    pub precision: &'static str,
    pub bytes: u64,
}

/// What a loaded model is, as Tunelab prices it.
#[derive(Clone, Debug, PartialEq)]
pub struct Identity {
    pub params: ParamCount,
    /// Weight bytes per precision: linear layers at that precision, embeddings, norms and
    /// routers in 16 bits (as `memory::memory_per_chip` holds them).
    pub weights: Vec<WeightBytes>,
    /// The layer stack in words ("24 layers: 12 x sliding-window attention (128) with sinks +
    /// MoE, 12 x full attention with sinks + MoE").
    pub stack: String,
    /// Approximations: "part: how".
    pub approximations: Vec<String>,
}

fn giga(n: u64) -> String {
    if n >= 1_000_000_000 {
        format!("{:.2}B", n as f64 / 1e9)
    } else {
        format!("{:.1}M", n as f64 / 1e6)
    }
}

fn gb(b: u64) -> String {
    format!("{:.1} GB", b as f64 / 1e9)
}

impl ModelDesc {
    /// What Tunelab approximates in this model, one "part: how" per entry (empty: priced as
    /// described by its config).
    pub fn approximations(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(t) = &self.llm {
            out.extend(t.approx.iter().cloned());
            if let Some(q) = &t.checkpoint_quant {
                let ql = q.to_ascii_lowercase();
                if ql.contains("fp4") || ql.contains("mxfp") {
                    out.push(format!(
                        "weights: the checkpoint stores {q} weights; Ascend 910B / 910C have no FP4 matmul, so they are priced at the scenario's weight precision: bf16 (dequantised at load) by default, or the int4 W4A16 path when chosen (docs/models.md)"
                    ));
                } else {
                    out.push(format!("weights: the checkpoint is quantised ({q}); priced at the scenario's weight precision"));
                }
            }
        }
        if self.llm.is_none() && !self.graph.is_empty() {
            out.push("whole model: an explicit operator graph; parameters are its operators' weights".into());
        }
        if self.family == super::ModelFamily::Diffusion {
            // A bundled pipeline's parts priced by a stand-in (HiDream-I1's Llama encoder).
            out.extend(crate::workload::diffusers::pipeline_approximations(&self.name));
        }
        out
    }

    /// The model's layer stack in words.
    pub fn stack_summary(&self) -> String {
        let Some(t) = &self.llm else { return format!("{} operators", self.graph.len()) };
        let mut kinds: BTreeMap<(Mixer, Ffn), u64> = BTreeMap::new();
        for r in t.runs() {
            *kinds.entry((r.mixer, r.ffn)).or_insert(0) += r.count;
        }
        let parts: Vec<String> = kinds
            .iter()
            .map(|((m, f), n)| {
                let ffn = match f {
                    Ffn::Dense { intermediate } => format!("MLP {intermediate}"),
                    Ffn::Moe => t.moe.as_ref().map_or("MoE".into(), |m| {
                        let shared = if m.shared_intermediate > 0 { " + shared" } else { "" };
                        let latent = if m.latent > 0 { format!(", latent {}", m.latent) } else { String::new() };
                        format!("MoE {} experts top-{}{shared}{latent}", m.experts, m.top_k)
                    }),
                    Ffn::None => "no MLP".into(),
                };
                let mixer = match m {
                    Mixer::Attention { .. } if t.mla.is_some() => m.label().replace("attention", "MLA"),
                    _ => m.label(),
                };
                format!("{n} x {mixer} + {ffn}")
            })
            .collect();
        let mut s = format!("{} layers: {}", t.layers, parts.join(", "));
        if t.mtp_layers > 0 {
            s.push_str(&format!("; {} MTP layer(s)", t.mtp_layers));
        }
        if let Some(v) = &self.vision {
            s.push_str(&format!("; vision tower {} x {}", v.encoder.layers, v.encoder.hidden));
        }
        if let Some(a) = &t.audio {
            s.push_str(&format!("; audio tower {} x {}", a.encoder.layers, a.encoder.hidden));
        }
        s
    }

    /// Parameters, weight bytes per precision, stack and approximations.
    pub fn identity(&self) -> Identity {
        let one = crate::memory::chip_params(self, &ParallelPlan::default());
        let weights = [("bf16", 16u64), ("int8 (W8A8 / W8A16)", 8), ("int4 (W4A16)", 4)]
            .into_iter()
            .map(|(precision, bits)| WeightBytes { precision, bytes: one.linear.saturating_mul(bits).div_ceil(8).saturating_add(one.other.saturating_mul(2)) })
            .collect();
        Identity { params: self.params(), weights, stack: self.stack_summary(), approximations: self.approximations() }
    }

    /// One line: name, parameters (active), weight bytes per precision.
    pub fn identity_line(&self) -> String {
        let id = self.identity();
        let active = if id.params.active != id.params.total { format!(" ({} active)", giga(id.params.active)) } else { String::new() };
        let w: Vec<String> = id.weights.iter().map(|w| format!("{} {}", w.precision.split(' ').next().unwrap_or(w.precision), gb(w.bytes))).collect();
        format!("{}: {} parameters{active}; weights {}", self.name, giga(id.params.total), w.join(" / "))
    }
}

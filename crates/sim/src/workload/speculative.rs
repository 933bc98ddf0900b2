//! Speculative decoding: a cheap draft proposes `k` tokens, the target model verifies them in
//! one forward over k + 1 positions per sequence, and keeps the accepted prefix plus one token
//! of its own (Leviathan, Kalman and Matias 2023, arXiv:2211.17192; Chen et al. 2023,
//! arXiv:2302.01318).
//!
//! The mechanism is the same for every draft; only the draft's shape differs:
//! - EAGLE (Li et al. 2024, arXiv:2401.15077): one decoder layer of the target's widths fed
//!   with the target's last hidden state and the token embedding (fc 2h -> h), the target's
//!   LM head;
//! - EAGLE-3 (Li et al. 2025, arXiv:2503.01840): one decoder layer fed with three of the
//!   target's hidden states (fc 3h -> h) and its own smaller LM head (`draft_vocab_size`,
//!   32,000 in the published drafts);
//! - MTP (DeepSeek-V3 report, arXiv:2412.19437, section 2.2; Qwen3-Next): the checkpoint's own
//!   `num_nextn_predict_layers` next-token modules, each one layer of the target's kind (MoE
//!   where the target is) with an eh_proj (2h -> h) and the shared LM head.
//!
//! With a per-token acceptance probability `a` (independent positions, the papers' model), a
//! verify step of k draft tokens yields on average (1 - a^(k+1)) / (1 - a) tokens (Leviathan et
//! al., eq. 1): the "accept length" SGLang and vLLM log. TPOT per accepted token is the step's
//! time (k draft forwards plus the k + 1-token verify) over that expectation.

use crate::model::{ModelDesc, ModelFamily, TransformerDesc};
use serde::{Deserialize, Serialize};

/// Most draft tokens a setting may ask for (the engines' docs use 1 to 8).
pub const MAX_SPECULATIVE_TOKENS: u64 = 16;

/// Which draft proposes the tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpecMethod {
    Eagle,
    Eagle3,
    Mtp,
}

impl SpecMethod {
    /// Parses "eagle", "eagle3" (also "eagle-3"), "mtp" (also "deepseek_mtp").
    pub fn parse(s: &str) -> Result<SpecMethod, String> {
        match s.to_ascii_lowercase().as_str() {
            "eagle" => Ok(SpecMethod::Eagle),
            "eagle3" | "eagle-3" => Ok(SpecMethod::Eagle3),
            "mtp" | "deepseek_mtp" | "qwen3_next_mtp" => Ok(SpecMethod::Mtp),
            other => Err(format!("unknown speculative method '{other}' (eagle, eagle3, mtp)")),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            SpecMethod::Eagle => "eagle",
            SpecMethod::Eagle3 => "eagle3",
            SpecMethod::Mtp => "mtp",
        }
    }
    /// Hidden states the draft's input projection concatenates (its fc is `fc_inputs x h -> h`).
    pub fn fc_inputs(self) -> u64 {
        match self {
            SpecMethod::Eagle | SpecMethod::Mtp => 2,
            SpecMethod::Eagle3 => 3,
        }
    }
}

/// Expected tokens one verify step yields with `k` draft tokens and per-token acceptance `a`:
/// (1 - a^(k+1)) / (1 - a), i.e. 1 + a + ... + a^k.
pub fn expected_tokens(k: u64, a: f64) -> f64 {
    let a = a.clamp(0.0, 1.0);
    let mut sum = 0.0;
    let mut term = 1.0;
    for _ in 0..=k {
        sum += term;
        term *= a;
    }
    sum
}

/// The variance of the tokens one verify step yields (k draft tokens, each accepted with
/// probability `a` while the previous ones were): T = 1 + accepted prefix, P(T >= j) =
/// a^(j-1) for j = 1..=k+1, so E[T^2] = sum (2j - 1) a^(j-1).
pub fn tokens_variance(k: u64, a: f64) -> f64 {
    let a = a.clamp(0.0, 1.0);
    let (mut m1, mut m2, mut p) = (0.0, 0.0, 1.0);
    for j in 1..=k + 1 {
        m1 += p;
        m2 += (2 * j - 1) as f64 * p;
        p *= a;
    }
    (m2 - m1 * m1).max(0.0)
}

/// The per-token acceptance that gives a mean accept length `len` with `k` draft tokens (the
/// inverse of `expected_tokens`, by bisection: it is increasing in `a`).
pub fn acceptance_for_length(len: f64, k: u64) -> Result<f64, String> {
    let top = (k + 1) as f64;
    if !(len.is_finite() && (1.0..=top).contains(&len)) {
        return Err(format!("accept length {len} must be within [1, {top}] with {k} speculative tokens"));
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if expected_tokens(k, mid) < len {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(0.5 * (lo + hi))
}

/// A speculative-decoding setting, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpecDecode {
    pub method: SpecMethod,
    /// Draft tokens per verify step (vLLM `num_speculative_tokens`, SGLang
    /// `--speculative-num-steps` with topk 1).
    pub num_speculative_tokens: u64,
    /// Per-token acceptance probability, 0..=1.
    pub acceptance_rate: f64,
    /// Draft LM-head rows (EAGLE-3's `draft_vocab_size`); 0: the target's vocabulary.
    pub draft_vocab: u64,
    /// MTP modules (`num_nextn_predict_layers`); ignored by EAGLE drafts (one layer).
    pub mtp_layers: u64,
}

impl SpecDecode {
    /// Checks the setting; `field` names it in messages.
    pub fn validate(&self, field: &str) -> Result<(), String> {
        if self.num_speculative_tokens == 0 || self.num_speculative_tokens > MAX_SPECULATIVE_TOKENS {
            return Err(format!("{field}.num_speculative_tokens: {} must be in 1..={MAX_SPECULATIVE_TOKENS}", self.num_speculative_tokens));
        }
        if !(self.acceptance_rate.is_finite() && (0.0..=1.0).contains(&self.acceptance_rate)) {
            return Err(format!("{field}.acceptance_rate: {} must be within 0..1 (the chance a draft token is accepted)", self.acceptance_rate));
        }
        if self.draft_vocab > crate::model::MAX_VOCAB {
            return Err(format!("{field}.draft_vocab: {} is larger than {}", self.draft_vocab, crate::model::MAX_VOCAB));
        }
        if self.method == SpecMethod::Mtp && !(1..=8).contains(&self.mtp_layers) {
            return Err(format!("{field}.mtp_layers: {} must be in 1..=8", self.mtp_layers));
        }
        Ok(())
    }

    /// Mean tokens a verify step yields (the accept length, bonus token included).
    pub fn tokens_per_step(&self) -> f64 {
        expected_tokens(self.num_speculative_tokens, self.acceptance_rate)
    }

    /// The draft as a model of its own: one forward of it is one draft step (k per verify).
    /// Errors when the target is not a decoder LLM.
    pub fn draft_model(&self, target: &ModelDesc) -> Result<ModelDesc, String> {
        let t = target.llm.as_ref().filter(|t| !t.encoder).ok_or_else(|| format!("speculative decoding needs a decoder language model; '{}' is not one", target.name))?;
        let mut d: TransformerDesc = t.clone();
        d.linear_attention = None;
        d.sliding_window = None;
        d.stack.clear();
        d.mamba = None;
        match self.method {
            SpecMethod::Mtp => {
                // The checkpoint's own next-token modules (read by the loader from
                // num_nextn_predict_layers / mtp_num_hidden_layers): the target's layer kind,
                // shared head. A model without them cannot draft this way.
                if t.mtp_layers == 0 {
                    return Err(format!(
                        "speculative.method: mtp drafts with the checkpoint's own MTP layers; '{}' has none in its config.json (num_nextn_predict_layers or mtp_num_hidden_layers)",
                        target.name
                    ));
                }
                d.layers = t.mtp_layers;
                d.mtp_layers = 0;
                if let Some(m) = d.moe.as_mut() {
                    m.dense_layers = 0;
                }
            }
            SpecMethod::Eagle | SpecMethod::Eagle3 => {
                // A dense LLaMA-style layer of the target's widths (for a MoE target, the
                // published drafts use a dense MLP of the active experts' width).
                d.layers = 1;
                if let Some(m) = d.moe.take() {
                    if d.intermediate == 0 {
                        d.intermediate = m.expert_intermediate.saturating_mul(m.top_k).saturating_add(m.shared_intermediate);
                    }
                }
                if t.mla.is_some() {
                    d.mla = None;
                    d.kv_heads = d.heads;
                }
                if self.method == SpecMethod::Eagle3 && self.draft_vocab > 0 {
                    d.vocab = self.draft_vocab;
                }
                d.tied_embeddings = false;
            }
        }
        let family = if d.moe.is_some() { ModelFamily::MoeLlm } else { ModelFamily::DenseLlm };
        Ok(ModelDesc { name: format!("{} {} draft", target.name, self.method.name()), family, dtype: target.dtype, llm: Some(d), vision: None, graph: Vec::new() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_length_matches_the_closed_form_and_inverts() {
        // a = 0.5, k = 4: 1 + .5 + .25 + .125 + .0625.
        assert!((expected_tokens(4, 0.5) - 1.9375).abs() < 1e-12);
        assert_eq!(expected_tokens(3, 1.0), 4.0);
        assert_eq!(expected_tokens(3, 0.0), 1.0);
        let a = acceptance_for_length(2.04, 4).unwrap();
        assert!((expected_tokens(4, a) - 2.04).abs() < 1e-9, "{a}");
        assert!(acceptance_for_length(6.0, 4).is_err());
        assert!(acceptance_for_length(0.5, 4).is_err());
    }

    #[test]
    fn bad_settings_name_the_field() {
        let s = SpecDecode { method: SpecMethod::Eagle3, num_speculative_tokens: 3, acceptance_rate: 1.5, draft_vocab: 32000, mtp_layers: 1 };
        assert!(s.validate("x").unwrap_err().contains("x.acceptance_rate"));
        let s = SpecDecode { num_speculative_tokens: 0, acceptance_rate: 0.5, ..s };
        assert!(s.validate("x").unwrap_err().contains("num_speculative_tokens"));
        assert!(SpecMethod::parse("medusa").unwrap_err().contains("eagle3"));
    }
}

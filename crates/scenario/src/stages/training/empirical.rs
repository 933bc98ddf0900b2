//! Learning-rate and batch-size advice from a published empirical fit. This is NOT a simulation:
//! the device model says nothing about convergence, so Tunelab only reports what a published
//! scaling study fitted, names it, and labels it as such wherever it is shown.
//!
//! Source: DeepSeek-AI, "DeepSeek LLM: Scaling Open-Source Language Models with Longtermism",
//! arXiv:2401.02954 (2024), section 3.1, fitted on their own small-scale runs:
//!   eta_opt = 0.3118 * C^-0.1250,   B_opt = 0.2920 * C^0.3271  (B in tokens),
//! where C = M * D is the compute budget, M the non-embedding FLOPs per token,
//! M = 72 n_layer d_model^2 + 6 n_layer d_model l_seq, and D the training tokens.
//! When no token budget is given, D defaults to 20 tokens per parameter, the compute-optimal ratio
//! of Hoffmann et al., "Training Compute-Optimal Large Language Models", arXiv:2203.15556 (2022).

use serde::{Deserialize, Serialize};

/// The label every output of this module carries.
pub const LABEL: &str = "empirical fit (DeepSeek LLM 2024, arXiv:2401.02954, sec. 3.1), not a simulation";

/// Advice for one training setup.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HparamAdvice {
    /// Always `LABEL`.
    pub label: String,
    /// Non-embedding FLOPs per token (M) and the compute budget C = M * D.
    pub flops_per_token: f64,
    pub train_tokens: f64,
    pub compute_flops: f64,
    /// Fitted optimal peak learning rate and batch size (tokens, and sequences of `seq_len`).
    pub lr_opt: f64,
    pub batch_tokens_opt: f64,
    pub batch_sequences_opt: f64,
    /// The configured global batch in tokens and its ratio to the fit's optimum.
    pub batch_tokens: f64,
    pub batch_ratio: f64,
    /// One sentence for the report.
    pub summary: String,
}

/// DeepSeek's M for a transformer: 72 L d^2 + 6 L d l_seq FLOPs per token.
pub fn flops_per_token(layers: u64, d_model: u64, seq_len: u64) -> f64 {
    let (l, d, s) = (layers as f64, d_model as f64, seq_len as f64);
    72.0 * l * d * d + 6.0 * l * d * s
}

/// Advice for a model of `layers` x `d_model` with `params` parameters, trained on sequences of
/// `seq_len` with a global batch of `global_batch` sequences, for `train_tokens` tokens (None:
/// 20 per parameter). Errors on sizes the fit cannot take (zero or non-finite).
pub fn advise(layers: u64, d_model: u64, params: f64, seq_len: u64, global_batch: u64, train_tokens: Option<f64>) -> Result<HparamAdvice, String> {
    if layers == 0 || d_model == 0 || seq_len == 0 || global_batch == 0 {
        return Err("learning-rate advice needs layers, hidden size, sequence length and batch above zero".into());
    }
    let d = match train_tokens {
        Some(t) if t.is_finite() && t > 0.0 => t,
        Some(t) => return Err(format!("training.train_tokens must be a positive number, got {t}")),
        None if params.is_finite() && params > 0.0 => 20.0 * params,
        None => return Err("learning-rate advice needs the parameter count or training.train_tokens".into()),
    };
    let m = flops_per_token(layers, d_model, seq_len);
    let c = m * d;
    if !(c.is_finite() && c > 0.0) {
        return Err("the compute budget is out of range for the fit".into());
    }
    let lr = 0.3118 * libm::pow(c, -0.1250);
    let bt = 0.2920 * libm::pow(c, 0.3271);
    let batch_tokens = global_batch as f64 * seq_len as f64;
    let ratio = batch_tokens / bt;
    let summary = format!(
        "For C = {c:.2e} FLOPs the fit suggests a peak learning rate of {lr:.2e} and a batch of {:.2} M tokens ({:.0} sequences of {seq_len}); the configured batch is {:.2}x that. {LABEL}.",
        bt / 1e6,
        bt / seq_len as f64,
        ratio
    );
    Ok(HparamAdvice {
        label: LABEL.into(),
        flops_per_token: m,
        train_tokens: d,
        compute_flops: c,
        lr_opt: lr,
        batch_tokens_opt: bt,
        batch_sequences_opt: bt / seq_len as f64,
        batch_tokens,
        batch_ratio: ratio,
        summary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_matches_the_published_formula() {
        // Llama-2-7B shape (32 x 4096), 4k sequences, 2T tokens.
        let a = advise(32, 4096, 6.7e9, 4096, 256, Some(2e12)).unwrap();
        let c = a.compute_flops;
        assert!((a.lr_opt - 0.3118 * c.powf(-0.125)).abs() < 1e-15);
        assert!(a.lr_opt > 1e-4 && a.lr_opt < 1e-3, "lr {}", a.lr_opt);
        assert!(a.batch_tokens_opt > 1e6 && a.batch_tokens_opt < 2e7);
        assert!(a.summary.contains("not a simulation"));
        assert!(advise(0, 1, 1.0, 1, 1, None).is_err());
    }
}

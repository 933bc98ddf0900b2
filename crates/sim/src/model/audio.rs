//! The audio encoder of a multimodal wrapper (`audio_config`): a Whisper-style encoder
//! (Radford et al. 2022, "Robust Speech Recognition via Large-Scale Weak Supervision", section
//! 2.2; transformers `WhisperEncoder`, `VoxtralEncoder`, Qwen2.5-Omni's audio tower): a stem of
//! two 3-tap 1-D convolutions over `num_mel_bins` log-mel channels (the second of stride 2, so
//! 30 s of audio become `max_source_positions` = 1500 frames), learned positions per frame,
//! `layers` pre-LayerNorm blocks (biased multi-head attention, a GELU MLP), a final LayerNorm,
//! and a projector into the language model: Voxtral's concatenates 4 consecutive frames
//! (`audio_config.intermediate_size` = 4 x width) into two bias-free linears to the text width;
//! Qwen-Omni's towers end in one linear to `output_dim`; otherwise one linear to the text
//! width.
//!
//! Counted in the model's parameters and held in memory on the first pipeline stage, like the
//! vision tower. Requests carry no audio unless the scenario gives `audio_seconds`: then each
//! request's windows run through the stem, the blocks and the projector in prefill
//! (`workload::llm`), and their tokens join its prompt (`ModelDesc::media_tokens`).

use super::{MlpKind, NormKind, TransformerDesc};
use serde::{Deserialize, Serialize};

/// An audio encoder and its projector.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AudioDesc {
    /// The encoder's blocks (LayerNorm, GELU MLP, biased bidirectional attention, no vocabulary).
    pub encoder: TransformerDesc,
    /// Log-mel channels into the convolution stem.
    pub mel_bins: u64,
    /// Frames after the stem for one 30 s window (learned positions, one per frame).
    pub frames: u64,
    /// Projector into the language model: input width, hidden width (0: one linear), output
    /// width, and whether its linears carry biases.
    pub projector_in: u64,
    #[serde(default)]
    pub projector_hidden: u64,
    pub projector_out: u64,
    #[serde(default)]
    pub projector_bias: bool,
    /// 30-second windows of audio each request carries (`deployment.serving.audio_seconds`,
    /// rounded up: a Whisper-style encoder pads every window to 30 s); 0, the default: text
    /// prompts, the tower held but not run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub windows: u64,
    /// Frames averaged into one before the projector (Qwen2-Audio's and Qwen2.5-Omni's
    /// `avg_pooler`, AvgPool1d(2, stride 2): 750 tokens per 30 s window); 1: none.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub pool: u64,
    /// Fixed sinusoidal frame positions (Qwen2.5-Omni's `SinusoidsPositionEmbedding`, a buffer)
    /// instead of learned ones: not parameters.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sinusoidal_positions: bool,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

fn one() -> u64 {
    1
}

fn is_one(x: &u64) -> bool {
    *x == 1
}

impl AudioDesc {
    /// A Whisper-style encoder of these widths.
    pub fn whisper(layers: u64, hidden: u64, heads: u64, ffn: u64, mel_bins: u64, frames: u64) -> AudioDesc {
        AudioDesc {
            encoder: TransformerDesc::vision_tower(layers, hidden, heads, ffn, MlpKind::Gelu, NormKind::LayerNorm, frames.max(1)),
            mel_bins,
            frames,
            projector_in: hidden,
            projector_hidden: 0,
            projector_out: hidden,
            projector_bias: true,
            windows: 0,
            pool: 1,
            sinusoidal_positions: false,
        }
    }

    /// Tokens one 30 s window adds to the prompt: its frames, `projector_in / width` of them
    /// concatenated per token (Voxtral: 4, 375 tokens per window; one linear: every frame),
    /// then `pool` averaged into one (Qwen2.5-Omni: 2, 750 tokens per window).
    pub fn tokens_each(&self) -> u64 {
        let group = (self.projector_in / self.encoder.hidden.max(1)).max(1);
        self.frames / group / self.pool.max(1)
    }

    /// Tokens a request's audio adds to its prompt.
    pub fn tokens(&self) -> u64 {
        self.windows.saturating_mul(self.tokens_each())
    }

    /// Parameters: convolution stem, positions, blocks and final norm, projector.
    pub fn params(&self) -> u64 {
        let h = self.encoder.hidden;
        let stem = self.mel_bins * h * 3 + h + h * h * 3 + h;
        let positions = if self.sinusoidal_positions { 0 } else { self.frames * h };
        let bias = |n: u64| if self.projector_bias { n } else { 0 };
        let proj = if self.projector_hidden > 0 {
            self.projector_in * self.projector_hidden + bias(self.projector_hidden) + self.projector_hidden * self.projector_out + bias(self.projector_out)
        } else {
            self.projector_in * self.projector_out + bias(self.projector_out)
        };
        // The blocks and the final norm (a vocabulary-free tower's count carries one norm of h;
        // LayerNorm has a bias too).
        self.encoder.params().total.saturating_add(h).saturating_add(stem + positions + proj)
    }
}

#[cfg(test)]
mod tests {
    use super::AudioDesc;

    #[test]
    fn a_whisper_large_encoder_counts_its_blocks_stem_and_positions() {
        // 32 blocks of 1280 wide (4 h^2 attention + 2 h 5120 MLP weights: 19.66M each, 629M),
        // a stem of 128 x 1280 x 3 + 1280 x 1280 x 3 (5.4M), 1500 x 1280 positions (1.9M) and
        // a 1280 x 1280 projector (1.6M): 638M, plus biases and norms.
        let a = AudioDesc::whisper(32, 1280, 20, 5120, 128, 1500);
        let p = a.params() as f64 / 1e6;
        assert!((p - 638.4).abs() < 1.0, "{p}");
    }
}

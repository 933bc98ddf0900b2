//! The vision tower's description: a ViT encoder, its patches, merger and images per request
//! (split from `model/mod.rs`, unchanged).

use super::{is_zero, TransformerDesc};
use serde::{Deserialize, Serialize};

/// A ViT image encoder (e.g. CLIP ViT-L/14) and the projector into the LLM's embedding space.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VisionDesc {
    /// The encoder's transformer (vocab 0, LayerNorm, GELU MLP, bidirectional attention).
    pub encoder: TransformerDesc,
    pub image_size: u64,
    pub patch_size: u64,
    #[serde(default = "three")]
    pub channels: u64,
    /// Hidden width of the (two-layer, LLaVA-1.5 style) MLP projector; 0 = one linear layer.
    #[serde(default)]
    pub projector_hidden: u64,
    /// Patches merged into one LLM token per side (Qwen2.5-VL / Qwen3-VL `spatial_merge_size`:
    /// 2 = 2 x 2 patches per token, their features concatenated into the projector); 1: none.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub merge: u64,
    /// The encoder prepends a class token (CLIP); Qwen's ViT does not.
    #[serde(default = "yes", skip_serializing_if = "Clone::clone")]
    pub class_token: bool,
    /// Extra patch mergers of the projector's shape (Qwen3-VL's DeepStack: one per
    /// `deepstack_visual_indexes` entry, fed from an intermediate ViT block, its output added to
    /// an early LLM layer's hidden states); 0: none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub deepstack: u64,
    /// Images each request carries (`deployment.serving.images_per_request`): 1 for a
    /// description saved before the field existed (every request carried one image); 0 for a
    /// tower read but idle (Qwen3.5's wrapper: text-only prompts, the tower not loaded, as
    /// vLLM skips the encoder when `--limit-mm-per-prompt` allows no image).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub images: u64,
}

fn three() -> u64 {
    3
}

fn one() -> u64 {
    1
}

fn is_one(x: &u64) -> bool {
    *x == 1
}

fn yes() -> bool {
    true
}

impl VisionDesc {
    /// Patches the encoder sees per image (without the class token): (image / patch)^2.
    pub fn patches(&self) -> u64 {
        let side = self.image_size / self.patch_size.max(1);
        side.saturating_mul(side)
    }

    /// Tokens one image adds to the LLM's prompt: the patches, merged merge x merge.
    pub fn image_tokens_each(&self) -> u64 {
        self.patches() / self.merge.max(1).saturating_mul(self.merge.max(1))
    }

    /// Tokens a request's images add to its prompt (`images` x `image_tokens_each`; 0 when the
    /// requests carry none).
    pub fn image_tokens(&self) -> u64 {
        self.images.saturating_mul(self.image_tokens_each())
    }

    /// Projector-shaped mergers per image: the projector and the DeepStack mergers.
    pub fn mergers(&self) -> u64 {
        1 + self.deepstack
    }

    /// The encoder's sequence per image (patches plus the class token, if any).
    pub fn encoder_seq(&self) -> u64 {
        self.patches() + self.class_token as u64
    }
}

//! `scenario.training`: the stage's options (chips, the levels of each search axis, the
//! scenario-wide overlap switches and MoE routing imbalance), checked when the scenario is read.

use crate::spec::scenario::Scenario;
use serde::{Deserialize, Serialize};
use tunelab_sim::workload::{training_constants, MAX_BATCH};

/// Largest number of levels a training-space parameter may have (a list longer than this is a
/// mistake, and walking it would stall the page).
pub const MAX_TRAIN_LEVELS: usize = 4096;

/// `scenario.training` options (all optional).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrainingOptions {
    /// Chips in the job (tp x pp x cp x dp).
    pub chips: u64,
    /// Tokens the whole run trains on, for the learning-rate fit (None: 20 per parameter).
    pub train_tokens: Option<f64>,
    pub micro_batches: Vec<i64>,
    pub recompute: Vec<String>,
    /// "zero0".."zero3", "distributed_optimizer".
    pub optimizer_sharding: Vec<String>,
    pub precisions: Vec<String>,
    pub sequence_parallel: Vec<String>,
    /// Expert-parallel degrees to try (empty: every divisor of the chips that divides the
    /// expert count, for an MoE model; 1 for a dense one).
    pub expert_parallel: Vec<i64>,
    /// Context-parallel degrees to try.
    pub context_parallel: Vec<i64>,
    /// Virtual pipeline stages per chip to try (interleaved 1F1B).
    pub virtual_stages: Vec<i64>,
    /// Megatron --overlap-grad-reduce.
    pub overlap_grad_reduce: bool,
    /// Megatron --overlap-param-gather.
    pub overlap_param_gather: bool,
    /// Busiest expert's tokens over the mean (None: the documented default, `moe_imbalance` in
    /// assets/constants/training.json).
    pub moe_imbalance: Option<f64>,
    /// MoE token dispatcher, Megatron's --moe-token-dispatcher-type: "alltoall" (default) or
    /// "allgather".
    #[serde(skip_serializing_if = "is_alltoall")]
    pub moe_token_dispatcher: String,
    /// Megatron --moe-grouped-gemm (default on); off, the local experts run one matmul each.
    #[serde(skip_serializing_if = "is_true")]
    pub moe_grouped_gemm: bool,
    /// Megatron --gradient-accumulation-fusion (default on); off
    /// (--no-gradient-accumulation-fusion), a separate pass adds each micro-batch's weight
    /// gradients into the main gradients.
    #[serde(skip_serializing_if = "is_true")]
    pub gradient_accumulation_fusion: bool,
    /// Context-parallel attention, MindSpeed's --context-parallel-algo: "ring" (megatron_cp_algo,
    /// default) or "ulysses" (ulysses_cp_algo).
    #[serde(skip_serializing_if = "is_ring")]
    pub context_parallel_algo: String,
    /// MindSpeed --moe-permutation-async-comm (default off): with the all-gather dispatcher, the
    /// combine accumulates into an fp32 buffer of the group's tokens.
    #[serde(skip_serializing_if = "is_false")]
    pub moe_permutation_async_comm: bool,
    /// Fine-tuning: parts of a multimodal model that do not train ("vision": the vision tower,
    /// "llm": the language model; the projector always trains). Empty: everything trains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frozen: Vec<String>,
    /// LoRA rank (0: full fine-tune): the adapted layers keep their weights frozen.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lora_rank: u64,
    /// What LoRA adapts: "attention" (q, k, v, out projections) or "attention_mlp".
    #[serde(default = "attention", skip_serializing_if = "is_attention")]
    pub lora_targets: String,
    /// Diffusion training: the square image size in pixels (None: the pipeline's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<u64>,
    /// Diffusion training: the width in pixels when it differs from `resolution` (a video's
    /// 832 beside 480; None: square).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u64>,
    /// Video diffusion training: frames per sample, encoded by the video VAE each step
    /// (None: the pipeline's own, 81 for Wan2.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<u64>,
    /// Diffusion training: frozen encoders whose outputs are computed once before training
    /// ("text_encoders", "vae"), so they do not run per step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub precomputed: Vec<String>,
    /// Variable-length samples: the mean tokens per sample behind a tokens/s figure, every token
    /// the model sees (a multimodal model's image tokens included). The step is simulated at
    /// this length (text = it less the image tokens) and tokens/s counts it (None: seq_len).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_seq_len: Option<u64>,
    /// The framework that runs the step: "megatron" (Megatron-LM / MindSpeed-LLM, the default
    /// and what every step was priced as before this setting; "mindspeed" reads as it),
    /// "mindformers" (MindSpore, graph mode) or "deepspeed" (ZeRO on Hugging Face model code).
    /// Its host costs and the kernels its model code runs are in assets/constants/training.json.
    #[serde(default = "megatron", skip_serializing_if = "is_megatron")]
    pub framework: String,
    /// Layers on each pipeline stage, first to last, when they are not split evenly
    /// (MindSpeed-LLM's --num-layer-list, e.g. [17, 20, 22, 21] for 80 layers over pp = 4: the
    /// first stage holds the most micro-batches in flight, the last the LM head). A point must
    /// then have pp = the list's length and no virtual stages. Empty: the even split.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pipeline_layers: Vec<u64>,
    /// Fused kernels the run turns off ("rms_norm", "rotary", "swiglu": a MindSpeed script
    /// without --use-fused-rmsnorm, --use-fused-rotary-pos-emb or --use-fused-swiglu): the model
    /// code's own ops run instead (`unfused_*_kernels` in assets/constants/training.json).
    /// Empty: the framework's own choice.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unfused_kernels: Vec<String>,
    /// The pipeline schedule: "1f1b" (Megatron's 1F1B, interleaved with virtual stages; the
    /// default and what every step was priced as before this setting) or "dualpipev"
    /// (DeepSeek's DualPipe-V, MindSpeed --schedules-method dualpipev: each stage holds two
    /// model chunks in a V, forward and backward chunks of two micro-batches overlap;
    /// `stages::training::layouts`).
    #[serde(default = "one_f_one_b", skip_serializing_if = "is_one_f_one_b")]
    pub pipeline_schedule: String,
    /// Packed documents with reset attention masks (--reset-attention-mask): the mean length
    /// of the documents packed into each sequence; attention runs within each document, so
    /// its cost is that of the documents, not of the whole sequence (memory unchanged).
    /// None: one document per sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document_len: Option<u64>,
    /// Per-stage partial recomputation: the layers of each pipeline stage, first to last,
    /// whose forward reruns in the backward (Megatron --recompute-method block
    /// --recompute-num-layers, one count per stage). Points then need recompute = full and
    /// pp = the list's length. Empty: `recompute` decides for every layer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recompute_layers: Vec<u64>,
    /// MindSpeed --attention-mask-type: "causal" (the default: a compressed 2048 x 2048 causal
    /// mask, fully masked blocks skipped) or "general" (the mask built from the data). Under
    /// ring context parallelism a general mask runs every ring step's block in full
    /// (MindSpeed's GeneralAttentionStrategy: sparse_mode 1 with the block's mask), twice the
    /// causal work; elsewhere it is priced as causal.
    #[serde(default = "causal", skip_serializing_if = "is_causal")]
    pub attention_mask_type: String,
}

fn causal() -> String {
    "causal".into()
}

fn is_causal(s: &str) -> bool {
    s == "causal"
}

/// The attention masks (`training.attention_mask_type`).
pub(crate) const MASK_TYPES: [&str; 2] = ["causal", "general"];

fn one_f_one_b() -> String {
    "1f1b".into()
}

fn is_one_f_one_b(s: &str) -> bool {
    s == "1f1b"
}

/// The pipeline schedules (`training.pipeline_schedule`).
pub const PIPELINE_SCHEDULES: [&str; 2] = ["1f1b", "dualpipev"];

/// What `unfused_kernels` may name.
pub const UNFUSED_KERNELS: [&str; 3] = ["rms_norm", "rotary", "swiglu"];

fn megatron() -> String {
    "megatron".into()
}

fn is_megatron(s: &str) -> bool {
    s == "megatron"
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

fn attention() -> String {
    "attention".into()
}

fn is_attention(s: &str) -> bool {
    s == "attention"
}

/// What `training.frozen` may name, and `training.lora_targets`.
pub const FROZEN_PARTS: [&str; 2] = ["vision", "llm"];
pub const LORA_TARGETS: [&str; 2] = ["attention", "attention_mlp"];

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_ring(s: &str) -> bool {
    s == "ring"
}

/// The context-parallel algorithms (`training.context_parallel_algo`).
pub(crate) const CP_ALGOS: [&str; 2] = ["ring", "ulysses"];

fn is_true(b: &bool) -> bool {
    *b
}

fn is_alltoall(s: &str) -> bool {
    s == "alltoall"
}

/// The MoE token dispatchers (`training.moe_token_dispatcher`).
pub(crate) const DISPATCHERS: [&str; 2] = ["alltoall", "allgather"];

impl Default for TrainingOptions {
    fn default() -> Self {
        TrainingOptions {
            chips: 8,
            train_tokens: None,
            micro_batches: vec![1, 2, 4, 8],
            recompute: vec!["none".into(), "selective".into(), "full".into()],
            optimizer_sharding: vec!["zero0".into(), "zero1".into(), "zero2".into(), "zero3".into(), "distributed_optimizer".into()],
            precisions: vec!["bf16".into(), "fp16".into(), "fp32".into()],
            sequence_parallel: vec!["off".into(), "on".into()],
            expert_parallel: Vec::new(),
            context_parallel: vec![1],
            virtual_stages: vec![1],
            overlap_grad_reduce: true,
            overlap_param_gather: false,
            moe_imbalance: None,
            moe_token_dispatcher: "alltoall".into(),
            moe_grouped_gemm: true,
            gradient_accumulation_fusion: true,
            context_parallel_algo: "ring".into(),
            moe_permutation_async_comm: false,
            frozen: Vec::new(),
            lora_rank: 0,
            lora_targets: attention(),
            resolution: None,
            width: None,
            frames: None,
            precomputed: Vec::new(),
            mean_seq_len: None,
            pipeline_layers: Vec::new(),
            unfused_kernels: Vec::new(),
            framework: megatron(),
            pipeline_schedule: one_f_one_b(),
            document_len: None,
            recompute_layers: Vec::new(),
            attention_mask_type: causal(),
        }
    }
}

impl TrainingOptions {
    /// Reads `scenario.training`; a wrong field is named.
    /// Reads `pipeline_layers` as a user types it: counts separated by commas or spaces
    /// ("17,20,22,21", MindSpeed's --num-layer-list); empty text is the even split.
    pub fn parse_pipeline_layers(text: &str) -> Result<Vec<u64>, String> {
        let layers = text
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|t| !t.is_empty())
            .map(|t| t.parse::<u64>().ok().filter(|l| (1..=100_000).contains(l)).ok_or_else(|| format!("layers per pipeline stage: '{}' is not a count of 1..=100000 (write e.g. 17,20,22,21, or leave it empty for an even split)", crate::spec::scenario::clip(t))))
            .collect::<Result<Vec<u64>, String>>()?;
        if layers.len() > 1024 {
            return Err(format!("layers per pipeline stage: {} stages is too many (at most 1024)", layers.len()));
        }
        Ok(layers)
    }
    pub fn from_scenario(s: &Scenario) -> Result<TrainingOptions, String> {
        s.training.validate()?;
        Ok(s.training.clone())
    }
    /// Ranges and choices, naming the field.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(f) = self.frozen.iter().find(|f| !FROZEN_PARTS.contains(&f.as_str())) {
            return Err(format!("training.frozen: unknown part '{}' (known: vision, llm)", crate::scenario::clip(f)));
        }
        if let Some(f) = self.precomputed.iter().find(|f| !["text_encoders", "vae"].contains(&f.as_str())) {
            return Err(format!("training.precomputed: unknown component '{}' (known: text_encoders, vae)", crate::scenario::clip(f)));
        }
        if self.lora_rank > 4096 {
            return Err(format!("training.lora_rank: must be 0..=4096, got {}", self.lora_rank));
        }
        if !LORA_TARGETS.contains(&self.lora_targets.as_str()) {
            return Err(format!("training.lora_targets: expected attention or attention_mlp, got '{}'", crate::scenario::clip(&self.lora_targets)));
        }
        if self.resolution.is_some_and(|r| r == 0 || r > 8192) {
            return Err("training.resolution: must be 1..=8192 pixels".into());
        }
        if self.width.is_some_and(|r| r == 0 || r > 8192) {
            return Err("training.width: must be 1..=8192 pixels".into());
        }
        if self.frames.is_some_and(|f| f == 0 || f > 1024) {
            return Err("training.frames: must be 1..=1024 frames".into());
        }
        if self.mean_seq_len.is_some_and(|m| m == 0 || m > tunelab_sim::workload::MAX_SEQ) {
            return Err("training.mean_seq_len: must be a positive token count".into());
        }
        if let Some(k) = self.unfused_kernels.iter().find(|k| !UNFUSED_KERNELS.contains(&k.as_str())) {
            return Err(format!("training.unfused_kernels: unknown kernel '{}' (known: {})", crate::spec::scenario::clip(k), UNFUSED_KERNELS.join(", ")));
        }
        if self.pipeline_layers.len() > 1024 {
            return Err(format!("training.pipeline_layers: {} stages is too many (at most 1024)", self.pipeline_layers.len()));
        }
        if let Some(l) = self.pipeline_layers.iter().find(|l| **l == 0 || **l > 100_000) {
            return Err(format!("training.pipeline_layers: each stage needs 1..=100000 layers, got {l}"));
        }
        if !PIPELINE_SCHEDULES.contains(&self.pipeline_schedule.as_str()) {
            return Err(format!("training.pipeline_schedule: unknown schedule '{}' (known: {})", crate::scenario::clip(&self.pipeline_schedule), PIPELINE_SCHEDULES.join(", ")));
        }
        if self.document_len.is_some_and(|d| d == 0 || d > tunelab_sim::workload::MAX_SEQ) {
            return Err(format!("training.document_len: must be 1..={} tokens (the mean packed document), got {}", tunelab_sim::workload::MAX_SEQ, self.document_len.unwrap_or(0)));
        }
        if self.recompute_layers.len() > 1024 {
            return Err(format!("training.recompute_layers: {} stages is too many (at most 1024)", self.recompute_layers.len()));
        }
        if let Some(l) = self.recompute_layers.iter().find(|l| **l > 100_000) {
            return Err(format!("training.recompute_layers: each stage recomputes 0..=100000 layers, got {l}"));
        }
        if self.chips == 0 || self.chips > 4096 {
            return Err(format!("training.chips: must be 1..=4096, got {}", self.chips));
        }
        let ints = [
            ("micro_batches", &self.micro_batches, MAX_BATCH as i64),
            ("expert_parallel", &self.expert_parallel, 4096),
            ("context_parallel", &self.context_parallel, 4096),
            ("virtual_stages", &self.virtual_stages, 1024),
        ];
        for (f, list, hi) in ints {
            if list.len() > MAX_TRAIN_LEVELS {
                return Err(format!("training.{f}: {} choices is too many (at most {MAX_TRAIN_LEVELS})", list.len()));
            }
            if let Some(v) = list.iter().find(|v| **v < 1 || **v > hi) {
                return Err(format!("training.{f}: each value must be 1..={hi}, got {v}"));
            }
        }
        let strs: [(&str, &Vec<String>, &[&str]); 4] = [
            ("recompute", &self.recompute, &RECOMPUTE),
            ("optimizer_sharding", &self.optimizer_sharding, &SHARDING),
            ("precisions", &self.precisions, &PRECISIONS),
            ("sequence_parallel", &self.sequence_parallel, &ON_OFF),
        ];
        for (f, list, known) in strs {
            if let Some(v) = list.iter().find(|v| !known.contains(&v.as_str())) {
                return Err(format!("training.{f}: unknown choice '{}' (known: {})", crate::spec::scenario::clip(v), known.join(", ")));
            }
        }
        if !DISPATCHERS.contains(&self.moe_token_dispatcher.as_str()) {
            return Err(format!("training.moe_token_dispatcher: unknown choice '{}' (known: {})", crate::spec::scenario::clip(&self.moe_token_dispatcher), DISPATCHERS.join(", ")));
        }
        if !MASK_TYPES.contains(&self.attention_mask_type.as_str()) {
            return Err(format!("training.attention_mask_type: unknown choice '{}' (known: {})", crate::spec::scenario::clip(&self.attention_mask_type), MASK_TYPES.join(", ")));
        }
        if !CP_ALGOS.contains(&self.context_parallel_algo.as_str()) {
            return Err(format!("training.context_parallel_algo: unknown choice '{}' (known: {})", crate::spec::scenario::clip(&self.context_parallel_algo), CP_ALGOS.join(", ")));
        }
        if tunelab_sim::workload::TrainFramework::parse(&self.framework).is_none() {
            return Err(format!("training.framework: unknown framework '{}' (known: {})", crate::spec::scenario::clip(&self.framework), tunelab_sim::workload::TRAIN_FRAMEWORKS.join(", ")));
        }
        if let Some(x) = self.moe_imbalance {
            let kc = training_constants();
            let k = &kc.moe_imbalance;
            if !(x.is_finite() && x >= k.min && x <= k.max) {
                return Err(format!("training.moe_imbalance: must be within [{}, {}], got {x}", k.min, k.max));
            }
        }
        Ok(())
    }
}

pub(crate) const RECOMPUTE: [&str; 3] = ["none", "selective", "full"];
pub(crate) const SHARDING: [&str; 6] = ["zero0", "none", "zero1", "zero2", "zero3", "distributed_optimizer"];
pub(crate) const PRECISIONS: [&str; 3] = ["bf16", "fp16", "fp32"];
pub(crate) const ON_OFF: [&str; 2] = ["off", "on"];

//! Workloads: a model description plus what it is asked to do (prefill, decode, a training step)
//! and how it is split across chips, turned into the per-chip operator list the device model
//! costs.
//!
//! Why a flat list with repeats: identical layers cost the same, so a 32-layer model is ~15
//! distinct operators with `repeat = 32`; the device model tiles each distinct operator once.

mod constants;
pub mod compressed_attention;
pub mod diffusers;
mod flops;
mod llm;
/// Mamba-2 mixers: their operators and how a Triton-kernel engine launches them (`llm::ssm`).
pub use llm::ssm;
/// DCP on a prefill chunk: the gather of the cached context's shards (`llm::dcp`).
pub use llm::dcp::{context_gather as dcp_context_gather, CONTEXT_GATHER as DCP_CONTEXT_GATHER};
mod onnx_om;
pub mod mtp;
mod plan;
mod train;

pub use train::trainable_per_chip;
pub mod datasets;
pub mod experts_touched;
pub mod linear_attention;
pub mod local_attention;
pub mod speculative;
pub mod sparse_attention;
pub use constants::{training_constants, with_training_constants, Constant, FrameworkConstants, TrainFramework, TrainingConstants, TRAINING_CONSTANTS_JSON, TRAIN_FRAMEWORKS};
pub use flops::{model_flops, op_flops};
pub use plan::{validate_plan, ParallelPlan, PipelineStage};

use crate::dtype::{DType, Precision};
use crate::model::graph::scale_batch;
use crate::model::{ModelDesc, OpClass};
use crate::op::{AttentionKind, Op};
use serde::{Deserialize, Serialize};

/// What the model is run for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Workload {
    /// Process `input_len` prompt tokens for `batch` sequences (first token).
    Prefill { batch: u64, input_len: u64 },
    /// One decoding step for `batch` sequences whose cache holds `context_len` tokens (prompt plus
    /// generated so far); `output_len` tokens are generated in all, so the KV cache must hold
    /// `context_len + output_len` tokens by the end.
    Decode { batch: u64, context_len: u64, output_len: u64 },
    /// One optimizer step: `grad_accum` (see `TrainOptions`) micro-batches of `micro_batch`
    /// sequences of `seq_len` tokens, forward and backward.
    TrainStep { micro_batch: u64, seq_len: u64 },
}

/// Largest batch and sequence length accepted (far beyond any real deployment).
pub const MAX_BATCH: u64 = 1 << 20;
pub const MAX_SEQ: u64 = 1 << 22;

impl Workload {
    /// Sequences per chip-group (batch or micro-batch).
    pub fn batch(&self) -> u64 {
        match *self {
            Workload::Prefill { batch, .. } | Workload::Decode { batch, .. } => batch,
            Workload::TrainStep { micro_batch, .. } => micro_batch,
        }
    }

    /// The same workload with another batch (or micro-batch).
    pub fn with_batch(&self, b: u64) -> Workload {
        match *self {
            Workload::Prefill { input_len, .. } => Workload::Prefill { batch: b, input_len },
            Workload::Decode { context_len, output_len, .. } => {
                Workload::Decode { batch: b, context_len, output_len }
            }
            Workload::TrainStep { seq_len, .. } => Workload::TrainStep { micro_batch: b, seq_len },
        }
    }

    /// Whether this is a training step.
    pub fn is_train(&self) -> bool {
        matches!(self, Workload::TrainStep { .. })
    }

    /// Tokens the KV cache must hold per sequence by the end of the workload.
    pub fn kv_tokens(&self) -> u64 {
        match *self {
            Workload::Prefill { input_len, .. } => input_len,
            Workload::Decode { context_len, output_len, .. } => context_len.saturating_add(output_len),
            Workload::TrainStep { .. } => 0,
        }
    }

    /// Parses a workload object (`{"kind": "decode", "batch": 8, ...}`), naming any field that
    /// is missing, negative, fractional or out of range (serde alone would say only "invalid
    /// value").
    pub fn from_json(v: &serde_json::Value) -> Result<Workload, String> {
        let obj = v.as_object().ok_or("workload must be an object")?;
        let field = |name: &str| -> Result<u64, String> {
            match obj.get(name) {
                None => Err(format!("workload field '{name}' is missing")),
                Some(x) => x.as_u64().ok_or_else(|| {
                    format!("workload field '{name}' = {x} must be a non-negative integer")
                }),
            }
        };
        let kind = obj.get("kind").and_then(|k| k.as_str()).unwrap_or("");
        let w = match kind {
            "prefill" => Workload::Prefill { batch: field("batch")?, input_len: field("input_len")? },
            "decode" => Workload::Decode {
                batch: field("batch")?,
                context_len: field("context_len")?,
                output_len: field("output_len")?,
            },
            "train_step" => {
                Workload::TrainStep { micro_batch: field("micro_batch")?, seq_len: field("seq_len")? }
            }
            other => {
                return Err(format!(
                    "workload field 'kind' = '{other}' is not prefill, decode or train_step"
                ))
            }
        };
        w.validate()?;
        Ok(w)
    }

    /// Rejects zero or absurd sizes, naming the field.
    pub fn validate(&self) -> Result<(), String> {
        let check = |field: &str, v: u64, lo: u64, hi: u64| {
            if v < lo || v > hi {
                Err(format!("workload field '{field}' = {v} is out of range ({lo}..={hi})"))
            } else {
                Ok(())
            }
        };
        match *self {
            Workload::Prefill { batch, input_len } => {
                check("batch", batch, 1, MAX_BATCH)?;
                check("input_len", input_len, 1, MAX_SEQ)
            }
            Workload::Decode { batch, context_len, output_len } => {
                check("batch", batch, 1, MAX_BATCH)?;
                check("context_len", context_len, 1, MAX_SEQ)?;
                check("output_len", output_len, 0, MAX_SEQ)
            }
            Workload::TrainStep { micro_batch, seq_len } => {
                check("micro_batch", micro_batch, 1, MAX_BATCH)?;
                check("seq_len", seq_len, 1, MAX_SEQ)
            }
        }
    }
}

/// Activation recomputation in training.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recompute {
    #[default]
    None,
    /// Recompute only the attention core (Korthikanti et al. 2022, "selective").
    Selective,
    /// Keep only each layer's input and recompute the whole layer in backward.
    Full,
}

/// Training-only options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct TrainOptions {
    pub recompute: Recompute,
    /// ZeRO stage 0..=3 (Rajbhandari et al. 2020): shard optimizer states (1), + gradients (2),
    /// + parameters (3) across data-parallel ranks.
    pub zero_stage: u8,
    /// Megatron distributed optimizer: optimizer states sharded across DP, like ZeRO-1.
    pub distributed_optimizer: bool,
    /// 16-bit weights/activations with fp32 master weights (else everything fp32).
    pub mixed_precision: bool,
    /// Micro-batches per optimizer step.
    pub grad_accum: u64,
    /// Megatron --overlap-grad-reduce: bucketed gradient reduction runs under the backward pass.
    pub overlap_grad_reduce: bool,
    /// Megatron --overlap-param-gather (distributed optimizer): the updated-parameter all-gather
    /// runs under the next step's forward.
    pub overlap_param_gather: bool,
    /// Gradients accumulated and reduced in fp32 (Megatron's --accumulate-allreduce-grads-in-fp32,
    /// forced on for bf16 training): 4 bytes per gradient in memory and on the wire.
    pub fp32_grads: bool,
    /// How MoE tokens reach their experts' ranks (Megatron --moe-token-dispatcher-type).
    pub moe_dispatcher: MoeDispatcher,
    /// Megatron --moe-grouped-gemm: a rank's local experts run as one grouped matmul; off, as one
    /// matmul per expert in a loop (Megatron's SequentialMLP).
    pub moe_grouped_gemm: bool,
    /// Megatron --gradient-accumulation-fusion: weight-gradient matmuls accumulate straight into
    /// the main gradient buffer. Off (--no-gradient-accumulation-fusion), every micro-batch's
    /// weight gradient is materialised and added into the main gradient by a separate pass
    /// (Megatron DDP's per-parameter backward hook, `main_grad.add_(grad)`).
    pub grad_accum_fusion: bool,
    /// How context parallelism splits attention (MindSpeed --context-parallel-algo).
    pub cp_algo: CpAlgo,
    /// MindSpeed --attention-mask-type general: ring context parallelism computes every ring
    /// step's block in full under the data's mask (no causal skipping).
    #[serde(default)]
    pub general_mask: bool,
    /// MindSpeed --moe-permutation-async-comm with the all-gather dispatcher: MindSpeed's own
    /// permutation (row index / index_put) whose combine accumulates the local copies into an
    /// fp32 buffer of the group's tokens (`NewIndePut`). Off, Megatron's native path (its
    /// index-expanded element-wise gather / scatter is not modelled: priced as the row copies).
    #[serde(default)]
    pub moe_permutation_async_comm: bool,
    /// Fine-tuning: the vision tower is frozen (no gradients, no optimizer state, no backward
    /// through it, no activations saved for it).
    #[serde(default)]
    pub frozen_vision: bool,
    /// Fine-tuning: the language model's own weights are frozen (no weight gradients or
    /// optimizer state); gradients still flow through it to trainable parts before it.
    #[serde(default)]
    pub frozen_llm: bool,
    /// LoRA rank (0: off): every targeted linear layer keeps its weight frozen and trains a
    /// rank-r pair A (k x r), B (r x n) beside it (Hu et al. 2021).
    #[serde(default)]
    pub lora_rank: u64,
    /// LoRA also targets the MLP (else only the attention projections).
    #[serde(default)]
    pub lora_mlp: bool,
    /// The framework that runs the step (its host costs and the kernels its model code runs,
    /// assets/constants/training.json `frameworks`).
    #[serde(default)]
    pub framework: TrainFramework,
    /// Norm, rotary embedding and gated activation the run leaves to the model code's own ops
    /// although its framework fuses them (a MindSpeed script without --use-fused-rmsnorm,
    /// --use-fused-rotary-pos-emb or --use-fused-swiglu): each then runs as the unfused kernel
    /// count of assets/constants/training.json (`unfused_*_kernels`).
    #[serde(default)]
    pub unfused: Unfused,
    /// Packed documents with reset attention masks (Megatron / MindSpeed --reset-attention-mask):
    /// the mean length of the documents packed into each sequence; attention runs within each
    /// document (`train::packed_attention`). 0: one document per sequence.
    #[serde(default)]
    pub document_len: u64,
    /// Per-stage partial recomputation (Megatron --recompute-granularity full --recompute-method
    /// block --recompute-num-layers N, one N per pipeline stage): the layers of this stage whose
    /// forward reruns in the backward; None: `recompute` decides for every layer.
    #[serde(default)]
    pub recompute_layers: Option<u64>,
    /// DeepSeek's DualPipe-V pipeline schedule (two model chunks per device; priced by the
    /// training stage's schedule, `stages::training::layouts`). False: 1F1B.
    #[serde(default)]
    pub dualpipev: bool,
}

/// Kernels a training run leaves unfused (`TrainOptions::unfused`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct Unfused {
    pub rms_norm: bool,
    pub rotary: bool,
    pub swiglu: bool,
}

/// MindSpeed's context-parallel algorithms for attention (--context-parallel-algo).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpAlgo {
    /// megatron_cp_algo: ring attention; each rank keeps its s / cp queries (load-balanced causal
    /// chunks) and the keys and values travel round the CP ring.
    #[default]
    Ring,
    /// ulysses_cp_algo (DeepSpeed-Ulysses, Jacobs et al. 2023): an all-to-all trades each rank's
    /// s / cp tokens of every head for the whole sequence of heads / cp heads, attention runs on
    /// the full sequence, and a second all-to-all trades the output back.
    Ulysses,
}

/// Megatron-Core's MoE token dispatchers (megatron/core/transformer/moe/token_dispatcher.py).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MoeDispatcher {
    /// MoEAlltoAllTokenDispatcher: each rank sends every routed copy of its tokens to the rank
    /// holding the expert (all-to-all over the EP group), and back after the experts.
    #[default]
    AllToAll,
    /// MoEAllGatherTokenDispatcher: every rank all-gathers the whole EP group's hidden states
    /// (and routing indices and weights), keeps the copies routed to its local experts, and the
    /// combined output is scattered into a group-wide buffer that is reduce-scattered back.
    AllGather,
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            recompute: Recompute::None,
            zero_stage: 0,
            distributed_optimizer: false,
            mixed_precision: true,
            grad_accum: 1,
            overlap_grad_reduce: true,
            overlap_param_gather: false,
            fp32_grads: false,
            moe_dispatcher: MoeDispatcher::AllToAll,
            moe_grouped_gemm: true,
            grad_accum_fusion: true,
            cp_algo: CpAlgo::Ring,
            general_mask: false,
            moe_permutation_async_comm: false,
            frozen_vision: false,
            frozen_llm: false,
            lora_rank: 0,
            lora_mlp: false,
            framework: TrainFramework::Megatron,
            unfused: Unfused::default(),
            document_len: 0,
            recompute_layers: None,
            dualpipev: false,
        }
    }
}

/// Choices that change the operator list but not the model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GraphOptions {
    /// Weight and activation types of matmuls (training uses the activation type).
    pub precision: Precision,
    /// Fused flash attention (else unfused: scores materialised in HBM).
    pub flash_attention: bool,
    /// Fuse bias/activation/residual epilogues into matmuls (else separate vector ops).
    pub fuse_epilogues: bool,
    /// An offline OM model (ATC from ONNX, mixed_float16 with a blocklist): attention as the
    /// export's separate kernels, LayerNorm in fp32 (`onnx_om`). Set with `fuse_epilogues: false`.
    pub om_model: bool,
    /// The OM model's chip has an NZ-only cube (MindIE-LLM `NPUSocInfo.need_nz`: 310P, 910):
    /// ATC's ND<->NZ TransData around the attention's batch matmuls (`onnx_om`). Set from the chip.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub om_nz_transdata: bool,
    /// Q, K and V projections as three matmuls (an engine's encoder model that keeps BERT's
    /// three Linear layers) instead of one fused QKV matmul.
    pub split_qkv: bool,
    /// KV-cache element type (default: the activation type, fp16 for W8A8).
    pub kv_dtype: Option<DType>,
    /// Tokens on the busiest expert over the mean (1.0 = perfectly balanced routing).
    pub moe_imbalance: f64,
    /// Longest sequence a static allocator reserves for (default: the model's max position).
    pub max_seq_len: Option<u64>,
    /// The graph runs compiled as a static-shape graph whose collectives HCCL expanded on the
    /// device at compile time (torchair's GE graphs): on a full mesh each pays the Mesh
    /// algorithm's O(1) latency steps instead of a per-peer task issue (`cost::comm` notes).
    pub collectives_pre_expanded: bool,
    /// Used when the workload is a training step.
    pub train: TrainOptions,
    /// A serving engine's choice of MoE token exchange per step (vLLM-Ascend's
    /// `select_moe_comm_method`): None keeps the plain all-to-all collectives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moe_comm: Option<ServingMoeComm>,
    /// Precision of the routed experts when it differs from `precision` (a checkpoint
    /// quantised per layer group, e.g. W8A8 attention with W4A8 experts; inference only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expert_precision: Option<Precision>,
    /// The kernel library's grouped matmul dequantises packed expert weights (W4A16, W8A16)
    /// into a 16-bit workspace on the vector cores before the cube reads them
    /// (`kernels::grouped_antiquant_workspace`): each touched expert's weights are read packed,
    /// written and read again at 16 bits. False: the dequantisation is priced inside the matmul.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub expert_dequant_workspace: bool,
}

/// How a serving engine exchanges an expert-parallel step's tokens, by the step's size and the
/// chip generation (vLLM-Ascend `ascend_forward_context.select_moe_comm_method`): a step of at
/// most `mc2_capacity` tokens on its data-parallel rank runs MC2 (`npu_moe_distribute_dispatch`
/// / `_combine`; on A2 only when the EP group spans 16 or more ranks); a larger one all-to-all
/// (A3) or the all-gather dispatcher (A2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ServingMoeComm {
    pub mc2_capacity: u64,
    /// An A2 system (else A3): above the capacity, or under 16 EP ranks, the all-gather path.
    pub a2: bool,
    /// On A2, MC2 also needs at most this many of the model's experts per EP rank (0: no limit).
    #[serde(default)]
    pub a2_max_experts_per_rank: u64,
    /// SGLang's DeepEP exchange (`--moe-a2a-backend deepep --deepep-mode`), in place of the
    /// MC2 / all-to-all / all-gather choice: Off keeps that choice.
    #[serde(default)]
    pub deepep: DeepepMode,
}

/// SGLang's `--deepep-mode` (python/sglang/srt/layers/moe/utils.py DeepEPMode): `Auto` runs
/// low-latency for a decode batch and normal for a batch that extends (prefills) a sequence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeepepMode {
    #[default]
    Off,
    Auto,
    Normal,
    LowLatency,
}

/// The exchange a serving step of `tokens` tokens per data-parallel rank runs over `ep` ranks
/// for a model of `experts` routed experts: Some(form) for a dispatch/combine pair, None for the
/// all-gather dispatcher.
pub fn serving_moe_form(policy: &ServingMoeComm, tokens: u64, ep: u64, experts: u64) -> Option<crate::op::MoeCommForm> {
    use crate::op::MoeCommForm;
    let fits = tokens <= policy.mc2_capacity;
    // DeepEP: under `auto`, a step of at most `mc2_capacity` tokens (the engine's decode batch,
    // max running requests x (1 + draft tokens)) is taken for a decode batch.
    match policy.deepep {
        DeepepMode::Off => {}
        DeepepMode::Normal => return Some(MoeCommForm::DeepepNormal),
        DeepepMode::LowLatency => return Some(MoeCommForm::DeepepLowLatency),
        DeepepMode::Auto => return Some(if fits { MoeCommForm::DeepepLowLatency } else { MoeCommForm::DeepepNormal }),
    }
    let per_rank_ok = policy.a2_max_experts_per_rank == 0 || experts / ep.max(1) <= policy.a2_max_experts_per_rank;
    match (policy.a2, fits) {
        (false, true) => Some(MoeCommForm::Mc2),
        (false, false) => Some(MoeCommForm::AllToAll),
        (true, true) if ep >= 16 && per_rank_ok => Some(MoeCommForm::Mc2),
        (true, _) => None,
    }
}

impl Default for GraphOptions {
    fn default() -> Self {
        GraphOptions {
            precision: Precision::Fp16,
            flash_attention: true,
            fuse_epilogues: true,
            om_model: false,
            om_nz_transdata: false,
            split_qkv: false,
            kv_dtype: None,
            moe_imbalance: 1.0,
            max_seq_len: None,
            collectives_pre_expanded: false,
            train: TrainOptions::default(),
            moe_comm: None,
            expert_precision: None,
            expert_dequant_workspace: false,
        }
    }
}

impl GraphOptions {
    /// Element type of vector ops, attention and the KV cache: the activation type, except INT8
    /// activations, which are only fed to matmuls (norms, softmax and attention stay fp16).
    pub fn vector_dtype(&self) -> DType {
        match self.precision.activation() {
            DType::Int8 | DType::Int4 => DType::Fp16,
            d => d,
        }
    }
    /// How a prompt's attention runs: as an OM model's exported kernels, fused flash attention,
    /// or the three unfused kernels.
    pub fn prefill_attention(&self) -> AttentionKind {
        if self.om_model {
            AttentionKind::Exported
        } else if self.flash_attention {
            AttentionKind::Flash
        } else {
            AttentionKind::Unfused
        }
    }
    /// KV-cache element type.
    pub fn kv_dtype(&self) -> DType {
        self.kv_dtype.unwrap_or_else(|| self.vector_dtype())
    }
}

/// One operator of the per-chip graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphOp {
    /// Dotted name, e.g. "layer.attn.qkv_proj".
    pub name: String,
    pub op: Op,
    /// Times it runs in the workload (layers x micro-batches ...).
    pub repeat: u64,
    pub class: OpClass,
}

/// The per-chip operator list for one workload.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Graph {
    pub ops: Vec<GraphOp>,
}

impl Graph {
    /// The first op with this name.
    pub fn find(&self, name: &str) -> Option<&GraphOp> {
        self.ops.iter().find(|o| o.name == name)
    }
    /// Arithmetic of the whole list (matmuls, attention, convolutions; repeats included).
    pub fn flops(&self) -> f64 {
        self.ops.iter().map(|o| op_flops(&o.op) * o.repeat as f64).sum()
    }
    /// Total operator launches (sum of repeats).
    pub fn launches(&self) -> u64 {
        self.ops.iter().fold(0u64, |a, o| a.saturating_add(o.repeat))
    }
}

/// A compiled static graph's collectives inside a node run HCCL's Mesh with their task lists
/// built in advance (`GraphOptions::collectives_pre_expanded`); all-to-alls and collectives
/// that leave the node keep their algorithm.
fn pre_expanded_collectives(ops: &mut [GraphOp]) {
    for o in ops.iter_mut() {
        if let Op::Comm { kind, link: crate::op::Link::Hccs, algorithm, .. } = &mut o.op {
            if *kind != crate::op::CommKind::AllToAll {
                *algorithm = crate::op::CommAlgorithm::Mesh;
            }
        }
    }
}

/// Builds the per-chip operator list: TP-sharded shapes, the collectives TP/PP/EP/DP need, and
/// for training the backward pass, recomputation, gradient accumulation and optimizer step.
/// With pp > 1 the list is the last pipeline stage's (it holds the LM head, the heavier end).
pub fn build_graph(
    model: &ModelDesc,
    w: &Workload,
    plan: &ParallelPlan,
    opts: &GraphOptions,
) -> Result<Graph, String> {
    w.validate()?;
    validate_plan(model, plan)?;
    if !(opts.moe_imbalance.is_finite() && opts.moe_imbalance >= 1.0 && opts.moe_imbalance <= 64.0) {
        return Err(format!("moe_imbalance = {} must be in 1..=64", opts.moe_imbalance));
    }
    if w.is_train() && opts.train.grad_accum == 0 {
        return Err("training field 'grad_accum' must be at least 1".into());
    }
    if let (true, true, Some(t)) = (w.is_train() && plan.cp > 1, opts.train.cp_algo == CpAlgo::Ulysses, &model.llm) {
        let hq = t.heads / plan.tp.max(1);
        if !hq.is_multiple_of(plan.cp) {
            return Err(format!(
                "cp = {} with Ulysses context parallelism splits attention by heads: the {hq} heads per tensor-parallel rank must divide by it",
                plan.cp
            ));
        }
    }
    let mut forward = forward_graph(model, w, plan, opts)?.ops;
    if !w.is_train() {
        // Training assigns its own links (Megatron's rank order, stages::training).
        crate::topology::assign_links(&mut forward, plan);
        if opts.collectives_pre_expanded {
            pre_expanded_collectives(&mut forward);
        }
    }
    let ops = if w.is_train() { train::step(model, forward, plan, opts) } else { forward };
    Ok(Graph { ops })
}

/// The forward pass only (for a training step: one micro-batch's forward, logits over every
/// token); `build_graph` without backward, accumulation or optimizer.
pub fn forward_graph(
    model: &ModelDesc,
    w: &Workload,
    plan: &ParallelPlan,
    opts: &GraphOptions,
) -> Result<Graph, String> {
    crate::model::validate(model)?;
    w.validate()?;
    validate_plan(model, plan)?;
    let ops = match &model.llm {
        Some(_) => llm::forward(model, w, plan, opts)?,
        None => graph_forward(model, w, opts),
    };
    Ok(Graph { ops })
}

/// An operator-graph model's ops scaled to the batch, in the deployment precision.
fn graph_forward(model: &ModelDesc, w: &Workload, opts: &GraphOptions) -> Vec<GraphOp> {
    let b = w.batch();
    let act = opts.precision.activation();
    let vec_dtype = opts.vector_dtype();
    let weight = opts.precision.weight();
    model
        .graph
        .iter()
        .map(|d| {
            let mut op = scale_batch(&d.op, b);
            match &mut op {
                Op::Matmul { dtype, weight_dtype, .. } => {
                    *dtype = act;
                    *weight_dtype = if d.weight_params() > 0 && weight != act { Some(weight) } else { None };
                }
                Op::Conv2d { dtype, .. } => *dtype = act,
                Op::Vector { dtype, .. } | Op::Attention { dtype, .. } => *dtype = vec_dtype,
                Op::GroupedMatmul { dtype, weight_dtype, .. } => {
                    *dtype = act;
                    *weight_dtype = if weight != act { Some(weight) } else { None };
                }
                Op::Comm { .. } | Op::MoeComm { .. } => {}
            }
            // The fusion option decides how non-decode attention runs, whatever the file says.
            if let Op::Attention { kind, .. } = &mut op {
                if *kind != AttentionKind::Decode {
                    *kind = opts.prefill_attention();
                }
            }
            GraphOp { name: d.name.clone(), op, repeat: d.repeat, class: d.class() }
        })
        .collect()
}

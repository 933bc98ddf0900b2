//! The operators of one training step, from the pricing the stage's objective sums
//! (Explore's detail, the diagnosis' hot spots, `tunelab eval --ops`).
//!
//! Why through `stage_costs`: a second graph built elsewhere drifted from the step (the
//! maximum sequence length instead of the mean sample's, no framework kernels, frozen parts or
//! links, every pipeline stage's layers instead of the busiest's). Listing what the objective
//! priced cannot.

use super::{decode, graph_options, inputs, simulate_listed, Inputs, TrainResult};
use crate::spec::scenario::Scenario;
use crate::stages::serving::OpCost;
use tunelab_search::Config;
use tunelab_sim::workload::{ParallelPlan, PipelineStage, Workload};

/// The operators of one training step of configuration `c` (parameter `names`), as the stage
/// prices it: the busiest pipeline stage's per-chip graph at the step's sequence length (the
/// mean of variable-length samples), with the framework's kernels, frozen parts and links,
/// every micro-batch's forward, recomputation and backward, the data-parallel communication
/// and the optimizer; and the step's time, which adds the pipeline bubble, the launch time the
/// device waits for, host synchronisation, exposed communication (not what overlaps) and the
/// framework's overhead.
pub struct TrainStepOps {
    pub ops: Vec<OpCost>,
    pub memory: tunelab_sim::memory::MemoryBreakdown,
    /// Micro-batches per step (gradient accumulation).
    pub micro_batches: u64,
    pub micro_batch: u64,
    /// Tokens per sample (0: a model without a transformer description, e.g. a diffusion
    /// denoiser, whose samples are images).
    pub seq_len: u64,
    /// The stage listed when an uneven split has several (None: the even split).
    pub stage: Option<PipelineStage>,
    /// The stage's result for the point (step time, where the step goes, the pace-setting
    /// stage), from the same pricing.
    pub result: TrainResult,
}

/// Lists the step of configuration `c` the way `TrainStepOps` describes.
pub fn step_operators(s: &Scenario, names: &[String], c: &Config) -> Result<TrainStepOps, String> {
    let Inputs { options, model, device, seq_len, global_batch, .. } = inputs(s)?;
    let mut p = decode(names, c, global_batch)?;
    options.apply(&mut p);
    let mut ops = Vec::new();
    let result = simulate_listed(&model, &device, &p, (&options.pipeline_layers, &options.recompute_layers), seq_len, global_batch, options.chips, Some(&mut ops))?;
    let stage = result.busiest_stage;
    let plan = ParallelPlan { stage, ..p.plan };
    let w = Workload::TrainStep { micro_batch: p.micro_batch, seq_len };
    let memory = tunelab_sim::memory::memory_per_chip(&model, &w, &plan, &graph_options(&p), None)?;
    Ok(TrainStepOps { ops, memory, micro_batches: p.train.grad_accum, micro_batch: p.micro_batch, seq_len: if model.llm.is_some() { seq_len } else { 0 }, stage, result })
}

//! What the training stage reads from a scenario (its options, model, chip and the step's
//! sequence length and global batch), and the learning-rate advice beside the simulation.
//! Moved from training.rs unchanged.

use super::TrainingOptions;
use crate::spec::scenario::Scenario;
use tunelab_sim::device::Device;
use tunelab_sim::model::ModelDesc;

/// Learning-rate and batch advice for the scenario's model, sequence length and global batch:
/// a labelled published empirical fit (`crate::empirical`), not a simulation.
pub fn advice(s: &Scenario) -> Result<crate::stages::training::empirical::HparamAdvice, String> {
    let o = TrainingOptions::from_scenario(s)?;
    let (model, _, _) = crate::stages::context::resolve(s)?;
    let llm = model.llm.as_ref().ok_or("learning-rate advice needs a transformer description")?;
    let (seq_len, global_batch) = (s.workload.seq_len.max(1) as u64, s.workload.global_batch.max(1) as u64);
    crate::stages::training::empirical::advise(llm.layers, llm.hidden, model.loaded_params() as f64, seq_len, global_batch, o.train_tokens)
}

/// What the stage reads from a scenario: its options, model and chip (with the notes resolving
/// them gave), and the step's sequence length and global batch.
pub(crate) struct Inputs {
    pub options: TrainingOptions,
    pub model: ModelDesc,
    pub device: Device,
    pub notes: Vec<String>,
    pub seq_len: u64,
    pub global_batch: u64,
}

pub(crate) fn inputs(s: &Scenario) -> Result<Inputs, String> {
    let options = TrainingOptions::from_scenario(s)?;
    let (model, device, notes) = crate::stages::context::resolve(s)?;
    // Operator graphs train only when they come from a diffusion pipeline (its training graph
    // marks the frozen encoders); a hand-written graph has no such structure.
    if model.llm.is_none() && crate::stages::diffusion::pipeline(s).is_err() {
        return Err(format!("'{}' is an operator graph: the training stage needs a transformer description (or a diffusion pipeline)", model.name));
    }
    // A setting that does not apply to this model is refused, naming it (issue 44).
    crate::spec::applies::training_applies(&options, &model, model.llm.is_none() || crate::stages::diffusion::pipeline(s).is_ok())?;
    // Variable-length samples: the step runs at their mean length (training.mean_seq_len, every
    // token the model sees, a multimodal model's image tokens included, as a tokens/s figure
    // counts them), the text part being that length less the image tokens.
    let image = model.media_tokens();
    let global_batch = s.workload.global_batch.max(1) as u64;
    let seq_len = match options.mean_seq_len {
        Some(mean) => mean.saturating_sub(image).max(1),
        None => s.workload.seq_len.max(1) as u64,
    };
    Ok(Inputs { options, model, device, notes, seq_len, global_batch })
}


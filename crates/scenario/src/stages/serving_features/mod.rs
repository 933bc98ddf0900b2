//! Serving features the deployment stage prices on top of the scheduler: speculative decoding
//! (the mechanism is `tunelab_sim::workload::speculative`; here its resolution from a scenario
//! and the step pricing glue), the INT8 KV cache, encoders served as one forward per request.
//! Kept apart from `deployment.rs` so each feature reads on its own and the stage's own file
//! only calls in.

pub mod speculative;
pub mod stage;

use tunelab_sim::model::ModelDesc;

/// Whether the model is a bidirectional encoder (embeddings, rerankers): a request is one
/// forward over its tokens, no decoding.
pub fn is_encoder(model: &ModelDesc) -> bool {
    model.llm.as_ref().is_some_and(|t| t.encoder)
}

/// The KV-cache element type a serving spec asks for (None: the activation type).
pub fn kv_dtype(name: &str) -> Option<tunelab_sim::DType> {
    (name == "int8").then_some(tunelab_sim::DType::Int8)
}

//! A continuous-batching serving simulation, as vLLM-Ascend and MindIE schedule requests.
//!
//! Requests arrive (Poisson at a rate, a trace of arrival times, or a closed loop of a fixed
//! number of clients that each send the next request when the last one finishes), with input
//! and output lengths drawn from a distribution. Every engine step the scheduler:
//! 1. keeps every running sequence decoding (one token each); a sequence whose next token needs
//!    a new KV block when none is free preempts the most recently admitted running sequence,
//!    which frees its blocks and goes back to the front of the queue to be recomputed (vLLM's
//!    default preemption mode);
//! 2. with chunked prefill on, fills the rest of `max_num_batched_tokens` with prompt chunks
//!    (first the sequences already part-way through their prompt, then new ones in arrival
//!    order); with it off, a step is either a prefill of whole prompts (prefill first, as vLLM V0
//!    does) or a decode of every running sequence;
//! 3. admits no more than `max_num_seqs` sequences, and only while their KV blocks fit.
//!
//! A request joins the queue when the API-server front end hands it over (`frontend`); an
//! engine that schedules one step ahead (vLLM's async scheduling, SGLang's overlap loop) has
//! already picked the next step when a request reaches it busy, so it joins the one after.
//!
//! KV memory: the engine's share of the chip (`kv_cache_fraction`) less the weights, workspace
//! and the activation peak of the largest step is divided into blocks of `block_size` tokens.
//! The memory strategy decides how sequences hold blocks: "dynamic_pool" pages them in as the
//! sequence grows (and preempts when full); "predictive" reserves the request's own prompt plus
//! output at admission; "static" reserves the model's longest sequence at admission.
//!
//! Each step is priced by `price::StepPricer` (device model plus host work); the clock advances
//! by the step's time. TTFT runs from arrival to the first token, split into the queueing delay
//! (arrival to first scheduled) and the rest; TPOT is a request's decode time over its tokens
//! after the first; inter-token latency is the distribution, over generated tokens, of the step
//! that produced them. Everything is deterministic given the seed (portable RNG, no clock).
//!
//! Files: `requests` (the requests drawn from the scenario's `deployment.serving`, whose type is specification data in `spec::options::serving`), `sim`
//! (the step loop), `price` (one step through the device model plus host work), `step_ops`
//! (the parts of a step and their operators, which `price` sums and the operator breakdown
//! lists), `host` (the
//! engine's host-cost constants), `stats`
//! (percentiles and the results), `hybrid` (the Triton launches of a hybrid model's
//! linear-attention layers), `ttft` (where the time to first token goes: front end, queueing,
//! prefill and its host share, hand-off).

pub mod price;
pub mod host_costs;
pub mod weight_format;
mod frontend;
mod host;
mod hybrid;
mod sim;
mod requests;
mod stats;
mod step_ops;
mod step_memo;
mod part;
pub mod load;
pub mod a2a_sync;
pub mod ttft;

pub use sim::{simulate, EngineConfig, KvPolicy, Slo};
pub use host::{fitted_fields, with_fitted_fields, FittedHostField, OFFLINE_CALL_WORDS};
pub use crate::spec::options::serving::{ServingSpec, MAX_REQUESTS};
pub use requests::{requests, with_acceptance_spread, Request};
pub use stats::{pcts, Histogram, Pcts, ServingStats};
pub use ttft::TtftSplit;

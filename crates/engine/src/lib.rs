//! The engine as the page's Web Workers run it, apart from the page's user interface.
//!
//! Why a crate of its own: the workers load this module, not the page's. It depends on the
//! scenario crate and never on Leptos (Cargo enforces it), so a worker downloads the engine
//! alone, and the page's first load does not carry the worker's loop.
//!
//! - `protocol`: the messages between the page and a worker (JSON text, so both sides are plain
//!   serde types that test natively).
//! - `lane`: what a worker does with them (pure Rust, natively tested: a lane stepped alone gives
//!   the trials the CLI's round-robin run gives).
//! - `questions`: the views' questions (diagnosis, guards, what-if, a stage's shape, Calibrate)
//!   and the function that answers them.
//! - `views`: what a view shows of an answer, worded here (the page links no analysis text).
//! - `glue` (wasm only): the worker's message loop, started by the `tunelab-engine` binary.

#[cfg(target_arch = "wasm32")]
pub mod glue;
pub mod lane;
pub mod protocol;
pub mod questions;
pub mod views;

/// A snapshot as a lane's history keeps it (the GA and annealing views draw histories): its
/// scalar fields only. The latest snapshot travels whole; arrays and objects (a GP's candidates,
/// an RL agent's probabilities) are drawn from it alone, so a history costs little to send from
/// a worker, to keep and to copy on each redraw.
pub fn history_entry(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value as Json;
    match v {
        Json::Object(m) => Json::Object(m.into_iter().filter(|(_, x)| !x.is_array() && !x.is_object()).collect()),
        other => other,
    }
}

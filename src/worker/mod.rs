//! The engine off the main thread: each strategy of a run steps in a Web Worker of its own, so
//! a race uses the machine's cores and the page's thread only draws.
//!
//! - `protocol`: the messages between the page and a worker (JSON text, so both sides are plain
//!   serde types that test natively).
//! - `lane`: what a worker does with them (pure Rust, natively tested: a lane stepped alone gives
//!   the trials the CLI's round-robin run gives).
//! - `glue` (wasm only): the worker's message loop. A worker runs the page's own module (same
//!   .js and .wasm, so nothing more to download); `main` sees no window and starts the loop.
//! - `driver`: the page's side: starts workers, sends Run/Pause/Step, mirrors their trials into
//!   the page's `Session` (reports and exports read that mirror), and falls back to time slices
//!   on the page when workers are unavailable.
//! - `compare`: "Compare chips", each chip tuned in a worker of its own (`Tune` / `Tuned`).

pub mod compare;
pub mod driver;
#[cfg(target_arch = "wasm32")]
pub mod glue;
pub mod lane;
pub mod protocol;

/// True inside a dedicated Web Worker (no window).
#[cfg(target_arch = "wasm32")]
pub fn in_worker() -> bool {
    use wasm_bindgen::JsCast;
    js_sys::global().dyn_ref::<web_sys::DedicatedWorkerGlobalScope>().is_some()
}

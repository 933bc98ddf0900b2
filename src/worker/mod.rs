//! The engine off the main thread: each strategy of a run steps in a Web Worker of its own, so
//! a race uses the machine's cores and the page's thread only draws.
//!
//! The workers run the engine module (crate `tunelab-engine`, built by Trunk as its own
//! `tunelab-engine.js` and `_bg.wasm`), not the page's: the page's first load carries the user
//! interface, and the worker's loop loads in parallel, after the first render.
//! - `protocol`, `lane` (from `tunelab_engine`): the messages, and what a worker does with them.
//! - `driver`: the page's side: starts workers, sends Run/Pause/Step, mirrors their trials into
//!   the page's `Session` (reports and exports read that mirror), and falls back to time slices
//!   on the page when workers are unavailable.
//! - `compare`: "Compare chips", each chip tuned in a worker of its own (`Tune` / `Tuned`).
//! - `ask`: the views' heavy questions (Explore's heat map, a point's detail), answered by an
//!   engine worker so the page's thread prices nothing.

pub use tunelab_engine::{lane, protocol};

pub mod ask;
pub mod compare;
pub mod driver;
mod mirror_tests;

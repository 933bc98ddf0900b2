//! The engine off the main thread: each strategy of a run steps in a Web Worker of its own, so
//! a race uses the machine's cores and the page's thread only draws.
//!
//! The workers run the engine module (crate `tunelab-engine`, built by Trunk as its own
//! `tunelab-engine.js` and `_bg.wasm`), not the page's: the page's first load carries the user
//! interface, and the worker's loop loads in parallel, after the first render.
//! - `protocol`, `lane` (from `tunelab_engine`): the messages, and what a worker does with them.
//! - `driver`: the page's side: starts workers, sends Run/Pause/Step, mirrors their trials into
//!   the page's `Session` (reports and exports read that mirror; it is built from the run's
//!   shape the first worker sends, so the page builds no stage), and, only with the Cargo
//!   feature `page-engine` (tests), falls back to time slices on the page without workers.
//! - `compare`: "Compare chips", each chip tuned in a worker of its own (`Tune` / `Tuned`).
//! - `ask`: the views' heavy questions (Explore's heat map, a point's detail, and
//!   `tunelab_engine::questions`: the stage's shape, diagnosis, guards, what-if, the diffusion
//!   timeline, Calibrate), answered by an engine worker so the page's thread prices nothing and
//!   the page's module (its first load) links no engine.

pub use tunelab_engine::{lane, protocol};

pub mod ask;
pub mod compare;
pub mod driver;
mod mirror_tests;

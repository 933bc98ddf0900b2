//! The browser entry point: it only mounts the app (everything else lives in the library).
//!
//! The engine's Web Workers run a module of their own (crates/engine, `tunelab-engine`), so this
//! one no longer carries the worker's loop.

fn main() {
    tunelab::mount();
}

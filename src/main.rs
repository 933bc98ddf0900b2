//! The browser entry point: it only mounts the app (everything else lives in the library).
//!
//! The same module also runs in the engine's Web Workers (src/worker): there is no window in a
//! worker, so `main` starts the worker's message loop instead. One module for both keeps the
//! page at one download (a separate worker binary would add about 400 KiB gzipped).

fn main() {
    #[cfg(target_arch = "wasm32")]
    if tunelab::worker::in_worker() {
        return tunelab::worker::glue::start();
    }
    tunelab::mount();
}

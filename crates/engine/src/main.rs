//! The engine worker's entry point (WebAssembly): the page starts its Web Workers on this
//! module (`tunelab-engine.js` and `_bg.wasm`, see index.html), and `main` starts the loop.

fn main() {
    #[cfg(target_arch = "wasm32")]
    tunelab_engine::glue::start();
}

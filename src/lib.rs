//! Tunelab's browser app: the whole engine compiled to WebAssembly, with a Leptos front end.
//!
//! Why the logic lives here rather than in `main.rs`: plain structs (`session`, `url_state`) test
//! natively with `cargo test`, components test in a headless browser, and the binary only mounts.

pub mod browser;
pub mod charts;
pub mod components;
pub mod kb_store;
pub mod groups;
pub mod inline_error;
pub mod session;
pub mod state;
pub mod url_state;
pub mod worker;

/// Mounts the app on the page's body.
pub fn mount() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(components::App);
}

//! The browser entry point: it only mounts the app (everything else lives in the library).

fn main() {
    tunelab::mount();
}

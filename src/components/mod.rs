//! The app's components. State lives in one `Ctx` (signals and stored values) provided at the
//! root; components read it and call its actions, so state changes flow from one place.

pub mod app;
pub mod controls;
pub mod lanes;

pub use app::App;

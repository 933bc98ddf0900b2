//! The app's components. State lives in one `Ctx` (see `state`) provided at the root;
//! components read its signals and call its actions.

pub mod app;
pub mod benchrun_panel;
pub mod calibrate;
pub mod cluster_panel;
pub mod controls;
pub mod explore;
pub mod fields;
pub mod gallery;
pub mod input_warnings;
pub mod landscape;
pub mod landscape_surface;
pub mod model_banner;
pub mod knowledge;
pub mod report;
pub mod scenario_panel;
pub mod serving_features_panel;
pub mod pipeline;
pub mod plan;
pub mod serving_panel;
pub mod strategy_options;
pub mod teach_canvas;
pub mod template_words;
pub mod toolbar;
pub mod training_layouts;
pub mod trials;
pub mod tune;
pub mod whatif;

pub use app::App;

//! tunelab-search: a generic ask/tell tuning engine. It knows nothing of Ascend.
//!
//! Why this shape: a `Study` owns the loop and steps one evaluation at a time, so the same code
//! drives a CLI loop and a browser that must never block; strategies only see immutable trials
//! through `History` and an injected `Rng`, so every run is reproducible from its seed, natively
//! and in WebAssembly; every parameter kind maps to the unit box, so strategies need not care
//! what they tune.

pub mod expr;
pub mod gzip;
pub mod kernel_tuner;
pub mod objective;
pub mod param;
pub mod pareto;
pub mod rng;
pub mod space;
pub mod strategies;
pub mod strategy;
pub mod study;
pub mod trial;
pub mod value;
pub mod variation;

pub use objective::{FnObjective, Objective, Outcome};
pub use param::{Domain, Param};
pub use rng::Rng;
pub use space::Space;
pub use strategy::{History, Snapshot, Strategy};
pub use study::{Event, StopReason, Study, StudyOptions};
pub use trial::{Direction, Metric, Trial, TrialState};
pub use value::{Config, Value};

//! The evidence: how far to trust the numbers and what was learned before. Fidelity against
//! published measurements, calibration of a chip profile to a user's own, and the knowledge
//! base of tuned cases (with the glue that turns a run into a case and reproduces one).

pub mod calibrate;
pub mod cases;
pub mod fidelity;
pub mod knowledge;
pub mod benchruns;

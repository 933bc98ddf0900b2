//! The analyses: what Tunelab says about a scenario and its run, each pricing configurations
//! through the stage objective the study used: diagnosis (and its training form), impact,
//! guards, explore and point detail, chip comparison, and the report.

pub mod chips;
pub mod diagnosis;
pub mod diagnosis_text;
pub mod explore;
pub mod guards;
pub mod impact;
pub mod plan;
pub mod report;
pub mod report_csv;
pub mod report_export;
pub mod report_markdown;
pub mod train_diagnosis;

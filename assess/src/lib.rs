//! `carve assess` as plain data and logic: which tests reach which functions ([`Observer`], a
//! trace sink fed by the recorder), what a transformed run's exit and output say ([`judge`]),
//! why an undetected transformation went unnoticed ([`diagnose`], after Reneri, seed 002), and
//! the report in human, JSON and JUnit text. Running the tests is the CLI's job; nothing here
//! prints or touches a process.

mod diagnose;
mod judge;
mod observe;
mod render;
mod report;
mod sources;

pub use diagnose::{diagnose, forced_matches};
pub use judge::{baseline_failure, combine, judge, running_test, RunEnd};
pub use observe::{instance_label, label, Observed, Observer, Seen, TestCalls};
pub use render::{human, junit};
pub use report::{
    Diagnosis, FunctionAssessed, Kind, Report, Summary, Transformation, Verdict, WrittenTest,
};
pub use sources::{source_functions, SourceFunction};

//! The gate's one error type.

use thiserror::Error;

/// What can stop a comparison before it produces a report.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum GateError {
    /// `compare` was given no baseline run at all.
    #[error("the baseline holds no run to compare with: record one with `carve record --db BASELINE -- PROGRAM`")]
    NoBaseline,
    /// An `--ignore` glob that can never match anything.
    #[error("--ignore {0:?} is empty: give a function path glob such as 'app::clock::*'")]
    EmptyIgnore(String),
}

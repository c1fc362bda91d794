//! The CI regression gate of carve: compares a new recording with a baseline trace call by call
//! and reports where behaviour diverged, or summarises failing carved tests the same way.
//!
//! Everything here is pure: traces and text in, a plain-data [`Report`] and rendered text out.
//! The CLI records, runs cargo, prints and picks the exit code.

mod align;
mod cargo_tests;
mod compare;
mod error;
mod render;
mod report;
mod value_diff;

pub use cargo_tests::{summarise_tests, CarvedFile};
pub use compare::{compare, Options};
pub use error::GateError;
pub use render::{human, junit};
pub use report::{Divergence, DivergenceKind, Group, Mode, Report, Summary};

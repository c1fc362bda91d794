//! The trace store of carve: a SQLite file holding recorded runs, their functions and calls.

mod codec;
mod display;
mod error;
mod glob;
mod json;
mod model;
mod repeats;
mod schema;
mod store;
mod writer;

pub use display::{acts_on_terminal, terminal_safe};
pub use error::StorageError;
pub use glob::{closing_angle, glob_match, matches_function};
pub use model::*;
pub use store::{CallRange, CallShape, CallTime, LockWait, RunWriter, Store, SCHEMA_VERSION};

//! The trace store of carve: a SQLite file holding recorded runs, their functions and calls.

mod codec;
mod display;
mod error;
mod model;
mod schema;
mod store;
mod writer;

pub use error::StorageError;
pub use model::*;
pub use store::{RunWriter, Store, SCHEMA_VERSION};

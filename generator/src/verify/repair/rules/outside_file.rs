//! Repair: none for an error that points into no line of the file (another file, cargo itself):
//! the file goes whole.

use crate::verify::repair::compile_errors::CompileError;
use crate::verify::repair::items::{Fix, Item};

/// An error with no line in the carved file.
pub(crate) fn rule(_items: &[Item], error: &CompileError, _source: &str) -> Option<Fix> {
    error
        .line
        .is_none()
        .then(|| Fix::Refuse(format!("{} (not in this file)", error.message)))
}

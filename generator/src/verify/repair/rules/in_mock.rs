//! Repair: an error inside a `mock!` block takes the mock out, and every test that uses it.

use crate::verify::repair::compile_errors::CompileError;
use crate::verify::repair::items::holder;
use crate::verify::repair::items::{Fix, Item};

/// An error in a named item that is no test: a `mock!` block. The last rule: it decides every
/// error the ones before it left.
pub(crate) fn rule(items: &[Item], error: &CompileError, _source: &str) -> Option<Fix> {
    let at = holder(items, error.line?)?;
    (!items[at].is_test).then_some(Fix::Mock { at })
}

//! Repair: an error inside a test takes that test out; its neighbours keep running.

use crate::verify::repair::compile_errors::CompileError;
use crate::verify::repair::items::holder;
use crate::verify::repair::items::{Fix, Item};

/// An error in a test function.
pub(crate) fn rule(items: &[Item], error: &CompileError, _source: &str) -> Option<Fix> {
    let at = holder(items, error.line?)?;
    items[at].is_test.then_some(Fix::Test { at })
}

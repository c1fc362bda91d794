//! Repair: an error in exactly one row of a table test's `cases` takes that row out; the table
//! stays with its other rows.

use crate::verify::repair::compile_errors::CompileError;
use crate::verify::repair::items::holder;
use crate::verify::repair::items::{Fix, Item};

/// An error in one row of a table test.
pub(crate) fn rule(items: &[Item], error: &CompileError, _source: &str) -> Option<Fix> {
    let line = error.line?;
    let at = holder(items, line)?;
    let item = &items[at];
    if !item.is_test {
        return None;
    }
    let mut rows = item
        .rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.contains(&line));
    match (rows.next(), rows.next()) {
        (Some((row, _)), None) => Some(Fix::Row {
            test: item.name.clone()?,
            row,
        }),
        _ => None,
    }
}

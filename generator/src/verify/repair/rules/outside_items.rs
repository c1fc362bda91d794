//! Repair: none for an error outside any test or mock (a `use`, the header): no test could be
//! taken out alone, so the file goes whole.

use crate::verify::repair::compile_errors::CompileError;
use crate::verify::repair::items::holder;
use crate::verify::repair::items::{Fix, Item};

/// An error in no named item.
pub(crate) fn rule(items: &[Item], error: &CompileError, source: &str) -> Option<Fix> {
    let line = error.line?;
    let named = holder(items, line).is_some_and(|at| items[at].name.is_some());
    (!named).then(|| {
        let what = source.lines().nth(line - 1).unwrap_or_default().trim();
        Fix::Refuse(format!("{} (line {line}: `{what}`)", error.message))
    })
}

//! Compile repair: when a carved file does not compile, the compiler's own messages say which
//! tests broke it, so only those are taken out and their neighbours keep running. Pure: cargo's
//! JSON messages in, the tests to blame out; a source text in, the same text without them out.
//! Verification (`verify.rs`) does the building and writing.

pub(crate) mod compile_errors;
pub(crate) mod items;
pub(crate) mod rules;
#[cfg(test)]
pub(crate) mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::RangeInclusive;

pub(crate) use crate::verify::repair::compile_errors::{compile_errors, CompileError};
use crate::verify::repair::items::{items, Fix};

/// What to take out of a file so that it may compile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Repair {
    /// Top-level items to remove: test functions and `Mock*` structs (their `mock!` blocks).
    pub(crate) remove: BTreeSet<String>,
    /// The tests taken out, in file order, each with why.
    pub(crate) tests: Vec<(String, String)>,
    /// Rows to take out of table tests that otherwise stay (test → row as written → why).
    pub(crate) rows: BTreeMap<String, BTreeMap<usize, String>>,
}

/// Pins each error of `errors` on the test function of `source` that holds it, by the rules of
/// `repair/rules/`: an error in a row of a table test takes that row out; in a test, the test;
/// in a `mock!` block, the mock and every test that uses it. `Err` says why the file cannot be
/// repaired test by test: an error outside any test or mock (a `use`, another file), or one
/// that points nowhere.
pub(crate) fn blame(source: &str, errors: &[CompileError]) -> Result<Repair, String> {
    let items = items(source)?;
    let mut repair = Repair::default();
    let mut reasons: Vec<(usize, String)> = Vec::new();
    for error in errors {
        let at = match rules::decide(&items, error, source).1 {
            Fix::Refuse(why) => return Err(why),
            Fix::Row { test, row } => {
                // A row of a table: it goes, the table stays.
                repair
                    .rows
                    .entry(test)
                    .or_default()
                    .entry(row)
                    .or_insert_with(|| format!("does not compile: {}", error.message));
                continue;
            }
            Fix::Test { at } => {
                reasons.push((at, format!("does not compile: {}", error.message)));
                at
            }
            Fix::Mock { at } => {
                let name = items[at].name.clone().unwrap_or_default();
                for (user, item) in items.iter().enumerate() {
                    if item.is_test && item.idents.contains(&name) {
                        let reason = format!(
                            "does not compile: the mock `{name}` it uses does not: {}",
                            error.message
                        );
                        reasons.push((user, reason));
                    }
                }
                at
            }
        };
        if let Some(name) = &items[at].name {
            repair.remove.insert(name.clone());
        }
    }
    // One reason per test, the first error it got; tests in file order.
    reasons.sort_by_key(|(at, _)| *at);
    reasons.dedup_by_key(|(at, _)| *at);
    for (at, reason) in reasons {
        if let Some(name) = &items[at].name {
            repair.remove.insert(name.clone());
            repair.tests.push((name.clone(), reason));
        }
    }
    // A table that goes whole loses no row on its own.
    repair.rows.retain(|test, _| !repair.remove.contains(test));
    Ok(repair)
}

/// `source` without the top-level items named in `names` (tests by function name, mocks by
/// struct name), and without the blank line that separated each from the next.
pub(crate) fn remove_items(source: &str, names: &BTreeSet<String>) -> Result<String, String> {
    let doomed: Vec<RangeInclusive<usize>> = items(source)?
        .into_iter()
        .filter(|i| i.name.as_ref().is_some_and(|n| names.contains(n)))
        .map(|i| i.lines)
        .collect();
    let lines: Vec<&str> = source.lines().collect();
    let mut keep = vec![true; lines.len()];
    for range in doomed {
        for line in range.clone() {
            keep[line - 1] = false;
        }
        // The separating blank line: the one after the item, or before it at the end.
        let after = *range.end();
        let before = range.start().checked_sub(2);
        if lines.get(after).is_some_and(|l| l.trim().is_empty()) {
            keep[after] = false;
        } else if let Some(b) = before.filter(|&b| lines[b].trim().is_empty()) {
            keep[b] = false;
        }
    }
    let mut out = String::with_capacity(source.len());
    for (line, _) in lines.iter().zip(&keep).filter(|(_, k)| **k) {
        out.push_str(line);
        out.push('\n');
    }
    Ok(out)
}

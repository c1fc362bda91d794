//! The ways to repair a carved file that does not compile, one file each, tried in the order of
//! [`RULES`] for each error the compiler reports; the first that answers decides what goes. A
//! new way is a new file in `rules/` and one line here.

pub(crate) mod in_mock;
pub(crate) mod in_test;
pub(crate) mod outside_file;
pub(crate) mod outside_items;
pub(crate) mod table_row;

use crate::verify::repair::compile_errors::CompileError;
use crate::verify::repair::items::{Fix, Item};

/// A repair rule: what to do about `error` in a file of `items` (its text `source`), `None` to
/// pass it on.
pub(crate) type Rule = fn(&[Item], &CompileError, &str) -> Option<Fix>;

/// The repair rules in the order they are tried, by name; `in_mock` decides every error left.
pub(crate) const RULES: &[(&str, Rule)] = &[
    ("outside_file", outside_file::rule),
    ("outside_items", outside_items::rule),
    ("table_row", table_row::rule),
    ("in_test", in_test::rule),
    ("in_mock", in_mock::rule),
];

/// What to do about `error`, by the first rule that answers, with the rule's name.
pub(crate) fn decide(items: &[Item], error: &CompileError, source: &str) -> (&'static str, Fix) {
    RULES
        .iter()
        .find_map(|(name, rule)| rule(items, error, source).map(|fix| (*name, fix)))
        .expect("in_mock decides every error left")
}

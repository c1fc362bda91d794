//! Observation: the result of a function declared to return `impl Iterator<Item = T>` (or a
//! double-ended or exact-size one) is checked by the items it gives, collected, as
//! `items.rs` checks a named iterator: its hidden type (a `FlatMap` over a closure) cannot be
//! named, compared or taken apart in a test, and the recording holds that state, not the
//! items. They are observed on this build at verification (`verify/observe.rs`); a probe
//! that does not compile (items without `Debug`) goes.

use crate::arrange::builder::Builder;
use crate::assert::rules::items::check_items;
use crate::assert::subject::{observed_parts, Subject, Verdict};
use crate::read::types::impl_iterator;

/// A returned `impl Iterator`'s items, collected.
pub(crate) fn rule(s: &Subject, b: &mut Builder) -> Verdict {
    let returned = matches!(s.call.outcome, carve_storage::Outcome::Returned);
    if !returned || !impl_iterator(&s.target.api.ret_written) {
        return Verdict::Pass(None);
    }
    check_items(b);
    observed_parts(None, "items")
}

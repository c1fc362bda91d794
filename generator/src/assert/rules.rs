//! What a test asserts about the result of its call: the observation rules, one file each,
//! tried in the order of [`RULES`]; the first that observes the result decides the assertion.
//! A new way to observe is a new file in `rules/` and one line here. The order is the richest
//! view first (after a panic, and the items of an `impl Iterator`, the only view of a type no
//! test can name): `==` on the whole value (or on the value inside `Ok`/`Some`), then its
//! fields and getters, a pattern naming its parts, the text it displays, an iterator's items,
//! what `{:?}` prints, the variant with what its getters answer, and the variant alone; last,
//! a result nothing of which shows, dropped at once, its call's receiver checked after it.

pub(crate) mod bare_variant;
pub(crate) mod compared;
pub(crate) mod debug;
pub(crate) mod display;
pub(crate) mod display_text;
pub(crate) mod dropped;
pub(crate) mod fields;
pub(crate) mod getters;
pub(crate) mod impl_iterator;
pub(crate) mod items;
pub(crate) mod panics;
pub(crate) mod pattern;
pub(crate) mod unwrapped;
pub(crate) mod variant_getters;
pub(crate) mod zero_sized_ok;

use crate::arrange::builder::Builder;
use crate::assert::subject::{Observation, Subject, Verdict};
use crate::reasons::UNSUPPORTED_TYPE;

/// An observation rule.
pub(crate) type Rule = fn(&Subject, &mut Builder) -> Verdict;

/// The observation rules in the order they are tried, by name.
pub(crate) const RULES: &[(&str, Rule)] = &[
    ("panics", panics::rule),
    ("impl_iterator", impl_iterator::rule),
    ("compared", compared::rule),
    ("zero_sized_ok", zero_sized_ok::rule),
    ("getters", getters::rule),
    ("fields", fields::rule),
    ("pattern", pattern::rule),
    ("unwrapped", unwrapped::rule),
    ("display_text", display_text::rule),
    ("display", display::rule),
    ("items", items::rule),
    ("debug", debug::rule),
    ("variant_getters", variant_getters::rule),
    ("bare_variant", bare_variant::rule),
    ("dropped", dropped::rule),
];

/// The assertion on `subject`'s result by the first rule that observes it; checks it adds go
/// to `b`. `Err` with the reason no test can observe it.
pub(crate) fn observe(subject: &Subject, b: &mut Builder) -> Result<Observation, &'static str> {
    decide(subject, b).map(|(_, observed)| observed)
}

/// [`observe`], with the name of the rule that decided.
pub(crate) fn decide(
    subject: &Subject,
    b: &mut Builder,
) -> Result<(&'static str, Observation), &'static str> {
    // `compared` gives the reason of every result no rule before it took.
    let mut reason = UNSUPPORTED_TYPE;
    for (name, rule) in RULES {
        match rule(subject, b) {
            Verdict::Observed(observed) => return Ok((name, observed)),
            Verdict::Pass(Some(why)) => reason = why,
            Verdict::Pass(None) => {}
        }
    }
    Err(reason)
}

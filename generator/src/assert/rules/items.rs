//! Observation: an iterator (returned, or inside `Ok`/`Some`), of std (`str::Split`,
//! `slice::Iter`, `Chars`) or of the crate (a type implementing `Iterator`), is checked by the
//! items it gives, collected: `assert_eq!(format!("{:?}", result.collect::<Vec<_>>()),
//! "[\"b\", \"%7Efoo\"]")`. What std's iterator holds inside is std's business and a crate's
//! iterator state says little; its items are what the function promised. The recording holds
//! the iterator, not its items, so they are observed on this build at verification
//! (`verify/observe.rs`: items whose text changes from run to run, a hash map's keys, are
//! dropped, and a probe that does not compile goes). Before this rule such a result was
//! checked by its variant alone (`matches!(result, Some(_))`).

use crate::arrange::builder::Builder;
use crate::assert::getters::type_api;
use crate::assert::printed::Kind;
use crate::assert::subject::{observed_parts, Subject, Verdict};
use crate::body::Effect;
use crate::read::types::Prim;

/// std's iterator types, by the last segment of their path.
const STD_ITERATORS: &[&str] = &[
    "Split",
    "SplitN",
    "RSplit",
    "SplitTerminator",
    "SplitWhitespace",
    "SplitAsciiWhitespace",
    "Chars",
    "CharIndices",
    "Bytes",
    "Lines",
    "Matches",
    "MatchIndices",
    "Iter",
    "IterMut",
    "IntoIter",
    "Keys",
    "Values",
    "Windows",
    "Chunks",
    "EncodeUtf16",
];

/// An iterator's items, collected.
pub(crate) fn rule(s: &Subject, b: &mut Builder) -> Verdict {
    let Some((_, unwrap, type_path)) = s.inside_typed() else {
        return Verdict::Pass(None);
    };
    let last = type_path.rsplit("::").next().unwrap_or_default();
    let std = ["core::", "std::", "alloc::"]
        .iter()
        .any(|p| type_path.starts_with(p));
    // A hash map's or set's iterator gives its items in an order that changes from run to
    // run (and may agree by chance in the runs that observe it).
    let iterator = if std {
        STD_ITERATORS.contains(&last) && !type_path.contains("hash")
    } else {
        type_api(s.cx.api, type_path).is_some_and(|t| t.traits.contains("Iterator"))
    };
    if !iterator {
        return Verdict::Pass(None);
    }
    check_items(b);
    observed_parts(unwrap, type_path)
}

/// How an iterator's items are checked: by what `{:?}` prints of them, by the text each
/// displays (items of a type that is `Display` and not `Debug`), or by their number (items
/// that show nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ItemsBy {
    Debug,
    Display,
    Count,
}

/// The check of an iterator `result` by its items, collected, observed at verification.
pub(crate) fn check_items(b: &mut Builder) {
    check_items_by(b, ItemsBy::Debug);
}

/// [`check_items`], the items seen `by` one view.
pub(crate) fn check_items_by(b: &mut Builder, by: ItemsBy) {
    b.items_taken = true;
    let (actual, kind) = match by {
        ItemsBy::Debug => ("result.collect::<Vec<_>>()", Kind::Debug),
        ItemsBy::Display => (
            "result.map(|item| item.to_string()).collect::<Vec<_>>()",
            Kind::Debug,
        ),
        ItemsBy::Count => ("result.count()", Kind::Int(Prim::Usize)),
    };
    b.effects.push(Effect {
        actual: actual.to_string(),
        expected: String::new(),
        message: None,
        observe: Some(kind.name()),
    });
}

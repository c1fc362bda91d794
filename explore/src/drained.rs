//! An iterator drained after the calls (a strong oracle, issue 27's, for explored tests): in, a
//! kept sequence, its last change (`moved::last_change`) and the `Debug` text the object it
//! made or changed had after the calls; out, the call that drains that object when it is an
//! iterator (`recv.by_ref().take(1000).collect::<Vec<_>>()`), to append after the sequence's
//! getters, kept only where its items say what that `Debug` text does not. pulldown-cmark's
//! `Parser::new(text)` parses the blocks of `text` as it is made, and a parser's `Debug` text
//! shows the text and the options: an explored test that made a parser (and reached, doing
//! so, lines the run never reached) checked nothing the parse did. A reviewer reads its
//! events; so does the test.

use crate::api::Explorable;
use crate::harness::run::CallOutcome;
use crate::keep::Kept;
use crate::moved::Change;
use crate::strategy::Space;

/// A drain asked after a sequence, with the `Debug` text of what it drains before it.
pub type Drain = (u64, String);

/// The callable that drains object type `object` (its type is an iterator), if any.
pub fn drain(ex: &Explorable, object: usize) -> Option<usize> {
    (ex.callables.iter()).position(|c| c.drains() && c.receiver.is_some_and(|r| r.object == object))
}

/// The drain of the object `kept`'s last change (`change`) made or changed, unless the
/// sequence drains it after that change already.
pub fn asked(kept: &Kept, ex: &Explorable, space: &Space, change: Change) -> Option<u64> {
    let (object, slot) = change.slot;
    let call = space.encode(drain(ex, object)?, &[slot]);
    let since = kept.calls.get(change.at + 1..).unwrap_or_default();
    (!since.contains(&call)).then_some(call)
}

/// `kept` without its last call when that is `drain` and the items it answered are all in
/// `debug`, the object's `Debug` text before it (a vector's iterator lists what it holds):
/// they say nothing that text does not.
pub fn told_by_debug(mut kept: Kept, drain: u64, debug: &str) -> Kept {
    let items = match (kept.calls.last(), kept.outcomes.last()) {
        (Some(&last), Some(CallOutcome::Returned(Some(text)))) if last == drain => text,
        _ => return kept,
    };
    let inner = (items.strip_prefix('[').and_then(|t| t.strip_suffix(']'))).unwrap_or(items);
    if debug.contains(inner) {
        kept.calls.pop();
        kept.outcomes.pop();
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Callable, Ret};
    use crate::testdata::{change, gauge_api, kept};

    /// `gauge.by_ref().take(1000).collect::<Vec<_>>()`: a gauge that is an iterator.
    fn drain_call() -> Callable {
        Callable {
            path: "<g::Gauge as core::iter::traits::iterator::Iterator>::collect".into(),
            call: crate::std_traits::DRAIN.into(),
            ret: Ret::Other,
            ..change("collect")
        }
    }

    #[test]
    fn what_the_last_change_made_is_drained_unless_the_sequence_drained_it_since() {
        // new (0), drain (1); slots 0..2.
        let ex = gauge_api(vec![drain_call()]);
        let space = Space::new(vec![vec![8, 2], vec![2]]).unwrap();
        assert_eq!(drain(&ex, 0), Some(1));
        let made = Change {
            at: 0,
            slot: (0, 1),
            made: true,
        };
        let calls = vec![space.encode(0, &[3, 1])];
        let drain_1 = space.encode(1, &[1]);
        assert_eq!(
            asked(&kept(calls.clone()), &ex, &space, made),
            Some(drain_1)
        );
        let mut drained = calls.clone();
        drained.push(drain_1);
        assert_eq!(asked(&kept(drained), &ex, &space, made), None);
        // A type that is no iterator has no drain.
        assert_eq!(
            asked(&kept(calls), &gauge_api(Vec::new()), &space, made),
            None
        );
    }

    #[test]
    fn items_the_debug_text_lists_are_not_checked_again() {
        let mut k = kept(vec![7, 9]);
        k.outcomes = vec![
            CallOutcome::Returned(Some("IntoIter([1, 2])".into())),
            CallOutcome::Returned(Some("[1, 2]".into())),
        ];
        assert_eq!(
            told_by_debug(k.clone(), 9, "IntoIter([1, 2])").calls,
            vec![7]
        );
        // A parser's events are not in its text.
        let parsed = told_by_debug(k.clone(), 9, "Parser { text: \"a\" }");
        assert_eq!(parsed.calls, vec![7, 9]);
        // Only the drain asked last is taken out.
        assert_eq!(told_by_debug(k, 8, "IntoIter([1, 2])").calls, vec![7, 9]);
    }
}

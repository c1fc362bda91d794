//! Lookups after a change (a strong oracle, issue 27's, for explored tests): in, a kept
//! sequence and the crate's callables; out, the calls that look up each object a `&mut self`
//! call of the sequence changed, by the values the calls on it took, to append to the
//! sequence, and, once `lib.rs` has run it in two harness processes, the sequence with those
//! that answered alike. A collection's `Debug` text says its entries, not the index it finds
//! them by: a table left wrong by a removal (indexmap's `shift_remove`, whose shifted indices
//! a mutant leaves one off) shows only when a key is looked up, so the test asks
//! `map.get_full(&7)` after the calls as a reviewer would.

use crate::api::{Explorable, PoolKind, Ret};
use crate::harness::run::{CallOutcome, SeqResult};
use crate::keep::Kept;
use crate::strategy::Space;

/// Most values one changed object is looked up by.
const MAX_KEYS: usize = 3;

/// The lookup of object type `object` (a callable index): of the calls that read it
/// ([`crate::api::Callable::reads`]) with one pooled argument (`get_full(&k)`, `get(&k)`,
/// `contains_key(&k)`), the one whose answer says most: a value of another shape (read
/// through its `Debug` text: `Some((0, 7, 1))`) before an `Option`, a `Result`, text, a number
/// or a flag; the first such in the API among equals.
pub fn lookup(ex: &Explorable, object: usize) -> Option<usize> {
    let says = |ret: &Ret| match ret {
        Ret::Other => 0,
        Ret::Option(..) => 1,
        Ret::Result(_) => 2,
        Ret::Text => 3,
        Ret::Scalar(_) => 4,
        Ret::Unit => 5,
    };
    (ex.callables.iter().enumerate())
        .filter(|(_, c)| {
            c.reads(object)
                && c.params.len() == 1
                && !matches!(c.params[0].kind, PoolKind::Object(_) | PoolKind::Closure(_))
                && c.params[0].pass != crate::api::Pass::MutOwned
        })
        .min_by_key(|(i, c)| (says(&c.ret), *i))
        .map(|(i, _)| i)
}

/// The lookups to append to `kept`'s calls: per object slot a `&mut self` call changed (in
/// the order of their last change), its type's [`lookup`] with each value of the lookup's
/// pool that the calls on that slot took, those passed for a parameter of the lookup's
/// parameter's name first (`insert(key, value)` before `get(key)`), at most [`MAX_KEYS`]; a
/// lookup the sequence already made after the slot's last change is not asked again.
pub fn asked(kept: &Kept, ex: &Explorable, space: &Space) -> Vec<u64> {
    let decoded: Vec<(usize, Vec<u64>)> = kept.calls.iter().map(|&c| space.decode(c)).collect();
    let mut out = Vec::new();
    for ((object, slot), last_change) in kept.changed_slots(&ex.callables, space) {
        let Some(f) = lookup(ex, object) else {
            continue;
        };
        let wanted = &ex.callables[f].params[0];
        // (taken for a parameter of another name, value), in the order the calls took them.
        let mut took: Vec<(bool, u64)> = Vec::new();
        for (g, digits) in &decoded {
            let c = &ex.callables[*g];
            if c.receiver_slot(digits) == Some((object, slot)) {
                let args = c.params.iter().zip(&digits[1..]);
                took.extend(
                    args.filter(|(p, _)| p.kind == wanted.kind)
                        .map(|(p, &d)| (p.name != wanted.name, d)),
                );
            }
        }
        took.sort_by_key(|(other_name, _)| *other_name);
        let since = &kept.calls[last_change + 1..];
        let mut values: Vec<u64> = Vec::new();
        for (_, d) in took {
            if !values.contains(&d) {
                values.push(d);
            }
        }
        for d in values.into_iter().take(MAX_KEYS) {
            let call = space.encode(f, &[slot, d]);
            if !since.contains(&call) && !out.contains(&call) {
                out.push(call);
            }
        }
    }
    out
}

/// `kept` with the reads it was `asked` after its calls (these lookups, or `moved.rs`'s
/// getters), run in two harness processes (`twice`): those that answered the same text to
/// check in both (a hash map's order differs between processes), up to the first that did
/// not (a panic, an empty slot); none when the sequence's own calls did not answer as they
/// did when it was kept.
pub fn answered(mut kept: Kept, asked: &[u64], (first, second): &(SeqResult, SeqResult)) -> Kept {
    if !first.calls.starts_with(&kept.outcomes) {
        return kept;
    }
    let after = |r: &SeqResult| {
        r.calls
            .get(kept.outcomes.len()..)
            .unwrap_or_default()
            .to_vec()
    };
    let answers: Vec<(u64, CallOutcome)> = (asked.iter().copied())
        .zip(after(first).into_iter().zip(after(second)))
        .take_while(|(_, (o, again))| o == again && matches!(o, CallOutcome::Returned(Some(_))))
        .map(|(call, (o, _))| (call, o))
        .collect();
    for (call, outcome) in answers {
        kept.calls.push(call);
        kept.outcomes.push(outcome);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Callable, Param, Pass, Receiver};
    use crate::testdata::{gauge_api, getter, kept, u8_kind};

    /// `Gauge::NAME(&self or &mut self, PARAMS…) -> RET`, each parameter a `u8`.
    fn method(name: &str, mutable: bool, params: &[&str], ret: Ret) -> Callable {
        Callable {
            path: format!("g::Gauge::{name}"),
            call: name.into(),
            receiver: Some(Receiver {
                object: 0,
                mutable,
                by_value: false,
            }),
            params: (params.iter())
                .map(|p| Param {
                    name: p.to_string(),
                    kind: u8_kind(),
                    pass: Pass::Ref,
                })
                .collect(),
            makes: None,
            ret,
        }
    }

    #[test]
    fn the_lookup_is_the_one_argument_query_whose_answer_says_most() {
        let flag = Ret::Scalar("bool".into());
        let option = Ret::Option(Box::new(Ret::Scalar("u8".into())), true);
        let ex = gauge_api(vec![
            getter("level", "u8"),
            method("contains", false, &["key"], flag),
            method("get", false, &["key"], option.clone()),
            method("remove", true, &["key"], option),
            method("get_full", false, &["key"], Ret::Other),
            method("between", false, &["lo", "hi"], Ret::Other),
        ]);
        // Not the getter (no argument), not `remove` (`&mut self`), not `between` (two).
        assert_eq!(lookup(&ex, 0), Some(5));
        let plain = gauge_api(vec![method("contains", false, &["key"], Ret::Unit)]);
        assert_eq!(lookup(&plain, 0), None);
    }

    #[test]
    fn a_changed_object_is_looked_up_by_the_keys_its_calls_took() {
        let ex = gauge_api(vec![
            method("insert", true, &["value", "key"], Ret::Unit),
            method("remove", true, &["key"], Ret::Other),
            method("get", false, &["key"], Ret::Other),
        ]);
        // Slots 0..2, a `u8` pool of 8 values.
        let space = Space::new(vec![vec![8, 2], vec![2, 8, 8], vec![2, 8], vec![2, 8]]).unwrap();
        let calls = vec![
            space.encode(1, &[1, 5, 3]),
            space.encode(1, &[1, 6, 7]),
            space.encode(2, &[1, 3]),
        ];
        let first = asked(&kept(calls.clone()), &ex, &space);
        // The keys first (3, 7), then a value the calls took that no key was (5: 6 is the
        // fourth); slot 0 was never changed.
        let expected: Vec<u64> = [3, 7, 5]
            .iter()
            .map(|&d| space.encode(3, &[1, d]))
            .collect();
        assert_eq!(first, expected);
        // A lookup the sequence made after the last change is not asked again.
        let mut looked = calls;
        looked.push(space.encode(3, &[1, 7]));
        let again = asked(&kept(looked), &ex, &space);
        assert_eq!(again, vec![expected[0], expected[2]]);
    }

    #[test]
    fn a_lookup_is_kept_only_as_far_as_two_processes_answered_it_alike() {
        let said = |t: &str| CallOutcome::Returned(Some(t.to_string()));
        let run = |calls: Vec<CallOutcome>| SeqResult {
            calls,
            end: crate::harness::run::End::Done,
            guards: Vec::new(),
            compares: Vec::new(),
            states: Default::default(),
        };
        let mut k = kept(vec![10]);
        k.outcomes = vec![said("true")];
        let first = run(vec![
            said("true"),
            said("Some(0)"),
            said("Some(1)"),
            said("None"),
        ]);
        let second = run(vec![
            said("true"),
            said("Some(0)"),
            said("Some(2)"),
            said("None"),
        ]);
        let got = answered(k.clone(), &[11, 12, 13], &(first.clone(), second));
        // The second lookup answered otherwise in the second process: it and what follows go.
        assert_eq!(got.calls, vec![10, 11]);
        assert_eq!(got.outcomes, vec![said("true"), said("Some(0)")]);
        // Its own call answered otherwise than when it was kept: nothing is asked.
        let mut other = k.clone();
        other.outcomes = vec![said("false")];
        let same = answered(other.clone(), &[11], &(first.clone(), first));
        assert_eq!(same.calls, other.calls);
    }

    #[test]
    fn an_object_only_read_is_not_looked_up() {
        let ex = gauge_api(vec![method("get", false, &["key"], Ret::Other)]);
        let space = Space::new(vec![vec![8, 2], vec![2, 8]]).unwrap();
        let calls = vec![space.encode(0, &[3, 1]), space.encode(1, &[1, 3])];
        assert!(asked(&kept(calls), &ex, &space).is_empty());
    }
}

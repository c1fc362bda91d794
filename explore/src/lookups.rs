//! Lookups after a change (a strong oracle, issue 27's, for explored tests): in, a kept
//! sequence and the crate's callables; out, the calls that look up each object a `&mut self`
//! call of the sequence changed, by the values the calls on it took, to append to the
//! sequence (then run, and kept as far as they answered). A collection's `Debug` text says
//! its entries, not the index it finds them by: a table left wrong by a removal (indexmap's
//! `shift_remove`, whose shifted indices a mutant leaves one off) shows only when a key is
//! looked up, so the test asks `map.get_full(&7)` after the calls as a reviewer would.

use std::collections::BTreeSet;
use std::path::Path;

use crate::api::{Explorable, PoolKind, Ret};
use crate::error::ExploreError;
use crate::harness::run::{CallOutcome, Runner};
use crate::keep::Kept;
use crate::search::SEQUENCE_TIMEOUT;
use crate::strategy::Space;

/// Most values one changed object is looked up by.
const MAX_KEYS: usize = 3;

/// The lookup of object type `object` (a callable index): of its `&self` methods with one
/// pooled argument that make nothing and answer something (`get_full(&k)`, `get(&k)`,
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
            c.receiver
                .is_some_and(|r| r.object == object && !r.mutable && !r.by_value)
                && c.makes.is_none()
                && c.params.len() == 1
                && !matches!(c.params[0].kind, PoolKind::Object(_) | PoolKind::Closure(_))
                && c.params[0].pass != crate::api::Pass::MutOwned
                && !matches!(c.ret, Ret::Unit)
                && !(c.is_operator()
                    || c.writes_value()
                    || c.is_format_spec()
                    || c.into_collected())
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
    let receiver_of = |(f, digits): &(usize, Vec<u64>)| {
        let r = ex.callables[*f].receiver?;
        Some((r, (r.object, digits.first().copied().unwrap_or(0))))
    };
    // Slots a `&mut self` call changed, by their last change.
    let mut changed: Vec<((usize, u64), usize)> = Vec::new();
    for (at, call) in decoded.iter().enumerate() {
        if let Some((_, slot)) = receiver_of(call).filter(|(r, _)| r.mutable && !r.by_value) {
            changed.retain(|(s, _)| *s != slot);
            changed.push((slot, at));
        }
    }
    let mut out = Vec::new();
    for ((object, slot), last_change) in changed {
        let Some(f) = lookup(ex, object) else {
            continue;
        };
        let wanted = &ex.callables[f].params[0];
        let mut named = Vec::new();
        let mut others = Vec::new();
        for call in decoded
            .iter()
            .filter(|c| receiver_of(c).is_some_and(|(_, s)| s == (object, slot)))
        {
            let params = &ex.callables[call.0].params;
            for (p, &d) in params.iter().zip(&call.1[1..]) {
                if p.kind == wanted.kind {
                    let into = if p.name == wanted.name {
                        &mut named
                    } else {
                        &mut others
                    };
                    if !into.contains(&d) {
                        into.push(d);
                    }
                }
            }
        }
        let made_since: BTreeSet<u64> = kept.calls[last_change + 1..].iter().copied().collect();
        let mut values: Vec<u64> = named;
        values.extend(
            others
                .into_iter()
                .filter(|d| !values.contains(d))
                .collect::<Vec<_>>(),
        );
        for d in values.into_iter().take(MAX_KEYS) {
            let call = space.encode(f, &[slot, d]);
            if !made_since.contains(&call) && !out.contains(&call) {
                out.push(call);
            }
        }
    }
    out
}

/// `kept` with, after each sequence's calls, the lookups [`asked`] gives it, run in two fresh
/// harness processes: each sequence keeps those that answered the same text to check in both
/// (a hash map's order differs between processes), up to the first that did not (a panic, an
/// empty slot), and only when its own calls answered as they did when it was kept.
pub fn appended(
    bin: &Path,
    kept: Vec<Kept>,
    ex: &Explorable,
    space: &Space,
) -> Result<Vec<Kept>, ExploreError> {
    let asked: Vec<Vec<u64>> = kept.iter().map(|k| asked(k, ex, space)).collect();
    let seqs: Vec<Vec<u64>> = (kept.iter().zip(&asked))
        .filter(|(_, a)| !a.is_empty())
        .map(|(k, a)| [k.calls.as_slice(), a].concat())
        .collect();
    if seqs.is_empty() {
        return Ok(kept);
    }
    let run = || Runner::new(bin, SEQUENCE_TIMEOUT).final_states(&seqs);
    let mut ran = run()?.into_iter().zip(run()?);
    Ok(kept
        .into_iter()
        .zip(asked)
        .map(|(mut k, a)| {
            if a.is_empty() {
                return k;
            }
            let Some((first, second)) = ran.next() else {
                return k;
            };
            if !first.calls.starts_with(&k.outcomes) {
                return k;
            }
            let after = |r: &crate::harness::run::SeqResult| {
                r.calls.get(k.outcomes.len()..).unwrap_or_default().to_vec()
            };
            let answered: Vec<(u64, CallOutcome)> = (a.into_iter())
                .zip(after(&first).into_iter().zip(after(&second)))
                .take_while(|(_, (o, again))| {
                    o == again && matches!(o, CallOutcome::Returned(Some(_)))
                })
                .map(|(call, (o, _))| (call, o))
                .collect();
            for (call, outcome) in answered {
                k.calls.push(call);
                k.outcomes.push(outcome);
            }
            k
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Callable, Param, Pass, Receiver};
    use crate::testdata::{gauge_api, getter, u8_kind};

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

    fn kept(calls: Vec<u64>) -> Kept {
        Kept {
            outcomes: Vec::new(),
            new: Vec::new(),
            new_lines: Vec::new(),
            new_compares: Vec::new(),
            adds: vec![calls.len() - 1],
            calls,
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
    fn an_object_only_read_is_not_looked_up() {
        let ex = gauge_api(vec![method("get", false, &["key"], Ret::Other)]);
        let space = Space::new(vec![vec![8, 2], vec![2, 8]]).unwrap();
        let calls = vec![space.encode(0, &[3, 1]), space.encode(1, &[1, 3])];
        assert!(asked(&kept(calls), &ex, &space).is_empty());
    }
}
